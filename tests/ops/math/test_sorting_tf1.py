"""top_k, in_top_k, sort, argsort, searchsorted and bincount against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare

pytestmark = pytest.mark.tf_oracle

X = rand(3, 5, seed=2).astype(np.float64)
TIES = np.array([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0, 1.0]])


@pytest.mark.parametrize("x", [X, TIES, rand(2, 2, 4, seed=1).astype(np.float64)], ids=["random", "ties", "rank3"])
def test_top_k_values_indices_and_gradient(x):
    compare(lambda m, t: list(m.nn.top_k(t, k=3)), [x])
    compare(lambda m, t: list(m.math.top_k(t, k=1, sorted=True)), [x])


def test_top_k_with_a_fed_k_and_int64_indices():
    # TF's own top_k gradient fails for int64 indices (it adds int32 offsets to them).
    compare(lambda m, t: list(m.nn.top_k(t, k=m.constant(2), index_type=m.int64)), [X], grad=False)
    with tf.Graph().as_default():
        k = tf.placeholder(tf.int32, [])
        values, indices = tf.nn.top_k(tf.zeros([4, 6]), k)
        assert values.shape.as_list() == [4, None] and indices.dtype == tf.int32
        with pytest.raises(ValueError, match="at least k columns"):
            tf.nn.top_k(tf.zeros([4, 2]), 3)


def test_in_top_k_with_ties_and_bad_targets():
    preds = np.array([[0.1, 0.5, 0.5, 0.2], [0.3, 0.3, 0.3, 0.3], [np.inf, 1.0, 0.0, 2.0]], np.float32)
    for k in (1, 2):
        compare(lambda m, p, k=k: m.nn.in_top_k(p, [2, 3, 0], k), [preds])
        compare(lambda m, p, k=k: m.math.in_top_k(p, np.array([1, 4, 3], np.int64), k), [preds])


@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_sort_and_argsort(direction, axis):
    x = rand(3, 4, 2, seed=4).astype(np.float64)
    compare(lambda m, t: m.sort(t, axis=axis, direction=direction), [x])
    compare(lambda m, t: m.argsort(t, axis=axis, direction=direction), [x])


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_sort_integers_is_stable(dtype):
    x = np.array([[3, 1, 2, 1, 0, 3]], dtype)
    compare(lambda m, t: [m.sort(t), m.argsort(t), m.argsort(t, direction="DESCENDING")], [x])


def test_sort_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="direction"):
            tf.sort([1, 2], direction="UP")
        with pytest.raises(ValueError, match="constant scalar"):
            tf.sort([1, 2], axis=tf.placeholder(tf.int32, []))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    seq = np.array([[1.0, 2.0, 2.0, 5.0], [0.0, 0.5, 0.7, 3.0]], np.float32)
    values = np.array([[2.0, 0.0, 6.0], [0.5, 3.0, -1.0]], np.float32)
    compare(lambda m, s, v: m.searchsorted(s, v, side=side), [seq, values])
    compare(lambda m, s, v: m.searchsorted(s, v, side=side, out_type=m.int64), [seq[0], values[0]])


def test_bincount():
    arr = np.array([[1, 1, 4], [0, 7, 1]], np.int32)
    w = rand(2, 3, seed=3).astype(np.float32)
    compare(lambda m, a: m.bincount(a), [arr])
    compare(lambda m, a, ww: m.math.bincount(a, weights=ww, minlength=10), [arr, w], grad=False)
    compare(lambda m, a: m.bincount(a, maxlength=3, dtype=m.float64), [arr])
    compare(lambda m, a: m.bincount(a, minlength=2), [np.zeros([0], np.int32)])


def test_bincount_rejects_negative_values():
    with tf.Graph().as_default():
        counts = tf.bincount(tf.placeholder_with_default([1, -1], [2]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
            sess.run(counts)


def test_approx_top_k_is_exact():
    x = rand(3, 6, seed=9).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        values, indices = sess.run(tf.math.approx_max_k(x, 2))
        low, _ = sess.run(tf.math.approx_min_k(x, 2, reduction_dimension=0))
    np.testing.assert_array_equal(values, -np.sort(-x, 1)[:, :2])
    np.testing.assert_array_equal(np.take_along_axis(x, indices, 1), values)
    np.testing.assert_array_equal(low, np.sort(x, 0)[:2])
