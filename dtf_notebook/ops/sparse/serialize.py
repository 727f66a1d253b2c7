"""Sparse tensors as strings: ``tf.serialize_sparse`` (``SerializeSparse``: one sparse tensor as 3 strings),
``tf.serialize_many_sparse`` (``SerializeManySparse``: each row of a batch as 3 strings) and
``tf.deserialize_many_sparse`` (``DeserializeManySparse``: a ``[N, 3]`` batch back into one sparse tensor with a
leading batch dimension).

Each string is a serialized ``TensorProto`` (indices, values, dense shape) written as TF writes them, so either
library reads the other's. The dense shape of a deserialized batch is ``N`` followed by the largest size of each
dimension among its rows; entries keep their order (rows in batch order), as TF's.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sp = tf.SparseTensor([[0, 1], [2, 0]], [1.5, 2.5], [3, 2])
    ...     rows = serialize_many_sparse(sp)
    ...     back = sess.run(deserialize_many_sparse(rows, tf.float32))
    >>> back.indices.tolist(), back.dense_shape.tolist()
    ([[0, 1], [2, 0]], [3, 2])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.serialization_ops import parse_tensor_proto, tensor_proto_bytes
from dtf_notebook.ops.sparse.common import as_sparse, check_parts, concat_values, host, invalid, parts, take
from dtf_notebook.runtime.values import from_numpy

__all__ = ["deserialize_many_sparse", "serialize_many_sparse", "serialize_sparse"]


def _out_type(out_type: Any) -> dtypes.DType:
    dtype = dtypes.as_dtype(out_type)
    if dtype is not dtypes.string:
        raise TypeError(f"out_type must be tf.string here (TF's variant form holds C++ objects), got {dtype.name}")
    return dtype


def _three(indices: np.ndarray, values: Any, shape: np.ndarray, dtype: dtypes.DType) -> list[bytes]:
    return [
        tensor_proto_bytes(indices.astype(np.int64), dtypes.int64),
        tensor_proto_bytes(values, dtype, strings_in_content=True),
        tensor_proto_bytes(shape.astype(np.int64), dtypes.int64),
    ]


def _serialize_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.inputs[1].dtype

    def run(indices: Any, values: Any, shape: Any) -> np.ndarray:
        ind, dims = host(indices), host(shape)
        check_parts(op, ind, len(values), dims)
        out = np.empty(3, dtype=object)
        out[:] = _three(ind, values, dims, dtype)
        return out

    return run


def _serialize_many_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.inputs[1].dtype

    def run(indices: Any, values: Any, shape: Any) -> np.ndarray:
        ind, dims = host(indices), host(shape)
        check_parts(op, ind, len(values), dims)
        if len(dims) < 2:
            raise invalid(op, f"Rank of input SparseTensor should be > 1, but saw rank: {len(dims)}")
        n = int(dims[0])
        if len(ind) and ((ind[:, 0] < 0) | (ind[:, 0] >= n)).any():
            raise invalid(op, f"Index of the first dimension out of range [0, {n})")
        out = np.empty((n, 3), dtype=object)
        for row in range(n):
            keep = np.nonzero(ind[:, 0] == row)[0] if len(ind) else np.zeros(0, np.int64)
            out[row] = _three(ind[keep, 1:], take(values, keep), dims[1:], dtype)
        return out

    return run


def _deserialize_many_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("dtype")
    device = ctx.device

    def run(serialized: Any) -> tuple[Any, Any, Any]:
        rows = np.asarray(serialized, dtype=object)
        if rows.ndim != 2 or rows.shape[1] != 3:
            raise invalid(op, f"Serialized sparse should be a matrix with 3 columns, got shape {list(rows.shape)}")
        if not len(rows):
            raise invalid(op, "Serialized sparse should have non-zero number of rows")
        pieces = []
        for i, (ind_s, val_s, shape_s) in enumerate(rows):
            ind = parse_tensor_proto(ind_s, dtypes.int64, op)
            val = parse_tensor_proto(val_s, dtype, op)
            dims = parse_tensor_proto(shape_s, dtypes.int64, op)
            if ind.ndim != 2 or val.ndim != 1 or dims.ndim != 1 or len(ind) != len(val) or ind.shape[1] != len(dims):
                raise invalid(op, f"Row {i} of serialized_sparse holds no valid sparse tensor")
            if pieces and len(dims) != len(pieces[0][2]):
                raise invalid(
                    op,
                    f"Inconsistent rank across SparseTensors: rank prior to SparseTensor[{i}] was: "
                    f"{len(pieces[0][2])} but rank of SparseTensor[{i}] is: {len(dims)}",
                )
            pieces.append((ind, val, dims))
        rank = len(pieces[0][2])
        indices = np.concatenate(
            [np.concatenate([np.full((len(ind), 1), i, np.int64), ind], 1) for i, (ind, _, _) in enumerate(pieces)]
        ).reshape(-1, rank + 1)
        largest = np.max(np.stack([dims for _, _, dims in pieces]), 0)
        shape = np.concatenate([[len(pieces)], largest]).astype(np.int64)
        values = [val if dtype.is_string else from_numpy(np.ascontiguousarray(val), device) for _, val, _ in pieces]
        joined = concat_values(values, dtype)
        return from_numpy(indices, device), joined, from_numpy(shape, device)

    return run


op_registry.register_op(
    "SerializeSparse",
    infer=lambda op: [(dtypes.string, TensorShape([3]))],
    kernel=_serialize_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)
op_registry.register_op(
    "SerializeManySparse",
    infer=lambda op: [(dtypes.string, TensorShape([None, 3]))],
    kernel=_serialize_many_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)
op_registry.register_op(
    "DeserializeManySparse",
    infer=lambda op: [
        (dtypes.int64, TensorShape([None, None])),
        (op.get_attr("dtype"), TensorShape([None])),
        (dtypes.int64, TensorShape([None])),
    ],
    kernel=_deserialize_many_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def serialize_sparse(sp_input: Any, name: str | None = None, out_type: Any = dtypes.string) -> Any:
    """A string vector of 3: the serialized indices, values and dense shape of ``sp_input``.

    Raises:
        TypeError: ``out_type`` is not ``tf.string`` (TF's variant form has no counterpart here).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.serialize_sparse(tf.SparseTensor([[0]], [1.0], [2])).shape.as_list()
        [3]
    """
    sp = as_sparse(sp_input)
    attrs = {"out_type": _out_type(out_type), "T": sp.dtype}
    return make_op("SerializeSparse", parts(sp), attrs, name=name or "SerializeSparse").outputs[0]


def serialize_many_sparse(sp_input: Any, name: str | None = None, out_type: Any = dtypes.string) -> Any:
    """A ``[N, 3]`` string matrix: row ``i`` serializes the rank ``R - 1`` sparse tensor ``sp_input[i]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.serialize_many_sparse(tf.SparseTensor([[1, 0]], [1.0], [2, 2]))).shape)
        (2, 3)
    """
    sp = as_sparse(sp_input)
    attrs = {"out_type": _out_type(out_type), "T": sp.dtype}
    return make_op("SerializeManySparse", parts(sp), attrs, name=name or "SerializeManySparse").outputs[0]


def deserialize_many_sparse(
    serialized_sparse: Any, dtype: Any, rank: int | None = None, name: str | None = None
) -> SparseTensor:
    """The sparse tensor of a ``[N, 3]`` string matrix of serialized sparse tensors of one rank (see module doc).

    Raises:
        InvalidArgumentError: (at run time) a row holds no sparse tensor of ``dtype``, or the ranks differ.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     one = tf.serialize_sparse(tf.SparseTensor([[3]], [7], [5]))
        ...     out = sess.run(tf.deserialize_many_sparse(tf.stack([one, one]), tf.int32))
        >>> out.indices.tolist(), out.dense_shape.tolist()
        ([[0, 3], [1, 3]], [2, 5])
    """
    s = convert_to_tensor(serialized_sparse, dtype=dtypes.string, name="serialized_sparse")
    attrs = {"dtype": dtypes.as_dtype(dtype)}
    indices, values, shape = make_op("DeserializeManySparse", [s], attrs, name=name or "DeserializeManySparse").outputs
    indices.set_shape([None, rank])
    shape.set_shape([rank])
    return SparseTensor(indices, values, shape)
