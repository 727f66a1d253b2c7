"""Math ops: forward values against numpy, gradients against finite differences, static shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.op_check import check_forward, check_gradient, evaluate, rand


def hide_shape(t: tf.Tensor) -> tf.Tensor:
    """``t`` with an unknown static shape of the same rank, so shape-dependent code takes its runtime path."""
    return tf.placeholder_with_default(t, [None] * t.shape.ndims)


def positive(*shape: int, seed: int = 0) -> np.ndarray:
    return rand(*shape, low=0.5, high=2.0, seed=seed)


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


# ---- binary elementwise ----------------------------------------------------------------------------------
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
    check_forward(tf.truediv, lambda a, b: (a.astype(out) / b.astype(out)), [x, y])
    check_forward(tf.divide, lambda a, b: (a.astype(out) / b.astype(out)), [x, y])
    check_forward(lambda a, b: a / b, lambda a, b: (a.astype(out) / b.astype(out)), [x, y])


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


# ---- unary elementwise -----------------------------------------------------------------------------------
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY_FLOAT = [
    (tf.negative, np.negative, rand),
    (tf.abs, np.abs, rand),
    (tf.sign, np.sign, rand),
    (tf.exp, np.exp, rand),
    (tf.log, np.log, positive),
    (tf.log1p, np.log1p, positive),
    (tf.sqrt, np.sqrt, positive),
    (tf.rsqrt, lambda x: 1 / np.sqrt(x), positive),
    (tf.square, np.square, rand),
    (tf.reciprocal, np.reciprocal, positive),
    (tf.sigmoid, _sigmoid, rand),
    (tf.tanh, np.tanh, rand),
    (tf.floor, np.floor, rand),
    (tf.ceil, np.ceil, rand),
    (tf.round, np.round, lambda *s, seed: np.round(rand(*s, seed=seed) * 4) / 4),
]


@pytest.mark.parametrize("fn,ref,gen", UNARY_FLOAT, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_forward(fn, ref, gen, dtype):
    x = gen(3, 4, seed=3).astype(dtype)
    check_forward(fn, lambda a: ref(a).astype(dtype), [x], rtol=1e-5)


@pytest.mark.parametrize("fn,ref", [(tf.negative, np.negative), (tf.abs, np.abs), (tf.sign, np.sign),
                                    (tf.square, np.square)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_unary_forward_integers(fn, ref, dtype):
    check_forward(fn, ref, [rand(5, dtype=dtype, low=-9, high=9)])


def test_round_keeps_integers():
    with tf.Graph().as_default():
        i = tf.constant([1, 2])
        assert tf.round(i) is i


@pytest.mark.parametrize("fn", [tf.exp, tf.log, tf.sqrt, tf.sigmoid, tf.tanh, tf.reciprocal, tf.floor, tf.ceil])
def test_float_only_unary_rejects_int(fn):
    with tf.Graph().as_default(), pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        fn(tf.constant([1, 2]))


def test_unary_ops_reject_unsupported_types():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="DataType uint8 not in list"):
            tf.negative(tf.constant([1], tf.uint8))
        with pytest.raises(TypeError, match="DataType bool not in list"):
            tf.abs(tf.constant([True]))


# ---- comparisons and logic -------------------------------------------------------------------------------
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


# ---- casts -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src,dst",
    [(np.float32, np.int32), (np.float32, np.float64), (np.int32, np.float32), (np.float64, np.float16),
     (np.int64, np.int32), (np.float32, np.bool_), (np.bool_, np.float32), (np.int32, np.uint8)],
)
def test_cast(src, dst):
    x = rand(2, 5, low=-3, high=3).astype(src)
    check_forward(lambda t: tf.cast(t, tf.as_dtype(dst)), lambda a: a.astype(dst), [x])


def test_cast_truncates_toward_zero_and_keeps_same_dtype_tensor():
    check_forward(lambda t: tf.cast(t, tf.int32), lambda a: np.trunc(a).astype(np.int32),
                  [np.array([1.7, -1.7, 2.0, -0.2], np.float32)])
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
    check_forward(lambda t: tf.saturate_cast(t, tf.uint8), lambda a: np.clip(a, 0, 255).astype(np.uint8),
                  [np.array([-1.7, 1.7, 300.0, 255.0], np.float32)])
    check_forward(lambda t: tf.saturate_cast(t, tf.int8), lambda a: np.clip(a, -128, 127).astype(np.int8),
                  [np.array([-1000, 5, 1000], np.int32)])


# ---- matmul ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_transposes(ta, tb):
    a = rand(*((4, 3) if ta else (3, 4)), seed=1)
    b = rand(*((5, 4) if tb else (4, 5)), seed=2)

    def ref(x, y):
        return (x.T if ta else x) @ (y.T if tb else y)

    check_forward(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), ref, [a, b], rtol=1e-5)
    check_forward(lambda x, y: tf.matmul(x, y, adjoint_a=ta, adjoint_b=tb), ref, [a, b], rtol=1e-5)


@pytest.mark.parametrize(
    "sa,sb", [((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2))]
)
def test_batch_matmul_broadcasts(sa, sb):
    check_forward(tf.matmul, np.matmul, [rand(*sa, seed=1), rand(*sb, seed=2)], rtol=1e-5)
    with tf.Graph().as_default():
        assert tf.matmul(tf.zeros(sa), tf.zeros(sb)).op.type == "BatchMatMulV2"


def test_batch_matmul_adjoint():
    a, b = rand(2, 4, 3, seed=1), rand(2, 5, 4, seed=2)
    check_forward(lambda x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True),
                  lambda x, y: np.swapaxes(x, -1, -2) @ np.swapaxes(y, -1, -2), [a, b], rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_matmul_dtypes(dtype):
    a, b = rand(3, 4, dtype=dtype, low=-5, high=5, seed=1), rand(4, 2, dtype=dtype, low=-5, high=5, seed=2)
    check_forward(tf.matmul, lambda x, y: (x @ y).astype(dtype), [a, b])


@pytest.mark.parametrize("op_shapes", [((3, 4), (5, 4)), ((2, 3, 4), (5, 4))], ids=str)
def test_integer_matmul_kernel_for_devices_without_integer_gemm(op_shapes):
    # CUDA has no integer GEMM, so the kernel built for a CUDA device multiplies and sums instead.
    import torch

    from dtf_notebook.runtime.devices import LocalDevice
    from dtf_notebook.runtime.executor import ExecutionState, KernelContext

    x = rand(*op_shapes[0], dtype=np.int64, low=-9, high=9, seed=1)
    y = rand(*op_shapes[1], dtype=np.int64, low=-9, high=9, seed=2)
    with tf.Graph().as_default():
        op = tf.matmul(tf.constant(x), tf.constant(y), transpose_b=True).op
    ctx = KernelContext(op, LocalDevice("/gpu:0", "GPU", 0, torch.device("cuda")), ExecutionState())
    out = op.op_def.kernel(op, ctx)(torch.from_numpy(x), torch.from_numpy(y))
    assert out.dtype == torch.int64
    np.testing.assert_array_equal(out.numpy(), x @ np.swapaxes(y, -1, -2))


def test_matmul_operator_and_names():
    a, b = rand(2, 3, seed=1), rand(3, 2, seed=2)
    check_forward(lambda x, y: x @ y, np.matmul, [a, b], rtol=1e-5)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        w = tf.placeholder(tf.float32, [3, 7])
        y = tf.matmul(x, w)
        assert y.op.type == "MatMul" and y.op.name == "MatMul" and y.shape.as_list() == [None, 7]
        assert (x @ w).op.name == "matmul_1"  # TF's unique names ignore case: "MatMul" took "matmul"


def test_matmul_shape_errors_name_both_shapes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 3 and 4 .*\[2,3\], \[4,5\]"):
            tf.matmul(tf.zeros([2, 3]), tf.zeros([4, 5]))
        with pytest.raises(ValueError, match=r"Dimensions must be equal, but are 4 and 5 .*\[2,3,4\], \[2,5,5\]"):
            tf.matmul(tf.zeros([2, 3, 4]), tf.zeros([2, 5, 5]))
        with pytest.raises(ValueError, match=r"Shape must be rank 2 but is rank 1 .*\[3\], \[3,5\]"):
            tf.matmul(tf.zeros([3]), tf.zeros([3, 5]))
        with pytest.raises(TypeError, match="float32.*int32|int32.*float32"):
            tf.matmul(tf.zeros([2, 2]), tf.constant([[1, 2], [3, 4]]))
        with pytest.raises(ValueError, match="Only one of transpose_a and adjoint_a"):
            tf.matmul(tf.zeros([2, 2]), tf.zeros([2, 2]), transpose_a=True, adjoint_a=True)


def test_matmul_runtime_shape_error():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [None, None])
        with pytest.raises(errors.InvalidArgumentError, match="MatMul"):
            run(tf.matmul(a, b), {a: np.zeros((2, 3)), b: np.zeros((4, 5))})


# ---- reductions ------------------------------------------------------------------------------------------
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
    check_forward(lambda t: fn(t, axis=axis, keepdims=keepdims),
                  lambda a: np.asarray(ref(a, axis=_np_axis(axis), keepdims=keepdims), np.float32), [x], rtol=1e-5)


@pytest.mark.parametrize("fn,ref", REDUCTIONS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_reductions_keep_integer_dtype(fn, ref, dtype):
    x = rand(3, 4, dtype=dtype, low=0 if dtype is np.uint8 else -4, high=4, seed=5)
    check_forward(lambda t: fn(t, axis=1), lambda a: ref(a, axis=1).astype(dtype), [x])


def test_integer_mean_truncates_toward_zero():
    check_forward(lambda t: tf.reduce_mean(t, 0), lambda a: np.array([-1, 1, 1], np.int32),
                  [np.array([[-1, 1, 2], [-2, 2, 1]], np.int32)])


def test_reduce_any_all():
    x = rand(3, 4, dtype=np.bool_, seed=3)
    for fn, ref in ((tf.reduce_any, np.any), (tf.reduce_all, np.all)):
        for axis in (None, 0, [0, 1], -1):
            check_forward(lambda t, fn=fn, axis=axis: fn(t, axis=axis),
                          lambda a, ref=ref, axis=axis: np.asarray(ref(a, axis=_np_axis(axis))), [x])


def test_reduction_tf1_argument_names():
    x = rand(2, 3)
    check_forward(lambda t: tf.reduce_sum(t, reduction_indices=[1], keep_dims=True),
                  lambda a: a.sum(1, keepdims=True), [x])
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
    check_forward(lambda t: tf.reduce_max(t, 0), lambda a: np.full(3, -np.inf, np.float32),
                  [np.zeros((0, 3), np.float32)])
    check_forward(lambda t: tf.reduce_min(t, 0), lambda a: np.full(3, np.iinfo(np.int32).max, np.int32),
                  [np.zeros((0, 3), np.int32)])
    check_forward(lambda t: tf.reduce_sum(t, 0), lambda a: np.zeros(3, np.float32), [np.zeros((0, 3), np.float32)])


# ---- argmax / argmin -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,ref", [(tf.argmax, np.argmax), (tf.argmin, np.argmin)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin(fn, ref, axis):
    x = rand(3, 5, seed=6)
    check_forward(lambda t: fn(t, axis), lambda a: ref(a, axis=axis).astype(np.int64), [x])
    check_forward(lambda t: fn(t, dimension=axis, output_type=tf.int32), lambda a: ref(a, axis=axis).astype(np.int32),
                  [x])


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


# ---- add_n, clip_by_value --------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_add_n(n):
    xs = [rand(2, 3, seed=i) for i in range(n)]
    check_forward(lambda *ts: tf.add_n(list(ts)), lambda *a: np.sum(a, axis=0).astype(np.float32), xs, rtol=1e-5)


def test_add_n_ints_single_and_errors():
    check_forward(lambda a, b, c: tf.add_n([a, b, c]), lambda *a: np.sum(a, axis=0).astype(np.int32),
                  [rand(4, dtype=np.int32, low=-5, high=5, seed=i) for i in range(3)])
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        assert tf.add_n([a]) is a
        assert tf.add_n([a], name="same").op.type == "Identity"
        assert tf.add_n([a, a]).op.type == "AddN"
        with pytest.raises(ValueError, match="at least one Tensor"):
            tf.add_n([])
        with pytest.raises(ValueError, match="Shapes must all be equal"):
            tf.add_n([a, tf.zeros([3])])
        with pytest.raises(TypeError, match="don't all match"):
            tf.add_n([a, tf.constant([1, 2])])


def test_add_n_densifies_indexed_slices():
    with tf.Graph().as_default():
        s = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([1]), tf.constant([3, 2]))
        out = tf.add_n([s, tf.ones([3, 2])])
        np.testing.assert_array_equal(run(out), [[1, 1], [2, 2], [1, 1]])


def test_clip_by_value():
    x = rand(3, 4, seed=7)
    check_forward(lambda t: tf.clip_by_value(t, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), [x])
    lo, hi = np.full(4, -1.0, np.float32), np.full(4, 1.0, np.float32)
    check_forward(lambda t, a, b: tf.clip_by_value(t, a, b), np.clip, [x, lo, hi])
    check_forward(lambda t: tf.clip_by_value(t, 2, 8), lambda a: np.clip(a, 2, 8), [np.array([1, 5, 10], np.int32)])
    with tf.Graph().as_default():
        assert tf.clip_by_value(tf.zeros([3]), 0.0, 1.0).op.name == "clip_by_value"
        with pytest.raises(ValueError):
            tf.clip_by_value(tf.zeros([3]), tf.zeros([2, 3]), 1.0)


# ---- where -----------------------------------------------------------------------------------------------
def test_where_select_same_shape_scalar_and_row_conditions():
    x, y = rand(3, 4, seed=1), rand(3, 4, seed=2)
    c = rand(3, 4, dtype=np.bool_, seed=3)
    check_forward(tf.where, np.where, [c, x, y])
    rows = np.array([True, False, True])
    check_forward(tf.where, lambda cc, a, b: np.where(cc[:, None], a, b), [rows, x, y])
    check_forward(lambda a, b: tf.where(True, a, b), lambda a, b: a, [x, y])
    check_forward(tf.where, np.where, [np.array([True, False]), np.array([b"a", b"b"], dtype=object),
                                       np.array([b"c", b"d"], dtype=object)])


def test_where_coordinates():
    check_forward(tf.where, lambda c: np.argwhere(c).astype(np.int64), [rand(3, 4, dtype=np.bool_, seed=5)])
    check_forward(tf.where, lambda c: np.argwhere(c).astype(np.int64), [np.array([1, 0, 3], np.int32)])
    with tf.Graph().as_default():
        w = tf.where(tf.placeholder(tf.bool, [None, 3]))
        assert (w.op.type, w.dtype, w.shape.as_list()) == ("Where", tf.int64, [None, 2])


def test_where_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="x and y must both be non-None or both be None"):
            tf.where(tf.constant([True]), x=tf.constant([1]))
        with pytest.raises(ValueError, match="Dimension 0 in both shapes must be equal, but are 3 and 2"):
            tf.where(tf.constant([True, False, True]), tf.zeros([2, 3]), tf.ones([2, 3]))
        with pytest.raises(ValueError, match="Shapes of x and y must be equal"):
            tf.where(tf.constant([True, False]), tf.zeros([2, 3]), tf.ones([3]))
        with pytest.raises(ValueError, match="Condition of shape"):
            tf.where(tf.constant([[True, False, True]]), tf.zeros([2, 3]), tf.ones([2, 3]))
        with pytest.raises(TypeError, match="Input 'condition' of 'Select' Op has type int32"):
            tf.where(tf.constant([1, 0]), tf.zeros([2]), tf.ones([2]))
        with pytest.raises(TypeError, match="float32.*int32|int32.*float32"):
            tf.where(tf.constant([True]), tf.zeros([1]), tf.constant([1]))


# ---- unsorted_segment_sum --------------------------------------------------------------------------------
def _segment_sum_ref(data, ids, n):
    out = np.zeros((n,) + data.shape[ids.ndim:], data.dtype)
    for idx in np.ndindex(*ids.shape):
        if ids[idx] >= 0:
            out[ids[idx]] += data[idx]
    return out


@pytest.mark.parametrize("ids", [[0, 2, 0, 1], [3, -1, 3, 0], [[0, 1], [1, -1]]], ids=str)
def test_unsorted_segment_sum(ids):
    ids = np.array(ids, np.int32)
    data = rand(*ids.shape, 3, seed=8)
    check_forward(lambda d, i: tf.unsorted_segment_sum(d, i, 4), lambda d, i: _segment_sum_ref(d, i, 4), [data, ids],
                  rtol=1e-5)
    check_forward(lambda d, i: tf.unsorted_segment_sum(d, tf.cast(i, tf.int64), tf.constant(4, tf.int64)),
                  lambda d, i: _segment_sum_ref(d, i, 4), [data, ids], rtol=1e-5)


def test_unsorted_segment_sum_out_of_range_names_the_id():
    with tf.Graph().as_default():
        out = tf.unsorted_segment_sum(tf.constant([1.0, 2.0, 3.0]), tf.constant([0, -1, 5]), 3)
        assert out.shape.as_list() == [3]
        with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[2\] = 5 is out of range \[0, 3\)"):
            run(out)
        with pytest.raises(ValueError, match="does not start with segment_ids.shape"):
            tf.unsorted_segment_sum(tf.zeros([3, 2]), tf.constant([0, 1]), 2)


# ---- range -----------------------------------------------------------------------------------------------
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


# ---- operators, names, dtype errors ----------------------------------------------------------------------
def test_operators_with_python_values_on_either_side():
    x = rand(2, 3, low=0.5, high=2.0)
    check_forward(lambda t: 2.0 + t, lambda a: 2.0 + a, [x])
    check_forward(lambda t: 2.0 - t, lambda a: np.float32(2.0) - a, [x])
    check_forward(lambda t: 2.0 * t, lambda a: 2.0 * a, [x])
    check_forward(lambda t: 2.0 / t, lambda a: np.float32(2.0) / a, [x])
    check_forward(lambda t: 2.0 ** t, lambda a: np.float32(2.0) ** a, [x], rtol=1e-5)
    check_forward(lambda t: t ** 2, lambda a: a ** 2, [x])
    check_forward(lambda t: 7.0 // t, lambda a: np.float32(7.0) // a, [x])
    check_forward(lambda t: 7.0 % t, lambda a: np.float32(7.0) % a, [x], rtol=1e-5)
    check_forward(lambda t: -t, np.negative, [x])
    check_forward(lambda t: abs(t - 1.0), lambda a: np.abs(a - 1.0), [x])
    check_forward(lambda t: t < 1.0, lambda a: a < 1.0, [x])
    check_forward(lambda t: t <= 1.0, lambda a: a <= 1.0, [x])
    check_forward(lambda t: t > 1.0, lambda a: a > 1.0, [x])
    check_forward(lambda t: 1.0 >= t, lambda a: 1.0 >= a, [x])
    check_forward(lambda t: np.ones((2, 3), np.float32) + t, lambda a: 1.0 + a, [x])


def test_operator_op_types_and_names():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        cases = [
            (x + 1.0, "Add", "add"), (x - 1.0, "Sub", "sub"), (x * 2.0, "Mul", "mul"), (x / 2.0, "RealDiv", "truediv"),
            (x // 2.0, "FloorDiv", "floordiv"), (x % 2.0, "FloorMod", "mod"), (x ** 2.0, "Pow", "pow"),
            (-x, "Neg", "Neg"), (abs(x), "Abs", "Abs"), (x < 1.0, "Less", "Less"),
            (1.0 + x, "Add", "add_1"), (tf.add(x, x), "Add", "Add_2"), (tf.multiply(x, x), "Mul", "Mul_1"),
        ]
        for t, op_type, name in cases:
            assert (t.op.type, t.op.name) == (op_type, name)
        reflected = 3.0 - x
        assert [i.op.name for i in reflected.op.inputs] == ["sub_1/x", "x"]
        assert [i.op.name for i in tf.add(1.0, 2.0, name="s").op.inputs] == ["s/x", "s/y"]


def test_operators_on_variables():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        out = 2.0 * v + v
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(out), [3.0, 6.0])


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


# ---- broadcast_gradient_args -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "s0,s1,r0,r1",
    [([2, 3], [2, 3], [], []), ([2, 3], [3], [], [0]), ([2, 1], [1, 3], [1], [0]), ([], [2, 3], [0, 1], []),
     ([4, 1, 3], [2, 1], [1], [0, 2]), ([1], [1], [0], [0])],
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


# ---- gradients -------------------------------------------------------------------------------------------
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


UNARY_GRAD = [
    (tf.negative, rand), (tf.abs, rand), (tf.exp, rand), (tf.log, positive), (tf.log1p, positive),
    (tf.sqrt, positive), (tf.rsqrt, positive), (tf.square, rand), (tf.reciprocal, positive),
    (tf.sigmoid, rand), (tf.tanh, rand), (tf.sign, rand),
]


@pytest.mark.parametrize("fn,gen", UNARY_GRAD, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_gradients(fn, gen):
    check_gradient(fn, [gen(2, 3, seed=15)])


@pytest.mark.parametrize("fn", [tf.sigmoid, tf.tanh, tf.sqrt, tf.rsqrt, tf.reciprocal])
def test_second_order_gradients(fn):
    def first_grad(x, w):
        return tf.gradients(fn(x), x, grad_ys=w)[0]

    check_gradient(first_grad, [positive(2, 3, seed=16), rand(2, 3, seed=17)])


def test_cast_gradient():
    check_gradient(lambda x: tf.cast(tf.cast(x, tf.float32) * 2.0, tf.float64), [rand(2, 3)], delta=1e-2,
                   rtol=1e-3, atol=1e-3)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        assert tf.gradients(tf.cast(tf.cast(x, tf.int32), tf.float32), x) == [None]


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_gradient(ta, tb):
    a = rand(*((4, 3) if ta else (3, 4)), seed=1)
    b = rand(*((2, 4) if tb else (4, 2)), seed=2)
    check_gradient(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [a, b])


@pytest.mark.parametrize(
    "sa,sb,ta,tb",
    [((2, 3, 4), (2, 4, 2), False, False), ((2, 4, 3), (2, 2, 4), True, True), ((2, 3, 4), (4, 2), False, False),
     ((3, 4), (2, 4, 2), False, False), ((2, 1, 3, 4), (3, 2, 4), False, True)],
)
def test_batch_matmul_gradient(sa, sb, ta, tb):
    check_gradient(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [rand(*sa, seed=3), rand(*sb, seed=4)])


def test_batch_matmul_gradient_with_runtime_shapes():
    check_gradient(lambda x, y: tf.matmul(hide_shape(x), hide_shape(y)), [rand(2, 3, 4, seed=5), rand(1, 4, 2, seed=6)])


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


def test_add_n_and_clip_and_where_gradients():
    check_gradient(lambda a, b, c: tf.add_n([a, b, c]), [rand(2, 3, seed=i) for i in range(3)])
    check_gradient(lambda t: tf.clip_by_value(t, -0.5, 0.5), [np.array([-1.0, -0.3, 0.2, 0.9])])
    cond = np.array([[True, False, True], [False, True, True]])
    check_gradient(tf.where, [cond, rand(2, 3, seed=1), rand(2, 3, seed=2)])
    check_gradient(tf.where, [np.array([True, False]), rand(2, 3, seed=3), rand(2, 3, seed=4)])


@pytest.mark.parametrize("ids", [[0, 2, 0, 1], [3, -1, 3, 0], [[0, 1], [1, -1]]], ids=str)
def test_unsorted_segment_sum_gradient(ids):
    ids = np.array(ids, np.int32)
    data = rand(*ids.shape, 2, seed=21)
    check_gradient(lambda d, i: tf.unsorted_segment_sum(d, i, 4), [data, ids])
    check_gradient(lambda d: tf.unsorted_segment_sum(d, tf.constant(ids), 4), [data])


def test_gradient_through_gathered_rows_is_densified():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        y = tf.gather(x * 2.0, [0, 2, 0])
        (g,) = tf.gradients(tf.reduce_sum(y), [x])
        np.testing.assert_allclose(run(g, {x: np.ones((3, 2))}), [[4, 4], [0, 0], [2, 2]])


def test_non_differentiable_ops_give_no_gradient():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        outs = [tf.cast(tf.argmax(x), tf.float32), tf.cast(tf.less(x, 1.0), tf.float32), tf.floordiv(x, 2.0),
                tf.floor(x), tf.ceil(x), tf.round(x)]
        for out in outs:
            assert tf.gradients(out, x) == [None]


# ---- runtime details -------------------------------------------------------------------------------------
def test_kernels_do_not_mutate_inputs():
    x = rand(2, 3)
    with tf.Graph().as_default():
        c = tf.constant(x)
        outs = [tf.add_n([c, c, c]), c + 1.0, tf.reduce_sum(c, []), tf.cast(c, tf.float32), tf.clip_by_value(c, 0., .1)]
        with tf.Session() as sess:
            sess.run(outs)
            np.testing.assert_array_equal(sess.run(c), x)


def test_evaluate_helper_with_constants_matches_placeholders():
    got, out = evaluate(lambda a, b: tf.matmul(a, b), [rand(2, 3), rand(3, 2)], feed=False)
    assert out.shape.as_list() == [2, 2] and got.shape == (2, 2)


# ---- against TensorFlow itself ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    return real.compat.v1


ORACLE_CASES = [
    ("floordiv", lambda m: m.floordiv, [np.array([7, -7, 9], np.int32), np.array([2, 2, -4], np.int32)]),
    ("floormod", lambda m: m.floormod, [np.array([-7.5, 7.5, 3.0], np.float32), np.array([2, -2, 0.7], np.float32)]),
    ("truediv", lambda m: m.truediv, [np.array([1, 7], np.int16), np.array([2, 3], np.int16)]),
    ("div", lambda m: m.div, [np.array([-7, 7], np.int64), np.array([2, -2], np.int64)]),
    ("mean_int", lambda m: (lambda a: m.reduce_mean(a, 1)), [np.array([[-1, -2, 4], [1, 2, 2]], np.int32)]),
    ("prod", lambda m: (lambda a: m.reduce_prod(a, [0, 1], keepdims=True)), [rand(2, 3, seed=3)]),
    ("argmin", lambda m: (lambda a: m.argmin(a, 0, output_type=m.int32)), [np.array([[3, 1], [1, 3]], np.int32)]),
    ("saturate", lambda m: (lambda a: m.saturate_cast(a, m.int8)), [np.array([-300.5, 2.7, 300.0], np.float32)]),
    ("select_rows", lambda m: m.where, [np.array([True, False]), rand(2, 3, seed=1), rand(2, 3, seed=2)]),
    ("range", lambda m: (lambda: m.range(1, 2, 0.3)), []),
    ("segment", lambda m: (lambda d: m.unsorted_segment_sum(d, [1, -1, 1], 2)), [rand(3, 2, seed=4)]),
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", ORACLE_CASES, ids=lambda c: c[0])
def test_matches_tensorflow(tf1, case):
    _, pick, inputs = case
    with tf1.Graph().as_default():
        with tf1.Session() as sess:
            expected = sess.run(pick(tf1)(*[tf1.constant(x) for x in inputs]))
    check_forward(pick(tf), lambda *a: expected, inputs, rtol=1e-6)


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "build",
    [lambda m, x, y: m.reduce_max(x * y, 1), lambda m, x, y: m.pow(m.abs(x) + 0.5, y),
     lambda m, x, y: m.reduce_prod(m.maximum(x, y), 0), lambda m, x, y: m.matmul(x, y, transpose_b=True)],
)
def test_gradients_match_tensorflow(tf1, build):
    x, y = rand(3, 4, seed=31).astype(np.float64), rand(3, 4, seed=32).astype(np.float64)
    with tf1.Graph().as_default():
        a, b = tf1.constant(x), tf1.constant(y)
        with tf1.Session() as sess:
            expected = sess.run(tf1.gradients(build(tf1, a, b), [a, b]))
    with tf.Graph().as_default():
        a, b = tf.constant(x), tf.constant(y)
        got = run(tf.gradients(build(tf, a, b), [a, b]))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)
