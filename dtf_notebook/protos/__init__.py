"""TF's protocol buffer messages, built at import from their descriptors (no generated code, no protoc).

Each ``.proto`` of TF's that we need is written here as a ``FileDescriptorProto`` in protobuf text
format, with TF's file name, package, message names and field numbers, so serialized bytes and text
format interoperate with real TF. The files go into a descriptor pool of this package's own: a
process may import real TF too, whose default pool holds the same message names.

Example:
    >>> from dtf_notebook.protos import example_pb
    >>> example_pb.Example.DESCRIPTOR.full_name
    'tensorflow.Example'
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.descriptor import FileDescriptor

#: The pool holding every message type of this package.
POOL = descriptor_pool.DescriptorPool()


def add_file(text: str) -> FileDescriptor:
    """Adds a ``FileDescriptorProto`` written in text format to :data:`POOL`; returns its file descriptor.

    Example:
        >>> f = add_file('name: "doc/point.proto" package: "doc" syntax: "proto3" message_type { name: "Point" '
        ...              'field { name: "x" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 } }')
        >>> message_class("doc.Point")(x=3).SerializeToString()
        b'\\x08\\x03'
    """
    proto = text_format.Parse(text, descriptor_pb2.FileDescriptorProto())
    return POOL.AddSerializedFile(proto.SerializeToString())


def message_class(full_name: str, module: str | None = None) -> type:
    """The message class of ``full_name`` (``"tensorflow.Example"``) in :data:`POOL`.

    Args:
        full_name: The message's package-qualified name.
        module: The module that exports the class: named as its ``__module__``, so that messages pickle.

    Example:
        >>> from dtf_notebook.protos import example_pb
        >>> message_class("tensorflow.Feature") is example_pb.Feature
        True
    """
    cls = message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))
    if module is not None:
        cls.__module__ = module
    return cls
