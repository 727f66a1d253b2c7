"""sequence_mask, meshgrid, repeat, unravel_index, broadcast shapes, shape_n, ensure_shape, parallel_stack,
matrix_transpose and histograms against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle


def test_sequence_mask():
    lengths = np.array([[1, 3], [0, 2]], np.int32)
    compare(lambda m, n: m.sequence_mask(n), [lengths])
    compare(lambda m, n: m.sequence_mask(n, 4, dtype=m.float32), [lengths])
    compare(lambda m: m.sequence_mask(np.array([2, 5], np.int64), maxlen=np.int64(6)), [])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="scalar"):
        tf.sequence_mask([1], [2, 3])


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    a, b, c = rand(3, seed=1).astype(np.float64), rand(2, seed=2).astype(np.float64), rand(4, seed=3).astype(np.float64)
    compare(lambda m, x, y, z: m.meshgrid(x, y, z, indexing=indexing), [a, b, c])
    compare(lambda m, x, y: m.meshgrid(x, y, indexing=indexing), [a, b])


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_repeat(axis):
    x = rand(2, 3, seed=5).astype(np.float64)
    compare(lambda m, t: m.repeat(t, 2, axis=axis), [x], static_shapes=False)
    counts = [1, 0, 3] if axis == 1 else ([2, 1] if axis == 0 else [1, 2, 0, 1, 1, 2])
    compare(lambda m, t: m.repeat(t, counts, axis=axis), [x], static_shapes=False)


def test_unravel_index_and_broadcast_shapes():
    compare(lambda m: m.unravel_index(np.array([0, 5, 11], np.int64), [3, 4]), [])
    compare(lambda m: m.unravel_index(7, [3, 4]), [])
    compare(lambda m: m.broadcast_dynamic_shape([2, 1, 3], [5, 1]), [])
    assert compare_error(lambda m: m.broadcast_dynamic_shape([2, 3], [4]), []) == "InvalidArgumentError"
    assert tf.broadcast_static_shape(tf.TensorShape([2, None, 1]), tf.TensorShape([4, 3])).as_list() == [2, 4, 3]
    with pytest.raises(ValueError):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


def test_shape_n_ensure_shape_parallel_stack_matrix_transpose():
    x = rand(2, 3, 4, seed=7).astype(np.float64)
    compare(lambda m, t: m.shape_n([t, t[0]], out_type=m.int64), [x])
    compare(lambda m, t: m.ensure_shape(t, [2, None, 4]) * 2.0, [x])
    compare(lambda m, t: m.parallel_stack([t[0], t[1], t[0]]), [x], grad=False)
    compare(lambda m, t: m.matrix_transpose(t), [x])
    assert compare_error(lambda m, t: m.ensure_shape(t, [2, 3]), [x]) == "ValueError"
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32)
        y = tf.ensure_shape(p, [None, 3])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="not compatible"):
            sess.run(y, {p: np.zeros([2, 2])})


def test_histograms():
    values = np.array([[-1.0, 0.0, 0.5, 1.5], [2.0, 4.99, 5.0, 9.0]], np.float32)
    compare(lambda m, v: m.histogram_fixed_width(v, [0.0, 5.0], nbins=5), [values], grad=False)
    compare(lambda m, v: m.histogram_fixed_width_bins(v, [0.0, 5.0], nbins=4), [values], grad=False)
    compare(lambda m, v: m.histogram_fixed_width(v, [0.0, 5.0], nbins=3, dtype=m.int64), [values], grad=False)
