"""``stack`` (op ``Pack``) and ``unstack`` (op ``Unpack``): joining tensors along a new dimension and back.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     s = stack([tf.zeros([2, 3]), tf.ones([2, 3])], axis=1)
    ...     s.shape.as_list(), [t.shape.as_list() for t in unstack(s, axis=1)]
    ([2, 2, 3], [[2, 3], [2, 3]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import canonical_axis, dense, is_string, obj, op_scope
from dtf_notebook.ops.array.conversions import contains_tensor, same_dtype_tensors
from dtf_notebook.ops.array.diagnostics import fmt_dims, invalid
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import make_op


def stack(values: Any, axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks same-shaped tensors along a new dimension ``axis`` (op ``Pack``).

    Raises:
        ValueError: shapes differ or ``axis`` is out of range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1)
        ...     with tf.Session() as sess:
        ...         print(sess.run(s).tolist())
        [[1, 3], [2, 4]]
    """
    values = list(values)
    if axis == 0 and not contains_tensor(values):
        try:
            return constant(values, name=name)  # a list of plain values is a constant, as in TF
        except (TypeError, ValueError):
            pass
    with op_scope(name, "stack", values) as scope:
        tensors = same_dtype_tensors(values, "Pack")
        if not tensors:
            raise ValueError("Pack expects at least one input")
        n = tensors[0].shape.ndims
        if n is not None and not -n - 1 <= axis < n + 1:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-n - 1}, {n + 1})")
        return make_op("Pack", tensors, {"N": len(tensors), "axis": int(axis)}, name=scope).outputs[0]


def _pack_infer(op: Operation) -> list:
    values = op.inputs
    merged = unknown_shape()
    for v in values:
        if merged.ndims is not None and v.shape.ndims is not None and merged.ndims != v.shape.ndims:
            raise ValueError(
                f"Shapes must be equal rank, but are {merged.ndims} and {v.shape.ndims}; From merging "
                f"shape 0 with other shapes."
            )
        try:
            merged = merged.merge_with(v.shape)
        except ValueError:
            a, b = merged.as_list(), v.shape.as_list()
            d = next(j for j in range(len(a)) if a[j] is not None and b[j] is not None and a[j] != b[j])
            raise ValueError(
                f"Dimension {d} in both shapes must be equal, but are {a[d]} and {b[d]}. Shapes are "
                f"{fmt_dims(a)} and {fmt_dims(b)}."
            ) from None
    if merged.ndims is None:
        return [(values[0].dtype, unknown_shape())]
    axis = op.get_attr("axis")
    n = merged.ndims
    if not -n - 1 <= axis <= n:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-n - 1},{n + 1})")
    axis = canonical_axis(axis, n + 1)
    dims = merged.as_list()
    return [(values[0].dtype, TensorShape(dims[:axis] + [len(values)] + dims[axis:]))]


def _pack_kernel(op: Operation, ctx: Any):
    axis = op.get_attr("axis")
    is_str = is_string(op.inputs[0])

    def run(*parts: Any) -> Any:
        try:
            return np.stack(parts, axis) if is_str else torch.stack(parts, axis)
        except (RuntimeError, ValueError):
            for i, p in enumerate(parts[1:], 1):
                if tuple(p.shape) != tuple(parts[0].shape):
                    raise invalid(
                        op,
                        f"Shapes of all inputs must match: values[0].shape = "
                        f"{fmt_dims(parts[0].shape)} != values[{i}].shape = {fmt_dims(p.shape)}",
                    ) from None
            raise

    return run


def _pack_grad(op: Operation, grad: Any) -> list:
    return unstack(dense(grad), num=op.get_attr("N"), axis=op.get_attr("axis"))


op_registry.register_op("Pack", infer=_pack_infer, kernel=_pack_kernel, grad=_pack_grad)


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """Splits ``value`` along ``axis`` into a list of tensors with that dimension removed (op ``Unpack``).

    Raises:
        ValueError: ``num`` is not given and the dimension is unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.unstack(tf.constant([[1, 2], [3, 4]]), axis=1)
        ...     with tf.Session() as sess:
        ...         print(sess.run(a).tolist(), sess.run(b).tolist())
        [1, 3] [2, 4]
    """
    with op_scope(name, "unstack", [value]) as scope:
        x = convert_to_tensor(value, name="value")
        n = x.shape.ndims
        if n is not None:
            if not -n <= axis < n:
                raise ValueError(f"Argument `axis` = {axis} not in range [{-n}, {n})")
            if num is None:
                num = x.shape[axis].value
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
        return make_op("Unpack", [x], {"num": int(num), "axis": int(axis)}, name=scope).outputs


def _unpack_infer(op: Operation) -> list:
    x = op.inputs[0]
    num, axis = op.get_attr("num"), op.get_attr("axis")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())] * num
    n = x.shape.ndims
    a = canonical_axis(axis, n)
    dims = x.shape.as_list()
    if dims[a] is not None and dims[a] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[a]}")
    return [(x.dtype, TensorShape(dims[:a] + dims[a + 1 :]))] * num


def _unpack_kernel(op: Operation, ctx: Any):
    num, axis = op.get_attr("num"), op.get_attr("axis")
    is_str = is_string(op.inputs[0])

    def run(x: Any) -> Any:
        a = canonical_axis(axis, x.ndim)
        if x.shape[a] != num:
            raise invalid(op, f"Input shape axis {a} must equal {num}, got shape {fmt_dims(x.shape)}")
        parts = tuple(obj(np.take(x, i, axis=a)) for i in range(num)) if is_str else x.unbind(a)
        return parts[0] if num == 1 else parts  # a single output is returned bare

    return run


def _unpack_grad(op: Operation, *grads: Any) -> list:
    return [stack([dense(g) for g in grads], axis=op.get_attr("axis"))]


op_registry.register_op("Unpack", infer=_unpack_infer, kernel=_unpack_kernel, grad=_unpack_grad)
