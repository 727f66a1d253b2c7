"""The protobuf messages of event files: ``Event``, ``Summary``, ``HistogramProto``, ``SessionLog``, ...

These are the protobuf classes of :mod:`dtf_notebook.protos.summary_pb` (TF's ``event.proto``, ``summary.proto``
and ``histogram.proto``) and of :mod:`dtf_notebook.protos.graph_pb` (``TensorProto``, ``TensorShapeProto``), so the
bytes they write are what TensorFlow and TensorBoard read.

Example:
    >>> summary = Summary(value=[Summary.Value(tag="loss", simple_value=0.25)])
    >>> Summary.FromString(summary.SerializeToString()).value[0].simple_value
    0.25
"""

from __future__ import annotations

from dtf_notebook.protos.graph_pb import TensorProto, TensorShapeProto
from dtf_notebook.protos.summary_pb import (
    Event,
    HistogramProto,
    LogMessage,
    SessionLog,
    SourceMetadata,
    Summary,
    SummaryDescription,
    SummaryMetadata,
    TaggedRunMetadata,
)

__all__ = [
    "Event",
    "HistogramProto",
    "LogMessage",
    "SessionLog",
    "SourceMetadata",
    "Summary",
    "SummaryDescription",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "TensorProto",
    "TensorShapeProto",
]
