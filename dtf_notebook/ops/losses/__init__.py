"""TF1's ``tf.losses``: weighted losses with reductions, the ``LOSSES`` collection and its helpers.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.losses.mean_squared_error([1.0, 2.0], [1.5, 2.0])
    ...     with tf.Session() as sess:
    ...         print(sess.run(loss), tf.losses.get_losses() == [loss])
    0.125 True
"""

from dtf_notebook.ops.losses import losses_impl, util
from dtf_notebook.ops.losses.losses_impl import *  # noqa: F403
from dtf_notebook.ops.losses.util import *  # noqa: F403

__all__ = losses_impl.__all__ + util.__all__
