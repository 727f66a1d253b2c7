"""Variable scatter ops (scatter_nd_update/add/sub, scatter_mul/div/max/min, batch_scatter_update) against real
TensorFlow's ref variables."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import real_tf

pytestmark = pytest.mark.tf_oracle

INIT = rand(4, 3, seed=5).astype(np.float32) + 3.0


def _run(m, update):
    """Applies ``update(m, variable)`` twice to a fresh ref variable and returns both results."""
    with m.Graph().as_default():
        v = m.Variable(INIT)
        op = update(m, v)
        with m.Session() as sess:
            sess.run(m.global_variables_initializer())
            first = sess.run(op)
            second = sess.run(op)
    return first, second


UPDATES = [
    ("scatter_nd_update", lambda m, v: m.scatter_nd_update(v, [[1, 2], [3, 0]], [7.0, 8.0])),
    ("scatter_nd_update_rows", lambda m, v: m.scatter_nd_update(v, [[2]], [[1.0, 2.0, 3.0]])),
    ("scatter_nd_add", lambda m, v: m.scatter_nd_add(v, [[0, 0], [0, 0], [3, 1]], [1.0, 2.0, 3.0])),
    ("scatter_nd_sub", lambda m, v: m.scatter_nd_sub(v, [[1]], [[1.0, 1.0, 1.0]], use_locking=True)),
    ("scatter_mul", lambda m, v: m.scatter_mul(v, [1, 3, 1], [[2.0] * 3, [0.5] * 3, [3.0] * 3])),
    ("scatter_div", lambda m, v: m.scatter_div(v, [0, 0], [[2.0] * 3, [4.0] * 3])),
    ("scatter_max", lambda m, v: m.scatter_max(v, [2], [[3.5, 0.0, 9.0]])),
    ("scatter_min", lambda m, v: m.scatter_min(v, [2, 0], [[3.5, 0.0, 9.0], [1.0, 9.0, 4.0]])),
    (
        "batch_scatter_update",
        lambda m, v: m.batch_scatter_update(v, [[0], [2], [1], [1]], [[1.0], [2.0], [3.0], [4.0]]),
    ),
]


@pytest.mark.parametrize("update", [u[1] for u in UPDATES], ids=[u[0] for u in UPDATES])
def test_variable_scatter_matches_tf(update):
    tf1 = real_tf()
    tf1.disable_resource_variables()
    try:
        expected = _run(tf1, update)
    finally:
        tf1.enable_resource_variables()
    got = _run(tf, update)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-6)


def test_errors():
    with tf.Graph().as_default():
        v = tf.Variable(INIT)
        with pytest.raises(TypeError, match="l-value"):
            tf.scatter_nd_update(tf.constant(INIT), [[0]], [[1.0, 2.0, 3.0]])
        with pytest.raises(ValueError):
            tf.scatter_nd_update(v, [[0]], [1.0, 2.0])
        bad = tf.scatter_nd_add(v, [[4, 0]], [1.0])
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="does not index"):
                sess.run(bad)


def test_integer_division_truncates_each_time():
    with tf.Graph().as_default():
        v = tf.Variable([-7, 9])
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(tf.scatter_div(v, [0, 0], [2, 2])), [-1, 9])
