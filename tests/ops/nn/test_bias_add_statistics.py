"""Tests of ``tf.nn.bias_add``, ``xw_plus_b``, ``moments`` and ``dropout``."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import check_forward, check_gradient, rand


# ---- bias_add, xw_plus_b, moments -------------------------------------------------------------------
@pytest.mark.parametrize(
    "data_format,shape", [("NHWC", (2, 3)), ("NHWC", (2, 3, 4, 5)), ("NCHW", (2, 5, 3, 4)), ("NCHW", (2, 5, 3))]
)
def test_bias_add(data_format, shape):
    x = rand(*shape, seed=13)
    channels = shape[1] if data_format == "NCHW" else shape[-1]
    b = rand(channels, seed=14)
    view = [1] * len(shape)
    view[1 if data_format == "NCHW" else -1] = channels
    build = lambda v, bias: tf.nn.bias_add(v, bias, data_format=data_format)  # noqa: E731
    check_forward(build, lambda v, bias: v + bias.reshape(view), [x, b])
    check_gradient(build, [x, b])
    # BiasAddGrad is differentiable too.
    check_gradient(lambda v, bias: tf.gradients(build(v, bias) * v, bias)[0], [x, b], wrt=[0])


def test_bias_add_structure_and_errors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.nn.bias_add(x, [1.0, 2.0, 3.0])
        assert y.op.type == "BiasAdd" and y.op.name == "BiasAdd" and y.shape.as_list() == [None, 3]
        assert tf.gradients(y, y.op.inputs[1])[0].op.type == "BiasAddGrad"
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.nn.bias_add(x, tf.zeros([4]))
        with pytest.raises(ValueError, match="at least rank 3"):
            tf.nn.bias_add(x, tf.zeros([3]), data_format="NCHW")
        with pytest.raises(ValueError, match="rank 1"):
            tf.nn.bias_add(x, tf.zeros([1, 3]))
        with pytest.raises(ValueError, match="Unknown data format"):
            tf.nn.bias_add(x, tf.zeros([3]), data_format="NDHWC")


def test_xw_plus_b():
    x, w, b = rand(4, 3, seed=15), rand(3, 2, seed=16), rand(2, seed=17)
    check_forward(tf.nn.xw_plus_b, lambda x, w, b: x @ w + b, [x, w, b], rtol=1e-5)
    check_gradient(tf.nn.xw_plus_b, [x, w, b])


@pytest.mark.parametrize("axes,keep_dims", [([0], False), ([0, 1], False), ([1], True)])
def test_moments(axes, keep_dims):
    x = rand(4, 3, seed=18)
    build = lambda v: list(tf.nn.moments(v, axes=axes, keep_dims=keep_dims))  # noqa: E731

    def reference(v):
        return [v.mean(tuple(axes), keepdims=keep_dims), v.var(tuple(axes), keepdims=keep_dims)]

    check_forward(build, reference, [x], rtol=1e-5)
    check_gradient(build, [x])


# ---- dropout ---------------------------------------------------------------------------------------
def test_dropout_statistics_and_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [200, 50])
        y = tf.nn.dropout(x, keep_prob=0.75, seed=3)
        (dx,) = tf.gradients(y, x)
        assert y.shape.as_list() == [200, 50]
        with tf.Session() as sess:
            values, grad = sess.run([y, dx], {x: np.ones((200, 50), np.float32)})
    kept = values != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(values[kept], 1 / 0.75, rtol=1e-6)
    # The gradient is the same mask and scale that the forward pass used.
    np.testing.assert_allclose(grad, values, rtol=1e-6)


def test_dropout_rate_tensor_keep_prob_and_noise_shape():
    with tf.Graph().as_default():
        x = tf.ones([40, 30])
        keep = tf.placeholder(tf.float32, [])
        y = tf.nn.dropout(x, keep_prob=keep)
        z = tf.nn.dropout(x, rate=0.5, noise_shape=[40, 1])
        with tf.Session() as sess:
            assert np.all(sess.run(y, {keep: 1.0}) == 1.0)
            values = sess.run(y, {keep: 0.5})
            assert set(np.unique(values)) <= {0.0, 2.0} and 0.3 < (values > 0).mean() < 0.7
            rows = sess.run(z)
    # One mask entry per row, broadcast along it.
    assert np.all(rows == rows[:, :1])
    assert set(np.unique(rows)) <= {0.0, 2.0}


def test_dropout_seeded_is_reproducible_and_rate_zero_is_identity():
    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            y = tf.nn.dropout(tf.ones([100]), rate=0.5)
            with tf.Session() as sess:
                return sess.run(y), sess.run(y)

    first, second = draw()
    again, _ = draw()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, second)
    with tf.Graph().as_default():
        x = tf.ones([3])
        assert tf.nn.dropout(x, rate=0.0) is x
        assert tf.nn.dropout(x, keep_prob=1) is x


def test_dropout_errors():
    with tf.Graph().as_default():
        x = tf.ones([3])
        with pytest.raises(ValueError, match="Cannot specify both 'keep_prob' and 'rate'"):
            tf.nn.dropout(x, keep_prob=0.5, rate=0.5)
        with pytest.raises(ValueError, match="`rate` must be provided"):
            tf.nn.dropout(x)
        with pytest.raises(ValueError, match=r"range \[0, 1\)"):
            tf.nn.dropout(x, rate=1.0)
        with pytest.raises(ValueError, match=r"range \(0, 1\]"):
            tf.nn.dropout(x, keep_prob=0.0)
        with pytest.raises(ValueError, match="floating point"):
            tf.nn.dropout(tf.constant([1, 2]), 0.5)
