"""Non-max suppression, box drawing and sampled crops against real TensorFlow."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.image.support import image, run

pytestmark = pytest.mark.tf_oracle


def _same(tf1, build, exact=True, tol=1e-6):
    expected, got = run(tf1, build), run(tf, build)
    expected = expected if isinstance(expected, list | tuple) else [expected]
    got = got if isinstance(got, list | tuple) else [got]
    assert len(got) == len(expected)
    for e, g in zip(expected, got):
        e, g = np.asarray(e), np.asarray(g)
        assert g.dtype == e.dtype and g.shape == e.shape
        if exact:
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def _boxes(n=40, seed=0):
    rng = np.random.default_rng(seed)
    boxes = rng.random((n, 4)).astype(np.float32)
    boxes[:, 2:] += boxes[:, :2] * 0.3
    boxes[3] = boxes[3, [2, 3, 0, 1]]  # corners in the other order
    scores = rng.random(n).astype(np.float32)
    scores[5] = scores[7]  # a tie: the lower index first
    return boxes, scores


@pytest.mark.parametrize("iou, score_threshold", [(0.3, float("-inf")), (0.5, 0.4), (0.0, 0.1), (1.0, -1.0)])
def test_non_max_suppression_variants(tf1, iou, score_threshold):
    boxes, scores = _boxes()
    _same(tf1, lambda m: m.image.non_max_suppression(boxes, scores, 10, iou, score_threshold))
    _same(tf1, lambda m: m.image.non_max_suppression_with_scores(boxes, scores, 30, iou, score_threshold))
    overlaps = np.random.default_rng(1).random((40, 40)).astype(np.float32)  # not symmetric
    _same(tf1, lambda m: m.image.non_max_suppression_overlaps(overlaps, scores, 10, max(iou, 0.2), score_threshold))


def test_soft_nms_and_half_boxes(tf1):
    boxes, scores = _boxes(seed=2)
    _same(
        tf1,
        lambda m: m.image.non_max_suppression_with_scores(boxes, scores, 15, 0.5, 0.1, soft_nms_sigma=0.5),
        exact=False,
    )
    _same(tf1, lambda m: m.image.non_max_suppression(boxes.astype(np.float16), scores.astype(np.float16), 10, 0.4))


def test_non_max_suppression_padded(tf1):
    boxes, scores = _boxes(seed=3)
    batch = np.random.default_rng(4).random((3, 40, 4)).astype(np.float32)
    batch_scores = np.random.default_rng(5).random((3, 40)).astype(np.float32)
    _same(tf1, lambda m: m.image.non_max_suppression_padded(m.constant(boxes), scores, 12, 0.3))
    _same(
        tf1,
        lambda m: m.image.non_max_suppression_padded(m.constant(boxes), scores, 50, 0.3, pad_to_max_output_size=True),
    )
    _same(
        tf1,
        lambda m: m.image.non_max_suppression_padded(
            m.constant(batch), batch_scores, 8, 0.2, score_threshold=0.3, pad_to_max_output_size=True
        ),
    )
    _same(
        tf1,
        lambda m: m.image.non_max_suppression_padded(
            m.constant(batch[:, np.argsort(-batch_scores[0])]),
            batch_scores,
            6,
            0.4,
            pad_to_max_output_size=True,
            sorted_input=True,
        ),
    )
    with pytest.raises(ValueError, match="must be True for batched input"):
        tf.image.non_max_suppression_padded(tf.constant(batch), batch_scores, 8)


@pytest.mark.parametrize("pad_per_class, clip", [(False, True), (True, False)])
def test_combined_non_max_suppression(tf1, pad_per_class, clip):
    rng = np.random.default_rng(6)
    boxes = (rng.random((2, 30, 3, 4)) * 1.2 - 0.1).astype(np.float32)
    scores = rng.random((2, 30, 3)).astype(np.float32)
    build = lambda m, b: m.image.combined_non_max_suppression(b, scores, 4, 7, 0.4, 0.2, pad_per_class, clip)  # noqa: E731
    _same(tf1, lambda m: build(m, boxes))
    _same(tf1, lambda m: build(m, boxes[:, :, :1]))  # one box shared by the classes


def test_nms_errors_and_shapes(tf1):
    boxes, scores = _boxes()
    assert tf.image.non_max_suppression(boxes, scores, 3).shape.as_list() == [None]
    with tf.Graph().as_default():
        bad = tf.image.non_max_suppression(boxes, scores, 3, iou_threshold=1.5)
        with (
            tf.Session() as sess,
            pytest.raises(tf.errors.InvalidArgumentError, match=r"iou_threshold must be in \[0, 1\]"),
        ):
            sess.run(bad)
    for name in ["non_max_suppression", "non_max_suppression_with_scores", "non_max_suppression_overlaps"] + [
        "non_max_suppression_padded",
        "combined_non_max_suppression",
        "draw_bounding_boxes",
        "sample_distorted_bounding_box",
    ]:
        theirs = list(inspect.signature(getattr(tf1.image, name)).parameters)
        assert list(inspect.signature(getattr(tf.image, name)).parameters) == theirs, name


def test_draw_bounding_boxes(tf1):
    img = image(2, 9, 11, 3)
    boxes = np.array(
        [[[0.1, 0.2, 0.8, 0.7], [-0.2, 0.5, 0.6, 1.3], [0.5, 0.5, 0.4, 0.9]], [[0.0, 0.0, 1.0, 1.0]] * 3], np.float32
    )
    _same(tf1, lambda m: m.image.draw_bounding_boxes(img, boxes))
    _same(tf1, lambda m: m.image.draw_bounding_boxes(img[..., :1], boxes))
    _same(tf1, lambda m: m.image.draw_bounding_boxes(img, boxes, colors=[[0.3, 0.4, 0.5, 1.0], [1.0, 0.0, 0.0, 1.0]]))
    _same(tf1, lambda m: m.image.draw_bounding_boxes(np.concatenate([img, img[..., :1]], -1).astype(np.float16), boxes))


@pytest.mark.parametrize(
    "boxes, covered, ratios, areas",
    [
        (np.zeros((1, 0, 4), np.float32), 0.1, (0.75, 1.33), (0.05, 1.0)),
        (np.array([[[0.1, 0.2, 0.5, 0.9], [0.3, 0.3, 0.9, 0.6]]], np.float32), 0.6, (0.5, 2.0), (0.1, 0.8)),
        (np.array([[[0.0, 0.0, 1.0, 1.0]]], np.float32), 0.99, (0.75, 1.33), (0.9, 1.0)),
    ],
)
@pytest.mark.parametrize("seed", [(1, 2), (7, 9), (100, 3)])
def test_sample_crop_is_tfs_algorithm(tf1, boxes, covered, ratios, areas, seed):
    """TF's stateless op draws from the seed's Philox stream: the same stream here gives the same crop."""
    from dtf_notebook.ops import philox
    from dtf_notebook.ops.image.boxes import sample_crop

    raw = pytest.importorskip("tensorflow").raw_ops
    expected = run(
        tf1,
        lambda m: raw.StatelessSampleDistortedBoundingBox(
            image_size=[37, 61, 3],
            bounding_boxes=boxes,
            min_object_covered=covered,
            seed=list(seed),
            aspect_ratio_range=list(ratios),
            area_range=list(areas),
            max_attempts=100,
            use_image_if_no_bounding_boxes=True,
        ),
    )
    key, counter = philox.key_counter_from_seed(*seed)
    begin, size, box = sample_crop(key, counter, [37, 61, 3], boxes, covered, ratios, areas, 100, True)
    assert begin == expected[0].tolist() and size == expected[1].tolist()
    np.testing.assert_array_equal(box, expected[2])


def test_sample_distorted_bounding_box_op():
    with tf.Graph().as_default():
        begin, size, box = tf.image.sample_distorted_bounding_box(
            [40, 60, 3], [[[0.1, 0.1, 0.9, 0.9]]], seed=1, seed2=2, min_object_covered=0.5, area_range=(0.2, 0.9)
        )
        assert (begin.shape.as_list(), size.shape.as_list(), box.shape.as_list()) == ([3], [3], [1, 1, 4])
        crop = tf.slice(tf.zeros([40, 60, 3]), begin, size)
        with tf.Session() as sess:
            first = [sess.run([begin, size, box]) for _ in range(5)]
            shapes = sess.run(tf.shape(crop))
        with tf.Session() as sess:
            again = sess.run([begin, size, box])
    assert all(a.tolist() == b.tolist() for a, b in zip(first[0], again))  # seeded: a new session repeats
    assert len({tuple(b.tolist()) for b, _, _ in first}) > 1  # each run draws anew
    for b, s, bx in first:
        assert 0 <= b[0] and b[0] + s[0] <= 40 and 0 <= b[1] and b[1] + s[1] <= 60 and s[2] == -1
        assert 0.2 * 2400 * 0.99 <= s[0] * s[1] <= 0.9 * 2400 * 1.01
        np.testing.assert_allclose(bx[0, 0], [b[0] / 40, b[1] / 60, (b[0] + s[0]) / 40, (b[1] + s[1]) / 60], 1e-6)
    assert shapes[2] == 3
    with tf.Graph().as_default():
        no_boxes = tf.image.sample_distorted_bounding_box([4, 4, 1], tf.zeros([1, 0, 4]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes"):
            sess.run(no_boxes)
