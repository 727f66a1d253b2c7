"""``tf.losses``: TF1's weighted losses, ``Reduction`` and the ``LOSSES`` collection helpers.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.losses.sparse_softmax_cross_entropy(labels=[0, 1], logits=[[2.0, 0.0], [0.0, 2.0]])
    ...     total = tf.losses.get_total_loss()
    ...     with tf.Session() as sess:
    ...         print(round(float(sess.run(total)), 4))
    0.1269
"""

from dtf_notebook.ops.losses import *  # noqa: F403
