"""``tf.sparse_segment_sum``/``mean``/``sqrt_n``: segment reductions of rows picked by ``indices``
(``SparseSegmentSum``, ``SparseSegmentMean``, ``SparseSegmentSqrtN`` and their ``WithNumSegments`` forms) with TF's
gradients, dense or, with ``sparse_gradient=True``, as ``IndexedSlices`` of the picked rows.

Output row ``s`` reduces the rows ``data[indices[i]]`` with ``segment_ids[i] == s``; ``segment_ids`` are sorted, and
there are ``segment_ids[-1] + 1`` segments (or ``num_segments``). A segment without rows is 0.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ...     print(sess.run(sparse_segment_mean(data, [0, 2, 1], [0, 0, 1])))
    [[3. 4.]
     [3. 4.]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.framework.tensor_util import constant_value
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.sparse.common import host, invalid, like

__all__ = ["sparse_segment_mean", "sparse_segment_sqrt_n", "sparse_segment_sum"]

_INDEX = (dtypes.int32, dtypes.int64)


def _kernel(kind: str, with_num: bool) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        def run(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None) -> Any:
            idx, ids = host(indices).reshape(-1).astype(np.int64), host(segment_ids).reshape(-1).astype(np.int64)
            if len(idx) != len(ids):
                raise invalid(op, f"segment_ids and indices should have same size, got {len(ids)} and {len(idx)}")
            rows = data.shape[0]
            bad = np.nonzero((idx < 0) | (idx >= rows))[0]
            if len(bad):
                raise invalid(op, f"Bad: indices[{bad[0]}] == {idx[bad[0]]} out of range [0, {rows})")
            if len(ids) and ((np.diff(ids) < 0).any() or ids[0] < 0):
                raise invalid(op, "segment ids are not increasing")
            n = int(num_segments) if with_num else (int(ids[-1]) + 1 if len(ids) else 0)
            if with_num and len(ids) and ids[-1] >= n:
                raise invalid(op, f"segment ids must be < num_segments, got {ids[-1]} >= {n}")
            out = data.new_zeros((n, *data.shape[1:]))
            if len(idx):
                segment = like(ids, data)
                out.index_add_(0, segment, data[like(idx, data)])
                if kind != "Sum":
                    count = np.bincount(ids, minlength=n).astype(np.float64)
                    scale = np.where(count > 0, count if kind == "Mean" else np.sqrt(count), 1.0)
                    out = out / like(scale, data).to(data.dtype).reshape((n,) + (1,) * (data.dim() - 1))
            return out

        return run

    return factory


def _infer(with_num: bool) -> Callable[[Operation], list[tuple[dtypes.DType, TensorShape]]]:
    def infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
        data = op.inputs[0]
        if data.shape.ndims is None:
            return [(data.dtype, unknown_shape())]
        n = constant_value(op.inputs[3]) if with_num else None
        return [(data.dtype, TensorShape([None if n is None else int(n)] + data.shape.as_list()[1:]))]

    return infer


def _grad(kind: str) -> Callable[..., list[Any]]:
    def grad_fn(op: Operation, grad: Any) -> list[Any]:
        data, indices, segment_ids = op.inputs[:3]
        picked = array_ops.gather(grad, segment_ids)
        if kind != "Sum":
            ones = array_ops.ones_like(segment_ids, dtype=grad.dtype)
            count = math_ops.unsorted_segment_sum(ones, segment_ids, array_ops.shape(grad)[0])
            scale = math_ops.maximum(count if kind == "Mean" else math_ops.sqrt(count), 1.0)
            rank = array_ops.rank(grad)
            shaped = array_ops.reshape(
                array_ops.gather(scale, segment_ids),
                array_ops.concat([[-1], array_ops.ones(array_ops.expand_dims(rank - 1, 0), dtypes.int32)], 0),
            )
            picked = picked / shaped
        extra = [None] if len(op.inputs) == 4 else []
        rows = array_ops.shape(data)[0]
        if op.get_attr("sparse_gradient"):
            return [IndexedSlices(picked, indices, array_ops.shape(data)), None, None, *extra]
        return [math_ops.unsorted_segment_sum(picked, indices, rows), None, None, *extra]

    return grad_fn


for _kind in ("Sum", "Mean", "SqrtN"):
    op_registry.register_op(
        f"SparseSegment{_kind}", infer=_infer(False), kernel=_kernel(_kind, False), grad=_grad(_kind)
    )
    op_registry.register_op(
        f"SparseSegment{_kind}WithNumSegments", infer=_infer(True), kernel=_kernel(_kind, True), grad=_grad(_kind)
    )


def _build(kind: str, data: Any, indices: Any, segment_ids: Any, name: Any, num_segments: Any, sparse: bool) -> Tensor:
    op_type = f"SparseSegment{kind}" + ("WithNumSegments" if num_segments is not None else "")
    with name_scope(name, op_type, [data, indices, segment_ids]) as scope:
        d = convert_to_tensor(data, name="data")
        if kind != "Sum" and not d.dtype.is_floating:
            raise TypeError(
                f"Value passed to parameter 'data' has DataType {d.dtype.name} not in list of allowed "
                "values: bfloat16, float16, float32, float64"
            )
        idx = convert_to_tensor(indices, name="indices")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        for arg, t in (("indices", idx), ("segment_ids", ids)):
            if t.dtype not in _INDEX:
                raise TypeError(
                    f"Value passed to parameter '{arg}' has DataType {t.dtype.name} not in list of "
                    "allowed values: int32, int64"
                )
        inputs = [d, idx, ids]
        if num_segments is not None:
            inputs.append(convert_to_tensor(num_segments, name="num_segments"))
        attrs = {"T": d.dtype, "Tidx": idx.dtype, "Tsegmentids": ids.dtype, "sparse_gradient": bool(sparse)}
        return make_op(op_type, inputs, attrs, name=scope).outputs[0]


def sparse_segment_sum(
    data: Any,
    indices: Any,
    segment_ids: Any,
    name: str | None = None,
    num_segments: Any = None,
    sparse_gradient: bool = False,
) -> Tensor:
    """Row ``s`` is the sum of ``data[indices[i]]`` over the ``i`` with ``segment_ids[i] == s``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sparse_segment_sum([[1, 2], [3, 4]], [0, 1, 1], [0, 0, 2])))
        [[4 6]
         [0 0]
         [3 4]]
    """
    return _build("Sum", data, indices, segment_ids, name, num_segments, sparse_gradient)


def sparse_segment_mean(
    data: Any,
    indices: Any,
    segment_ids: Any,
    name: str | None = None,
    num_segments: Any = None,
    sparse_gradient: bool = False,
) -> Tensor:
    """Row ``s`` is the mean of ``data[indices[i]]`` over the ``i`` with ``segment_ids[i] == s`` (floats only).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sparse_segment_mean([[1.0], [3.0]], [0, 1], [0, 0], num_segments=2)))
        [[2.]
         [0.]]
    """
    return _build("Mean", data, indices, segment_ids, name, num_segments, sparse_gradient)


def sparse_segment_sqrt_n(
    data: Any,
    indices: Any,
    segment_ids: Any,
    name: str | None = None,
    num_segments: Any = None,
    sparse_gradient: bool = False,
) -> Tensor:
    """Row ``s`` is the sum of ``data[indices[i]]`` over the ``i`` with ``segment_ids[i] == s``, divided by the square
    root of their number (floats only).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sparse_segment_sqrt_n([[3.0], [1.0]], [0, 1, 1, 1], [0, 0, 0, 0])))
        [[3.]]
    """
    return _build("SqrtN", data, indices, segment_ids, name, num_segments, sparse_gradient)
