"""``slice`` (op ``Slice``) and ``strided_slice`` (ops ``StridedSlice``, ``StridedSliceGrad``).

The strided-slice spec rules live in :mod:`dtf_notebook.ops.array.slice_spec`; kernels plan a slice
once per input shape and reuse the plan.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.zeros([4, 3])
    ...     every_other_row = strided_slice(x, [0], [0], [-2], begin_mask=1, end_mask=1)  # x[::-2]
    ...     slice(x, [1, 0], [-1, 2]).shape.as_list(), every_other_row.shape.as_list()
    ([3, 2], [2, 3])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import cached, dense, is_string, obj, op_scope, to_list
from dtf_notebook.ops.array.conversions import int_tensor
from dtf_notebook.ops.array.diagnostics import dims_with_rank, fmt_dims, invalid
from dtf_notebook.ops.array.fill import ones_like
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.array.slice_spec import MASK_NAMES, SliceSpecError, strided_slice_plan, strided_slice_shape
from dtf_notebook.ops.array.static_values import const_ints, partial_ints, partial_shape
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import make_op


# ---- Slice -------------------------------------------------------------------------------------
def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Extracts ``size[i]`` elements from ``begin[i]`` in each dimension; a size of -1 takes the rest.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3], [4, 5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.slice(x, [0, 1], [-1, 2])).tolist())
        [[2, 3], [5, 6]]
    """
    with op_scope(name, "Slice", [input_, begin, size]) as scope:
        x = convert_to_tensor(input_, name="input")
        b = int_tensor(begin, name="begin")
        s = int_tensor(size, name="size")
        if b.dtype is not s.dtype:
            raise TypeError(
                f"Input 'size' of 'Slice' Op has type {s.dtype.name} that does not match type "
                f"{b.dtype.name} of argument 'begin'."
            )
        return make_op("Slice", [x, b, s], {}, name=scope).outputs[0]


def _slice_bounds(dims: Sequence[int], begin: Sequence[int], sizes: Sequence[int]) -> list[builtins.slice] | str:
    """The Python slices a Slice op takes, or TF's error message."""
    out = []
    for i, (d, b, s) in enumerate(zip(dims, begin, sizes)):
        if s == -1:
            s = d - b
        if not 0 <= b <= d:
            return f"Expected begin[{i}] in [0, {d}], but got {b}"
        if not 0 <= s <= d - b:
            return f"Expected size[{i}] in [0, {d - b}], but got {s}"
        out.append(builtins.slice(b, b + s))
    return out


def _spec_vector_length(tensors: Sequence[Tensor]) -> list[int | None]:
    """The lengths of 1-D spec inputs (begin, size, ...), each None when unknown; a ValueError when not 1-D."""
    for t in tensors:
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {t.shape.ndims}")
    return [t.shape[0].value if t.shape.ndims == 1 else None for t in tensors]


