"""Image and audio summaries (``tf.summary.image``, ``tf.summary.audio``): PNG images and WAV clips for TensorBoard.

``ImageSummary`` turns the first ``max_images`` images of a ``[batch, height, width, channels]`` tensor
(1, 3 or 4 channels) into PNG-encoded ``Summary.Image`` values, scaling float images to ``uint8`` as TF1's
kernel does; ``AudioSummaryV2`` turns the first ``max_outputs`` clips of a ``[batch, frames(, channels)]``
float tensor in [-1, 1] into 16-bit PCM WAV ``Summary.Audio`` values. One output is tagged ``tag/image``
(``tag/audio``); several are tagged ``tag/image/0``, ``tag/image/1``, ...

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.summary.messages import Summary
    >>> with tf.Graph().as_default():
    ...     s = image("digits", tf.zeros([2, 8, 8, 1]))
    ...     with tf.Session() as sess:
    ...         values = Summary.FromString(sess.run(s)).value
    >>> [(v.tag, v.image.height, v.image.width, v.image.encoded_image_string[:4]) for v in values]
    [('digits/image/0', 8, 8, b'\\x89PNG'), ('digits/image/1', 8, 8, b'\\x89PNG')]
"""

from __future__ import annotations

import io
import struct
import wave
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.summary.messages import Summary
from dtf_notebook.summary.summary_ops import (
    _collect,
    _scalar_string,
    _scalar_string_output,
    _shape_text,
    _tag,
    summary_scope,
)

_IMAGE_TYPES = (dtypes.uint8, dtypes.float32, dtypes.float16, dtypes.float64)
_BAD_COLOR = np.array([255, 0, 0, 255], np.uint8)  # TF1's default: opaque red for non-finite pixels


