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
    # A module of this package asked for by ``from dtf_notebook.train import x`` before it was imported is that
    # module: answering from compat.v1.train here would import it in the middle of the importing module, whose
    # names its ``*`` imports would then miss (tf.train.MonitoredSession did).
    if importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    # The tf.train namespace is assembled in compat.v1.train (it also needs the distributed layer).
    from dtf_notebook.compat.v1 import train

    try:
        return getattr(train, name)
    except AttributeError:
        raise AttributeError(f"module 'dtf_notebook.train' has no attribute {name!r}") from None
