"""Image codecs: ``DecodePng``, ``DecodeJpeg``, ``DecodeGif``, ``DecodeBmp``, ``DecodeImage``, ``EncodePng``,
``EncodeJpeg`` and ``ExtractJpegShape``, on Pillow (imported when a codec op first runs).

Decoding gives ``[height, width, channels]`` (GIF: ``[frames, height, width, 3]``) ``uint8`` images;
16-bit PNGs keep their high bytes (there is no ``uint16`` dtype here); ``channels=0`` keeps the file's channels
(a palette image becomes RGB or RGBA). PNG decoding is exact. JPEG decoding uses Pillow's libjpeg with its default
(accurate) DCT, while TF defaults to libjpeg's fast integer DCT: pixel values can differ by a few levels.
Encoded bytes are Pillow's, so they differ from TF's, but decode to the same pixels (PNG) or nearly (JPEG).

Example:
    >>> import numpy as np
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     png = encode_png(tf.constant(np.arange(12, dtype=np.uint8).reshape(2, 2, 3)))
    ...     print(sess.run(decode_png(png))[1, 1])
    [ 9 10 11]
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = [
    "decode_png",
    "decode_jpeg",
    "decode_gif",
    "decode_bmp",
    "decode_image",
    "encode_png",
    "encode_jpeg",
    "encode_jpeg_variable_quality",
    "decode_and_crop_jpeg",
    "decode_webp",
    "extract_jpeg_shape",
]


def _pillow(op: Operation) -> Any:
    try:
        from PIL import Image
    except ImportError:
        raise errors.UnimplementedError(
            None, op, f"{op.type} needs the Pillow package (pip install pillow) to decode and encode images"
        ) from None
    return Image


def _contents(op: Operation, value: np.ndarray) -> bytes:
    if np.ndim(value) != 0:
        raise errors.InvalidArgumentError(
            None, op, f"contents must be scalar, got shape {list(np.shape(value))}".replace(", ", ",")
        )
    return np.asarray(value, dtype=object).item()


def _string_scalar(value: Any) -> Tensor:
    t = convert_to_tensor(value, dtype=dtypes.string, name="contents")
    return t


_FORMAT_NAMES = {"PNG": "PNG", "JPEG": "JPEG", "MPO": "JPEG", "GIF": "GIF", "BMP": "BMP", "WEBP": "WEBP"}


def _open(op: Operation, data: bytes, expected: tuple[str, ...], draft: tuple[int, int] | None = None) -> Any:
    """The decoded Pillow image of ``data``; ``draft`` ``(channels, ratio)`` asks libjpeg for grey or scaled output,
    as TF's decoder does (the luma channel itself; scaling inside the DCT)."""
    image_module = _pillow(op)
    try:
        img = image_module.open(io.BytesIO(data))
        if draft is not None and img.format == "JPEG":
            channels, ratio = draft
            mode = "L" if channels == 1 else "RGB" if channels == 3 else img.mode
            img.draft(mode, (-(-img.width // ratio), -(-img.height // ratio)))
        img.load()
    except Exception as e:  # Pillow raises many kinds of errors for corrupt data; all mean the same here.
        raise errors.InvalidArgumentError(None, op, f"Invalid {'/'.join(expected)} data or size: {e}") from None
    if _FORMAT_NAMES.get(img.format) not in expected:
        raise errors.InvalidArgumentError(
            None, op, f"Expected image ({'/'.join(expected)}), got {img.format or 'unknown format'}"
        )
    return img


def _png_filler(data: bytes) -> int:
    """The alpha TF's PNG decoder adds: ``(1 << bit_depth) - 1`` of the stored bit depth (15 for a 4-bit palette)."""
    depth = data[24] if len(data) > 24 and data[12:16] == b"IHDR" else 8
    return (1 << min(depth, 8)) - 1


def _pixels(img: Any, channels: int, filler: int = 255) -> np.ndarray:
    """The pixels of a decoded Pillow image as ``[h, w, c]`` uint8, converted to ``channels`` (0: as they are)."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I"):
        # 16-bit grey decoded to 8 bits: the high byte, as libpng's strip does.
        arr = (np.asarray(img, dtype=np.uint32) >> 8).astype(np.uint8)[:, :, None]
    else:
        native = {"1": "L", "L": "L", "LA": "LA", "RGB": "RGB", "RGBA": "RGBA"}.get(img.mode)
        if native is None:  # palette, CMYK, YCbCr ...: expanded to RGB(A)
            has_alpha = img.mode == "PA" or (img.mode == "P" and "transparency" in img.info)
            native = "RGBA" if has_alpha else "RGB"
        arr = np.asarray(img.convert(native), dtype=np.uint8)
        if arr.ndim == 2:
            arr = arr[:, :, None]
    return _with_channels(arr, channels, filler)


def _with_channels(arr: np.ndarray, channels: int, filler: int = 255) -> np.ndarray:
    """``arr`` ``[h, w, c]`` converted to ``channels`` (0: as it is) the way TF's decoders convert; an added
    alpha channel holds ``filler``."""
    have = arr.shape[-1]
    if channels in (0, have):
        return arr
    if channels == 1:
        if have < 3:
            return arr[..., :1]
        # libpng's rgb_to_gray with TF's weights 0.299/0.587, in 15-bit fixed point, truncated.
        r, g, b = (arr[..., i].astype(np.int64) for i in range(3))
        return ((9797 * r + 19234 * g + 3737 * b) >> 15).astype(arr.dtype)[..., None]
    if channels == 3:
        return np.repeat(arr[..., :1], 3, axis=-1) if have < 3 else arr[..., :3]
    if channels == 4:
        full = np.iinfo(arr.dtype).max
        rgb = np.repeat(arr[..., :1], 3, axis=-1) if have < 3 else arr[..., :3]
        alpha = arr[..., -1:] if have in (2, 4) else np.full(arr.shape[:-1] + (1,), min(filler, full), arr.dtype)
        return np.concatenate([rgb, alpha], axis=-1)
    if channels == 2:
        gray = _with_channels(arr, 1)
        alpha = arr[..., -1:] if have in (2, 4) else np.full(arr.shape[:-1] + (1,), np.iinfo(arr.dtype).max, arr.dtype)
        return np.concatenate([gray, alpha], axis=-1)
    raise ValueError(f"channels must be 0, 1, 2, 3 or 4, got {channels}")


def _check_channels(channels: int, allowed: tuple[int, ...]) -> int:
    if channels not in allowed:
        raise ValueError(f"channels must be in {list(allowed)}, got {channels}")
    return int(channels)


# ---- decoders ---------------------------------------------------------------------------------
def decode_png(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name: str | None = None) -> Tensor:
    """Decodes a PNG to ``[height, width, channels]`` uint8 (``dtype`` must be uint8: there is no uint16 here).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     decode_png(tf.constant(b""), channels=3).shape.as_list()
        [None, None, 3]
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype is not dtypes.uint8:
        raise TypeError(f"decode_png decodes to uint8 here (there is no uint16 dtype), got {dtype.name}")
    attrs = {"channels": _check_channels(channels, (0, 1, 3, 4)), "dtype": dtype}
    return make_op("DecodePng", [_string_scalar(contents)], attrs, name=name or "DecodePng").outputs[0]


def decode_jpeg(
    contents: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1.0,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """Decodes a JPEG to ``[height, width, channels]`` uint8 (``ratio`` 1, 2, 4 or 8 downscales while decoding).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     decode_jpeg(tf.constant(b""), channels=1).shape.as_list()
        [None, None, 1]
    """
    if ratio not in (1, 2, 4, 8):
        raise ValueError(f"ratio must be 1, 2, 4, or 8, got {ratio}")
    attrs = {
        "channels": _check_channels(channels, (0, 1, 3)),
        "ratio": int(ratio),
        "fancy_upscaling": bool(fancy_upscaling),
        "try_recover_truncated": bool(try_recover_truncated),
        "acceptable_fraction": float(acceptable_fraction),
        "dct_method": dct_method,
    }
    return make_op("DecodeJpeg", [_string_scalar(contents)], attrs, name=name or "DecodeJpeg").outputs[0]


def decode_gif(contents: Any, name: str | None = None) -> Tensor:
    """Decodes a GIF (all frames) to ``[frames, height, width, 3]`` uint8.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     decode_gif(tf.constant(b"")).shape.as_list()
        [None, None, None, 3]
    """
    return make_op("DecodeGif", [_string_scalar(contents)], name=name or "DecodeGif").outputs[0]


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> Tensor:
    """Decodes a BMP to ``[height, width, channels]`` uint8.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     decode_bmp(tf.constant(b""), channels=3).shape.as_list()
        [None, None, 3]
    """
    attrs = {"channels": _check_channels(channels, (0, 1, 3, 4))}
    return make_op("DecodeBmp", [_string_scalar(contents)], attrs, name=name or "DecodeBmp").outputs[0]


def decode_image(
    contents: Any,
    channels: int | None = None,
    dtype: Any = dtypes.uint8,
    name: str | None = None,
    expand_animations: bool = True,
) -> Tensor:
    """Decodes a PNG, JPEG, GIF or BMP, whichever ``contents`` is (GIFs: 4-D unless ``expand_animations=False``).

    ``dtype`` float32 scales the pixels into [0, 1]; other dtypes convert as ``convert_image_dtype`` does.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     decode_image(tf.constant(b""), channels=3, expand_animations=False).shape.as_list()
        [None, None, 3]
    """
    channels = 0 if channels is None else channels
    dtype = dtypes.as_dtype(dtype)
    decode_dtype = dtype if dtype in (dtypes.float32, dtypes.uint8) else dtypes.uint8
    attrs = {
        "channels": _check_channels(channels, (0, 1, 3, 4)),
        "dtype": decode_dtype,
        "expand_animations": bool(expand_animations),
    }
    image = make_op("DecodeImage", [_string_scalar(contents)], attrs, name=name or "DecodeImage").outputs[0]
    if decode_dtype is not dtype:
        from dtf_notebook.ops.image.transforms import convert_image_dtype

        image = convert_image_dtype(image, dtype)
    return image


def extract_jpeg_shape(contents: Any, output_type: Any = dtypes.int32, name: str | None = None) -> Tensor:
    """The ``[height, width, channels]`` of a JPEG, read from its header.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     extract_jpeg_shape(tf.constant(b"")).shape.as_list()
        [3]
    """
    attrs = {"output_type": dtypes.as_dtype(output_type)}
    return make_op("ExtractJpegShape", [_string_scalar(contents)], attrs, name=name or "ExtractJpegShape").outputs[0]


def _decoded_shape(channels_attr: str | None, rank: int = 3) -> Callable[[Operation], list]:
    def infer(op: Operation) -> list:
        channels = op.get_attr(channels_attr) if channels_attr else 3
        dtype = op.get_attr("dtype") if "dtype" in op.attrs else dtypes.uint8
        last = channels if channels else None
        return [(dtype, TensorShape([None] * (rank - 1) + [last]))]

    return infer


def _to_runtime(arr: np.ndarray, dtype: dtypes.DType = dtypes.uint8) -> torch.Tensor:
    if dtype is dtypes.float32:
        # As convert_image_dtype: times 1/255 in float32.
        return torch.from_numpy(arr.astype(np.float32) * np.float32(1.0 / 255))
    return torch.from_numpy(np.ascontiguousarray(arr.astype(np.uint8)))


def _png_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    channels = op.get_attr("channels")

    def run(contents: np.ndarray) -> torch.Tensor:
        data = _contents(op, contents)
        img = _open(op, data, ("PNG",))
        return _to_runtime(_pixels(img, channels, _png_filler(data)))

    return run


def _jpeg_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    channels, ratio = op.get_attr("channels"), op.get_attr("ratio")

    def run(contents: np.ndarray) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("JPEG",), draft=(channels, ratio))
        return _to_runtime(_pixels(img, channels))

    return run


def _frames(img: Any) -> list[np.ndarray]:
    frames = []
    for i in range(getattr(img, "n_frames", 1)):
        img.seek(i)
        frames.append(np.asarray(img.convert("RGB"), dtype=np.uint8))
    return frames


def _gif_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    def run(contents: np.ndarray) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("GIF",))
        return _to_runtime(np.stack(_frames(img)))

    return run


def _bmp_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    channels = op.get_attr("channels")

    def run(contents: np.ndarray) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("BMP",))
        return _to_runtime(_pixels(img, channels))

    return run


def _image_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    channels, dtype = op.get_attr("channels"), op.get_attr("dtype")
    expand = op.get_attr("expand_animations")

    def run(contents: np.ndarray) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("PNG", "JPEG", "GIF", "BMP"), draft=(channels, 1))
        if _FORMAT_NAMES[img.format] == "GIF":
            frames = _frames(img)
            arr = (
                np.stack([_with_channels(f, channels) for f in frames])
                if expand
                else _with_channels(frames[0], channels)
            )
        else:
            arr = _pixels(img, channels)
        return _to_runtime(arr, dtype)

    return run


