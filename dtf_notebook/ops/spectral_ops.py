"""Fast Fourier transforms: TF's ``FFT``/``IFFT`` (1-D, 2-D, 3-D over the innermost dimensions, and N-D over given
axes), the real-input ``RFFT``/``IRFFT`` family, and ``tf.signal``'s wrappers (``rfft`` with an inferred
``fft_length``, ``fftshift``, ``hann_window``, ...), computed by ``torch.fft``.

``RFFT`` crops or zero-pads each transformed dimension to ``fft_length`` and keeps the ``fft_length[-1] // 2 + 1``
non-negative frequencies of the last; ``IRFFT`` is its inverse. Inverse transforms divide by the number of points.
Each transform's gradient is the transform's adjoint applied to the incoming gradient (an op of its own,
``SpectralGrad``), in TF's convention for complex gradients; TF's own gradient graphs compute the same values.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     spectrum = tf.signal.rfft([1.0, 0.0, -1.0, 0.0])
    ...     print(sess.run([spectrum, tf.signal.irfft(spectrum)]))
    [array([0.+0.j, 2.+0.j, 0.+0.j], dtype=complex64), array([ 1.,  0., -1.,  0.], dtype=float32)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.framework.tensor_tools import get_static_value
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.reverse_roll import roll
from dtf_notebook.ops.complex_ops import COMPLEX
from dtf_notebook.ops.math.trig import cos
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import torch_dtype

__all__ = [
    "fft",
    "fft2d",
    "fft3d",
    "fftnd",
    "ifft",
    "ifft2d",
    "ifft3d",
    "ifftnd",
    "irfftnd",
    "rfftnd",
]

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
# op type -> (kind, rank): kind "c2c" (forward), "ic2c" (inverse), "r2c", "c2r"; rank None: N-D with an axes input.
_SPECS = {
    "FFT": ("c2c", 1),
    "IFFT": ("ic2c", 1),
    "FFT2D": ("c2c", 2),
    "IFFT2D": ("ic2c", 2),
    "FFT3D": ("c2c", 3),
    "IFFT3D": ("ic2c", 3),
    "RFFT": ("r2c", 1),
    "IRFFT": ("c2r", 1),
    "RFFT2D": ("r2c", 2),
    "IRFFT2D": ("c2r", 2),
    "RFFT3D": ("r2c", 3),
    "IRFFT3D": ("c2r", 3),
    "FFTND": ("c2c", None),
    "IFFTND": ("ic2c", None),
    "RFFTND": ("r2c", None),
    "IRFFTND": ("c2r", None),
}


def _transform(kind: str) -> Callable[..., Any]:
    return {"c2c": torch.fft.fftn, "ic2c": torch.fft.ifftn, "r2c": torch.fft.rfftn, "c2r": torch.fft.irfftn}[kind]


def _apply(op_type: str, x: Any, extra: tuple[Any, ...], out_dtype: Any) -> Any:
    """The transform of ``op_type`` on ``x`` (``extra``: fft_length and, for N-D ops, axes)."""
    kind, rank = _SPECS[op_type]
    if rank is None:
        lengths, axes = [int(v) for v in extra[0].reshape(-1).tolist()], [int(v) for v in extra[1].reshape(-1).tolist()]
    else:
        axes = list(range(-rank, 0))
        lengths = [int(v) for v in extra[0].reshape(-1).tolist()] if extra else None
    if kind in ("c2c", "ic2c") and rank is not None:
        out = _transform(kind)(x, dim=axes)
    else:
        out = _transform(kind)(x, s=lengths, dim=axes)
    return out.to(out_dtype)


def _check_rank(op: Operation, x: Any, rank: int | None) -> None:
    if rank is not None and x.dim() < rank:
        from dtf_notebook import errors

        raise errors.InvalidArgumentError(None, op, f"Input must have rank of at least {rank} but got: {x.dim()}")


def _kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    out_dtype = torch_dtype(op.outputs[0].dtype)
    op_type = op.type
    rank = _SPECS[op_type][1]

    def run(x: Any, *extra: Any) -> Any:
        _check_rank(op, x, rank)
        return _apply(op_type, x, extra, out_dtype)

    return run


def _infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    kind, rank = _SPECS[op.type]
    x = op.inputs[0]
    out_dtype = x.dtype
    if kind == "r2c":
        out_dtype = op.get_attr("Tcomplex")
    elif kind == "c2r":
        out_dtype = op.get_attr("Treal")
    if x.shape.ndims is None:
        return [(out_dtype, unknown_shape())]
    dims = x.shape.as_list()
    if rank is not None and len(dims) < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {len(dims)} for '{op.name}' ({op.type})")
    if kind in ("c2c", "ic2c") and rank is not None:
        return [(out_dtype, x.shape)]
    lengths = get_static_value(op.inputs[1])
    axes = list(range(-rank, 0)) if rank is not None else get_static_value(op.inputs[2])
    if axes is None:
        return [(out_dtype, unknown_shape(len(dims)))]
    axes = [int(a) for a in np.asarray(axes).reshape(-1)]
    for i, axis in enumerate(axes):
        n = None if lengths is None else int(np.asarray(lengths).reshape(-1)[i])
        if kind == "r2c" and i == len(axes) - 1 and n is not None:
            n = n // 2 + 1  # the non-negative frequencies of the last axis
        dims[axis] = n
    return [(out_dtype, TensorShape(dims))]


def _grad(op: Operation, grad: Tensor) -> list[Any]:
    attrs = {"forward": op.type, "Tout": op.inputs[0].dtype}
    g = make_op("SpectralGrad", [op.inputs[0], grad, *op.inputs[1:]], attrs).outputs[0]
    return [g] + [None] * (len(op.inputs) - 1)


for _type in _SPECS:
    op_registry.register_op(_type, infer=_infer, kernel=_kernel, grad=_grad)


def _vjp_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    forward = op.get_attr("forward")
    out_dtype = torch_dtype(op.inputs[1].dtype)

    def run(x: Any, g: Any, *extra: Any) -> Any:
        # The transforms are linear: the vector-Jacobian product does not depend on x's values, only its shape.
        point = torch.zeros_like(x).requires_grad_(True)
        with torch.enable_grad():
            y = _apply(forward, point, extra, out_dtype)
            (result,) = torch.autograd.grad(y, point, grad_outputs=g.to(y.dtype))
        return result.detach()

    return run


op_registry.register_op(
    "SpectralGrad",
    infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
    kernel=_vjp_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


# ---- builders: the raw ops (top-level tf.fft, ...) -------------------------------------------------------------
def _complex_input(x: Any, name: str) -> Tensor:
    """``x`` as a tensor; a value that is not one becomes complex64, as TF's op helper converts it."""
    if isinstance(x, Tensor) or hasattr(x, "_as_graph_element"):
        return convert_to_tensor(x, name=name)
    return convert_to_tensor(x, dtype=dtypes.complex64, name=name)


