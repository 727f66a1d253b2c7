"""Tests of ``tf.nn.conv2d`` and its gradient functions (real TensorFlow as the reference where marked)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.nn.helpers import oracle, to_nchw
from tests.ops.op_check import check_forward, check_gradient, rand

CONV_CASES = [
    # (input NHWC shape, filter shape, strides (h, w), padding, dilations (h, w))
    ((2, 5, 7, 3), (3, 2, 3, 4), (1, 1), "SAME", (1, 1)),
    ((1, 6, 6, 2), (2, 3, 2, 3), (2, 3), "SAME", (1, 1)),
    ((1, 7, 5, 2), (3, 3, 2, 2), (2, 2), "VALID", (1, 1)),
    ((1, 7, 6, 2), (2, 2, 2, 3), (1, 1), "SAME", (2, 3)),
    ((2, 4, 4, 1), (1, 1, 1, 2), (1, 1), "VALID", (1, 1)),
    ((1, 5, 6, 2), (3, 2, 2, 2), (2, 1), [[0, 0], [2, 0], [1, 3], [0, 0]], (1, 1)),
]


def _conv_args(case, data_format):
    _, _, (sh, sw), padding, (dh, dw) = case
    if data_format == "NCHW":
        if not isinstance(padding, str):
            padding = [padding[0], padding[3], padding[1], padding[2]]
        return [1, 1, sh, sw], padding, [1, 1, dh, dw]
    return [1, sh, sw, 1], padding, [1, dh, dw, 1]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv2d_forward_matches_tensorflow(case, data_format):
    spec = CONV_CASES[case]
    x, w = rand(*spec[0], seed=case), rand(*spec[1], seed=case + 50)
    strides, padding, dilations = _conv_args(spec, "NHWC")
    expected = oracle(lambda t, a, b: t.nn.conv2d(a, b, strides, padding, dilations=dilations), x, w)
    tf_strides, tf_padding, tf_dilations = _conv_args(spec, data_format)
    if data_format == "NCHW":
        x, expected = to_nchw(x), to_nchw(expected)

    def build(a, b):
        return tf.nn.conv2d(a, b, tf_strides, tf_padding, data_format=data_format, dilations=tf_dilations)

    check_forward(build, lambda a, b: expected, [x, w], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", [0, 1, 2, 3, 5])
def test_conv2d_gradient(case, data_format):
    spec = CONV_CASES[case]
    x, w = rand(*spec[0], seed=case), rand(*spec[1], seed=case + 50)
    x = x[:1]
    strides, padding, dilations = _conv_args(spec, data_format)
    if data_format == "NCHW":
        x = to_nchw(x)
    check_gradient(
        lambda a, b: tf.nn.conv2d(a, b, strides, padding, data_format=data_format, dilations=dilations),
        [x, w],
        rtol=1e-4,
        atol=1e-5,
    )


def test_conv2d_grouped_and_shapes():
    # A filter with fewer input channels than the input convolves channel groups separately.
    x, w = rand(1, 4, 4, 4, seed=20), rand(2, 2, 2, 6, seed=21)
    build = lambda a, b: tf.nn.conv2d(a, b, 1, "SAME")  # noqa: E731

    def reference(a, b):
        out = np.zeros((1, 4, 4, 6), np.float32)
        padded = np.pad(a, [(0, 0), (0, 1), (0, 1), (0, 0)])
        for g in range(2):
            for i in range(4):
                for j in range(4):
                    patch = padded[0, i : i + 2, j : j + 2, 2 * g : 2 * g + 2]
                    out[0, i, j, 3 * g : 3 * g + 3] = np.tensordot(patch, b[:, :, :, 3 * g : 3 * g + 3], 3)
        return out

    check_forward(build, reference, [x, w], rtol=1e-5, atol=1e-5)
    check_gradient(build, [x, w])
    with tf.Graph().as_default():
        y = tf.nn.conv2d(tf.placeholder(tf.float32, [None, 9, None, 3]), tf.zeros([3, 3, 3, 8]), [1, 2, 2, 1], "SAME")
        assert y.shape.as_list() == [None, 5, None, 8] and y.op.type == "Conv2D"
        dx, dw = tf.gradients(y, y.op.inputs)
        assert (dx.op.type, dw.op.type) == ("Conv2DBackpropInput", "Conv2DBackpropFilter")
        assert tf.nn.conv2d(
            tf.zeros([1, 3, 8, 8]), tf.zeros([3, 3, 3, 2]), 2, "VALID", data_format="NCHW"
        ).shape.as_list() == [1, 2, 3, 3]


def test_conv2d_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 3, 4, 2])
        with pytest.raises(ValueError, match=r"Depth of input \(2\) is not a multiple of input depth of filter \(3\)"):
            tf.nn.conv2d(x, tf.zeros([2, 2, 3, 1]), [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="strides in the batch and depth dimensions"):
            tf.nn.conv2d(x, tf.zeros([2, 2, 2, 1]), [2, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match='not in: "SAME", "VALID", "EXPLICIT"'):
            tf.nn.conv2d(x, tf.zeros([2, 2, 2, 1]), [1, 1, 1, 1], "FOO")
        with pytest.raises(ValueError, match="rank 4"):
            tf.nn.conv2d(tf.zeros([3, 4, 2]), tf.zeros([2, 2, 2, 1]), [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="output size would be negative"):
            tf.nn.conv2d(x, tf.zeros([5, 2, 2, 1]), [1, 1, 1, 1], "VALID")
        with pytest.raises(ValueError, match="strides should be of length"):
            tf.nn.conv2d(x, tf.zeros([2, 2, 2, 1]), [1, 1, 1], "SAME")
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.conv2d(tf.zeros([1, 3, 4, 2], dtype=tf.int32), tf.zeros([2, 2, 2, 1], dtype=tf.int32), 1, "SAME")


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", [0, 1, 2, 3, 5])
def test_conv2d_backprop_functions_match_tensorflow(case):
    spec = CONV_CASES[case]
    x, w = rand(*spec[0], seed=case), rand(*spec[1], seed=case + 50)
    strides, padding, dilations = _conv_args(spec, "NHWC")
    y_shape = oracle(lambda t, a, b: t.nn.conv2d(a, b, strides, padding, dilations=dilations), x, w).shape
    dy = rand(*y_shape, seed=case + 100)

    def tf_backprops(t, a, b, g):
        kwargs = {"strides": strides, "padding": padding, "dilations": dilations}
        return [
            t.nn.conv2d_backprop_input(list(x.shape), b, g, **kwargs),
            t.nn.conv2d_backprop_filter(a, list(w.shape), g, **kwargs),
        ]

    expected = oracle(tf_backprops, x, w, dy)

    def build(a, b, g):
        kwargs = {"strides": strides, "padding": padding, "dilations": dilations}
        return [
            tf.nn.conv2d_backprop_input(list(x.shape), b, g, **kwargs),
            tf.nn.conv2d_backprop_filter(a, list(w.shape), g, **kwargs),
        ]

    check_forward(build, lambda *_: expected, [x, w, dy], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv2d_backprop_ops_are_differentiable(data_format):
    spec = CONV_CASES[1]
    x, w = rand(1, 6, 6, 2, seed=22), rand(*spec[1], seed=23)
    strides, padding, dilations = _conv_args(spec, data_format)
    dy = rand(1, 3, 2, 3, seed=24)
    sizes = [1, 6, 6, 2]
    if data_format == "NCHW":
        x, dy, sizes = to_nchw(x), to_nchw(dy), [1, 2, 6, 6]
    kwargs = {"strides": strides, "padding": padding, "data_format": data_format}
    check_gradient(lambda b, g: tf.nn.conv2d_backprop_input(sizes, b, g, **kwargs), [w, dy])
    check_gradient(lambda a, g: tf.nn.conv2d_backprop_filter(a, list(w.shape), g, **kwargs), [x, dy])
    # Second derivatives of conv2d go through these ops.
    check_gradient(lambda a, b: tf.gradients(tf.nn.conv2d(a, b, **kwargs) ** 2, b)[0], [x, w], rtol=1e-4, atol=1e-4)


@pytest.mark.tf_oracle
def test_conv2d_transpose_matches_tensorflow():
    x, w = rand(1, 3, 4, 3, seed=25), rand(3, 3, 2, 3, seed=26)
    out_shape = [1, 6, 8, 2]
    expected = oracle(lambda t, a, b: t.nn.conv2d_transpose(a, b, out_shape, [1, 2, 2, 1], "SAME"), x, w)
    build = lambda a, b: tf.nn.conv2d_transpose(a, b, out_shape, [1, 2, 2, 1], "SAME")  # noqa: E731
    check_forward(build, lambda *_: expected, [x, w], rtol=1e-4, atol=1e-5)
    check_gradient(build, [x, w])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="input channels does not match"):
        tf.nn.conv2d_transpose(tf.zeros([1, 3, 4, 2]), tf.zeros([3, 3, 2, 3]), out_shape, [1, 2, 2, 1])
