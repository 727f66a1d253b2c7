"""Unary elementwise ops (``Neg``, ``Abs``, ``Exp``, ``Sqrt``, ``Sigmoid``, ``Floor``, ...) and the fused
gradient ops (``SqrtGrad``, ``SigmoidGrad``, ...) that their gradients use, as TF's do.

Every op is one row of the registration table and every builder one row of the builder table.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(sqrt(square([-3.0, 4.0]))))
    [3. 4.]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import COMPLEX, FLOAT, REAL, SIGNED, array_ops, dense, is_complex, table_builder
from dtf_notebook.ops.math.binary import add, multiply, realdiv, subtract
from dtf_notebook.ops.op_helpers import check_dtype, make_op, same_as_input


def _unary(op_type: str, x: Any, name: str | None, allowed: Sequence[dtypes.DType]) -> Tensor:
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        check_dtype(x, allowed, op_type)
        return make_op(op_type, [x], name=scope).outputs[0]


# ---- gradients -----------------------------------------------------------------------------------------
def _fused_grad(op_type: str, y: Tensor, dy: Any) -> Tensor:
    """TF's fused gradient ops (SigmoidGrad, TanhGrad, ...): ``f(y, dy)`` from the op's output ``y``."""
    return make_op(op_type, [y, convert_to_tensor(dense(dy), dtype=y.dtype)], name=op_type).outputs[0]


def _grad_from_output(op: Operation, grad: Any) -> list[Any]:
    """The gradient of ``Sqrt``, ``Sigmoid``, ...: their fused ``<type>Grad`` op on their output."""
    return [_fused_grad(op.type + "Grad", op.outputs[0], grad)]


for _type, _fn, _grad in (
    ("Neg", "neg", lambda op, g: [negative(dense(g))]),
    ("Abs", "abs", lambda op, g: [multiply(dense(g), sign(op.inputs[0]))]),
    ("Sign", "sign", lambda op, g: [array_ops().zeros_like(op.inputs[0])]),
    ("Exp", "exp", lambda op, g: [multiply(dense(g), op.outputs[0])]),
    ("Log", "log", lambda op, g: [multiply(dense(g), reciprocal(op.inputs[0]))]),
    ("Log1p", "log1p", lambda op, g: [multiply(dense(g), reciprocal(add(1, op.inputs[0])))]),
    ("Square", "square", lambda op, g: [multiply(dense(g), multiply(2, op.inputs[0]))]),
    ("Sqrt", "sqrt", _grad_from_output),
    ("Rsqrt", "rsqrt", _grad_from_output),
    ("Reciprocal", "reciprocal", _grad_from_output),
    ("Sigmoid", "sigmoid", _grad_from_output),
    ("Tanh", "tanh", _grad_from_output),
    # Piecewise constant: TF defines their gradient as None.
    ("Floor", "floor", op_registry.NOT_DIFFERENTIABLE),
    ("Ceil", "ceil", op_registry.NOT_DIFFERENTIABLE),
    ("Round", "round", op_registry.NOT_DIFFERENTIABLE),
):
    # The kernel is torch's function itself, looked up by name when a plan is built (torch loads then).
    op_registry.register_op(_type, infer=same_as_input, kernel=lambda op, ctx, fn=_fn: getattr(torch, fn), grad=_grad)


# ---- the fused gradient ops and their own gradients (for second derivatives) ---------------------------
def _sigmoid_grad_wrt_y(op: Operation, g: Tensor) -> Tensor:
    y, dy = op.inputs
    g_dy = multiply(g, dy)
    return subtract(g_dy, multiply(multiply(2, g_dy), y))


def _minus_two_y_dy(op: Operation, g: Tensor) -> Tensor:
    y, dy = op.inputs
    return multiply(multiply(-2, g), multiply(dy, y))


def _sqrt_grad_wrt_y(op: Operation, g: Tensor) -> Tensor:
    # The op computes 0.5 * dy / y, so its derivative in y is -output / y.
    return negative(realdiv(multiply(g, op.outputs[0]), op.inputs[0]))


def _rsqrt_grad_wrt_y(op: Operation, g: Tensor) -> Tensor:
    y, dy = op.inputs
    return multiply(multiply(-1.5, g), multiply(dy, square(y)))


def _fused_grad_grad(wrt_y: Callable[[Operation, Tensor], Tensor]) -> Callable[[Operation, Any], list[Any]]:
    """The gradient of a fused op ``f(y, dy)``: ``wrt_y`` gives y's; f is linear in dy, so dy's is f itself."""

    def grad_fn(op: Operation, grad: Any) -> list[Any]:
        return [wrt_y(op, dense(grad)), _fused_grad(op.type, op.inputs[0], grad)]

    return grad_fn


for _type, _fn, _wrt_y in (
    ("SigmoidGrad", lambda y, dy: dy * (y * (1 - y)), _sigmoid_grad_wrt_y),
    ("TanhGrad", lambda y, dy: dy * (1 - y * y), _minus_two_y_dy),
    ("SqrtGrad", lambda y, dy: dy * 0.5 / y, _sqrt_grad_wrt_y),
    ("RsqrtGrad", lambda y, dy: dy * (y * y * y) * -0.5, _rsqrt_grad_wrt_y),
    ("ReciprocalGrad", lambda y, dy: -dy * (y * y), _minus_two_y_dy),
):
    op_registry.register_op(
        _type, infer=same_as_input, kernel=lambda op, ctx, fn=_fn: fn, grad=_fused_grad_grad(_wrt_y)
    )


# ---- builders ------------------------------------------------------------------------------------------
def _elementwise(
    fn_name: str, op_type: str, allowed: Sequence[dtypes.DType], summary: str, example: str, prints: str
) -> Callable[..., Tensor]:
    def build(x: Any, name: str | None = None) -> Tensor:
        return _unary(op_type, x, name, allowed)

    raises = [f"TypeError: ``x`` has a dtype not among: {', '.join(d.name for d in allowed)}."]
    return table_builder(build, fn_name, summary, example, prints, raises)


# Builders: name, op type, dtypes accepted, summary, example argument and what it prints.
negative = _elementwise("negative", "Neg", SIGNED + COMPLEX, "``-x`` elementwise.", "[1, -2]", "[-1  2]")
_real_abs = _elementwise("abs", "Abs", SIGNED, "``|x|`` elementwise.", "[-1.5, 2.0]", "[1.5 2. ]")


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """``|x|`` elementwise (``Abs``); for a complex ``x`` its magnitude, a real tensor (``ComplexAbs``), as in TF.

    Raises:
        TypeError: ``x`` is neither signed real nor complex.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run([tf.abs([-1.5, 2.0]), tf.abs(tf.constant([3 + 4j], tf.complex64))]))
        [array([1.5, 2. ], dtype=float32), array([5.], dtype=float32)]
    """
    if is_complex(x):
        return op_registry.builders.complex_abs(x, name)  # complex tensors' ops build on this module
    return _real_abs(x, name)


sign = _elementwise("sign", "Sign", SIGNED, "-1, 0 or 1 elementwise, by the sign of ``x``.", "[-3, 0, 2]", "[-1  0  1]")
exp = _elementwise("exp", "Exp", FLOAT, "``e ** x`` elementwise.", "[0.0, 1.0]", "[1.        2.7182817]")
log = _elementwise("log", "Log", FLOAT, "Natural logarithm elementwise.", "[1.0, 100.0]", "[0.        4.6051702]")
log1p = _elementwise("log1p", "Log1p", FLOAT, "``log(1 + x)``, accurate near 0.", "[0.0, 1e-8]", "[0.e+00 1.e-08]")
sqrt = _elementwise("sqrt", "Sqrt", FLOAT, "Square root elementwise.", "[4.0, 9.0]", "[2. 3.]")
rsqrt = _elementwise("rsqrt", "Rsqrt", FLOAT, "``1 / sqrt(x)`` elementwise.", "[4.0, 16.0]", "[0.5  0.25]")
square = _elementwise("square", "Square", REAL, "``x * x`` elementwise.", "[-3, 2]", "[9 4]")
reciprocal = _elementwise("reciprocal", "Reciprocal", FLOAT, "``1 / x`` elementwise.", "[2.0, 4.0]", "[0.5  0.25]")
sigmoid = _elementwise("sigmoid", "Sigmoid", FLOAT, "``1 / (1 + exp(-x))`` elementwise.", "[0.0]", "[0.5]")
tanh = _elementwise("tanh", "Tanh", FLOAT, "Hyperbolic tangent elementwise.", "[0.0]", "[0.]")
floor = _elementwise("floor", "Floor", FLOAT, "The largest integer not greater than ``x``.", "[-1.5, 1.5]", "[-2.  1.]")
ceil = _elementwise("ceil", "Ceil", FLOAT, "The smallest integer not less than ``x``.", "[-1.5, 1.5]", "[-1.  2.]")


def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Rounds to the nearest integer, halves to even (banker's rounding); integers are returned as they are.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.round([0.5, 1.5, 2.5, -0.5])))
        [ 0.  2.  2. -0.]
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return _unary("Round", x, name, FLOAT)
