"""Arithmetic on complex tensors against real TF: ``add``, ``subtract``, ``multiply``, ``negative``, ``matmul``
(every transpose), ``abs`` (``ComplexAbs``), ``conj``, ``real``/``imag``, ``reduce_sum``, ``equal`` and
``transpose(conjugate=True)``/``linalg.adjoint``: values and gradients of a real loss (TF's convention,
``dL/d re(z) + i dL/d im(z)``)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    return real.compat.v1


def _complex(rng: np.random.RandomState, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)


CASES = {
    "add": lambda m, x, y: m.add(x, y),
    "add_broadcast": lambda m, x, y: x + y[0],
    "subtract": lambda m, x, y: m.subtract(x, y),
    "multiply": lambda m, x, y: m.multiply(x, y),
    "multiply_broadcast": lambda m, x, y: x * y[:, :1],
    "negative": lambda m, x, y: -x,
    "matmul": lambda m, x, y: m.matmul(x, y),
    "matmul_ta": lambda m, x, y: m.matmul(x, y, transpose_a=True),
    "matmul_tb": lambda m, x, y: m.matmul(x, y, transpose_b=True),
    "matmul_adjoint": lambda m, x, y: m.matmul(x, y, adjoint_a=True, adjoint_b=True),
    "abs": lambda m, x, y: m.abs(x) * m.real(y),
    "conj": lambda m, x, y: m.conj(x) * y,
    "real_imag": lambda m, x, y: m.complex(m.real(x) * m.imag(y), m.imag(x)),
    "reduce_sum": lambda m, x, y: m.reduce_sum(x * y, axis=1),
    "transpose_conjugate": lambda m, x, y: m.matmul(m.transpose(x, conjugate=True), y),
    "adjoint": lambda m, x, y: m.linalg.adjoint(x) * y,
}


def _run(m, case, x_value, y_value):
    with m.Graph().as_default():
        x, y = m.constant(x_value), m.constant(y_value)
        out = CASES[case](m, x, y)
        # A real loss: the squared magnitude (or the value itself when real).
        loss = m.reduce_sum(m.square(m.abs(out))) if out.dtype.is_complex else m.reduce_sum(m.square(out))
        grads = m.gradients(loss, [x, y])
        with m.Session() as sess:
            return sess.run([out, [g for g in grads if g is not None]])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("case", sorted(CASES))
def test_complex_arithmetic_matches_tensorflow(tf1, case, dtype):
    rng = np.random.RandomState(7)
    x_value, y_value = _complex(rng, (3, 3), dtype), _complex(rng, (3, 3), dtype)
    expected, got = _run(tf1, case, x_value, y_value), _run(tf, case, x_value, y_value)
    tol = 1e-4 if dtype == np.complex64 else 1e-10
    assert got[0].dtype == expected[0].dtype
    np.testing.assert_allclose(got[0], expected[0], rtol=tol, atol=tol)
    assert len(got[1]) == len(expected[1])
    for g, e in zip(got[1], expected[1]):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def test_equal_and_errors(tf1):
    values = np.array([1 + 1j, 2 - 1j], np.complex64)
    for m in (tf1, tf):
        with m.Graph().as_default(), m.Session() as sess:
            x = m.constant(values)
            same = sess.run([m.equal(x, m.conj(m.conj(x))), m.not_equal(x, m.conj(x))])
        np.testing.assert_array_equal(same, [[True, True], [True, True]])
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="complex64"):
            tf.exp(tf.constant(values))  # what is not offered on complex tensors says so when built
