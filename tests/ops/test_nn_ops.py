"""Tests of ``tf.nn``: forward values (numpy or real TensorFlow as reference), gradients, errors, graph structure."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.ops import nn_ops
from tests.ops.op_check import check_forward, check_gradient, rand


# ---- numpy references ----------------------------------------------------------------------------
def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.expm1(x)).astype(x.dtype)


def _probabilities(*shape: int, seed: int = 0) -> np.ndarray:
    p = rand(*shape, low=0.05, high=1.0, seed=seed)
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def _run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


# Inputs kept away from the kinks at 0 (and 6) so that finite differences are meaningful.
_KINKED = np.array([[-2.5, -0.7, 0.4, 1.3], [3.1, -1.9, 6.8, 5.2], [-0.3, 0.9, 7.5, -4.0]], dtype=np.float32)

ACTIVATIONS = {
    "relu": (tf.nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (tf.nn.relu6, lambda x: np.clip(x, 0, 6)),
    "elu": (tf.nn.elu, _elu),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x)),
    "leaky_relu_alpha": (lambda x: tf.nn.leaky_relu(x, alpha=0.05), lambda x: np.where(x > 0, x, 0.05 * x)),
    "softplus": (tf.nn.softplus, lambda x: np.logaddexp(0, x).astype(x.dtype)),
    "softsign": (tf.nn.softsign, lambda x: x / (1 + np.abs(x))),
    "sigmoid": (tf.nn.sigmoid, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype)),
    "tanh": (tf.nn.tanh, np.tanh),
    "softmax": (tf.nn.softmax, _softmax),
    "softmax_axis0": (lambda x: tf.nn.softmax(x, axis=0), lambda x: _softmax(x, 0)),
    "softmax_dim0": (lambda x: tf.nn.softmax(x, dim=0), lambda x: _softmax(x, 0)),
    "log_softmax": (tf.nn.log_softmax, _log_softmax),
    "log_softmax_axis0": (lambda x: tf.nn.log_softmax(x, axis=0), lambda x: _log_softmax(x, 0)),
    "l2_loss": (tf.nn.l2_loss, lambda x: (np.sum(x.astype(np.float64) ** 2) / 2).astype(x.dtype)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_forward(name, dtype):
    build, reference = ACTIVATIONS[name]
    check_forward(build, reference, [_KINKED.astype(dtype)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradient(name):
    build, _ = ACTIVATIONS[name]
    check_gradient(build, [_KINKED])


@pytest.mark.parametrize("name", ["relu", "relu6", "elu", "leaky_relu", "softmax", "log_softmax", "softplus"])
def test_activation_second_order(name):
    build, _ = ACTIVATIONS[name]

    def first_derivative(x):
        # Multiplying by x makes the incoming gradient depend on x, so both inputs of the *Grad op matter.
        return tf.gradients(build(x) * x, x, grad_ys=tf.constant(rand(3, 4, dtype=np.float64, seed=3)))[0]

    check_gradient(first_derivative, [_KINKED])


def test_relu_family_on_integers():
    x = np.array([-3, 0, 4, 9], dtype=np.int32)
    check_forward(tf.nn.relu, lambda v: np.maximum(v, 0), [x])
    check_forward(tf.nn.relu6, lambda v: np.clip(v, 0, 6), [x])
    # TF computes leaky_relu of integers in float32.
    check_forward(tf.nn.leaky_relu, lambda v: np.where(v > 0, v, 0.2 * v).astype(np.float32), [x])


def test_activation_op_types_and_names():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        assert tf.nn.relu(x).op.name == "Relu"
        assert tf.nn.relu(x, name="act").op.name == "act"
        assert tf.nn.softmax(x).op.type == "Softmax"
        assert tf.nn.log_softmax(x).op.type == "LogSoftmax"
        assert tf.nn.l2_loss(x).op.type == "L2Loss" and tf.nn.l2_loss(x).shape.as_list() == []
        grad_op = tf.gradients(tf.nn.relu(x), x)[0].op
        assert grad_op.type == "ReluGrad"
        assert tf.nn.softmax(x, axis=0).shape.as_list() == [None, 3]


def test_activation_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.softmax(tf.constant([1, 2]))
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.elu(tf.constant([1, 2]))
        with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'dim'"):
            tf.nn.softmax(tf.zeros([2, 2]), axis=0, dim=0)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"range \[-2, 2\)"):
            tf.nn.softmax(tf.zeros([2, 2]), axis=5)
        with pytest.raises(ValueError, match="at least rank 1"):
            tf.nn.softmax(tf.constant(1.0))


def test_tf_nn_namespace():
    for name in nn_ops.__all__:
        assert getattr(tf.nn, name) is getattr(nn_ops, name)
    assert tf.nn.sigmoid is tf.sigmoid and tf.nn.tanh is tf.tanh


# ---- cross-entropies ------------------------------------------------------------------------------
def _sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def test_sigmoid_cross_entropy_forward_and_gradient():
    labels = rand(3, 4, low=0.0, high=1.0, seed=1)
    logits = _KINKED * 20  # large magnitudes: the naive formula would overflow
    build = lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)  # noqa: E731
    check_forward(build, lambda z, x: _sigmoid_xent(z, x).astype(np.float32), [labels, logits], rtol=1e-5)
    check_gradient(build, [labels, _KINKED])
    with tf.Graph().as_default():
        assert build(tf.zeros([2]), tf.zeros([2])).op.name == "logistic_loss"
        with pytest.raises(ValueError, match="must have the same shape"):
            build(tf.zeros([2]), tf.zeros([3]))
        with pytest.raises(ValueError, match="named arguments"):
            tf.nn.sigmoid_cross_entropy_with_logits(tf.zeros([2]), tf.zeros([2]))


def _xent(labels, logits, axis=-1):
    return -(labels * _log_softmax(logits, axis)).sum(axis)


XENT = {
    "v2": lambda z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
    "v1": lambda z, x: tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
}


@pytest.mark.parametrize("version", sorted(XENT))
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (6,)])
def test_softmax_cross_entropy_forward(version, shape):
    labels, logits = _probabilities(*shape, seed=2), rand(*shape, seed=3)
    check_forward(XENT[version], lambda z, x: _xent(z, x).astype(np.float32), [labels, logits])


def test_softmax_cross_entropy_axis():
    labels, logits = _probabilities(3, 4, seed=2).T.copy(), rand(4, 3, seed=3)
    build = lambda z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x, axis=0)  # noqa: E731
    check_forward(build, lambda z, x: _xent(z, x, 0).astype(np.float32), [labels, logits])
    build_dim = lambda z, x: tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x, dim=0)  # noqa: E731
    check_forward(build_dim, lambda z, x: _xent(z, x, 0).astype(np.float32), [labels, logits])
    check_gradient(build, [labels, logits])


def test_softmax_cross_entropy_gradients():
    labels, logits = _probabilities(3, 4, seed=4), rand(3, 4, seed=5)
    # v2: gradients reach both logits and labels.
    check_gradient(XENT["v2"], [labels, logits])
    # v1: gradients reach the logits only.
    check_gradient(XENT["v1"], [labels, logits], wrt=[1])
    with tf.Graph().as_default():
        z, x = tf.constant(labels), tf.constant(logits)
        loss = XENT["v1"](z, x)
        assert tf.gradients(loss, z) == [None]
        assert loss.op.type == "SoftmaxCrossEntropyWithLogits"
        assert loss.op.name == "softmax_cross_entropy_with_logits"
        # The gradient reuses the op's second output (backprop) rather than recomputing a softmax.
        grad = tf.gradients(loss, x)[0]
        assert loss.op.outputs[1] in grad.op.inputs


@pytest.mark.parametrize("version", sorted(XENT))
def test_softmax_cross_entropy_second_order(version):
    # Differentiating the logits gradient goes through the op's backprop output (the `grad_grad` path).
    build = lambda z, x: tf.gradients(XENT[version](z, x) * 1.5, x)[0]  # noqa: E731
    check_gradient(build, [_probabilities(3, 4, seed=6), rand(3, 4, seed=7)], wrt=[0, 1] if version == "v2" else [1])


def test_softmax_cross_entropy_broadcasts_labels():
    labels, logits = _probabilities(1, 4, seed=8), rand(3, 4, seed=9)
    check_forward(XENT["v2"], lambda z, x: _xent(np.broadcast_to(z, x.shape), x).astype(np.float32), [labels, logits])
    check_gradient(XENT["v2"], [labels, logits])


def test_softmax_cross_entropy_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            XENT["v2"](tf.zeros([3, 4]), tf.zeros([3, 3]))
        with pytest.raises(ValueError, match="named arguments"):
            tf.nn.softmax_cross_entropy_with_logits(tf.zeros([3, 3]), tf.zeros([3, 3]))
        # The v2 function takes (labels, logits) positionally, as in TF 1.15.
        assert tf.nn.softmax_cross_entropy_with_logits_v2(tf.zeros([3, 3]), tf.ones([3, 3])).shape.as_list() == [3]
        with pytest.raises(ValueError):
            XENT["v2"](tf.zeros([3]), tf.zeros([3], dtype=tf.float64))


def _sparse_xent(labels, logits):
    logp = _log_softmax(logits.astype(np.float64))
    return -np.take_along_axis(logp, labels[..., None].astype(np.int64), -1)[..., 0]


SPARSE = lambda z, x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=z, logits=x)  # noqa: E731


@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 6), (7,)])
def test_sparse_softmax_cross_entropy_forward(label_dtype, shape):
    logits = rand(*shape, seed=8)
    labels = rand(*shape[:-1], dtype=label_dtype, low=0, high=shape[-1], seed=9)
    check_forward(SPARSE, lambda z, x: _sparse_xent(z, x).astype(np.float32), [labels, logits])


def test_sparse_softmax_cross_entropy_gradient_and_structure():
    labels = np.array([0, 3, 1], dtype=np.int64)
    check_gradient(SPARSE, [labels, rand(3, 4, seed=10)])
    check_gradient(lambda z, x: tf.gradients(SPARSE(z, x), x)[0], [labels, rand(3, 4, seed=10)])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        loss = SPARSE(tf.placeholder(tf.int32, [None]), x)
        assert loss.op.type == "SparseSoftmaxCrossEntropyWithLogits"
        assert loss.op.name == "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits"
        assert loss.shape.as_list() == [None] and loss.op.outputs[1].shape.as_list() == [None, 4]
        assert loss.op.outputs[1] in tf.gradients(loss, x)[0].op.inputs


@pytest.mark.parametrize("labels,bad", [([1, 5, 2], 5), ([1, -1, 2], -1)])
def test_sparse_softmax_cross_entropy_label_out_of_range(labels, bad):
    with tf.Graph().as_default():
        z = tf.placeholder(tf.int64, [None])
        loss = SPARSE(z, tf.zeros([3, 3]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(loss, {z: labels})
    message = str(info.value)
    assert f"Received a label value of {bad} which is outside the valid range of [0, 3)" in message
    assert "Label values: " + " ".join(map(str, labels)) in message


def test_sparse_softmax_cross_entropy_build_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank"):
            SPARSE(tf.constant([[1]]), tf.zeros([3, 3]))
        with pytest.raises(ValueError, match="except for the last dimension"):
            SPARSE(tf.constant([1, 1]), tf.zeros([3, 3]))
        with pytest.raises(TypeError, match="not in list of allowed values"):
            SPARSE(tf.constant([1.0, 1.0, 1.0]), tf.zeros([3, 3]))
        with pytest.raises(ValueError, match="named arguments"):
            tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant([1]), tf.zeros([1, 3]))


def test_log_poisson_loss():
    targets, log_input = rand(3, 4, low=0.0, high=3.0, seed=11), rand(3, 4, seed=12)

    def full(z, c):
        stirling = z * np.log(z) - z + 0.5 * np.log(2 * np.pi * z)
        return (np.exp(c) - c * z + np.where((z >= 0) & (z <= 1), 0, stirling)).astype(np.float32)

    check_forward(tf.nn.log_poisson_loss, lambda z, c: (np.exp(c) - c * z).astype(np.float32), [targets, log_input])
    check_forward(lambda z, c: tf.nn.log_poisson_loss(z, c, compute_full_loss=True), full, [targets, log_input],
                  rtol=1e-5)
    check_gradient(tf.nn.log_poisson_loss, [targets, log_input])


# ---- bias_add, xw_plus_b, moments -------------------------------------------------------------------
@pytest.mark.parametrize("data_format,shape", [("NHWC", (2, 3)), ("NHWC", (2, 3, 4, 5)), ("NCHW", (2, 5, 3, 4)),
                                               ("NCHW", (2, 5, 3))])
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


# ---- convolution -----------------------------------------------------------------------------------
def _tf1():
    tf_real = pytest.importorskip("tensorflow")
    return tf_real.compat.v1


def _oracle(build_tf, *inputs):
    """Evaluates ``build_tf(tf1, *constants)`` with real TensorFlow (NCHW cases are transposed to NHWC there)."""
    tf1 = _tf1()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        return sess.run(build_tf(tf1, *[tf1.constant(x) for x in inputs]))


def _to_nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def _to_nchw(x):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


CONV_CASES = [
    # (input NHWC shape, filter shape, strides (h, w), padding, dilations (h, w))
    ((2, 5, 7, 3), (3, 2, 3, 4), (1, 1), "SAME", (1, 1)),
    ((1, 6, 6, 2), (2, 3, 2, 3), (2, 3), "SAME", (1, 1)),
    ((1, 7, 5, 2), (3, 3, 2, 2), (2, 2), "VALID", (1, 1)),
    ((1, 7, 6, 2), (2, 2, 2, 3), (1, 1), "SAME", (2, 3)),
    ((2, 4, 4, 1), (1, 1, 1, 2), (1, 1), "VALID", (1, 1)),
    ((1, 5, 6, 2), (3, 2, 2, 2), (2, 1), [[0, 0], [2, 0], [1, 3], [0, 0]], (1, 1)),
]


def _conv_args(case, data_format):
    _, _, (sh, sw), padding, (dh, dw) = case
    if data_format == "NCHW":
        if not isinstance(padding, str):
            padding = [padding[0], padding[3], padding[1], padding[2]]
        return [1, 1, sh, sw], padding, [1, 1, dh, dw]
    return [1, sh, sw, 1], padding, [1, dh, dw, 1]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv2d_forward_matches_tensorflow(case, data_format):
    spec = CONV_CASES[case]
    x, w = rand(*spec[0], seed=case), rand(*spec[1], seed=case + 50)
    strides, padding, dilations = _conv_args(spec, "NHWC")
    expected = _oracle(lambda t, a, b: t.nn.conv2d(a, b, strides, padding, dilations=dilations), x, w)
    tf_strides, tf_padding, tf_dilations = _conv_args(spec, data_format)
    if data_format == "NCHW":
        x, expected = _to_nchw(x), _to_nchw(expected)

    def build(a, b):
        return tf.nn.conv2d(a, b, tf_strides, tf_padding, data_format=data_format, dilations=tf_dilations)

    check_forward(build, lambda a, b: expected, [x, w], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", [0, 1, 2, 3, 5])
def test_conv2d_gradient(case, data_format):
    spec = CONV_CASES[case]
    x, w = rand(*spec[0], seed=case), rand(*spec[1], seed=case + 50)
    x = x[:1]
    strides, padding, dilations = _conv_args(spec, data_format)
    if data_format == "NCHW":
        x = _to_nchw(x)
    check_gradient(lambda a, b: tf.nn.conv2d(a, b, strides, padding, data_format=data_format, dilations=dilations),
                   [x, w], rtol=1e-4, atol=1e-5)


def test_conv2d_grouped_and_shapes():
    # A filter with fewer input channels than the input convolves channel groups separately.
    x, w = rand(1, 4, 4, 4, seed=20), rand(2, 2, 2, 6, seed=21)
    build = lambda a, b: tf.nn.conv2d(a, b, 1, "SAME")  # noqa: E731

    def reference(a, b):
        out = np.zeros((1, 4, 4, 6), np.float32)
        padded = np.pad(a, [(0, 0), (0, 1), (0, 1), (0, 0)])
        for g in range(2):
            for i in range(4):
                for j in range(4):
                    patch = padded[0, i:i + 2, j:j + 2, 2 * g:2 * g + 2]
                    out[0, i, j, 3 * g:3 * g + 3] = np.tensordot(patch, b[:, :, :, 3 * g:3 * g + 3], 3)
        return out

    check_forward(build, reference, [x, w], rtol=1e-5, atol=1e-5)
    check_gradient(build, [x, w])
    with tf.Graph().as_default():
        y = tf.nn.conv2d(tf.placeholder(tf.float32, [None, 9, None, 3]), tf.zeros([3, 3, 3, 8]), [1, 2, 2, 1], "SAME")
        assert y.shape.as_list() == [None, 5, None, 8] and y.op.type == "Conv2D"
        dx, dw = tf.gradients(y, y.op.inputs)
        assert (dx.op.type, dw.op.type) == ("Conv2DBackpropInput", "Conv2DBackpropFilter")
        assert tf.nn.conv2d(tf.zeros([1, 3, 8, 8]), tf.zeros([3, 3, 3, 2]), 2, "VALID",
                            data_format="NCHW").shape.as_list() == [1, 2, 3, 3]


def test_conv2d_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 3, 4, 2])
        with pytest.raises(ValueError, match=r"Depth of input \(2\) is not a multiple of input depth of filter \(3\)"):
            tf.nn.conv2d(x, tf.zeros([2, 2, 3, 1]), [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="strides in the batch and depth dimensions"):
            tf.nn.conv2d(x, tf.zeros([2, 2, 2, 1]), [2, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="not in: \"SAME\", \"VALID\", \"EXPLICIT\""):
            tf.nn.conv2d(x, tf.zeros([2, 2, 2, 1]), [1, 1, 1, 1], "FOO")
        with pytest.raises(ValueError, match="rank 4"):
            tf.nn.conv2d(tf.zeros([3, 4, 2]), tf.zeros([2, 2, 2, 1]), [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="output size would be negative"):
            tf.nn.conv2d(x, tf.zeros([5, 2, 2, 1]), [1, 1, 1, 1], "VALID")
        with pytest.raises(ValueError, match="strides should be of length"):
            tf.nn.conv2d(x, tf.zeros([2, 2, 2, 1]), [1, 1, 1], "SAME")
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.conv2d(tf.zeros([1, 3, 4, 2], dtype=tf.int32), tf.zeros([2, 2, 2, 1], dtype=tf.int32), 1, "SAME")


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", [0, 1, 2, 3, 5])
def test_conv2d_backprop_functions_match_tensorflow(case):
    spec = CONV_CASES[case]
    x, w = rand(*spec[0], seed=case), rand(*spec[1], seed=case + 50)
    strides, padding, dilations = _conv_args(spec, "NHWC")
    y_shape = _oracle(lambda t, a, b: t.nn.conv2d(a, b, strides, padding, dilations=dilations), x, w).shape
    dy = rand(*y_shape, seed=case + 100)

    def tf_backprops(t, a, b, g):
        kwargs = {"strides": strides, "padding": padding, "dilations": dilations}
        return [t.nn.conv2d_backprop_input(list(x.shape), b, g, **kwargs),
                t.nn.conv2d_backprop_filter(a, list(w.shape), g, **kwargs)]

    expected = _oracle(tf_backprops, x, w, dy)

    def build(a, b, g):
        kwargs = {"strides": strides, "padding": padding, "dilations": dilations}
        return [tf.nn.conv2d_backprop_input(list(x.shape), b, g, **kwargs),
                tf.nn.conv2d_backprop_filter(a, list(w.shape), g, **kwargs)]

    check_forward(build, lambda *_: expected, [x, w, dy], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv2d_backprop_ops_are_differentiable(data_format):
    spec = CONV_CASES[1]
    x, w = rand(1, 6, 6, 2, seed=22), rand(*spec[1], seed=23)
    strides, padding, dilations = _conv_args(spec, data_format)
    dy = rand(1, 3, 2, 3, seed=24)
    sizes = [1, 6, 6, 2]
    if data_format == "NCHW":
        x, dy, sizes = _to_nchw(x), _to_nchw(dy), [1, 2, 6, 6]
    kwargs = {"strides": strides, "padding": padding, "data_format": data_format}
    check_gradient(lambda b, g: tf.nn.conv2d_backprop_input(sizes, b, g, **kwargs), [w, dy])
    check_gradient(lambda a, g: tf.nn.conv2d_backprop_filter(a, list(w.shape), g, **kwargs), [x, dy])
    # Second derivatives of conv2d go through these ops.
    check_gradient(lambda a, b: tf.gradients(tf.nn.conv2d(a, b, **kwargs) ** 2, b)[0], [x, w], rtol=1e-4, atol=1e-4)


@pytest.mark.tf_oracle
def test_conv2d_transpose_matches_tensorflow():
    x, w = rand(1, 3, 4, 3, seed=25), rand(3, 3, 2, 3, seed=26)
    out_shape = [1, 6, 8, 2]
    expected = _oracle(lambda t, a, b: t.nn.conv2d_transpose(a, b, out_shape, [1, 2, 2, 1], "SAME"), x, w)
    build = lambda a, b: tf.nn.conv2d_transpose(a, b, out_shape, [1, 2, 2, 1], "SAME")  # noqa: E731
    check_forward(build, lambda *_: expected, [x, w], rtol=1e-4, atol=1e-5)
    check_gradient(build, [x, w])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="input channels does not match"):
        tf.nn.conv2d_transpose(tf.zeros([1, 3, 4, 2]), tf.zeros([3, 3, 2, 3]), out_shape, [1, 2, 2, 1])


# ---- pooling ---------------------------------------------------------------------------------------
POOL_CASES = [
    # (input NHWC shape, ksize (h, w), strides (h, w), padding)
    ((2, 5, 7, 3), (3, 2), (2, 3), "SAME"),
    ((1, 6, 6, 2), (2, 2), (2, 2), "SAME"),
    ((1, 5, 5, 2), (3, 3), (1, 1), "SAME"),
    ((1, 7, 5, 1), (3, 2), (2, 2), "VALID"),
    ((1, 4, 5, 2), (2, 3), (3, 1), "SAME"),
]
POOLS = {"max": (tf.nn.max_pool, "max_pool"), "avg": (tf.nn.avg_pool, "avg_pool")}


def _pool_args(case, data_format):
    _, (kh, kw), (sh, sw), padding = case
    if data_format == "NCHW":
        return [1, 1, kh, kw], [1, 1, sh, sw], padding
    return [1, kh, kw, 1], [1, sh, sw, 1], padding


@pytest.mark.tf_oracle
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kind", sorted(POOLS))
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_pool_forward_matches_tensorflow(case, kind, data_format):
    spec = POOL_CASES[case]
    ours, tf_name = POOLS[kind]
    x = rand(*spec[0], seed=case + 30)
    ksize, strides, padding = _pool_args(spec, "NHWC")
    expected = _oracle(lambda t, a: getattr(t.nn, tf_name)(a, ksize, strides, padding), x)
    ksize, strides, padding = _pool_args(spec, data_format)
    if data_format == "NCHW":
        x, expected = _to_nchw(x), _to_nchw(expected)
    check_forward(lambda a: ours(a, ksize, strides, padding, data_format=data_format), lambda a: expected, [x])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kind", sorted(POOLS))
@pytest.mark.parametrize("case", [0, 2, 3, 4])
def test_pool_gradient(case, kind, data_format):
    spec = POOL_CASES[case]
    ours, _ = POOLS[kind]
    x = rand(*spec[0], seed=case + 30)[:1]
    ksize, strides, padding = _pool_args(spec, data_format)
    if data_format == "NCHW":
        x = _to_nchw(x)
    build = lambda a: ours(a, ksize, strides, padding, data_format=data_format)  # noqa: E731
    check_gradient(build, [x])
    # The gradient ops (MaxPoolGrad, AvgPoolGrad) are differentiable as well.
    check_gradient(lambda a: tf.gradients(build(a) ** 2, a)[0], [x], rtol=1e-4, atol=1e-4)


def test_max_pool_on_integers_and_structure():
    x = np.arange(20, dtype=np.int32).reshape(1, 4, 5, 1)
    expected = np.array([[6, 8, 9], [16, 18, 19]], np.int32).reshape(1, 2, 3, 1)
    check_forward(lambda a: tf.nn.max_pool(a, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), lambda a: expected, [x])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 7, 3])
        y = tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
        assert y.shape.as_list() == [None, 3, 4, 3] and y.op.name == "MaxPool"
        assert tf.gradients(y, x)[0].op.type == "MaxPoolGrad"
        z = tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID")
        assert z.shape.as_list() == [None, 2, 3, 3] and tf.gradients(z, x)[0].op.type == "AvgPoolGrad"
        assert tf.nn.max_pool2d(x, 2, 2, "VALID").shape.as_list() == [None, 2, 3, 3]
        assert tf.nn.avg_pool2d(x, 2, 2, "SAME").shape.as_list() == [None, 3, 4, 3]
        assert tf.nn.max_pool(input=x, ksize=2, strides=1, padding="SAME").shape.as_list() == [None, 5, 7, 3]


def test_pool_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 4, 4, 2])
        with pytest.raises(ValueError, match="not in: \"SAME\", \"VALID\", \"EXPLICIT\""):
            tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "FOO")
        with pytest.raises(ValueError, match="batch dimension"):
            tf.nn.avg_pool(x, [2, 2, 2, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="rank 4"):
            tf.nn.max_pool(tf.zeros([4, 4, 2]), [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.avg_pool(tf.zeros([1, 4, 4, 2], dtype=tf.int32), 2, 2, "SAME")


# ---- embedding_lookup ------------------------------------------------------------------------------
def test_embedding_lookup_values_and_gradient():
    table = rand(5, 3, seed=40)
    ids = np.array([[4, 0], [2, 4]], dtype=np.int64)
    check_forward(lambda p, i: tf.nn.embedding_lookup(p, i), lambda p, i: p[i], [table, ids])
    check_forward(lambda p, i: tf.nn.embedding_lookup([p], i), lambda p, i: p[i], [table, ids.astype(np.int32)])
    check_gradient(lambda p, i: tf.nn.embedding_lookup(p, i), [table, ids])


def test_embedding_lookup_max_norm():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], np.float32)
    ids = np.array([0, 1, 2], np.int32)

    def reference(p, i):
        rows = p[i]
        norms = np.linalg.norm(rows, axis=-1, keepdims=True)
        return (rows * 1.0 / np.maximum(norms, 1.0)).astype(np.float32)

    check_forward(lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=1.0), reference, [table, ids])
    check_gradient(lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=1.0), [table + 0.1, ids])


def test_embedding_lookup_on_a_variable_is_colocated_and_sparse():
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            table = tf.Variable(rand(6, 2, seed=41), name="table")
        with tf.device("/job:worker/task:0"):
            rows = tf.nn.embedding_lookup(table, tf.constant([1, 5, 1]))
        gather = rows.op.inputs[0].op
        assert gather.name == "embedding_lookup"
        assert gather.device == "/job:ps/task:0"
        assert gather.get_attr("_class") == ["loc:@table"]
        assert rows.op.type == "Identity" and rows.device == "/job:worker/task:0"
    with tf.Graph().as_default():
        table = tf.Variable(rand(6, 2, seed=41), name="table")
        rows = tf.nn.embedding_lookup([table], tf.constant([1, 5, 1]))
        (grad,) = tf.gradients(tf.reduce_sum(rows), table)
        assert isinstance(grad, IndexedSlices)
        with tf.Session() as sess:
            sess.run(table.initializer)
            dense = sess.run(tf.convert_to_tensor(grad))
    expected = np.zeros((6, 2), np.float32)
    expected[1], expected[5] = 2.0, 1.0
    np.testing.assert_array_equal(dense, expected)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_partitioned(strategy):
    full = rand(10, 3, seed=42)
    if strategy == "mod":
        parts = [full[k::3] for k in range(3)]  # id i is row i // 3 of partition i % 3
    else:
        parts = [full[:4], full[4:7], full[7:]]  # 10 ids over 3 partitions: 4, 3, 3 consecutive ids
    ids = np.array([[9, 0, 4], [3, 3, 7]], dtype=np.int64)
    build = lambda a, b, c, i: tf.nn.embedding_lookup([a, b, c], i, partition_strategy=strategy)  # noqa: E731
    check_forward(build, lambda a, b, c, i: full[i], [*parts, ids])
    check_gradient(build, [*parts, ids])
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            first = tf.Variable(parts[0], name="first")
        with tf.device("/job:ps/task:1"):
            second = tf.Variable(np.concatenate(parts[1:]) if strategy == "div" else parts[1], name="second")
        rows = tf.nn.embedding_lookup([first, second], tf.constant([1, 2]), partition_strategy=strategy)
        grads = tf.gradients(tf.reduce_sum(rows), [first, second])
        assert all(isinstance(g, IndexedSlices) for g in grads)
        assert {g.values.op.inputs[0].op.device for g in grads} <= {"/job:ps/task:0", "/job:ps/task:1", ""}
        gathers = [op for op in tf.get_default_graph().get_operations() if op.type == "GatherV2"]
        assert sorted(op.device for op in gathers) == ["/job:ps/task:0", "/job:ps/task:1"]


def test_embedding_lookup_errors():
    with tf.Graph().as_default():
        table = tf.zeros([4, 2])
        with pytest.raises(ValueError, match="Unrecognized partition strategy"):
            tf.nn.embedding_lookup(table, [0], partition_strategy="hash")
        with pytest.raises(ValueError, match="Need at least one param"):
            tf.nn.embedding_lookup([], [0])
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.embedding_lookup(table, [0.0])
        with pytest.raises(ValueError, match="known numbers of rows"):
            tf.nn.embedding_lookup([table, tf.placeholder(tf.float32, [None, 2])], [0])
        with pytest.raises(ValueError, match="'div' strategy needs at least 3 rows"):
            tf.nn.embedding_lookup([tf.zeros([1, 2]), tf.zeros([1, 2]), tf.zeros([0, 2])], [0], "div")


# ---- an end-to-end check: the training step that the benchmark times ----------------------------------
def test_mlp_with_sparse_softmax_cross_entropy_trains():
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((64, 8)).astype(np.float32)
    yb = (xb[:, 0] > 0).astype(np.int64) + 2 * (xb[:, 1] > 0)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x, y = tf.placeholder(tf.float32, [None, 8]), tf.placeholder(tf.int64, [None])
        w1, b1 = tf.Variable(rng.standard_normal((8, 16)).astype(np.float32) * 0.3), tf.Variable(tf.zeros([16]))
        w2, b2 = tf.Variable(rng.standard_normal((16, 4)).astype(np.float32) * 0.3), tf.Variable(tf.zeros([4]))
        logits = tf.nn.bias_add(tf.matmul(tf.nn.relu(tf.nn.xw_plus_b(x, w1, b1)), w2), b2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tf.gradients(loss, [w1, b1, w2, b2])
        step = tf.group(*[tf.assign_sub(v, 0.5 * g) for v, g in zip([w1, b1, w2, b2], grads)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, {x: xb, y: yb})
            for _ in range(100):
                sess.run(step, {x: xb, y: yb})
            last = sess.run(loss, {x: xb, y: yb})
    assert last < 0.3 * first

