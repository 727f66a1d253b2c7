"""Input pipelines in the graph (TF1's readers and parsers): ops that read files and decode records.

- ``reader_ops``: ``TextLineReader``, ``TFRecordReader``, ``FixedLengthRecordReader``, ``WholeFileReader``,
  ``IdentityReader`` and the ``Reader*V2`` ops
- ``parsing_config``: ``FixedLenFeature``, ``VarLenFeature``, ``SparseFeature``, ``FixedLenSequenceFeature``
- ``example_parser``: serialized ``Example``/``SequenceExample`` protos to numpy, TF's rules and messages
- ``parsing_ops``: ``parse_example``, ``parse_single_example``, ``parse_single_sequence_example``
- ``decode_ops``: ``decode_csv``, ``decode_raw``
"""

from dtf_notebook.ops.io import decode_ops, parsing_ops, reader_ops  # noqa: F401 - registrations
