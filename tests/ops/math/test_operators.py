"""Tensor operators and graph details: Python values on either side, op names, Variables, ops without
gradients, and kernels that leave their inputs alone."""

from __future__ import annotations

import numpy as np

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import check_forward, evaluate, rand


def test_operators_with_python_values_on_either_side():
    x = rand(2, 3, low=0.5, high=2.0)
    check_forward(lambda t: 2.0 + t, lambda a: 2.0 + a, [x])
    check_forward(lambda t: 2.0 - t, lambda a: np.float32(2.0) - a, [x])
    check_forward(lambda t: 2.0 * t, lambda a: 2.0 * a, [x])
    check_forward(lambda t: 2.0 / t, lambda a: np.float32(2.0) / a, [x])
    check_forward(lambda t: 2.0**t, lambda a: np.float32(2.0) ** a, [x], rtol=1e-5)
    check_forward(lambda t: t**2, lambda a: a**2, [x])
    check_forward(lambda t: 7.0 // t, lambda a: np.float32(7.0) // a, [x])
    check_forward(lambda t: 7.0 % t, lambda a: np.float32(7.0) % a, [x], rtol=1e-5)
    check_forward(lambda t: -t, np.negative, [x])
    check_forward(lambda t: abs(t - 1.0), lambda a: np.abs(a - 1.0), [x])
    check_forward(lambda t: t < 1.0, lambda a: a < 1.0, [x])
    check_forward(lambda t: t <= 1.0, lambda a: a <= 1.0, [x])
    check_forward(lambda t: t > 1.0, lambda a: a > 1.0, [x])
    check_forward(lambda t: 1.0 >= t, lambda a: 1.0 >= a, [x])
    check_forward(lambda t: np.ones((2, 3), np.float32) + t, lambda a: 1.0 + a, [x])


def test_operator_op_types_and_names():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        cases = [
            (x + 1.0, "Add", "add"),
            (x - 1.0, "Sub", "sub"),
            (x * 2.0, "Mul", "mul"),
            (x / 2.0, "RealDiv", "truediv"),
            (x // 2.0, "FloorDiv", "floordiv"),
            (x % 2.0, "FloorMod", "mod"),
            (x**2.0, "Pow", "pow"),
            (-x, "Neg", "Neg"),
            (abs(x), "Abs", "Abs"),
            (x < 1.0, "Less", "Less"),
            (1.0 + x, "Add", "add_1"),
            (tf.add(x, x), "Add", "Add_2"),
            (tf.multiply(x, x), "Mul", "Mul_1"),
        ]
        for t, op_type, name in cases:
            assert (t.op.type, t.op.name) == (op_type, name)
        reflected = 3.0 - x
        assert [i.op.name for i in reflected.op.inputs] == ["sub_1/x", "x"]
        assert [i.op.name for i in tf.add(1.0, 2.0, name="s").op.inputs] == ["s/x", "s/y"]


def test_operators_on_variables():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        out = 2.0 * v + v
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(out), [3.0, 6.0])


def test_non_differentiable_ops_give_no_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        outs = [
            tf.cast(tf.argmax(x), tf.float32),
            tf.cast(tf.less(x, 1.0), tf.float32),
            tf.floordiv(x, 2.0),
            tf.floor(x),
            tf.ceil(x),
            tf.round(x),
        ]
        for out in outs:
            assert tf.gradients(out, x) == [None]


def test_kernels_do_not_mutate_inputs():
    x = rand(2, 3)
    with tf.Graph().as_default():
        c = tf.constant(x)
        outs = [
            tf.add_n([c, c, c]),
            c + 1.0,
            tf.reduce_sum(c, []),
            tf.cast(c, tf.float32),
            tf.clip_by_value(c, 0.0, 0.1),
        ]
        with tf.Session() as sess:
            sess.run(outs)
            np.testing.assert_array_equal(sess.run(c), x)


def test_evaluate_helper_with_constants_matches_placeholders():
    got, out = evaluate(lambda a, b: tf.matmul(a, b), [rand(2, 3), rand(3, 2)], feed=False)
    assert out.shape.as_list() == [2, 2] and got.shape == (2, 2)
