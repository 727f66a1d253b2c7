"""Training: optimizers, the global step, device setters, savers, hooks and monitored sessions.

The modules of this package are imported one by one (``dtf_notebook.train.saver``); the package itself
also answers every ``tf.train`` name, so ``dtf_notebook.train.Saver`` works like ``tf.train.Saver``.

Example:
    >>> import dtf_notebook
    >>> dtf_notebook.train.GradientDescentOptimizer.__name__
    'GradientDescentOptimizer'
"""

import importlib
import importlib.util
from typing import Any


def __getattr__(name: str) -> Any:
    # A submodule asked for by ``from dtf_notebook.train import saver`` is imported, not looked up in tf.train: doing
    # that while a module of this package is still being imported would assemble tf.train from its partial names.
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    # The tf.train namespace is assembled in compat.v1.train (it also needs the distributed layer).
    from dtf_notebook.compat.v1 import train

    try:
        return getattr(train, name)
    except AttributeError:
        raise AttributeError(f"module 'dtf_notebook.train' has no attribute {name!r}") from None