# ---- encoders -----------------------------------------------------------------------------------
def encode_png(pixels: np.ndarray) -> bytes:
    """A PNG file of an ``[height, width, channels]`` uint8 array (1: grey, 3: RGB, 4: RGBA).

    Example:
        >>> data = encode_png(np.zeros([2, 3, 1], np.uint8))
        >>> data[:8] == b"\\x89PNG\\r\\n\\x1a\\n", struct.unpack(">II", data[16:24])
        (True, (3, 2))
    """
    height, width, channels = pixels.shape
    color_type = {1: 0, 3: 2, 4: 6}[channels]  # grey, truecolour, truecolour with alpha

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    # Every scanline starts with filter type 0 (none).
    rows = np.concatenate([np.zeros([height, 1], np.uint8), pixels.reshape(height, width * channels)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
        + chunk(b"IEND", b"")
    )


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """A 16-bit PCM WAV file of ``[frames, channels]`` float samples in [-1, 1] (TF's rounding and clipping).

    Example:
        >>> data = encode_wav(np.array([[0.0], [0.5], [2.0]], np.float32), 8000)
        >>> data[:4], data[8:12], np.frombuffer(data[44:], "<i2").tolist()
        (b'RIFF', b'WAVE', [0, 16384, 32767])
    """
    pcm = np.clip(np.round(samples.astype(np.float32) * 32768.0), -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(samples.shape[1])
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def to_uint8_image(image: np.ndarray, bad_color: np.ndarray = _BAD_COLOR) -> np.ndarray:
    """TF1's conversion of one float ``[height, width, channels]`` image for a summary.

    All non-negative: scaled so the largest finite value becomes 255. Otherwise: scaled so the largest
    magnitude becomes 127, around 128. A pixel with a non-finite channel takes ``bad_color``.

    Example:
        >>> to_uint8_image(np.array([[[0.0], [0.5], [1.0]]])).ravel().tolist()
        [0, 127, 255]
        >>> to_uint8_image(np.array([[[-1.0], [0.0], [np.nan]]])).ravel().tolist()
        [1, 128, 255]
    """
    values = image.astype(np.float32)
    finite = np.isfinite(values).all(axis=-1)
    seen = values[finite]
    low, high = (float(seen.min()), float(seen.max())) if seen.size else (0.0, 0.0)
    if low < 0:
        top = max(abs(low), abs(high))
        scale, offset = (0.0 if top < 1e-6 else 127.0 / top), 128.0
    else:
        scale, offset = (0.0 if high < 1e-6 else 255.0 / high), 0.0
    with np.errstate(invalid="ignore"):
        out = np.where(finite[..., None], values * np.float32(scale) + np.float32(offset), 0).astype(np.uint8)
    out[~finite] = bad_color[: image.shape[-1]]
    return out


# ---- kernels ------------------------------------------------------------------------------------
def _host(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value.float().numpy() if value.dtype in (torch.float16, torch.bfloat16) else value.numpy()
    return np.asarray(value)


def _tags(tag: str, count: int, max_outputs: int, kind: str) -> list[str]:
    return [f"{tag}/{kind}"] if max_outputs == 1 else [f"{tag}/{kind}/{i}" for i in range(count)]


def _image_summary_kernel(op: Any, ctx: Any):
    max_images = op.get_attr("max_images")
    bad_color = np.asarray(op.get_attr("bad_color"), np.uint8).reshape(-1)

    def run(tag: np.ndarray, tensor: Any) -> np.ndarray:
        images = _host(tensor)
        if images.ndim != 4 or images.shape[-1] not in (1, 3, 4):
            raise errors.InvalidArgumentError(
                None, op, f"Tensor must be 4-D with last dim 1, 3, or 4, not {_shape_text(images.shape)}"
            )
        if bad_color.size < images.shape[-1]:
            raise errors.InvalidArgumentError(
                None, op, f"bad_color has {bad_color.size} channels, the images {images.shape[-1]}"
            )
        batch = images[:max_images]
        summary = Summary()
        for name, image in zip(_tags(_tag(tag, "Tag"), len(batch), max_images, "image"), batch):
            pixels = image if image.dtype == np.uint8 else to_uint8_image(image, bad_color)
            height, width, channels = pixels.shape
            encoded = Summary.Image(height=height, width=width, colorspace=channels)
            encoded.encoded_image_string = encode_png(np.ascontiguousarray(pixels))
            summary.value.add(tag=name, image=encoded)
        return _scalar_string(summary.SerializeToString())

    return run


def _audio_summary_kernel(op: Any, ctx: Any):
    max_outputs = op.get_attr("max_outputs")

    def run(tag: np.ndarray, tensor: Any, sample_rate: Any) -> np.ndarray:
        clips = _host(tensor)
        rate = _host(sample_rate)
        if rate.shape != ():
            raise errors.InvalidArgumentError(None, op, f"sample_rate must be a scalar, not {_shape_text(rate.shape)}")
        if clips.ndim == 2:
            clips = clips[:, :, None]
        if clips.ndim != 3:
            raise errors.InvalidArgumentError(None, op, f"Tensor must be 3-D or 2-D, got: {_shape_text(clips.shape)}")
        if not 0 < float(rate) < 2**31:
            raise errors.InvalidArgumentError(None, op, f"sample_rate must be positive, got {float(rate)}")
        batch = clips[:max_outputs]
        summary = Summary()
        for name, clip in zip(_tags(_tag(tag, "Tag"), len(batch), max_outputs, "audio"), batch):
            frames, channels = clip.shape
            audio = Summary.Audio(sample_rate=float(rate), num_channels=channels, length_frames=frames)
            audio.encoded_audio_string = encode_wav(clip, int(float(rate)))
            audio.content_type = "audio/wav"
            summary.value.add(tag=name, audio=audio)
        return _scalar_string(summary.SerializeToString())

    return run


for _type, _kernel in (("ImageSummary", _image_summary_kernel), ("AudioSummaryV2", _audio_summary_kernel)):
    op_registry.register_op(
        _type, infer=_scalar_string_output, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
    )


# ---- builders -----------------------------------------------------------------------------------
def image(
    name: str,
    tensor: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> Tensor:
    """A summary of up to ``max_outputs`` images of a ``[batch, height, width, channels]`` tensor.

    TF1's ``tf.summary.image``.

    ``uint8`` images are used as they are; float images are scaled as :func:`to_uint8_image` describes.

    Raises:
        TypeError: ``tensor`` is not uint8, float16, float32 or float64.
        ValueError: ``max_outputs`` is below 1.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.summary.messages import Summary
        >>> with tf.Graph().as_default():
        ...     s = image("input", tf.ones([5, 4, 6, 3]), max_outputs=1)
        ...     with tf.Session() as sess:
        ...         [(v.tag, v.image.colorspace) for v in Summary.FromString(sess.run(s)).value]
        [('input/image', 3)]
    """
    if max_outputs < 1:
        raise ValueError(f"max_outputs must be at least 1, got {max_outputs}")
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, name="tensor")
        check_dtype(tensor, _IMAGE_TYPES, "ImageSummary", "tensor")
        tag_tensor = constant(tag, dtype=dtypes.string, name="tag")
        attrs = {"max_images": int(max_outputs), "bad_color": _BAD_COLOR.copy(), "T": tensor.dtype}
        value = make_op("ImageSummary", [tag_tensor, tensor], attrs, name=scope).outputs[0]
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def audio(
    name: str,
    tensor: Any,
    sample_rate: Any,
    max_outputs: int = 3,
    collections: Sequence[str] | None = None,
    family: str | None = None,
) -> Tensor:
    """A summary of up to ``max_outputs`` clips of a ``[batch, frames(, channels)]`` float tensor.

    TF1's ``tf.summary.audio``.

    Samples in [-1, 1] become 16-bit PCM (rounded, clipped); ``sample_rate`` is in Hz.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.summary.messages import Summary
        >>> with tf.Graph().as_default():
        ...     s = audio("tone", tf.zeros([1, 100]), 8000.0)
        ...     with tf.Session() as sess:
        ...         v = Summary.FromString(sess.run(s)).value[0]
        >>> v.tag, v.audio.length_frames, v.audio.content_type
        ('tone/audio/0', 100, 'audio/wav')
    """
    if max_outputs < 1:
        raise ValueError(f"max_outputs must be at least 1, got {max_outputs}")
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, dtype=dtypes.float32, name="tensor")
        rate = convert_to_tensor(sample_rate, dtype=dtypes.float32, name="sample_rate")
        tag_tensor = constant(tag, dtype=dtypes.string, name="tag")
        attrs = {"max_outputs": int(max_outputs)}
        value = make_op("AudioSummaryV2", [tag_tensor, tensor, rate], attrs, name=scope).outputs[0]
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


__all__ = ["audio", "encode_png", "encode_wav", "image", "to_uint8_image"]
