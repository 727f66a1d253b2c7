"""psnr, ssim, ssim_multiscale, the JPEG-quality round trip and the new decoders against real TensorFlow."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.image.support import image, run

pytestmark = pytest.mark.tf_oracle


def _pair(shape, seed=0, noise=0.1):
    a = image(*shape, seed=seed)
    b = np.clip(a + np.random.default_rng(seed + 1).normal(0, noise, a.shape), 0, 1).astype(np.float32)
    return a, b


def _close(tf1, build, tol):
    expected, got = run(tf1, build), run(tf, build)
    expected = expected if isinstance(expected, list) else [expected]
    got = got if isinstance(got, list) else [got]
    for e, g in zip(expected, got):
        assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def test_psnr(tf1):
    a, b = _pair((2, 3, 8, 9, 3))
    _close(tf1, lambda m: m.image.psnr(a, b, 1.0), 1e-5)
    ua, ub = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)
    _close(tf1, lambda m: m.image.psnr(ua, ub, 255), 1e-5)
    with pytest.raises(ValueError):
        tf.image.psnr(a, b[..., :2], 1.0)


@pytest.mark.parametrize("filter_size, return_index_map", [(11, False), (7, True)])
def test_ssim_values_and_gradient(tf1, filter_size, return_index_map):
    a, b = _pair((2, 24, 30, 3), seed=3)

    def build(m):
        x = m.constant(a)
        value = m.image.ssim(x, b, 1.0, filter_size=filter_size, return_index_map=return_index_map)
        return [value, *m.gradients(m.reduce_sum(value), x)]

    _close(tf1, build, 1e-5)
    ua, ub = (a * 255).astype(np.uint8), (b * 255).astype(np.uint8)
    _close(tf1, lambda m: m.image.ssim(ua, ub, 255, filter_sigma=2.0, k1=0.02, k2=0.05), 1e-5)


def test_ssim_multiscale(tf1):
    a, b = _pair((1, 175, 190, 1), seed=5)  # odd sizes: the symmetric padding before each 2x2 pooling
    _close(tf1, lambda m: m.image.ssim_multiscale(a, b, 1.0), 1e-4)
    _close(tf1, lambda m: m.image.ssim_multiscale(a[:, :64, :64], b[:, :64, :64], 1.0, (0.3, 0.7), 5), 1e-4)


def test_ssim_checks_the_filter_fits(tf1):
    a, b = _pair((1, 6, 6, 1))
    with tf.Graph().as_default():
        small = tf.image.ssim(a, b, 1.0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(small)


@pytest.mark.parametrize("quality", [10, 75, 95])
def test_adjust_jpeg_quality_near_tf(tf1, quality):
    """Pillow's libjpeg round trip: within a few levels of TF's (its decoder's fast integer DCT differs)."""
    rng = np.random.default_rng(0)
    smooth = np.clip(np.cumsum(rng.normal(0, 0.05, (32, 40, 3)), axis=1) + 0.5, 0, 1).astype(np.float32)
    expected = run(tf1, lambda m: m.image.adjust_jpeg_quality(smooth, quality))
    got = run(tf, lambda m: m.image.adjust_jpeg_quality(smooth, quality))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.abs(got - expected).max() * 255 <= 10 and np.abs(got - expected).mean() * 255 < 2
    gray = (smooth[..., :1] * 255).astype(np.uint8)
    got = run(tf, lambda m: m.image.adjust_jpeg_quality(gray, m.constant(quality)))
    assert got.dtype == np.uint8 and got.shape == gray.shape
    assert np.abs(got.astype(int) - run(tf1, lambda m: m.image.adjust_jpeg_quality(gray, quality))).max() <= 10


def test_random_jpeg_quality():
    smooth = image(16, 16, 3)
    with tf.Graph().as_default():
        out = tf.image.random_jpeg_quality(smooth, 20, 90, seed=3)
        with tf.Session() as sess:
            values = [sess.run(out) for _ in range(3)]
    assert all(v.shape == (16, 16, 3) and v.dtype == np.float32 for v in values)
    with pytest.raises(ValueError, match="must be less than"):
        tf.image.random_jpeg_quality(smooth, 90, 90)
    with pytest.raises(ValueError, match="between 0 and 100"):
        tf.image.random_jpeg_quality(smooth, 10, 101)


def test_decode_and_crop_jpeg_and_webp(tf1):
    from PIL import Image

    pixels = (image(24, 30, 3) * 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=90)
    jpeg = buf.getvalue()
    expected = run(tf1, lambda m: m.image.decode_and_crop_jpeg(jpeg, [3, 5, 10, 20]))
    got = run(tf, lambda m: m.image.decode_and_crop_jpeg(jpeg, [3, 5, 10, 20]))
    assert got.shape == expected.shape == (10, 20, 3) and np.abs(got.astype(int) - expected).max() <= 6
    np.testing.assert_array_equal(got, run(tf, lambda m: m.image.decode_jpeg(jpeg))[3:13, 5:25])
    with tf.Graph().as_default():
        too_big = tf.image.decode_and_crop_jpeg(jpeg, [20, 0, 10, 5])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="crop window"):
            sess.run(too_big)
    for channels, mode in [(3, "RGB"), (4, "RGBA")]:
        source = pixels if mode == "RGB" else np.concatenate([pixels, pixels[..., :1]], -1)
        buf = io.BytesIO()
        Image.fromarray(source).save(buf, format="WEBP", lossless=True)
        webp = buf.getvalue()
        expected = run(tf1, lambda m, data=webp: m.image.decode_webp(data))
        np.testing.assert_array_equal(run(tf, lambda m, data=webp: m.image.decode_webp(data)), expected)
        assert expected.shape == (1, 24, 30, channels)
        with tf.Graph().as_default():
            wrong = tf.image.decode_webp(webp, channels=7 - channels)
            with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="does not match"):
                sess.run(wrong)
    frames = [Image.fromarray(pixels), Image.fromarray(255 - pixels)]
    buf = io.BytesIO()
    frames[0].save(buf, format="WEBP", save_all=True, append_images=frames[1:], lossless=True)
    animated = run(tf, lambda m: m.image.decode_webp(buf.getvalue()))  # TF 2.21 crashes on this file
    assert animated.shape == (2, 24, 30, 4)
    np.testing.assert_array_equal(animated[1, ..., :3], 255 - pixels)
