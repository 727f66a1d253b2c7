"""TF's event-file messages as protobuf classes: ``Event``, ``Summary``, ``HistogramProto``, ``SessionLog``, ...

The schemas are TF's ``histogram.proto``, ``summary.proto`` and ``event.proto`` with TF's file names, message
names and field numbers, so event files written here are what TF's readers and TensorBoard read, and the other
way round.

Example:
    >>> summary = Summary(value=[Summary.Value(tag="loss", simple_value=0.25)])
    >>> print(summary, end="")
    value {
      tag: "loss"
      simple_value: 0.25
    }
    >>> Summary.FromString(summary.SerializeToString()).value[0].simple_value
    0.25
"""

from __future__ import annotations

from typing import Any

from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from dtf_notebook.protos import POOL, message_class
from dtf_notebook.protos import graph_pb as _graph_pb  # noqa: F401 - puts tensor.proto in the pool first
from dtf_notebook.protos.spec import add_spec_file

__all__ = [
    "DATA_CLASS_BLOB_SEQUENCE",
    "DATA_CLASS_SCALAR",
    "DATA_CLASS_TENSOR",
    "DATA_CLASS_UNKNOWN",
    "DataClass",
    "Event",
    "HistogramProto",
    "LogMessage",
    "SessionLog",
    "SourceMetadata",
    "Summary",
    "SummaryDescription",
    "SummaryMetadata",
    "TaggedRunMetadata",
]

# TF 2.x keeps HistogramProto in TSL's file (package tensorflow); TF1 had it in summary.proto: the bytes are the same.
_HISTOGRAM = "xla/tsl/protobuf/histogram.proto"
add_spec_file(
    _HISTOGRAM,
    [],
    [
        (
            "HistogramProto",
            [
                ("min", 1, "double"),
                ("max", 2, "double"),
                ("num", 3, "double"),
                ("sum", 4, "double"),
                ("sum_squares", 5, "double"),
                ("bucket_limit", 6, "repeated double"),
                ("bucket", 7, "repeated double"),
            ],
        )
    ],
)
_SUMMARY = "tensorflow/core/framework/summary.proto"
add_spec_file(
    _SUMMARY,
    [_HISTOGRAM, "tensorflow/core/framework/tensor.proto"],
    [
        ("SummaryDescription", [("type_hint", 1, "string")]),
        (
            "SummaryMetadata",
            [
                ("plugin_data", 1, "tensorflow.SummaryMetadata.PluginData"),
                ("display_name", 2, "string"),
                ("summary_description", 3, "string"),
                ("data_class", 4, "enum tensorflow.DataClass"),
            ],
            [("PluginData", [("plugin_name", 1, "string"), ("content", 2, "bytes")])],
        ),
        (
            "Summary",
            [("value", 1, "repeated tensorflow.Summary.Value")],
            [
                (
                    "Image",
                    [
                        ("height", 1, "int32"),
                        ("width", 2, "int32"),
                        ("colorspace", 3, "int32"),
                        ("encoded_image_string", 4, "bytes"),
                    ],
                ),
                (
                    "Audio",
                    [
                        ("sample_rate", 1, "float"),
                        ("num_channels", 2, "int64"),
                        ("length_frames", 3, "int64"),
                        ("encoded_audio_string", 4, "bytes"),
                        ("content_type", 5, "string"),
                    ],
                ),
                (
                    "Value",
                    [
                        ("node_name", 7, "string"),
                        ("tag", 1, "string"),
                        ("metadata", 9, "tensorflow.SummaryMetadata"),
                        ("simple_value", 2, "float", "value"),
                        ("obsolete_old_style_histogram", 3, "bytes", "value"),
                        ("image", 4, "tensorflow.Summary.Image", "value"),
                        ("histo", 5, "tensorflow.HistogramProto", "value"),
                        ("audio", 6, "tensorflow.Summary.Audio", "value"),
                        ("tensor", 8, "tensorflow.TensorProto", "value"),
                    ],
                ),
            ],
        ),
    ],
    enums=(
        (
            "DataClass",
            [
                ("DATA_CLASS_UNKNOWN", 0),
                ("DATA_CLASS_SCALAR", 1),
                ("DATA_CLASS_TENSOR", 2),
                ("DATA_CLASS_BLOB_SEQUENCE", 3),
            ],
        ),
    ),
)
add_spec_file(
    "tensorflow/core/util/event.proto",
    [_SUMMARY],
    [
        (
            "Event",
            [
                ("wall_time", 1, "double"),
                ("step", 2, "int64"),
                ("file_version", 3, "string", "what"),
                ("graph_def", 4, "bytes", "what"),
                ("summary", 5, "tensorflow.Summary", "what"),
                ("log_message", 6, "tensorflow.LogMessage", "what"),
                ("session_log", 7, "tensorflow.SessionLog", "what"),
                ("tagged_run_metadata", 8, "tensorflow.TaggedRunMetadata", "what"),
                ("meta_graph_def", 9, "bytes", "what"),
                ("source_metadata", 10, "tensorflow.SourceMetadata"),
            ],
        ),
        ("SourceMetadata", [("writer", 1, "string")]),
        (
            "LogMessage",
            [("level", 1, "enum tensorflow.LogMessage.Level"), ("message", 2, "string")],
            [
                (
                    "enum",
                    "Level",
                    [("UNKNOWN", 0), ("DEBUGGING", 10), ("INFO", 20), ("WARN", 30), ("ERROR", 40), ("FATAL", 50)],
                )
            ],
        ),
        (
            "SessionLog",
            [
                ("status", 1, "enum tensorflow.SessionLog.SessionStatus"),
                ("checkpoint_path", 2, "string"),
                ("msg", 3, "string"),
            ],
            [("enum", "SessionStatus", [("STATUS_UNSPECIFIED", 0), ("START", 1), ("STOP", 2), ("CHECKPOINT", 3)])],
        ),
        ("TaggedRunMetadata", [("tag", 1, "string"), ("run_metadata", 2, "bytes")]),
    ],
)

#: TF's ``DataClass`` enum of a summary's metadata (``DataClass.Value("DATA_CLASS_SCALAR") == 1``).
DataClass: Any = EnumTypeWrapper(POOL.FindEnumTypeByName("tensorflow.DataClass"))
DATA_CLASS_UNKNOWN, DATA_CLASS_SCALAR, DATA_CLASS_TENSOR, DATA_CLASS_BLOB_SEQUENCE = 0, 1, 2, 3
HistogramProto = message_class("tensorflow.HistogramProto", __name__)
SummaryDescription = message_class("tensorflow.SummaryDescription", __name__)
SummaryMetadata = message_class("tensorflow.SummaryMetadata", __name__)
Summary = message_class("tensorflow.Summary", __name__)
SourceMetadata = message_class("tensorflow.SourceMetadata", __name__)
LogMessage = message_class("tensorflow.LogMessage", __name__)
SessionLog = message_class("tensorflow.SessionLog", __name__)
TaggedRunMetadata = message_class("tensorflow.TaggedRunMetadata", __name__)
Event = message_class("tensorflow.Event", __name__)
