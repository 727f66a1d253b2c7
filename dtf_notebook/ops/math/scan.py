"""Scans along an axis: ``Cumsum``, ``Cumprod`` and ``CumulativeLogsumexp``, each with TF's ``exclusive`` and
``reverse`` attrs and TF's gradients.

An exclusive scan shifts the inclusive one by one step and starts from the identity (0, 1 or -inf); a reverse
scan runs from the end of the axis.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run([cumsum([1, 2, 3], reverse=True), cumprod([1, 2, 3], exclusive=True)]))
    [array([6, 5, 3], dtype=int32), array([1, 1, 2], dtype=int32)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import FLOAT, INDEX, REAL, dense, invalid_argument
from dtf_notebook.ops.math.binary import add, multiply, subtract
from dtf_notebook.ops.math.compare import greater, less
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.math.unary import exp, log, negative
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op

__all__ = ["cumsum", "cumprod"]


def _scan_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, axis = op.inputs
    if axis.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {axis.shape.ndims} for 'axis' of {op.type} '{op.name}'")
    return [(x.dtype, x.shape)]


def _torch_scan(
    scan: Callable[[torch.Tensor, int], torch.Tensor], identity: Callable[[torch.Tensor], float]
) -> Callable[[Operation, Any], Callable[..., Any]]:
    """A scan kernel factory from ``scan(x, dim)`` (inclusive, forward) and the scan's identity value."""

    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
        static = constant_value(op.inputs[1])
        static_axis = int(static) if static is not None else None

        def run(x: torch.Tensor, axis: Any) -> torch.Tensor:
            a = static_axis if static_axis is not None else int(axis)
            n = x.dim()
            if not -n <= a < max(n, 1):
                raise invalid_argument(f"Expected scan axis in the range [{-n}, {n}), but got {a}")
            if n == 0:
                return x.clone()
            a %= n
            if reverse:
                x = x.flip(a)
            out = scan(x, a)
            if exclusive:
                first = torch.full_like(x.narrow(a, 0, 1), identity(x))
                out = torch.cat([first, out.narrow(a, 0, x.shape[a] - 1)], a) if x.shape[a] else out
            return out.flip(a) if reverse else out

        return run

    return factory


def _cumsum_grad(op: Operation, grad: Any) -> list[Any]:
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    return [cumsum(dense(grad), op.inputs[1], exclusive=exclusive, reverse=not reverse), None]


def _cumprod_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.math.safe_div import div_no_nan

    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(multiply(prod, dense(grad)), axis, exclusive=exclusive, reverse=not reverse)
    return [div_no_nan(out, x), None]


def _cumulative_logsumexp_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.array_ops import fill, shape

    x, axis = op.inputs
    grad = dense(grad)
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    # The incoming gradient is split by sign so that its logarithm exists (TF's stable form).
    lowest = fill(shape(grad), convert_to_tensor(grad.dtype.min, dtype=grad.dtype))
    log_grad_positive = where(greater(grad, 0.0), log(grad), lowest)
    log_grad_negative = where(less(grad, 0.0), log(negative(grad)), lowest)
    y = op.outputs[0]

    def part(log_grad: Tensor) -> Tensor:
        scanned = cumulative_logsumexp(subtract(log_grad, y), axis=axis, reverse=not reverse, exclusive=exclusive)
        return exp(add(scanned, x))

    return [subtract(part(log_grad_positive), part(log_grad_negative)), None]


def _sum(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.cumsum(x, dim, dtype=x.dtype)  # torch would widen integer sums to int64


def _prod(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.cumprod(x, dim, dtype=x.dtype)


def _logsumexp(x: torch.Tensor, dim: int) -> torch.Tensor:
    return torch.logcumsumexp(x, dim)


for _type, _scan, _identity, _grad in (
    ("Cumsum", _sum, lambda x: 0, _cumsum_grad),
    ("Cumprod", _prod, lambda x: 1, _cumprod_grad),
    ("CumulativeLogsumexp", _logsumexp, lambda x: float("-inf"), _cumulative_logsumexp_grad),
):
    op_registry.register_op(_type, infer=_scan_infer, kernel=_torch_scan(_scan, _identity), grad=_grad)


def _scan(op_type: str, x: Any, axis: Any, exclusive: bool, reverse: bool, name: str | None, allowed: Any) -> Tensor:
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        check_dtype(x, allowed, op_type)
        axis_t = convert_to_tensor(axis, dtype=None if isinstance(axis, Tensor) else dtypes.int32, name="axis")
        check_dtype(axis_t, INDEX, op_type, "axis")
        attrs = {"exclusive": bool(exclusive), "reverse": bool(reverse)}
        return make_op(op_type, [x, axis_t], attrs, name=scope).outputs[0]


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    """Cumulative sum along ``axis``; ``exclusive`` leaves each element out of its own sum, ``reverse`` sums from
    the end.

    Raises:
        TypeError: ``x`` is not numeric or ``axis`` is not int32/int64.
        InvalidArgumentError: (at run time) ``axis`` is out of range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cumsum([[1, 2], [3, 4]], axis=1, exclusive=True)))
        [[0 1]
         [0 3]]
    """
    return _scan("Cumsum", x, axis, exclusive, reverse, name, REAL)


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None) -> Tensor:
    """Cumulative product along ``axis`` (``exclusive`` and ``reverse`` as for :func:`cumsum`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cumprod([1.0, 2.0, 3.0], reverse=True)))
        [6. 6. 3.]
    """
    return _scan("Cumprod", x, axis, exclusive, reverse, name, REAL)


def cumulative_logsumexp(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.cumulative_logsumexp([0.0, 0.0, 0.0])).round(4))
        [0.     0.6931 1.0986]
    """
    return _scan("CumulativeLogsumexp", x, axis, exclusive, reverse, name, FLOAT)
