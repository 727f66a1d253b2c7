"""Growing a tensor: ``tile`` (op ``Tile``) and ``pad`` (ops ``Pad``, ``PadV2``, ``MirrorPad``, ``MirrorPadGrad``).

Pad kernels share one planner: the paddings are read, checked and turned into index plans once
per input shape when they are constant.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.zeros([2, 3])
    ...     tile(x, [2, 1]).shape.as_list(), pad(x, [[1, 1], [0, 2]], "SYMMETRIC").shape.as_list()
    ([4, 3], [4, 5])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import cached, dense, is_string, op_scope, to_list
from dtf_notebook.ops.array.conversions import int_tensor, tensor_and_ints_op
from dtf_notebook.ops.array.diagnostics import dims_with_rank, fmt_dims, fmt_shape, invalid, require_rank
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.reshape import reshape
from dtf_notebook.ops.array.shape_ops import rank, shape, size
from dtf_notebook.ops.array.slicing import slice
from dtf_notebook.ops.array.static_values import const_ints, partial_ints
from dtf_notebook.ops.array.transpose import transpose
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import make_op


# ---- Tile --------------------------------------------------------------------------------------
def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Repeats ``input`` ``multiples[i]`` times along each dimension ``i``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.tile(tf.constant([[1, 2]]), [2, 2])).tolist())
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    return tensor_and_ints_op("Tile", name, input, "input", multiples, "multiples")


def _tile_infer(op: Operation) -> list:
    x, m_t = op.inputs
    require_rank(m_t, 1)
    dims = dims_with_rank(x.shape, m_t.shape[0].value if m_t.shape.ndims == 1 else None)
    if dims is None:
        return [(x.dtype, unknown_shape())]
    mult = partial_ints(m_t, len(dims))
    for i, k in enumerate(mult):
        if k is not None and k < 0:
            raise ValueError(f"Expected multiples[{i}] >= 0, but got {k}")
    return [(x.dtype, TensorShape([d * k if d is not None and k is not None else None for d, k in zip(dims, mult)]))]


def _tile_kernel(op: Operation, ctx: Any):
    static = const_ints(op.inputs[1])
    is_str = is_string(op.inputs[0])

    def check(x: Any, mult: Sequence[int]) -> None:
        if len(mult) != x.ndim:
            raise invalid(
                op, f"Expected multiples argument to be a vector of length {x.ndim} but got length {len(mult)}"
            )
        for i, k in enumerate(mult):
            if k < 0:
                raise invalid(op, f"Expected multiples[{i}] >= 0, but got {k}")

    def run(x: Any, mult_value: Any) -> Any:
        mult = static if static is not None else to_list(mult_value)
        if len(mult) != x.ndim or static is None:
            check(x, mult)
        return np.tile(x, mult) if is_str else x.repeat(*mult) if mult else x

    return run


def _tile_grad(op: Operation, grad: Any) -> list:
    x = op.inputs[0]
    grad = dense(grad)
    split_t, axes = _tile_split(x, op.inputs[1])
    dx = math_ops.reduce_sum(reshape(grad, split_t), axes)
    dx.set_shape(x.shape)
    return [dx, None]


def _tile_split(x: Tensor, m_t: Tensor) -> tuple[Any, Any]:
    """The shape ``[m0, d0, m1, d1, ...]`` that splits each tiled dimension into its copies, and the copies' axes."""
    mult = const_ints(m_t)
    if mult is not None and x.shape.is_fully_defined():
        split_shape = [v for pair in zip(mult, x.shape.as_list()) for v in pair]
        return constant(split_shape, dtype=dtypes.int32), list(range(0, len(split_shape), 2))
    input_shape = shape(x, out_type=m_t.dtype)
    split_t = reshape(transpose(stack([m_t, input_shape])), [-1])
    return split_t, math_ops.range(0, size(split_t), 2)


op_registry.register_op("Tile", infer=_tile_infer, kernel=_tile_kernel, grad=_tile_grad)


