"""Binary arithmetic: values against numpy with broadcasting, dtype rules and errors, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.math.support import hide_shape, positive, run
from tests.ops.op_check import check_forward, check_gradient, rand

BINARY = [
    (tf.add, np.add),
    (tf.subtract, np.subtract),
    (tf.multiply, np.multiply),
    (tf.maximum, np.maximum),
    (tf.minimum, np.minimum),
    (tf.squared_difference, lambda a, b: np.square(a - b)),
]
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 3), (2, 1))]


@pytest.mark.parametrize("fn,ref", BINARY, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_binary_forward_broadcasting(fn, ref, shapes):
    x, y = rand(*shapes[0], seed=1), rand(*shapes[1], seed=2)
    check_forward(fn, ref, [x, y])


@pytest.mark.parametrize("fn,ref", BINARY, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.float64, np.float16])
def test_binary_forward_dtypes(fn, ref, dtype):
    x, y = rand(3, 4, dtype=dtype, low=-5, high=5, seed=1), rand(4, dtype=dtype, low=-5, high=5, seed=2)
    check_forward(fn, lambda a, b: ref(a, b).astype(dtype), [x, y], rtol=1e-3)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
def test_floordiv_and_floormod_follow_python(dtype):
    x = np.array([7, -7, 7, -7, 0, 5], dtype=dtype)
    y = np.array([2, 2, -2, -2, 3, 5], dtype=dtype)
    check_forward(tf.floordiv, np.floor_divide, [x, y])
    check_forward(tf.floormod, np.mod, [x, y])
    check_forward(tf.mod, np.mod, [x, y])
    if dtype is not np.float32:
        check_forward(lambda a, b: a // b, np.floor_divide, [x, y])
        check_forward(lambda a, b: a % b, np.mod, [x, y])


def test_floormod_float_takes_sign_of_divisor():
    x, y = np.array([-7.5, 7.5, 1e-3], np.float32), np.array([2.0, -2.0, 0.7], np.float32)
    check_forward(tf.floormod, np.mod, [x, y])


@pytest.mark.parametrize("fn", [tf.floordiv, tf.floormod])
def test_integer_division_by_zero(fn):
    with tf.Graph().as_default():
        out = fn(tf.constant([7]), tf.constant([0]))
        with pytest.raises(errors.InvalidArgumentError, match="Integer division by zero"):
            run(out)


@pytest.mark.parametrize(
    "dtype,out", [(np.int8, np.float32), (np.uint8, np.float32), (np.int32, np.float64), (np.int64, np.float64)]
)
def test_truediv_casts_integers_to_float(dtype, out):
    x, y = np.array([1, 7, 9], dtype), np.array([2, 2, 4], dtype)
    check_forward(tf.truediv, lambda a, b: a.astype(out) / b.astype(out), [x, y])
    check_forward(tf.divide, lambda a, b: a.astype(out) / b.astype(out), [x, y])
    check_forward(lambda a, b: a / b, lambda a, b: a.astype(out) / b.astype(out), [x, y])


def test_truediv_float_and_realdiv():
    x, y = rand(2, 3, seed=1), positive(3, seed=2)
    check_forward(tf.truediv, np.divide, [x, y])
    check_forward(tf.realdiv, np.divide, [x, y])
    with tf.Graph().as_default(), pytest.raises(TypeError, match="DataType int32 not in list"):
        tf.realdiv(tf.constant([1]), tf.constant([2]))
    with tf.Graph().as_default(), pytest.raises(TypeError, match="Invalid dtype"):
        tf.truediv(tf.constant([True]), tf.constant([False]))


def test_div_is_python2_division():
    ints = [np.array([-7, 7, 6], np.int32), np.array([2, 2, -4], np.int32)]
    check_forward(tf.div, np.floor_divide, ints)
    floats = [np.array([-7.0, 7.0], np.float32), np.array([2.0, 2.0], np.float32)]
    check_forward(tf.div, np.divide, floats)
    with tf.Graph().as_default():
        assert tf.div(tf.constant([1]), tf.constant([2])).op.type == "FloorDiv"
        assert tf.div(tf.constant([1.0]), tf.constant([2.0])).op.type == "RealDiv"


def test_pow_forward():
    check_forward(tf.pow, np.power, [positive(2, 3, seed=1), rand(2, 3, seed=2)])
    check_forward(tf.pow, np.power, [np.array([2, 3, -2], np.int32), np.array([3, 2, 3], np.int32)])
    with tf.Graph().as_default():
        out = tf.pow(tf.constant([2]), tf.constant([-1]))
        with pytest.raises(errors.InvalidArgumentError, match="negative integer powers"):
            run(out)


def test_string_add_concatenates():
    with tf.Graph().as_default():
        out = tf.add(tf.constant([b"a", b"b"]), tf.constant(b"!"))
        assert out.dtype == tf.string and out.shape.as_list() == [2]
        np.testing.assert_array_equal(run(out), np.array([b"a!", b"b!"], dtype=object))


def test_scalar_mul():
    check_forward(lambda x: tf.scalar_mul(3.0, x), lambda x: 3.0 * x, [rand(2, 2)])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="Only scalar multiply works"):
        tf.scalar_mul(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0]))


@pytest.mark.parametrize("fn", [tf.add, tf.subtract, tf.multiply, tf.maximum, tf.equal, tf.less, tf.pow])
def test_dtype_mismatch_names_both_types(fn):
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="has type int32 that does not match type float32"):
            fn(tf.constant(1.0), tf.constant(1))
        with pytest.raises(TypeError, match="int32"):
            fn(tf.constant([1, 2]), 2.5)


def test_binary_ops_reject_bool_and_bad_broadcasts():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType bool not in list of allowed values"):
            tf.add(tf.constant(True), tf.constant(True))
        with pytest.raises(TypeError, match="DataType bool not in list"):
            tf.constant([True]) * tf.constant([False])
        with pytest.raises(ValueError, match="broadcast"):
            tf.zeros([2, 3]) + tf.zeros([4])


def test_broadcast_shape_inference_with_unknown_dims():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, 3])
        assert (a + tf.zeros([3])).shape.as_list() == [None, 3]
        assert (a + tf.zeros([5, 1])).shape.as_list() == [5, 3]
        assert (a + tf.placeholder(tf.float32)).shape.ndims is None
        assert tf.equal(a, 1.0).shape.as_list() == [None, 3]


@pytest.mark.parametrize(
    "s0,s1,r0,r1",
    [
        ([2, 3], [2, 3], [], []),
        ([2, 3], [3], [], [0]),
        ([2, 1], [1, 3], [1], [0]),
        ([], [2, 3], [0, 1], []),
        ([4, 1, 3], [2, 1], [1], [0, 2]),
        ([1], [1], [0], [0]),
    ],
)
def test_broadcast_gradient_args(s0, s1, r0, r1):
    from dtf_notebook.ops.math_ops import broadcast_gradient_args

    with tf.Graph().as_default():
        a, b = broadcast_gradient_args(tf.constant(s0, tf.int32), tf.constant(s1, tf.int32))
        got = run([a, b])
    assert got[0].tolist() == r0 and got[1].tolist() == r1


def test_broadcast_gradient_args_incompatible():
    from dtf_notebook.ops.math_ops import broadcast_gradient_args

    with tf.Graph().as_default():
        a, _ = broadcast_gradient_args([2, 3], [4])
        with pytest.raises(errors.InvalidArgumentError, match=r"Incompatible shapes: \[2, 3\] vs. \[4\]"):
            run(a)


GRAD_SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 2)), ((3, 1, 2), (4, 1))]
BINARY_GRAD = [
    (tf.add, rand, rand),
    (tf.subtract, rand, rand),
    (tf.multiply, rand, rand),
    (tf.truediv, rand, positive),
    (tf.realdiv, rand, positive),
    (tf.pow, positive, rand),
    (tf.maximum, rand, rand),
    (tf.minimum, rand, rand),
    (tf.squared_difference, rand, rand),
    (tf.floormod, positive, positive),
]


@pytest.mark.parametrize("fn,gen_x,gen_y", BINARY_GRAD, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("shapes", GRAD_SHAPES, ids=str)
def test_binary_gradients(fn, gen_x, gen_y, shapes):
    x, y = gen_x(*shapes[0], seed=11), gen_y(*shapes[1], seed=12)
    check_gradient(fn, [x, y])


@pytest.mark.parametrize("fn", [tf.add, tf.multiply, tf.subtract])
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((2, 1), (1, 3)), ((2, 3), (2, 3)), ((1, 3), (2, 1))], ids=str)
def test_binary_gradients_with_runtime_shapes(fn, shapes):
    x, y = rand(*shapes[0], seed=13), rand(*shapes[1], seed=14)
    check_gradient(lambda a, b: fn(hide_shape(a), hide_shape(b)), [x, y])


def test_bias_add_pattern_needs_no_dynamic_ops():
    with tf.Graph().as_default():
        h = tf.placeholder(tf.float32, [None, 4])
        b = tf.placeholder(tf.float32, [4])
        gh, gb = tf.gradients(tf.reduce_sum(h + b), [h, b])
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert "BroadcastGradientArgs" not in types
        assert gb.op.type == "Sum" and gb.shape.as_list() == [4]
        assert gh.shape.as_list() == [None, 4]


def test_same_shape_binary_gradient_is_the_incoming_gradient():
    with tf.Graph().as_default():
        a, b = tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.float32, [2, 3])
        g = tf.placeholder(tf.float32, [2, 3])
        ga, gb = tf.gradients(a + b, [a, b], grad_ys=g)
        assert ga is g and gb is g


def test_gradient_through_gathered_rows_is_densified():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        y = tf.gather(x * 2.0, [0, 2, 0])
        (g,) = tf.gradients(tf.reduce_sum(y), [x])
        np.testing.assert_allclose(run(g, {x: np.ones((3, 2))}), [[4, 4], [0, 0], [2, 2]])
