"""``tf.io``: ``tf.io.gfile`` and TFRecord files (``TFRecordWriter``, ``tf_record_iterator``, options).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.io.TFRecordWriter("memory://compat_io_doc/r.tfrecord") as writer:
    ...     writer.write(b"x")
    >>> list(tf.io.tf_record_iterator("memory://compat_io_doc/r.tfrecord"))
    [b'x']
"""

from dtf_notebook.compat.v1.io import gfile
from dtf_notebook.lib.io.tf_record import TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "gfile", "tf_record_iterator"]
