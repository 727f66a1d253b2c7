"""Crop and patch ops: ``CropAndResize`` (with TF's gradients for the image and the boxes), ``ExtractGlimpse`` and
``ExtractImagePatches``.

``CropAndResize`` samples each box of ``[y1, x1, y2, x2]`` (normalized, either order, possibly outside the image)
on a ``crop_size`` grid in float32 exactly as TF's CPU kernel does: ``in_y = y1 * (h - 1) + y * (y2 - y1) * (h - 1)
/ (crop_h - 1)`` (the box centre for a one-row crop), outside points set to ``extrapolation_value``, then bilinear
interpolation or the nearest pixel (``roundf``). Its gradients are TF's ``CropAndResizeGradImage`` (the
interpolation weights scattered back) and ``CropAndResizeGradBoxes`` (the image's slope along y and x, modulated by
the incoming gradient). ``ExtractImagePatches`` gathers windows with ``torch.nn.functional.unfold`` after TF's
``SAME``/``VALID`` padding; its gradient is TF's composite (the patches of an index image, summed back by index).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     img = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    ...     print(sess.run(tf.image.crop_and_resize(img, [[0.0, 0.0, 1.0, 1.0]], [0], [2, 2]))[0, :, :, 0])
    [[ 0.  3.]
     [12. 15.]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op

__all__ = ["crop_and_resize", "extract_glimpse", "extract_image_patches", "extract_patches"]

_REAL = (
    dtypes.uint8,
    dtypes.uint16,
    dtypes.int8,
    dtypes.int16,
    dtypes.int32,
    dtypes.int64,
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.float64,
)


# ---- CropAndResize -------------------------------------------------------------------------------------------------
def _sample_grid(
    op: Any, image_shape: tuple[int, ...], boxes: torch.Tensor, box_ind: torch.Tensor, crop: tuple[int, int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The float32 source coordinates ``in_y`` ``[n, crop_h]`` and ``in_x`` ``[n, crop_w]`` of every box, and the
    boxes' image indices (after TF's checks)."""
    batch, height, width = image_shape[0], image_shape[1], image_shape[2]
    crop_h, crop_w = crop
    if height <= 0 or width <= 0:
        raise errors.InvalidArgumentError(None, op, "image dimensions must be positive")
    if crop_h <= 0 or crop_w <= 0:
        raise errors.InvalidArgumentError(None, op, "crop dimensions must be positive")
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise errors.InvalidArgumentError(None, op, f"boxes must be 2-D [num_boxes, 4], got {list(boxes.shape)}")
    if box_ind.ndim != 1 or box_ind.shape[0] != boxes.shape[0]:
        raise errors.InvalidArgumentError(None, op, "box_index has incompatible shape")
    if box_ind.numel() and (int(box_ind.min()) < 0 or int(box_ind.max()) >= batch):
        raise errors.InvalidArgumentError(None, op, f"box_index has values outside [0, {batch})")
    b = boxes.float()
    f32 = torch.float32

    def axis(lo: torch.Tensor, hi: torch.Tensor, size: int, steps: int) -> torch.Tensor:
        span = torch.tensor(size - 1, dtype=f32, device=b.device)
        if steps > 1:
            scale = (hi - lo) * span / torch.tensor(steps - 1, dtype=f32, device=b.device)
            grid = torch.arange(steps, dtype=f32, device=b.device)
            return lo[:, None] * span + grid[None, :] * scale[:, None]
        return (0.5 * (lo + hi) * span)[:, None]

    return axis(b[:, 0], b[:, 2], height, crop_h), axis(b[:, 1], b[:, 3], width, crop_w), box_ind.long()


