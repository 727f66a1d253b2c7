"""Tests of ``tf.nn`` max and average pooling (real TensorFlow as the reference where marked)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.nn.helpers import oracle, to_nchw
from tests.ops.op_check import check_forward, check_gradient, rand

# ---- pooling ---------------------------------------------------------------------------------------
POOL_CASES = [
    # (input NHWC shape, ksize (h, w), strides (h, w), padding)
    ((2, 5, 7, 3), (3, 2), (2, 3), "SAME"),
    ((1, 6, 6, 2), (2, 2), (2, 2), "SAME"),
    ((1, 5, 5, 2), (3, 3), (1, 1), "SAME"),
    ((1, 7, 5, 1), (3, 2), (2, 2), "VALID"),
    ((1, 4, 5, 2), (2, 3), (3, 1), "SAME"),
]
POOLS = {"max": (tf.nn.max_pool, "max_pool"), "avg": (tf.nn.avg_pool, "avg_pool")}


def _pool_args(case, data_format):
    _, (kh, kw), (sh, sw), padding = case
    if data_format == "NCHW":
        return [1, 1, kh, kw], [1, 1, sh, sw], padding
    return [1, kh, kw, 1], [1, sh, sw, 1], padding


@pytest.mark.tf_oracle
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kind", sorted(POOLS))
@pytest.mark.parametrize("case", range(len(POOL_CASES)))
def test_pool_forward_matches_tensorflow(case, kind, data_format):
    spec = POOL_CASES[case]
    ours, tf_name = POOLS[kind]
    x = rand(*spec[0], seed=case + 30)
    ksize, strides, padding = _pool_args(spec, "NHWC")
    expected = oracle(lambda t, a: getattr(t.nn, tf_name)(a, ksize, strides, padding), x)
    ksize, strides, padding = _pool_args(spec, data_format)
    if data_format == "NCHW":
        x, expected = to_nchw(x), to_nchw(expected)
    check_forward(lambda a: ours(a, ksize, strides, padding, data_format=data_format), lambda a: expected, [x])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("kind", sorted(POOLS))
@pytest.mark.parametrize("case", [0, 2, 3, 4])
def test_pool_gradient(case, kind, data_format):
    spec = POOL_CASES[case]
    ours, _ = POOLS[kind]
    x = rand(*spec[0], seed=case + 30)[:1]
    ksize, strides, padding = _pool_args(spec, data_format)
    if data_format == "NCHW":
        x = to_nchw(x)
    build = lambda a: ours(a, ksize, strides, padding, data_format=data_format)  # noqa: E731
    check_gradient(build, [x])
    # The gradient ops (MaxPoolGrad, AvgPoolGrad) are differentiable as well.
    check_gradient(lambda a: tf.gradients(build(a) ** 2, a)[0], [x], rtol=1e-4, atol=1e-4)


def test_max_pool_on_integers_and_structure():
    x = np.arange(20, dtype=np.int32).reshape(1, 4, 5, 1)
    expected = np.array([[6, 8, 9], [16, 18, 19]], np.int32).reshape(1, 2, 3, 1)
    check_forward(lambda a: tf.nn.max_pool(a, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"), lambda a: expected, [x])
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 5, 7, 3])
        y = tf.nn.max_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
        assert y.shape.as_list() == [None, 3, 4, 3] and y.op.name == "MaxPool"
        assert tf.gradients(y, x)[0].op.type == "MaxPoolGrad"
        z = tf.nn.avg_pool(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID")
        assert z.shape.as_list() == [None, 2, 3, 3] and tf.gradients(z, x)[0].op.type == "AvgPoolGrad"
        assert tf.nn.max_pool2d(x, 2, 2, "VALID").shape.as_list() == [None, 2, 3, 3]
        assert tf.nn.avg_pool2d(x, 2, 2, "SAME").shape.as_list() == [None, 3, 4, 3]
        assert tf.nn.max_pool(input=x, ksize=2, strides=1, padding="SAME").shape.as_list() == [None, 5, 7, 3]


def test_pool_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 4, 4, 2])
        with pytest.raises(ValueError, match='not in: "SAME", "VALID", "EXPLICIT"'):
            tf.nn.max_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "FOO")
        with pytest.raises(ValueError, match="batch dimension"):
            tf.nn.avg_pool(x, [2, 2, 2, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="rank 4"):
            tf.nn.max_pool(tf.zeros([4, 4, 2]), [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.avg_pool(tf.zeros([1, 4, 4, 2], dtype=tf.int32), 2, 2, "SAME")
