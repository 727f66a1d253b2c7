"""Segment reductions: ``SegmentSum/Mean/Max/Min/Prod`` (sorted ids, one segment per id up to the largest) and
``UnsortedSegmentMax/Min/Prod`` (any order, ``num_segments`` given), with TF's gradients; ``unsorted_segment_mean``
and ``unsorted_segment_sqrt_n`` are TF's composites of ``UnsortedSegmentSum``.

A segment no row falls into holds 0 for the sorted ops (1 for ``SegmentProd``), and the identity of the
reduction for the unsorted ones (the lowest value for max, the highest for min, 1 for prod). Rows with a
negative id are dropped by the unsorted ops.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(segment_max([1, 5, 2, 7], [0, 0, 2, 2])))
    [5 0 7]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import INDEX, REAL, array_ops, dense, fmt_shape, invalid_argument
from dtf_notebook.ops.math.binary import maximum, multiply, realdiv, truediv
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import equal, greater, greater_equal, logical_and
from dtf_notebook.ops.math.select_v2 import where_v2
from dtf_notebook.ops.math.sums import _segment_sum_infer as _unsorted_infer  # the shapes of UnsortedSegmentSum
from dtf_notebook.ops.math.sums import unsorted_segment_sum
from dtf_notebook.ops.math.unary import sqrt
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op

__all__ = [
    "segment_sum",
    "segment_mean",
    "segment_max",
    "segment_min",
    "segment_prod",
    "unsorted_segment_max",
    "unsorted_segment_min",
    "unsorted_segment_prod",
    "unsorted_segment_mean",
    "unsorted_segment_sqrt_n",
]

# torch.scatter_reduce's name of each reduction.
_REDUCE = {"Sum": "sum", "Mean": "mean", "Max": "amax", "Min": "amin", "Prod": "prod"}


def _empty_value(kind: str, dtype: torch.dtype, sorted_ids: bool) -> float | int:
    """What a segment no row falls into holds."""
    if kind == "Prod":
        return 1
    if sorted_ids or kind in ("Sum", "Mean"):
        return 0
    # The dtype's lowest/highest finite value, as TF's kernels use (not +-inf).
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.min if kind == "Max" else info.max


def _reduce_rows(kind: str, rows: torch.Tensor, ids: torch.Tensor, n: int, sorted_ids: bool) -> torch.Tensor:
    """Reduces ``rows`` (one per id) into ``n`` segments."""
    out = torch.full((n,) + tuple(rows.shape[1:]), _empty_value(kind, rows.dtype, sorted_ids), dtype=rows.dtype)
    out = out.to(rows.device)
    if ids.numel():
        index = ids.view((-1,) + (1,) * (rows.dim() - 1)).expand_as(rows)
        if kind == "Mean" and not rows.dtype.is_floating_point:
            # Integer means truncate toward zero, as TF's do; torch would floor them.
            total = torch.zeros_like(out).scatter_reduce_(0, index, rows, "sum")
            count = torch.zeros(n, dtype=rows.dtype, device=rows.device)
            count.index_add_(0, ids, torch.ones(ids.shape, dtype=rows.dtype, device=rows.device))
            count = count.view((-1,) + (1,) * (rows.dim() - 1)).clamp(min=1)
            return torch.div(total, count, rounding_mode="trunc")
        out.scatter_reduce_(0, index, rows, _REDUCE[kind], include_self=False)
    return out


# ---- sorted segment ops ---------------------------------------------------------------------------------------
def _segment_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    data, ids = op.inputs
    if ids.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {ids.shape.ndims} for 'segment_ids' of '{op.name}'")
    if data.shape.ndims == 0:
        raise ValueError(f"Shape must be at least rank 1 but is rank 0 for 'data' of '{op.name}'")
    if data.shape.ndims is not None and ids.shape.ndims is not None:
        if not data.shape[:1].is_compatible_with(ids.shape):
            raise ValueError(
                f"Dimensions must be equal, but are {data.shape[0].value} and {ids.shape[0].value} for '{op.name}' "
                f"(data {fmt_shape(data.shape)}, segment_ids {fmt_shape(ids.shape)})"
            )
    if data.shape.ndims is None:
        return [(data.dtype, unknown_shape())]
    # The number of segments is the largest id plus one: TF leaves it unknown while building, even for constant ids.
    return [(data.dtype, TensorShape([None] + data.shape.as_list()[1:]))]


def _segment_kernel(kind: str) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        def run(data: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
            if ids.dim() != 1 or data.dim() < 1 or ids.shape[0] != data.shape[0]:
                raise invalid_argument(
                    f"segment_ids should be the same size as dimension 0 of input, got segment_ids {list(ids.shape)} "
                    f"and data {list(data.shape)} in '{op.name}'"
                )
            ids = ids.long()
            if ids.numel():
                if int(ids.min()) < 0:
                    raise invalid_argument(f"segment ids must be >= 0 in '{op.name}'")
                if bool((ids[1:] < ids[:-1]).any()):
                    raise invalid_argument(f"segment ids are not increasing in '{op.name}'")
            n = int(ids[-1]) + 1 if ids.numel() else 0
            return _reduce_rows(kind, data, ids, n, sorted_ids=True)

        return run

    return factory


def _segment_sum_grad(op: Operation, grad: Any) -> list[Any]:
    return [array_ops().gather(dense(grad), op.inputs[1]), None]


def _segment_mean_grad(op: Operation, grad: Any) -> list[Any]:
    ao = array_ops()
    data, ids = op.inputs
    grad = dense(grad)
    ids_shape = ao.shape(ids)
    remaining = ao.ones(ao.expand_dims(ao.rank(data) - 1, 0), dtype=ids_shape.dtype)
    ones = ao.ones(ao.concat([ids_shape, remaining], 0), dtype=grad.dtype)
    scaled = realdiv(grad, segment_sum(ones, ids))
    return [ao.gather(scaled, ids), None]


def _segment_min_max_grad(op: Operation, grad: Any) -> list[Any]:
    ao = array_ops()
    data, ids = op.inputs
    grad = dense(grad)
    zeros = ao.zeros_like(data)
    # The gradient of a segment is split evenly between the entries that attain its extreme.
    is_selected = equal(data, ao.gather(op.outputs[0], ids))
    num_selected = segment_sum(cast(is_selected, grad.dtype), ids)
    gathered = ao.gather(realdiv(grad, num_selected), ids)
    return [where_v2(is_selected, gathered, zeros), None]


def _segment_prod_grad(op: Operation, grad: Any) -> list[Any]:
    ao = array_ops()
    data, ids = op.inputs
    grad = dense(grad)
    # Per segment: no zero -> prod / x; one zero -> the product of the others at the zero, 0 elsewhere;
    # more zeros -> 0 everywhere.
    is_zero = equal(data, 0)
    num_zeros = segment_sum(cast(is_zero, dtypes.int32), ids)
    grad = where_v2(greater(num_zeros, 1), ao.zeros_like(grad), grad)
    non_zero_data = where_v2(is_zero, ao.ones_like(data), data)
    non_zero_prod = segment_prod(non_zero_data, ids)
    prod_divided_by_el = realdiv(ao.gather(op.outputs[0], ids), non_zero_data)
    partial = where_v2(is_zero, ao.gather(non_zero_prod, ids), prod_divided_by_el)
    return [multiply(ao.gather(grad, ids), partial), None]


for _kind, _grad in (
    ("Sum", _segment_sum_grad),
    ("Mean", _segment_mean_grad),
    ("Max", _segment_min_max_grad),
    ("Min", _segment_min_max_grad),
    ("Prod", _segment_prod_grad),
):
    op_registry.register_op("Segment" + _kind, infer=_segment_infer, kernel=_segment_kernel(_kind), grad=_grad)


# ---- unsorted segment ops -------------------------------------------------------------------------------------
def _unsorted_kernel(kind: str) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        static = constant_value(op.inputs[2])
        fixed = int(static) if static is not None else None

        def run(data: torch.Tensor, ids: torch.Tensor, num: Any) -> torch.Tensor:
            n = fixed if fixed is not None else int(num)
            k = ids.dim()
            if tuple(data.shape[:k]) != tuple(ids.shape):
                raise invalid_argument(
                    f"data.shape = {list(data.shape)} does not start with segment_ids.shape = {list(ids.shape)}"
                )
            flat = ids.reshape(-1).long()
            rows = data.reshape((flat.numel(),) + tuple(data.shape[k:]))
            if flat.numel() and int(flat.max()) >= n:
                i = int(torch.nonzero(flat >= n)[0, 0])
                raise invalid_argument(f"segment_ids[{i}] = {int(flat[i])} is out of range [0, {n})")
            keep = flat >= 0  # rows with a negative id are dropped
            if not bool(keep.all()):
                flat, rows = flat[keep], rows[keep]
            return _reduce_rows(kind, rows, flat, n, sorted_ids=False)

        return run

    return factory


def _gather_drop_negatives(
    params: Tensor, ids: Tensor, zero_clipped: Tensor | None = None, is_positive: Tensor | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """TF's helper: ``params`` gathered at ``ids``, with zeros for rows whose id is negative."""
    ao = array_ops()
    if zero_clipped is None:
        zero_clipped = maximum(ids, ao.zeros_like(ids))
    gathered = ao.gather(params, zero_clipped)
    if is_positive is None:
        is_positive = greater_equal(ids, 0)
        positive_shape = ao.shape(is_positive)
        broadcastable = ao.concat(
            [positive_shape, ao.ones(ao.stack([ao.rank(gathered) - ao.rank(is_positive)]), dtype=positive_shape.dtype)],
            axis=0,
        )
        is_positive = logical_and(ao.reshape(is_positive, broadcastable), ao.ones_like(gathered, dtype=dtypes.bool))
    return where_v2(is_positive, gathered, ao.zeros_like(gathered)), zero_clipped, is_positive


