"""How a canned estimator's ``optimizer`` argument becomes an optimizer (TF's ``get_optimizer_instance``).

Example:
    >>> type(get_optimizer_instance("Adagrad", learning_rate=0.05)).__name__
    'AdagradOptimizer'
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.train.adagrad import AdagradOptimizer
from dtf_notebook.train.adam import AdamOptimizer
from dtf_notebook.train.ftrl import FtrlOptimizer
from dtf_notebook.train.gradient_descent import GradientDescentOptimizer
from dtf_notebook.train.optimizer import Optimizer
from dtf_notebook.train.rmsprop import RMSPropOptimizer

__all__ = ["get_optimizer_instance"]

_OPTIMIZERS = {
    "Adagrad": AdagradOptimizer,
    "Adam": AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "RMSProp": RMSPropOptimizer,
    "SGD": GradientDescentOptimizer,
}


def get_optimizer_instance(opt: Any, learning_rate: float | None = None) -> Optimizer:
    """An optimizer from a name (``'Adagrad'``, ``'Adam'``, ``'Ftrl'``, ``'RMSProp'``, ``'SGD'``), an instance, or a
    callable returning one.

    Raises:
        ValueError: an unknown name, a name without learning rate, or something that is not an optimizer.

    Example:
        >>> get_optimizer_instance("Momentum", 0.1)
        Traceback (most recent call last):
        ValueError: Unsupported optimizer name: Momentum. Supported names are: ('Adagrad', 'Adam', ...)
    """
    if isinstance(opt, str):
        if opt in _OPTIMIZERS:
            if not learning_rate:
                raise ValueError("learning_rate must be specified when opt is string.")
            return _OPTIMIZERS[opt](learning_rate=learning_rate)
        raise ValueError(f"Unsupported optimizer name: {opt}. Supported names are: {tuple(sorted(_OPTIMIZERS))}")
    if callable(opt) and not isinstance(opt, Optimizer):
        opt = opt()
    if not isinstance(opt, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {opt}")
    return opt
