"""Numpy arrays to and from ``TensorProto`` (tensor summaries, graph constants).

Numbers are written as raw little-endian bytes in ``tensor_content`` and strings as ``string_val``,
as TF's ``Tensor::AsProtoTensorContent`` does (what TF's summary kernels write). Reading is ``tf.make_ndarray``
(:func:`make_ndarray`, also in :mod:`dtf_notebook.framework.tensor_tools`), which also takes the typed ``*_val`` lists.

Example:
    >>> import numpy as np
    >>> proto = make_tensor_proto(np.array([[1, 2]], dtype=np.int32))
    >>> proto.dtype, [d.size for d in proto.tensor_shape.dim], len(proto.tensor_content)
    (3, [1, 2], 8)
    >>> make_ndarray(proto)
    array([[1, 2]], dtype=int32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.protos.graph_pb import TensorProto, TensorShapeProto

# The typed value list of a TensorProto that holds each dtype's values (int_val for the rest).
VALUE_FIELDS = {
    dtypes.float16: "half_val",
    dtypes.bfloat16: "half_val",
    dtypes.float32: "float_val",
    dtypes.float64: "double_val",
    dtypes.int64: "int64_val",
    dtypes.uint32: "uint32_val",
    dtypes.uint64: "uint64_val",
    dtypes.complex64: "scomplex_val",
    dtypes.complex128: "dcomplex_val",
    dtypes.bool: "bool_val",
    dtypes.string: "string_val",
}


def shape_proto(dims: Any) -> TensorShapeProto:
    """A ``TensorShapeProto`` for a list of sizes (None for unknown, -1 on the wire), or None for unknown rank.

    Example:
        >>> [d.size for d in shape_proto([2, None]).dim], shape_proto(None).unknown_rank
        ([2, -1], True)
    """
    if dims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else int(d)) for d in dims])


def make_tensor_proto(value: Any) -> TensorProto:
    """The ``TensorProto`` of an array-like value (strings as bytes in ``string_val``).

    Raises:
        TypeError: the value's element type has no TF dtype.

    Example:
        >>> make_tensor_proto(np.array([b"a", "b"], dtype=object)).string_val[:]
        [b'a', b'b']
    """
    array = np.asarray(value)
    dtype = dtypes.as_dtype(array.dtype)
    proto = TensorProto(dtype=dtype.as_datatype_enum, tensor_shape=shape_proto(array.shape))
    if dtype.is_string:
        proto.string_val.extend(v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in array.reshape(-1))
    else:
        # tensor_content is the host's little-endian memory layout (TF makes the same assumption).
        proto.tensor_content = np.ascontiguousarray(array, dtype=dtype.np_dtype).tobytes()
    return proto


def make_ndarray(tensor: Any) -> np.ndarray:
    """The numpy array a ``TensorProto`` holds (TF's or this package's; strings as an ``object`` array of bytes).

    Missing trailing values repeat the last one, as TF's readers do.

    Raises:
        TypeError: the proto's dtype has no numpy form here (resource, variant).

    Example:
        >>> proto = TensorProto(dtype=1, float_val=[2.0])
        >>> proto.tensor_shape.dim.add(size=3)
        size: 3
        <BLANKLINE>
        >>> make_ndarray(proto)
        array([2., 2., 2.], dtype=float32)
    """
    shape = [d.size for d in tensor.tensor_shape.dim]
    count = int(np.prod(shape, dtype=np.int64))
    try:
        dtype = dtypes.as_dtype(tensor.dtype)
    except TypeError:
        raise TypeError(f"Unsupported tensor type: {tensor.dtype}") from None
    if not dtype.is_numpy_compatible:
        raise TypeError(f"Unsupported tensor type: {tensor.dtype}")
    if tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content, dtype=dtype.np_dtype).copy().reshape(shape)
    if dtype.is_string:
        strings = list(tensor.string_val)
        strings.extend(strings[-1:] * (count - len(strings)) if strings else [b""] * count)
        return np.array(strings, dtype=object).reshape(shape)
    if dtype in (dtypes.float16, dtypes.bfloat16):
        values = np.array(list(tensor.half_val), dtype=np.uint16).view(dtype.np_dtype)
    elif dtype.is_complex:
        parts = np.array(list(getattr(tensor, VALUE_FIELDS[dtype])), dtype=dtype.real_dtype.np_dtype)
        values = (parts[0::2] + 1j * parts[1::2]).astype(dtype.np_dtype)
    elif dtype.is_quantized:
        values = np.array([(v,) for v in tensor.int_val], dtype=dtype.np_dtype)
    else:
        values = np.array(list(getattr(tensor, VALUE_FIELDS.get(dtype, "int_val"))), dtype=dtype.np_dtype)
    if values.size == 0:
        return np.zeros(shape, dtype.np_dtype)
    if values.size != count:
        values = np.pad(values, (0, count - values.size), "edge")
    return values.reshape(shape)


__all__ = ["make_ndarray", "make_tensor_proto", "shape_proto"]
