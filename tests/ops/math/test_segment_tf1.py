"""Segment reductions and ``where_v2`` against real TensorFlow: values, empty segments, negative ids,
gradients (ties and zeros included) and run-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

DATA = rand(6, 3, seed=3).astype(np.float64)
SORTED = np.array([0, 0, 1, 3, 3, 3], np.int32)
UNSORTED = np.array([2, -1, 0, 2, 4, 0], np.int64)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
def test_sorted_segments(kind):
    compare(lambda m, d: getattr(m.math, f"segment_{kind}")(d, SORTED), [DATA], rtol=1e-12)


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
def test_sorted_segments_integers(kind):
    d = np.array([[3, -7], [2, 5], [-9, 4]], np.int32)
    compare(lambda m, x, kind=kind: getattr(m, f"segment_{kind}")(x, [0, 0, 2]), [d])


@pytest.mark.parametrize("kind", ["max", "min", "prod", "mean", "sqrt_n"])
def test_unsorted_segments(kind):
    compare(lambda m, d: getattr(m.math, f"unsorted_segment_{kind}")(d, UNSORTED, 5), [DATA], rtol=1e-12)


def test_unsorted_segments_with_multi_dimensional_ids():
    d = rand(2, 3, 2, seed=5).astype(np.float64)
    ids = np.array([[0, 2, 0], [1, -1, 2]], np.int32)
    for kind in ("max", "prod", "mean"):
        compare(lambda m, x, kind=kind: getattr(m, f"unsorted_segment_{kind}")(x, ids, 4), [d], rtol=1e-12)


def test_gradients_with_ties_and_zeros():
    d = np.array([[1.0, 0.0], [1.0, 2.0], [0.0, 0.0], [3.0, 0.5]])
    ids = np.array([0, 0, 1, 1], np.int32)
    for kind in ("max", "min", "prod"):
        compare(lambda m, x, kind=kind: getattr(m, f"segment_{kind}")(x, ids), [d])
        compare(lambda m, x, kind=kind: getattr(m, f"unsorted_segment_{kind}")(x, ids, 3), [d])


def test_unsorted_integers_empty_segments_hold_extremes():
    d = np.array([4, 5], np.int32)
    compare(lambda m, x: [m.unsorted_segment_max(x, [0, 0], 2), m.unsorted_segment_min(x, [1, 1], 2)], [d])


def test_static_shapes():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 3])
        assert tf.segment_sum(p, tf.placeholder(tf.int32, [None])).shape.as_list() == [None, 3]
        assert tf.segment_sum(tf.zeros([4, 3]), [0, 0, 1, 5]).shape.as_list() == [None, 3]  # as in TF
        assert tf.unsorted_segment_max(p, tf.placeholder(tf.int32, [None]), 7).shape.as_list() == [7, 3]
        with pytest.raises(ValueError):
            tf.segment_sum(tf.zeros([4, 3]), [0, 1])


@pytest.mark.parametrize("ids", [[1, 0, 0], [0, -1, 1]])
def test_sorted_ids_are_checked_at_run_time(ids):
    assert compare_error(lambda m, d, i: m.segment_sum(d, i), [DATA[:3], np.array(ids, np.int32)]) == (
        "InvalidArgumentError"
    )


def test_unsorted_id_out_of_range():
    assert compare_error(lambda m, d: m.unsorted_segment_max(d, UNSORTED, 4), [DATA]) == "InvalidArgumentError"


def test_where_v2_broadcasts_and_has_gradients():
    c = np.array([[True], [False]])
    x, y = rand(2, 3, seed=1).astype(np.float64), rand(3, seed=2).astype(np.float64)
    compare(lambda m, a, b: m.where_v2(c, a, b), [x, y])
    compare(lambda m, a: m.where_v2(c, a, 0.5), [rand(1, 3, seed=4).astype(np.float64)])
    compare(lambda m: m.where_v2([[True, False], [False, True]]), [])


def test_where_v2_strings():
    compare(lambda m: m.where_v2([True, False], [b"a", b"b"], b"z"), [])
