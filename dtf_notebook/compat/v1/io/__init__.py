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
from dtf_notebook.ops.io import (  # the input pipeline's tf.io names
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
    decode_csv,
    decode_raw,
    matching_files,
    parse_example,
    parse_single_example,
    parse_single_sequence_example,
)
from dtf_notebook.train.graph_io import write_graph
from dtf_notebook.train.input import match_filenames_once

__all__ = [
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "gfile",
    "tf_record_iterator",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "SparseFeature",
    "VarLenFeature",
    "decode_csv",
    "decode_raw",
    "matching_files",
    "match_filenames_once",
    "parse_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "write_graph",
]
