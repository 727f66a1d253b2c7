"""tf.range: values and dtypes, static lengths, tensor arguments, errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.math.support import run


@pytest.mark.parametrize(
    "args,kwargs,expected",
    [
        ((5,), {}, np.arange(5, dtype=np.int32)),
        ((2, 9, 3), {}, np.arange(2, 9, 3, dtype=np.int32)),
        ((5, 0, -2), {}, np.array([5, 3, 1], np.int32)),
        ((1, 2, 0.3), {}, np.array([1.0, 1.3, 1.6, 1.9], np.float32)),
        ((4,), {"dtype": tf.float64}, np.arange(4, dtype=np.float64)),
        ((0, 10, 4), {"dtype": tf.int64}, np.array([0, 4, 8], np.int64)),
        ((3, 3), {}, np.zeros(0, np.int32)),
    ],
)
def test_range(args, kwargs, expected):
    with tf.Graph().as_default():
        r = tf.range(*args, **kwargs)
        assert r.shape.as_list() == [len(expected)] and r.dtype == tf.as_dtype(expected.dtype)
        got = run(r)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_range_with_tensor_arguments():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        r = tf.range(n)
        assert r.op.name == "range" and r.shape.as_list() == [None]
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(r, {n: 4}), [0, 1, 2, 3])
            with pytest.raises(errors.InvalidArgumentError, match="Requires start <= limit when delta > 0: 0/-1"):
                sess.run(r, {n: -1})
        mixed = tf.range(tf.constant(1, tf.int64), 4.0)
        assert mixed.dtype == tf.float32


def test_range_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Requires delta != 0"):
            tf.range(0, 5, 0)
        with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/0"):
            tf.range(5, 0)
        with pytest.raises(ValueError, match="Requires start >= limit when delta < 0: 0/5"):
            tf.range(0, 5, -1)
