"""Lookup tables in the graph (``tf.contrib.lookup`` / ``tf.lookup``): a static hash table filled from tensors
or a vocabulary file, and the index tables feature columns build on it.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops.lookup import index_table_from_tensor
    >>> with tf.Graph().as_default():
    ...     ids = index_table_from_tensor(["a", "b"], num_oov_buckets=1).lookup(tf.constant(["b", "zz"]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.tables_initializer())
    ...         print(sess.run(ids))
    [1 2]
"""

from dtf_notebook.ops.lookup.bucketize import bucketize
from dtf_notebook.ops.lookup.index_tables import IdTableWithHashBuckets, index_table_from_file, index_table_from_tensor
from dtf_notebook.ops.lookup.table_ops import HashTable, KeyValueTensorInitializer, TextFileIndex, TextFileInitializer

__all__ = [
    "HashTable",
    "bucketize",
    "IdTableWithHashBuckets",
    "KeyValueTensorInitializer",
    "TextFileIndex",
    "TextFileInitializer",
    "index_table_from_file",
    "index_table_from_tensor",
]