def _unsorted_min_max_grad(op: Operation, grad: Any) -> list[Any]:
    ao = array_ops()
    data, ids, num = op.inputs
    grad = dense(grad)
    gathered_outputs, zero_clipped, is_positive = _gather_drop_negatives(op.outputs[0], ids)
    is_selected = logical_and(equal(data, gathered_outputs), is_positive)
    num_selected = unsorted_segment_sum(cast(is_selected, grad.dtype), ids, num)
    gathered, _, _ = _gather_drop_negatives(realdiv(grad, num_selected), ids, zero_clipped, is_positive)
    return [where_v2(is_selected, gathered, ao.zeros_like(gathered)), None, None]


def _unsorted_prod_grad(op: Operation, grad: Any) -> list[Any]:
    ao = array_ops()
    data, ids, num = op.inputs
    grad = dense(grad)
    is_zero = equal(data, 0)
    num_zeros = unsorted_segment_sum(cast(is_zero, dtypes.int32), ids, num)
    grad = where_v2(greater(num_zeros, 1), ao.zeros_like(grad), grad)
    non_zero_data = where_v2(is_zero, ao.ones_like(data), data)
    non_zero_prod = unsorted_segment_prod(non_zero_data, ids, num)
    zero_clipped = maximum(ids, ao.zeros_like(ids))
    gathered_prod = ao.gather(op.outputs[0], zero_clipped)
    gathered_non_zero_prod = ao.gather(non_zero_prod, zero_clipped)
    prod_divided_by_el = realdiv(gathered_prod, data)  # may hold NaN/inf where data is 0; not selected there
    partial = where_v2(is_zero, gathered_non_zero_prod, prod_divided_by_el)
    gathered_grad = _gather_drop_negatives(grad, ids, zero_clipped)[0]
    return [multiply(gathered_grad, partial), None, None]


