"""``tf.lookup``: the table initializers of TF1's lookup tables under their ``tf.lookup.*`` names (the same classes
as ``tf.contrib.lookup``'s).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [7, 8], value_dtype=tf.int64)
    ...     table = tf.contrib.lookup.HashTable(init, -1)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.tables_initializer())
    ...         print(sess.run(table.lookup(tf.constant(["b", "c"]))))
    [ 8 -1]
"""

from dtf_notebook.ops.lookup import KeyValueTensorInitializer, TextFileIndex, TextFileInitializer

__all__ = ["KeyValueTensorInitializer", "TextFileIndex", "TextFileInitializer"]
