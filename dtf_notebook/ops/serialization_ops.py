"""Tensors as ``TensorProto`` bytes: ``tf.serialize_tensor`` (``SerializeTensor``) and ``tf.parse_tensor``
(``ParseTensor``), byte-compatible with TF.

A tensor is written as TF's kernels write one (``Tensor::AsProtoTensorContent``): numbers as their raw
little-endian bytes in ``tensor_content``, strings in ``string_val``. Reading accepts any TensorProto TF accepts,
the typed ``*_val`` lists included, so bytes made by either library parse in the other.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     data = serialize_tensor(tf.constant([[1, 2]], tf.int64))
    ...     print(sess.run(parse_tensor(data, tf.int64)))
    [[1 2]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import scalar, unknown_shape
from dtf_notebook.framework.tensor_tools import make_ndarray
from dtf_notebook.lib.io.varint import read_varint
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import from_numpy, to_numpy

__all__ = ["parse_tensor", "serialize_tensor"]


def tensor_proto_bytes(value: Any, dtype: dtypes.DType, strings_in_content: bool = False) -> bytes:
    """The serialized ``TensorProto`` of a runtime value (a torch tensor or a numpy array of bytes), as TF writes it:
    numbers in ``tensor_content``; strings in ``string_val`` (``SerializeTensor``) or, with ``strings_in_content``,
    in ``tensor_content`` as TF's string list encoding (``SerializeSparse``).

    Example:
        >>> tensor_proto_bytes(np.array([1.5], np.float32), dtypes.float32).hex()
        '080112041202080122040000c03f'
    """
    from dtf_notebook.protos.graph_pb import TensorProto, TensorShapeProto

    array = np.asarray(value if isinstance(value, np.ndarray) else to_numpy(value))
    proto = TensorProto(
        dtype=dtype.as_datatype_enum,
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in array.shape]),
    )
    if dtype.is_string:
        items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in array.reshape(-1)]
        if not strings_in_content:
            proto.string_val.extend(items)
        elif items:  # TF's string list encoding: every length as a varint, then the bytes one after another
            proto.tensor_content = b"".join(_varint(len(v)) for v in items) + b"".join(items)
    elif array.size:
        proto.tensor_content = np.ascontiguousarray(array, dtype=dtype.np_dtype).tobytes()
    return proto.SerializeToString()


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def decode_string_list(content: bytes, count: int) -> np.ndarray:
    """The ``count`` strings of TF's string list encoding (see :func:`tensor_proto_bytes`), as an object array.

    Raises:
        ValueError: the bytes do not hold ``count`` strings.

    Example:
        >>> decode_string_list(b"\\x01\\x00a", 2)
        array([b'a', b''], dtype=object)
    """
    lengths, pos = [], 0
    for _ in range(count):
        try:
            n, pos = read_varint(content, pos)
        except ValueError:
            raise ValueError("string list ends inside a length") from None
        lengths.append(n)
    out = np.empty(count, dtype=object)
    for i, n in enumerate(lengths):
        if pos + n > len(content):
            raise ValueError("string list ends inside a string")
        out[i] = content[pos : pos + n]
        pos += n
    if pos != len(content):
        raise ValueError("string list has bytes left over")
    return out


def parse_tensor_proto(data: bytes, dtype: dtypes.DType, op: Operation | None = None) -> np.ndarray:
    """The numpy array held by serialized ``TensorProto`` bytes, which must hold ``dtype`` values.

    Raises:
        InvalidArgumentError: the bytes are no TensorProto, or hold another type.

    Example:
        >>> parse_tensor_proto(tensor_proto_bytes(np.array([7], np.int32), dtypes.int32), dtypes.int32)
        array([7], dtype=int32)
    """
    from google.protobuf.message import DecodeError

    from dtf_notebook.protos.graph_pb import TensorProto

    try:
        proto = TensorProto.FromString(bytes(data))
    except DecodeError:
        raise errors.InvalidArgumentError(None, op, "Could not parse `serialized` as TensorProto") from None
    if proto.dtype != dtype.as_datatype_enum:
        try:
            found = dtypes.as_dtype(proto.dtype).name
        except TypeError:
            found = str(proto.dtype)
        raise errors.InvalidArgumentError(
            None, op, f"Type mismatch between parsed tensor ({found}) and dtype ({dtype.name})"
        )
    try:
        if dtype.is_string and proto.tensor_content:
            shape = [d.size for d in proto.tensor_shape.dim]
            return decode_string_list(proto.tensor_content, int(np.prod(shape, dtype=np.int64))).reshape(shape)
        return make_ndarray(proto)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(None, op, f"Could not parse `serialized` as TensorProto: {e}") from None


def _serialize_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.inputs[0].dtype

    def run(value: Any) -> np.ndarray:
        return np.array(tensor_proto_bytes(value, dtype), dtype=object)

    return run


op_registry.register_op(
    "SerializeTensor",
    infer=lambda op: [(dtypes.string, scalar())],
    kernel=_serialize_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def _parse_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("out_type")
    device = ctx.device

    def run(serialized: Any) -> Any:
        if np.ndim(serialized) != 0:
            raise errors.InvalidArgumentError(
                None, op, f"Expected `serialized` to be a scalar, got shape: {list(np.shape(serialized))}"
            )
        array = parse_tensor_proto(np.asarray(serialized).item(), dtype, op)
        return array if dtype.is_string else from_numpy(array, device)

    return run


op_registry.register_op(
    "ParseTensor",
    infer=lambda op: [(op.get_attr("out_type"), unknown_shape())],
    kernel=_parse_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def serialize_tensor(tensor: Any, name: str | None = None) -> Tensor:
    """A scalar string holding ``tensor`` as a serialized ``TensorProto`` (readable by TF's ``tf.parse_tensor``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(len(sess.run(tf.serialize_tensor([1.0, 2.0]))))
        18
    """
    t = convert_to_tensor(tensor, name="tensor")
    return make_op("SerializeTensor", [t], {"T": t.dtype}, name=name or "SerializeTensor").outputs[0]


def parse_tensor(serialized: Any, out_type: Any, name: str | None = None) -> Tensor:
    """The tensor held by the serialized ``TensorProto`` scalar string ``serialized`` (its shape is known only when
    it runs).

    Raises:
        InvalidArgumentError: (at run time) the bytes are no TensorProto, or hold another type than ``out_type``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.parse_tensor(tf.serialize_tensor(["a", "b"]), tf.string)))
        [b'a' b'b']
    """
    s = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    dtype = dtypes.as_dtype(out_type)
    return make_op("ParseTensor", [s], {"out_type": dtype}, name=name or "ParseTensor").outputs[0]
