"""Complex tensors and the Fourier transforms against real TensorFlow: values, dtypes, static shapes, gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.sparse.support import same, same_error, same_gradients

pytestmark = pytest.mark.tf_oracle

RE = np.array([[1.0, -2.0, 0.5, 3.0], [0.25, 4.0, -1.0, 2.0]])
IM = np.array([[0.5, 1.0, -3.0, 0.0], [2.0, -0.5, 1.5, 1.0]])


def z(m, dtype="float32"):
    return m.complex(m.constant(RE, getattr(m, dtype)), m.constant(IM, getattr(m, dtype)))


# ---- complex parts -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_parts(dtype):
    same(lambda m: [z(m, dtype), m.real(z(m, dtype)), m.imag(z(m, dtype)), m.conj(z(m, dtype)), m.angle(z(m, dtype))])
    same(lambda m: [m.to_complex64(m.constant(RE)), m.to_complex128(m.constant([1, 2]))])
    if dtype == "float32":
        same(lambda m: m.complex(m.constant(RE, m.float32), 2.0))
    else:
        assert same_error(lambda m: m.complex(m.constant(RE, m.float64), 2.0)) == "TypeError"
    same(lambda m: m.cast(z(m, dtype), m.float32))


def test_complex_errors():
    assert same_error(lambda m: m.complex(m.constant([1.0]), m.constant([1.0], m.float64))) == "TypeError"
    assert same_error(lambda m: m.complex(m.constant([1]), m.constant([1]))) == "TypeError"


def test_complex_gradients():
    def build(m, a, b):
        c = m.complex(a, b)
        return [m.real(c) * 2.0 + m.imag(c) * 3.0, m.angle(c), m.imag(m.conj(c))]

    same_gradients(build, [RE, IM])
    same_gradients(lambda m, a, b: m.real(m.complex(a, b[0])), [RE, IM])  # broadcast parts
    same_gradients(lambda m, a: m.cast(m.cast(a, m.complex128), m.float64) * 2.0, [RE])
    same_gradients(lambda m, a: m.imag(m.to_complex128(a)) + m.real(m.to_complex128(a)) * 3.0, [RE])


# ---- transforms --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["fft", "ifft", "fft2d", "ifft2d"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_complex_transforms(fn, dtype):
    same(lambda m: getattr(m, fn)(z(m, dtype)), rtol=1e-5, atol=1e-5)
    same(lambda m: getattr(m.signal, fn)(z(m, dtype)), rtol=1e-5, atol=1e-5)
    same(lambda m: getattr(m.spectral, fn)(z(m, dtype)), rtol=1e-5, atol=1e-5)


def test_fft3d():
    cube = np.arange(24.0).reshape(2, 3, 4)

    def c(m):
        return m.complex(m.constant(cube), m.constant(cube[::-1].copy()))

    same(lambda m: [m.fft3d(c(m)), m.ifft3d(c(m))], rtol=1e-5, atol=1e-4)


def test_nd_transforms_against_numpy():
    """TF 2.21 has no CPU kernels for FFTND & co, so numpy is the oracle here."""
    import dtf_notebook.compat.v1 as tf

    cube = np.random.default_rng(4).normal(size=(2, 3, 4))
    zc = cube + 1j * cube[::-1]
    with tf.Graph().as_default(), tf.Session() as sess:
        c = tf.constant(zc.astype(np.complex64))
        out = [
            tf.fftnd(c, [4, 3], [0, 2]),
            tf.ifftnd(c, [2, 2], [1, 2]),
            tf.rfftnd(tf.constant(cube, tf.float32), [2, 6], [0, 2]),
            tf.irfftnd(c, [3, 4], [1, 2]),
        ]
        assert [t.shape.as_list() for t in out] == [[4, 3, 3], [2, 2, 2], [2, 3, 4], [2, 3, 4]]
        got = sess.run(out)
    expected = [
        np.fft.fftn(zc, [4, 3], [0, 2]),
        np.fft.ifftn(zc, [2, 2], [1, 2]),
        np.fft.rfftn(cube, [2, 6], [0, 2]),
        np.fft.irfftn(zc, [3, 4], [1, 2]),
    ]
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
    assert [a.dtype for a in got] == [np.complex64, np.complex64, np.complex64, np.float32]


@pytest.mark.parametrize(
    "fn,lengths", [("rfft", None), ("rfft", [6]), ("rfft", [3]), ("rfft2d", None), ("rfft2d", [3, 2]), ("rfft3d", None)]
)
def test_real_transforms(fn, lengths):
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    same(lambda m: getattr(m.signal, fn)(x, lengths), rtol=1e-5, atol=1e-5)
    inverse = "i" + fn
    same(lambda m: getattr(m.signal, inverse)(getattr(m.signal, fn)(x, lengths), lengths), rtol=1e-5, atol=1e-5)


def test_real_transform_unknown_shape():
    same(
        lambda m: m.signal.rfft(m.placeholder_with_default(np.ones((2, 5), np.float32), [None, None])),
        static=True,
    )


def test_transform_gradients():
    x = np.random.default_rng(2).normal(size=(2, 4))

    def magnitude(m, c):
        return m.real(c) * 0.5 + m.imag(c) * 0.25

    same_gradients(lambda m, a, b: magnitude(m, m.fft(m.complex(a, b))), [RE, IM])
    same_gradients(lambda m, a, b: magnitude(m, m.ifft2d(m.complex(a, b))), [RE, IM])
    same_gradients(lambda m, a: magnitude(m, m.signal.rfft(a)), [x])
    same_gradients(lambda m, a: magnitude(m, m.signal.rfft(a, [6])), [x])
    same_gradients(lambda m, a: magnitude(m, m.signal.rfft2d(a)), [x])
    same_gradients(lambda m, a, b: m.signal.irfft(m.complex(a, b)) * 2.0, [RE[:, :3], IM[:, :3]])
    same_gradients(lambda m, a, b: m.signal.irfft2d(m.complex(a, b), [2, 4]), [RE[:, :3], IM[:, :3]])


def test_shifts_and_windows():
    same(lambda m: [m.signal.fftshift(np.arange(10)), m.signal.ifftshift(np.arange(9).reshape(3, 3))])
    same(lambda m: m.signal.fftshift(np.arange(12).reshape(3, 4), axes=1))
    for periodic in (True, False):
        same(lambda m, p=periodic: [m.signal.hann_window(7, p), m.signal.hamming_window(8, p, dtype=m.float64)])
    same(lambda m: m.signal.hann_window(1))
    same(lambda m: m.signal.hann_window(m.placeholder_with_default(5, [])), rtol=1e-6)
