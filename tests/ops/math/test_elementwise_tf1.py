"""Trigonometric, special and zero-safe elementwise functions against real TensorFlow: values, static shapes,
gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import check_gradient, rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

X = rand(2, 3, seed=1).astype(np.float64)
UNIT = rand(2, 3, low=-0.9, high=0.9, seed=2).astype(np.float64)
POS = rand(2, 3, low=0.5, high=3.0, seed=3).astype(np.float64)
ABOVE_ONE = rand(2, 3, low=1.2, high=3.0, seed=4).astype(np.float64)
PROB = rand(2, 3, low=0.05, high=0.95, seed=5).astype(np.float64)

UNARY = [
    ("sin", X),
    ("cos", X),
    ("tan", UNIT),
    ("asin", UNIT),
    ("acos", UNIT),
    ("atan", X),
    ("sinh", X),
    ("cosh", X),
    ("asinh", X),
    ("acosh", ABOVE_ONE),
    ("atanh", UNIT),
    ("erf", X),
    ("erfc", X),
    ("lgamma", POS),
    ("digamma", POS),
    ("expm1", X),
    ("math.erfinv", UNIT),
    ("math.ndtri", PROB),
    ("math.erfcinv", PROB),
    ("math.bessel_i0", X),
    ("math.bessel_i0e", X),
    ("math.bessel_i1", X),
    ("math.bessel_i1e", X),
]


def _fn(m, name):
    for part in name.split("."):
        m = getattr(m, part)
    return m


@pytest.mark.parametrize("name,x", UNARY, ids=[u[0] for u in UNARY])
def test_unary_values_and_gradients(name, x):
    compare(lambda m, t: _fn(m, name)(t), [x], rtol=1e-6)


@pytest.mark.parametrize("name,x", UNARY[:12], ids=[u[0] for u in UNARY[:12]])
def test_unary_float32_and_op_names(name, x):
    got = compare(lambda m, t: _fn(m, name)(t, name="f"), [x.astype(np.float32)], grad=False, rtol=2e-6)
    assert got[0].dtype == np.float32


def test_unary_rejects_integers():
    assert compare_error(lambda m, t: m.sin(t), [np.array([1, 2], np.int32)]) == "TypeError"


@pytest.mark.parametrize("name", ["is_nan", "is_inf", "is_finite"])
def test_float_tests(name):
    x = np.array([[1.0, np.nan, np.inf], [-np.inf, 0.0, -2.0]], np.float32)
    compare(lambda m, t: getattr(m, name)(t), [x])


def test_rint_halves_to_even_and_has_no_gradient():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.7, 3.2])
    compare(lambda m, t: m.rint(t), [x])


BINARY = [
    ("atan2", X, rand(2, 3, seed=9).astype(np.float64)),
    ("atan2", X, rand(3, seed=10).astype(np.float64)),
    ("igamma", POS, rand(1, 3, low=0.5, high=3.0, seed=11).astype(np.float64)),
    ("igammac", POS, rand(2, 3, low=0.5, high=3.0, seed=12).astype(np.float64)),
    ("zeta", ABOVE_ONE, POS),
    ("div_no_nan", X, np.array([[0.0, 1.5, -2.0], [0.7, 0.0, 3.0]])),
    ("math.multiply_no_nan", np.array([[np.inf, 1.5, -2.0]]), np.array([[0.0, 1.5, -2.0], [0.7, 0.0, 3.0]])),
    ("math.xlogy", np.array([[0.0, 1.5, -2.0]]), POS),
    ("math.xlog1py", np.array([[0.0, 1.5, -2.0]]), POS),
    ("math.xdivy", np.array([[0.0, 1.5, -2.0]]), POS),
    ("math.nextafter", X, rand(3, seed=3).astype(np.float64)),
]


@pytest.mark.parametrize("name,x,y", BINARY, ids=[f"{b[0]}-{i}" for i, b in enumerate(BINARY)])
def test_binary_values_and_gradients(name, x, y):
    # IgammaGradA is a central difference in dtf (TF has a series): 1e-7 relative is what it reaches.
    tol = 1e-6 if name.startswith("igamma") else 1e-9
    compare(lambda m, a, b: _fn(m, name)(a, b), [x, y], rtol=1e-7, grad_rtol=tol, grad_atol=1e-9)


def test_polygamma_orders_and_gradient():
    n = np.array([[0.0, 1.0, 2.0], [3.0, 1.5, -1.0]])
    compare(lambda m, a, b: m.polygamma(a, b), [n, POS], wrt=[1], rtol=1e-7)


def test_betainc_values_and_gradient():
    a, b = POS, rand(2, 3, low=0.5, high=3.0, seed=21).astype(np.float64)
    compare(lambda m, a_, b_, x_: m.betainc(a_, b_, x_), [a, b, PROB], wrt=[2], rtol=1e-7, grad_rtol=1e-7)


def test_lbeta():
    compare(lambda m, t: m.lbeta(t), [POS], rtol=1e-7)
    compare(lambda m, t: m.lbeta(t), [np.zeros((2, 0))], grad=False)


@pytest.mark.parametrize("name", ["truncatediv", "truncatemod"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_truncating_division(name, dtype):
    x = np.array([7, -7, 7, -7, 9], dtype)
    y = np.array([2, 2, -2, -2, 4], dtype)
    compare(lambda m, a, b: getattr(m, name)(a, b), [x, y], grad=False)


def test_truncatediv_by_zero_fails_at_run_time():
    # TF reports this as an InternalError ("only integer div and mod should have errors"); dtf gives the
    # InvalidArgumentError of its other integer divisions.
    with tf.Graph().as_default():
        z = tf.truncatediv(tf.constant([1, 2]), tf.placeholder_with_default([1, 0], [2]))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            sess.run(z)


def test_truncatemod_has_no_gradient_like_tf():
    with tf.Graph().as_default():
        x = tf.constant([1.5])
        with pytest.raises(LookupError):
            tf.gradients(tf.truncatemod(x, 1.0), x)


def test_div_no_nan_casts_integers_like_truediv():
    compare(lambda m, a, b: m.div_no_nan(a, b), [np.array([3, 4], np.int32), np.array([2, 0], np.int32)])


def test_names_and_keywords():
    with tf.Graph().as_default():
        a = tf.atan2(y=tf.constant(1.0), x=tf.constant(2.0), name="angle")
        assert a.op.name == "angle" and a.op.type == "Atan2"
        assert tf.math.xdivy(1.0, 2.0).op.name == "xdivy/Xdivy"
        assert tf.div_no_nan(1.0, 2.0).op.name == "div_no_nan"
        with pytest.raises(TypeError):
            tf.atan2(1.0, 2.0, 3.0)


def test_igamma_gradient_in_a_is_close_to_finite_differences():
    check_gradient(lambda a, x: tf.igamma(a, x), [POS, PROB], wrt=[0], rtol=1e-5)
