"""Special functions: error functions, gamma-family functions, Bessel functions, ``Expm1``, ``Rint`` and the
float tests ``IsNan``/``IsInf``/``IsFinite``, with TF's gradients.

``Betainc`` runs scipy's ``betainc`` (torch has none); ``IgammaGradA``, the derivative of the regularized
incomplete gamma function in ``a`` (TF's gradient of ``igamma`` uses it), is a float64 central difference
of torch's ``gammainc``, accurate to about 1e-8 relative.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(lgamma([1.0, 3.0])).round(4), sess.run(is_nan([1.0, float("nan")])))
    [0.     0.6931] [False  True]
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math._common import FLOAT, binary_op, dense, fmt_shape
from dtf_notebook.ops.math._elementwise import FLOAT_WIDE, binary_doc, operands, unary_doc, unary_op
from dtf_notebook.ops.math.binary import add, multiply, realdiv, subtract
from dtf_notebook.ops.math.broadcast import unbroadcast, unbroadcast_pair
from dtf_notebook.ops.math.compare import equal
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.math.unary import exp, log, negative, reciprocal, sign, square
from dtf_notebook.ops.op_helpers import (
    _convert_like,
    broadcast_binary,
    broadcasting_kernel,
    check_dtype,
    make_op,
    same_as_input,
)

__all__ = [
    "erf",
    "erfc",
    "lgamma",
    "digamma",
    "expm1",
    "rint",
    "is_nan",
    "is_inf",
    "is_finite",
    "igamma",
    "igammac",
    "zeta",
    "polygamma",
    "betainc",
    "lbeta",
]


def _const(value: float, like: Tensor) -> Tensor:
    return constant(value, dtype=like.dtype)


# ---- one-input ops -------------------------------------------------------------------------------------------
def _x(op: Operation) -> Tensor:
    return op.inputs[0]


def _y(op: Operation) -> Tensor:
    return op.outputs[0]


def _bessel_i1e_grad(op: Operation, g: Tensor) -> Tensor:
    x, y = _x(op), _y(op)
    # The main formula divides by x; its limit at 0 is 0.5.
    safe_x = where(equal(x, 0.0), _ones_like(x), x)
    slope = subtract(bessel_i0e(x), multiply(y, add(sign(x), reciprocal(safe_x))))
    return multiply(g, where(equal(x, 0.0), multiply(_ones_like(x), 0.5), slope))


def _bessel_i1_grad(op: Operation, g: Tensor) -> Tensor:
    x, y = _x(op), _y(op)
    safe_x = where(equal(x, 0.0), _ones_like(x), x)
    slope = subtract(bessel_i0(x), realdiv(y, safe_x))
    return multiply(g, where(equal(x, 0.0), _ones_like(x), slope))


def _ones_like(x: Tensor) -> Tensor:
    from dtf_notebook.ops.array_ops import ones_like

    return ones_like(x)


_UNARY_GRADS: dict[str, Callable[[Operation, Tensor], Tensor]] = {
    "Erf": lambda op, g: multiply(multiply(g, _const(2 / np.sqrt(np.pi), g)), exp(negative(square(_x(op))))),
    "Erfc": lambda op, g: multiply(multiply(g, _const(-2 / np.sqrt(np.pi), g)), exp(negative(square(_x(op))))),
    "Erfinv": lambda op, g: multiply(multiply(g, _const(np.sqrt(np.pi) / 2, g)), exp(square(_y(op)))),
    "Ndtri": lambda op, g: multiply(multiply(g, _const(np.sqrt(2 * np.pi), g)), exp(realdiv(square(_y(op)), 2.0))),
    "Lgamma": lambda op, g: multiply(g, digamma(_x(op))),
    "Digamma": lambda op, g: multiply(g, polygamma(_const(1.0, _x(op)), _x(op))),
    "Expm1": lambda op, g: multiply(g, exp(_x(op))),
    "BesselI0": lambda op, g: multiply(g, bessel_i1(_x(op))),
    "BesselI0e": lambda op, g: multiply(g, subtract(bessel_i1e(_x(op)), multiply(sign(_x(op)), _y(op)))),
    "BesselI1": _bessel_i1_grad,
    "BesselI1e": _bessel_i1e_grad,
}

for _type, _fn in (
    ("Erf", "erf"),
    ("Erfc", "erfc"),
    ("Erfinv", "erfinv"),
    ("Ndtri", "special.ndtri"),
    ("Lgamma", "lgamma"),
    ("Digamma", "digamma"),
    ("Expm1", "expm1"),
    ("BesselI0", "special.i0"),
    ("BesselI0e", "special.i0e"),
    ("BesselI1", "special.i1"),
    ("BesselI1e", "special.i1e"),
):
    op_registry.register_op(
        _type,
        infer=same_as_input,
        kernel=lambda op, ctx, fn=_fn: attrgetter(fn)(torch),  # looked up when a plan is built: torch loads then
        grad=lambda op, g, f=_UNARY_GRADS[_type]: [f(op, dense(g))],
    )

# Rint is piecewise constant (TF gives it no gradient); torch.round rounds halves to even, as rint does.
op_registry.register_op(
    "Rint", infer=same_as_input, kernel=lambda op, ctx: torch.round, grad=op_registry.NOT_DIFFERENTIABLE
)
for _type, _fn in (("IsNan", "isnan"), ("IsInf", "isinf"), ("IsFinite", "isfinite")):
    op_registry.register_op(
        _type,
        infer=lambda op: [(dtypes.bool, op.inputs[0].shape)],
        kernel=lambda op, ctx, fn=_fn: getattr(torch, fn),
        grad=op_registry.NOT_DIFFERENTIABLE,
    )


def _unary(fn_name: str, op_type: str, summary: str, example: str, prints: str, namespace: str = "tf"):
    def build(x: Any, name: str | None = None) -> Tensor:
        return unary_op(op_type, x, name, FLOAT)

    return unary_doc(build, fn_name, FLOAT, summary, example, prints, namespace, digits=4)


# Builders: name, op type, summary, example argument and what it prints[, namespace of the example].
erf = _unary("erf", "Erf", "The Gauss error function elementwise.", "[0.0, 1.0]", "[0.     0.8427]")
erfc = _unary("erfc", "Erfc", "The complementary error function ``1 - erf(x)``.", "[0.0, 1.0]", "[1.     0.1573]")
erfinv = _unary("erfinv", "Erfinv", "The inverse of ``erf``.", "[0.0, 0.5]", "[0.     0.4769]", "tf.math")
ndtri = _unary("ndtri", "Ndtri", "The inverse of the standard normal CDF.", "[0.5, 0.975]", "[0.   1.96]", "tf.math")
lgamma = _unary("lgamma", "Lgamma", "``log(|Gamma(x)|)`` elementwise.", "[1.0, 3.0]", "[0.     0.6931]")
digamma = _unary("digamma", "Digamma", "The derivative of ``lgamma``.", "[1.0]", "[-0.5772]")
expm1 = _unary("expm1", "Expm1", "``exp(x) - 1``, accurate near 0.", "[0.0, 1.0]", "[0.     1.7183]")
bessel_i0 = _unary(
    "bessel_i0",
    "BesselI0",
    "The modified Bessel function of order 0.",
    "[0.0, 1.0]",
    "[1.     1.2661]",
    "tf.math",
)
bessel_i0e = _unary(
    "bessel_i0e", "BesselI0e", "``exp(-|x|) * bessel_i0(x)``.", "[0.0, 1.0]", "[1.     0.4658]", "tf.math"
)
bessel_i1 = _unary(
    "bessel_i1",
    "BesselI1",
    "The modified Bessel function of order 1.",
    "[0.0, 1.0]",
    "[0.     0.5652]",
    "tf.math",
)
bessel_i1e = _unary(
    "bessel_i1e", "BesselI1e", "``exp(-|x|) * bessel_i1(x)``.", "[0.0, 1.0]", "[0.     0.2079]", "tf.math"
)


def rint(x: Any, name: str | None = None) -> Tensor:
    """The nearest integer elementwise, halves to the even integer (float results).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.rint([0.5, 1.5, -1.7])))
        [ 0.  2. -2.]
    """
    return unary_op("Rint", x, name, FLOAT)


def _float_test(fn_name: str, op_type: str, summary: str, prints: str):
    def build(x: Any, name: str | None = None) -> Tensor:
        return unary_op(op_type, x, name, FLOAT)

    return unary_doc(build, fn_name, FLOAT, summary, '[1.0, float("nan"), float("inf")]', prints)


is_nan = _float_test("is_nan", "IsNan", "Whether each element is NaN.", "[False  True False]")
is_inf = _float_test("is_inf", "IsInf", "Whether each element is +inf or -inf.", "[False False  True]")
is_finite = _float_test(
    "is_finite", "IsFinite", "Whether each element is neither NaN nor infinite.", "[ True False False]"
)


def erfcinv(x: Any, name: str | None = None) -> Tensor:
    """The inverse of ``erfc``, as TF computes it: ``-ndtri(x / 2) / sqrt(2)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.erfcinv([0.5, 1.5])))
        [ 0.4769363 -0.4769363]
    """
    with name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x, name="start")
        return multiply(negative(ndtri(multiply(x, 0.5))), _const(np.sqrt(0.5), x))


# ---- two-input special functions -----------------------------------------------------------------------------
def _polygamma_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(n: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        n, x = torch.broadcast_tensors(n, x)
        out = torch.full_like(x, float("nan"))  # TF: NaN where the order is not a non-negative integer
        for order in torch.unique(n).tolist():
            if order >= 0 and float(order).is_integer():
                mask = n == order
                out[mask] = torch.polygamma(int(order), x[mask])
        return out

    return run


def _igamma_grads(op: Operation, grad: Any) -> tuple[Tensor, Tensor]:
    a, x = op.inputs
    grad = dense(grad)
    partial_a = make_op("IgammaGradA", [a, x], name="IgammaGradA").outputs[0]
    # In log space: Gamma(a) and x**(a-1) may overflow on their own.
    partial_x = exp(subtract(add(negative(x), multiply(subtract(a, 1.0), log(x))), lgamma(a)))
    return multiply(partial_a, grad), multiply(partial_x, grad)


def _igamma_grad(op: Operation, grad: Any) -> list[Any]:
    ga, gx = _igamma_grads(op, grad)
    return unbroadcast_pair(op, ga, gx)


def _igammac_grad(op: Operation, grad: Any) -> list[Any]:
    ga, gx = _igamma_grads(op, grad)
    return unbroadcast_pair(op, negative(ga), negative(gx))


def _igamma_grad_a_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        a64, x64 = a.double(), x.double()
        h = 1e-5 * torch.clamp(a64.abs(), min=1.0)
        h = torch.minimum(h, a64 / 2)  # stay inside a > 0
        slope = (torch.special.gammainc(a64 + h, x64) - torch.special.gammainc(a64 - h, x64)) / (2 * h)
        return slope.to(a.dtype)

    return run


def _zeta_grad(op: Operation, grad: Any) -> list[Any]:
    x, q = op.inputs
    partial_q = multiply(negative(x), zeta(add(x, 1.0), q))
    return [None, unbroadcast(multiply(partial_q, dense(grad)), q, x.shape)]


def _polygamma_grad(op: Operation, grad: Any) -> list[Any]:
    n, x = op.inputs
    return [None, unbroadcast(multiply(polygamma(add(n, 1.0), x), dense(grad)), x, n.shape)]


for _type, _kernel, _grad in (
    ("Igamma", lambda op, ctx: torch.special.gammainc, _igamma_grad),
    ("Igammac", lambda op, ctx: torch.special.gammaincc, _igammac_grad),
    ("IgammaGradA", _igamma_grad_a_kernel, None),
    ("Zeta", lambda op, ctx: torch.special.zeta, _zeta_grad),
    ("Polygamma", _polygamma_kernel, _polygamma_grad),
):
    op_registry.register_op(_type, infer=broadcast_binary, kernel=broadcasting_kernel(_kernel), grad=_grad)


def igamma(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    a, x = operands("igamma", ("a", "x"), args, kwargs)
    return binary_op("Igamma", a, x, name, FLOAT_WIDE)


def igammac(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    a, x = operands("igammac", ("a", "x"), args, kwargs)
    return binary_op("Igammac", a, x, name, FLOAT_WIDE)


def zeta(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    x, q = operands("zeta", ("x", "q"), args, kwargs)
    return binary_op("Zeta", x, q, name, FLOAT_WIDE)


def polygamma(*args: Any, name: str | None = None, **kwargs: Any) -> Tensor:
    a, x = operands("polygamma", ("a", "x"), args, kwargs)
    return binary_op("Polygamma", a, x, name, FLOAT_WIDE)


igamma = binary_doc(
    igamma,
    "igamma",
    FLOAT_WIDE,
    "The lower regularized incomplete gamma function ``P(a, x)``.",
    "[1.0, 2.0], 1.0",
    "[0.6321 0.2642]",
    arg_names=("a", "x"),
    digits=4,
)
igammac = binary_doc(
    igammac,
    "igammac",
    FLOAT_WIDE,
    "The upper regularized incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.",
    "[1.0, 2.0], 1.0",
    "[0.3679 0.7358]",
    arg_names=("a", "x"),
    digits=4,
)
zeta = binary_doc(
    zeta,
    "zeta",
    FLOAT_WIDE,
    "The Hurwitz zeta function ``sum((q + n) ** -x for n >= 0)``.",
    "2.0, [1.0, 2.0]",
    "[1.6449 0.6449]",
    arg_names=("x", "q"),
    digits=4,
)
polygamma = binary_doc(
    polygamma,
    "polygamma",
    FLOAT_WIDE,
    "The polygamma function: the ``a``-th derivative of ``digamma`` (NaN where ``a`` is not a natural number).",
    "[0.0, 1.0], 1.0",
    "[-0.5772  1.6449]",
    arg_names=("a", "x"),
    digits=4,
)


# ---- betainc -------------------------------------------------------------------------------------------------
def _betainc_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    shapes = [t.shape for t in op.inputs]
    shape = shapes[0]
    try:
        for s in shapes[1:]:
            shape = broadcast_shapes(shape, s)
    except ValueError:
        text = ", ".join(fmt_shape(s) for s in shapes)
        raise ValueError(f"Shapes of a, b and x are inconsistent: {text}") from None
    return [(op.inputs[0].dtype, shape)]


def _betainc_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    from scipy import special  # a dependency of scikit-learn; imported only when a Betainc runs

    def run(a: torch.Tensor, b: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        out = special.betainc(a.cpu().numpy(), b.cpu().numpy(), x.cpu().numpy())
        return torch.from_numpy(np.asarray(out, dtype=a.cpu().numpy().dtype)).to(a.device)

    return run


def _betainc_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.math.safe_div import xlog1py, xlogy  # safe_div sits above this module

    a, b, x = op.inputs
    log_beta = subtract(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    partial_x = exp(subtract(add(xlog1py(subtract(b, 1.0), negative(x)), xlogy(subtract(a, 1.0), x)), log_beta))
    other = broadcast_shapes(a.shape, b.shape)
    return [None, None, unbroadcast(multiply(partial_x, dense(grad)), x, other)]


op_registry.register_op("Betainc", infer=_betainc_infer, kernel=_betainc_kernel, grad=_betainc_grad, cpu_only=True)


def betainc(a: Any, b: Any, x: Any, name: str | None = None) -> Tensor:
    """The regularized incomplete beta function ``I_x(a, b)`` (its gradient is defined for ``x`` only, as in TF).

    Raises:
        TypeError: ``a`` is not float32/float64, or ``b`` or ``x`` is a tensor of another dtype than ``a``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.betainc(2.0, 3.0, [0.0, 0.5, 1.0])))
        [0.     0.6875 1.    ]
    """
    with name_scope(name, "Betainc", [a, b, x]) as scope:
        # TF's op helper: the first input fixes the type (a Python int alone is int32 and refused), the others are
        # converted to it, so betainc(x_float, 2, 2) works and betainc(2, 2, x_float) does not.
        a = convert_to_tensor(a, name="a")
        check_dtype(a, FLOAT_WIDE, "Betainc", "a")
        b = _convert_like(b, a.dtype, "Betainc", "b", "a")
        x = _convert_like(x, a.dtype, "Betainc", "x", "a")
        return make_op("Betainc", [a, b, x], name=scope).outputs[0]


def lbeta(x: Any, name: str | None = None) -> Tensor:
    """``log(|Beta(x)|)`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))`` (TF's composite).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.lbeta([[1.0, 1.0], [2.0, 3.0]])).round(4))
        [ 0.     -2.4849]
    """
    from dtf_notebook.ops.math.reduce import reduce_sum

    with name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = reduce_sum(lgamma(x), axis=[-1])
        sum_x = reduce_sum(x, axis=[-1])
        log_gamma_sum_x = lgamma(sum_x)
        return subtract(log_prod_gamma_x, log_gamma_sum_x)
