"""crop_and_resize (values and gradients), extract_glimpse and extract_image_patches against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.image.support import image, run

pytestmark = pytest.mark.tf_oracle

_BOXES = np.array(
    [[0.1, 0.2, 0.8, 0.9], [0.9, 0.8, -0.2, 0.1], [0.3, 0.3, 0.3, 0.6], [-0.5, -0.5, 1.5, 1.5]], np.float32
)


def _close(tf1, build, tol=1e-6):
    expected, got = run(tf1, build), run(tf, build)
    for e, g in zip(expected if isinstance(expected, list) else [expected], got if isinstance(got, list) else [got]):
        assert np.asarray(g).dtype == np.asarray(e).dtype and np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop", [[5, 4], [1, 1], [1, 6]])
@pytest.mark.parametrize("dtype", [np.float32, np.uint8, np.float64])
def test_crop_and_resize_values(tf1, method, crop, dtype):
    img = image(2, 9, 11, 3, dtype=dtype)
    _close(tf1, lambda m: m.image.crop_and_resize(img, _BOXES, [0, 1, 1, 0], crop, method, extrapolation_value=-1.0))
    shape = run(tf, lambda m: m.shape(m.image.crop_and_resize(img, _BOXES, [0, 1, 1, 0], crop)))
    assert shape.tolist() == [4, *crop, 3]


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
def test_crop_and_resize_gradients(tf1, method):
    img = image(2, 9, 11, 3).astype(np.float64)
    weights = image(3, 4, 3, 3, seed=9)

    def build(m):
        x, b = m.constant(img), m.constant(_BOXES[:3])
        y = m.image.crop_and_resize(x, b, box_indices=[0, 1, 1], crop_size=[4, 3], method=method)
        return m.gradients(m.reduce_sum(y * m.constant(weights)), [x, b])

    _close(tf1, build, tol=1e-5)


def test_crop_and_resize_errors():
    img = image(2, 5, 5, 1)
    with tf.Graph().as_default():
        bad_index = tf.image.crop_and_resize(img, _BOXES[:1], [2], [2, 2])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=r"outside \[0, 2\)"):
            sess.run(bad_index)
    with pytest.raises(ValueError, match="method"):
        tf.image.crop_and_resize(img, _BOXES[:1], [0], [2, 2], method="bicubic")


@pytest.mark.parametrize("centered, normalized", [(True, True), (False, True), (True, False), (False, False)])
def test_extract_glimpse_inside_the_image(tf1, centered, normalized):
    img = image(2, 9, 11, 3)
    offsets = {
        (True, True): [[0.1, -0.2], [0.0, 0.3]],
        (False, True): [[0.4, 0.5], [0.3, 0.6]],
        (True, False): [[1.0, 2.0], [-1.5, 2.5]],
        (False, False): [[2.6, 3.7], [4.0, 5.0]],
    }[(centered, normalized)]
    offsets = np.array(offsets, np.float32)
    _close(tf1, lambda m: m.image.extract_glimpse(img, [3, 4], offsets, centered=centered, normalized=normalized))


def test_extract_glimpse_placement_and_noise(tf1):
    """Windows partly outside: TF's placement (checked with zero fill) and uniform noise in the image's range."""
    from tensorflow.python.ops import gen_image_ops

    from dtf_notebook.ops.op_helpers import make_op

    img = image(2, 9, 11, 3)
    cases = [
        (True, True, [[0.9, -0.95], [-1.0, 1.0]]),
        (False, False, [[-1.5, -2.7], [8.9, 10.2]]),
        (True, False, [[-7.0, 3.1], [12.0, -20.0]]),
    ]
    for centered, normalized, offsets in cases:
        offsets = np.array(offsets, np.float32)
        attrs = {"centered": centered, "normalized": normalized, "uniform_noise": False, "noise": "zero"}

        def theirs(m, offsets=offsets, attrs=attrs):
            return gen_image_ops.extract_glimpse(img, [3, 4], offsets, **attrs)

        def mine(m, offsets=offsets, attrs=attrs):
            inputs = [m.constant(img), m.constant([3, 4]), m.constant(offsets)]
            return make_op("ExtractGlimpse", inputs, attrs).outputs[0]

        np.testing.assert_array_equal(run(tf, mine), run(tf1, theirs))
    noisy = run(tf, lambda m: m.image.extract_glimpse(img, [5, 6], [[1.0, 1.0], [-1.0, -1.0]]))
    for i in range(2):
        assert img[i].min() <= noisy[i].min() and noisy[i].max() <= img[i].max()


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize(
    "ksizes, strides, rates",
    [
        ([1, 3, 3, 1], [1, 1, 1, 1], [1, 1, 1, 1]),
        ([1, 2, 3, 1], [1, 2, 3, 1], [1, 2, 1, 1]),
        ([1, 4, 2, 1], [1, 3, 2, 1], [1, 1, 2, 1]),
    ],
)
def test_extract_image_patches_and_gradient(tf1, padding, ksizes, strides, rates):
    img = image(2, 9, 11, 3).astype(np.float64)

    def build(m):
        x = m.constant(img)
        y = m.image.extract_image_patches(x, ksizes, strides, rates, padding)
        return [y, *m.gradients(m.reduce_sum(y * m.sin(y)), x)]

    _close(tf1, build, tol=1e-9)
    _close(tf1, lambda m: m.extract_image_patches(image(1, 5, 6, 2, dtype=np.uint8), ksizes, strides, rates, padding))
    _close(tf1, lambda m: m.image.extract_patches(img.astype(np.float32), ksizes, strides, rates, padding))