def _corner_indices(in_y: torch.Tensor, in_x: torch.Tensor, height: int, width: int) -> tuple[torch.Tensor, ...]:
    """The four neighbours' rows and columns (clamped; out-of-image points are masked by the callers) and the
    interpolation weights ``y_lerp`` ``[n, ch, 1, 1]``, ``x_lerp`` ``[n, 1, cw, 1]``."""
    top, left = torch.floor(in_y), torch.floor(in_x)
    y_lerp, x_lerp = (in_y - top)[:, :, None, None], (in_x - left)[:, None, :, None]
    t, bo = top.clamp(0, height - 1).long()[:, :, None], torch.ceil(in_y).clamp(0, height - 1).long()[:, :, None]
    le, ri = left.clamp(0, width - 1).long()[:, None, :], torch.ceil(in_x).clamp(0, width - 1).long()[:, None, :]
    return t, bo, le, ri, y_lerp, x_lerp


def _crop_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    nearest = op.get_attr("method") == "nearest"
    extrapolation = float(op.get_attr("extrapolation_value"))

    def run(image: Any, boxes: Any, box_ind: Any, crop_size: Any) -> torch.Tensor:
        crop = tuple(int(v) for v in crop_size.reshape(-1).tolist())
        if len(crop) != 2:
            raise errors.InvalidArgumentError(None, op, "crop_size must be a 1-D tensor of 2 elements")
        if image.ndim != 4:
            raise errors.InvalidArgumentError(None, op, f"input image must be 4-D, got {list(image.shape)}")
        in_y, in_x, idx = _sample_grid(op, tuple(image.shape), boxes, box_ind, crop)
        height, width = image.shape[1], image.shape[2]
        valid = (((in_y >= 0) & (in_y <= height - 1))[:, :, None] & ((in_x >= 0) & (in_x <= width - 1))[:, None, :])[
            ..., None
        ]
        x = image.float()
        rows = idx[:, None, None]
        if nearest:
            ny = torch.where(in_y >= 0, torch.floor(in_y + 0.5), torch.ceil(in_y - 0.5)).clamp(0, height - 1).long()
            nx = torch.where(in_x >= 0, torch.floor(in_x + 0.5), torch.ceil(in_x - 0.5)).clamp(0, width - 1).long()
            out = x[rows, ny[:, :, None], nx[:, None, :]]
        else:
            t, bo, le, ri, y_lerp, x_lerp = _corner_indices(in_y, in_x, height, width)
            top_left, top_right = x[rows, t, le], x[rows, t, ri]
            bottom_left, bottom_right = x[rows, bo, le], x[rows, bo, ri]
            top_v = top_left + (top_right - top_left) * x_lerp
            bottom_v = bottom_left + (bottom_right - bottom_left) * x_lerp
            out = top_v + (bottom_v - top_v) * y_lerp
        return torch.where(valid, out, torch.tensor(extrapolation, dtype=torch.float32, device=out.device))

    return run


def _crop_grad_image_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    nearest = op.get_attr("method") == "nearest"
    out_dtype = getattr(torch, op.get_attr("T").name)

    def run(grads: Any, boxes: Any, box_ind: Any, image_size: Any) -> torch.Tensor:
        shape = tuple(int(v) for v in image_size.reshape(-1).tolist())
        if len(shape) != 4:
            raise errors.InvalidArgumentError(None, op, "image_size must be a 1-D tensor of 4 elements")
        crop = (grads.shape[1], grads.shape[2])
        in_y, in_x, idx = _sample_grid(op, shape, boxes, box_ind, crop)
        height, width = shape[1], shape[2]
        g = grads.float()
        out = torch.zeros(shape, dtype=torch.float32, device=g.device)
        valid = ((in_y >= 0) & (in_y <= height - 1))[:, :, None] & ((in_x >= 0) & (in_x <= width - 1))[:, None, :]
        n, ch, cw = valid.shape
        rows = idx[:, None, None].expand(n, ch, cw)

        def scatter(ys: torch.Tensor, xs: torch.Tensor, weights: torch.Tensor) -> None:
            yy = ys.expand(n, ch, cw)[valid]
            xx = xs.expand(n, ch, cw)[valid]
            out.index_put_((rows[valid], yy, xx), (weights * g)[valid], accumulate=True)

        if nearest:
            ny = torch.where(in_y >= 0, torch.floor(in_y + 0.5), torch.ceil(in_y - 0.5)).clamp(0, height - 1).long()
            nx = torch.where(in_x >= 0, torch.floor(in_x + 0.5), torch.ceil(in_x - 0.5)).clamp(0, width - 1).long()
            scatter(ny[:, :, None], nx[:, None, :], torch.ones(1, 1, 1, 1, device=g.device))
        else:
            t, bo, le, ri, y_lerp, x_lerp = _corner_indices(in_y, in_x, height, width)
            dtop, dbottom = 1 - y_lerp, y_lerp
            scatter(t, le, dtop * (1 - x_lerp))
            scatter(t, ri, dtop * x_lerp)
            scatter(bo, le, dbottom * (1 - x_lerp))
            scatter(bo, ri, dbottom * x_lerp)
        return out.to(out_dtype)

    return run


