"""TF's colour ops: ``RGBToHSV``, ``HSVToRGB``, ``AdjustContrastv2``, ``AdjustSaturation`` and ``AdjustHue``.

Each works on the last axis of images ``[..., 3]`` (contrast: on ``[..., height, width, channels]``) with the
float32 formulas of TF's CPU kernels: ``RGBToHSV``/``HSVToRGB`` as ``colorspace_op``, saturation through
``adjust_saturation_op``'s own HSV round trip, hue through ``adjust_hue_op``'s hue/value-range form.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(rgb_to_hsv([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])))
    [[0.  1.  1. ]
     [0.5 1.  0.5]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import check_dtype, make_op, same_as_input

__all__ = ["rgb_to_hsv", "hsv_to_rgb", "adjust_contrastv2", "adjust_saturation_op", "adjust_hue_op"]

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _check_rgb(op: Operation, images: torch.Tensor) -> None:
    if images.dim() < 1:
        raise errors.InvalidArgumentError(None, op, "input must be at least 1D" + str(list(images.shape)))
    if images.shape[-1] != 3:
        raise errors.InvalidArgumentError(
            None, op, f"input must have 3 channels but input only has {images.shape[-1]} channels."
        )


def _infer_rgb(op: Operation) -> list:
    x = op.inputs[0]
    if x.shape.ndims == 0:
        raise ValueError(f"Shape must be at least rank 1 but is rank 0 for '{op.name}' (op: '{op.type}')")
    if x.shape.ndims is not None and x.shape[-1].value not in (None, 3):
        raise ValueError(f"Dimension must be 3 but is {x.shape[-1].value} for '{op.name}' (op: '{op.type}')")
    return same_as_input(op)


def _unary(op_type: str, images: Any, name: str | None) -> Tensor:
    x = convert_to_tensor(images, name="images")
    check_dtype(x, _FLOATS, op_type, "images")
    return make_op(op_type, [x], {"T": x.dtype}, name=name or op_type).outputs[0]


# ---- RGBToHSV / HSVToRGB ----------------------------------------------------------------------
def rgb_to_hsv(images: Any, name: str | None = None) -> Tensor:
    """RGB images (floats in [0, 1], last axis 3) to HSV: hue, saturation and value, each in [0, 1].

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(rgb_to_hsv([0.2, 0.4, 0.4])).round(4))
        [0.5 0.5 0.4]
    """
    return _unary("RGBToHSV", images, name)


def hsv_to_rgb(images: Any, name: str | None = None) -> Tensor:
    """HSV images (last axis 3, values in [0, 1]) back to RGB.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(hsv_to_rgb([0.5, 0.5, 0.4])).round(4))
        [0.2 0.4 0.4]
    """
    return _unary("HSVToRGB", images, name)


def _rgb_to_hsv_kernel(op: Operation, ctx: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    def run(images: torch.Tensor) -> torch.Tensor:
        _check_rgb(op, images)
        r, g, b = images.unbind(-1)
        v = torch.maximum(torch.maximum(r, g), b)
        rng = v - torch.minimum(torch.minimum(r, g), b)
        zero = torch.zeros_like(v)
        s = torch.where(v > 0, rng / v, zero)
        norm = torch.reciprocal(rng) * (1.0 / 6.0)
        sixth = torch.tensor(2.0, dtype=v.dtype) / 6
        h = torch.where(r == v, norm * (g - b), torch.where(g == v, norm * (b - r) + sixth, norm * (r - g) + 2 * sixth))
        h = torch.where(rng > 0, h, zero)
        h = torch.where(h < 0, h + 1, h)
        return torch.stack([h, s, v], -1)

    return run


def _hsv_to_rgb_kernel(op: Operation, ctx: Any) -> Callable[[torch.Tensor], torch.Tensor]:
    def run(images: torch.Tensor) -> torch.Tensor:
        _check_rgb(op, images)
        h, s, v = images.unbind(-1)
        dh = h * 6
        dr = ((dh - 3).abs() - 1).clamp(0, 1)
        dg = (-(dh - 2).abs() + 2).clamp(0, 1)
        db = (-(dh - 4).abs() + 2).clamp(0, 1)
        one_s = -s + 1
        return torch.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], -1)

    return run


# ---- AdjustContrastv2 -------------------------------------------------------------------------
def adjust_contrastv2(images: Any, contrast_factor: Any, name: str | None = None) -> Tensor:
    """``(x - mean) * contrast_factor + mean`` with the mean of each channel over height and width.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_contrastv2([[[0.0], [2.0]]], 2.0))[:, :, 0])
        [[-1.  3.]]
    """
    x = convert_to_tensor(images, name="images")
    check_dtype(x, (dtypes.float16, dtypes.float32), "AdjustContrastv2", "images")
    factor = convert_to_tensor(contrast_factor, dtype=dtypes.float32, name="contrast_factor")
    return make_op("AdjustContrastv2", [x, factor], {"T": x.dtype}, name=name or "AdjustContrastv2").outputs[0]


def _scalar(op: Operation, value: torch.Tensor, what: str) -> float:
    if value.dim() != 0:
        raise errors.InvalidArgumentError(None, op, f"{what} must be scalar: {list(value.shape)}".replace(" ", ""))
    return float(value)


def _contrast_kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
    def run(images: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
        if images.dim() < 3:
            raise errors.InvalidArgumentError(
                None, op, f"input must be at least 3-D, got shape{list(images.shape)}".replace(" ", "")
            )
        f = torch.tensor(_scalar(op, factor, "contrast_factor"), dtype=torch.float32)
        x = images.float()
        mean = x.sum(dim=(-3, -2), keepdim=True) / (x.shape[-3] * x.shape[-2])
        return ((x - mean) * f + mean).to(images.dtype)

    return run


# ---- AdjustSaturation -------------------------------------------------------------------------
def adjust_saturation_op(images: Any, scale: Any, name: str | None = None) -> Tensor:
    """TF's ``AdjustSaturation`` op: the saturation of each RGB pixel multiplied by ``scale`` (clipped to [0, 1]).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_saturation_op([0.2, 0.4, 0.4], 0.0)))
        [0.4 0.4 0.4]
    """
    x = convert_to_tensor(images, name="images")
    check_dtype(x, (dtypes.float16, dtypes.float32), "AdjustSaturation", "images")
    s = convert_to_tensor(scale, dtype=dtypes.float32, name="scale")
    return make_op("AdjustSaturation", [x, s], {"T": x.dtype}, name=name or "AdjustSaturation").outputs[0]


def _saturation_kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
    def run(images: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        _check_rgb(op, images)
        factor = torch.tensor(_scalar(op, scale, "scale"), dtype=torch.float32)
        r, g, b = images.float().unbind(-1)
        # adjust_saturation_op's rgb_to_hsv (1 / (6 * range); the sector offsets are added in double).
        v = torch.maximum(r, torch.maximum(g, b))
        rng = v - torch.minimum(r, torch.minimum(g, b))
        s = torch.where(v > 0, rng / v, torch.zeros_like(v))
        norm = 1.0 / (6.0 * rng)
        h = torch.where(
            r == v,
            norm * (g - b),
            torch.where(
                g == v,
                ((norm * (b - r)).double() + 2.0 / 6.0).float(),
                ((norm * (r - g)).double() + 4.0 / 6.0).float(),
            ),
        )
        h = torch.where(rng <= 0, torch.zeros_like(h), h)
        h = torch.where(h < 0, h + 1, h)
        s = torch.clamp(s * factor, 0.0, 1.0)
        # and its hsv_to_rgb
        c = s * v
        m = v - c
        dh = h * 6
        category = dh.trunc()
        x = c * (1 - (torch.remainder(dh, 2.0) - 1).abs())
        zero = torch.zeros_like(c)
        table = [(c, x, zero), (x, c, zero), (zero, c, x), (zero, x, c), (x, zero, c), (c, zero, x)]
        out = []
        for channel in range(3):
            value = zero
            for k, rows in enumerate(table):
                value = torch.where(category == k, rows[channel], value)
            out.append(value + m)
        return torch.stack(out, -1).to(images.dtype)

    return run


# ---- AdjustHue --------------------------------------------------------------------------------
def adjust_hue_op(images: Any, delta: Any, name: str | None = None) -> Tensor:
    """TF's ``AdjustHue`` op: the hue of each RGB pixel rotated by ``delta`` (a fraction of the colour circle).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(adjust_hue_op([1.0, 0.0, 0.0], 1.0 / 3.0)).round(4))
        [0. 1. 0.]
    """
    x = convert_to_tensor(images, name="images")
    check_dtype(x, (dtypes.float16, dtypes.float32), "AdjustHue", "images")
    d = convert_to_tensor(delta, dtype=dtypes.float32, name="delta")
    return make_op("AdjustHue", [x, d], {"T": x.dtype}, name=name or "AdjustHue").outputs[0]


def _hue_kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
    def run(images: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        _check_rgb(op, images)
        shift = torch.tensor(_scalar(op, delta, "delta"), dtype=torch.float32) * 6
        r, g, b = images.float().unbind(-1)
        # rgb_to_hv_range: the sector (0-5) from the order of r, g, b, and the ratio of the middle value.
        r_lt_g = r < g
        cases = [
            (r_lt_g & (b < r), 1, g, r, b),
            (r_lt_g & (b >= r) & (b > g), 3, b, g, r),
            (r_lt_g & (b >= r) & (b <= g), 2, g, b, r),
            (~r_lt_g & (b < g), 0, r, g, b),
            (~r_lt_g & (b >= g) & (b > r), 4, b, r, g),
            (~r_lt_g & (b >= g) & (b <= r), 5, r, b, g),
        ]
        category = torch.zeros_like(r)
        v_max, v_mid, v_min = torch.zeros_like(r), torch.zeros_like(r), torch.zeros_like(r)
        for mask, k, hi, mid, lo in cases:
            category = torch.where(mask, torch.full_like(r, k), category)
            v_max, v_mid, v_min = (
                torch.where(mask, hi, v_max),
                torch.where(mask, mid, v_mid),
                torch.where(mask, lo, v_min),
            )
        ratio = (v_mid - v_min) / (v_max - v_min)
        odd = torch.remainder(category, 2) == 1
        h = torch.where(v_max == v_min, torch.zeros_like(r), category + torch.where(odd, 1 - ratio, ratio))
        h = h + shift
        for _ in range(2):
            h = torch.where(h < 0, h + 6, h)
            h = torch.where(h >= 6, h - 6, h)
        # hv_range_to_rgb
        category = h.trunc()
        ratio = h - category
        ratio = torch.where(torch.remainder(category, 2) == 1, 1 - ratio, ratio)
        v_mid = v_min + ratio * (v_max - v_min)
        table = {
            0: (v_max, v_mid, v_min),
            1: (v_mid, v_max, v_min),
            2: (v_min, v_max, v_mid),
            3: (v_min, v_mid, v_max),
            4: (v_mid, v_min, v_max),
        }
        out = []
        for channel, default in enumerate((v_max, v_min, v_mid)):
            value = default
            for k, rows in table.items():
                value = torch.where(category == k, rows[channel], value)
            out.append(value)
        return torch.stack(out, -1).to(images.dtype)

    return run


def _image_and_scalar_infer(op: Operation) -> list:
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


op_registry.register_op("RGBToHSV", infer=_infer_rgb, kernel=_rgb_to_hsv_kernel)
op_registry.register_op("HSVToRGB", infer=_infer_rgb, kernel=_hsv_to_rgb_kernel)
op_registry.register_op("AdjustContrastv2", infer=_image_and_scalar_infer, kernel=_contrast_kernel)
op_registry.register_op("AdjustSaturation", infer=_image_and_scalar_infer, kernel=_saturation_kernel)
op_registry.register_op("AdjustHue", infer=_image_and_scalar_infer, kernel=_hue_kernel)
