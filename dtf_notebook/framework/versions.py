"""TF's version and build constants (``tf.VERSION``, ``tf.GRAPH_DEF_VERSION``, ``tf.CXX11_ABI_FLAG``, ...), with what
each means in this package.

* ``VERSION`` is the TF1 API this package follows (TF 1.15, the last TF1 release: what ``compat.v1`` offers here),
  not this package's own version (``dtf_notebook.__version__``); ``GIT_VERSION`` says so.
* ``GRAPH_DEF_VERSION`` is the producer version this package writes into graph defs (``Graph.as_graph_def()``), and
  the two ``MIN_*`` versions the oldest producer and consumer it accepts: it reads every version it writes.
* ``COMPILER_VERSION`` names the compiler that built the running Python (this package has no C++ of its own; its
  kernels are PyTorch's).
* ``CXX11_ABI_FLAG``, ``CXX_VERSION`` and ``MONOLITHIC_BUILD`` describe the C++ build custom-op libraries must match
  in TF. No op library can be loaded here, so they describe nothing of this package: they keep TF's values, so that
  scripts printing or comparing them behave as under TF.

Example:
    >>> VERSION.startswith("1."), GRAPH_DEF_VERSION
    (True, 1)
"""

from __future__ import annotations

import platform

__all__ = [
    "COMPILER_VERSION",
    "CXX11_ABI_FLAG",
    "CXX_VERSION",
    "GIT_VERSION",
    "GRAPH_DEF_VERSION",
    "GRAPH_DEF_VERSION_MIN_CONSUMER",
    "GRAPH_DEF_VERSION_MIN_PRODUCER",
    "MONOLITHIC_BUILD",
    "VERSION",
]

VERSION = "1.15.5"
GIT_VERSION = "v1.15.5-dtf_notebook"
COMPILER_VERSION = platform.python_compiler()
GRAPH_DEF_VERSION = 1
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
CXX11_ABI_FLAG = 1
CXX_VERSION = 201703
MONOLITHIC_BUILD = 0
