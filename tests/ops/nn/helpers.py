"""What the ``tf.nn`` tests share: numpy references, fixed inputs, and real TensorFlow as an oracle."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.op_check import rand

# Inputs kept away from the kinks at 0 (and 6) so that finite differences are meaningful.
KINKED = np.array([[-2.5, -0.7, 0.4, 1.3], [3.1, -1.9, 6.8, 5.2], [-0.3, 0.9, 7.5, -4.0]], dtype=np.float32)


def softmax_ref(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax_ref(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def probabilities(*shape: int, seed: int = 0) -> np.ndarray:
    p = rand(*shape, low=0.05, high=1.0, seed=seed)
    return (p / p.sum(-1, keepdims=True)).astype(np.float32)


def tf1():
    tf_real = pytest.importorskip("tensorflow")
    return tf_real.compat.v1


def oracle(build_tf, *inputs):
    """Evaluates ``build_tf(tf1, *constants)`` with real TensorFlow (NCHW cases are transposed to NHWC there)."""
    t = tf1()
    with t.Graph().as_default(), t.Session() as sess:
        return sess.run(build_tf(t, *[t.constant(x) for x in inputs]))


def to_nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def to_nchw(x):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
