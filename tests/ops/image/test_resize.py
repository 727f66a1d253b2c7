"""The resizing ops and ``tf.image.resize_images`` against real TensorFlow: values, gradients, static shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.ops.image.support import image, run, static_shape

pytestmark = pytest.mark.tf_oracle

SIZES = [((5, 7), (9, 4)), ((8, 8), (3, 5)), ((4, 6), (4, 6)), ((1, 3), (5, 2)), ((6, 5), (13, 17)), ((3, 3), (1, 1))]
MODES = [(False, False), (True, False), (False, True)]
OPS = ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic", "resize_area"]


def _resize(op: str, x: np.ndarray, size: tuple[int, int], align: bool, half: bool):
    def build(tf: Any) -> Any:
        fn = getattr(tf.image, op)
        kwargs = (
            {"align_corners": align} if op == "resize_area" else {"align_corners": align, "half_pixel_centers": half}
        )
        return fn(tf.constant(x), list(size), **kwargs)

    return build


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("sizes", SIZES, ids=str)
def test_values_match_tensorflow(tf1, op, sizes):
    (h, w), size = sizes
    x = image(2, h, w, 3, seed=h * 10 + w) * 4 - 2
    for align, half in MODES:
        if op == "resize_area" and half:
            continue
        build = _resize(op, x, size, align, half)
        want, got = run(tf1, build), run(dtf, build)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6, err_msg=f"{op} {sizes} {align} {half}")


@pytest.mark.parametrize("op", OPS)
def test_integer_images_match_tensorflow(tf1, op):
    for dtype in (np.uint8, np.int32):
        x = image(1, 5, 6, 2, dtype=dtype, seed=3) // 2
        build = _resize(op, x, (7, 3), False, False)
        want, got = run(tf1, build), run(dtf, build)
        assert got.dtype == want.dtype
        # TF interpolates in float32: values near 1e9 lose digits to cancellation, relative to the largest.
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-7 * np.abs(want).max())


@pytest.mark.parametrize("op", ["resize_bilinear", "resize_nearest_neighbor", "resize_bicubic"])
def test_gradients_match_tensorflow(tf1, op):
    x = image(2, 5, 4, 2, seed=7)
    weights = image(2, 7, 9, 2, seed=8)
    for align, half in MODES:
        for size in ((7, 9), (3, 2)):

            def build(tf: Any, align=align, half=half, size=size) -> Any:
                xt = tf.constant(x)
                y = getattr(tf.image, op)(xt, list(size), align_corners=align, half_pixel_centers=half)
                w = tf.constant(weights[:, : size[0], : size[1], :])
                return tf.gradients(tf.reduce_sum(y * w), xt)[0]

            np.testing.assert_allclose(run(dtf, build), run(tf1, build), rtol=1e-5, atol=1e-6)


def test_resize_area_has_no_gradient(tf1):
    for tf in (tf1, dtf):
        with tf.Graph().as_default():
            x = tf.constant(image(1, 4, 4, 1))
            with pytest.raises(LookupError):
                tf.gradients(tf.reduce_sum(tf.image.resize_area(x, [2, 2])), x)


RESIZE_IMAGES = {
    "bilinear_3d": lambda tf, x: tf.image.resize_images(x[0], [7, 3]),
    "nearest": lambda tf, x: tf.image.resize_images(x, [7, 3], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR),
    "bicubic_aligned": lambda tf, x: tf.image.resize_images(x, [9, 9], method=2, align_corners=True),
    "area": lambda tf, x: tf.image.resize_images(x, [2, 3], method=tf.image.ResizeMethod.AREA),
    "same_size": lambda tf, x: tf.image.resize_images(x, [5, 6]),
    "aspect": lambda tf, x: tf.image.resize_images(x, [10, 30], preserve_aspect_ratio=True),
    "resize_alias": lambda tf, x: tf.image.resize(x, [3, 3]),
    "with_pad": lambda tf, x: tf.image.resize_image_with_pad(x[0], 8, 12),
    "with_pad_nearest": lambda tf, x: tf.image.resize_image_with_pad(x, 4, 4, method=1),
    "fed_size": lambda tf, x: tf.image.resize_images(x, tf.placeholder_with_default([4, 4], [2])),
}


@pytest.mark.parametrize("kind", sorted(RESIZE_IMAGES))
def test_resize_images_matches_tensorflow(tf1, kind):
    x = image(2, 5, 6, 3, seed=11)

    def build(tf: Any) -> Any:
        return RESIZE_IMAGES[kind](tf, tf.constant(x))

    np.testing.assert_allclose(run(dtf, build), run(tf1, build), rtol=1e-5, atol=2e-6)
    assert static_shape(dtf, build) == static_shape(tf1, build)


def test_resize_images_errors_match_tensorflow(tf1):
    cases = [
        lambda tf: tf.image.resize_images(tf.zeros([4, 4]), [2, 2]),
        lambda tf: tf.image.resize_images(tf.zeros([1, 4, 4, 1]), [2, 2, 2]),
        lambda tf: tf.image.resize_images(tf.zeros([1, 4, 4, 1]), [2, 2], method=7),
    ]
    for case in cases:
        with tf1.Graph().as_default(), pytest.raises(ValueError) as want:
            case(tf1)
        with dtf.Graph().as_default(), pytest.raises(ValueError) as got:
            case(dtf)
        assert str(got.value) == str(want.value)


def test_align_corners_with_half_pixel_centers_fails_when_run(tf1):
    for tf in (tf1, dtf):
        with tf.Graph().as_default(), tf.Session() as sess:
            y = tf.image.resize_bilinear(tf.zeros([1, 2, 2, 1]), [3, 3], align_corners=True, half_pixel_centers=True)
            with pytest.raises(tf.errors.InvalidArgumentError, match="align_corners must be False"):
                sess.run(y)
