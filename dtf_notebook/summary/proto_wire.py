"""Protobuf wire primitives: varints, scalar encodings, value checks and the text format of scalars.

Example:
    >>> encode_scalar("double", 1.5) == struct.pack("<d", 1.5)
    True
    >>> text_scalar("float", round_float32(0.1)), text_scalar("bytes", b"a\\x00")
    ('0.1', '"a\\\\000"')
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
#: Wire type of each non-varint kind (every other scalar kind is a varint).
WIRE_TYPE = {"double": FIXED64, "float": FIXED32, "string": LENGTH, "bytes": LENGTH, "message": LENGTH}
#: The proto3 default of each scalar kind; a singular field holding it is not written.
DEFAULTS = {"double": 0.0, "float": 0.0, "int32": 0, "int64": 0, "uint64": 0, "bool": False, "enum": 0}
DEFAULTS.update({"string": "", "bytes": b""})


def encode_varint(value: int) -> bytes:
    """Base-128 varint; negative numbers are written as their 64-bit two's complement (protobuf's rule).

    Example:
        >>> encode_varint(300), len(encode_varint(-1))
        (b'\\xac\\x02', 10)
    """
    value &= (1 << 64) - 1
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """Reads a varint at ``pos``; returns (unsigned value, next position).

    Raises:
        ValueError: the data ends inside the varint.

    Example:
        >>> decode_varint(b"\\xac\\x02", 0)
        (300, 2)
    """
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ValueError("varint longer than 10 bytes")


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def round_float32(value: float) -> float:
    """The nearest 32-bit float to ``value`` (what a ``float`` field stores), as a Python float.

    Example:
        >>> round_float32(0.1), round_float32(0.5)
        (0.10000000149011612, 0.5)
    """
    return struct.unpack("<f", struct.pack("<f", value))[0]


def coerce(field: Any, value: Any) -> Any:
    """Checks and converts one scalar value for ``field`` (a ``proto.Field``), as generated protobuf classes do.

    Raises:
        TypeError: the value does not fit the field's kind (the message names the field).

    Example:
        >>> from dtf_notebook.summary.proto import Field
        >>> coerce(Field("step", 1, "int64"), 3.0), coerce(Field("tag", 2, "string"), b"loss")
        (3, 'loss')
        >>> coerce(Field("step", 1, "int64"), 2.5)
        Traceback (most recent call last):
            ...
        TypeError: Field 'step' holds integers, got 2.5
    """
    kind = field.kind
    if kind in ("double", "float"):
        value = _as_number(field, value, float)
        return round_float32(value) if kind == "float" else value
    if kind in ("int32", "int64", "uint64", "enum"):
        return _as_number(field, value, int)
    if kind == "bool":
        return bool(value)
    if kind == "string":
        if isinstance(value, bytes):
            return value.decode("utf-8")
        if not isinstance(value, str):
            raise TypeError(f"Field '{field.name}' holds text, got {type(value).__name__}: {value!r}")
        return value
    if kind == "bytes":
        if isinstance(value, str):
            return value.encode("utf-8")
        if not isinstance(value, bytes | bytearray | memoryview):
            raise TypeError(f"Field '{field.name}' holds bytes, got {type(value).__name__}: {value!r}")
        return bytes(value)
    raise TypeError(f"Field '{field.name}' of kind {kind} holds no scalar")


def _as_number(field: Any, value: Any, kind: Callable[[Any], Any]) -> Any:
    try:
        converted = kind(value)
    except (TypeError, ValueError):
        raise TypeError(f"Field '{field.name}' holds numbers, got {type(value).__name__}: {value!r}") from None
    if kind is int and converted != value:
        raise TypeError(f"Field '{field.name}' holds integers, got {value!r}")
    return converted


def encode_scalar(kind: str, value: Any) -> bytes:
    """The wire bytes of one scalar of ``kind`` (length-prefixed for strings and bytes; no field key).

    Example:
        >>> encode_scalar("string", "hi"), encode_scalar("int64", 300)
        (b'\\x02hi', b'\\xac\\x02')
    """
    if kind == "double":
        return struct.pack("<d", value)
    if kind == "float":
        return struct.pack("<f", value)
    if kind == "string":
        data = value.encode("utf-8")
        return encode_varint(len(data)) + data
    if kind == "bytes":
        return encode_varint(len(value)) + value
    return encode_varint(int(value))


def decode_scalar(kind: str, data: memoryview, pos: int, wire_type: int) -> tuple[Any, int]:
    """Reads one scalar of ``kind`` sent with ``wire_type`` at ``pos``; returns (value, next position).

    Example:
        >>> decode_scalar("string", memoryview(b"\\x02hi"), 0, LENGTH)
        ('hi', 3)
        >>> decode_scalar("int64", memoryview(encode_varint(-2)), 0, VARINT)
        (-2, 10)
    """
    if wire_type == FIXED64:
        (value,) = struct.unpack_from("<d" if kind == "double" else "<q", data, pos)
        return value, pos + 8
    if wire_type == FIXED32:
        (value,) = struct.unpack_from("<f" if kind == "float" else "<i", data, pos)
        return value, pos + 4
    if wire_type == VARINT:
        raw, pos = decode_varint(data, pos)
        if kind == "bool":
            return raw != 0, pos
        return (raw if kind == "uint64" else _signed64(raw)), pos
    length, pos = decode_varint(data, pos)
    if pos + length > len(data):
        raise ValueError("truncated length-delimited field")
    chunk = bytes(data[pos : pos + length])
    return (chunk.decode("utf-8") if kind == "string" else chunk), pos + length


def skip_field(data: memoryview, pos: int, wire_type: int) -> int:
    """The position after the value of ``wire_type`` at ``pos`` (for fields this code does not know).

    Example:
        >>> skip_field(memoryview(b"\\x02hi\\x08"), 0, LENGTH), skip_field(memoryview(b"\\xac\\x02"), 0, VARINT)
        (3, 2)
    """
    if wire_type == VARINT:
        return decode_varint(data, pos)[1]
    if wire_type == FIXED64:
        return pos + 8
    if wire_type == FIXED32:
        return pos + 4
    if wire_type == LENGTH:
        length, pos = decode_varint(data, pos)
        return pos + length
    raise ValueError(f"unsupported wire type {wire_type}")


def field_key(number: int, wire_type: int) -> bytes:
    """The key that starts a field on the wire: ``number`` and ``wire_type`` as one varint.

    Example:
        >>> field_key(1, LENGTH), field_key(2, VARINT)
        (b'\\n', b'\\x10')
    """
    return encode_varint((number << 3) | wire_type)


def escape_text(value: str | bytes) -> str:
    """Text or bytes escaped for a quoted string of protobuf's text format (C escapes, octal for the rest).

    Example:
        >>> print(escape_text('say "hi"\\n'), escape_text(b"\\xff"))
        say \\"hi\\"\\n \\377
    """
    data = value.encode("utf-8") if isinstance(value, str) else value
    out = []
    for byte in data:
        char = chr(byte)
        if char in "\"'\\":
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append({10: "\\n", 13: "\\r", 9: "\\t"}.get(byte, f"\\{byte:03o}"))
    return "".join(out)


def text_scalar(kind: str, value: Any, enum_names: dict[int, str] | None = None) -> str:
    """One scalar as protobuf's text format writes it (enums by name when ``enum_names`` knows it).

    Example:
        >>> text_scalar("bool", True), text_scalar("enum", 3, {3: "CHECKPOINT"}), text_scalar("double", 0.1)
        ('true', 'CHECKPOINT', '0.1')
    """
    if kind in ("string", "bytes"):
        return f'"{escape_text(value)}"'
    if kind == "bool":
        return "true" if value else "false"
    if kind == "enum" and enum_names and value in enum_names:
        return enum_names[value]
    if kind in ("float", "double"):
        # The shortest %g form that reads back as the same value, as protobuf's text format prints it.
        same = round_float32 if kind == "float" else float
        for digits in range(1, 18):
            text = f"{value:.{digits}g}"
            if same(float(text)) == value or value != value:
                return text
    return str(value)


__all__ = [
    "DEFAULTS",
    "FIXED32",
    "FIXED64",
    "LENGTH",
    "VARINT",
    "WIRE_TYPE",
    "coerce",
    "decode_scalar",
    "decode_varint",
    "encode_scalar",
    "encode_varint",
    "escape_text",
    "field_key",
    "round_float32",
    "skip_field",
    "text_scalar",
]