for _kind, _grad in (("Max", _unsorted_min_max_grad), ("Min", _unsorted_min_max_grad), ("Prod", _unsorted_prod_grad)):
    op_registry.register_op(
        "UnsortedSegment" + _kind, infer=_unsorted_infer, kernel=_unsorted_kernel(_kind), grad=_grad
    )


# ---- builders -------------------------------------------------------------------------------------------------
def _segment_op(op_type: str, data: Any, segment_ids: Any, name: str | None) -> Tensor:
    with name_scope(name, op_type, [data, segment_ids]) as scope:
        data = convert_to_tensor(data, name="data")
        check_dtype(data, REAL, op_type, "data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        check_dtype(ids, INDEX, op_type, "segment_ids")
        return make_op(op_type, [data, ids], name=scope).outputs[0]


def _unsorted_op(op_type: str, data: Any, segment_ids: Any, num_segments: Any, name: str | None) -> Tensor:
    with name_scope(name, op_type, [data, segment_ids, num_segments]) as scope:
        data = convert_to_tensor(data, name="data")
        check_dtype(data, REAL, op_type, "data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        check_dtype(ids, INDEX, op_type, "segment_ids")
        num = convert_to_tensor(num_segments, name="num_segments")
        check_dtype(num, INDEX, op_type, "num_segments")
        return make_op(op_type, [data, ids, num], name=scope).outputs[0]


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the sum of the rows of ``data`` whose id is ``i``; ``segment_ids`` is sorted, one id per row.

    Raises:
        InvalidArgumentError: (at run time) the ids are not sorted, are negative, or not one per row.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.segment_sum([[1, 2], [3, 4], [5, 6]], [0, 0, 1])))
        [[4 6]
         [5 6]]
    """
    return _segment_op("SegmentSum", data, segment_ids, name)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the mean of the rows whose id is ``i`` (0 for an empty segment); ids sorted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.segment_mean([1.0, 2.0, 6.0], [0, 0, 2])))
        [1.5 0.  6. ]
    """
    return _segment_op("SegmentMean", data, segment_ids, name)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the maximum of the rows whose id is ``i`` (0 for an empty segment); ids sorted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.segment_max([1, 5, 2], [0, 0, 1])))
        [5 2]
    """
    return _segment_op("SegmentMax", data, segment_ids, name)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the minimum of the rows whose id is ``i`` (0 for an empty segment); ids sorted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.segment_min([1, 5, 2], [0, 0, 1])))
        [1 2]
    """
    return _segment_op("SegmentMin", data, segment_ids, name)


