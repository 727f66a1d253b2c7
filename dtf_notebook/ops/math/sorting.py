"""Ordering ops: ``TopKV2`` (``tf.nn.top_k``), ``InTopKV2`` (``tf.nn.in_top_k``), ``LowerBound``/``UpperBound``
(``tf.searchsorted``) and ``DenseBincount`` (``tf.math.bincount``), with TF's composites ``sort``, ``argsort``,
``approx_max_k`` and ``approx_min_k`` built on ``top_k`` as TF builds them.

``top_k`` breaks ties by index (the lower index first), so ``sort`` and ``argsort`` are stable.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     values, indices = top_k([[1.0, 3.0, 2.0]], k=2)
    ...     print(sess.run([values, indices]))
    [array([[3., 2.]], dtype=float32), array([[1, 2]], dtype=int32)]
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math._common import INDEX, REAL, array_ops, dense, fmt_shape, invalid_argument
from dtf_notebook.ops.math.binary import add, maximum, minimum, multiply, subtract
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import greater
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.reduce import reduce_max, reduce_prod
from dtf_notebook.ops.math.unary import negative
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op
from dtf_notebook.runtime.values import torch_dtype

__all__ = ["argsort", "sort", "searchsorted", "bincount"]


# ---- TopKV2 ---------------------------------------------------------------------------------------------------
def _static_k(op: Operation) -> int | None:
    """``k`` when known while building, including ``tf.shape(x)[i]`` of a known dimension (as sort passes it)."""
    from dtf_notebook.ops.array.static_values import const_ints, scalar_int

    k = op.inputs[1]
    value = scalar_int(k)
    if value is not None:
        return value
    src = k.op
    if src.type == "StridedSlice" and src.get_attr("shrink_axis_mask") == 1:
        whole, begin = const_ints(src.inputs[0]), const_ints(src.inputs[1])
        if whole is not None and begin is not None and len(begin) == 1 and -len(whole) <= begin[0] < len(whole):
            return whole[begin[0]]
    return None


def _top_k_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, k_t = op.inputs
    index_type = op.get_attr("index_type")
    if k_t.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {k_t.shape.ndims} for 'k' of TopKV2 '{op.name}'")
    k = _static_k(op)
    if k is not None and k < 0:
        raise ValueError(f"Need k >= 0, got {k} for TopKV2 '{op.name}'")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape()), (index_type, unknown_shape())]
    if x.shape.ndims == 0:
        raise ValueError(f"Shape must be at least rank 1 but is rank 0 for 'input' of TopKV2 '{op.name}'")
    last = x.shape[-1].value
    if k is not None and last is not None and last < k:
        raise ValueError(f"input must have at least k columns. Had {last}, needed {k} for TopKV2 '{op.name}'")
    shape = TensorShape(x.shape.as_list()[:-1] + [k])
    return [(x.dtype, shape), (index_type, shape)]


def _top_k_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    index_type = torch_dtype(op.get_attr("index_type"))
    static_k = _static_k(op)

    def run(x: torch.Tensor, k_value: Any) -> tuple[torch.Tensor, torch.Tensor]:
        k = static_k if static_k is not None else int(k_value)
        if x.dim() < 1:
            raise invalid_argument("input must be >= 1-D, got shape []")
        if k < 0 or k > x.shape[-1]:
            raise invalid_argument(f"input must have at least k columns. Had {x.shape[-1]}, needed {k}")
        # A stable descending sort puts the lower index first among equal values, as TF's kernel does.
        values, indices = torch.sort(x, dim=-1, descending=True, stable=True)
        return values[..., :k].contiguous(), indices[..., :k].to(index_type)

    return run


def _top_k_grad(op: Operation, grad: Any, _: Any = None) -> list[Any]:
    from dtf_notebook.ops.array.scatter_nd import scatter_nd

    ao = array_ops()
    grad = dense(grad)
    in_shape = ao.shape(op.inputs[0])
    ind_shape = ao.shape(op.outputs[1])
    # Flat positions of the selected entries in the input, made from the indices row by row.
    ind_lastdim = ao.gather(cast(ind_shape, dtypes.int64), ao.size(ind_shape) - 1)
    ind_2d = ao.reshape(op.outputs[1], ao.stack([constant(-1, dtype=dtypes.int64), ind_lastdim]))
    in_lastdim = ao.gather(cast(in_shape, dtypes.int64), ao.size(in_shape) - 1)
    outerdim = ao.shape(ind_2d)[0]
    offsets = math_range(0, multiply(cast(outerdim, dtypes.int64), in_lastdim), in_lastdim)
    ind = ao.reshape(add(ind_2d, cast(ao.expand_dims(offsets, -1), op.outputs[1].dtype)), [-1])
    flat = scatter_nd(ao.expand_dims(ind, -1), ao.reshape(grad, [-1]), ao.stack([reduce_prod(in_shape)]))
    return [ao.reshape(flat, in_shape), None]


op_registry.register_op("TopKV2", infer=_top_k_infer, kernel=_top_k_kernel, grad=_top_k_grad)


def top_k(
    input: Any,  # noqa: A002 - TF's name
    k: Any = 1,
    sorted: bool = True,  # noqa: A002 - TF's name
    index_type: Any = dtypes.int32,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest entries of the last axis and their indices (ties: the lower index first).

    Returns:
        ``(values, indices)``, both of shape ``input.shape[:-1] + [k]``.

    Raises:
        ValueError: ``k`` is negative or larger than the last axis (when known while building).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.top_k([4, 1, 4, 7], k=3).indices))
        [3 0 2]
    """
    with name_scope(name, "TopKV2", [input, k]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype(x, REAL, "TopKV2", "input")
        k_t = convert_to_tensor(k, dtype=None if isinstance(k, Tensor) else dtypes.int32, name="k")
        check_dtype(k_t, (dtypes.int16, dtypes.int32, dtypes.int64), "TopKV2", "k")
        index_type = dtypes.as_dtype(index_type)
        attrs = {"sorted": bool(sorted), "index_type": index_type}
        values, indices = make_op("TopKV2", [x, k_t], attrs, name=scope).outputs
        return TopKResult(values, indices)


#: ``top_k``'s result: ``(values, indices)``, also readable by name (TF's named tuple).
TopKResult = collections.namedtuple("TopKV2", ["values", "indices"])


# ---- InTopKV2 -------------------------------------------------------------------------------------------------
def _in_top_k_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    predictions, targets, _ = op.inputs
    if predictions.shape.ndims not in (None, 2):
        raise ValueError(f"Shape must be rank 2 but is rank {predictions.shape.ndims} for 'predictions' of '{op.name}'")
    if targets.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {targets.shape.ndims} for 'targets' of '{op.name}'")
    batch = predictions.shape[:1] if predictions.shape.ndims is not None else unknown_shape(1)
    try:
        shape = batch.merge_with(targets.shape.with_rank(1) if targets.shape.ndims is not None else unknown_shape(1))
    except ValueError:
        raise ValueError(
            f"Dimensions must be equal, but are {fmt_shape(batch)} and {fmt_shape(targets.shape)} for '{op.name}'"
        ) from None
    return [(dtypes.bool, shape)]


def _in_top_k_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(predictions: torch.Tensor, targets: torch.Tensor, k_value: Any) -> torch.Tensor:
        k = int(k_value)
        rows, classes = predictions.shape
        if targets.shape[0] != rows:
            raise invalid_argument(
                f"First dimension of predictions {rows} must match length of targets {targets.shape[0]}"
            )
        t = targets.long()
        valid = (t >= 0) & (t < classes)
        target_pred = predictions.gather(1, t.clamp(0, max(classes - 1, 0)).unsqueeze(1))
        # In the top k when fewer than k classes score strictly higher (ties all count); a row holding a non-finite
        # score, or an out-of-range target, is never in it (TF's kernel cannot say).
        higher = (predictions > target_pred).sum(1)
        return valid & torch.isfinite(predictions).all(1) & (higher < k)

    return run


op_registry.register_op("InTopKV2", infer=_in_top_k_infer, kernel=_in_top_k_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


def in_top_k(predictions: Any, targets: Any, k: Any, name: str | None = None) -> Tensor:
    """Whether each row's ``targets`` class is among the ``k`` highest ``predictions`` of that row (ties count).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.in_top_k([[0.1, 0.8, 0.1], [0.5, 0.2, 0.3]], [1, 2], 1)))
        [ True False]
    """
    with name_scope(name, "in_top_k"):
        p = convert_to_tensor(predictions, name="predictions")
        check_dtype(p, (dtypes.float32,), "InTopKV2", "predictions")
        t = convert_to_tensor(targets, name="targets")
        check_dtype(t, INDEX, "InTopKV2", "targets")
        k_t = convert_to_tensor(k, dtype=t.dtype, name="k")
        return make_op("InTopKV2", [p, t, k_t], name="InTopKV2").outputs[0]


# ---- sort and argsort: top_k on (transposed, negated) values, as TF does ------------------------------------
def _descending_sort(values: Tensor, axis: int, return_argsort: bool) -> Tensor:
    ao = array_ops()
    k = ao.shape(values)[axis]
    static_rank = values.shape.ndims
    transposition = None
    if not (axis == -1 or (static_rank is not None and axis + 1 == static_rank)):
        if static_rank is None:
            raise ValueError(f"sort along axis {axis} needs a tensor of known rank, got {values}")
        if axis < 0:
            axis += static_rank
        perm = np.r_[np.arange(axis), [static_rank - 1], np.arange(axis + 1, static_rank - 1), [axis]]
        transposition = constant(perm.astype(np.int32), name="transposition")
        values = ao.transpose(values, transposition)
    sorted_values, indices = top_k(values, k)
    result = indices if return_argsort else sorted_values
    if transposition is not None:
        result = ao.transpose(result, transposition)  # swapping two axes is its own inverse
    return result


def _ascending_sort(values: Tensor, axis: int, return_argsort: bool) -> Tensor:
    dtype = values.dtype
    if dtype.is_unsigned:
        offset = constant(dtype.max, dtype=dtype)
        out = _descending_sort(subtract(offset, values), axis, return_argsort)
        return out if return_argsort else subtract(offset, out)
    if dtype.is_integer:
        # -x - 1 maps the lowest value to the highest and keeps the order of equal values.
        out = _descending_sort(subtract(negative(values), 1), axis, return_argsort)
        return out if return_argsort else subtract(negative(out), 1)
    out = _descending_sort(negative(values), axis, return_argsort)
    return out if return_argsort else negative(out)


def _sort_or_argsort(values: Any, axis: Any, direction: str, return_argsort: bool) -> Tensor:
    impl = {"ASCENDING": _ascending_sort, "DESCENDING": _descending_sort}
    if direction not in impl:
        raise ValueError(
            f"Argument `direction` should be one of ASCENDING, DESCENDING. Received: direction={direction}"
        )
    axis_t = convert_to_tensor(axis, name="axis")
    axis_static = constant_value(axis_t)
    if axis_t.shape.ndims not in (None, 0) or axis_static is None:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    values = convert_to_tensor(values, name="values")
    return impl[direction](values, int(axis_static), return_argsort)


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING", name: str | None = None) -> Tensor:
    """``values`` sorted along ``axis`` (``"ASCENDING"`` or ``"DESCENDING"``).

    Raises:
        ValueError: ``direction`` is not one of the two, or ``axis`` is not a constant scalar.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sort([[3, 1, 2], [0, 5, 4]], axis=0, direction="DESCENDING")))
        [[3 5 4]
         [0 1 2]]
    """
    with name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(
    values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False, name: str | None = None
) -> Tensor:
    """The int32 indices that sort ``values`` along ``axis`` (always stable: equal values keep their order).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.argsort([3.0, 1.0, 2.0, 1.0])))
        [1 3 2 0]
    """
    with name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)


def _approx_k(operand: Any, k: int, reduction_dimension: int, largest: bool) -> tuple[Tensor, Tensor]:
    operand = convert_to_tensor(operand, name="operand")
    axis = int(reduction_dimension)
    k = int(k)
    if k < 0:
        raise ValueError(f"Attr 'k' of 'ApproxTopK' Op passed {k} less than minimum 0.")
    if k == 0:  # TF 2.21 builds this op and fails when it runs; refused here when built
        raise ValueError("ApproxTopK needs k >= 1, got k = 0")
    ndims = operand.shape.ndims
    dim = operand.shape[axis].value if ndims is not None and -ndims <= axis < ndims else None
    if dim is not None and dim < k:
        raise ValueError(f"input must have last dimension >= k = {k} but was {dim}")
    if largest:
        values, indices = _descending_sort(operand, axis, False), _descending_sort(operand, axis, True)
    else:
        values, indices = _ascending_sort(operand, axis, False), _ascending_sort(operand, axis, True)
    ao = array_ops()
    return ao.gather(values, math_range(k), axis=axis), ao.gather(indices, math_range(k), axis=axis)


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` largest values along ``reduction_dimension`` and their indices; computed exactly (recall 1), which
    satisfies any ``recall_target``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.approx_max_k([[1.0, 9.0, 5.0]], 2)))
        (array([[9., 5.]], dtype=float32), array([[1, 2]], dtype=int32))
    """
    with name_scope(name, "approx_max_k"):
        return _approx_k(operand, k, reduction_dimension, largest=True)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (computed exactly).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.approx_min_k([[1.0, 9.0, 5.0]], 2)))
        (array([[1., 5.]], dtype=float32), array([[0, 2]], dtype=int32))
    """
    with name_scope(name, "approx_min_k"):
        return _approx_k(operand, k, reduction_dimension, largest=False)


# ---- LowerBound / UpperBound ----------------------------------------------------------------------------------
def _bound_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    return [(op.get_attr("out_type"), op.inputs[1].shape)]


def _bound_kernel(right: bool) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        out_int32 = op.get_attr("out_type") is dtypes.int32

        def run(sorted_inputs: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
            if sorted_inputs.shape[0] != values.shape[0]:
                raise invalid_argument(
                    f"Leading dim_size of both tensors must match, got {sorted_inputs.shape[0]} and {values.shape[0]}"
                )
            return torch.searchsorted(sorted_inputs.contiguous(), values.contiguous(), right=right, out_int32=out_int32)

        return run

    return factory


for _type, _right in (("LowerBound", False), ("UpperBound", True)):
    op_registry.register_op(
        _type, infer=_bound_infer, kernel=_bound_kernel(_right), grad=op_registry.NOT_DIFFERENTIABLE
    )


def searchsorted(
    sorted_sequence: Any, values: Any, side: str = "left", out_type: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """For each of ``values``, its insertion index in the innermost rows of ``sorted_sequence`` (which share
    ``values``' leading dimensions); ``side="left"`` gives the first such index, ``"right"`` the last.

    Raises:
        ValueError: ``side`` is neither ``"left"`` nor ``"right"``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.searchsorted([1.0, 2.0, 2.0, 5.0], [2.0, 6.0], side="right")))
        [3 4]
    """
    if side not in ("left", "right"):
        raise ValueError(f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'.")
    ao = array_ops()
    sorted_sequence = convert_to_tensor(sorted_sequence, name="sorted_sequence")
    values = convert_to_tensor(values, dtype=sorted_sequence.dtype, name="values")
    sequence_size = ao.shape(sorted_sequence)[-1]
    values_size = ao.shape(values)[-1]
    sorted_2d = ao.reshape(sorted_sequence, ao.stack([-1, sequence_size]))
    values_2d = ao.reshape(values, ao.stack([-1, values_size]))
    op_type = "UpperBound" if side == "right" else "LowerBound"
    attrs = {"out_type": dtypes.as_dtype(out_type)}
    output = make_op(op_type, [sorted_2d, values_2d], attrs, name=name or op_type).outputs[0]
    return ao.reshape(output, ao.shape(values))


# ---- DenseBincount --------------------------------------------------------------------------------------------
def _bincount_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    arr, size, weights = op.inputs
    value = constant_value(size)
    n = int(value) if value is not None else None
    if arr.shape.ndims == 2:
        return [(weights.dtype, TensorShape([arr.shape[0].value, n]))]
    return [(weights.dtype, TensorShape([n]))]


def _bincount_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    binary = op.get_attr("binary_output")
    out_dtype = torch_dtype(op.inputs[2].dtype)

    def run(arr: torch.Tensor, size: Any, weights: torch.Tensor) -> torch.Tensor:
        n = int(size)
        if n < 0:
            raise invalid_argument(f"size ({n}) must be non-negative")
        if arr.numel() and int(arr.min()) < 0:
            raise invalid_argument("Input arr must be non-negative!")
        rows = arr.reshape(-1, arr.shape[-1]) if arr.dim() == 2 else arr.reshape(1, -1)
        if weights.numel():
            w = weights.reshape(rows.shape)
        else:
            w = torch.ones(rows.shape, dtype=out_dtype, device=arr.device)
        keep = rows < n  # values at or past the size are skipped
        w = torch.where(keep, w.to(out_dtype), torch.zeros((), dtype=out_dtype, device=arr.device))
        index = torch.where(keep, rows, torch.zeros((), dtype=rows.dtype, device=arr.device)).long()
        out = torch.zeros((rows.shape[0], n), dtype=out_dtype, device=arr.device)
        if n:
            out.scatter_add_(1, index, w)
        if binary:
            counts = torch.zeros((rows.shape[0], n), dtype=torch.int64, device=arr.device)
            if n:
                counts.scatter_add_(1, index, keep.long())
            out = (counts > 0).to(out_dtype)
        return out if arr.dim() == 2 else out.reshape(n)

    return run


op_registry.register_op(
    "DenseBincount", infer=_bincount_infer, kernel=_bincount_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)


def bincount(
    arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None, dtype: Any = dtypes.int32
) -> Tensor:
    """Counts how often each value ``0 .. max(arr)`` occurs in the non-negative ints ``arr`` (summing ``weights``
    instead of ones when given); ``minlength``/``maxlength`` bound the result's length.

    Raises:
        InvalidArgumentError: (at run time) ``arr`` holds a negative value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bincount([1, 1, 3], minlength=5)))
        [0 2 0 1 0]
    """
    ao = array_ops()
    with name_scope("bincount"):
        arr = convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
        if not arr.dtype.is_integer:
            arr = cast(arr, dtypes.int32)
        nonempty = greater(ao.size(arr), 0)
        output_size = multiply(cast(nonempty, arr.dtype), add(reduce_max(arr), 1))
        if minlength is not None:
            output_size = maximum(convert_to_tensor(minlength, name="minlength", dtype=arr.dtype), output_size)
        if maxlength is not None:
            output_size = minimum(convert_to_tensor(maxlength, name="maxlength", dtype=arr.dtype), output_size)
        if weights is not None:
            weights = ao.reshape(weights, [-1])
        arr = ao.reshape(arr, [-1])
        if weights is None:
            weights = constant([], dtype=dtypes.as_dtype(dtype))
        return make_op(
            "DenseBincount", [arr, output_size, weights], {"binary_output": False}, name="DenseBincount"
        ).outputs[0]
