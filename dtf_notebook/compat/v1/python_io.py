"""``tf.python_io``: TFRecord files (``TFRecordWriter``, ``tf_record_iterator``, ``TFRecordOptions``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> options = tf.python_io.TFRecordOptions(tf.python_io.TFRecordCompressionType.GZIP)
    >>> with tf.python_io.TFRecordWriter("memory://compat_python_io_doc/r.gz", options) as writer:
    ...     writer.write(b"a"); writer.write(b"b")
    >>> list(tf.python_io.tf_record_iterator("memory://compat_python_io_doc/r.gz", options))
    [b'a', b'b']
"""

from dtf_notebook.lib.io.tf_record import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]