def segment_prod(data: Any, segment_ids: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the product of the rows whose id is ``i`` (1 for an empty segment); ids sorted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.segment_prod([2, 5, 3], [0, 0, 2])))
        [10  1  3]
    """
    return _segment_op("SegmentProd", data, segment_ids, name)


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the maximum of the rows whose id is ``i`` (the dtype's lowest value if none); ids in any order,
    negative ids dropped.

    Raises:
        InvalidArgumentError: (at run time) an id is ``>= num_segments``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_max([1, 5, 2], [1, -1, 1], 3)))
        [-2147483648           2 -2147483648]
    """
    return _unsorted_op("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the minimum of the rows whose id is ``i`` (the dtype's highest value if none).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_min([4, 5, 2], [1, 0, 1], 2)))
        [5 2]
    """
    return _unsorted_op("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the product of the rows whose id is ``i`` (1 if none).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_prod([4, 5, 2], [1, 0, 1], 3)))
        [5 8 1]
    """
    return _unsorted_op("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def _unsorted_segment_n(data: Tensor, segment_ids: Tensor, num_segments: Any) -> Tensor:
    """The number of rows in each segment (at least 1), shaped to broadcast against the segment sums."""
    ao = array_ops()
    num_segments = convert_to_tensor(num_segments)
    ones_tensor = ao.ones(ao.shape(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(ones_tensor, segment_ids, num_segments)
    if data.shape.ndims is not None and segment_ids.shape.ndims is not None:
        # Known ranks: a constant tail keeps the static shape (TF folds the same constant while inferring shapes).
        trailing: Any = convert_to_tensor([1] * (data.shape.ndims - segment_ids.shape.ndims), dtype=num_segments.dtype)
    else:
        trailing = ao.ones(ao.stack([ao.rank(data) - ao.rank(segment_ids)]), dtype=num_segments.dtype)
    n = ao.reshape(n, ao.concat([ao.stack([num_segments]), trailing], axis=0))
    return maximum(n, 1)


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the mean of the rows whose id is ``i`` (0 if none): TF's composite of ``unsorted_segment_sum``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_mean([1.0, 2.0, 6.0], [1, 0, 1], 3)))
        [2.  3.5 0. ]
    """
    with name_scope(name, "UnsortedSegmentMean"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        summed = unsorted_segment_sum(data, segment_ids, num_segments)
        return truediv(summed, n)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` is the sum of the rows whose id is ``i`` divided by the square root of their number.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_sqrt_n([1.0, 3.0, 6.0], [1, 0, 1], 2)))
        [3.        4.9497476]
    """
    with name_scope(name, "UnsortedSegmentSqrtN"):
        data = convert_to_tensor(data)
        segment_ids = convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        summed = unsorted_segment_sum(data, segment_ids, num_segments)
        return truediv(summed, sqrt(n))
