"""Helpers the math op tests share (the checks themselves are in :mod:`tests.ops.op_check`)."""

from __future__ import annotations

import numpy as np

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand


def hide_shape(t: tf.Tensor) -> tf.Tensor:
    """``t`` with an unknown static shape of the same rank, so shape-dependent code takes its runtime path."""
    return tf.placeholder_with_default(t, [None] * t.shape.ndims)


def positive(*shape: int, seed: int = 0) -> np.ndarray:
    return rand(*shape, low=0.5, high=2.0, seed=seed)


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)
