"""Geometric ``tf.image`` functions (flips, rotations, crops, pads) and image statistics against real TensorFlow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.ops.image.support import image, run, static_shape

IMG = image(5, 7, 3, seed=1)
BATCH = image(2, 5, 7, 3, seed=2)
INTS = np.arange(2 * 4 * 6 * 2, dtype=np.int32).reshape(2, 4, 6, 2)

CASES: dict[str, Callable[[Any], Any]] = {
    "flip_left_right": lambda tf: tf.image.flip_left_right(IMG),
    "flip_left_right_batch": lambda tf: tf.image.flip_left_right(INTS),
    "flip_up_down": lambda tf: tf.image.flip_up_down(IMG),
    "flip_up_down_batch": lambda tf: tf.image.flip_up_down(BATCH),
    "flip_unknown_rank": lambda tf: tf.image.flip_left_right(tf.placeholder_with_default(IMG, None)),
    "rot90": lambda tf: tf.image.rot90(IMG),
    "rot90_k2": lambda tf: tf.image.rot90(IMG, k=2),
    "rot90_k3_batch": lambda tf: tf.image.rot90(INTS, k=3),
    "rot90_k_negative": lambda tf: tf.image.rot90(BATCH, k=-1),
    "rot90_k4": lambda tf: tf.image.rot90(IMG, k=4),
    "rot90_tensor_k": lambda tf: tf.image.rot90(IMG, k=tf.constant(1)),
    "transpose": lambda tf: tf.image.transpose_image(IMG),
    "transpose_batch": lambda tf: tf.image.transpose(BATCH),
    "crop": lambda tf: tf.image.crop_to_bounding_box(IMG, 1, 2, 3, 4),
    "crop_batch": lambda tf: tf.image.crop_to_bounding_box(BATCH, 0, 0, 5, 1),
    "crop_dynamic": lambda tf: tf.image.crop_to_bounding_box(
        tf.placeholder_with_default(IMG, [None, None, 3]), 1, 2, 3, 4
    ),
    "pad": lambda tf: tf.image.pad_to_bounding_box(IMG, 2, 1, 9, 10),
    "pad_batch": lambda tf: tf.image.pad_to_bounding_box(INTS, 0, 3, 4, 9),
    "crop_or_pad_crop": lambda tf: tf.image.resize_image_with_crop_or_pad(IMG, 3, 4),
    "crop_or_pad_pad": lambda tf: tf.image.resize_image_with_crop_or_pad(IMG, 8, 10),
    "crop_or_pad_mixed_batch": lambda tf: tf.image.resize_with_crop_or_pad(BATCH, 2, 12),
    "crop_or_pad_tensor_target": lambda tf: tf.image.resize_image_with_crop_or_pad(IMG, tf.constant(6), 5),
    "central_crop": lambda tf: tf.image.central_crop(IMG, 0.5),
    "central_crop_batch": lambda tf: tf.image.central_crop(BATCH, 0.33),
    "central_crop_full": lambda tf: tf.image.central_crop(IMG, 1.0),
    "central_crop_dynamic": lambda tf: tf.image.central_crop(tf.placeholder_with_default(IMG, [None, None, 3]), 0.6),
    "total_variation": lambda tf: tf.image.total_variation(tf.constant(IMG)),
    "total_variation_batch": lambda tf: tf.image.total_variation(tf.constant(BATCH)),
    "image_gradients": lambda tf: tf.image.image_gradients(tf.constant(BATCH)),
    "sobel_edges": lambda tf: tf.image.sobel_edges(tf.constant(BATCH)),
    "is_jpeg": lambda tf: [tf.image.is_jpeg(b"\xff\xd8\xff\xe0abc"), tf.image.is_jpeg(b"\x89PNG")],
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", sorted(CASES))
def test_matches_tensorflow(tf1, kind):
    want, got = run(tf1, CASES[kind]), run(dtf, CASES[kind])
    for w, g in zip(*(x if isinstance(x, list | tuple) else [x] for x in (want, got))):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    if not isinstance(want, list | tuple):
        assert static_shape(dtf, CASES[kind]) == static_shape(tf1, CASES[kind])


GRADIENTS: dict[str, Callable[[Any, Any], Any]] = {
    "flip": lambda tf, x: tf.image.flip_left_right(x),
    "rot90": lambda tf, x: tf.image.rot90(x, k=3),
    "crop_or_pad": lambda tf, x: tf.image.resize_image_with_crop_or_pad(x, 4, 9),
    "central_crop": lambda tf, x: tf.image.central_crop(x, 0.5),
    "standardization": lambda tf, x: tf.image.per_image_standardization(x),
    "contrast": lambda tf, x: tf.image.adjust_brightness(x, 0.1),
    "total_variation": lambda tf, x: tf.image.total_variation(x),
    "sobel": lambda tf, x: tf.image.sobel_edges(x),
    "grayscale": lambda tf, x: tf.image.rgb_to_grayscale(x),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", sorted(GRADIENTS))
def test_gradients_match_tensorflow(tf1, kind):
    def build(tf: Any) -> Any:
        x = tf.constant(BATCH)
        y = GRADIENTS[kind](tf, x)
        w = tf.constant(image(*[d or 1 for d in y.shape.as_list()], seed=3))
        return tf.gradients(tf.reduce_sum(y * w), x)[0]

    np.testing.assert_allclose(run(dtf, build), run(tf1, build), rtol=1e-5, atol=1e-6)


@pytest.mark.tf_oracle
def test_static_errors_match_tensorflow(tf1):
    cases = [
        lambda tf: tf.image.crop_to_bounding_box(IMG, 3, 0, 3, 7),
        lambda tf: tf.image.crop_to_bounding_box(IMG, -1, 0, 3, 7),
        lambda tf: tf.image.crop_to_bounding_box(tf.zeros([2, 2]), 0, 0, 1, 1),
        lambda tf: tf.image.pad_to_bounding_box(IMG, 0, 2, 5, 8),
        lambda tf: tf.image.resize_image_with_crop_or_pad(IMG, 0, 3),
        lambda tf: tf.image.central_crop(IMG, 0.0),
        lambda tf: tf.image.flip_left_right(tf.zeros([2, 3])),
        lambda tf: tf.image.rot90(tf.zeros([1, 2, 3, 4, 5])),
        lambda tf: tf.image.image_gradients(tf.constant(IMG)),
        lambda tf: tf.image.total_variation(tf.zeros([3, 3])),
    ]
    for case in cases:
        with tf1.Graph().as_default(), pytest.raises(ValueError) as want:
            case(tf1)
        with dtf.Graph().as_default(), pytest.raises(ValueError) as got:
            case(dtf)
        assert str(got.value) == str(want.value)


@pytest.mark.tf_oracle
def test_dynamic_crop_errors_fail_when_run(tf1):
    def build(tf: Any) -> Any:
        x = tf.placeholder_with_default(IMG, [None, None, 3])
        return tf.image.crop_to_bounding_box(x, 4, 0, 3, 7)

    for tf in (tf1, dtf):
        with pytest.raises(tf.errors.InvalidArgumentError, match="height must be >= target \\+ offset."):
            run(tf, build)


def test_random_flips_flip_each_image_on_its_own_and_repeat_with_a_seed():
    x = np.arange(64 * 2, dtype=np.float32).reshape(64, 1, 2, 1)
    with dtf.Graph().as_default():
        dtf.set_random_seed(1)
        flipped = dtf.image.random_flip_left_right(x, seed=7)
        single = dtf.image.random_flip_up_down(IMG, seed=3)
        with dtf.Session() as sess:
            first, one = sess.run([flipped, single])
        with dtf.Session() as sess:
            again, one_again = sess.run([flipped, single])
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(one, one_again)
    mirrored = first[:, 0, 0, 0] == x[:, 0, 1, 0]
    assert 10 < mirrored.sum() < 54  # about half, each image drawn on its own
    np.testing.assert_array_equal(first[mirrored], x[mirrored][:, :, ::-1])
    np.testing.assert_array_equal(first[~mirrored], x[~mirrored])
    assert np.array_equal(one, IMG) or np.array_equal(one, IMG[::-1])


def test_random_crop_takes_a_window_of_the_requested_size():
    x = np.arange(10 * 8, dtype=np.int32).reshape(10, 8)
    with dtf.Graph().as_default():
        crop = dtf.image.random_crop(x, [4, 3], seed=11)
        assert crop.shape.as_list() == [4, 3]
        with dtf.Session() as sess:
            windows = [sess.run(crop) for _ in range(20)]
            with pytest.raises(dtf.errors.InvalidArgumentError, match="Need value.shape >= size"):
                sess.run(dtf.image.random_crop(x, [11, 3]))
    starts = set()
    for w in windows:
        r, c = divmod(int(w[0, 0]), 8)
        np.testing.assert_array_equal(w, x[r : r + 4, c : c + 3])
        starts.add((r, c))
    assert len(starts) > 5
