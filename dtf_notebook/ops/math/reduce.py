"""Reductions over axes: ``Sum``, ``Mean``, ``Prod``, ``Max``, ``Min``, ``Any`` and ``All``.

All seven share the output inference, the kernel wrapper (Const axes are read once,
when the kernel is built) and the builder; they differ in one table row each. The
gradients broadcast the output's gradient back over the reduced axes.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     print(sess.run([reduce_sum(x, 0), reduce_max(x, 1, keepdims=True)]))
    [array([4., 6.], dtype=float32), array([[2.],
           [4.]], dtype=float32)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
from dtf_notebook.ops.math._common import (
    COMPLEX,
    INDEX,
    REAL,
    array_ops,
    dense,
    deprecated_arg,
    invalid_argument,
    is_tensor_like,
    table_builder,
)
from dtf_notebook.ops.math.binary import add, floordiv, floormod, maximum, multiply, realdiv, subtract
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import equal
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op
from dtf_notebook.runtime.values import torch_dtype


# ---- axes, inference and the kernel wrapper ------------------------------------------------------------
def _normalize_axes(axes: Sequence[int], rank: int, error: Callable[[str], Exception] = ValueError) -> list[int]:
    seen: list[int] = []
    for a in axes:
        if not -rank <= a < rank:
            raise error(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        a %= rank
        if a in seen:
            raise error(f"Invalid reduction arguments: Axes contains duplicate dimension: {a}")
        seen.append(a)
    return seen


def _static_axes(op: Operation) -> list[int] | None:
    """The reduction's axes, normalized and sorted, when both they and the input rank are static."""
    value = constant_value(op.inputs[1])
    rank = op.inputs[0].shape.ndims
    if value is None or rank is None:
        return None
    return sorted(_normalize_axes([int(a) for a in np.reshape(value, -1)], rank))


def _reduction_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    keep = op.get_attr("keep_dims")
    rank = x.shape.ndims
    if rank is None or constant_value(op.inputs[1]) is None:
        return [(x.dtype, unknown_shape(rank) if keep else unknown_shape())]
    axes = _static_axes(op)
    dims = x.shape.as_list()
    if keep:
        return [(x.dtype, TensorShape([1 if i in axes else d for i, d in enumerate(dims)]))]
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]


def _reduction_kernel(make_fn: Callable[[Operation], Callable[..., torch.Tensor]]):
    """A kernel factory for a reduction ``fn(x, dims, keepdim)``; Const axes are read once, here."""

    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        fn = make_fn(op)
        keep = op.get_attr("keep_dims")
        value = constant_value(op.inputs[1])
        if value is not None:
            dims = tuple(int(a) for a in np.reshape(value, -1))
            # torch reads an empty dim list as "all dims"; TF as "none".
            if not dims:
                return lambda x, axes: x
            return lambda x, axes: fn(x, dims, keep)

        def run(x: torch.Tensor, axes: torch.Tensor) -> torch.Tensor:
            dims = tuple(axes.reshape(-1).tolist())
            if not dims:
                return x
            _normalize_axes(dims, x.dim(), invalid_argument)
            return fn(x, dims, keep)

        return run

    return factory


# ---- torch functions -----------------------------------------------------------------------------------
def _sum_fn(op: Operation) -> Callable[..., torch.Tensor]:
    dtype = op.inputs[0].dtype
    if dtype.is_integer:
        # torch would widen integer sums to int64; TF keeps the input type.
        out = torch_dtype(dtype)
        return lambda x, dims, keep: torch.sum(x, dims, keep, dtype=out)
    return torch.sum


def _mean_fn(op: Operation) -> Callable[..., torch.Tensor]:
    dtype = op.inputs[0].dtype
    if not dtype.is_integer:
        return torch.mean
    out = torch_dtype(dtype)

    def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
        total = torch.sum(x, dims, keep, dtype=torch.int64)
        count = 1
        for d in dims:
            count *= x.shape[d]
        # Integer means truncate toward zero, as TF's do.
        return (torch.div(total, count, rounding_mode="trunc") if count else total).to(out)

    return run


def _extreme_fn(torch_name: str, lowest: bool):
    def make(op: Operation) -> Callable[..., torch.Tensor]:
        torch_fn = getattr(torch, torch_name)  # looked up when a plan is built: torch loads then
        dtype = op.inputs[0].dtype
        fill = (dtype.min if lowest else dtype.max) if dtype.is_integer else (-np.inf if lowest else np.inf)

        def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
            if x.numel():
                return torch_fn(x, dims, keep)
            # TF reduces an empty set to the identity of max/min; torch refuses.
            norm = {d % x.dim() for d in dims}
            shape = [1 if i in norm else s for i, s in enumerate(x.shape) if keep or i not in norm]
            return torch.full(shape, fill, dtype=x.dtype, device=x.device)

        return run

    return make