def _c2c(op_type: str, x: Any, name: str | None) -> Tensor:
    t = _complex_input(x, "input")
    if t.dtype not in COMPLEX:
        raise TypeError(
            f"Value passed to parameter 'input' has DataType {t.dtype.name} not in list of allowed values: complex64, "
            "complex128"
        )
    return make_op(op_type, [t], {"Tcomplex": t.dtype}, name=name or op_type).outputs[0]


def fft(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The discrete Fourier transform over the innermost dimension of a complex tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.fft(tf.complex([1.0, 1.0], [0.0, 0.0]))))
        [2.+0.j 0.+0.j]
    """
    return _c2c("FFT", input, name)


def ifft(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The inverse of :func:`fft` (divided by the number of points).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.ifft(tf.complex([2.0, 0.0], [0.0, 0.0]))))
        [1.+0.j 1.+0.j]
    """
    return _c2c("IFFT", input, name)


def fft2d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The 2-D discrete Fourier transform over the two innermost dimensions of a complex tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.fft2d(tf.complex(tf.ones([2, 2]), tf.zeros([2, 2])))).real)
        [[4. 0.]
         [0. 0.]]
    """
    return _c2c("FFT2D", input, name)


def ifft2d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The inverse of :func:`fft2d`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.ifft2d(tf.complex([[4.0, 0.0], [0.0, 0.0]], tf.zeros([2, 2])))).real)
        [[1. 1.]
         [1. 1.]]
    """
    return _c2c("IFFT2D", input, name)


def fft3d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The 3-D discrete Fourier transform over the three innermost dimensions of a complex tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.fft3d(tf.complex(tf.ones([1, 2, 2]), tf.zeros([1, 2, 2])))).real[0, 0])
        [4. 0.]
    """
    return _c2c("FFT3D", input, name)


def ifft3d(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The inverse of :func:`fft3d`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.ifft3d(tf.complex(tf.ones([1, 1, 2]), tf.zeros([1, 1, 2])))).real)
        [[[1. 0.]]]
    """
    return _c2c("IFFT3D", input, name)


def _nd(op_type: str, x: Any, fft_length: Any, axes: Any, attrs: dict[str, Any], name: str | None) -> Tensor:
    lengths = convert_to_tensor(fft_length, dtype=dtypes.int32, name="fft_length")
    axes_t = convert_to_tensor(axes, dtype=dtypes.int32, name="axes")
    return make_op(op_type, [x, lengths, axes_t], attrs, name=name or op_type).outputs[0]