# ---- Pad, PadV2, MirrorPad ---------------------------------------------------------------------
def pad(
    tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None, constant_values: Any = 0
) -> Tensor:
    """Pads ``tensor``: ``paddings[i] = [before, after]`` elements around dimension ``i``.

    ``mode`` is ``"CONSTANT"`` (filled with ``constant_values``), ``"REFLECT"`` (mirrored without the edge)
    or ``"SYMMETRIC"`` (mirrored with the edge), case-insensitive.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.pad(x, [[0, 0], [2, 2]], "REFLECT")).tolist())
        [[3, 2, 1, 2, 3, 2, 1]]
    """
    mode_upper = mode.upper() if isinstance(mode, str) else mode
    if mode_upper == "CONSTANT":
        zero = _is_zero(constant_values)
        with op_scope(name, "Pad" if zero else "PadV2", [tensor, paddings, constant_values]) as scope:
            x = convert_to_tensor(tensor, name="input")
            p = int_tensor(paddings, name="paddings")
            if zero:
                return make_op("Pad", [x, p], {}, name=scope).outputs[0]
            c = convert_to_tensor(constant_values, dtype=x.dtype, name="constant_values")
            return make_op("PadV2", [x, p, c], {}, name=scope).outputs[0]
    if mode_upper in ("REFLECT", "SYMMETRIC"):
        with op_scope(name, "MirrorPad", [tensor, paddings]) as scope:
            x = convert_to_tensor(tensor, name="input")
            p = int_tensor(paddings, name="paddings")
            return make_op("MirrorPad", [x, p], {"mode": mode_upper}, name=scope).outputs[0]
    raise ValueError(
        'Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". '
        f"Received `mode` = {mode}"
    )


def _is_zero(value: Any) -> bool:
    if is_tensor_like(value):
        return False
    try:
        arr = np.asarray(value)
        return arr.dtype.kind in "biuf" and arr.size == 1 and not arr.reshape(-1)[0]
    except (TypeError, ValueError):
        return False


def _mirror_problem(mode: str, dim: int, before: int, after: int) -> str | None:
    if before < 0 or after < 0:
        return f"Paddings must be non-negative: {before} {after}"
    if mode == "REFLECT" and (before >= dim or after >= dim) and (before or after):
        return f"paddings must be less than the dimension size: {before}, {after} not less than {dim}"
    if mode == "SYMMETRIC" and (before > dim or after > dim):
        return f"paddings must be no greater than the dimension size: {before}, {after} greater than {dim}"
    return None


def _pad_infer(op: Operation) -> list:
    x, p_t = op.inputs[0], op.inputs[1]
    if len(op.inputs) == 3:
        require_rank(op.inputs[2], 0)
    if p_t.shape.ndims not in (None, 2) or (p_t.shape.ndims == 2 and p_t.shape[1].value not in (None, 2)):
        raise ValueError(f"paddings must be a matrix with 2 columns, got shape {fmt_shape(p_t.shape)}")
    dims = dims_with_rank(x.shape, p_t.shape[0].value if p_t.shape.ndims == 2 else None)
    if dims is None:
        return [(x.dtype, unknown_shape())]
    flat = const_ints(p_t)
    if flat is None:
        return [(x.dtype, unknown_shape(len(dims)))]
    pairs = list(zip(flat[0::2], flat[1::2]))
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError("Paddings must be non-negative")
    if op.type == "MirrorPad":
        for d, (a, b) in zip(dims, pairs):
            problem = _mirror_problem(op.get_attr("mode"), d, a, b) if d is not None else None
            if problem:
                raise ValueError(problem)
    return [(x.dtype, TensorShape([d + a + b if d is not None else None for d, (a, b) in zip(dims, pairs)]))]


def _pad_pairs(op: Operation, x: Any, value: Any) -> list[tuple[int, int]]:
    flat = to_list(value.reshape(-1)) if not isinstance(value, list) else value
    if len(flat) != 2 * x.ndim:
        raise invalid(
            op, f"The first dimension of paddings must be the rank of inputs[{len(flat) // 2},2] {fmt_dims(x.shape)}"
        )
    pairs = list(zip(flat[0::2], flat[1::2]))
    for a, b in pairs:
        if a < 0 or b < 0:
            raise invalid(op, f"Paddings must be non-negative: {a} {b}")
    return pairs


def _pad_planner(op: Operation, make: Callable[[tuple[int, ...], list[tuple[int, int]]], Any]):
    """``plan(x, paddings)``: ``make(x's shape, checked pairs)``, once per input shape when paddings are static."""
    static = const_ints(op.inputs[1])
    cache: dict[Any, Any] = {}

    def build(x: Any, p_value: Any) -> Any:
        return make(tuple(x.shape), _pad_pairs(op, x, p_value))

    def plan(x: Any, p_value: Any) -> Any:
        return cached(cache, tuple(x.shape), build, x, static) if static is not None else build(x, p_value)

    return plan


def _pad_kernel(op: Operation, ctx: Any):
    is_str = is_string(op.inputs[0])

    def make(dims: tuple[int, ...], pairs: list[tuple[int, int]]) -> tuple[tuple[int, ...], tuple[builtins.slice, ...]]:
        out_shape = tuple(d + a + b for d, (a, b) in zip(dims, pairs))
        inner = tuple(builtins.slice(a, a + d) for d, (a, _) in zip(dims, pairs))
        return out_shape, inner

    plan = _pad_planner(op, make)

    def run(x: Any, p_value: Any, fill_value: Any = None) -> Any:
        out_shape, inner = plan(x, p_value)
        if is_str:
            out = np.full(out_shape, b"" if fill_value is None else fill_value[()], dtype=object)
        elif fill_value is None:
            out = x.new_zeros(out_shape)
        else:
            out = torch.empty(out_shape, dtype=x.dtype, device=x.device).fill_(fill_value)
        out[inner] = x
        return out

    return run


