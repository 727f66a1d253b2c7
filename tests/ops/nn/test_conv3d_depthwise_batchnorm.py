"""``tf.nn`` ops that ``tf.layers`` builds on, against real TensorFlow: conv3d (and its transpose), 3-D and 1-D
pooling, conv1d, depthwise/separable convolution, fused and composite batch normalization (values and gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    return real.compat.v1


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _run_both(tf1, build, inputs):
    """Values, static shape and gradients (against a fixed cosine upstream gradient) of ``build(m, *inputs)``."""
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            consts = [m.constant(x) for x in inputs]
            y = build(m, *consts)
            shape = y.shape.as_list()
            upstream = np.cos(np.arange(np.prod(shape))).reshape(shape).astype(np.float32)
            grads = m.gradients(y, consts, grad_ys=m.constant(upstream))
            with m.Session() as sess:
                results.append((shape, sess.run([y, *grads])))
    (shape_tf, expected), (shape_here, got) = results
    assert shape_here == shape_tf
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [[1, 1, 1, 1, 1], [1, 2, 2, 3, 1]])
def test_conv3d_and_3d_pools(tf1, padding, strides):
    x, w = _rand(2, 5, 6, 7, 3, seed=1), _rand(3, 2, 3, 3, 4, seed=2)
    _run_both(tf1, lambda m, a, b: m.nn.conv3d(a, b, strides, padding), [x, w])
    _run_both(tf1, lambda m, a: m.nn.max_pool3d(a, [1, 2, 3, 2, 1], strides, padding), [x])
    _run_both(tf1, lambda m, a: m.nn.avg_pool3d(a, [1, 2, 3, 2, 1], strides, padding), [x])


def test_conv3d_channels_first_matches_channels_last(tf1):
    x, w = _rand(1, 4, 5, 6, 2, seed=3), _rand(2, 3, 2, 2, 3, seed=4)
    with tf.Graph().as_default(), tf.Session() as sess:
        last = tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME")
        first = tf.nn.conv3d(np.transpose(x, (0, 4, 1, 2, 3)), w, [1, 1, 1, 2, 1], "SAME", data_format="NCDHW")
        a, b = sess.run([last, first])
    np.testing.assert_allclose(np.transpose(b, (0, 2, 3, 4, 1)), a, rtol=1e-5, atol=1e-5)


def test_conv3d_transpose(tf1):
    x, w = _rand(2, 3, 3, 4, 3, seed=5), _rand(3, 3, 3, 4, 3, seed=6)
    _run_both(tf1, lambda m, a, b: m.nn.conv3d_transpose(a, b, [2, 6, 5, 8, 4], [1, 2, 2, 2, 1], "SAME"), [x, w])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [[1, 1, 1, 1], [1, 2, 2, 1]])
def test_depthwise_and_separable(tf1, padding, strides):
    x, dw, pw = _rand(2, 7, 6, 3, seed=7), _rand(3, 2, 3, 2, seed=8), _rand(1, 1, 6, 5, seed=9)
    _run_both(tf1, lambda m, a, b: m.nn.depthwise_conv2d(a, b, strides, padding), [x, dw])
    _run_both(tf1, lambda m, a, b, c: m.nn.separable_conv2d(a, b, c, strides, padding), [x, dw, pw])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv1d_and_1d_pools(tf1, padding):
    x, f = _rand(2, 9, 3, seed=10), _rand(3, 3, 4, seed=11)
    _run_both(tf1, lambda m, a, b: m.nn.conv1d(a, b, 2, padding), [x, f])
    _run_both(tf1, lambda m, a: m.nn.max_pool1d(a, 3, 2, padding), [x])
    _run_both(tf1, lambda m, a: m.nn.avg_pool1d(a, 3, 2, padding), [x])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize(("training", "factor"), [(True, 1.0), (False, 1.0), (True, 0.3)])
def test_fused_batch_norm(tf1, data_format, training, factor):
    x = _rand(4, 3, 5, 6, seed=12)
    if data_format == "NCHW":
        x = x.transpose(0, 3, 1, 2).copy()
    scale, offset = np.abs(_rand(6, seed=13)) + 0.5, _rand(6, seed=14)
    mean, var = _rand(6, seed=15), np.abs(_rand(6, seed=16)) + 0.2
    dy = _rand(*x.shape, seed=17)
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            a = [m.constant(t) for t in (x, scale, offset)]
            out = m.nn.fused_batch_norm(
                *a, m.constant(mean), m.constant(var), 1e-3, data_format, training, exponential_avg_factor=factor
            )
            grads = m.gradients(out[0], a, grad_ys=m.constant(dy))
            with m.Session() as sess:
                results.append(sess.run([*out, *grads]))
    for g, e in zip(results[1], results[0]):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4)


def test_batch_normalization_composite(tf1):
    x, mean, var = _rand(4, 6, seed=18), _rand(6, seed=19), np.abs(_rand(6, seed=20)) + 0.2
    offset, scale = _rand(6, seed=21), _rand(6, seed=22)
    _run_both(tf1, lambda m, *a: m.nn.batch_normalization(*a, 1e-3), [x, mean, var, offset, scale])