def _jpeg_shape_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    out = op.get_attr("output_type")

    def run(contents: np.ndarray) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("JPEG",))
        depth = {"L": 1, "RGB": 3, "CMYK": 4}.get(img.mode, len(img.getbands()))
        return torch.tensor([img.height, img.width, depth], dtype=torch.int64 if out is dtypes.int64 else torch.int32)

    return run


# ---- encoders ---------------------------------------------------------------------------------
def encode_png(image: Any, compression: int = -1, name: str | None = None) -> Tensor:
    """Encodes ``[height, width, channels]`` uint8 pixels, 1 to 4 channels, as a PNG string.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(encode_png(tf.zeros([2, 2, 1], tf.uint8)))[:4])
        b'\\x89PNG'
    """
    x = convert_to_tensor(image, name="image")
    check_dtype(x, (dtypes.uint8,), "EncodePng", "image")
    attrs = {"compression": int(compression), "T": x.dtype}
    return make_op("EncodePng", [x], attrs, name=name or "EncodePng").outputs[0]


def encode_jpeg(
    image: Any,
    format: str = "",  # noqa: A002 - TF's name
    quality: int = 95,
    progressive: bool = False,
    optimize_size: bool = False,
    chroma_downsampling: bool = True,
    density_unit: str = "in",
    x_density: int = 300,
    y_density: int = 300,
    xmp_metadata: str = "",
    name: str | None = None,
) -> Tensor:
    """Encodes ``[height, width, channels]`` uint8 pixels (1 or 3 channels) as a JPEG string.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(encode_jpeg(tf.zeros([8, 8, 3], tf.uint8)))[:3])
        b'\\xff\\xd8\\xff'
    """
    x = convert_to_tensor(image, name="image")
    check_dtype(x, (dtypes.uint8,), "EncodeJpeg", "image")
    if format not in ("", "grayscale", "rgb"):
        raise ValueError(f"format must be '', 'grayscale' or 'rgb', got {format!r}")
    attrs = {
        "format": format,
        "quality": int(quality),
        "progressive": bool(progressive),
        "optimize_size": bool(optimize_size),
        "chroma_downsampling": bool(chroma_downsampling),
        "density_unit": density_unit,
        "x_density": int(x_density),
        "y_density": int(y_density),
        "xmp_metadata": xmp_metadata,
    }
    return make_op("EncodeJpeg", [x], attrs, name=name or "EncodeJpeg").outputs[0]