def _prod_fn(op: Operation) -> Callable[..., torch.Tensor]:
    out = torch_dtype(op.inputs[0].dtype)

    def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
        # torch.prod takes one dim at a time; going from the last keeps the other indices valid.
        for d in sorted({d % x.dim() for d in dims}, reverse=True):
            x = torch.prod(x, d, keep, dtype=out)
        return x

    return run


# ---- gradients -----------------------------------------------------------------------------------------
def _kept_dims_grad(op: Operation, grad: Tensor) -> Tensor:
    """The reduction's output-shaped ``grad`` reshaped so that it broadcasts against the input."""
    if op.get_attr("keep_dims"):
        return grad
    x = op.inputs[0]
    axes = _static_axes(op)
    ao = array_ops()
    if axes is not None:
        if axes == list(range(len(axes))):
            return grad  # leading axes: numpy broadcasting already lines the rest up
        kept = [1 if i in axes else (-1 if d is None else d) for i, d in enumerate(x.shape.as_list())]
        if kept.count(-1) <= 1:
            return ao.reshape(grad, kept)
        for a in axes:
            grad = ao.expand_dims(grad, a)
        return grad
    # Unknown rank or axes: 1 where an axis is reduced, the input's size elsewhere.
    sx = ao.shape(x)
    rank = ao.size(sx)
    reduced = ao.reshape(floormod(cast(op.inputs[1], dtypes.int32), rank), [-1])
    is_reduced = reduce_any(equal(ao.expand_dims(math_range(0, rank), 1), ao.expand_dims(reduced, 0)), axis=1)
    return ao.reshape(grad, where(is_reduced, ao.ones_like(sx), sx))


def _sum_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    x = op.inputs[0]
    if x.shape.is_fully_defined() and grad.shape == x.shape:
        return [grad, None]
    # A static shape becomes a Const; otherwise the runtime shape is read.
    shape = x.shape.as_list() if x.shape.is_fully_defined() else array_ops().shape(x)
    return [array_ops().broadcast_to(_kept_dims_grad(op, grad), shape), None]


def _mean_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    x, y = op.inputs[0], op.outputs[0]
    axes = _static_axes(op)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    # A zero count only occurs when the input is empty, and then so is the broadcast gradient.
    if axes is not None and all(dims[a] is not None for a in axes):
        count = int(np.prod([dims[a] for a in axes], dtype=np.int64))
        scaled = realdiv(grad, constant(count, dtype=grad.dtype)) if count != 1 else grad
    else:
        ao = array_ops()
        if axes is not None and len(axes) == len(dims):
            count_t = ao.size(x)
        else:
            count_t = floordiv(ao.size(x), maximum(ao.size(y), 1))
        scaled = realdiv(grad, cast(count_t, grad.dtype))
    return [_sum_grad(op, scaled)[0], None]


def _extreme_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    x = op.inputs[0]
    y = _kept_dims_grad(op, op.outputs[0])
    # The gradient is split evenly between the entries that attain the extreme.
    indicators = cast(equal(y, x), grad.dtype)
    num_selected = reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [multiply(realdiv(indicators, num_selected), _kept_dims_grad(op, grad)), None]


def _prod_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    x, axes = op.inputs[0], op.inputs[1]
    ao = array_ops()
    dtype = x.dtype
    # d prod / d x_i is the product of the other entries: with no zero in the slice that is prod / x_i; with
    # one zero it is the product of the non-zeros at the zero and 0 elsewhere; with more zeros it is 0.
    is_zero = equal(x, 0)
    safe_x = where(is_zero, ao.ones_like(x), x)
    nonzero_prod = reduce_prod(safe_x, axes, keepdims=True)
    num_zeros = reduce_sum(cast(is_zero, dtype), axes, keepdims=True)
    zero_mask = cast(is_zero, dtype)
    at_zero = multiply(nonzero_prod, cast(equal(num_zeros, 1), dtype))
    elsewhere = realdiv(multiply(nonzero_prod, cast(equal(num_zeros, 0), dtype)), safe_x)
    local = add(multiply(zero_mask, at_zero), multiply(subtract(1, zero_mask), elsewhere))
    return [multiply(_kept_dims_grad(op, grad), local), None]


