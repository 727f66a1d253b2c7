"""The optimizers of ``tf.train`` (and ``exponential_decay``), gathered for the ``tf.train`` namespace.

Importing this module also registers the fused update ops (``dtf_notebook.ops.training_ops``).

Example:
    >>> import dtf_notebook as tf
    >>> sorted(n for n in __all__ if n.endswith("Optimizer"))[:3]
    ['AdadeltaOptimizer', 'AdagradDAOptimizer', 'AdagradOptimizer']
"""

from dtf_notebook.train.adadelta import AdadeltaOptimizer
from dtf_notebook.train.adagrad import AdagradOptimizer
from dtf_notebook.train.adagrad_da import AdagradDAOptimizer
from dtf_notebook.train.adam import AdamOptimizer
from dtf_notebook.train.ftrl import FtrlOptimizer
from dtf_notebook.train.gradient_descent import GradientDescentOptimizer
from dtf_notebook.train.learning_rate_decay import exponential_decay
from dtf_notebook.train.momentum import MomentumOptimizer
from dtf_notebook.train.optimizer import Optimizer
from dtf_notebook.train.proximal_adagrad import ProximalAdagradOptimizer
from dtf_notebook.train.proximal_gradient_descent import ProximalGradientDescentOptimizer
from dtf_notebook.train.rmsprop import RMSPropOptimizer

__all__ = [
    "Optimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "AdagradOptimizer",
    "RMSPropOptimizer",
    "AdamOptimizer",
    "AdadeltaOptimizer",
    "AdagradDAOptimizer",
    "FtrlOptimizer",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
    "exponential_decay",
]