def _check_image(op: Operation, arr: np.ndarray, allowed: tuple[int, ...]) -> None:
    if arr.ndim != 3:
        raise errors.InvalidArgumentError(None, op, f"image must be 3-dimensional{list(arr.shape)}".replace(" ", ""))
    if arr.shape[-1] not in allowed:
        raise errors.InvalidArgumentError(
            None, op, f"image must have {' or '.join(map(str, allowed))} channels, got {arr.shape[-1]}"
        )


def _encode_png_kernel(op: Operation, ctx: Any) -> Callable[[torch.Tensor], np.ndarray]:
    level = op.get_attr("compression")
    modes = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}

    def run(image: torch.Tensor) -> np.ndarray:
        image_module = _pillow(op)
        arr = image.detach().cpu().numpy().astype(np.uint8)
        _check_image(op, arr, (1, 2, 3, 4))
        img = image_module.fromarray(arr[..., 0] if arr.shape[-1] == 1 else arr, mode=modes[arr.shape[-1]])
        buf = io.BytesIO()
        img.save(buf, format="PNG", compress_level=6 if level < 0 else min(level, 9))
        return np.array(buf.getvalue(), dtype=object)

    return run


def _encode_jpeg_kernel(op: Operation, ctx: Any) -> Callable[[torch.Tensor], np.ndarray]:
    quality, progressive = op.get_attr("quality"), op.get_attr("progressive")
    optimize, chroma = op.get_attr("optimize_size"), op.get_attr("chroma_downsampling")
    fmt = op.get_attr("format")
    units = {"in": 1, "cm": 2}.get(op.get_attr("density_unit"), 1)
    dpi = (op.get_attr("x_density"), op.get_attr("y_density"))

    def run(image: torch.Tensor) -> np.ndarray:
        image_module = _pillow(op)
        arr = image.detach().cpu().numpy().astype(np.uint8)
        _check_image(op, arr, (1, 3))
        if fmt == "grayscale" and arr.shape[-1] != 1 or fmt == "rgb" and arr.shape[-1] != 3:
            raise errors.InvalidArgumentError(None, op, f"format {fmt!r} does not fit {arr.shape[-1]} channels")
        img = image_module.fromarray(
            arr[..., 0] if arr.shape[-1] == 1 else arr, mode="L" if arr.shape[-1] == 1 else "RGB"
        )
        buf = io.BytesIO()
        options = {
            "quality": quality,
            "progressive": progressive,
            "optimize": optimize,
            "subsampling": 2 if chroma else 0,
        }
        if units == 1:
            options["dpi"] = dpi
        img.save(buf, format="JPEG", **options)
        return np.array(buf.getvalue(), dtype=object)

    return run


