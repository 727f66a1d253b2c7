"""Inputs and helpers shared by the array-op tests."""

from __future__ import annotations

import numpy as np

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand

X234 = rand(2, 3, 4)
X34 = rand(3, 4, seed=1)
STRINGS = np.array([[b"a", b"bb", b"c"], [b"dd", b"e", b"ff"]], dtype=object)


def run(t, feed=None):
    """Runs ``t`` in a new session of the default graph."""
    with tf.Session() as sess:
        return sess.run(t, feed)


def unknown(value, dtype=tf.float32):
    """``value`` as a tensor whose shape is unknown while building (so checks happen at run time)."""
    return tf.placeholder_with_default(np.asarray(value, dtype=dtype.as_numpy_dtype), None)
