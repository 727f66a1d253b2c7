"""Tests of ``tf.nn`` activations and softmax: forward values, first and second derivatives, errors, namespace."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.ops import nn_ops
from tests.ops.nn.helpers import KINKED, log_softmax_ref, softmax_ref
from tests.ops.op_check import check_forward, check_gradient, rand


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.expm1(x)).astype(x.dtype)


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
    "softmax": (tf.nn.softmax, softmax_ref),
    "softmax_axis0": (lambda x: tf.nn.softmax(x, axis=0), lambda x: softmax_ref(x, 0)),
    "softmax_dim0": (lambda x: tf.nn.softmax(x, dim=0), lambda x: softmax_ref(x, 0)),
    "log_softmax": (tf.nn.log_softmax, log_softmax_ref),
    "log_softmax_axis0": (lambda x: tf.nn.log_softmax(x, axis=0), lambda x: log_softmax_ref(x, 0)),
    "l2_loss": (tf.nn.l2_loss, lambda x: (np.sum(x.astype(np.float64) ** 2) / 2).astype(x.dtype)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_forward(name, dtype):
    build, reference = ACTIVATIONS[name]
    check_forward(build, reference, [KINKED.astype(dtype)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradient(name):
    build, _ = ACTIVATIONS[name]
    check_gradient(build, [KINKED])


@pytest.mark.parametrize("name", ["relu", "relu6", "elu", "leaky_relu", "softmax", "log_softmax", "softplus"])
def test_activation_second_order(name):
    build, _ = ACTIVATIONS[name]

    def first_derivative(x):
        # Multiplying by x makes the incoming gradient depend on x, so both inputs of the *Grad op matter.
        return tf.gradients(build(x) * x, x, grad_ys=tf.constant(rand(3, 4, dtype=np.float64, seed=3)))[0]

    check_gradient(first_derivative, [KINKED])


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
