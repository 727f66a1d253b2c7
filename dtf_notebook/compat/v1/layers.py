"""``tf.layers``: TF1's layers (``dense``, ``conv2d``, ``batch_normalization``, ... and their classes).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    ...     h = tf.layers.max_pooling2d(tf.layers.conv2d(x, 8, 5, activation=tf.nn.relu), 2, 2)
    ...     logits = tf.layers.dense(tf.layers.flatten(h), 10)
    ...     count = len(tf.trainable_variables())
    >>> logits.shape.as_list(), count
    ([None, 10], 4)
"""

from dtf_notebook.layers import *  # noqa: F403
from dtf_notebook.layers import InputSpec, Layer  # noqa: F401
