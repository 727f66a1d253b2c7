"""Numpy arrays to and from ``TensorProto`` (tensor summaries, graph constants).

Numbers are written as raw little-endian bytes in ``tensor_content`` and strings as ``string_val``,
as TF's ``Tensor::AsProtoTensorContent`` does. Reading also accepts the typed ``*_val`` lists
(one value stands for the whole tensor, as in ``tf.make_ndarray``).

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
from dtf_notebook.summary.messages import TensorProto, TensorShapeProto


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


_TYPED_VALUES = {
    dtypes.float32: "float_val",
    dtypes.float64: "double_val",
    dtypes.int64: "int64_val",
    dtypes.bool: "bool_val",
    dtypes.string: "string_val",
}


def make_ndarray(proto: TensorProto) -> np.ndarray:
    """The numpy array a ``TensorProto`` holds (``object`` array of bytes for strings).

    Raises:
        TypeError: the proto's dtype is not one this runtime knows.
        ValueError: the proto holds the wrong number of values for its shape.

    Example:
        >>> make_ndarray(TensorProto(dtype=1, tensor_shape=shape_proto([3]), float_val=[0.5]))
        array([0.5, 0.5, 0.5], dtype=float32)
    """
    try:
        dtype = dtypes.as_dtype(proto.dtype)
    except TypeError:
        raise TypeError(f"TensorProto has a dtype this runtime does not know: {proto.dtype}") from None
    shape = [d.size for d in proto.tensor_shape.dim]
    count = int(np.prod(shape, dtype=np.int64))
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype=dtype.np_dtype).reshape(shape).copy()
    field = _TYPED_VALUES.get(dtype, "half_val" if dtype in (dtypes.float16, dtypes.bfloat16) else "int_val")
    values = list(getattr(proto, field))
    if dtype in (dtypes.float16, dtypes.bfloat16):
        # Half values travel as their 16-bit patterns inside int32s.
        values = np.array(values, dtype=np.uint16).view(dtype.np_dtype)
    array = np.array(values, dtype=object if dtype.is_string else dtype.np_dtype)
    if array.size == count:
        return array.reshape(shape)
    if array.size == 0 and count:
        return np.zeros(shape, dtype=array.dtype) if not dtype.is_string else np.full(shape, b"", dtype=object)
    if array.size and array.size < count:
        # TF repeats the last value to fill the tensor.
        padded = np.concatenate([array, np.repeat(array[-1:], count - array.size)])
        return padded.reshape(shape)
    raise ValueError(f"TensorProto holds {array.size} values for a tensor of shape {shape}")


__all__ = ["make_ndarray", "make_tensor_proto", "shape_proto"]
