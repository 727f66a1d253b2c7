"""``tf.nn.softmax`` and ``tf.nn.log_softmax``: the ``Softmax`` and ``LogSoftmax`` ops along any axis.

The ops work on the last axis, as TF's do; another axis is swapped with the last one around the op.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     tf.nn.softmax(tf.zeros([2, 3]), axis=0).op.type
    'Transpose'
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.nn.common import FLOATS, axis_arg, static_int, swap_axis_perm, with_rank_at_least
from dtf_notebook.ops.op_helpers import check_dtype, make_op


def _softmax_infer(op: Any) -> list:
    x = op.inputs[0]
    with_rank_at_least(x.shape, 1)
    return [(x.dtype, x.shape)]


def _softmax_grad(op: Any, grad: Tensor) -> list:
    s = op.outputs[0]
    dot = math_ops.reduce_sum(math_ops.multiply(grad, s), -1, keepdims=True)
    return [math_ops.multiply(math_ops.subtract(grad, dot), s)]


def _log_softmax_grad(op: Any, grad: Tensor) -> list:
    softmax_ = math_ops.exp(op.outputs[0])
    return [math_ops.subtract(grad, math_ops.multiply(math_ops.reduce_sum(grad, -1, keepdims=True), softmax_))]


op_registry.register_op(
    "Softmax", infer=_softmax_infer, kernel=lambda op, ctx: lambda x: torch.softmax(x, -1), grad=_softmax_grad
)
op_registry.register_op(
    "LogSoftmax",
    infer=_softmax_infer,
    kernel=lambda op, ctx: lambda x: torch.log_softmax(x, -1),
    grad=_log_softmax_grad,
)


def _on_last_axis(op_type: str, logits: Any, axis: Any, name: str | None) -> Tensor:
    """Runs a last-axis op along ``axis`` by swapping that axis with the last one (TF's approach)."""
    x = convert_to_tensor(logits, name="logits")
    check_dtype(x, FLOATS, op_type, "logits")
    axis_value = static_int(axis)
    rank = x.shape.ndims
    if axis_value is None:
        raise ValueError(f"`axis` must be a Python integer or a constant tensor, got {axis!r}")
    if axis_value == -1 or (rank is not None and axis_value == rank - 1):
        return make_op(op_type, [x], name=name or op_type).outputs[0]
    if rank is None:
        raise ValueError(f"{op_type} along axis {axis_value} needs the rank of `logits` to be known")
    if not -rank <= axis_value < rank:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of dimensions in the input. "
            f"Received: dim={axis_value}",
        )
    perm = swap_axis_perm(rank, axis_value % rank)
    swapped = make_op(op_type, [array_ops.transpose(x, perm)]).outputs[0]
    return array_ops.transpose(swapped, perm, name=name)


def softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """Softmax along ``axis`` (default: the last): ``exp(logits) / reduce_sum(exp(logits), axis)``.

    ``dim`` is TF1's deprecated alias of ``axis``.

    Raises:
        ValueError: both ``axis`` and ``dim`` are given.
        InvalidArgumentError: ``axis`` is outside the rank of ``logits``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.softmax([[0.0, 0.0], [1.0, 1.0]], axis=0)))
        [[0.26894143 0.26894143]
         [0.7310586  0.7310586 ]]
    """
    return _on_last_axis("Softmax", logits, axis_arg(axis, dim), name)


def log_softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """Log-softmax along ``axis`` (default: the last): ``logits - log(reduce_sum(exp(logits), axis))``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.log_softmax([0.0, 0.0])))
        [-0.6931472 -0.6931472]
    """
    return _on_last_axis("LogSoftmax", logits, axis_arg(axis, dim), name)
