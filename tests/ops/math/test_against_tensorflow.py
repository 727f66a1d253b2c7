"""Math ops against real TensorFlow (tests marked ``tf_oracle``)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.math.support import run
from tests.ops.op_check import check_forward, rand


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    return real.compat.v1


ORACLE_CASES = [
    ("floordiv", lambda m: m.floordiv, [np.array([7, -7, 9], np.int32), np.array([2, 2, -4], np.int32)]),
    ("floormod", lambda m: m.floormod, [np.array([-7.5, 7.5, 3.0], np.float32), np.array([2, -2, 0.7], np.float32)]),
    ("truediv", lambda m: m.truediv, [np.array([1, 7], np.int16), np.array([2, 3], np.int16)]),
    ("div", lambda m: m.div, [np.array([-7, 7], np.int64), np.array([2, -2], np.int64)]),
    ("mean_int", lambda m: lambda a: m.reduce_mean(a, 1), [np.array([[-1, -2, 4], [1, 2, 2]], np.int32)]),
    ("prod", lambda m: lambda a: m.reduce_prod(a, [0, 1], keepdims=True), [rand(2, 3, seed=3)]),
    ("argmin", lambda m: lambda a: m.argmin(a, 0, output_type=m.int32), [np.array([[3, 1], [1, 3]], np.int32)]),
    ("saturate", lambda m: lambda a: m.saturate_cast(a, m.int8), [np.array([-300.5, 2.7, 300.0], np.float32)]),
    ("select_rows", lambda m: m.where, [np.array([True, False]), rand(2, 3, seed=1), rand(2, 3, seed=2)]),
    ("range", lambda m: lambda: m.range(1, 2, 0.3), []),
    ("segment", lambda m: lambda d: m.unsorted_segment_sum(d, [1, -1, 1], 2), [rand(3, 2, seed=4)]),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", ORACLE_CASES, ids=lambda c: c[0])
def test_matches_tensorflow(tf1, case):
    _, pick, inputs = case
    with tf1.Graph().as_default():
        with tf1.Session() as sess:
            expected = sess.run(pick(tf1)(*[tf1.constant(x) for x in inputs]))
    check_forward(pick(tf), lambda *a: expected, inputs, rtol=1e-6)


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "build",
    [
        lambda m, x, y: m.reduce_max(x * y, 1),
        lambda m, x, y: m.pow(m.abs(x) + 0.5, y),
        lambda m, x, y: m.reduce_prod(m.maximum(x, y), 0),
        lambda m, x, y: m.matmul(x, y, transpose_b=True),
    ],
)
def test_gradients_match_tensorflow(tf1, build):
    x, y = rand(3, 4, seed=31).astype(np.float64), rand(3, 4, seed=32).astype(np.float64)
    with tf1.Graph().as_default():
        a, b = tf1.constant(x), tf1.constant(y)
        with tf1.Session() as sess:
            expected = sess.run(tf1.gradients(build(tf1, a, b), [a, b]))
    with tf.Graph().as_default():
        a, b = tf.constant(x), tf.constant(y)
        got = run(tf.gradients(build(tf, a, b), [a, b]))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)
