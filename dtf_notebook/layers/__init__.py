"""TF1's ``tf.layers``: layer classes and functions whose variables are named and scoped as TF1 names them.

Example:
    >>> import dtf_notebook.layers as layers
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     y = layers.dense(tf.zeros([2, 3]), 4)
    >>> y.name
    'dense/BiasAdd:0'
"""

from dtf_notebook.layers.base import InputSpec, Layer
from dtf_notebook.layers.convolutional import *  # noqa: F403
from dtf_notebook.layers.core import *  # noqa: F403
from dtf_notebook.layers.normalization import *  # noqa: F403
from dtf_notebook.layers.pooling import *  # noqa: F403
