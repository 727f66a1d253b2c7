"""Image decoding and encoding against real TensorFlow: PNG exactly, JPEG within a few levels (libjpeg's DCTs).

Images are encoded by TF (and some by Pillow, for formats TF cannot write) and decoded by both libraries.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.ops.image.support import image, run

PIL = pytest.importorskip("PIL.Image")

pytestmark = pytest.mark.tf_oracle


def _photo(h: int = 24, w: int = 32) -> np.ndarray:
    """A smooth RGB picture with some detail (JPEG-friendly, unlike noise)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    rgb = np.stack([128 + 100 * np.sin(x / 5), 128 + 90 * np.cos(y / 4), 64 + (x + y) * 2], -1)
    return np.clip(rgb, 0, 255).astype(np.uint8)


def _png_bytes(tf1: Any, pixels: np.ndarray) -> bytes:
    return run(tf1, lambda tf: tf.image.encode_png(tf.constant(pixels)))


@pytest.mark.parametrize("stored", [1, 2, 3, 4])
def test_decode_png_matches_tensorflow(tf1, stored):
    pixels = image(5, 7, stored, dtype=np.uint8, seed=stored)
    data = _png_bytes(tf1, pixels)
    for channels in (0, 1, 3, 4):

        def build(tf: Any, channels: int = channels) -> Any:
            return tf.image.decode_png(data, channels=channels)

        want, got = run(tf1, build), run(dtf, build)
        assert got.dtype == want.dtype == np.uint8
        np.testing.assert_array_equal(got, want, err_msg=f"stored {stored}, channels {channels}")


def test_decode_png_of_a_palette_image_matches_tensorflow(tf1):
    buf = io.BytesIO()
    PIL.fromarray(_photo()).convert("P", palette=PIL.Palette.ADAPTIVE, colors=16).save(buf, format="PNG")
    data = buf.getvalue()
    for channels in (0, 3, 4):
        build = lambda tf, c=channels: tf.image.decode_png(data, channels=c)  # noqa: E731
        np.testing.assert_array_equal(run(dtf, build), run(tf1, build))


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_encode_png_decodes_to_the_pixels_in_tensorflow(tf1, channels):
    pixels = image(6, 9, channels, dtype=np.uint8, seed=10 + channels)
    for compression in (-1, 0, 9):
        data = run(dtf, lambda tf, c=compression: tf.image.encode_png(pixels, compression=c))
        assert data[:4] == b"\x89PNG"
        np.testing.assert_array_equal(run(tf1, lambda tf, d=data: tf.image.decode_png(d)), pixels)


@pytest.mark.parametrize("channels", [0, 1, 3])
def test_decode_jpeg_is_within_a_few_levels_of_tensorflow(tf1, channels):
    for source in (_photo(), _photo()[..., :1]):
        data = run(tf1, lambda tf, s=source: tf.image.encode_jpeg(tf.constant(s), quality=90))
        build = lambda tf, c=channels, d=data: tf.image.decode_jpeg(d, channels=c)  # noqa: E731
        want, got = run(tf1, build), run(dtf, build)
        assert got.shape == want.shape and got.dtype == np.uint8
        diff = np.abs(got.astype(int) - want.astype(int))
        # Pillow's libjpeg uses the accurate integer DCT, TF the fast one.
        assert diff.max() <= 6 and diff.mean() < 1.5


def test_decode_jpeg_ratio_and_shape_match_tensorflow(tf1):
    data = run(tf1, lambda tf: tf.image.encode_jpeg(tf.constant(_photo(32, 48))))
    for ratio in (2, 4):
        build = lambda tf, r=ratio: tf.image.decode_jpeg(data, ratio=r)  # noqa: E731
        assert run(dtf, build).shape == run(tf1, build).shape
    shape = lambda tf: tf.image.extract_jpeg_shape(data)  # noqa: E731
    np.testing.assert_array_equal(run(dtf, shape), run(tf1, shape))


def test_encode_jpeg_decodes_close_to_the_pixels_in_tensorflow(tf1):
    pixels = _photo()
    for kwargs in ({}, {"quality": 75, "chroma_downsampling": False}, {"progressive": True, "optimize_size": True}):
        data = run(dtf, lambda tf, k=kwargs: tf.image.encode_jpeg(pixels, **k))
        decoded = run(tf1, lambda tf, d=data: tf.image.decode_jpeg(d))
        assert decoded.shape == pixels.shape
        assert np.abs(decoded.astype(int) - pixels.astype(int)).mean() < 4
    gray = run(dtf, lambda tf: tf.image.encode_jpeg(pixels[..., :1], format="grayscale"))
    assert run(tf1, lambda tf: tf.image.decode_jpeg(gray)).shape == (24, 32, 1)


def test_decode_image_reads_each_format_as_tensorflow(tf1):
    pixels = _photo(8, 10)
    formats = {}
    for fmt in ("PNG", "BMP", "GIF"):
        buf = io.BytesIO()
        PIL.fromarray(pixels).save(buf, format=fmt)
        formats[fmt] = buf.getvalue()
    formats["JPEG"] = run(tf1, lambda tf: tf.image.encode_jpeg(tf.constant(pixels)))
    for fmt, data in formats.items():
        for kwargs in ({}, {"channels": 3}, {"dtype": "float32", "expand_animations": False}):

            def build(tf: Any, data: bytes = data, kwargs: dict = kwargs) -> Any:
                options = dict(kwargs)
                if "dtype" in options:
                    options["dtype"] = getattr(tf, options["dtype"])
                return tf.image.decode_image(data, **options)

            want, got = run(tf1, build), run(dtf, build)
            assert got.shape == want.shape and got.dtype == want.dtype, (fmt, kwargs)
            tolerance = 6 if fmt == "JPEG" else 0
            scale = 255.0 if got.dtype == np.float32 else 1.0
            assert np.abs(got.astype(float) * scale - want.astype(float) * scale).max() <= tolerance + 1e-3, fmt
    assert run(dtf, lambda tf: tf.image.decode_gif(formats["GIF"])).shape == (1, 8, 10, 3)
    bmp = lambda tf: tf.image.decode_bmp(formats["BMP"])  # noqa: E731
    np.testing.assert_array_equal(run(dtf, bmp), run(tf1, bmp))


def test_corrupt_data_fails_when_run_as_in_tensorflow(tf1):
    for build in (
        lambda tf: tf.image.decode_png(b"not a png"),
        lambda tf: tf.image.decode_jpeg(b"\xff\xd8\xffbroken"),
    ):
        for tf in (tf1, dtf):
            with pytest.raises(tf.errors.InvalidArgumentError):
                run(tf, build)


def test_static_shapes_match_tensorflow(tf1):
    builds = [
        lambda tf: tf.image.decode_png(tf.placeholder(tf.string, []), channels=3),
        lambda tf: tf.image.decode_jpeg(tf.placeholder(tf.string, [])),
        lambda tf: tf.image.decode_image(tf.placeholder(tf.string, []), channels=1, expand_animations=False),
        lambda tf: tf.image.encode_png(tf.zeros([2, 2, 3], tf.uint8)),
    ]
    for build in builds:
        shapes = []
        for tf in (tf1, dtf):
            with tf.Graph().as_default():
                out = build(tf)
                shapes.append(out.shape.as_list() if out.shape.ndims is not None else None)
        assert shapes[0] == shapes[1]
