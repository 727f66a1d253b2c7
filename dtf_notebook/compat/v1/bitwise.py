"""``tf.bitwise``: bitwise ops on integers.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.bitwise.bitwise_and(6, 3)))
    2
"""

from dtf_notebook.ops.math.bitwise import bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift
