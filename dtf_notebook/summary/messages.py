"""The protobuf messages of event files: ``Event``, ``Summary``, ``HistogramProto``, ``SessionLog``, ...

Field numbers and types follow TensorFlow's ``event.proto``, ``summary.proto``, ``tensor.proto`` and
``tensor_shape.proto``, so the bytes these classes write are what TensorFlow and TensorBoard read.

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

from dtf_notebook.summary.proto import Field, Message


class HistogramProto(Message):
    """A histogram: ``min``, ``max``, ``num``, ``sum``, ``sum_squares`` and buckets.

    ``bucket[i]`` counts values ``v`` with ``bucket_limit[i-1] <= v < bucket_limit[i]``.

    Example:
        >>> HistogramProto(num=2.0, bucket_limit=[1.0], bucket=[2.0]).num
        2.0
    """

    FIELDS = (
        Field("min", 1, "double"),
        Field("max", 2, "double"),
        Field("num", 3, "double"),
        Field("sum", 4, "double"),
        Field("sum_squares", 5, "double"),
        Field("bucket_limit", 6, "double", repeated=True),
        Field("bucket", 7, "double", repeated=True),
    )


DATA_TYPE_NAMES = {
    0: "DT_INVALID",
    1: "DT_FLOAT",
    2: "DT_DOUBLE",
    3: "DT_INT32",
    4: "DT_UINT8",
    5: "DT_INT16",
    6: "DT_INT8",
    7: "DT_STRING",
    9: "DT_INT64",
    10: "DT_BOOL",
    14: "DT_BFLOAT16",
    19: "DT_HALF",
}


class TensorShapeProto(Message):
    """A tensor's shape: ``dim`` (size -1 when unknown) or ``unknown_rank``.

    Example:
        >>> TensorShapeProto(dim=[TensorShapeProto.Dim(size=3)]).dim[0].size
        3
    """

    class Dim(Message):
        """One dimension: ``size`` and an optional ``name``."""

        FIELDS = (Field("size", 1, "int64"), Field("name", 2, "string"))

    FIELDS = (Field("dim", 2, "message", repeated=True, message=Dim), Field("unknown_rank", 3, "bool"))


class TensorProto(Message):
    """A tensor value: ``dtype``, ``tensor_shape`` and the values (``tensor_content`` or a ``*_val`` list).

    Example:
        >>> TensorProto(dtype=7, string_val=[b"hi"]).string_val[0]
        b'hi'
    """

    FIELDS = (
        Field("dtype", 1, "enum", enum_names=DATA_TYPE_NAMES),
        Field("tensor_shape", 2, "message", message=TensorShapeProto),
        Field("version_number", 3, "int32"),
        Field("tensor_content", 4, "bytes"),
        Field("half_val", 13, "int32", repeated=True),
        Field("float_val", 5, "float", repeated=True),
        Field("double_val", 6, "double", repeated=True),
        Field("int_val", 7, "int32", repeated=True),
        Field("string_val", 8, "bytes", repeated=True),
        Field("int64_val", 10, "int64", repeated=True),
        Field("bool_val", 11, "bool", repeated=True),
    )


class SummaryMetadata(Message):
    """What a summary value is and which TensorBoard plugin shows it.

    Example:
        >>> SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text")).plugin_data.plugin_name
        'text'
    """

    class PluginData(Message):
        """The owning plugin's name and its private ``content`` bytes."""

        FIELDS = (Field("plugin_name", 1, "string"), Field("content", 2, "bytes"))

    DATA_CLASS_UNKNOWN, DATA_CLASS_SCALAR, DATA_CLASS_TENSOR, DATA_CLASS_BLOB_SEQUENCE = 0, 1, 2, 3

    FIELDS = (
        Field("plugin_data", 1, "message", message=PluginData),
        Field("display_name", 2, "string"),
        Field("summary_description", 3, "string"),
        Field(
            "data_class",
            4,
            "enum",
            enum_names={
                0: "DATA_CLASS_UNKNOWN",
                1: "DATA_CLASS_SCALAR",
                2: "DATA_CLASS_TENSOR",
                3: "DATA_CLASS_BLOB_SEQUENCE",
            },
        ),
    )


class SummaryDescription(Message):
    """A hint of a summary's type (``type_hint``).

    Example:
        >>> print(SummaryDescription(type_hint="scalar"), end="")
        type_hint: "scalar"
    """

    FIELDS = (Field("type_hint", 1, "string"),)


