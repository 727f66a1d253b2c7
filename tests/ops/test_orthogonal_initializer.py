"""``tf.orthogonal_initializer`` (``tf.initializers.orthogonal``, ``tf.keras.initializers.Orthogonal``): TF's
algorithm on the same normal draw, orthogonality, gain, seeds, names and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

SHAPES = [[3, 3], [4, 2], [2, 5], [2, 3, 4], [3, 2, 2, 6]]


def _tf_algorithm(normal: np.ndarray, shape: list[int], gain: float) -> np.ndarray:
    """TF 1.15's init_ops.Orthogonal on a given normal matrix, in numpy."""
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    q, r = np.linalg.qr(normal)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return gain * q.reshape(shape)


@pytest.mark.parametrize("shape", SHAPES)
def test_orthogonal_follows_tf_algorithm_on_its_normal_draw(shape):
    rows, cols = int(np.prod(shape[:-1])), shape[-1]
    flat = (cols, rows) if rows < cols else (rows, cols)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        value = tf.orthogonal_initializer(gain=1.5, seed=7)(shape)
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        normal = tf.random_normal(flat, seed=7)  # the same graph and op seeds: the initializer's draw
        with tf.Session() as sess:
            drawn = sess.run(normal)
    with value.graph.as_default(), tf.Session() as sess:
        got = sess.run(value)
    np.testing.assert_allclose(got, _tf_algorithm(drawn, shape, 1.5), atol=1e-5)
    flat_q = got.reshape(-1, cols) / 1.5
    gram = flat_q.T @ flat_q if rows >= cols else flat_q @ flat_q.T
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-5)


def test_orthogonal_names_seeds_and_errors():
    with tf.Graph().as_default():
        w = tf.get_variable("w", [4, 4], initializer=tf.initializers.orthogonal(seed=1))
        k = tf.get_variable("k", [4, 4], initializer=tf.keras.initializers.Orthogonal(seed=1))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([w, k])
    np.testing.assert_allclose(a, b)  # the same seed draws the same matrix
    assert tf.keras.initializers.get("orthogonal").__class__ is tf.keras.initializers.Orthogonal
    assert tf.orthogonal_initializer(gain=2.0, seed=3).get_config() == {"gain": 2.0, "seed": 3, "dtype": "float32"}
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="at least two-dimensional"):
            tf.orthogonal_initializer()([3])
    with pytest.raises(ValueError, match="floating point"):
        tf.orthogonal_initializer(dtype=tf.int32)


@pytest.mark.tf_oracle
def test_orthogonal_qr_matches_tf():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    a = np.random.RandomState(0).randn(6, 4).astype(np.float32)
    out = []
    for m in (tf1, tf):
        with m.Graph().as_default(), m.Session() as sess:
            q, r = m.linalg.qr(m.constant(a))
            out.append(sess.run(q * m.sign(m.diag_part(r))))
    np.testing.assert_allclose(out[1], out[0], atol=1e-5)
