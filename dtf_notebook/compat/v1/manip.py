"""``tf.manip``: TF1's home of a few array ops, under their short names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.manip.roll([1, 2, 3], 1, 0)))
    [3 1 2]
"""

from dtf_notebook.ops.array.reverse_roll import reverse, roll
from dtf_notebook.ops.array.scatter_nd import gather_nd, scatter_nd
from dtf_notebook.ops.array.space_depth import batch_to_space_nd, space_to_batch_nd
from dtf_notebook.ops.array_ops import reshape, tile
