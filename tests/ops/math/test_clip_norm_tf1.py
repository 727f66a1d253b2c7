"""clip_by_norm, global_norm, clip_by_global_norm and clip_by_average_norm against real TensorFlow: values,
gradients, names, IndexedSlices and non-finite norms."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare

pytestmark = pytest.mark.tf_oracle

X = rand(3, 4, seed=3).astype(np.float64)


@pytest.mark.parametrize("clip", [0.5, 100.0, -1.0])
@pytest.mark.parametrize("axes", [None, [1], [0]])
def test_clip_by_norm(clip, axes):
    compare(lambda m, t: m.clip_by_norm(t, clip, axes=axes), [X], rtol=1e-12, grad_rtol=1e-10)


def test_clip_by_norm_with_a_tensor_bound_and_zero_input():
    compare(lambda m, t, c: m.clip_by_norm(t, c), [np.zeros((2, 2)), np.array(1.5)], rtol=1e-12)
    compare(lambda m, t, c: m.clip_by_norm(t, c), [X, np.array(0.7)], rtol=1e-12, grad_rtol=1e-10)


@pytest.mark.parametrize("clip", [0.5, 100.0])
def test_clip_by_global_norm(clip):
    y = rand(5, seed=4).astype(np.float64)
    compare(lambda m, a, b: m.clip_by_global_norm([a, None, b], clip)[0][::2], [X, y], rtol=1e-12)
    compare(lambda m, a, b: m.clip_by_global_norm([a, b], clip)[1], [X, y], rtol=1e-12, grad_rtol=1e-10)
    compare(lambda m, a, b: m.global_norm([a, b]), [X, y], rtol=1e-12, grad_rtol=1e-10)


def test_clip_by_global_norm_use_norm_and_infinite_norm():
    compare(lambda m, a: m.clip_by_global_norm([a], 1.0, use_norm=m.constant(np.float64(10.0)))[0], [X], rtol=1e-12)
    bad = np.array([np.inf, 1.0])
    compare(lambda m, a: m.clip_by_global_norm([a], 1.0)[0], [bad], grad=False)


def test_clip_by_average_norm():
    compare(lambda m, t: m.clip_by_average_norm(t, 0.1), [X.astype(np.float32)], rtol=1e-6, grad_rtol=1e-5)


def test_indexed_slices_and_names():
    with tf.Graph().as_default(), tf.Session() as sess:
        params = tf.constant(X)
        rows = tf.gradients(tf.reduce_sum(tf.gather(params, [0, 2])), params)[0]
        clipped = tf.clip_by_norm(rows, 1.0)
        assert isinstance(clipped, tf.IndexedSlices)
        (as_list,), norm = tf.clip_by_global_norm([rows], 1.0)
        assert isinstance(as_list, tf.IndexedSlices)
        np.testing.assert_allclose(sess.run(norm), np.sqrt(8.0))
        np.testing.assert_allclose(sess.run(clipped.values), np.full((2, 4), 1.0 / np.sqrt(8.0)))
        assert tf.global_norm([params]).op.name == "global_norm_1/global_norm"  # the second global_norm scope
