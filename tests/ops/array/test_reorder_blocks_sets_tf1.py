"""reverse, roll, reverse_sequence, space_to_depth/depth_to_space, space_to_batch(_nd)/batch_to_space(_nd),
required_space_to_batch_paddings, unique_with_counts and setdiff1d against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

X = rand(2, 3, 4, seed=3).astype(np.float64)


@pytest.mark.parametrize("axis", [[0], [1, 2], [-1], []])
def test_reverse(axis):
    compare(lambda m, x: m.reverse(x, axis), [X])
    compare(lambda m, x: m.reverse_v2(x, np.array(axis, np.int64)), [X])


def test_reverse_errors_and_strings():
    assert compare_error(lambda m, x: m.reverse(x, [3]), [X]) == "ValueError"
    assert compare_error(lambda m, x: m.reverse(x, [0, 0]), [X]) == "ValueError"
    compare(lambda m: m.reverse(np.array([b"a", b"b"], dtype=object), [0]), [])


@pytest.mark.parametrize("shift,axis", [(1, 0), (-2, 2), ([1, 2], [1, 2]), ([1, 1], [2, 2]), (5, -1)])
def test_roll(shift, axis):
    compare(lambda m, x: m.roll(x, shift, axis), [X])


@pytest.mark.parametrize("seq_axis,batch_axis", [(1, 0), (0, 1), (2, 0), (1, 2)])
def test_reverse_sequence(seq_axis, batch_axis):
    lengths = np.minimum(np.array([1, 3, 2, 0][: X.shape[batch_axis]], np.int64), X.shape[seq_axis])
    compare(lambda m, x: m.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis), [X])
    compare(lambda m, x: m.reverse_sequence(x, lengths.astype(np.int32), seq_dim=seq_axis, batch_dim=batch_axis), [X])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_space_to_depth_and_back(data_format):
    x = rand(2, 4, 6, 3, seed=8).astype(np.float64)
    if data_format == "NCHW":
        x = x.transpose(0, 3, 1, 2).copy()
    with tf.Graph().as_default():
        # TF's CPU kernels only run NHWC; NCHW is checked against the NHWC result transposed.
        pass
    if data_format == "NHWC":
        compare(lambda m, t: m.space_to_depth(t, 2), [x])
        compare(lambda m, t: m.nn.depth_to_space(m.nn.space_to_depth(t, 2) * 3.0, 2), [x])
        compare(lambda m, t: m.depth_to_space(t, 3), [rand(1, 2, 2, 18, seed=9).astype(np.float64)])
    else:
        with tf.Graph().as_default(), tf.Session() as sess:
            nchw = sess.run(tf.space_to_depth(x, 2, data_format="NCHW"))
            nhwc = sess.run(tf.space_to_depth(x.transpose(0, 2, 3, 1), 2))
            back = sess.run(tf.depth_to_space(nchw, 2, data_format="NCHW"))
        np.testing.assert_array_equal(nchw, nhwc.transpose(0, 3, 1, 2))
        np.testing.assert_array_equal(back, x)


def test_space_to_depth_errors():
    assert compare_error(lambda m, t: m.space_to_depth(t, 2), [rand(1, 3, 4, 1)]) == "ValueError"
    assert compare_error(lambda m, t: m.depth_to_space(t, 2), [rand(1, 3, 4, 3)]) == "ValueError"


@pytest.mark.parametrize(
    "block,pads", [([2, 2], [[0, 0], [0, 0]]), ([2, 3], [[1, 1], [0, 2]]), ([3], [[1, 1]])], ids=str
)
def test_space_to_batch_nd_and_back(block, pads):
    x = rand(2, 4, 4, 3, seed=2).astype(np.float64)
    compare(lambda m, t: m.space_to_batch_nd(t, block, pads), [x])
    compare(lambda m, t: m.batch_to_space_nd(m.space_to_batch_nd(t, block, pads), block, pads), [x])


def test_tf1_space_to_batch_forms():
    x = rand(1, 4, 6, 2, seed=3).astype(np.float64)
    compare(lambda m, t: m.space_to_batch(t, [[0, 0], [1, 1]], block_size=2), [x])
    compare(lambda m, t: m.nn.space_to_batch(t, [[0, 0], [0, 0]], 2), [x])
    compare(lambda m, t: m.batch_to_space(t, [[0, 1], [1, 0]], 2), [rand(8, 2, 2, 1, seed=4).astype(np.float64)])


def test_required_space_to_batch_paddings():
    compare(lambda m: list(m.required_space_to_batch_paddings([5, 7], [2, 3])), [])
    compare(lambda m: list(m.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [2, 2]])), [])
    compare(lambda m, s: list(m.required_space_to_batch_paddings(s, [4, 4])), [np.array([9, 3], np.int32)])


def test_unique_with_counts_and_setdiff1d():
    x = np.array([3, 1, 3, 2, 1, 3], np.int64)
    compare(lambda m, t: list(m.unique_with_counts(t)), [x])
    compare(lambda m, t: list(m.unique_with_counts(t, out_idx=m.int64)), [x])
    compare(lambda m, t: list(m.setdiff1d(t, [3, 7])), [x])
    compare(lambda m, t: list(m.setdiff1d(t, np.array([], np.int64), index_dtype=m.int64)), [x])
    words = np.array([b"b", b"a", b"b"], dtype=object)
    compare(lambda m: list(m.unique_with_counts(words)), [])
    compare(lambda m: list(m.setdiff1d(words, [b"a"])), [])
