"""``tf.contrib.lookup``: static hash tables and index tables.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     table = tf.contrib.lookup.index_table_from_tensor(["a", "b"])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.tables_initializer())
    ...         print(sess.run(table.lookup(tf.constant(["b"]))))
    [1]
"""

from dtf_notebook.ops.lookup import *  # noqa: F403
