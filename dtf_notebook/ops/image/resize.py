"""TF's image resizing ops: ``ResizeBilinear``, ``ResizeNearestNeighbor``, ``ResizeBicubic``, ``ResizeArea`` and the
gradient ops ``ResizeBilinearGrad``, ``ResizeNearestNeighborGrad``, ``ResizeBicubicGrad``.

Each op maps ``images`` ``[batch, height, width, channels]`` to ``[batch, new_height, new_width, channels]``.
The source coordinates and weights of each output row and column are computed in float32 as TF's CPU
kernels compute them (``align_corners``, ``half_pixel_centers``, the Keys cubic table, the area cells), and
collected in one weight matrix per axis; bilinear, bicubic and area resizing then apply the two matrices
(``Wy · image · Wxᵀ``, in float64, rounded once to float32), and their gradients apply the transposes.
Nearest-neighbour resizing gathers (and its gradient scatters), keeping the input's dtype.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
    ...     print(sess.run(resize_bilinear(x, [3, 3], align_corners=True))[0, :, :, 0])
    [[0.  0.5 1. ]
     [1.  1.5 2. ]
     [2.  2.5 3. ]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op

__all__ = ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic", "resize_area"]

_IMAGE_TYPES = (
    dtypes.int8,
    dtypes.uint8,
    dtypes.int16,
    dtypes.int32,
    dtypes.int64,
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.float64,
)
_F32 = np.float32


# ---- building ---------------------------------------------------------------------------------
def _build(op_type: str, images: Any, size: Any, align_corners: bool, half_pixel_centers: bool, name: Any) -> Tensor:
    x = convert_to_tensor(images, name="images")
    check_dtype(x, _IMAGE_TYPES, op_type, "images")
    s = convert_to_tensor(size, dtype=dtypes.int32, name="size")
    attrs = {"T": x.dtype, "align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    return make_op(op_type, [x, s], attrs, name=name or op_type).outputs[0]


def resize_bilinear(
    images: Any, size: Any, align_corners: bool = False, name: str | None = None, half_pixel_centers: bool = False
) -> Tensor:
    """Bilinear resizing of ``images`` ``[batch, h, w, c]`` to ``size`` ``[new_h, new_w]`` (a float32 result).

    Args:
        images: A 4-D numeric tensor.
        size: Two int32 values: the new height and width.
        align_corners: Map the corner pixels of input and output onto each other.
        name: Name of the op.
        half_pixel_centers: Sample at pixel centres (TF2's convention); needs ``align_corners=False``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(resize_bilinear(tf.ones([1, 2, 2, 3]), [4, 4])).shape)
        (1, 4, 4, 3)
    """
    return _build("ResizeBilinear", images, size, align_corners, half_pixel_centers, name)


def resize_nearest_neighbor(
    images: Any, size: Any, align_corners: bool = False, name: str | None = None, half_pixel_centers: bool = False
) -> Tensor:
    """Nearest-neighbour resizing of ``images`` to ``size``; the result keeps the input's dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.reshape(tf.range(4), [1, 2, 2, 1])
        ...     print(sess.run(resize_nearest_neighbor(x, [4, 4]))[0, :, :, 0])
        [[0 0 1 1]
         [0 0 1 1]
         [2 2 3 3]
         [2 2 3 3]]
    """
    return _build("ResizeNearestNeighbor", images, size, align_corners, half_pixel_centers, name)


def resize_bicubic(
    images: Any, size: Any, align_corners: bool = False, name: str | None = None, half_pixel_centers: bool = False
) -> Tensor:
    """Bicubic resizing (Keys' kernel: a = -0.75, or -0.5 with ``half_pixel_centers``) to a float32 result.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(resize_bicubic(tf.fill([1, 3, 3, 1], 2.0), [5, 5])).max())
        2.0
    """
    return _build("ResizeBicubic", images, size, align_corners, half_pixel_centers, name)


def resize_area(images: Any, size: Any, align_corners: bool = False, name: str | None = None) -> Tensor:
    """Area resizing: each output pixel is the mean of the input area it covers (float32 result).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
        ...     print(sess.run(resize_area(x, [2, 2]))[0, :, :, 0])
        [[ 2.5  4.5]
         [10.5 12.5]]
    """
    x = convert_to_tensor(images, name="images")
    check_dtype(x, _IMAGE_TYPES, "ResizeArea", "images")
    s = convert_to_tensor(size, dtype=dtypes.int32, name="size")
    return make_op(
        "ResizeArea", [x, s], {"T": x.dtype, "align_corners": bool(align_corners)}, name=name or "ResizeArea"
    ).outputs[0]


# ---- output inference -------------------------------------------------------------------------
def _resize_infer(float_output: bool) -> Callable[[Operation], list]:
    def infer(op: Operation) -> list:
        x, size = op.inputs
        shape = x.shape
        if shape.ndims is not None and shape.ndims != 4:
            raise ValueError(f"Shape must be rank 4 but is rank {shape.ndims} for '{op.name}' (op: '{op.type}')")
        if size.shape.ndims is not None and size.shape.ndims != 1:
            raise ValueError(f"Shape must be rank 1 but is rank {size.shape.ndims} for '{op.name}' (op: '{op.type}')")
        if size.shape.ndims == 1 and size.shape[0].value not in (None, 2):
            raise ValueError(f"Dimension must be 2 but is {size.shape[0].value} for '{op.name}' (op: '{op.type}')")
        value = constant_value(size)
        new = [int(v) for v in value.reshape(-1)] if value is not None else [None, None]
        dims = shape.as_list() if shape.ndims == 4 else [None] * 4
        dtype = dtypes.float32 if float_output else x.dtype
        return [(dtype, TensorShape([dims[0], new[0], new[1], dims[3]]))]

    return infer


# ---- source coordinates and weights per axis --------------------------------------------------
def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """TF's ``CalculateResizeScale`` in float32."""
    if align_corners and in_size > 1 and out_size > 1:
        return _F32(in_size - 1) / _F32(out_size - 1)
    return _F32(in_size) / _F32(out_size)


def _source(out_size: int, scale: np.float32, half_pixel: bool) -> np.ndarray:
    """The float32 source coordinate of each output index (TF's legacy or half-pixel scaler)."""
    x = np.arange(out_size, dtype=_F32)
    if half_pixel:
        return (x + _F32(0.5)) * scale - _F32(0.5)
    return x * scale


@lru_cache(maxsize=256)
def _bilinear_weights(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    scale = _scale(in_size, out_size, align_corners)
    src = _source(out_size, scale, half_pixel)
    floor = np.floor(src)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    lerp = (src - floor).astype(np.float64)
    w = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(w, (rows, lower), 1.0 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def _cubic_table(keys: bool) -> np.ndarray:
    """TF's table of cubic coefficients: 1025 pairs for offsets 0, 1/1024, ..., 1."""
    a = -0.5 if keys else -0.75
    table = np.zeros((1025, 2), dtype=_F32)
    for i in range(1025):
        x = _F32(i * 1.0 / 1024)
        table[i, 0] = _F32(((a + 2) * float(x) - (a + 3)) * float(x) * float(x) + 1)
        x1 = float(_F32(float(x) + 1.0))  # TF: x += 1.0 on a float
        table[i, 1] = _F32(((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a)
    return table


_TABLES = {keys: _cubic_table(keys) for keys in (False, True)}


@lru_cache(maxsize=256)
def _bicubic_weights(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    table = _TABLES[half_pixel]
    scale = _scale(in_size, out_size, align_corners)
    src = _source(out_size, scale, half_pixel)
    w = np.zeros((out_size, in_size))
    for i, loc_f in enumerate(src):
        loc = math.floor(loc_f)
        offset = int(np.rint(_F32(_F32(loc_f) - _F32(loc)) * _F32(1024)))
        taps = [table[offset, 1], table[offset, 0], table[1024 - offset, 0], table[1024 - offset, 1]]
        idx = [min(in_size - 1, max(0, loc + k)) for k in (-1, 0, 1, 2)]
        if half_pixel:
            # Samples outside the image get no weight; the rest are renormalised (TF's Keys cubic kernel).
            taps = [t if j == loc + k else _F32(0) for t, j, k in zip(taps, idx, (-1, 0, 1, 2))]
            total = _F32(sum(taps, _F32(0)))
            if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
                inv = _F32(1) / total
                taps = [t * inv for t in taps]
        for j, t in zip(idx, taps):
            w[i, j] += float(t)
    return w


@lru_cache(maxsize=256)
def _area_weights(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    scale = _scale(in_size, out_size, align_corners)
    w = np.zeros((out_size, in_size))
    for i in range(out_size):
        lo, hi = _F32(i) * scale, _F32(i + 1) * scale
        for j in range(math.floor(lo), math.ceil(hi)):
            if j < lo:
                part = scale if j + 1 > hi else _F32(j + 1) - lo
            else:
                part = hi - _F32(j) if j + 1 > hi else _F32(1)
            w[i, min(max(j, 0), in_size - 1)] += float(part) / float(scale)
    return w


def _nearest_index(in_size: int, out_size: int, align_corners: bool, half_pixel: bool) -> np.ndarray:
    scale = _scale(in_size, out_size, align_corners)
    x = np.arange(out_size, dtype=_F32)
    src = (x + _F32(0.5)) * scale if half_pixel else x * scale
    # roundf (halves away from zero; the sources are not negative), in float64 so that adding 0.5 is exact.
    idx = np.floor(src.astype(np.float64) + 0.5) if align_corners else np.floor(src)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    return np.maximum(idx, 0) if half_pixel else idx


# ---- kernels ----------------------------------------------------------------------------------
def _check_attrs(op: Operation) -> tuple[bool, bool]:
    align = op.get_attr("align_corners")
    half = op.get_attr("half_pixel_centers") if "half_pixel_centers" in op.attrs else False
    if align and half:
        raise errors.InvalidArgumentError(None, op, "If half_pixel_centers is True, align_corners must be False.")
    return align, half


def _sizes(op: Operation, images: torch.Tensor, size: Any) -> tuple[int, int, int, int]:
    if images.dim() != 4:
        raise errors.InvalidArgumentError(None, op, f"input must be 4-dimensional{_dims(images.shape)}")
    s = size.reshape(-1).tolist() if isinstance(size, torch.Tensor) else list(np.asarray(size).reshape(-1))
    if len(s) != 2:
        raise errors.InvalidArgumentError(None, op, f"shape_t must have two elements{_dims([len(s)])}")
    out_h, out_w = int(s[0]), int(s[1])
    if out_h <= 0 or out_w <= 0:
        raise errors.InvalidArgumentError(None, op, "output dimensions must be positive")
    in_h, in_w = images.shape[1], images.shape[2]
    if in_h <= 0 or in_w <= 0:
        raise errors.InvalidArgumentError(None, op, "input image must be of non-zero size")
    return in_h, in_w, out_h, out_w


def _dims(shape: Any) -> str:
    return "[" + ",".join(str(int(d)) for d in shape) + "]"


def _separable(images: torch.Tensor, wy: np.ndarray, wx: np.ndarray) -> torch.Tensor:
    """``Wy · images · Wxᵀ`` over the height and width of ``[b, h, w, c]`` images, in float64."""
    x = images.to(torch.float64)
    ty = torch.from_numpy(wy).to(x.device)
    tx = torch.from_numpy(wx).to(x.device)
    return torch.einsum("ih,bhwc,jw->bijc", ty, x, tx)


def _weights_kernel(weights: Callable[..., np.ndarray], half_pixel_attr: bool) -> Callable[[Operation, Any], Any]:
    def kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
        align, half = _check_attrs(op)
        extra = (half,) if half_pixel_attr else ()

        def run(images: torch.Tensor, size: Any) -> torch.Tensor:
            in_h, in_w, out_h, out_w = _sizes(op, images, size)
            wy = weights(in_h, out_h, align, *extra)
            wx = weights(in_w, out_w, align, *extra)
            return _separable(images, wy, wx).to(torch.float32)

        return run

    return kernel


def _weights_grad_kernel(weights: Callable[..., np.ndarray]) -> Callable[[Operation, Any], Any]:
    def kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
        align, half = _check_attrs(op)
        dtype = op.get_attr("T")

        def run(grads: torch.Tensor, original: torch.Tensor) -> torch.Tensor:
            out_h, out_w = grads.shape[1], grads.shape[2]
            in_h, in_w = original.shape[1], original.shape[2]
            wy = weights(in_h, out_h, align, half)
            wx = weights(in_w, out_w, align, half)
            x = grads.to(torch.float64)
            ty = torch.from_numpy(wy).to(x.device)
            tx = torch.from_numpy(wx).to(x.device)
            return torch.einsum("ih,bijc,jw->bhwc", ty, x, tx).to(_torch_dtype(dtype))

        return run

    return kernel


def _torch_dtype(dtype: dtypes.DType) -> torch.dtype:
    from dtf_notebook.runtime.values import torch_dtype

    return torch_dtype(dtype)


def _nearest_kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
    align, half = _check_attrs(op)

    def run(images: torch.Tensor, size: Any) -> torch.Tensor:
        in_h, in_w, out_h, out_w = _sizes(op, images, size)
        iy = torch.from_numpy(_nearest_index(in_h, out_h, align, half)).to(images.device)
        ix = torch.from_numpy(_nearest_index(in_w, out_w, align, half)).to(images.device)
        return images.index_select(1, iy).index_select(2, ix)

    return run


def _nearest_grad_kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
    align, half = _check_attrs(op)

    def run(grads: torch.Tensor, size: Any) -> torch.Tensor:
        in_h, in_w = (int(v) for v in size.reshape(-1).tolist())
        out_h, out_w = grads.shape[1], grads.shape[2]
        iy = torch.from_numpy(_nearest_index(in_h, out_h, align, half)).to(grads.device)
        ix = torch.from_numpy(_nearest_index(in_w, out_w, align, half)).to(grads.device)
        b, c = grads.shape[0], grads.shape[3]
        rows = torch.zeros((b, in_h, out_w, c), dtype=grads.dtype, device=grads.device).index_add_(1, iy, grads)
        return torch.zeros((b, in_h, in_w, c), dtype=grads.dtype, device=grads.device).index_add_(2, ix, rows)

    return run


# ---- gradients (TF's image_grad.py) -----------------------------------------------------------
def _grad_attrs(op: Operation) -> dict[str, Any]:
    return {
        "T": op.inputs[0].dtype,
        "align_corners": op.get_attr("align_corners"),
        "half_pixel_centers": op.get_attr("half_pixel_centers"),
    }


def _float_grad(grad_type: str) -> Callable[..., list]:
    def grad(op: Operation, g: Tensor) -> list:
        x = op.inputs[0]
        if not x.dtype.is_floating:
            return [None, None]
        return [make_op(grad_type, [g, x], _grad_attrs(op), name=grad_type).outputs[0], None]

    return grad


def _nearest_grad(op: Operation, g: Tensor) -> list:
    x = op.inputs[0]
    shape = x.shape
    if shape.ndims == 4 and shape[1].value is not None and shape[2].value is not None:
        size = convert_to_tensor(shape.as_list()[1:3], dtype=dtypes.int32)
    else:
        size = array_ops.shape(x)[1:3]
    attrs = {
        "T": g.dtype,
        "align_corners": op.get_attr("align_corners"),
        "half_pixel_centers": op.get_attr("half_pixel_centers"),
    }
    return [make_op("ResizeNearestNeighborGrad", [g, size], attrs, name="ResizeNearestNeighborGrad").outputs[0], None]


def _grad_infer(op: Operation) -> list:
    g, original = op.inputs
    return [(op.get_attr("T"), original.shape)]


def _nearest_grad_infer(op: Operation) -> list:
    g, size = op.inputs
    value = constant_value(size)
    dims = g.shape.as_list() if g.shape.ndims == 4 else [None] * 4
    new = [int(v) for v in value.reshape(-1)] if value is not None else [None, None]
    return [(g.dtype, TensorShape([dims[0], new[0], new[1], dims[3]]))]


def _register(op_type: str, infer: Any, kernel: Any, grad: Any) -> None:
    op_registry.register_op(op_type, infer=infer, kernel=kernel, grad=grad)


_register(
    "ResizeBilinear", _resize_infer(True), _weights_kernel(_bilinear_weights, True), _float_grad("ResizeBilinearGrad")
)
_register(
    "ResizeBicubic", _resize_infer(True), _weights_kernel(_bicubic_weights, True), _float_grad("ResizeBicubicGrad")
)
_register("ResizeArea", _resize_infer(True), _weights_kernel(_area_weights, False), None)  # TF defines no gradient
_register("ResizeNearestNeighbor", _resize_infer(False), _nearest_kernel, _nearest_grad)
_register("ResizeBilinearGrad", _grad_infer, _weights_grad_kernel(_bilinear_weights), op_registry.NOT_DIFFERENTIABLE)
_register("ResizeBicubicGrad", _grad_infer, _weights_grad_kernel(_bicubic_weights), op_registry.NOT_DIFFERENTIABLE)
_register("ResizeNearestNeighborGrad", _nearest_grad_infer, _nearest_grad_kernel, op_registry.NOT_DIFFERENTIABLE)
