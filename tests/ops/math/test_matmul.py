"""MatMul and BatchMatMulV2: transposes, broadcast batches, dtypes, errors, gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.math.support import hide_shape, run
from tests.ops.op_check import check_forward, check_gradient, rand


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
    check_forward(
        lambda x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True),
        lambda x, y: np.swapaxes(x, -1, -2) @ np.swapaxes(y, -1, -2),
        [a, b],
        rtol=1e-5,
    )


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


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_gradient(ta, tb):
    a = rand(*((4, 3) if ta else (3, 4)), seed=1)
    b = rand(*((2, 4) if tb else (4, 2)), seed=2)
    check_gradient(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [a, b])


@pytest.mark.parametrize(
    "sa,sb,ta,tb",
    [
        ((2, 3, 4), (2, 4, 2), False, False),
        ((2, 4, 3), (2, 2, 4), True, True),
        ((2, 3, 4), (4, 2), False, False),
        ((3, 4), (2, 4, 2), False, False),
        ((2, 1, 3, 4), (3, 2, 4), False, True),
    ],
)
def test_batch_matmul_gradient(sa, sb, ta, tb):
    check_gradient(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), [rand(*sa, seed=3), rand(*sb, seed=4)])


def test_batch_matmul_gradient_with_runtime_shapes():
    check_gradient(lambda x, y: tf.matmul(hide_shape(x), hide_shape(y)), [rand(2, 3, 4, seed=5), rand(1, 4, 2, seed=6)])
