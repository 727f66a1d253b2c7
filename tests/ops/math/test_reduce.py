"""Reductions and arg-reductions: values against numpy, TF1 argument names, static shapes, errors, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.math.support import hide_shape, run
from tests.ops.op_check import check_forward, check_gradient, rand

REDUCTIONS = [
    (tf.reduce_sum, np.sum),
    (tf.reduce_mean, np.mean),
    (tf.reduce_max, np.max),
    (tf.reduce_min, np.min),
    (tf.reduce_prod, np.prod),
]
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], [], (1,)]


def _np_axis(axis):
    return tuple(axis) if isinstance(axis, list | tuple) else axis


@pytest.mark.parametrize("fn,ref", REDUCTIONS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_float(fn, ref, axis, keepdims):
    x = rand(2, 3, 4, low=0.5, high=1.5, seed=4)
    check_forward(
        lambda t: fn(t, axis=axis, keepdims=keepdims),
        lambda a: np.asarray(ref(a, axis=_np_axis(axis), keepdims=keepdims), np.float32),
        [x],
        rtol=1e-5,
    )


@pytest.mark.parametrize("fn,ref", REDUCTIONS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_reductions_keep_integer_dtype(fn, ref, dtype):
    x = rand(3, 4, dtype=dtype, low=0 if dtype is np.uint8 else -4, high=4, seed=5)
    check_forward(lambda t: fn(t, axis=1), lambda a: ref(a, axis=1).astype(dtype), [x])


def test_integer_mean_truncates_toward_zero():
    check_forward(
        lambda t: tf.reduce_mean(t, 0),
        lambda a: np.array([-1, 1, 1], np.int32),
        [np.array([[-1, 1, 2], [-2, 2, 1]], np.int32)],
    )


def test_reduce_any_all():
    x = rand(3, 4, dtype=np.bool_, seed=3)
    for fn, ref in ((tf.reduce_any, np.any), (tf.reduce_all, np.all)):
        for axis in (None, 0, [0, 1], -1):
            check_forward(
                lambda t, fn=fn, axis=axis: fn(t, axis=axis),
                lambda a, ref=ref, axis=axis: np.asarray(ref(a, axis=_np_axis(axis))),
                [x],
            )


def test_reduction_tf1_argument_names():
    x = rand(2, 3)
    check_forward(
        lambda t: tf.reduce_sum(t, reduction_indices=[1], keep_dims=True), lambda a: a.sum(1, keepdims=True), [x]
    )
    check_forward(lambda t: tf.reduce_mean(t, reduction_indices=0), lambda a: a.mean(0), [x])
    with tf.Graph().as_default():
        t = tf.constant(x)
        with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'reduction_indices'"):
            tf.reduce_sum(t, axis=0, reduction_indices=0)
        with pytest.raises(ValueError, match="Cannot specify both 'keepdims' and 'keep_dims'"):
            tf.reduce_sum(t, keepdims=True, keep_dims=True)


def test_reduction_with_axis_tensor():
    x = rand(2, 3, 4)
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32, [2, 3, 4])
        axes = tf.placeholder(tf.int32, [None])
        out = tf.reduce_sum(t, axes)
        keep = tf.reduce_max(t, axes, keepdims=True)
        assert out.shape.ndims is None and keep.shape.as_list() == [None, None, None]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out, {t: x, axes: [0, -1]}), x.sum((0, 2)), rtol=1e-5)
            np.testing.assert_allclose(sess.run(out, {t: x, axes: []}), x, rtol=1e-6)
            np.testing.assert_allclose(sess.run(keep, {t: x, axes: [1]}), x.max(1, keepdims=True))
            with pytest.raises(errors.InvalidArgumentError, match="Invalid reduction dimension 3"):
                sess.run(out, {t: x, axes: [3]})


def test_reduction_of_unknown_rank_is_scalar_when_all_axes():
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32)
        out = tf.reduce_sum(t)
        assert out.shape.as_list() == []
        assert run(out, {t: np.ones((2, 3))}) == 6.0


def test_reduction_static_shapes_and_names():
    with tf.Graph().as_default():
        t = tf.placeholder(tf.float32, [None, 3, 4])
        s = tf.reduce_sum(t, 1)
        assert (s.op.type, s.op.name, s.op.get_attr("keep_dims")) == ("Sum", "Sum", False)
        assert s.shape.as_list() == [None, 4]
        assert tf.reduce_mean(t, [0, -1], keepdims=True).shape.as_list() == [1, 3, 1]
        assert tf.reduce_max(t).shape.as_list() == []


def test_reduction_errors():
    with tf.Graph().as_default():
        t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 dimensions"):
            tf.reduce_sum(t, 2)
        with pytest.raises(ValueError, match="duplicate dimension: 0"):
            tf.reduce_sum(t, [0, -2])
        with pytest.raises(TypeError, match="DataType bool not in list"):
            tf.reduce_sum(tf.constant([True]))
        with pytest.raises(TypeError, match="DataType float32 not in list of allowed values: int32, int64"):
            tf.reduce_sum(t, 1.0)


def test_empty_max_min_give_dtype_limits():
    check_forward(
        lambda t: tf.reduce_max(t, 0), lambda a: np.full(3, -np.inf, np.float32), [np.zeros((0, 3), np.float32)]
    )
    check_forward(
        lambda t: tf.reduce_min(t, 0),
        lambda a: np.full(3, np.iinfo(np.int32).max, np.int32),
        [np.zeros((0, 3), np.int32)],
    )
    check_forward(lambda t: tf.reduce_sum(t, 0), lambda a: np.zeros(3, np.float32), [np.zeros((0, 3), np.float32)])


@pytest.mark.parametrize("fn,ref", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin(fn, ref, axis):
    x = rand(3, 5, seed=6)
    check_forward(lambda t: fn(t, axis), lambda a: ref(a, axis=axis).astype(np.int64), [x])
    check_forward(
        lambda t: fn(t, dimension=axis, output_type=tf.int32), lambda a: ref(a, axis=axis).astype(np.int32), [x]
    )


def test_argmax_defaults_ties_and_errors():
    x = np.array([[1, 3, 3], [4, 4, 2]], np.int32)
    check_forward(tf.argmax, lambda a: np.argmax(a, 0), [x])
    check_forward(lambda t: tf.argmax(t, 1), lambda a: np.array([1, 0]), [x])
    with tf.Graph().as_default():
        t = tf.constant(x)
        assert tf.argmax(t, 1).op.name == "ArgMax"
        with pytest.raises(ValueError, match=r"Dimension \(2\) must be in the range \[-2, 2\)"):
            tf.argmax(t, 2)
        with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'dimension'"):
            tf.argmin(t, axis=0, dimension=0)
        with pytest.raises(TypeError, match="output_type"):
            tf.argmax(t, 0, output_type=tf.float32)


GRAD_REDUCTIONS = [tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod]


@pytest.mark.parametrize("fn", GRAD_REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 2], [1, 2], []], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_gradients(fn, axis, keepdims):
    x = rand(2, 3, 4, low=0.5, high=1.5, seed=18)
    check_gradient(lambda t: fn(t, axis=axis, keepdims=keepdims), [x])


@pytest.mark.parametrize("fn", GRAD_REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [None, 1, [0, 2], -1], ids=str)
def test_reduction_gradients_with_runtime_shapes(fn, axis):
    x = rand(2, 3, 4, low=0.5, high=1.5, seed=19)
    check_gradient(lambda t: fn(hide_shape(t), axis=axis), [x])


@pytest.mark.parametrize("fn", GRAD_REDUCTIONS, ids=lambda f: f.__name__)
def test_reduction_gradients_with_runtime_axes_and_unknown_rank(fn):
    x = rand(2, 3, 4, low=0.5, high=1.5, seed=20)

    def build(t):
        axes = tf.placeholder_with_default(tf.constant([0, -1]), [None])
        return fn(tf.placeholder_with_default(t, None), axes)

    check_gradient(build, [x])


def test_prod_gradient_with_zeros():
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.5, 2.0, -1.0]])
    check_gradient(lambda t: tf.reduce_prod(t, 1), [x])
    check_gradient(lambda t: tf.reduce_prod(t), [np.array([2.0, 0.0, 3.0])])


def test_max_gradient_splits_ties():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]])
        (g,) = tf.gradients(tf.reduce_max(x, 1), [x])
        np.testing.assert_allclose(run(g), [[0, 0.5, 0.5], [1, 0, 0]])


def test_mean_gradient_of_batch_loss():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        (g,) = tf.gradients(tf.reduce_mean(x), [x])
        np.testing.assert_allclose(run(g, {x: np.ones(4, np.float32)}), np.full(4, 0.25))