def _crop_grad_boxes_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    def run(grads: Any, image: Any, boxes: Any, box_ind: Any) -> torch.Tensor:
        crop_h, crop_w = grads.shape[1], grads.shape[2]
        in_y, in_x, idx = _sample_grid(op, tuple(image.shape), boxes, box_ind, (crop_h, crop_w))
        height, width = image.shape[1], image.shape[2]
        x, g = image.float(), grads.float()
        valid = (((in_y >= 0) & (in_y <= height - 1))[:, :, None] & ((in_x >= 0) & (in_x <= width - 1))[:, None, :])[
            ..., None
        ]
        rows = idx[:, None, None]
        t, bo, le, ri, y_lerp, x_lerp = _corner_indices(in_y, in_x, height, width)
        top_left, top_right = x[rows, t, le], x[rows, t, ri]
        bottom_left, bottom_right = x[rows, bo, le], x[rows, bo, ri]
        grad_y = ((1 - x_lerp) * (bottom_left - top_left) + x_lerp * (bottom_right - top_right)) * g
        grad_x = ((1 - y_lerp) * (top_right - top_left) + y_lerp * (bottom_right - bottom_left)) * g
        zero = torch.zeros((), device=g.device)
        grad_y, grad_x = torch.where(valid, grad_y, zero), torch.where(valid, grad_x, zero)
        f32 = torch.float32
        dev = g.device
        if crop_h > 1:
            ratio = torch.tensor(height - 1, dtype=f32, device=dev) / torch.tensor(crop_h - 1, dtype=f32, device=dev)
            ys = torch.arange(crop_h, dtype=f32, device=dev) * ratio
            w_y1, w_y2 = (height - 1 - ys)[None, :, None, None], ys[None, :, None, None]
        else:
            w_y1 = w_y2 = torch.tensor(0.5 * (height - 1), dtype=f32, device=dev)
        if crop_w > 1:
            ratio = torch.tensor(width - 1, dtype=f32, device=dev) / torch.tensor(crop_w - 1, dtype=f32, device=dev)
            xs = torch.arange(crop_w, dtype=f32, device=dev) * ratio
            w_x1, w_x2 = (width - 1 - xs)[None, None, :, None], xs[None, None, :, None]
        else:
            w_x1 = w_x2 = torch.tensor(0.5 * (width - 1), dtype=f32, device=dev)
        return torch.stack(
            [
                (grad_y * w_y1).sum(dim=(1, 2, 3)),
                (grad_x * w_x1).sum(dim=(1, 2, 3)),
                (grad_y * w_y2).sum(dim=(1, 2, 3)),
                (grad_x * w_x2).sum(dim=(1, 2, 3)),
            ],
            dim=1,
        )

    return run


