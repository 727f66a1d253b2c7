"""Colour ops and photometric functions of ``tf.image`` against real TensorFlow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.ops.image.support import image, run, static_shape

pytestmark = pytest.mark.tf_oracle

RGB = image(2, 6, 5, 3, seed=1)
# Pixels where channels tie or are equal, and pure colours: the branches of the HSV formulas.
EDGES = np.array(
    [
        [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.2], [0.2, 0.5, 0.5], [0.5, 0.2, 0.5], [1.0, 0.0, 0.0]],
        [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.3, 0.3, 0.3], [0.9, 0.1, 0.4], [0.1, 0.9, 0.4], [0.4, 0.1, 0.9]],
    ],
    dtype=np.float32,
)
UINT8 = image(3, 4, 3, dtype=np.uint8, seed=2)

CASES: dict[str, Callable[[Any], Any]] = {
    "rgb_to_hsv": lambda tf: tf.image.rgb_to_hsv(RGB),
    "rgb_to_hsv_edges": lambda tf: tf.image.rgb_to_hsv(EDGES),
    "rgb_to_hsv_double": lambda tf: tf.image.rgb_to_hsv(RGB.astype(np.float64)),
    "hsv_to_rgb": lambda tf: tf.image.hsv_to_rgb(RGB),
    "hsv_roundtrip": lambda tf: tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(EDGES)),
    "adjust_contrast": lambda tf: tf.image.adjust_contrast(RGB, 1.7),
    "adjust_contrast_uint8": lambda tf: tf.image.adjust_contrast(UINT8, 0.5),
    "adjust_contrast_batch_uint8": lambda tf: tf.image.adjust_contrast(image(2, 3, 4, 3, dtype=np.uint8), 2.5),
    "adjust_saturation": lambda tf: tf.image.adjust_saturation(RGB, 0.4),
    "adjust_saturation_up": lambda tf: tf.image.adjust_saturation(RGB, 3.0),
    "adjust_saturation_edges": lambda tf: tf.image.adjust_saturation(EDGES, 1.5),
    "adjust_saturation_uint8": lambda tf: tf.image.adjust_saturation(UINT8, 0.7),
    "adjust_hue": lambda tf: tf.image.adjust_hue(RGB, 0.2),
    "adjust_hue_negative": lambda tf: tf.image.adjust_hue(RGB, -0.45),
    "adjust_hue_edges": lambda tf: tf.image.adjust_hue(EDGES, 0.7),
    "adjust_hue_uint8": lambda tf: tf.image.adjust_hue(UINT8, 0.3),
    "adjust_brightness": lambda tf: tf.image.adjust_brightness(RGB, 0.3),
    "adjust_brightness_uint8": lambda tf: tf.image.adjust_brightness(UINT8, -0.2),
    "adjust_gamma": lambda tf: tf.image.adjust_gamma(RGB, 2.2, gain=0.9),
    "adjust_gamma_uint8": lambda tf: tf.image.adjust_gamma(UINT8, 0.5),
    "per_image_standardization": lambda tf: tf.image.per_image_standardization(RGB),
    "per_image_standardization_uint8": lambda tf: tf.image.per_image_standardization(UINT8),
    "per_image_standardization_flat": lambda tf: tf.image.per_image_standardization(np.ones([2, 2, 1], np.float32)),
    "rgb_to_grayscale": lambda tf: tf.image.rgb_to_grayscale(RGB),
    "rgb_to_grayscale_uint8": lambda tf: tf.image.rgb_to_grayscale(UINT8),
    "grayscale_to_rgb": lambda tf: tf.image.grayscale_to_rgb(tf.constant(RGB[..., :1])),
    "rgb_to_yiq": lambda tf: tf.image.rgb_to_yiq(RGB),
    "yiq_to_rgb": lambda tf: tf.image.yiq_to_rgb(RGB),
    "rgb_to_yuv": lambda tf: tf.image.rgb_to_yuv(RGB),
    "yuv_to_rgb": lambda tf: tf.image.yuv_to_rgb(RGB),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_matches_tensorflow(tf1, kind):
    want, got = run(tf1, CASES[kind]), run(dtf, CASES[kind])
    assert got.dtype == want.dtype
    if want.dtype == np.uint8:
        # Integer results may round a value at .5 differently after float32 noise of one ulp.
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 1
    else:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)
    assert static_shape(dtf, CASES[kind]) == static_shape(tf1, CASES[kind])


CONVERSIONS = [
    (np.uint8, "float32", False),
    (np.uint8, "int32", False),
    (np.int32, "uint8", False),
    (np.int16, "int32", True),
    (np.float32, "uint8", False),
    (np.float32, "uint8", True),
    (np.float32, "int16", True),
    (np.float32, "float64", False),
    (np.int8, "int16", False),
]


@pytest.mark.parametrize("source,target,saturate", CONVERSIONS, ids=str)
def test_convert_image_dtype_matches_tensorflow(tf1, source, target, saturate):
    if np.issubdtype(source, np.integer):
        x = image(4, 5, dtype=source, seed=5)
    else:
        x = image(4, 5, seed=5) * 1.4 - 0.2  # some values out of [0, 1]: saturation matters

    def build(tf: Any) -> Any:
        return tf.image.convert_image_dtype(tf.constant(x), getattr(tf, target), saturate=saturate)

    want, got = run(tf1, build), run(dtf, build)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_photometric_errors_match_tensorflow(tf1):
    cases = [
        lambda tf: tf.image.random_brightness(RGB, -0.1),
        lambda tf: tf.image.random_contrast(RGB, 0.5, 0.2),
        lambda tf: tf.image.random_contrast(RGB, -0.5, 0.2),
        lambda tf: tf.image.random_saturation(RGB, 1.0, 1.0),
        lambda tf: tf.image.random_hue(RGB, 0.6),
        lambda tf: tf.image.adjust_gamma(RGB, -1.0),
        lambda tf: tf.image.grayscale_to_rgb(tf.constant(RGB)),
    ]
    for case in cases:
        with tf1.Graph().as_default(), pytest.raises(ValueError) as want:
            case(tf1)
        with dtf.Graph().as_default(), pytest.raises(ValueError) as got:
            case(dtf)
        assert str(got.value) == str(want.value)


def test_random_adjustments_are_seeded_and_within_their_range():
    x = image(4, 4, 3, seed=9)
    with dtf.Graph().as_default():
        dtf.set_random_seed(5)
        ops = [
            dtf.image.random_brightness(x, 0.2, seed=1),
            dtf.image.random_contrast(x, 0.5, 1.5, seed=2),
            dtf.image.random_saturation(x, 0.5, 1.5, seed=3),
            dtf.image.random_hue(x, 0.1, seed=4),
        ]
        with dtf.Session() as sess:
            first = sess.run(ops)
            second = sess.run(ops)
        with dtf.Session() as sess:
            again = sess.run(ops)
    for a, b, c in zip(first, second, again):
        assert not np.array_equal(a, b)  # a new draw per run
        np.testing.assert_array_equal(a, c)  # the same sequence in a new session
    delta = first[0] - x
    assert np.allclose(delta, delta.flat[0], atol=1e-6) and abs(delta.flat[0]) <= 0.2