class Summary(Message):
    """A list of tagged values (scalars, histograms, images, audio, tensors) for TensorBoard.

    Example:
        >>> s = Summary()
        >>> v = s.value.add(tag="acc", simple_value=0.5)
        >>> s.value[0].WhichOneof("value")
        'simple_value'
    """

    class Image(Message):
        """An encoded (PNG) image with its height, width and colorspace."""

        FIELDS = (
            Field("height", 1, "int32"),
            Field("width", 2, "int32"),
            Field("colorspace", 3, "int32"),
            Field("encoded_image_string", 4, "bytes"),
        )

    class Audio(Message):
        """An encoded audio clip with its sample rate and size."""

        FIELDS = (
            Field("sample_rate", 1, "float"),
            Field("num_channels", 2, "int64"),
            Field("length_frames", 3, "int64"),
            Field("encoded_audio_string", 4, "bytes"),
            Field("content_type", 5, "string"),
        )

    class Value(Message):
        """One tagged value; exactly one of the ``value`` oneof fields is set."""

        FIELDS = (
            Field("node_name", 7, "string"),
            Field("tag", 1, "string"),
            Field("metadata", 9, "message", message=SummaryMetadata),
            Field("simple_value", 2, "float", oneof="value"),
            Field("obsolete_old_style_histogram", 3, "bytes", oneof="value"),
            Field("image", 4, "message", message=lambda: Summary.Image, oneof="value"),
            Field("histo", 5, "message", message=HistogramProto, oneof="value"),
            Field("audio", 6, "message", message=lambda: Summary.Audio, oneof="value"),
            Field("tensor", 8, "message", message=TensorProto, oneof="value"),
        )

    FIELDS = (Field("value", 1, "message", repeated=True, message=Value),)


class LogMessage(Message):
    """A log line kept in an event file (``level``, ``message``).

    Example:
        >>> print(LogMessage(level=LogMessage.WARN, message="disk full"), end="")
        level: WARN
        message: "disk full"
    """

    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50

    FIELDS = (
        Field(
            "level",
            1,
            "enum",
            enum_names={0: "UNKNOWN", 10: "DEBUGGING", 20: "INFO", 30: "WARN", 40: "ERROR", 50: "FATAL"},
        ),
        Field("message", 2, "string"),
    )


class SessionLog(Message):
    """A session's life event: ``START``, ``STOP`` or ``CHECKPOINT`` (with the checkpoint path).

    Example:
        >>> SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path="/tmp/model.ckpt").status
        3
    """

    STATUS_UNSPECIFIED, START, STOP, CHECKPOINT = 0, 1, 2, 3

    FIELDS = (
        Field("status", 1, "enum", enum_names={0: "STATUS_UNSPECIFIED", 1: "START", 2: "STOP", 3: "CHECKPOINT"}),
        Field("checkpoint_path", 2, "string"),
        Field("msg", 3, "string"),
    )


class TaggedRunMetadata(Message):
    """A step's serialized run metadata under a ``tag``.

    Example:
        >>> tagged = TaggedRunMetadata(tag="step_5", run_metadata=b"\x01")
        >>> TaggedRunMetadata.FromString(tagged.SerializeToString()).tag
        'step_5'
    """

    FIELDS = (Field("tag", 1, "string"), Field("run_metadata", 2, "bytes"))


class SourceMetadata(Message):
    """Which program wrote the event file.

    Example:
        >>> print(SourceMetadata(writer="dtf_notebook"), end="")
        writer: "dtf_notebook"
    """

    FIELDS = (Field("writer", 1, "string"),)


class Event(Message):
    """One record of an event file: ``wall_time``, ``step`` and what happened (the ``what`` oneof).

    Example:
        >>> e = Event(wall_time=1.0, file_version="brain.Event:2")
        >>> e.WhichOneof("what"), e.step
        ('file_version', 0)
    """

    FIELDS = (
        Field("wall_time", 1, "double"),
        Field("step", 2, "int64"),
        Field("file_version", 3, "string", oneof="what"),
        Field("graph_def", 4, "bytes", oneof="what"),
        Field("summary", 5, "message", message=Summary, oneof="what"),
        Field("log_message", 6, "message", message=LogMessage, oneof="what"),
        Field("session_log", 7, "message", message=SessionLog, oneof="what"),
        Field("tagged_run_metadata", 8, "message", message=TaggedRunMetadata, oneof="what"),
        Field("meta_graph_def", 9, "bytes", oneof="what"),
        Field("source_metadata", 10, "message", message=SourceMetadata),
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
