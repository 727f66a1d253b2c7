"""Comparisons and logical ops: values against numpy, strings and bools, dtype errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.math.support import run
from tests.ops.op_check import check_forward, rand

COMPARE = [
    (tf.equal, np.equal),
    (tf.not_equal, np.not_equal),
    (tf.less, np.less),
    (tf.less_equal, np.less_equal),
    (tf.greater, np.greater),
    (tf.greater_equal, np.greater_equal),
]


@pytest.mark.parametrize("fn,ref", COMPARE, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
def test_comparisons(fn, ref, dtype):
    x = rand(3, 4, dtype=dtype, low=-3, high=3, seed=1)
    y = rand(4, dtype=dtype, low=-3, high=3, seed=2)
    check_forward(fn, ref, [x, y])


def test_equal_on_strings_and_bools():
    with tf.Graph().as_default():
        s = tf.equal(tf.constant([b"a", b"b"]), tf.constant([b"a", b"c"]))
        ns = tf.not_equal(tf.constant([b"a", b"b"]), b"a")
        b = tf.equal(tf.constant([True, False]), True)
        got = run([s, ns, b])
    np.testing.assert_array_equal(got[0], [True, False])
    np.testing.assert_array_equal(got[1], [False, True])
    np.testing.assert_array_equal(got[2], [True, False])


def test_ordering_rejects_bool():
    with tf.Graph().as_default(), pytest.raises(TypeError, match="DataType bool not in list"):
        tf.less(tf.constant([True]), tf.constant([False]))


LOGICAL = [
    (tf.logical_and, np.logical_and),
    (tf.logical_or, np.logical_or),
    (tf.logical_xor, np.logical_xor),
    (lambda a, b: a & b, np.logical_and),
    (lambda a, b: a | b, np.logical_or),
    (lambda a, b: a ^ b, np.logical_xor),
]


@pytest.mark.parametrize("fn,ref", LOGICAL)
def test_logical_binary(fn, ref):
    check_forward(fn, ref, [rand(3, 4, dtype=np.bool_, seed=1), rand(4, dtype=np.bool_, seed=2)])


def test_logical_not_and_invert():
    x = rand(2, 3, dtype=np.bool_)
    check_forward(tf.logical_not, np.logical_not, [x])
    check_forward(lambda a: ~a, np.logical_not, [x])


def test_logical_ops_need_bool():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Input 'x' of 'LogicalAnd' Op has type int32 that does not match"):
            tf.logical_and(tf.constant([1]), tf.constant([True]))
        with pytest.raises(TypeError, match="Input 'y' of 'LogicalOr' Op has type float32"):
            tf.logical_or(tf.constant([True]), tf.constant([1.0]))
