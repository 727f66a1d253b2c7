"""Trigonometric and hyperbolic functions: ``Sin`` ... ``Atanh`` and ``Atan2``, with TF's gradients.

Every op is one row of the registration table and every builder one row of the builder table.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(atan2([1.0, -1.0], [1.0, 1.0])).round(4))
    [ 0.7854 -0.7854]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import FLOAT, binary_op, dense
from dtf_notebook.ops.math._elementwise import binary_doc, operands, unary_doc, unary_op
from dtf_notebook.ops.math.binary import add, multiply, realdiv, subtract
from dtf_notebook.ops.math.broadcast import unbroadcast_pair
from dtf_notebook.ops.math.unary import negative, reciprocal, sqrt, square
from dtf_notebook.ops.op_helpers import broadcast_binary, broadcasting_kernel, same_as_input

__all__ = ["sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh"]


# ---- gradients (TF's formulas: in terms of the input x or the output y) -----------------------------------
def _x(op: Operation) -> Any:
    return op.inputs[0]


def _one_minus_x2(op: Operation) -> Any:
    return subtract(1.0, square(_x(op)))


_GRADS = {
    "Sin": lambda op, g: multiply(g, cos(_x(op))),
    "Cos": lambda op, g: multiply(negative(g), sin(_x(op))),
    "Tan": lambda op, g: multiply(square(reciprocal(cos(_x(op)))), g),
    "Asin": lambda op, g: multiply(g, reciprocal(sqrt(_one_minus_x2(op)))),
    "Acos": lambda op, g: multiply(negative(g), reciprocal(sqrt(_one_minus_x2(op)))),
    "Atan": lambda op, g: multiply(g, reciprocal(add(1.0, square(_x(op))))),
    "Sinh": lambda op, g: multiply(g, cosh(_x(op))),
    "Cosh": lambda op, g: multiply(g, sinh(_x(op))),
    "Asinh": lambda op, g: realdiv(g, cosh(op.outputs[0])),
    "Acosh": lambda op, g: realdiv(g, sinh(op.outputs[0])),
    "Atanh": lambda op, g: multiply(g, reciprocal(_one_minus_x2(op))),
}

for _type, _fn in (
    ("Sin", "sin"),
    ("Cos", "cos"),
    ("Tan", "tan"),
    ("Asin", "asin"),
    ("Acos", "acos"),
    ("Atan", "atan"),
    ("Sinh", "sinh"),
    ("Cosh", "cosh"),
    ("Asinh", "asinh"),
    ("Acosh", "acosh"),
    ("Atanh", "atanh"),
):
    op_registry.register_op(
        _type,
        infer=same_as_input,
        kernel=lambda op, ctx, fn=_fn: getattr(torch, fn),  # looked up when a plan is built: torch loads then
        grad=lambda op, g, f=_GRADS[_type]: [f(op, dense(g))],
    )


def _atan2_grad(op: Operation, grad: Any) -> list[Any]:
    y, x = op.inputs
    grad_inv = realdiv(dense(grad), add(square(y), square(x)))
    return unbroadcast_pair(op, multiply(x, grad_inv), multiply(negative(y), grad_inv))


op_registry.register_op(
    "Atan2", infer=broadcast_binary, kernel=broadcasting_kernel(lambda op, ctx: torch.atan2), grad=_atan2_grad
)


# ---- builders ----------------------------------------------------------------------------------------------
def _unary(fn_name: str, op_type: str, summary: str, example: str, prints: str) -> Callable[..., Tensor]:
    def build(x: Any, name: str | None = None) -> Tensor:
        return unary_op(op_type, x, name, FLOAT)

    return unary_doc(build, fn_name, FLOAT, summary, example, prints)


# Builders: name, op type, dtypes accepted, summary, example argument and what it prints
sin = _unary("sin", "Sin", "Sine elementwise (radians).", "[0.0, 1.5707964]", "[0. 1.]")
cos = _unary("cos", "Cos", "Cosine elementwise (radians).", "[0.0]", "[1.]")
tan = _unary("tan", "Tan", "Tangent elementwise (radians).", "[0.0, 0.7853982]", "[0. 1.]")
asin = _unary("asin", "Asin", "Arcsine elementwise, in ``[-pi/2, pi/2]``.", "[0.0, 0.5]", "[0.        0.5235988]")
acos = _unary("acos", "Acos", "Arccosine elementwise, in ``[0, pi]``.", "[1.0, 0.5]", "[0.        1.0471976]")
atan = _unary("atan", "Atan", "Arctangent elementwise.", "[0.0, 1.0]", "[0.        0.7853982]")
sinh = _unary("sinh", "Sinh", "Hyperbolic sine elementwise.", "[0.0, 1.0]", "[0.        1.1752012]")
cosh = _unary("cosh", "Cosh", "Hyperbolic cosine elementwise.", "[0.0, 1.0]", "[1.        1.5430806]")
asinh = _unary("asinh", "Asinh", "Inverse hyperbolic sine elementwise.", "[0.0, 1.0]", "[0.        0.8813736]")
acosh = _unary("acosh", "Acosh", "Inverse hyperbolic cosine (NaN below 1).", "[1.0, 2.0]", "[0.       1.316958]")
atanh = _unary("atanh", "Atanh", "Inverse hyperbolic tangent elementwise.", "[0.0, 0.5]", "[0.         0.54930615]")


def atan2(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    y, x = operands("atan2", ("y", "x"), args, kwargs)
    return binary_op("Atan2", y, x, name, FLOAT)


atan2 = binary_doc(
    atan2,
    "atan2",
    FLOAT,
    "The angle of the point ``(x, y)``: ``atan(y / x)`` in the right quadrant, in ``[-pi, pi]``.",
    "[1.0], [-1.0]",
    "[2.3561945]",
    arg_names=("y", "x"),
)