def _encoded(op: Operation) -> list:
    return [(dtypes.string, TensorShape([]))]


def _register(op_type: str, infer: Any, kernel: Any) -> None:
    op_registry.register_op(op_type, infer=infer, kernel=kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True)


_register("DecodePng", _decoded_shape("channels"), _png_kernel)
_register("DecodeJpeg", _decoded_shape("channels"), _jpeg_kernel)
_register("DecodeGif", _decoded_shape(None, rank=4), _gif_kernel)
_register("DecodeBmp", _decoded_shape("channels"), _bmp_kernel)
_register(
    "DecodeImage",
    lambda op: [
        (
            op.get_attr("dtype"),
            TensorShape(None)
            if op.get_attr("expand_animations")
            else TensorShape([None, None, op.get_attr("channels") or None]),
        )
    ],
    _image_kernel,
)
_register("ExtractJpegShape", lambda op: [(op.get_attr("output_type"), TensorShape([3]))], _jpeg_shape_kernel)
_register("EncodePng", _encoded, _encode_png_kernel)
_register("EncodeJpeg", _encoded, _encode_jpeg_kernel)


# ---- EncodeJpegVariableQuality, DecodeAndCropJpeg, DecodeWebP -------------------------------------------------------
def encode_jpeg_variable_quality(images: Any, quality: Any, name: str | None = None) -> Tensor:
    """Encodes ``[height, width, 1 or 3]`` uint8 pixels as a JPEG of ``quality`` (an int32 scalar tensor, 0-100),
    TF's ``EncodeJpegVariableQuality`` (the other settings are ``encode_jpeg``'s defaults).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(encode_jpeg_variable_quality(tf.zeros([8, 8, 1], tf.uint8), 50))[:2])
        b'\\xff\\xd8'
    """
    x = convert_to_tensor(images, name="images")
    check_dtype(x, (dtypes.uint8,), "EncodeJpegVariableQuality", "images")
    q = convert_to_tensor(quality, dtype=dtypes.int32, name="quality")
    return make_op("EncodeJpegVariableQuality", [x, q], name=name or "EncodeJpegVariableQuality").outputs[0]


