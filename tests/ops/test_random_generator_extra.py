"""``tf.random.Generator`` in TF1 graph mode against real TensorFlow: the same seed, the same draws, run after run."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.oracle import real_tf

pytestmark = pytest.mark.tf_oracle


def _draws(m, build, runs=3):
    """Each fetch in its own ``sess.run``, in order: draws of one generator within a run have no order of their own
    (in TF neither), so each run reads the state the previous one left."""
    with m.Graph().as_default():
        fetches = build(m)
        with m.Session() as sess:
            sess.run(m.global_variables_initializer())
            return [[sess.run(f) for f in fetches] for _ in range(runs)]


def _compare(build, runs=3, rtol=2e-6):
    expected, got = _draws(real_tf(), build, runs), _draws(tf, build, runs)
    for e_run, g_run in zip(expected, got):
        for e, g in zip(e_run, g_run):
            e, g = np.asarray(e), np.asarray(g)
            assert g.dtype == e.dtype and g.shape == e.shape
            if e.dtype.kind == "f":
                np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-6)
            else:
                np.testing.assert_array_equal(g, e)


def test_draws_and_state_follow_tf():
    def build(m):
        g = m.random.Generator.from_seed(1234)
        return [
            g.normal([3, 2], mean=1.0, stddev=2.0),
            g.uniform([5]),
            g.uniform([4], minval=-3, maxval=9, dtype=m.int32),
            g.uniform([2], minval=None, maxval=None, dtype=m.int64),
            g.truncated_normal([6], dtype=m.float64),
            g.uniform_full_int([3], dtype=m.int32),
            g.state.value() if hasattr(g.state, "value") else g.state,
        ]

    _compare(build)


def test_key_counter_state_skip_and_reset():
    def build(m):
        g = m.random.Generator.from_key_counter(key=7, counter=[2**40, 3], alg="philox")
        h = m.random.Generator.from_state([5, 0, 11], alg=1)
        with m.control_dependencies([g.skip(10)]):
            x = g.normal([4])
        return [x, h.uniform([3], dtype=m.float64), g.key, g.make_seeds(3)]

    _compare(build)
    # TF1 graph mode's reset_* build an assignment and return None; here the assignment is returned.
    with tf.Graph().as_default():
        g = tf.random.Generator.from_seed(5)
        x = g.normal([2])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(x)
            assert (sess.run(x) != first).all()
            sess.run(g.reset_from_seed(5))
            np.testing.assert_array_equal(sess.run(x), first)
            sess.run(g.reset_from_key_counter(0, [5, 0]))
            np.testing.assert_array_equal(sess.run(g.state), [5, 0, 0])


def test_binomial_follows_tf():
    def build(m):
        g = m.random.Generator.from_seed(234)
        return [
            # A draw first: TF's binomial does not advance a freshly initialised state (see the module docstring).
            g.normal([2]),
            g.binomial([5, 2], counts=[10.0, 20.0], probs=[0.8]),
            g.binomial([3, 3, 2], counts=[[10.0], [30.0], [200.0]], probs=[0.3, 0.6]),
            g.binomial([7], counts=5.0, probs=0.5, dtype=m.float32),
            g.state.value() if hasattr(g.state, "value") else g.state,
        ]

    _compare(build)


def test_split_generators_are_independent_and_repeatable():
    """TF 2.21's split fails in graph mode (NotImplementedError making its variables); here it works."""

    def build(m):
        g = m.random.Generator.from_seed(9)
        a, b = g.split(2)
        return [a.normal([3]), b.normal([3])]

    first, again = _draws(tf, build, runs=1), _draws(tf, build, runs=1)
    np.testing.assert_array_equal(first[0][0], again[0][0])
    assert (first[0][0] != first[0][1]).all()


def test_global_generator_and_signatures():
    tf1 = real_tf()
    tf.random.set_global_generator(None)
    try:
        with tf.Graph().as_default():
            g = tf.random.get_global_generator()
            assert tf.random.get_global_generator() is g
            x = g.normal([1000])
            with tf.Session() as sess:
                sess.run(g.state.initializer)
                v = sess.run(x)
        assert abs(v.mean()) < 0.15 and abs(v.std() - 1) < 0.1
        with tf.Graph().as_default():
            mine = tf.random.Generator.from_seed(3)
            tf.random.set_global_generator(mine)
            assert tf.random.get_global_generator() is mine
    finally:
        tf.random.set_global_generator(None)
    for name in ["normal", "uniform", "truncated_normal", "binomial", "make_seeds", "split", "skip", "reset"]:
        theirs = list(inspect.signature(getattr(tf1.random.Generator, name)).parameters)
        assert list(inspect.signature(getattr(tf.random.Generator, name)).parameters) == theirs, name
    with pytest.raises(ValueError, match="threefry"):
        tf.random.Generator.from_seed(1, alg="threefry")
