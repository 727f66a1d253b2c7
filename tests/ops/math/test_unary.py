"""Unary elementwise ops: values against numpy, dtype errors, first and second order gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.math.support import positive
from tests.ops.op_check import check_forward, check_gradient, rand


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY_FLOAT = [
    (tf.negative, np.negative, rand),
    (tf.abs, np.abs, rand),
    (tf.sign, np.sign, rand),
    (tf.exp, np.exp, rand),
    (tf.log, np.log, positive),
    (tf.log1p, np.log1p, positive),
    (tf.sqrt, np.sqrt, positive),
    (tf.rsqrt, lambda x: 1 / np.sqrt(x), positive),
    (tf.square, np.square, rand),
    (tf.reciprocal, np.reciprocal, positive),
    (tf.sigmoid, _sigmoid, rand),
    (tf.tanh, np.tanh, rand),
    (tf.floor, np.floor, rand),
    (tf.ceil, np.ceil, rand),
    (tf.round, np.round, lambda *s, seed: np.round(rand(*s, seed=seed) * 4) / 4),
]


@pytest.mark.parametrize("fn,ref,gen", UNARY_FLOAT, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_forward(fn, ref, gen, dtype):
    x = gen(3, 4, seed=3).astype(dtype)
    check_forward(fn, lambda a: ref(a).astype(dtype), [x], rtol=1e-5)


@pytest.mark.parametrize(
    "fn,ref", [(tf.negative, np.negative), (tf.abs, np.abs), (tf.sign, np.sign), (tf.square, np.square)]
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_unary_forward_integers(fn, ref, dtype):
    check_forward(fn, ref, [rand(5, dtype=dtype, low=-9, high=9)])


def test_round_keeps_integers():
    with tf.Graph().as_default():
        i = tf.constant([1, 2])
        assert tf.round(i) is i


@pytest.mark.parametrize("fn", [tf.exp, tf.log, tf.sqrt, tf.sigmoid, tf.tanh, tf.reciprocal, tf.floor, tf.ceil])
def test_float_only_unary_rejects_int(fn):
    with tf.Graph().as_default(), pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        fn(tf.constant([1, 2]))


def test_unary_ops_reject_unsupported_types():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType uint8 not in list"):
            tf.negative(tf.constant([1], tf.uint8))
        with pytest.raises(TypeError, match="DataType bool not in list"):
            tf.abs(tf.constant([True]))


UNARY_GRAD = [
    (tf.negative, rand),
    (tf.abs, rand),
    (tf.exp, rand),
    (tf.log, positive),
    (tf.log1p, positive),
    (tf.sqrt, positive),
    (tf.rsqrt, positive),
    (tf.square, rand),
    (tf.reciprocal, positive),
    (tf.sigmoid, rand),
    (tf.tanh, rand),
    (tf.sign, rand),
]


@pytest.mark.parametrize("fn,gen", UNARY_GRAD, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_gradients(fn, gen):
    check_gradient(fn, [gen(2, 3, seed=15)])


@pytest.mark.parametrize("fn", [tf.sigmoid, tf.tanh, tf.sqrt, tf.rsqrt, tf.reciprocal])
def test_second_order_gradients(fn):
    def first_grad(x, w):
        return tf.gradients(fn(x), x, grad_ys=w)[0]

    check_gradient(first_grad, [positive(2, 3, seed=16), rand(2, 3, seed=17)])