def _slice_infer(op: Operation) -> list:
    x, begin_t, size_t = op.inputs
    dims = dims_with_rank(x.shape, *_spec_vector_length([begin_t, size_t]))
    if dims is None:
        return [(x.dtype, unknown_shape())]
    begin, sizes = partial_ints(begin_t, len(dims)), partial_ints(size_t, len(dims))
    out: list[int | None] = []
    for i, (d, b, s) in enumerate(zip(dims, begin, sizes)):
        if b is not None and b < 0:
            raise ValueError(f"Expected begin[{i}] in [0, {d if d is not None else '?'}], but got {b}")
        if s is not None and s < -1:
            raise ValueError(f"Expected size[{i}] >= -1, but got {s}")
        if d is not None and b is not None and b > d:
            raise ValueError(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s == -1:
            out.append(d - b if d is not None and b is not None else None)
            continue
        if d is not None and b is not None and s is not None and b + s > d:
            raise ValueError(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        out.append(s)
    return [(x.dtype, TensorShape(out))]


def _slice_kernel(op: Operation, ctx: Any):
    begin_c, size_c = const_ints(op.inputs[1]), const_ints(op.inputs[2])
    static = begin_c is not None and size_c is not None
    cache: dict[Any, tuple[builtins.slice, ...]] = {}

    def index(dims: tuple[int, ...], begin: Sequence[int], sizes: Sequence[int]) -> tuple[builtins.slice, ...]:
        if len(begin) != len(dims) or len(sizes) != len(dims):
            raise invalid(
                op,
                f"Expected begin and size arguments to be 1-D tensors of size {len(dims)}, but got "
                f"shapes [{len(begin)}] and [{len(sizes)}] instead.",
            )
        bounds = _slice_bounds(dims, begin, sizes)
        if isinstance(bounds, str):
            raise invalid(op, bounds)
        return tuple(bounds)

    def run(x: Any, begin_v: Any, size_v: Any) -> Any:
        dims = tuple(x.shape)
        if static:
            return x[cached(cache, dims, index, dims, begin_c, size_c)]
        return x[index(dims, to_list(begin_v), to_list(size_v))]

    return run


def _slice_grad(op: Operation, grad: Any) -> list:
    pad = op_registry.builders.pad

    x, begin_t, _ = op.inputs
    grad = dense(grad)
    out = op.outputs[0]
    begin = const_ints(begin_t)
    if begin is not None and x.shape.is_fully_defined() and out.shape.is_fully_defined():
        after = [d - b - s for d, b, s in zip(x.shape.as_list(), begin, out.shape.as_list())]
        paddings = constant(np.stack([begin, after], axis=1).astype(np.int32).reshape(-1, 2))
        return [pad(grad, paddings), None, None]
    shape_x = shape(x, out_type=begin_t.dtype)
    after_t = math_ops.subtract(math_ops.subtract(shape_x, shape(grad, out_type=begin_t.dtype)), begin_t)
    paddings = stack([begin_t, after_t], axis=1)
    return [pad(grad, paddings), None, None]


op_registry.register_op("Slice", infer=_slice_infer, kernel=_slice_kernel, grad=_slice_grad)


# ---- StridedSlice ------------------------------------------------------------------------------
def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Tensor:
    """Numpy-style strided slicing with TF's bit masks (what ``x[...]`` builds).

    Bit ``i`` of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]`` (the full range),
    ``ellipsis_mask`` marks an ``...``, ``new_axis_mask`` inserts a dimension and ``shrink_axis_mask``
    takes the single index ``begin[i]`` and drops the dimension.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3], [4, 5, 6]])
        ...     y = tf.strided_slice(x, [0, -1], [0, 0], [1, -1], begin_mask=1, end_mask=3)
        ...     with tf.Session() as sess:
        ...         print(sess.run(y).tolist())
        [[3, 2, 1], [6, 5, 4]]
    """
    with op_scope(name, "StridedSlice", [input_, begin, end, strides]) as scope:
        x = convert_to_tensor(input_, name="input")
        b = int_tensor(begin, name="begin")
        e = int_tensor(end, name="end")
        if strides is None:
            n = b.shape[0].value if b.shape.ndims == 1 else None
            s = constant(np.ones(n, dtype=b.dtype.np_dtype), name="strides") if n is not None else ones_like(b)
        else:
            s = int_tensor(strides, name="strides")
        masks = (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
        attrs = {k: int(v) for k, v in zip(MASK_NAMES, masks)}
        return make_op("StridedSlice", [x, b, e, s], attrs, name=scope).outputs[0]


def _mask_attrs(op: Operation) -> dict[str, int]:
    return {k: op.get_attr(k) for k in MASK_NAMES}


def _spec_length(tensors: Sequence[Tensor]) -> int | None:
    lengths = _spec_vector_length(tensors)
    known = [n for n in lengths if n is not None]
    if any(n != known[0] for n in known):
        raise ValueError(
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
            f"{', '.join(fmt_dims([n]) for n in lengths[:-1])}, and {fmt_dims([lengths[-1]])} instead."
        )
    return known[0] if known else None


def _strided_slice_infer(op: Operation) -> list:
    x = op.inputs[0]
    n = _spec_length(op.inputs[1:4])
    if x.shape.ndims is None or n is None:
        return [(x.dtype, unknown_shape())]
    begin, end, strides = (partial_ints(t, n) for t in op.inputs[1:4])
    try:
        dims = strided_slice_shape(x.shape.as_list(), begin, end, strides, tuple(_mask_attrs(op).values()))
    except SliceSpecError as e:
        raise ValueError(str(e)) from None
    return [(x.dtype, TensorShape(dims))]


def _planner(op: Operation) -> Callable[[tuple[int, ...], Any, Any, Any], tuple[Any, ...]]:
    """``plan(dims, begin, end, strides)`` for this op's spec (inputs 1-3), made once per shape when static."""
    masks = tuple(_mask_attrs(op).values())
    values = [const_ints(t) for t in op.inputs[1:4]]
    static = None if any(v is None for v in values) else values
    cache: dict[Any, Any] = {}

    def make(dims: tuple[int, ...], begin: Sequence[int], end: Sequence[int], strides: Sequence[int]):
        if not len(begin) == len(end) == len(strides):
            raise invalid(
                op,
                "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
                f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead.",
            )
        try:
            return strided_slice_plan(dims, begin, end, strides, masks)
        except SliceSpecError as e:
            raise invalid(op, str(e)) from None

    def plan(dims: tuple[int, ...], b: Any, e: Any, s: Any) -> tuple[Any, ...]:
        if static is not None:
            return cached(cache, dims, make, dims, *static)
        return make(dims, to_list(b), to_list(e), to_list(s))

    return plan


def _strided_slice_kernel(op: Operation, ctx: Any):
    plan = _planner(op)
    is_str = is_string(op.inputs[0])

    def run(x: Any, b: Any, e: Any, s: Any) -> Any:
        index, flips, _, final_shape = plan(tuple(x.shape), b, e, s)
        y = obj(x[index]) if is_str else x[index]
        if flips:
            y = np.flip(y, flips) if is_str else torch.flip(y, flips)
        if final_shape is not None:
            y = y.reshape(final_shape)
        return y

    return run


def _strided_slice_grad(op: Operation, grad: Any) -> list:
    x, begin, end, strides = op.inputs
    shape_x = shape(x, out_type=begin.dtype)
    with op_scope(None, "StridedSliceGrad", [shape_x, grad]) as scope:
        inputs = [shape_x, begin, end, strides, dense(grad)]
        dx = make_op("StridedSliceGrad", inputs, _mask_attrs(op), name=scope).outputs[0]
    return [dx, None, None, None]


op_registry.register_op(
    "StridedSlice", infer=_strided_slice_infer, kernel=_strided_slice_kernel, grad=_strided_slice_grad
)


def _strided_slice_grad_infer(op: Operation) -> list:
    shape_t, dy = op.inputs[0], op.inputs[4]
    _spec_length(op.inputs[1:4])
    return [(dy.dtype, partial_shape(shape_t))]


def _strided_slice_grad_kernel(op: Operation, ctx: Any):
    plan = _planner(op)
    static_shape = const_ints(op.inputs[0])

    def run(shape_v: Any, b: Any, e: Any, s: Any, dy: torch.Tensor) -> torch.Tensor:
        dims = tuple(static_shape) if static_shape is not None else tuple(to_list(shape_v))
        index, flips, sliced, _ = plan(dims, b, e, s)
        g = dy.reshape(sliced)
        if flips:
            g = torch.flip(g, flips)
        out = dy.new_zeros(dims)
        out[index] = g
        return out

    return run


def _strided_slice_grad_grad(op: Operation, grad: Any) -> list:
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None, strided_slice(dense(grad), begin, end, strides, **_mask_attrs(op))]


op_registry.register_op(
    "StridedSliceGrad",
    infer=_strided_slice_grad_infer,
    kernel=_strided_slice_grad_kernel,
    grad=_strided_slice_grad_grad,
)
