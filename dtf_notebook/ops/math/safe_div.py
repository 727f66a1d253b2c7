"""Divisions and products that are safe at zero, truncating division, and ``NextAfter``: ``DivNoNan``,
``MulNoNan``, ``Xlogy``, ``Xdivy``, ``Xlog1py``, ``TruncateDiv``, ``TruncateMod`` and ``NextAfter``.

The ``*NoNan`` and ``Xlog*`` kernels give 0 wherever the guarding operand is 0, even where the other one is
NaN or infinite (TF's rule), so their gradients are defined everywhere.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(div_no_nan([1.0, 2.0], [0.0, 4.0])), sess.run(truncatediv([-7, 7], 2)))
    [0.  0.5] [-3  3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import op_registry
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import FLOAT, REAL, binary_op, dense
from dtf_notebook.ops.math._elementwise import FLOAT_WIDE, binary_doc, operands, torch_zeros_where
from dtf_notebook.ops.math.binary import add, multiply, pow
from dtf_notebook.ops.math.broadcast import unbroadcast_pair
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import not_equal
from dtf_notebook.ops.math.unary import negative
from dtf_notebook.ops.op_helpers import binary_operands, broadcast_binary, broadcasting_kernel, check_dtype, make_op

__all__ = ["div_no_nan", "truncatediv", "truncatemod"]


# ---- kernels -------------------------------------------------------------------------------------------------
def _guarded(guard: int, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]):
    """A kernel ``fn(a, b)`` that gives 0 wherever operand ``guard`` (0 or 1) is 0."""

    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        out = fn(a, b)
        mask = (a if guard == 0 else b) == 0
        return torch_zeros_where(mask.expand(out.shape) if mask.shape != out.shape else mask, out)

    return lambda op, ctx: run


def _int_checked(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]):
    """A kernel whose integer form reports a zero divisor as TF does."""

    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        if not op.inputs[0].dtype.is_integer:
            return fn

        def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            if bool((b == 0).any()):
                raise errors.InvalidArgumentError(None, op, "Integer division by zero")
            return fn(a, b)

        return run

    return factory


def _truncate_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if a.dtype.is_floating_point:
        return torch.trunc(a / b)
    return torch.div(a, b, rounding_mode="trunc")


# ---- gradients (TF's) ----------------------------------------------------------------------------------------
def _not_zero(x: Tensor) -> Tensor:
    return cast(not_equal(x, 0.0), x.dtype)


def _xlogy_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    grad = dense(grad)
    return unbroadcast_pair(op, multiply(xlogy(_not_zero(x), y), grad), multiply(xdivy(x, y), grad))


def _xlog1py_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    grad = dense(grad)
    return unbroadcast_pair(op, multiply(xlog1py(_not_zero(x), y), grad), multiply(xdivy(x, add(y, 1.0)), grad))


def _xdivy_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    grad = dense(grad)
    partial_y = xdivy(negative(x), pow(y, 2.0))
    return unbroadcast_pair(op, multiply(xdivy(_not_zero(x), y), grad), multiply(partial_y, grad))


def _div_no_nan_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    grad = dense(grad)
    return unbroadcast_pair(op, div_no_nan(grad, y), multiply(grad, div_no_nan(div_no_nan(negative(x), y), y)))


def _mul_no_nan_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    grad = dense(grad)
    return unbroadcast_pair(op, multiply_no_nan(grad, y), multiply_no_nan(x, grad))


def _next_after_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.array_ops import zeros_like

    grad = dense(grad)
    return unbroadcast_pair(op, grad, zeros_like(grad))


for _type, _kernel, _grad in (
    ("Xlogy", _guarded(0, lambda a, b: a * torch.log(b)), _xlogy_grad),
    ("Xlog1py", _guarded(0, lambda a, b: a * torch.log1p(b)), _xlog1py_grad),
    ("Xdivy", _guarded(0, lambda a, b: torch.div(a, b)), _xdivy_grad),
    ("DivNoNan", _guarded(1, lambda a, b: torch.div(a, b)), _div_no_nan_grad),
    ("MulNoNan", _guarded(1, lambda a, b: torch.mul(a, b)), _mul_no_nan_grad),
    ("TruncateDiv", _int_checked(_truncate_div), op_registry.NOT_DIFFERENTIABLE),
    # TF registers no gradient for TruncateMod: differentiating through it is an error there too.
    ("TruncateMod", _int_checked(lambda a, b: torch.fmod(a, b)), None),
    ("NextAfter", lambda op, ctx: torch.nextafter, _next_after_grad),
):
    op_registry.register_op(_type, infer=broadcast_binary, kernel=broadcasting_kernel(_kernel), grad=_grad)


# ---- builders ------------------------------------------------------------------------------------------------
def _xy(fn_name: str, op_type: str, allowed: Any, summary: str, example: str, prints: str, namespace: str = "tf"):
    def build(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
        x, y = operands(fn_name, ("x", "y"), args, kwargs)
        return binary_op(op_type, x, y, name, allowed)

    return binary_doc(build, fn_name, allowed, summary, example, prints, namespace)


def _scoped(fn_name: str, op_type: str, summary: str, example: str, prints: str):
    """A builder that opens the scope ``fn_name`` and names the op by its type inside it, as TF's xdivy does."""

    def build(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
        x, y = operands(fn_name, ("x", "y"), args, kwargs)
        with name_scope(name, fn_name, [x]):
            return binary_op(op_type, x, y, None, FLOAT)

    return binary_doc(build, fn_name, FLOAT, summary, example, prints, "tf.math")


# Builders: name, op type, dtypes accepted, summary, example arguments and what they print[, namespace].
xlogy = _xy(
    "xlogy", "Xlogy", FLOAT, "``x * log(y)``, and 0 where ``x`` is 0.", "[0.0, 2.0], [0.0, 1.0]", "[0. 0.]", "tf.math"
)
xlog1py = _scoped(
    "xlog1py", "Xlog1py", "``x * log1p(y)``, and 0 where ``x`` is 0.", "[0.0, 2.0], [-1.0, 0.0]", "[0. 0.]"
)
xdivy = _scoped("xdivy", "Xdivy", "``x / y``, and 0 where ``x`` is 0.", "[0.0, 2.0], [0.0, 4.0]", "[0.  0.5]")
truncatediv = _xy(
    "truncatediv", "TruncateDiv", REAL, "``x / y`` rounded toward zero (C's integer division).", "[-7, 7], 2", "[-3  3]"
)
truncatemod = _xy(
    "truncatemod",
    "TruncateMod",
    REAL,
    "The remainder of :func:`truncatediv` (takes ``x``'s sign).",
    "[-7, 7], 3",
    "[-1  1]",
)


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y``, and 0 where ``y`` is 0; integers are first cast to float as :func:`truediv` does.

    Raises:
        TypeError: the dtypes differ or cannot be divided.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.div_no_nan([1.0, 3.0], [0.0, 2.0])), sess.run(tf.div_no_nan(3, 2)))
        [0.  1.5] 1.5
    """
    from dtf_notebook.ops.math.binary import _TRUEDIV_TABLE

    with name_scope(name, "div_no_nan", [x, y]) as scope:
        x, y = binary_operands(x, y, "DivNoNan")
        if x.dtype not in _TRUEDIV_TABLE:
            raise TypeError(f"Invalid dtype {x.dtype!r} in tf.math.divide_no_nan.")
        target = _TRUEDIV_TABLE[x.dtype]
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        return make_op("DivNoNan", [x, y], name=scope).outputs[0]


divide_no_nan = div_no_nan


def multiply_no_nan(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y``, and 0 where ``y`` is 0 (even if ``x`` is NaN or infinite).

    Raises:
        TypeError: the dtypes differ or are not float.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.multiply_no_nan([float("inf"), 2.0], [0.0, 3.0])))
        [0. 6.]
    """
    with name_scope(name, "multiply_no_nan", [x, y]) as scope:
        x, y = binary_operands(x, y, "MulNoNan")
        check_dtype(x, FLOAT, "MulNoNan")
        return make_op("MulNoNan", [x, y], name=scope).outputs[0]


def nextafter(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    x1, x2 = operands("nextafter", ("x1", "x2"), args, kwargs)
    return binary_op("NextAfter", x1, x2, name, FLOAT_WIDE)


nextafter = binary_doc(
    nextafter,
    "nextafter",
    FLOAT_WIDE,
    "The next representable value after ``x1`` in the direction of ``x2``.",
    "[1.0], [2.0]",
    "[1.0000001]",
    "tf.math",
    arg_names=("x1", "x2"),
)