def _pad_grad(op: Operation, grad: Any) -> list:
    x, p_t = op.inputs[0], op.inputs[1]
    grad = dense(grad)
    flat = const_ints(p_t)
    if flat is not None:
        begin: Any = constant(np.asarray(flat[0::2], dtype=p_t.dtype.np_dtype))
    else:
        begin = reshape(slice(p_t, [0, 0], stack([rank(x), 1])), [-1])
    dx = slice(grad, begin, shape(x, out_type=begin.dtype))
    return [dx] + [None] * (len(op.inputs) - 1)


for _op_type in ("Pad", "PadV2"):
    op_registry.register_op(_op_type, infer=_pad_infer, kernel=_pad_kernel, grad=_pad_grad)


def _mirror_index(dim: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source position of each padded position along one dimension."""
    pos = np.arange(-before, dim + after)
    edge = 0 if mode == "REFLECT" else 1
    pos = np.where(pos < 0, -pos - edge, pos)
    return np.where(pos >= dim, 2 * dim - 2 + edge - pos, pos)


def _mirror_steps(
    op: Operation, dims: tuple[int, ...], pairs: Sequence[tuple[int, int]], device: Any
) -> list[tuple[int, torch.Tensor]]:
    """Per padded dimension of an input of ``dims``, the source index of each output position."""
    mode = op.get_attr("mode")
    steps = []
    for d, (dim, (a, b)) in enumerate(zip(dims, pairs)):
        problem = _mirror_problem(mode, dim, a, b)
        if problem:
            raise invalid(op, problem)
        if a or b:
            steps.append((d, torch.from_numpy(_mirror_index(dim, a, b, mode)).to(device)))
    return steps


def _mirror_pad_kernel(op: Operation, ctx: Any):
    is_str = is_string(op.inputs[0])
    device = ctx.device if not is_str else "cpu"
    plan = _pad_planner(op, lambda dims, pairs: _mirror_steps(op, dims, pairs, device))

    def run(x: Any, p_value: Any) -> Any:
        for d, idx in plan(x, p_value):
            x = np.take(x, idx.numpy(), axis=d) if is_str else x.index_select(d, idx)
        return x

    return run


def _mirror_pad_grad(op: Operation, grad: Any) -> list:
    with op_scope(None, "MirrorPadGrad", [grad]) as scope:
        dx = make_op("MirrorPadGrad", [dense(grad), op.inputs[1]], {"mode": op.get_attr("mode")}, name=scope)
    return [dx.outputs[0], None]


op_registry.register_op("MirrorPad", infer=_pad_infer, kernel=_mirror_pad_kernel, grad=_mirror_pad_grad)


# ---- MirrorPadGrad -----------------------------------------------------------------------------
def _mirror_pad_grad_infer(op: Operation) -> list:
    g, p_t = op.inputs
    flat = const_ints(p_t)
    if g.shape.ndims is None or flat is None:
        return [(g.dtype, unknown_shape(g.shape.ndims))]
    pairs = list(zip(flat[0::2], flat[1::2]))
    dims = [d - a - b if d is not None else None for d, (a, b) in zip(g.shape.as_list(), pairs)]
    return [(g.dtype, TensorShape(dims))]


def _mirror_pad_grad_kernel(op: Operation, ctx: Any):
    device = ctx.device

    def make(dims: tuple[int, ...], pairs: list[tuple[int, int]]) -> tuple[tuple[int, ...], list]:
        in_dims = tuple(d - a - b for d, (a, b) in zip(dims, pairs))
        return in_dims, _mirror_steps(op, in_dims, pairs, device)

    plan = _pad_planner(op, make)

    def run(g: torch.Tensor, p_value: Any) -> torch.Tensor:
        dims, steps = plan(g, p_value)
        # The forward pass gathers one dimension after another; undo that in reverse, summing repeats.
        for d, idx in reversed(steps):
            shape_d = list(g.shape)
            shape_d[d] = dims[d]
            g = g.new_zeros(shape_d).index_add_(d, idx, g)
        return g

    return run


def _mirror_pad_grad_grad(op: Operation, grad: Any) -> list:
    return [pad(dense(grad), op.inputs[1], mode=op.get_attr("mode")), None]


op_registry.register_op(
    "MirrorPadGrad", infer=_mirror_pad_grad_infer, kernel=_mirror_pad_grad_kernel, grad=_mirror_pad_grad_grad
)
