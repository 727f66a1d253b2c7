"""A small protocol-buffer codec: messages declared as field tables, encoded and decoded in pure Python.

Event files are protobuf records, and TensorBoard (and TF's readers) expect the exact wire format.
The ``protobuf`` package is not a dependency of this project, so the few messages summaries need are
declared here as tables of :class:`Field` and share one encoder/decoder. A :class:`Message` behaves
like a generated protobuf class where it matters to users: keyword construction, attribute access
with defaults, ``repeated.add(...)``, oneofs (``WhichOneof``), ``HasField``, ``SerializeToString``,
``FromString``, ``CopyFrom`` and a text-format ``str()``. Fields this code does not declare are kept
as raw bytes and written back unchanged.

Example:
    >>> class Point(Message):
    ...     FIELDS = (Field("x", 1, "double"), Field("label", 2, "string"))
    >>> data = Point(x=1.5, label="a").SerializeToString()
    >>> data
    b'\\t\\x00\\x00\\x00\\x00\\x00\\x00\\xf8?\\x12\\x01a'
    >>> Point.FromString(data).x
    1.5
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any, ClassVar, NamedTuple

from dtf_notebook.summary.proto_wire import (
    DEFAULTS,
    LENGTH,
    VARINT,
    WIRE_TYPE,
    coerce,
    decode_scalar,
    decode_varint,
    encode_scalar,
    encode_varint,
    escape_text,
    field_key,
    skip_field,
    text_scalar,
)


class Field(NamedTuple):
    """One field of a message.

    Attributes:
        name: The attribute name.
        number: The field number on the wire.
        kind: ``double``, ``float``, ``int32``, ``int64``, ``uint64``, ``bool``, ``enum``, ``string``,
            ``bytes``, ``message`` or ``map`` (string keys, message values).
        repeated: A list of values (numbers are written packed, as proto3 does).
        message: The message class (or a no-argument callable returning it) of a message or map field.
        oneof: Name of the oneof group the field belongs to.
        enum_names: Number → name, for the text format of enum fields.

    Example:
        >>> field = Field("loss", 2, "float")
        >>> field.repeated, field.oneof
        (False, None)
        >>> Field("step", 1, "message", message=lambda: Field).message_class() is Field
        True
    """

    name: str
    number: int
    kind: str
    repeated: bool = False
    message: Any = None
    oneof: str | None = None
    enum_names: dict[int, str] | None = None

    def message_class(self) -> type[Message]:
        cls = self.message
        return cls if isinstance(cls, type) else cls()


# ---- containers ---------------------------------------------------------------------------------
class RepeatedField(list):
    """A repeated field: a list that converts what is appended and offers ``add(**fields)`` for messages.

    Example:
        >>> class Bag(Message):
        ...     FIELDS = (Field("n", 1, "int64", repeated=True),)
        >>> bag = Bag()
        >>> bag.n.extend([1, 2]); bag.n.append(3); list(bag.n)
        [1, 2, 3]
    """

    def __init__(self, owner: Message, field: Field) -> None:
        super().__init__()
        self._owner = owner
        self._field = field

    def _convert(self, value: Any) -> Any:
        if self._field.kind == "message":
            cls = self._field.message_class()
            if isinstance(value, dict):
                return cls(**value)
            if not isinstance(value, cls):
                raise TypeError(f"Field '{self._field.name}' holds {cls.__name__} messages, got {value!r}")
            return value
        return coerce(self._field, value)

    def add(self, **fields: Any) -> Any:
        """Appends a new message built from ``fields`` and returns it."""
        message = self._field.message_class()(**fields)
        self.append(message)
        return message

    def append(self, value: Any) -> None:
        super().append(self._convert(value))
        self._owner._touch()

    def extend(self, values: Iterable[Any]) -> None:
        super().extend(self._convert(v) for v in values)
        self._owner._touch()


# ---- messages -----------------------------------------------------------------------------------
class Message:
    """Base class of declared messages: subclasses set ``FIELDS`` to a tuple of :class:`Field`.

    Example:
        >>> class Pair(Message):
        ...     FIELDS = (Field("a", 1, "int64", oneof="v"), Field("b", 2, "string", oneof="v"))
        >>> p = Pair(a=0)
        >>> p.WhichOneof("v"), p.SerializeToString()
        ('a', b'\\x08\\x00')
        >>> p.b = "x"; p.WhichOneof("v"), p.a
        ('b', 0)
    """

    FIELDS: ClassVar[tuple[Field, ...]] = ()
    _by_name: ClassVar[dict[str, Field]]
    _by_number: ClassVar[dict[int, Field]]
    _in_number_order: ClassVar[tuple[Field, ...]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._by_name = {f.name: f for f in cls.FIELDS}
        cls._by_number = {f.number: f for f in cls.FIELDS}
        cls._in_number_order = tuple(sorted(cls.FIELDS, key=lambda f: f.number))

    def __init__(self, **fields: Any) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_present", set())
        object.__setattr__(self, "_unknown", [])
        object.__setattr__(self, "_parent", None)
        for name, value in fields.items():
            if value is not None:  # protobuf's rule: a None keyword leaves the field unset
                setattr(self, name, value)

    # ---- attribute access ---------------------------------------------------------------------
    def _field(self, name: str) -> Field:
        field = type(self)._by_name.get(name)
        if field is None:
            raise AttributeError(f"Message {type(self).__name__} has no field '{name}'")
        return field

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        field = self._field(name)
        values = self._values
        if name in values:
            return values[name]
        if field.repeated:
            values[name] = RepeatedField(self, field)
        elif field.kind == "map":
            values[name] = {}
        elif field.kind == "message":
            # A default sub-message is kept so that setting one of its fields marks it present here.
            child = field.message_class()()
            object.__setattr__(child, "_parent", (self, name))
            values[name] = child
        else:
            return DEFAULTS[field.kind]
        return values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        field = self._field(name)
        if field.repeated:
            container = RepeatedField(self, field)
            container.extend(value)
            self._values[name] = container
        elif field.kind == "map":
            self._values[name] = dict(value)
        elif field.kind == "message":
            cls = field.message_class()
            if isinstance(value, dict):
                value = cls(**value)
            if not isinstance(value, cls):
                raise TypeError(f"Field '{name}' of {type(self).__name__} holds a {cls.__name__}, got {value!r}")
            child = cls.FromString(value.SerializeToString())
            object.__setattr__(child, "_parent", (self, name))
            self._values[name] = child
        else:
            self._values[name] = coerce(field, value)
        self._mark_present(name)

    def _mark_present(self, name: str) -> None:
        group = type(self)._by_name[name].oneof
        if group is not None:
            for other in type(self).FIELDS:
                if other.oneof == group and other.name != name:
                    self._present.discard(other.name)
                    self._values.pop(other.name, None)
        self._present.add(name)
        self._touch()

    def _touch(self) -> None:
        """Records that this message changed: a default sub-message becomes present in its parent."""
        if self._parent is not None:
            parent, name = self._parent
            parent._mark_present(name)

    # ---- protobuf's message API -----------------------------------------------------------------
    def HasField(self, name: str) -> bool:
        """True when a singular field was set (or, for a sub-message, one of its fields was)."""
        field = self._field(name)
        if field.repeated or field.kind == "map":
            raise ValueError(f'Protocol message has no singular "{name}" field.')
        return name in self._present

    def WhichOneof(self, group: str) -> str | None:
        """The name of the field set in oneof ``group``, or None."""
        names = [f.name for f in type(self).FIELDS if f.oneof == group]
        if not names:
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        return next((n for n in names if n in self._present), None)

    def ClearField(self, name: str) -> None:
        """Resets one field to its default."""
        self._field(name)
        self._values.pop(name, None)
        self._present.discard(name)

    def Clear(self) -> None:
        """Resets every field."""
        self._values.clear()
        self._present.clear()
        self._unknown.clear()

    def CopyFrom(self, other: Message) -> None:
        """Makes this message equal to ``other``."""
        self.Clear()
        self.MergeFromString(other.SerializeToString())
        self._touch()

    def MergeFrom(self, other: Message) -> None:
        """Merges ``other`` in (protobuf's rule: set scalars overwrite, repeated fields append)."""
        self.MergeFromString(other.SerializeToString())

    def ParseFromString(self, data: bytes) -> int:
        """Replaces the contents with ``data``; returns the number of bytes read."""
        self.Clear()
        return self.MergeFromString(data)

    @classmethod
    def FromString(cls, data: bytes) -> Any:
        """A new message parsed from ``data``.

        Raises:
            ValueError: ``data`` is not a valid encoding of this message.
        """
        message = cls()
        message.MergeFromString(data)
        return message

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def ListFields(self) -> list[tuple[Field, Any]]:
        """(field, value) for each field that would be written, by field number."""
        out = []
        for field in type(self)._in_number_order:
            if self._is_set(field):
                out.append((field, getattr(self, field.name)))
        return out

    def _is_set(self, field: Field) -> bool:
        name = field.name
        if field.repeated or field.kind == "map":
            return bool(self._values.get(name))
        if field.kind == "message" or field.oneof is not None:
            return name in self._present
        return name in self._values and self._values[name] != DEFAULTS[field.kind]

    # ---- encoding -------------------------------------------------------------------------------
    def SerializeToString(self) -> bytes:
        """The wire encoding (fields by number, unknown fields last), as protobuf writes it."""
        out = bytearray()
        for field in type(self)._in_number_order:
            if self._is_set(field):
                out += _encode_field(field, self._values[field.name])
        for raw in self._unknown:
            out += raw
        return bytes(out)

    def MergeFromString(self, data: bytes | memoryview) -> int:
        """Reads fields from ``data`` into this message; returns the number of bytes read.

        Raises:
            ValueError: ``data`` is truncated or malformed.
        """
        view = memoryview(data)
        pos, end = 0, len(view)
        try:
            while pos < end:
                start = pos
                key, pos = decode_varint(view, pos)
                number, wire_type = key >> 3, key & 7
                field = type(self)._by_number.get(number)
                if field is None:
                    pos = skip_field(view, pos, wire_type)
                    self._unknown.append(bytes(view[start:pos]))
                else:
                    pos = self._read_field(field, view, pos, wire_type)
                if pos > end:
                    raise ValueError("field runs past the end of the data")
        except (struct.error, UnicodeDecodeError, IndexError) as e:
            raise ValueError(f"Error parsing {type(self).__name__}: {e}") from None
        except ValueError as e:
            raise ValueError(f"Error parsing {type(self).__name__}: {e}") from None
        return end

    def _read_field(self, field: Field, view: memoryview, pos: int, wire_type: int) -> int:
        name = field.name
        if field.kind in ("message", "map"):
            if wire_type != LENGTH:
                raise ValueError(f"field '{name}' has wire type {wire_type}, expected {LENGTH}")
            length, pos = decode_varint(view, pos)
            chunk = view[pos : pos + length]
            if len(chunk) != length:
                raise ValueError(f"field '{name}' is truncated")
            if field.kind == "map":
                entry = _map_entry(field).FromString(chunk)
                getattr(self, name)[entry.key] = entry.value
            elif field.repeated:
                getattr(self, name).append(field.message_class().FromString(chunk))
            else:
                getattr(self, name).MergeFromString(chunk)
                self._mark_present(name)
            return pos + length
        if field.repeated and wire_type == LENGTH and field.kind not in ("string", "bytes"):
            length, pos = decode_varint(view, pos)
            stop = pos + length
            container = getattr(self, name)
            element_type = WIRE_TYPE.get(field.kind, VARINT)
            while pos < stop:
                value, pos = decode_scalar(field.kind, view, pos, element_type)
                list.append(container, value)
            return pos
        value, pos = decode_scalar(field.kind, view, pos, wire_type)
        if field.repeated:
            list.append(getattr(self, name), value)
        else:
            self._values[name] = value
            self._mark_present(name)
        return pos

    # ---- comparison and text --------------------------------------------------------------------
    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other.SerializeToString() == self.SerializeToString()

    __hash__ = None  # type: ignore[assignment] - mutable, like protobuf messages

    def __str__(self) -> str:
        return "".join(self._text_lines(0))

    def __repr__(self) -> str:
        return str(self)

    def _text_lines(self, indent: int) -> Iterable[str]:
        pad = " " * indent
        for field, value in self.ListFields():
            if field.kind == "map":
                for key in sorted(value):
                    yield f'{pad}{field.name} {{\n{pad}  key: "{escape_text(key)}"\n{pad}  value {{\n'
                    yield from value[key]._text_lines(indent + 4)
                    yield f"{pad}  }}\n{pad}}}\n"
                continue
            for item in value if field.repeated else [value]:
                if field.kind == "message":
                    yield f"{pad}{field.name} {{\n"
                    yield from item._text_lines(indent + 2)
                    yield f"{pad}}}\n"
                else:
                    yield f"{pad}{field.name}: {text_scalar(field.kind, item, field.enum_names)}\n"


def _encode_field(field: Field, value: Any) -> bytes:
    number, kind = field.number, field.kind
    if kind == "map":
        entry_cls = _map_entry(field)
        key = field_key(number, LENGTH)
        out = bytearray()
        for k in sorted(value):
            body = entry_cls(key=k, value=value[k]).SerializeToString()
            out += key + encode_varint(len(body)) + body
        return bytes(out)
    if kind == "message":
        key = field_key(number, LENGTH)
        items = value if field.repeated else [value]
        out = bytearray()
        for item in items:
            body = item.SerializeToString()
            out += key + encode_varint(len(body)) + body
        return bytes(out)
    if field.repeated and kind not in ("string", "bytes"):
        body = b"".join(encode_scalar(kind, v) for v in value)
        return field_key(number, LENGTH) + encode_varint(len(body)) + body
    key = field_key(number, WIRE_TYPE.get(kind, VARINT))
    if field.repeated:
        return b"".join(key + encode_scalar(kind, v) for v in value)
    return key + encode_scalar(kind, value)


_MAP_ENTRIES: dict[Any, type[Message]] = {}


def _map_entry(field: Field) -> type[Message]:
    """The implicit ``{key = 1; value = 2}`` message a map field is written as."""
    entry = _MAP_ENTRIES.get(field.message)
    if entry is None:
        fields = (Field("key", 1, "string"), Field("value", 2, "message", message=field.message))
        entry = type(f"{field.name}Entry", (Message,), {"FIELDS": fields})
        _MAP_ENTRIES[field.message] = entry
    return entry


__all__ = ["Field", "Message", "RepeatedField", "decode_varint", "encode_varint"]
