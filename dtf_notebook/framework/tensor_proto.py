"""Numpy arrays to and from ``TensorProto`` (tensor summaries, graph constants).

Numbers are written as raw little-endian bytes in ``tensor_content`` and strings as ``string_val``,
as TF's ``Tensor::AsProtoTensorContent`` does (what TF's summary kernels write). Reading is ``tf.make_ndarray``'s
(:func:`dtf_notebook.framework.tensor_tools.make_ndarray`), which also takes the typed ``*_val`` lists.

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
from dtf_notebook.framework.tensor_tools import make_ndarray
from dtf_notebook.protos.graph_pb import TensorProto, TensorShapeProto


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


__all__ = ["make_ndarray", "make_tensor_proto", "shape_proto"]
