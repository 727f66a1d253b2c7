"""Tests of ``tf.nn``'s cross-entropies and losses (numpy references), and a training step built on them."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.nn.helpers import KINKED, log_softmax_ref, probabilities
from tests.ops.op_check import check_forward, check_gradient, rand


def _sigmoid_xent(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def test_sigmoid_cross_entropy_forward_and_gradient():
    labels = rand(3, 4, low=0.0, high=1.0, seed=1)
    logits = KINKED * 20  # large magnitudes: the naive formula would overflow
    build = lambda z, x: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)  # noqa: E731
    check_forward(build, lambda z, x: _sigmoid_xent(z, x).astype(np.float32), [labels, logits], rtol=1e-5)
    check_gradient(build, [labels, KINKED])
    with tf.Graph().as_default():
        assert build(tf.zeros([2]), tf.zeros([2])).op.name == "logistic_loss"
        with pytest.raises(ValueError, match="must have the same shape"):
            build(tf.zeros([2]), tf.zeros([3]))
        with pytest.raises(ValueError, match="named arguments"):
            tf.nn.sigmoid_cross_entropy_with_logits(tf.zeros([2]), tf.zeros([2]))


def _xent(labels, logits, axis=-1):
    return -(labels * log_softmax_ref(logits, axis)).sum(axis)


XENT = {
    "v2": lambda z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
    "v1": lambda z, x: tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
}


@pytest.mark.parametrize("version", sorted(XENT))
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (6,)])
def test_softmax_cross_entropy_forward(version, shape):
    labels, logits = probabilities(*shape, seed=2), rand(*shape, seed=3)
    check_forward(XENT[version], lambda z, x: _xent(z, x).astype(np.float32), [labels, logits])


def test_softmax_cross_entropy_axis():
    labels, logits = probabilities(3, 4, seed=2).T.copy(), rand(4, 3, seed=3)
    build = lambda z, x: tf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x, axis=0)  # noqa: E731
    check_forward(build, lambda z, x: _xent(z, x, 0).astype(np.float32), [labels, logits])
    build_dim = lambda z, x: tf.nn.softmax_cross_entropy_with_logits(labels=z, logits=x, dim=0)  # noqa: E731
    check_forward(build_dim, lambda z, x: _xent(z, x, 0).astype(np.float32), [labels, logits])
    check_gradient(build, [labels, logits])


def test_softmax_cross_entropy_gradients():
    labels, logits = probabilities(3, 4, seed=4), rand(3, 4, seed=5)
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
    check_gradient(build, [probabilities(3, 4, seed=6), rand(3, 4, seed=7)], wrt=[0, 1] if version == "v2" else [1])


def test_softmax_cross_entropy_broadcasts_labels():
    labels, logits = probabilities(1, 4, seed=8), rand(3, 4, seed=9)
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
    logp = log_softmax_ref(logits.astype(np.float64))
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
    check_forward(
        lambda z, c: tf.nn.log_poisson_loss(z, c, compute_full_loss=True), full, [targets, log_input], rtol=1e-5
    )
    check_gradient(tf.nn.log_poisson_loss, [targets, log_input])


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
