"""``tf.random``'s stateless ops, gamma and Poisson against real TensorFlow: the same seeds give TF's values."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.oracle import real_tf

pytestmark = pytest.mark.tf_oracle


def _tf_run(build):
    tf1 = real_tf()
    with tf1.Graph().as_default(), tf1.Session() as sess:
        return sess.run(build(tf1))


def _run(build, runs=1):
    with tf.Graph().as_default():
        fetch = build(tf)
        with tf.Session() as sess:
            values = [sess.run(fetch) for _ in range(runs)]
    return values[0] if runs == 1 else values


def _same(build, exact=True, rtol=2e-6):
    expected, got = _tf_run(build), _run(build)
    for e, g in zip(expected if isinstance(expected, list) else [expected], got if isinstance(got, list) else [got]):
        assert g.dtype == e.dtype and g.shape == e.shape
        if exact:
            np.testing.assert_array_equal(g, e)
        else:
            np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=1e-6)
    return got


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_stateless_uniform_is_tfs_bit_for_bit(dtype):
    _same(lambda m: m.random.stateless_uniform([5, 7], seed=[1, 2], minval=-2, maxval=3, dtype=dtype))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("fn", ["stateless_normal", "stateless_truncated_normal"])
def test_stateless_normals_match_tf(fn, dtype):
    # Box-Muller's log/sin/cos may differ from TF's libm in the last bit.
    rtol = {"float16": 1e-3, "bfloat16": 1e-2}.get(dtype, 2e-6)
    _same(lambda m: getattr(m.random, fn)([9, 11], seed=[-3, 2**40], mean=1.0, stddev=2.0, dtype=dtype), False, rtol)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_stateless_integers_split_fold_in(dtype):
    lo, hi = (-(2**31), 2**31 - 1) if dtype == "int32" else (-(2**63), 2**63 - 1)
    _same(
        lambda m: [
            m.random.stateless_uniform([6, 5], [4, 5], minval=-20, maxval=3000, dtype=dtype),
            m.random.stateless_uniform([9], [4, 5], minval=lo, maxval=hi, dtype=dtype),
            m.random.stateless_uniform([4, 3], [4, 5], minval=None, maxval=None, dtype=dtype),
            m.random.split(m.constant([1, 2], dtype), 3),
            m.random.fold_in(m.constant([1, 2], dtype), m.constant(3, dtype)),
        ]
    )


def test_create_rng_state():
    _same(lambda m: [m.random.create_rng_state(1234, "philox"), m.random.create_rng_state([12, 34], "threefry")])
    _same(lambda m: [m.random.create_rng_state(2**70 + 5, 1), m.random.create_rng_state(m.constant([7, 8]), 3)])


def test_stateless_categorical_and_multinomial():
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25], [1.0, 1.0, 1e-30]]))
    _same(
        lambda m: [
            m.random.stateless_categorical(logits, 9, [7, 17]),
            m.random.stateless_multinomial(logits.astype(np.float32), 5, [7, 17], output_dtype=m.int32),
            m.random.stateless_categorical([[0.0, -np.inf, 1.0]], 6, [1, 1], dtype=m.int32),
        ]
    )


@pytest.mark.parametrize("rate_dtype", ["float16", "float32", "float64", "int32"])
def test_stateless_poisson_is_tfs(rate_dtype):
    lam = np.array([0.5, 3.0, 9.9, 10.0, 15.0, 250.0]).astype(rate_dtype)
    _same(
        lambda m: [
            m.random.stateless_poisson([40, 6], [12, 34], lam=lam),
            m.random.stateless_poisson([3, 2, 6], [5, 6], lam=lam, dtype=m.float32),
        ]
    )


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_stateless_gamma_is_tfs(dtype):
    alpha = np.array([0.1, 0.5, 1.0, 1.5, 4.0, 30.0], dtype)
    _same(lambda m: m.random.stateless_gamma([40, 6], [12, 34], alpha=alpha, dtype=dtype), False, 1e-6)


def test_stateless_gamma_gradients_match_tf():
    def build(m):
        alpha = m.constant([[1.0], [3.0], [0.5]], m.float64)
        beta = m.constant([[3.0, 4.0]], m.float64)
        s = m.random.stateless_gamma([30, 3, 2], seed=[12, 34], alpha=alpha, beta=beta, dtype=m.float64)
        return [s, *m.gradients(m.reduce_mean(m.square(s)), [alpha, beta])]

    _same(build, exact=False, rtol=1e-7)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_stateless_binomial_is_tfs(dtype):
    counts = np.array([0.0, 5.0, 10.0, 20.0, 100.0, 1000.0, 40.0, 7.0], dtype)
    probs = np.array([0.3, 0.0, 0.8, 0.5, 0.05, 0.3, 0.9, 1.0], dtype)
    _same(
        lambda m: [
            m.random.stateless_binomial([30, 8], [123, 456], counts=counts, probs=probs),
            m.random.stateless_binomial([5, 3, 2], [1, 2], counts=[[10.0], [20.0], [50.0]], probs=[0.2, 0.7]),
            m.random.stateless_binomial([4], [1, 2], counts=30.0, probs=0.4, output_dtype=m.float64),
        ]
    )


def test_stateless_ops_are_deterministic_and_named_like_tf():
    with tf.Graph().as_default():
        u = tf.random.stateless_uniform([3], seed=[1, 2], name="u")
        n = tf.random.stateless_normal([3], seed=tf.constant([1, 2], tf.int64))
        with tf.Session() as sess:
            first = sess.run([u, n])
            again = sess.run([u, n])
        with tf.Session() as sess:
            other = sess.run([u, n])
    assert u.name == "u:0" and n.name == "stateless_random_normal:0"
    for a, b, c in zip(first, again, other):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)


def test_stateless_errors_like_tf():
    with pytest.raises(ValueError, match="Dimension must be 2 but is 3"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(TypeError, match="int32, int64"):
        tf.random.stateless_uniform([2], seed=[1.0, 2.0])
    with pytest.raises(ValueError, match="minval.*must be a scalar"):
        tf.random.stateless_uniform([2], [1, 2], minval=[0, 1], maxval=5, dtype=tf.int32)
    with pytest.raises(ValueError, match="threefry"):
        tf.random.stateless_normal([2], [1, 2], alg="threefry")
    bad = tf.random.stateless_uniform([2], [1, 2], minval=5, maxval=5, dtype=tf.int32)
    shape_error = tf.random.stateless_gamma(tf.constant([3, 2]), [1, 2], alpha=[1.0, 2.0, 3.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
            sess.run(bad)
        with pytest.raises(tf.errors.InvalidArgumentError, match="must end with broadcasted shape"):
            sess.run(shape_error)


def test_parameterized_truncated_normal_bounds_moments_determinism():
    from scipy import stats

    means, stddevs = np.array([0.0, 5.0, -1.0]), np.array([1.0, 2.0, 0.5])
    lows, highs = np.array([-1.0, 5.0, -np.inf]), np.array([1.0, 9.0, -0.2])
    with tf.Graph().as_default():
        y = tf.random.stateless_parameterized_truncated_normal(
            [20000, 3], seed=[7, 17], means=means, stddevs=stddevs, minvals=lows, maxvals=highs
        )
        with tf.Session() as sess:
            a, b = sess.run(y), sess.run(y)
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float64 and (a >= lows).all() and (a <= highs).all()
    dist = stats.truncnorm((lows - means) / stddevs, (highs - means) / stddevs, loc=means, scale=stddevs)
    np.testing.assert_allclose(a.mean(0), dist.mean(), atol=0.02)
    np.testing.assert_allclose(a.std(0), dist.std(), rtol=0.03)
    for col in range(3):
        column = stats.truncnorm(dist.a[col], dist.b[col], loc=means[col], scale=stddevs[col])
        assert stats.kstest(a[:, col], column.cdf).pvalue > 1e-3
    with tf.Graph().as_default():
        invalid = tf.random.stateless_parameterized_truncated_normal([2], [1, 2], stddevs=-1.0)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="Invalid parameters"):
            sess.run(invalid)


def test_random_gamma_and_poisson_seeded_stateful():
    def build(m):
        g = m.random_gamma([4000], [0.3, 2.0, 9.0], beta=[1.0, 2.0, 0.5], seed=7)
        p = m.random_poisson([0.5, 12.0, 300.0], [4000], dtype=m.int32, seed=1)
        return g, p

    (g1, p1), (g2, p2) = _run(build, runs=2)
    g3, p3 = _run(build)
    np.testing.assert_array_equal(g1, g3)  # a new session of a seeded graph repeats its sequence
    np.testing.assert_array_equal(p1, p3)
    assert (g1 != g2).any() and (p1 != p2).any()  # successive runs continue it
    expected = _tf_run(build)
    assert g1.shape == expected[0].shape and p1.dtype == expected[1].dtype and p1.shape == expected[1].shape
    np.testing.assert_allclose(g1.mean(0), [0.3, 1.0, 18.0], rtol=0.06)
    np.testing.assert_allclose(g1.var(0), [0.3, 0.5, 36.0], rtol=0.15)
    np.testing.assert_allclose(p1.mean(0), [0.5, 12.0, 300.0], rtol=0.05)
    assert (g1 > 0).all() and g1.dtype == np.float32


def test_random_gamma_gradient_matches_tf_formula():
    # The samples differ from TF's (a stateful op), so TF's gradient is evaluated at our samples through
    # TF's RandomGammaGrad kernel.
    with tf.Graph().as_default():
        alpha = tf.constant([0.5, 2.0, 7.0], tf.float64)
        s = tf.random_gamma([50], alpha, seed=3, dtype=tf.float64)
        (grad,) = tf.gradients(tf.reduce_sum(s), [alpha])
        with tf.Session() as sess:
            samples, got = sess.run([s, grad])
    tf1 = real_tf()
    from tensorflow.python.ops import gen_random_ops

    with tf1.Graph().as_default(), tf1.Session() as sess:
        partial = sess.run(gen_random_ops.random_gamma_grad(np.array([0.5, 2.0, 7.0])[None, :], samples))
    np.testing.assert_allclose(got, partial.sum(0), rtol=1e-6)


def test_random_signatures_match_tf():
    import inspect

    tf1 = real_tf()
    for name in ["gamma", "poisson", "stateless_uniform", "stateless_normal", "stateless_truncated_normal"] + [
        "stateless_categorical",
        "stateless_multinomial",
        "stateless_gamma",
        "stateless_poisson",
        "stateless_binomial",
        "stateless_parameterized_truncated_normal",
        "split",
        "fold_in",
        "create_rng_state",
    ]:
        theirs = list(inspect.signature(getattr(tf1.random, name)).parameters)
        assert list(inspect.signature(getattr(tf.random, name)).parameters) == theirs, name
    assert list(inspect.signature(tf.random_poisson).parameters) == list(
        inspect.signature(tf1.random_poisson).parameters
    )
    assert [a.value for a in tf.random.Algorithm] == [a.value for a in tf1.random.Algorithm]
