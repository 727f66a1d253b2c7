"""TF's ``.proto`` files written as compact Python tables and added to the package's descriptor pool.

A message is ``(name, fields[, nested])``; a field is ``(name, number, kind[, oneof])``. A kind is a scalar type
(``"int64"``, ``"fixed32"``, ``"string"``, ...), a message's full name (``"tensorflow.TensorShapeProto"``),
``"enum <full name>"`` or ``"map<key kind,value kind>"``, prefixed by ``"repeated "`` for a list or by
``"optional "`` for a proto3 ``optional`` field (one whose presence is kept, so ``HasField`` tells "unset" from
"set to 0"). ``nested`` holds nested messages and ``("enum", name, [(value name, number), ...])`` entries.

Example:
    >>> from dtf_notebook.protos import message_class
    >>> add_spec_file("doc/spec.proto", [], [("SpecPoint", [("x", 1, "int32"), ("y", 2, "optional double")])])
    >>> point = message_class("tensorflow.SpecPoint")(x=3)
    >>> point.SerializeToString(), point.HasField("y")
    (b'\\x08\\x03', False)
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FieldDescriptor

from dtf_notebook.protos import POOL

__all__ = ["add_spec_file"]

_SCALARS = {
    "int32": FieldDescriptor.TYPE_INT32,
    "int64": FieldDescriptor.TYPE_INT64,
    "uint32": FieldDescriptor.TYPE_UINT32,
    "uint64": FieldDescriptor.TYPE_UINT64,
    "sint32": FieldDescriptor.TYPE_SINT32,
    "sint64": FieldDescriptor.TYPE_SINT64,
    "fixed32": FieldDescriptor.TYPE_FIXED32,
    "fixed64": FieldDescriptor.TYPE_FIXED64,
    "float": FieldDescriptor.TYPE_FLOAT,
    "double": FieldDescriptor.TYPE_DOUBLE,
    "bool": FieldDescriptor.TYPE_BOOL,
    "string": FieldDescriptor.TYPE_STRING,
    "bytes": FieldDescriptor.TYPE_BYTES,
}

# A message: (name, [(field, number, kind[, oneof])], [nested messages or ("enum", name, values)]).
_Message = tuple


def _set_type(field: Any, kind: str) -> None:
    if kind in _SCALARS:
        field.type = _SCALARS[kind]
    elif kind.startswith("enum "):
        field.type, field.type_name = FieldDescriptor.TYPE_ENUM, "." + kind[5:]
    else:
        field.type, field.type_name = FieldDescriptor.TYPE_MESSAGE, "." + kind


def _add_message(container: Any, spec: _Message, scope: str) -> None:
    name, fields, *rest = spec
    message = container.add(name=name)
    full = f"{scope}.{name}"
    oneofs: list[str] = []
    optionals: list[Any] = []
    for field_spec in fields:
        field_name, number, kind = field_spec[:3]
        field = message.field.add(name=field_name, number=number, label=FieldDescriptor.LABEL_OPTIONAL)
        if kind.startswith("repeated "):
            field.label, kind = FieldDescriptor.LABEL_REPEATED, kind[9:]
        elif kind.startswith("optional "):
            field.proto3_optional, kind = True, kind[9:]
            optionals.append(field)
        if kind.startswith("map<"):
            key, value = kind[4:-1].split(",")
            entry = "".join(part.capitalize() for part in field_name.split("_")) + "Entry"
            _add_message(message.nested_type, (entry, [("key", 1, key), ("value", 2, value)]), full)
            message.nested_type[-1].options.map_entry = True
            field.label, kind = FieldDescriptor.LABEL_REPEATED, f"{full[1:]}.{entry}"
        _set_type(field, kind)
        if len(field_spec) > 3:
            if field_spec[3] not in oneofs:
                oneofs.append(field_spec[3])
                message.oneof_decl.add(name=field_spec[3])
            field.oneof_index = oneofs.index(field_spec[3])
    # protoc gives each proto3 optional field a synthetic oneof "_<name>", declared after the real oneofs.
    for field in optionals:
        field.oneof_index = len(message.oneof_decl)
        message.oneof_decl.add(name="_" + field.name)
    for nested in rest[0] if rest else ():
        if nested[0] == "enum":
            message.enum_type.add(name=nested[1], value=[{"name": n, "number": v} for n, v in nested[2]])
        else:
            _add_message(message.nested_type, nested, full)


def add_spec_file(
    name: str, dependencies: list[str], messages: list[_Message], enums: tuple = (), package: str = "tensorflow"
) -> None:
    """Adds one ``.proto`` file of package ``tensorflow`` (or ``package``), written as tables, to the package's pool.

    Args:
        name: TF's file name (``"tensorflow/core/framework/summary.proto"``).
        dependencies: The file names whose messages and enums the fields refer to.
        messages: The file's top-level messages, as the module docstring describes them.
        enums: The file's top-level enums: ``(name, [(value name, number), ...])``.
        package: The file's protobuf package (TF's error codes live in ``tensorflow.error``).

    Example:
        >>> from dtf_notebook.protos import message_class
        >>> add_spec_file("doc/tagged.proto", [], [("SpecTagged", [("tags", 1, "map<string,int64>")])])
        >>> message_class("tensorflow.SpecTagged")(tags={"a": 1}).tags["a"]
        1
    """
    proto = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    proto.dependency.extend(dependencies)
    for enum_name, values in enums:
        proto.enum_type.add(name=enum_name, value=[{"name": n, "number": v} for n, v in values])
    for spec in messages:
        _add_message(proto.message_type, spec, "." + package)
    POOL.AddSerializedFile(proto.SerializeToString())