def _encode_variable_kernel(op: Operation, ctx: Any) -> Callable[..., np.ndarray]:
    def run(image: torch.Tensor, quality: Any) -> np.ndarray:
        image_module = _pillow(op)
        q = int(quality)
        if not 0 <= q <= 100:
            raise errors.InvalidArgumentError(None, op, f"quality must be in [0,100], got {q}")
        arr = image.detach().cpu().numpy().astype(np.uint8)
        _check_image(op, arr, (1, 3))
        img = image_module.fromarray(
            arr[..., 0] if arr.shape[-1] == 1 else arr, mode="L" if arr.shape[-1] == 1 else "RGB"
        )
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=q, subsampling=2, dpi=(300, 300))
        return np.array(buf.getvalue(), dtype=object)

    return run


def decode_and_crop_jpeg(
    contents: Any,
    crop_window: Any,
    channels: int = 0,
    ratio: int = 1,
    fancy_upscaling: bool = True,
    try_recover_truncated: bool = False,
    acceptable_fraction: float = 1,
    dct_method: str = "",
    name: str | None = None,
) -> Tensor:
    """Decodes a JPEG and crops it to ``crop_window`` ``[y, x, height, width]`` (int32), as TF's
    ``DecodeAndCropJpeg``: ``[height, width, channels]`` uint8.

    Raises:
        ValueError: ``ratio`` not 1, 2, 4 or 8, or ``channels`` not 0, 1 or 3.
        InvalidArgumentError: (when run) the window does not fit in the image.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     jpeg = encode_jpeg(tf.zeros([8, 8, 3], tf.uint8))
        ...     print(sess.run(decode_and_crop_jpeg(jpeg, [2, 1, 4, 3])).shape)
        (4, 3, 3)
    """
    if ratio not in (1, 2, 4, 8):
        raise ValueError(f"ratio must be 1, 2, 4, or 8, got {ratio}")
    attrs = {
        "channels": _check_channels(channels, (0, 1, 3)),
        "ratio": int(ratio),
        "fancy_upscaling": bool(fancy_upscaling),
        "try_recover_truncated": bool(try_recover_truncated),
        "acceptable_fraction": float(acceptable_fraction),
        "dct_method": dct_method,
    }
    window = convert_to_tensor(crop_window, dtype=dtypes.int32, name="crop_window")
    op = make_op("DecodeAndCropJpeg", [_string_scalar(contents), window], attrs, name=name or "DecodeAndCropJpeg")
    return op.outputs[0]


