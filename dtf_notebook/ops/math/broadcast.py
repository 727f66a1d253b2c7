"""Undoing broadcasting in gradients: the ``BroadcastGradientArgs`` op and :func:`unbroadcast`.

A binary op's gradient has the broadcast shape and must be summed back to each
input's shape. When the static shapes tell which axes were stretched the sum is
built directly; otherwise ``BroadcastGradientArgs`` finds the axes from the
runtime shapes.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     g = unbroadcast(tf.ones([2, 3]), tf.zeros([3]), tf.TensorShape([2, 3]))
    ...     print(sess.run(g))
    [2. 2. 2.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.op_registry import NOT_DIFFERENTIABLE
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import array_ops, is_tensor_like
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import torch_dtype


def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The axes to sum a gradient over to undo broadcasting shape ``s0`` with ``s1`` (TF's op).

    Returns:
        ``(r0, r1)``: 1-D int tensors of axes of the broadcast shape to reduce for each input.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.math_ops import broadcast_gradient_args
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     r0, r1 = broadcast_gradient_args([2, 3], [3])
        ...     print(sess.run([r0, r1]))
        [array([], dtype=int32), array([0], dtype=int32)]
    """
    with name_scope(name, "BroadcastGradientArgs", [s0, s1]) as scope:
        s0 = convert_to_tensor(s0, dtype=dtypes.int32 if not is_tensor_like(s0) else None, name="s0")
        s1 = convert_to_tensor(s1, dtype=s0.dtype if not is_tensor_like(s1) else None, name="s1")
        return tuple(make_op("BroadcastGradientArgs", [s0, s1], name=scope).outputs)


def _bcast_args_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    dtype = op.inputs[0].dtype
    return [(dtype, TensorShape([None])), (dtype, TensorShape([None]))]


def _bcast_args_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = torch_dtype(op.inputs[0].dtype)

    def run(s0: torch.Tensor, s1: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = s0.tolist(), s1.tolist()
        n = max(len(a), len(b))
        pa, pb = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        r0, r1 = [], []
        for i, (da, db) in enumerate(zip(pa, pb)):
            if da == db:
                if da == 1:
                    r0.append(i)
                    r1.append(i)
            elif da == 1:
                r0.append(i)
            elif db == 1:
                r1.append(i)
            else:
                raise errors.InvalidArgumentError(None, None, f"Incompatible shapes: {a} vs. {b}")
        return torch.tensor(r0, dtype=dtype), torch.tensor(r1, dtype=dtype)

    return run


# The shapes are short lists read on the host, so the op runs on the CPU.
op_registry.register_op(
    "BroadcastGradientArgs", infer=_bcast_args_infer, kernel=_bcast_args_kernel, grad=NOT_DIFFERENTIABLE, cpu_only=True
)


def _broadcast_axes(shape: TensorShape, other: TensorShape) -> tuple[list[int], list[int]] | None:
    """Which axes of ``broadcast(shape, other)`` a gradient must be summed over to get back ``shape``.

    Returns ``(leading, size_one)``: the axes ``shape`` lacks, and its size-1 axes the other side may
    stretch (summing a size-1 axis that was not stretched is harmless). None when only the runtime
    sizes can tell, i.e. an unknown size of ``shape`` meets a size of ``other`` that may exceed 1.
    """
    if shape.ndims is None or other.ndims is None:
        return None
    dims, odims = shape.as_list(), other.as_list()
    n = max(len(dims), len(odims))
    lead = n - len(dims)
    padded = [1] * (n - len(odims)) + odims
    ones = []
    for i, d in enumerate(dims):
        o = padded[lead + i]
        if d == 1:
            if o != 1:
                ones.append(lead + i)
        elif d is None and o != 1:
            return None
    return list(range(lead)), ones


def unbroadcast(grad: Any, x: Tensor, other: TensorShape) -> Any:
    """Sums ``grad`` (shaped like the broadcast of ``x`` with ``other``) down to ``x``'s shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     g = unbroadcast(tf.ones([2, 3]), tf.zeros([2, 1]), tf.TensorShape([2, 3]))
        ...     print(sess.run(g).tolist())
        [[3.0], [3.0]]
    """
    # Reductions sit above this module: their gradients are built from the binary ops.
    reduce_sum = op_registry.builders.reduce_sum

    if grad is None:
        return None
    if x.shape.is_fully_defined() and grad.shape == x.shape:
        return grad
    axes = _broadcast_axes(x.shape, other)
    if axes is not None:
        lead, ones = axes
        if ones:
            grad = reduce_sum(grad, ones, keepdims=True)
        if lead:
            grad = reduce_sum(grad, lead)
        return grad
    ao = array_ops()
    sx = ao.shape(x)
    rx, _ = broadcast_gradient_args(sx, ao.shape(grad))
    return ao.reshape(reduce_sum(grad, rx), sx)


def unbroadcast_pair(op: Operation, gx: Any, gy: Any) -> list[Any]:
    """The gradients of a binary op's two inputs from the broadcast-shaped ``gx`` and ``gy``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     z = tf.constant([[1.0], [2.0]]) * tf.constant([10.0, 20.0, 30.0])
        ...     gx, gy = unbroadcast_pair(z.op, tf.ones([2, 3]), tf.ones([2, 3]))
        ...     print(sess.run(gx).tolist(), sess.run(gy))
        [[3.0], [3.0]] [2. 2. 2.]
    """
    x, y = op.inputs[0], op.inputs[1]
    return [unbroadcast(gx, x, y.shape), unbroadcast(gy, y, x.shape)]
