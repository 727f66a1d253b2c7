"""Casts: values, truncation, IndexedSlices, the to_* shorthands, saturate_cast and the gradient."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.math.support import run
from tests.ops.op_check import check_forward, check_gradient, rand


@pytest.mark.parametrize(
    "src,dst",
    [
        (np.float32, np.int32),
        (np.float32, np.float64),
        (np.int32, np.float32),
        (np.float64, np.float16),
        (np.int64, np.int32),
        (np.float32, np.bool_),
        (np.bool_, np.float32),
        (np.int32, np.uint8),
    ],
)
def test_cast(src, dst):
    x = rand(2, 5, low=-3, high=3).astype(src)
    check_forward(lambda t: tf.cast(t, tf.as_dtype(dst)), lambda a: a.astype(dst), [x])


def test_cast_truncates_toward_zero_and_keeps_same_dtype_tensor():
    check_forward(
        lambda t: tf.cast(t, tf.int32),
        lambda a: np.trunc(a).astype(np.int32),
        [np.array([1.7, -1.7, 2.0, -0.2], np.float32)],
    )
    with tf.Graph().as_default():
        x = tf.constant([1.0])
        assert tf.cast(x, tf.float32) is x
        assert tf.cast(x, tf.int64).op.type == "Cast"
        with pytest.raises(TypeError, match="Cast string to int32 is not supported"):
            tf.cast(tf.constant([b"1"]), tf.int32)


def test_cast_helpers():
    with tf.Graph().as_default():
        i = tf.constant([1, 2])
        f = tf.constant([1.5, -2.5])
        as_float = tf.to_float(i)
        assert as_float.dtype == tf.float32 and as_float.op.name == "ToFloat"
        assert tf.to_double(i).dtype == tf.float64
        assert tf.to_int64(i).dtype == tf.int64
        assert run(tf.to_int32(f)).tolist() == [1, -2]


def test_cast_indexed_slices_keeps_indices():
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.constant([[1.5]]), tf.constant([0]), tf.constant([2, 1]))
        c = tf.cast(s, tf.float64)
        assert isinstance(c, tf.IndexedSlices) and c.dtype == tf.float64 and c.indices is s.indices


def test_saturate_cast():
    check_forward(
        lambda t: tf.saturate_cast(t, tf.uint8),
        lambda a: np.clip(a, 0, 255).astype(np.uint8),
        [np.array([-1.7, 1.7, 300.0, 255.0], np.float32)],
    )
    check_forward(
        lambda t: tf.saturate_cast(t, tf.int8),
        lambda a: np.clip(a, -128, 127).astype(np.int8),
        [np.array([-1000, 5, 1000], np.int32)],
    )


def test_cast_gradient():
    check_gradient(
        lambda x: tf.cast(tf.cast(x, tf.float32) * 2.0, tf.float64), [rand(2, 3)], delta=1e-2, rtol=1e-3, atol=1e-3
    )
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]
