"""``TestCase.assertProtoEquals``: comparing protocol buffers as TF's tests do.

A message is compared with an expected message or with its text format (parsed into a message of the same class).
Numbers are normalized first, as TF's ``compare.assertProtoEqual`` does (floats to 6 decimals, doubles to 7), with
``relative_tolerance`` floats within it count as equal; a difference fails with the two text formats side by side
(``assertMultiLineEqual``'s diff).

Example:
    >>> import unittest
    >>> from dtf_notebook.protos.example_pb import Feature
    >>> class T(ProtoAssertions, unittest.TestCase):
    ...     def runTest(self):
    ...         self.assertProtoEquals("float_list { value: 0.1 }", Feature(float_list={"value": [0.1]}))
    >>> unittest.TextTestRunner(stream=__import__("io").StringIO()).run(T()).wasSuccessful()
    True
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from google.protobuf import descriptor, message, text_format

__all__ = ["ProtoAssertions", "assert_proto_equal", "normalize_number_fields", "proto_eq"]

_INTS = frozenset(
    {
        descriptor.FieldDescriptor.TYPE_INT64,
        descriptor.FieldDescriptor.TYPE_UINT64,
        descriptor.FieldDescriptor.TYPE_SINT64,
        descriptor.FieldDescriptor.TYPE_INT32,
        descriptor.FieldDescriptor.TYPE_UINT32,
        descriptor.FieldDescriptor.TYPE_SINT32,
        descriptor.FieldDescriptor.TYPE_ENUM,
    }
)
_FLOATS = frozenset({descriptor.FieldDescriptor.TYPE_FLOAT, descriptor.FieldDescriptor.TYPE_DOUBLE})


def _repeated(field: Any) -> bool:
    # protobuf 6 has ``is_repeated``; older versions only ``label``
    found = getattr(field, "is_repeated", None)
    return found if found is not None else field.label == descriptor.FieldDescriptor.LABEL_REPEATED


def _is_map(field: Any) -> bool:
    kind = field.message_type
    return field.type == descriptor.FieldDescriptor.TYPE_MESSAGE and kind is not None and kind.GetOptions().map_entry


def _map_holds_messages(field: Any) -> bool:
    return field.message_type.fields_by_number[2].type == descriptor.FieldDescriptor.TYPE_MESSAGE


def _submessages(field: Any, values: Any) -> list[Any]:
    """The messages inside one field's value(s) (the values of a map of messages), else []."""
    if field.type not in (descriptor.FieldDescriptor.TYPE_MESSAGE, descriptor.FieldDescriptor.TYPE_GROUP):
        return []
    if _is_map(field):
        return list(values.values()) if _map_holds_messages(field) else []
    return list(values) if _repeated(field) else [values]


def normalize_number_fields(pb: message.Message) -> message.Message:
    """``pb`` with its numbers normalized in place (TF's rule: ints as ints, floats rounded to 6 decimals, doubles
    to 7), so that a value set in Python and the same value read back from bytes compare equal.

    Example:
        >>> from dtf_notebook.protos.example_pb import FloatList
        >>> print(normalize_number_fields(FloatList(value=[0.1])), end="")
        value: 0.1
    """
    for field, values in pb.ListFields():
        repeated = _repeated(field)
        items = list(values) if repeated and not _is_map(field) else [values]
        normalized = None
        if field.type in _INTS:
            normalized = [int(x) for x in items]
        elif field.type == descriptor.FieldDescriptor.TYPE_FLOAT:
            normalized = [round(x, 6) for x in items]
        elif field.type == descriptor.FieldDescriptor.TYPE_DOUBLE:
            normalized = [round(float(x), 7) for x in items]
        if normalized is not None:
            if repeated:
                pb.ClearField(field.name)
                getattr(pb, field.name).extend(normalized)
            else:
                setattr(pb, field.name, normalized[0])
        for sub in _submessages(field, values):
            normalize_number_fields(sub)
    return pb


def _is_close(x: float, y: float, relative_tolerance: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) == math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= relative_tolerance * max(abs(x), abs(y))


def _adopt_close_floats(expected: message.Message, actual: message.Message, relative_tolerance: float) -> None:
    """Replaces the floats of ``actual`` by ``expected``'s where they are within ``relative_tolerance``."""
    for (field, want), (_, got) in zip(expected.ListFields(), actual.ListFields()):
        repeated = _repeated(field)
        if field.type in _FLOATS:
            pairs = zip(want, got) if repeated else [(want, got)]
            for i, (x, y) in enumerate(pairs):
                if _is_close(x, y, relative_tolerance):
                    if repeated:
                        getattr(actual, field.name)[i] = x
                    else:
                        setattr(actual, field.name, x)
        for sub_want, sub_got in zip(_submessages(field, want), _submessages(field, got)):
            _adopt_close_floats(sub_want, sub_got, relative_tolerance)


