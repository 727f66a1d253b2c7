"""Input pipelines in the graph (TF1's readers and parsers): ops that read files and decode records.

- ``reader_ops``: ``TextLineReader``, ``TFRecordReader``, ``FixedLengthRecordReader``, ``WholeFileReader``,
  ``IdentityReader`` and the ``Reader*V2`` ops
- ``parsing_config``: ``FixedLenFeature``, ``VarLenFeature``, ``SparseFeature``, ``FixedLenSequenceFeature``
- ``example_parser``: serialized ``Example``/``SequenceExample`` protos to numpy, TF's rules and messages
- ``parsing_ops``: ``parse_example``, ``parse_single_example``, ``parse_single_sequence_example``
- ``decode_ops``: ``decode_csv``, ``decode_raw``
- ``input_ops``: ``count_up_to`` (``num_epochs``), ``matching_files``
- ``sparse_map_ops``: ``SparseTensor``s through queues (stored in a map, their handles enqueued)
"""

from dtf_notebook.ops.io import sparse_map_ops  # noqa: F401 - registrations
from dtf_notebook.ops.io.decode_ops import decode_csv, decode_raw
from dtf_notebook.ops.io.input_ops import count_up_to, matching_files
from dtf_notebook.ops.io.parsing_config import FixedLenFeature, FixedLenSequenceFeature, SparseFeature, VarLenFeature
from dtf_notebook.ops.io.parsing_ops import parse_example, parse_single_example, parse_single_sequence_example
from dtf_notebook.ops.io.reader_ops import (
    FixedLengthRecordReader,
    IdentityReader,
    ReaderBase,
    TextLineReader,
    TFRecordReader,
    WholeFileReader,
)

#: The names ``dtf_notebook.compat.v1`` exports at its top level (``tf.TextLineReader``, ``tf.decode_csv``, ...).
__all__ = [
    "ReaderBase",
    "TextLineReader",
    "TFRecordReader",
    "FixedLengthRecordReader",
    "WholeFileReader",
    "IdentityReader",
    "decode_csv",
    "decode_raw",
    "parse_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "VarLenFeature",
    "SparseFeature",
    "count_up_to",
    "matching_files",
]