def fftnd(input: Any, fft_length: Any, axes: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The N-D discrete Fourier transform over ``axes``, each cropped or zero-padded to ``fft_length``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.fftnd(tf.complex([1.0, 1.0], [0.0, 0.0]), [4], [0])))
        [2.+0.j 1.-1.j 0.+0.j 1.+1.j]
    """
    x = _complex_input(input, "input")
    return _nd("FFTND", x, fft_length, axes, {"Tcomplex": x.dtype}, name)


def ifftnd(input: Any, fft_length: Any, axes: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of :func:`fftnd`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.ifftnd(tf.complex([2.0, 0.0], [0.0, 0.0]), [2], [0])))
        [1.+0.j 1.+0.j]
    """
    x = _complex_input(input, "input")
    return _nd("IFFTND", x, fft_length, axes, {"Tcomplex": x.dtype}, name)


def rfftnd(
    input: Any,  # noqa: A002 - TF's name
    fft_length: Any,
    axes: Any,
    Tcomplex: Any = dtypes.complex64,  # noqa: N803 - TF's name
    name: str | None = None,
) -> Tensor:
    """The N-D transform of a real tensor over ``axes``: the last axis keeps ``fft_length[-1] // 2 + 1``
    frequencies.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.rfftnd([[1.0, 2.0], [3.0, 4.0]], [2, 2], [0, 1])))
        [[10.+0.j -2.+0.j]
         [-4.+0.j  0.+0.j]]
    """
    x = convert_to_tensor(input, name="input")
    return _nd("RFFTND", x, fft_length, axes, {"Treal": x.dtype, "Tcomplex": dtypes.as_dtype(Tcomplex)}, name)


def irfftnd(
    input: Any,  # noqa: A002 - TF's name
    fft_length: Any,
    axes: Any,
    Treal: Any = dtypes.float32,  # noqa: N803 - TF's name
    name: str | None = None,
) -> Tensor:
    """The inverse of :func:`rfftnd`: a real tensor with ``fft_length`` points along ``axes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.irfftnd(tf.complex([[10.0, -2.0], [-4.0, 0.0]], tf.zeros([2, 2])), [2, 2], [0, 1])))
        [[1. 2.]
         [3. 4.]]
    """
    x = _complex_input(input, "input")
    return _nd("IRFFTND", x, fft_length, axes, {"Tcomplex": x.dtype, "Treal": dtypes.as_dtype(Treal)}, name)


# ---- tf.signal's wrappers -------------------------------------------------------------------------------------
def _inferred_lengths(x: Tensor, rank: int, inverse: bool) -> Any:
    """TF's default ``fft_length``: the input's innermost sizes (for an inverse, ``2 * (n - 1)`` for the last)."""
    if x.shape.ndims is not None and all(d is not None for d in x.shape.as_list()[-rank:]):
        sizes = x.shape.as_list()[-rank:]
        if inverse:
            sizes[-1] = max(0, 2 * (sizes[-1] - 1))
        return np.array(sizes, dtype=np.int32)
    sizes = array_ops.shape(x)[-rank:]
    if inverse:
        last = math_ops.maximum(0, 2 * (sizes[-1] - 1))
        sizes = array_ops.concat([sizes[:-1], array_ops.expand_dims(last, 0)], 0)
    return sizes


def _real_transform(op_type: str, rank: int, input_tensor: Any, fft_length: Any, name: str | None) -> Tensor:
    with name_scope(name, op_type.lower(), [input_tensor, fft_length]) as scope:
        if op_type.startswith("I"):
            x = _complex_input(input_tensor, "input_tensor")
            if x.dtype not in COMPLEX:
                raise TypeError(f"{op_type} takes a complex input, got {x.dtype.name}")
            lengths = _inferred_lengths(x, rank, True) if fft_length is None else fft_length
            attrs = {"Tcomplex": x.dtype, "Treal": x.dtype.real_dtype}
        else:
            x = convert_to_tensor(input_tensor, name="input_tensor")
            if x.dtype in (dtypes.int32, dtypes.int64, dtypes.float16):
                x = math_ops.cast(x, dtypes.float32)
            if x.dtype not in _COMPLEX_OF:
                raise TypeError(f"{op_type} takes a float32 or float64 input, got {x.dtype.name}")
            lengths = _inferred_lengths(x, rank, False) if fft_length is None else fft_length
            attrs = {"Treal": x.dtype, "Tcomplex": _COMPLEX_OF[x.dtype]}
        lengths_t = convert_to_tensor(lengths, dtype=dtypes.int32, name="fft_length")
        return make_op(op_type, [x, lengths_t], attrs, name=scope).outputs[0]


def rfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.rfft``: the transform of a real signal over its innermost dimension (``fft_length`` defaults to
    its size).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.rfft([1.0, 1.0, 1.0, 1.0])))
        [4.+0.j 0.+0.j 0.+0.j]
    """
    return _real_transform("RFFT", 1, input_tensor, fft_length, name)


def irfft(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.irfft``: the real signal of a half spectrum (``fft_length`` defaults to ``2 * (n - 1)``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.irfft(tf.complex([4.0, 0.0, 0.0], [0.0, 0.0, 0.0]))))
        [1. 1. 1. 1.]
    """
    return _real_transform("IRFFT", 1, input_tensor, fft_length, name)


def rfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.rfft2d``: :func:`rfft` over the two innermost dimensions.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.rfft2d(tf.ones([2, 2]))).real)
        [[4. 0.]
         [0. 0.]]
    """
    return _real_transform("RFFT2D", 2, input_tensor, fft_length, name)


def irfft2d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.irfft2d``: the inverse of :func:`rfft2d`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.irfft2d(tf.signal.rfft2d(tf.ones([2, 2])))))
        [[1. 1.]
         [1. 1.]]
    """
    return _real_transform("IRFFT2D", 2, input_tensor, fft_length, name)


def rfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.rfft3d``: :func:`rfft` over the three innermost dimensions.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.signal.rfft3d(tf.ones([2, 2, 6])).shape.as_list()
        [2, 2, 4]
    """
    return _real_transform("RFFT3D", 3, input_tensor, fft_length, name)


def irfft3d(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Tensor:
    """``tf.signal.irfft3d``: the inverse of :func:`rfft3d`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.signal.irfft3d(tf.complex(tf.ones([2, 2, 4]), tf.zeros([2, 2, 4]))).shape.as_list()
        [2, 2, 6]
    """
    return _real_transform("IRFFT3D", 3, input_tensor, fft_length, name)


def _shift(x: Any, axes: Any, name: str | None, default: str, inverse: bool) -> Tensor:
    with name_scope(name, default, [x]):
        t = convert_to_tensor(x)
        if axes is None:
            axes = list(range(t.shape.ndims)) if t.shape.ndims is not None else math_ops.range(array_ops.rank(t))
        static = t.shape
        if isinstance(axes, int | np.integer):
            axes = [int(axes)]
        if isinstance(axes, list) and static.ndims is not None and all(static.as_list()[a] is not None for a in axes):
            dims = [static.as_list()[a] for a in axes]
            shift: Any = [-(d // 2) if inverse else d // 2 for d in dims]
        else:
            sizes = array_ops.gather(array_ops.shape(t), axes)
            shift = -(sizes // 2) if inverse else sizes // 2
        return roll(t, shift, axes)


def fftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """Moves the zero frequency to the middle of ``axes`` (all by default): a roll by half of each size.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.fftshift([0, 1, 2, 3, -4, -3, -2, -1])))
        [-4 -3 -2 -1  0  1  2  3]
    """
    return _shift(x, axes, name, "fftshift", False)


def ifftshift(x: Any, axes: Any = None, name: str | None = None) -> Tensor:
    """The inverse of :func:`fftshift`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.ifftshift([-2, -1, 0, 1, 2])))
        [ 0  1  2 -2 -1]
    """
    return _shift(x, axes, name, "ifftshift", True)


def _raised_cosine(name: str | None, default: str, length: Any, periodic: Any, dtype: Any, a: float, b: float) -> Any:
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Found {dtype!r}")
    with name_scope(name, default, [length, periodic]):
        n_points = convert_to_tensor(length, dtype=dtypes.int32, name="window_length")
        n_points.shape.with_rank(0)
        if get_static_value(n_points) == 1:
            return array_ops.ones([1], dtype=dtype)
        periodic_i = math_ops.cast(convert_to_tensor(periodic, dtype=dtypes.bool, name="periodic"), dtypes.int32)
        even = 1 - math_ops.floormod(n_points, 2)
        denominator = math_ops.cast(n_points + periodic_i * even - 1, dtype)
        count = math_ops.cast(math_ops.range(n_points), dtype)
        angle = convert_to_tensor(2 * np.pi, dtype=dtype) * count / denominator
        return math_ops.cast(a - b * cos(angle), dtype)


def hann_window(window_length: Any, periodic: Any = True, dtype: Any = dtypes.float32, name: str | None = None) -> Any:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / N)`` of ``window_length`` points (periodic: ``N`` is the length, else
    the length minus one).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.hann_window(4)))
        [0.  0.5 1.  0.5]
    """
    return _raised_cosine(name, "hann_window", window_length, periodic, dtype, 0.5, 0.5)


def hamming_window(
    window_length: Any, periodic: Any = True, dtype: Any = dtypes.float32, name: str | None = None
) -> Any:
    """The Hamming window ``0.54 - 0.46 cos(2 pi n / N)`` (see :func:`hann_window`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.signal.hamming_window(3, periodic=False)).round(2))
        [0.08 1.   0.08]
    """
    return _raised_cosine(name, "hamming_window", window_length, periodic, dtype, 0.54, 0.46)
