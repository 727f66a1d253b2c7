"""``tf.metrics``: TF1's streaming metrics, each returning ``(value, update_op)`` over local variables.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     auc, update = tf.metrics.auc([0, 1, 1], [0.2, 0.7, 0.9])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 3))
    1.0
"""

from dtf_notebook.ops.metrics import *  # noqa: F403
