"""``concat`` (op ``ConcatV2``) and ``split`` (ops ``Split``, ``SplitV``): joining along an axis and cutting apart.

Each is the other's gradient.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     c = concat([tf.zeros([2, 3]), tf.ones([2, 1])], axis=1)
    ...     c.shape.as_list(), [p.shape.as_list() for p in split(c, [1, -1], axis=1)]
    ([2, 4], [[2, 1], [2, 3]])
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import identity_ops, math_ops
from dtf_notebook.ops.array.common import canonical_axis, dense, is_string, op_scope, to_list
from dtf_notebook.ops.array.conversions import dim_int, int_tensor, same_dtype_tensors
from dtf_notebook.ops.array.diagnostics import fmt_dims, fmt_shape, invalid, require_rank
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.shape_ops import rank, shape
from dtf_notebook.ops.array.static_values import const_int, const_ints
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import make_op


# ---- ConcatV2 ----------------------------------------------------------------------------------
def concat(values: Any, axis: Any, name: str = "concat") -> Tensor:
    """Joins tensors along ``axis`` (TF1's argument order: ``tf.concat(values, axis)``).

    Raises:
        ValueError: ranks or non-axis dimensions differ (when known while building).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     c = tf.concat([tf.zeros([2, 3]), tf.ones([2, 1])], axis=-1)
        ...     with tf.Session() as sess:
        ...         print(c.shape.as_list(), sess.run(c)[0].tolist())
        [2, 4] [0.0, 0.0, 0.0, 1.0]
    """
    if not isinstance(values, list | tuple):
        values = [values]
    if len(values) == 1:
        with op_scope(name, "concat", list(values) + [axis]) as scope:
            a = convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32 if not is_tensor_like(axis) else None)
            a.shape.assert_has_rank(0)
            return identity_ops.identity(values[0], name=scope)
    with op_scope(name, "concat", list(values) + [axis]) as scope:
        tensors = same_dtype_tensors(values, "ConcatV2")
        a = int_tensor(axis, name="axis")
        return make_op("ConcatV2", tensors + [a], {"N": len(tensors)}, name=scope).outputs[0]


def _concat_infer(op: Operation) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    require_rank(axis_t, 0)
    dtype = values[0].dtype
    ranks = [v.shape.ndims for v in values if v.shape.ndims is not None]
    n = ranks[0] if ranks else None
    for v in values:
        if v.shape.ndims is not None and v.shape.ndims != n:
            raise ValueError(f"Shape must be rank {n} but is rank {v.shape.ndims}")
    axis = const_int(axis_t)
    if n is None or axis is None:
        return [(dtype, unknown_shape(n))]
    if axis >= n:
        raise ValueError(f"Shape must be at least rank {axis + 1} but is rank {n}")
    if axis < -n:
        raise ValueError(f"ConcatOp : Expected concatenating dimensions in the range [{-n}, {n}), but got {axis}")
    axis = canonical_axis(axis, n)
    out: list[int | None] = [None] * n
    total: int | None = 0
    first: TensorShape | None = None
    for v in values:
        if v.shape.ndims is None:
            total = None
            continue
        dims = v.shape.as_list()
        total = None if total is None or dims[axis] is None else total + dims[axis]
        for i, d in enumerate(dims):
            if i == axis or d is None:
                continue
            if out[i] is not None and out[i] != d:
                raise ValueError(
                    f"Dimension {i} in both shapes must be equal, but are {out[i]} and {d}. Shapes are "
                    f"{fmt_shape(first)} and {fmt_shape(v.shape)}."
                )
            out[i] = d
        first = first or v.shape
    out[axis] = total
    return [(dtype, TensorShape(out))]


def _concat_error(op: Operation, parts: Sequence[Any], axis: int) -> errors.InvalidArgumentError:
    n = parts[0].ndim
    if not -n <= axis < n:
        return invalid(op, f"ConcatOp : Expected concatenating dimensions in the range [{-n}, {n}), but got {axis}")
    a = canonical_axis(axis, n)
    first = fmt_dims(parts[0].shape)
    for i, p in enumerate(parts[1:], 1):
        if p.ndim != n:
            return invalid(
                op,
                f"ConcatOp : Ranks of all input tensors should match: shape[0] = {first} vs. shape[{i}] = "
                f"{fmt_dims(p.shape)}",
            )
        for d in range(n):
            if d != a and p.shape[d] != parts[0].shape[d]:
                return invalid(
                    op,
                    f"ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = {first} vs. shape[{i}] = "
                    f"{fmt_dims(p.shape)}",
                )
    return invalid(op, "ConcatOp : inputs could not be concatenated")


def _concat_kernel(op: Operation, ctx: Any):
    static = const_int(op.inputs[-1])
    is_str = is_string(op.inputs[0])

    def run(*args: Any) -> Any:
        parts = args[:-1]
        axis = static if static is not None else int(args[-1])
        try:
            return np.concatenate(parts, axis) if is_str else torch.cat(parts, axis)
        except (RuntimeError, ValueError, IndexError, np.exceptions.AxisError):
            raise _concat_error(op, parts, axis) from None

    return run


def _concat_grad(op: Operation, grad: Any) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    grad = dense(grad)
    axis = const_int(axis_t)
    n = values[0].shape.ndims
    if axis is not None and n is not None:
        axis = canonical_axis(axis, n)
        sizes = [v.shape[axis].value if v.shape.ndims is not None else None for v in values]
        if all(s is not None for s in sizes):
            return list(split_v_outputs(grad, constant(sizes, dtype=dtypes.int32), axis, len(values))) + [None]
        axis_value: Any = axis
    else:
        axis_value = math_ops.floormod(axis_t, rank(values[0]))
    gather = op_registry.builders.gather

    sizes_t = stack([gather(shape(v), axis_value) for v in values])
    return list(split_v_outputs(grad, sizes_t, axis_t, len(values))) + [None]


op_registry.register_op("ConcatV2", infer=_concat_infer, kernel=_concat_kernel, grad=_concat_grad)


# ---- Split, SplitV -----------------------------------------------------------------------------
def split(
    value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None, name: str = "split"
) -> list[Tensor]:
    """Splits ``value`` along ``axis`` into ``num_or_size_splits`` equal parts, or parts of the listed sizes.

    One size may be -1 (the rest). Returns a list of tensors.

    Raises:
        ValueError: the sizes do not fit, or the number of parts cannot be inferred.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     parts = tf.split(tf.zeros([5, 4]), [2, -1], axis=0)
        ...     [p.shape.as_list() for p in parts]
        [[2, 4], [3, 4]]
    """
    if isinstance(num_or_size_splits, numbers.Integral | Dimension) and not isinstance(num_or_size_splits, bool):
        n = int(dim_int(num_or_size_splits))
        with op_scope(name, "split", [value, axis]) as scope:
            a = int_tensor(axis, name="split_dim")
            x = convert_to_tensor(value, name="value")
            outs = make_op("Split", [a, x], {"num_split": n}, name=scope).outputs
        return outs
    with op_scope(name, "split", [value, num_or_size_splits, axis]) as scope:
        sizes = int_tensor(num_or_size_splits, name="Const", param="size_splits")
        if sizes.shape.ndims == 0:
            raise ValueError(
                "Rank-0 tensors are not supported as the num_or_size_splits argument to split. "
                f"Argument provided: {num_or_size_splits}"
            )
        if num is None:
            num = sizes.shape[0].value if sizes.shape.ndims == 1 else None
            if num is None:
                raise ValueError(f"Cannot infer argument `num` from shape {num_or_size_splits}")
        x = convert_to_tensor(value, name="value")
        a = int_tensor(axis, name="split_dim")
        return make_op("SplitV", [x, sizes, a], {"num_split": int(num)}, name=scope).outputs


def split_v_outputs(value: Tensor, sizes: Tensor, axis: Any, num: int) -> list[Tensor]:
    """SplitV without the list-building front end (used by gradients).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     parts = split_v_outputs(tf.constant([1, 2, 3, 4, 5]), tf.constant([2, 3]), 0, 2)
        ...     print([p.tolist() for p in sess.run(parts)])
        [[1, 2], [3, 4, 5]]
    """
    with op_scope(None, "split", [value, sizes]) as scope:
        a = int_tensor(axis, name="split_dim")
        return make_op("SplitV", [value, sizes, a], {"num_split": num}, name=scope).outputs


def _static_split(x: Tensor, axis_t: Tensor) -> tuple[int | None, list[int | None]]:
    """The split's axis (counted from the front) and ``x``'s dims, when both the axis and the rank are known."""
    axis = const_int(axis_t)
    n = x.shape.ndims
    if n is None or axis is None:
        return None, []
    if not -n <= axis < n:
        raise ValueError(f"Dimension size, given by scalar input {axis} must be in range [{-n}, {n})")
    return canonical_axis(axis, n), x.shape.as_list()


def _kernel_axis(op: Operation, static: int | None, axis_value: Any, n: int) -> int:
    axis = static if static is not None else int(axis_value)
    if not -n <= axis < n:
        raise invalid(op, f"-input rank(-{n}) <= split_dim < input rank ({n}), but got {axis}")
    return canonical_axis(axis, n)


def _concat_grads(grads: Sequence[Any], axis: Tensor) -> Tensor:
    return concat([dense(g) for g in grads], axis)


def _split_infer(op: Operation) -> list:
    axis_t, x = op.inputs
    num = op.get_attr("num_split")
    if num < 1:
        raise ValueError(f"num_split must be >= 1, got {num}")
    a, dims = _static_split(x, axis_t)
    if a is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))] * num
    if dims[a] is not None:
        if dims[a] % num:
            raise ValueError(f"Dimension size must be evenly divisible by {num} but is {dims[a]}")
        dims[a] //= num
    return [(x.dtype, TensorShape(dims))] * num


def _split_kernel(op: Operation, ctx: Any):
    num = op.get_attr("num_split")
    static = const_int(op.inputs[0])
    is_str = is_string(op.inputs[1])

    def run(axis_value: Any, x: Any) -> Any:
        a = _kernel_axis(op, static, axis_value, x.ndim)
        if x.shape[a] % num:
            raise invalid(
                op,
                f"Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {a} (size = {x.shape[a]}) and num_split {num}",
            )
        if num == 1:
            return x
        return tuple(np.split(x, num, axis=a)) if is_str else x.tensor_split(num, a)

    return run


def _split_grad(op: Operation, *grads: Any) -> list:
    return [None, _concat_grads(grads, op.inputs[0])]


op_registry.register_op("Split", infer=_split_infer, kernel=_split_kernel, grad=_split_grad)


def _resolve_sizes(sizes: list[int], dim: int) -> list[int] | str:
    """SplitV sizes with the -1 filled in, or the error message."""
    minus = [i for i, s in enumerate(sizes) if s == -1]
    if len(minus) > 1:
        return "size_splits can only have one -1"
    known = sum(s for s in sizes if s != -1)
    if minus:
        if known > dim:
            return (
                "Determined shape must either match input shape along split_dim exactly if fully specified, "
                f"or be less than the size of the input along split_dim if not fully specified.  Got: {known}"
            )
        sizes = list(sizes)
        sizes[minus[0]] = dim - known
    elif known != dim:
        return (
            "Determined shape must either match input shape along split_dim exactly if fully specified, or be "
            f"less than the size of the input along split_dim if not fully specified.  Got: {known}"
        )
    if any(s < 0 for s in sizes):
        return f"Split size at index {min(i for i, s in enumerate(sizes) if s < 0)} must be >= 0. Got: {min(sizes)}"
    return sizes


def _split_v_infer(op: Operation) -> list:
    x, sizes_t, axis_t = op.inputs
    num = op.get_attr("num_split")
    if sizes_t.shape.ndims == 1 and sizes_t.shape[0].value not in (None, num):
        raise ValueError(f"Dimension must be {num} but is {sizes_t.shape[0].value}")
    sizes = const_ints(sizes_t)
    a, dims = _static_split(x, axis_t)
    if a is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))] * num
    if sizes is None:
        return [(x.dtype, TensorShape(dims[:a] + [None] + dims[a + 1 :]))] * num
    if dims[a] is not None:
        resolved = _resolve_sizes(sizes, dims[a])
        if isinstance(resolved, str):
            if "Determined" in resolved:
                resolved = f"can't split axis of size {dims[a]} into pieces of size {fmt_dims(sizes)}"
            raise ValueError(resolved)
    else:
        if sum(1 for s in sizes if s == -1) > 1:
            raise ValueError("size_splits can only have one -1")
        resolved = [None if s == -1 else s for s in sizes]
    return [(x.dtype, TensorShape(dims[:a] + [s] + dims[a + 1 :])) for s in resolved]


def _split_v_kernel(op: Operation, ctx: Any):
    num = op.get_attr("num_split")
    static_sizes = const_ints(op.inputs[1])
    static_axis = const_int(op.inputs[2])
    is_str = is_string(op.inputs[0])

    def run(x: Any, sizes_value: Any, axis_value: Any) -> Any:
        a = _kernel_axis(op, static_axis, axis_value, x.ndim)
        sizes = _resolve_sizes(static_sizes if static_sizes is not None else to_list(sizes_value), x.shape[a])
        if isinstance(sizes, str):
            raise invalid(op, sizes)
        if num == 1:
            return x
        if is_str:
            return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=a))
        return x.split(sizes, a)

    return run


def _split_v_grad(op: Operation, *grads: Any) -> list:
    return [_concat_grads(grads, op.inputs[2]), None, None]


op_registry.register_op("SplitV", infer=_split_v_infer, kernel=_split_v_kernel, grad=_split_v_grad)