for _type, _make_fn, _grad in (
    ("Sum", _sum_fn, _sum_grad),
    ("Mean", _mean_fn, _mean_grad),
    ("Prod", _prod_fn, _prod_grad),
    ("Max", _extreme_fn("amax", lowest=True), _extreme_grad),
    ("Min", _extreme_fn("amin", lowest=False), _extreme_grad),
    ("Any", lambda op: torch.any, op_registry.NOT_DIFFERENTIABLE),
    ("All", lambda op: torch.all, op_registry.NOT_DIFFERENTIABLE),
):
    op_registry.register_op(_type, infer=_reduction_infer, kernel=_reduction_kernel(_make_fn), grad=_grad)


# ---- builders ------------------------------------------------------------------------------------------
def _reduction_axes_tensor(x: Tensor, axis: Any) -> Tensor:
    if axis is None:
        if x.shape.ndims is not None:
            return constant(np.arange(x.shape.ndims, dtype=np.int32), name="reduction_indices")
        return math_range(0, array_ops().rank(x))
    if not is_tensor_like(axis) and np.size(axis) == 0:
        axis = np.zeros(0, np.int32)  # an empty list would otherwise default to float32
    t = convert_to_tensor(axis, name="reduction_indices")
    check_dtype(t, INDEX, "reduction", "reduction_indices")
    return t


def _reduce(
    op_type: str,
    input_tensor: Any,
    axis: Any,
    keepdims: Any,
    name: str | None,
    reduction_indices: Any,
    keep_dims: Any,
    allowed: Sequence[dtypes.DType],
) -> Tensor:
    axis = deprecated_arg("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_arg("keepdims", keepdims, "keep_dims", keep_dims) or False)
    with name_scope(name, op_type, [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        check_dtype(x, allowed, op_type, "input")
        axes = _reduction_axes_tensor(x, axis)
        out = make_op(op_type, [x, axes], {"keep_dims": keepdims}, name=scope).outputs[0]
    if axis is None and not keepdims and out.shape.ndims is None:
        out.set_shape([])  # reducing every axis gives a scalar even when the rank is unknown
    return out


def _reduction(
    fn_name: str, op_type: str, allowed: Sequence[dtypes.DType], summary: str, example: str, prints: str
) -> Callable[..., Tensor]:
    def reduce(
        input_tensor: Any,
        axis: Any = None,
        keepdims: bool | None = None,
        name: str | None = None,
        reduction_indices: Any = None,
        keep_dims: bool | None = None,
    ) -> Tensor:
        return _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims, allowed)

    summary += (
        "\n\n``axis`` is an int, a list, a tensor, or None for all axes; negative axes count from the end. "
        "``reduction_indices`` and ``keep_dims`` are TF1's older names of ``axis`` and ``keepdims``."
    )
    raises = [
        "ValueError: an axis is out of range or repeated (when known while building).",
        f"TypeError: the input has a dtype not among: {', '.join(d.name for d in allowed)}.",
    ]
    return table_builder(reduce, fn_name, summary, example, prints, raises)


_BOOL = (dtypes.bool,)
_NUMBERS = "[[1, 2], [3, 4]], 1"
_TRUTHS = "[[True, False], [True, True]], 1"

# Builders: name, op type, dtypes accepted, summary, example arguments and what they print.
_SUM = REAL + COMPLEX
reduce_sum = _reduction("reduce_sum", "Sum", _SUM, "Sum over ``axis`` (integers keep their dtype).", _NUMBERS, "[3 7]")
reduce_mean = _reduction("reduce_mean", "Mean", REAL, "Mean over ``axis`` (integer means truncate).", _NUMBERS, "[1 3]")
reduce_max = _reduction("reduce_max", "Max", REAL, "Maximum over ``axis`` (lowest value if empty).", _NUMBERS, "[2 4]")
reduce_min = _reduction("reduce_min", "Min", REAL, "Minimum over ``axis`` (highest value if empty).", _NUMBERS, "[1 3]")
reduce_prod = _reduction("reduce_prod", "Prod", REAL, "Product over ``axis``.", _NUMBERS, "[ 2 12]")
reduce_any = _reduction("reduce_any", "Any", _BOOL, "Logical OR over ``axis``.", _TRUTHS, "[ True  True]")
reduce_all = _reduction("reduce_all", "All", _BOOL, "Logical AND over ``axis``.", _TRUTHS, "[False  True]")
