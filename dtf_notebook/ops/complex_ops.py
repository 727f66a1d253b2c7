"""Complex tensors (``tf.complex64``, ``tf.complex128``): ``tf.complex`` (``Complex``), their parts ``Real``, ``Imag``,
``Conj``, ``Angle`` and ``ComplexAbs`` with TF's gradients, and ``tf.to_complex64``/``to_complex128``.

``tf.real``, ``tf.imag``, ``tf.conj`` and ``tf.angle`` use these ops for complex inputs (and stay identities or
constants for real ones). Gradients follow TF's (and torch's) convention: the gradient of a real loss w.r.t. a complex
tensor ``z`` is ``dL/d re(z) + i dL/d im(z)``. The math ops take complex tensors for ``add``, ``subtract``,
``multiply``, ``negative``, ``matmul`` (``adjoint_*`` conjugating), ``reduce_sum``, ``equal``/``not_equal``, ``abs``
(``ComplexAbs``) and ``transpose(conjugate=True)``, with TF's conjugated gradients, and the FFTs
(``ops/spectral_ops.py``); the rest (``exp``, ``divide``, ``reduce_mean``, ``linalg.inv``, ...) refuse complex
tensors with a TypeError when built.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     z = complex([3.0, 0.0], [4.0, -1.0])
    ...     print(sess.run([z, complex_abs(z)]))
    [array([3.+4.j, 0.-1.j], dtype=complex64), array([5., 1.], dtype=float32)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math.binary import multiply, realdiv
from dtf_notebook.ops.math.broadcast import unbroadcast_pair
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.math.unary import negative
from dtf_notebook.ops.op_helpers import broadcasting_kernel, make_op

__all__ = ["complex", "to_complex64", "to_complex128"]

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
COMPLEX = (dtypes.complex64, dtypes.complex128)


def _require_complex(t: Tensor, op_type: str) -> None:
    if t.dtype not in COMPLEX:
        raise TypeError(
            f"Value passed to parameter 'input' has DataType {t.dtype.name} not in list of allowed values: "
            f"complex64, complex128 (op {op_type})"
        )


# ---- Complex ---------------------------------------------------------------------------------------------------
def _complex_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, y = op.inputs
    return [(op.get_attr("Tout"), broadcast_shapes(x.shape, y.shape))]


def _complex_grad(op: Operation, grad: Tensor) -> list[Any]:
    return unbroadcast_pair(op, real_part(grad), imag_part(grad))


op_registry.register_op(
    "Complex",
    infer=_complex_infer,
    kernel=broadcasting_kernel(lambda op, ctx: torch.complex),
    grad=_complex_grad,
)


def complex(real: Any, imag: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """The complex tensor ``real + i * imag`` (float32 parts give complex64, float64 parts complex128; shapes
    broadcast).

    Raises:
        TypeError: the parts are not both float32 or both float64.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.complex(1.0, [2.0, 3.0])))
        [1.+2.j 1.+3.j]
    """
    with name_scope(name, "Complex", [real, imag]) as scope:
        re = convert_to_tensor(real, name="real")
        im = convert_to_tensor(imag, name="imag")
        if re.dtype is not im.dtype or re.dtype not in _COMPLEX_OF:
            raise TypeError(
                f"real and imag must be both float32 or both float64, got {re.dtype.name} and {im.dtype.name}"
            )
        return make_op("Complex", [re, im], {"T": re.dtype, "Tout": _COMPLEX_OF[re.dtype]}, name=scope).outputs[0]


# ---- parts -----------------------------------------------------------------------------------------------------
def _part_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    return [(x.dtype.real_dtype, x.shape)]


def _angle_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    return torch.angle


def _real_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [complex(grad, _zeros(grad))]


def _imag_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [complex(_zeros(grad), grad)]


def _zeros(t: Tensor) -> Tensor:
    from dtf_notebook.ops.array.fill import zeros_like

    return zeros_like(t)


def _abs_grad(op: Operation, grad: Tensor) -> list[Any]:
    x, magnitude = op.inputs[0], op.outputs[0]
    # d|z| = re(z)/|z| d re + im(z)/|z| d im; 0 where z is 0, as TF's div_no_nan.
    re = div_no_nan(multiply(grad, real_part(x)), magnitude)
    im = div_no_nan(multiply(grad, imag_part(x)), magnitude)
    return [complex(re, im)]


def _angle_grad(op: Operation, grad: Tensor) -> list[Any]:
    x = op.inputs[0]
    re, im = real_part(x), imag_part(x)
    # angle = atan2(im, re): d angle = (re d im - im d re) / |z|^2.
    squared = multiply(re, re) + multiply(im, im)
    return [complex(negative(realdiv(multiply(grad, im), squared)), realdiv(multiply(grad, re), squared))]


for _type, _kernel, _infer, _grad in (
    ("Real", lambda op, ctx: lambda z: torch.real(z).clone(), _part_infer, _real_grad),
    ("Imag", lambda op, ctx: lambda z: torch.imag(z).clone(), _part_infer, _imag_grad),
    ("ComplexAbs", lambda op, ctx: torch.abs, _part_infer, _abs_grad),
    ("Angle", _angle_kernel, _part_infer, _angle_grad),
    (
        "Conj",
        lambda op, ctx: lambda z: torch.conj(z).resolve_conj(),
        lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        lambda op, grad: [conjugate(grad)],
    ),
):
    op_registry.register_op(_type, infer=_infer, kernel=_kernel, grad=_grad)


def _part(op_type: str, x: Any, name: str | None, default: str) -> Tensor:
    with name_scope(name, default, [x]) as scope:
        t = convert_to_tensor(x, name="input")
        _require_complex(t, op_type)
        attrs = {"T": t.dtype, "Tout": t.dtype.real_dtype} if op_type != "Conj" else {"T": t.dtype}
        return make_op(op_type, [t], attrs, name=scope).outputs[0]


def real_part(x: Any, name: str | None = None) -> Tensor:
    """The real part of a complex tensor (``tf.real`` on complex input).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(real_part(tf.complex([1.5], [2.0]))))
        [1.5]
    """
    return _part("Real", x, name, "Real")


def imag_part(x: Any, name: str | None = None) -> Tensor:
    """The imaginary part of a complex tensor (``tf.imag`` on complex input).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(imag_part(tf.complex([1.5], [2.0]))))
        [2.]
    """
    return _part("Imag", x, name, "Imag")


def conjugate(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate (``tf.conj`` on complex input).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(conjugate(tf.complex([1.0], [2.0]))))
        [1.-2.j]
    """
    return _part("Conj", x, name, "Conj")


def angle_of(x: Any, name: str | None = None) -> Tensor:
    """The argument ``atan2(imag, real)`` of a complex tensor (``tf.angle`` on complex input).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(angle_of(tf.complex([0.0], [2.0]))))
        [1.5707964]
    """
    return _part("Angle", x, name, "Angle")


def complex_abs(x: Any, name: str | None = None) -> Tensor:
    """The magnitude ``|z|`` of a complex tensor (TF's ``ComplexAbs``, what ``tf.abs`` computes on complex input).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(complex_abs(tf.complex([3.0], [4.0]))))
        [5.]
    """
    return _part("ComplexAbs", x, name, "ComplexAbs")


def to_complex64(x: Any, name: str = "ToComplex64") -> Tensor:
    """``x`` cast to complex64 (real values get a zero imaginary part).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.to_complex64([1.0, 2.0])))
        [1.+0.j 2.+0.j]
    """
    return cast(x, dtypes.complex64, name=name)


def to_complex128(x: Any, name: str = "ToComplex128") -> Tensor:
    """``x`` cast to complex128 (real values get a zero imaginary part).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.to_complex128([1.0])))
        [1.+0.j]
    """
    return cast(x, dtypes.complex128, name=name)