def _decode_crop_kernel(op: Operation, ctx: Any) -> Callable[..., torch.Tensor]:
    channels, ratio = op.get_attr("channels"), op.get_attr("ratio")

    def run(contents: np.ndarray, crop_window: Any) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("JPEG",), draft=(channels, ratio))
        arr = _pixels(img, channels)
        window = [int(v) for v in np.asarray(crop_window.cpu() if hasattr(crop_window, "cpu") else crop_window).ravel()]
        if len(window) != 4:
            raise errors.InvalidArgumentError(None, op, f"crop_window must be shape [4], got {len(window)} values")
        y, x, h, w = window
        if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > arr.shape[0] or x + w > arr.shape[1]:
            raise errors.InvalidArgumentError(
                None, op, f"Invalid JPEG data or crop window, data size {arr.shape[0]}x{arr.shape[1]}, window {window}"
            )
        return _to_runtime(arr[y : y + h, x : x + w])

    return run


def decode_webp(contents: Any, channels: int = 0, dtype: Any = dtypes.uint8, name: str | None = None) -> Tensor:
    """Decodes a WebP image or animation to ``[frames, height, width, channels]`` uint8 (one frame for a still
    image); ``channels`` (0, 3 or 4) must match the file's, and animations are RGBA, as in TF.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     decode_webp(tf.constant(b"")).shape.as_list()
        [None, None, None, None]
    """
    dtype = dtypes.as_dtype(dtype)
    if dtype is not dtypes.uint8:
        raise TypeError(f"decode_webp decodes to uint8, got {dtype.name}")
    attrs = {"channels": _check_channels(channels, (0, 3, 4)), "dtype": dtype}
    return make_op("DecodeWebP", [_string_scalar(contents)], attrs, name=name or "DecodeWebP").outputs[0]


def _webp_kernel(op: Operation, ctx: Any) -> Callable[[np.ndarray], torch.Tensor]:
    channels = op.get_attr("channels")

    def run(contents: np.ndarray) -> torch.Tensor:
        img = _open(op, _contents(op, contents), ("WEBP",))
        frames = max(getattr(img, "n_frames", 1), 1)
        if frames > 1:
            if channels not in (0, 4):
                raise errors.InvalidArgumentError(None, op, "WebP animations are decoded as RGBA (channels 4)")
            arrays = []
            for i in range(frames):
                img.seek(i)
                arrays.append(np.asarray(img.convert("RGBA"), dtype=np.uint8))
            return _to_runtime(np.stack(arrays))
        arr = _pixels(img, 0)
        if channels not in (0, arr.shape[-1]):
            raise errors.InvalidArgumentError(None, op, "Number of channels requested does not match input")
        return _to_runtime(arr[None])

    return run


_register("EncodeJpegVariableQuality", _encoded, _encode_variable_kernel)
_register("DecodeAndCropJpeg", _decoded_shape("channels"), _decode_crop_kernel)
_register(
    "DecodeWebP",
    lambda op: [(dtypes.uint8, TensorShape([None, None, None, op.get_attr("channels") or None]))],
    _webp_kernel,
)
