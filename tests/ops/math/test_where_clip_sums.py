"""where/Select, clip_by_value, add_n and unsorted_segment_sum: values, errors, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.math.support import run
from tests.ops.op_check import check_forward, check_gradient, rand


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_add_n(n):
    xs = [rand(2, 3, seed=i) for i in range(n)]
    check_forward(lambda *ts: tf.add_n(list(ts)), lambda *a: np.sum(a, axis=0).astype(np.float32), xs, rtol=1e-5)


def test_add_n_ints_single_and_errors():
    check_forward(
        lambda a, b, c: tf.add_n([a, b, c]),
        lambda *a: np.sum(a, axis=0).astype(np.int32),
        [rand(4, dtype=np.int32, low=-5, high=5, seed=i) for i in range(3)],
    )
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        assert tf.add_n([a]) is a
        assert tf.add_n([a], name="same").op.type == "Identity"
        assert tf.add_n([a, a]).op.type == "AddN"
        with pytest.raises(ValueError, match="at least one Tensor"):
            tf.add_n([])
        with pytest.raises(ValueError, match="Shapes must all be equal"):
            tf.add_n([a, tf.zeros([3])])
        with pytest.raises(TypeError, match="don't all match"):
            tf.add_n([a, tf.constant([1, 2])])


def test_add_n_densifies_indexed_slices():
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([1]), tf.constant([3, 2]))
        out = tf.add_n([s, tf.ones([3, 2])])
        np.testing.assert_array_equal(run(out), [[1, 1], [2, 2], [1, 1]])


def test_clip_by_value():
    x = rand(3, 4, seed=7)
    check_forward(lambda t: tf.clip_by_value(t, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), [x])
    lo, hi = np.full(4, -1.0, np.float32), np.full(4, 1.0, np.float32)
    check_forward(lambda t, a, b: tf.clip_by_value(t, a, b), np.clip, [x, lo, hi])
    check_forward(lambda t: tf.clip_by_value(t, 2, 8), lambda a: np.clip(a, 2, 8), [np.array([1, 5, 10], np.int32)])
    with tf.Graph().as_default():
        assert tf.clip_by_value(tf.zeros([3]), 0.0, 1.0).op.name == "clip_by_value"
        with pytest.raises(ValueError):
            tf.clip_by_value(tf.zeros([3]), tf.zeros([2, 3]), 1.0)


def test_where_select_same_shape_scalar_and_row_conditions():
    x, y = rand(3, 4, seed=1), rand(3, 4, seed=2)
    c = rand(3, 4, dtype=np.bool_, seed=3)
    check_forward(tf.where, np.where, [c, x, y])
    rows = np.array([True, False, True])
    check_forward(tf.where, lambda cc, a, b: np.where(cc[:, None], a, b), [rows, x, y])
    check_forward(lambda a, b: tf.where(True, a, b), lambda a, b: a, [x, y])
    check_forward(
        tf.where,
        np.where,
        [np.array([True, False]), np.array([b"a", b"b"], dtype=object), np.array([b"c", b"d"], dtype=object)],
    )


def test_where_coordinates():
    check_forward(tf.where, lambda c: np.argwhere(c).astype(np.int64), [rand(3, 4, dtype=np.bool_, seed=5)])
    check_forward(tf.where, lambda c: np.argwhere(c).astype(np.int64), [np.array([1, 0, 3], np.int32)])
    with tf.Graph().as_default():
        w = tf.where(tf.placeholder(tf.bool, [None, 3]))
        assert (w.op.type, w.dtype, w.shape.as_list()) == ("Where", tf.int64, [None, 2])


def test_where_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="x and y must both be non-None or both be None"):
            tf.where(tf.constant([True]), x=tf.constant([1]))
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and 2"):
            tf.where(tf.constant([True, False, True]), tf.zeros([2, 3]), tf.ones([2, 3]))
        with pytest.raises(ValueError, match="Shapes of x and y must be equal"):
            tf.where(tf.constant([True, False]), tf.zeros([2, 3]), tf.ones([3]))
        with pytest.raises(ValueError, match="Condition of shape"):
            tf.where(tf.constant([[True, False, True]]), tf.zeros([2, 3]), tf.ones([2, 3]))
        with pytest.raises(TypeError, match="Input 'condition' of 'Select' Op has type int32"):
            tf.where(tf.constant([1, 0]), tf.zeros([2]), tf.ones([2]))
        with pytest.raises(TypeError, match="float32.*int32|int32.*float32"):
            tf.where(tf.constant([True]), tf.zeros([1]), tf.constant([1]))


def _segment_sum_ref(data, ids, n):
    out = np.zeros((n,) + data.shape[ids.ndim :], data.dtype)
    for idx in np.ndindex(*ids.shape):
        if ids[idx] >= 0:
            out[ids[idx]] += data[idx]
    return out


@pytest.mark.parametrize("ids", [[0, 2, 0, 1], [3, -1, 3, 0], [[0, 1], [1, -1]]], ids=str)
def test_unsorted_segment_sum(ids):
    ids = np.array(ids, np.int32)
    data = rand(*ids.shape, 3, seed=8)
    check_forward(
        lambda d, i: tf.unsorted_segment_sum(d, i, 4), lambda d, i: _segment_sum_ref(d, i, 4), [data, ids], rtol=1e-5
    )
    check_forward(
        lambda d, i: tf.unsorted_segment_sum(d, tf.cast(i, tf.int64), tf.constant(4, tf.int64)),
        lambda d, i: _segment_sum_ref(d, i, 4),
        [data, ids],
        rtol=1e-5,
    )


def test_unsorted_segment_sum_out_of_range_names_the_id():
    with tf.Graph().as_default():
        out = tf.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, -1, 5]), 3)
        assert out.shape.as_list() == [3]
        with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[2\] = 5 is out of range \[0, 3\)"):
            run(out)
        with pytest.raises(ValueError, match="does not start with segment_ids.shape"):
            tf.unsorted_segment_sum(tf.zeros([3, 2]), tf.constant([0, 1]), 2)


def test_add_n_and_clip_and_where_gradients():
    check_gradient(lambda a, b, c: tf.add_n([a, b, c]), [rand(2, 3, seed=i) for i in range(3)])
    check_gradient(lambda t: tf.clip_by_value(t, -0.5, 0.5), [np.array([-1.0, -0.3, 0.2, 0.9])])
    cond = np.array([[True, False, True], [False, True, True]])
    check_gradient(tf.where, [cond, rand(2, 3, seed=1), rand(2, 3, seed=2)])
    check_gradient(tf.where, [np.array([True, False]), rand(2, 3, seed=3), rand(2, 3, seed=4)])


@pytest.mark.parametrize("ids", [[0, 2, 0, 1], [3, -1, 3, 0], [[0, 1], [1, -1]]], ids=str)
def test_unsorted_segment_sum_gradient(ids):
    ids = np.array(ids, np.int32)
    data = rand(*ids.shape, 2, seed=21)
    check_gradient(lambda d, i: tf.unsorted_segment_sum(d, i, 4), [data, ids])
    check_gradient(lambda d: tf.unsorted_segment_sum(d, tf.constant(ids), 4), [data])