def proto_eq(a: Any, b: Any) -> bool:
    """Whether two messages (or field values) are equal field by field, repeated fields in order.

    Example:
        >>> from dtf_notebook.protos.example_pb import Int64List
        >>> a, b = Int64List(value=[1, 2]), Int64List(value=[2, 1])
        >>> proto_eq(a, Int64List(value=[1, 2])), proto_eq(a, b)
        (True, False)
    """

    def fields(pb: Any) -> Any:
        if isinstance(pb, message.Message):
            return {field.number: value for field, value in pb.ListFields()}
        if hasattr(pb, "items") and hasattr(pb, "keys"):
            return dict(pb.items())
        if not isinstance(pb, str | bytes):
            try:
                return dict(enumerate(list(pb)))
            except TypeError:
                return pb
        return pb

    a, b = fields(a), fields(b)
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a == b
    return a.keys() == b.keys() and all(proto_eq(a[k], b[k]) for k in a)


def _text(pb: message.Message) -> str:
    return text_format.MessageToString(pb, descriptor_pool=pb.DESCRIPTOR.file.pool)


def assert_proto_equal(
    test: Any,
    expected: message.Message,
    actual: message.Message,
    normalize_numbers: bool = True,
    msg: str | None = None,
    relative_tolerance: float | None = None,
) -> None:
    """Fails ``test`` with the diff of the text formats when the messages differ (TF's ``compare.assertProtoEqual``).

    Example:
        >>> import unittest
        >>> from dtf_notebook.protos.example_pb import Int64List
        >>> assert_proto_equal(unittest.TestCase(), Int64List(value=[1]), Int64List(value=[1]))
    """
    if proto_eq(expected, actual):
        return
    expected, actual = _copy(expected), _copy(actual)
    for pb in (expected, actual):
        missing = pb.FindInitializationErrors()
        if missing:
            test.fail(f"Initialization errors: {missing}\n{pb}")
        if normalize_numbers:
            normalize_number_fields(pb)
    if relative_tolerance is not None:
        _adopt_close_floats(actual, expected, relative_tolerance)
    a, b = _text(expected), _text(actual)
    if len(a) < 2**16 and len(b) < 2**16:
        test.assertMultiLineEqual(a, b, msg=msg)
        return
    diff = "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True)))
    if diff:
        test.fail(f"{msg} :\n{diff}")


def _copy(pb: message.Message) -> message.Message:
    out = type(pb)()
    out.CopyFrom(pb)
    return out


class ProtoAssertions:
    """``assertProtoEquals`` and ``assertProtoEqualsVersion`` for a ``unittest.TestCase`` (mixed into
    ``tf.test.TestCase``)."""

    def assertProtoEquals(  # noqa: N802 - TF's name
        self,
        expected_message_maybe_ascii: Any,
        validate_message: Any,
        msg: str | None = None,
        relative_tolerance: float | None = None,
    ) -> None:
        """``validate_message`` equals the expected message, given as a message of its class or in text format
        (a graph def in plain-dict form is compared as its ``GraphDef``).

        Raises:
            AssertionError: they differ (the diff of their text formats), or the expected value is neither.
        """
        if isinstance(validate_message, dict) and "node" in validate_message:  # a graph def as plain data
            from dtf_notebook.framework.graph_proto import graph_def_proto

            validate_message = graph_def_proto(validate_message)
        if isinstance(expected_message_maybe_ascii, type(validate_message)):
            expected = expected_message_maybe_ascii
        elif isinstance(expected_message_maybe_ascii, str | bytes):
            expected = type(validate_message)()
            text_format.Merge(
                expected_message_maybe_ascii, expected, descriptor_pool=validate_message.DESCRIPTOR.file.pool
            )
        else:
            raise AssertionError(
                f"Can't compare protos of type {type(expected_message_maybe_ascii)} and {type(validate_message)}."
            )
        assert_proto_equal(self, expected, validate_message, msg=msg, relative_tolerance=relative_tolerance)

    def assertProtoEqualsVersion(  # noqa: N802 - TF's name
        self, expected: str, actual: Any, producer: int | None = None, min_consumer: int | None = None, msg: Any = None
    ) -> None:
        """``assertProtoEquals`` of a graph def in text format preceded by its ``versions`` (this library's graph
        def versions unless given)."""
        from dtf_notebook.compat.v1.version import GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER

        producer = GRAPH_DEF_VERSION if producer is None else producer
        min_consumer = GRAPH_DEF_VERSION_MIN_CONSUMER if min_consumer is None else min_consumer
        text = f"versions {{ producer: {producer} min_consumer: {min_consumer} }};\n{expected}"
        self.assertProtoEquals(text, actual, msg=msg)
