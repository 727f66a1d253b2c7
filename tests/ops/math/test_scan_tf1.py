"""Cumulative sums, products and logsumexps against real TensorFlow: every exclusive/reverse combination,
axes given as ints and as tensors, gradients, and errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare

pytestmark = pytest.mark.tf_oracle

FLAGS = list(itertools.product([False, True], [False, True]))
X = rand(3, 4, seed=7).astype(np.float64)


@pytest.mark.parametrize("exclusive,reverse", FLAGS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum(exclusive, reverse, axis):
    compare(lambda m, x: m.cumsum(x, axis, exclusive=exclusive, reverse=reverse), [X], rtol=1e-12)


@pytest.mark.parametrize("exclusive,reverse", FLAGS)
def test_cumprod(exclusive, reverse):
    compare(lambda m, x: m.math.cumprod(x, 1, exclusive=exclusive, reverse=reverse), [X], rtol=1e-12)


@pytest.mark.parametrize("exclusive,reverse", FLAGS)
def test_cumulative_logsumexp(exclusive, reverse):
    compare(
        lambda m, x: m.math.cumulative_logsumexp(x, 1, exclusive=exclusive, reverse=reverse),
        [X],
        rtol=1e-10,
        grad_rtol=1e-9,
    )


def test_integer_scans_keep_their_dtype():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    compare(lambda m, t: [m.cumsum(t, 1), m.cumprod(t, 0, exclusive=True)], [x])


def test_axis_as_a_fed_tensor_and_names():
    with tf.Graph().as_default():
        x = tf.constant(X)
        axis = tf.placeholder(tf.int32, [])
        y = tf.cumsum(x, axis, name="running")
        assert y.op.name == "running" and y.shape.as_list() == [3, 4]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {axis: 1}), np.cumsum(X, 1))
            with pytest.raises(tf.errors.InvalidArgumentError, match="scan axis"):
                sess.run(y, {axis: 2})


def test_cumprod_gradient_with_zeros_matches_tf():
    x = np.array([[1.5, 0.0, 2.0, -1.0]])
    compare(lambda m, t: m.cumprod(t, 1), [x])