def _crop_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    image, boxes, _, crop_size = op.inputs
    size = constant_value(crop_size)
    ch, cw = (int(size[0]), int(size[1])) if size is not None else (None, None)
    depth = image.shape[3].value if image.shape.ndims == 4 else None
    n = boxes.shape[0].value if boxes.shape.ndims == 2 else None
    return [(dtypes.float32, TensorShape([n, ch, cw, depth]))]


def _crop_grad(op: Any, grad: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops
    from dtf_notebook.ops.array.common import dense

    image, boxes, box_ind, _ = op.inputs
    image_shape = image.shape.as_list() if image.shape.is_fully_defined() else array_ops.shape(image)
    method = op.get_attr("method")
    grad_image = None
    if image.dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        size = convert_to_tensor(image_shape, dtype=dtypes.int32)
        attrs = {"T": image.dtype, "method": method}
        grad_image = make_op("CropAndResizeGradImage", [dense(grad), boxes, box_ind, size], attrs).outputs[0]
    attrs = {"T": image.dtype, "method": "bilinear"}
    grad_boxes = make_op("CropAndResizeGradBoxes", [dense(grad), image, boxes, box_ind], attrs).outputs[0]
    return [grad_image, grad_boxes, None, None]


op_registry.register_op("CropAndResize", infer=_crop_infer, kernel=_crop_kernel, grad=_crop_grad)


def _grad_image_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    size = constant_value(op.inputs[3])
    return [(op.get_attr("T"), TensorShape(None if size is None else [int(v) for v in size]))]


op_registry.register_op(
    "CropAndResizeGradImage",
    infer=_grad_image_infer,
    kernel=_crop_grad_image_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)
op_registry.register_op(
    "CropAndResizeGradBoxes",
    infer=lambda op: [(dtypes.float32, op.inputs[2].shape)],
    kernel=_crop_grad_boxes_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


def crop_and_resize(
    image: Any,
    boxes: Any,
    box_ind: Any = None,
    crop_size: Any = None,
    method: str = "bilinear",
    extrapolation_value: float = 0,
    name: str | None = None,
    box_indices: Any = None,
) -> Tensor:
    """Crops ``boxes`` out of ``image`` and resizes each crop to ``crop_size``: ``[num_boxes, crop_h, crop_w, depth]``
    float32 (TF1's signature; ``box_indices`` is TF's newer name of ``box_ind``).

    Args:
        image: ``[batch, height, width, depth]`` real image.
        boxes: ``[num_boxes, 4]`` float boxes ``[y1, x1, y2, x2]`` in normalized coordinates (``y1 > y2`` flips).
        box_ind: ``[num_boxes]`` int32: the image of each box.
        crop_size: ``[crop_h, crop_w]`` int32.
        method: ``"bilinear"`` or ``"nearest"``.
        extrapolation_value: The value of points outside the image.
        name: Name of the op.
        box_indices: Alias of ``box_ind``.

    Raises:
        ValueError: an unknown ``method``, or both ``box_ind`` and ``box_indices``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     img = tf.reshape(tf.range(4.0), [1, 2, 2, 1])
        ...     print(sess.run(tf.image.crop_and_resize(img, [[0.0, 0.0, 1.0, 1.0]], [0], [3, 3]))[0, :, :, 0])
        [[0.  0.5 1. ]
         [1.  1.5 2. ]
         [2.  2.5 3. ]]
    """
    if box_ind is not None and box_indices is not None:
        raise ValueError("Cannot specify both 'box_indices' and 'box_ind'.")
    box_ind = box_indices if box_ind is None else box_ind
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    with name_scope(name, "CropAndResize") as scope:
        image_t = convert_to_tensor(image, name="image")
        check_dtype(image_t, _REAL, "CropAndResize", "image")
        boxes_t = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        ind_t = convert_to_tensor(box_ind, dtype=dtypes.int32, name="box_ind")
        size_t = convert_to_tensor(crop_size, dtype=dtypes.int32, name="crop_size")
        attrs = {"T": image_t.dtype, "method": method, "extrapolation_value": float(extrapolation_value)}
        return make_op("CropAndResize", [image_t, boxes_t, ind_t, size_t], attrs, name=scope).outputs[0]


# ---- ExtractGlimpse ------------------------------------------------------------------------------------------------
def _glimpse_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    centered, normalized = bool(op.get_attr("centered")), bool(op.get_attr("normalized"))
    noise = op.get_attr("noise") or ("uniform" if op.get_attr("uniform_noise") else "gaussian")  # TF's rule
    gen = ctx.generator(0, 0)

    def run(images: Any, size: Any, offsets: Any) -> torch.Tensor:
        gh, gw = (int(v) for v in size.reshape(-1).tolist())
        batch, height, width, depth = images.shape
        if offsets.shape != (batch, 2):
            raise errors.InvalidArgumentError(
                None, op, f"offsets must be [batch_size, 2], got {list(offsets.shape)} for batch {batch}"
            )
        out = torch.empty((batch, gh, gw, depth), dtype=images.dtype, device=images.device)
        f32 = np.float32
        for i in range(batch):
            y, x = f32(offsets[i, 0].item()), f32(offsets[i, 1].item())
            # TF 1's ExtractGlimpse arithmetic: centred offsets are halved even when not normalized, and the
            # offset marks the window's centre.
            if normalized:
                x, y = x * f32(width), y * f32(height)
            if centered:
                x = x / f32(2) + f32(width) / f32(2)
                y = y / f32(2) + f32(height) / f32(2)
            x, y = x - f32(gw) / f32(2), y - f32(gh) / f32(2)
            ox, oy = int(x), int(y)  # truncation toward zero, as TF's (Index) cast
            img = images[i]
            if noise == "zero":
                out[i] = 0
            elif noise == "uniform":
                lo, hi = img.min(), img.max()
                out[i] = lo + torch.rand((gh, gw, depth), generator=gen, device=images.device) * (hi - lo)
            else:  # gaussian per channel, clipped to the channel's range
                flat = img.reshape(-1, depth)
                mean, std = flat.mean(0), flat.std(0, unbiased=False)
                noise_v = torch.randn((gh, gw, depth), generator=gen, device=images.device) * std + mean
                out[i] = torch.minimum(torch.maximum(noise_v, flat.min(0).values), flat.max(0).values)
            ys0, xs0 = max(oy, 0), max(ox, 0)
            ys1, xs1 = min(oy + gh, height), min(ox + gw, width)
            if ys1 > ys0 and xs1 > xs0:  # the part of the window inside the image
                out[i, ys0 - oy : ys1 - oy, xs0 - ox : xs1 - ox] = img[ys0:ys1, xs0:xs1]
        return out

    return run


def _glimpse_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    images, size, _ = op.inputs
    s = constant_value(size)
    gh, gw = (int(s[0]), int(s[1])) if s is not None else (None, None)
    b, d = (images.shape[0].value, images.shape[3].value) if images.shape.ndims == 4 else (None, None)
    return [(dtypes.float32, TensorShape([b, gh, gw, d]))]


op_registry.register_op(
    "ExtractGlimpse", infer=_glimpse_infer, kernel=_glimpse_kernel, grad=op_registry.NOT_DIFFERENTIABLE, stateful=True
)


def extract_glimpse(
    input: Any,  # noqa: A002 - TF's name
    size: Any,
    offsets: Any,
    centered: bool = True,
    normalized: bool = True,
    uniform_noise: bool = True,
    name: str | None = None,
) -> Tensor:
    """Extracts ``size`` ``[glimpse_h, glimpse_w]`` windows centred at ``offsets`` ``[batch, 2]`` (``(y, x)``) from
    ``input`` ``[batch, height, width, channels]`` float32, with TF1's ``ExtractGlimpse`` placement: offsets scaled to
    pixels when ``normalized``; when ``centered``, halved and taken from the image centre (halved even when not
    normalized, as TF 1's op does); the window's corner truncated to whole pixels. Parts of a window outside the
    image are random noise, uniform between the image's minimum and maximum (TF1's wrapper asks for uniform noise
    whatever ``uniform_noise`` says, as here; TF's noise too is random, so those pixels differ from TF's).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     img = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
        ...     print(sess.run(tf.image.extract_glimpse(img, [2, 2], [[0.0, 0.0]]))[0, :, :, 0])
        [[ 5.  6.]
         [ 9. 10.]]
    """
    with name_scope(name, "ExtractGlimpse") as scope:
        images = convert_to_tensor(input, dtype=dtypes.float32, name="input")
        size_t = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        offsets_t = convert_to_tensor(offsets, dtype=dtypes.float32, name="offsets")
        attrs = {
            "centered": bool(centered),
            "normalized": bool(normalized),
            "uniform_noise": bool(uniform_noise),
            "noise": "uniform",
        }
        return make_op("ExtractGlimpse", [images, size_t, offsets_t], attrs, name=scope).outputs[0]


# ---- ExtractImagePatches -------------------------------------------------------------------------------------------
def _window(op: Any) -> tuple[list[int], list[int], list[int], str]:
    return list(op.get_attr("ksizes")), list(op.get_attr("strides")), list(op.get_attr("rates")), op.get_attr("padding")


def _out_size(size: int, k: int, stride: int, rate: int, padding: str) -> tuple[int, int]:
    """TF's ``GetWindowedOutputSize`` with dilation: output size and the padding before."""
    eff = (k - 1) * rate + 1
    if padding == "VALID":
        return (size - eff + stride) // stride, 0
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2


def _patches_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    ksizes, strides, rates, padding = _window(op)
    kh, kw, sh, sw, rh, rw = ksizes[1], ksizes[2], strides[1], strides[2], rates[1], rates[2]

    def run(images: Any) -> torch.Tensor:
        batch, height, width, depth = images.shape
        oh, ph = _out_size(height, kh, sh, rh, padding)
        ow, pw = _out_size(width, kw, sw, rw, padding)
        if oh <= 0 or ow <= 0:
            return torch.zeros((batch, max(oh, 0), max(ow, 0), kh * kw * depth), dtype=images.dtype)
        x = images.permute(0, 3, 1, 2)
        work = x if x.is_floating_point() else x.double()  # unfold wants floats; int64 indices fit float64 exactly
        need_h, need_w = (oh - 1) * sh + (kh - 1) * rh + 1, (ow - 1) * sw + (kw - 1) * rw + 1
        work = F.pad(work, (pw, max(need_w - width - pw, 0), ph, max(need_h - height - ph, 0)))
        cols = F.unfold(work, (kh, kw), dilation=(rh, rw), stride=(sh, sw))  # [b, depth*kh*kw, oh*ow]
        cols = cols.reshape(batch, depth, kh, kw, oh, ow).permute(0, 4, 5, 2, 3, 1)
        return cols.reshape(batch, oh, ow, kh * kw * depth).to(images.dtype)

    return run


def _patches_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    images = op.inputs[0]
    ksizes, strides, rates, padding = _window(op)
    if images.shape.ndims is None:
        return [(images.dtype, TensorShape([None] * 4))]
    b, h, w, d = (dim.value for dim in images.shape.dims)
    oh = None if h is None else _out_size(h, ksizes[1], strides[1], rates[1], padding)[0]
    ow = None if w is None else _out_size(w, ksizes[2], strides[2], rates[2], padding)[0]
    return [(images.dtype, TensorShape([b, oh, ow, None if d is None else ksizes[1] * ksizes[2] * d]))]


def _patches_grad(op: Any, grad: Any) -> list[Any]:
    """TF's gradient: the patches of an image of 1-based pixel indices say where each patch value came from (0 for
    padding); the incoming gradient is summed back by index."""
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.common import dense

    shape = array_ops.shape(op.inputs[0])
    batch, rows_in, cols_in, channels = shape[0], shape[1], shape[2], shape[3]
    count = math_ops.add(math_ops.multiply(rows_in, cols_in), 1)
    index_image = array_ops.reshape(
        math_ops.range(1, count, dtype=dtypes.int64), array_ops.stack([1, rows_in, cols_in, 1])
    )
    ksizes, strides, rates, padding = _window(op)
    attrs = {"ksizes": ksizes, "strides": strides, "rates": rates, "padding": padding, "T": dtypes.int64}
    sources = make_op("ExtractImagePatches", [index_image], attrs).outputs[0]
    out_shape = array_ops.shape(op.outputs[0])
    rows_out, cols_out = out_shape[1], out_shape[2]
    grad = array_ops.reshape(dense(grad), array_ops.stack([batch, rows_out, cols_out, ksizes[1] * ksizes[2], channels]))
    grad = array_ops.transpose(grad, [1, 2, 3, 0, 4])  # [rows_out, cols_out, k, batch, channels]
    summed = math_ops.unsorted_segment_sum(
        array_ops.reshape(grad, array_ops.stack([-1, batch, channels])),
        math_ops.cast(array_ops.reshape(sources, [-1]), dtypes.int32),
        math_ops.cast(count, dtypes.int32),
    )
    image_grad = array_ops.reshape(summed[1:], array_ops.stack([rows_in, cols_in, batch, channels]))
    return [array_ops.transpose(image_grad, [2, 0, 1, 3])]


op_registry.register_op("ExtractImagePatches", infer=_patches_infer, kernel=_patches_kernel, grad=_patches_grad)


def _four(values: Any, what: str) -> list[int]:
    values = [int(v) for v in values]
    if len(values) != 4 or values[0] != 1 or values[3] != 1:
        raise ValueError(f"{what} must be [1, rows, cols, 1], got {values}")
    return values


def extract_image_patches(
    images: Any,
    ksizes: Any = None,
    strides: Any = None,
    rates: Any = None,
    padding: str | None = None,
    name: str | None = None,
    sizes: Any = None,
) -> Tensor:
    """The ``ksizes`` ``[1, rows, cols, 1]`` windows of ``images`` ``[batch, h, w, depth]`` every ``strides``,
    dilated by ``rates``, flattened into the depth: ``[batch, out_rows, out_cols, rows * cols * depth]``
    (``sizes`` is TF's newer name of ``ksizes``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     img = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
        ...     p = tf.image.extract_image_patches(img, [1, 2, 2, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
        ...     print(sess.run(p)[0, 0, 0])
        [0. 1. 4. 5.]
    """
    if ksizes is not None and sizes is not None:
        raise ValueError("Cannot specify both 'sizes' and 'ksizes'.")
    ksizes = sizes if ksizes is None else ksizes
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    with name_scope(name, "ExtractImagePatches") as scope:
        images_t = convert_to_tensor(images, name="images")
        check_dtype(images_t, _REAL, "ExtractImagePatches", "images")
        attrs = {
            "ksizes": _four(ksizes, "ksizes"),
            "strides": _four(strides, "strides"),
            "rates": _four(rates, "rates"),
            "padding": padding,
            "T": images_t.dtype,
        }
        return make_op("ExtractImagePatches", [images_t], attrs, name=scope).outputs[0]


def extract_patches(images: Any, sizes: Any, strides: Any, rates: Any, padding: str, name: str | None = None) -> Tensor:
    """``tf.image.extract_patches``: :func:`extract_image_patches` with TF2's argument names.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.image.extract_patches(tf.zeros([2, 5, 5, 3]), [1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1],
        ...                              "SAME").shape.as_list()
        [2, 5, 5, 27]
    """
    return extract_image_patches(images, sizes, strides, rates, padding, name)
