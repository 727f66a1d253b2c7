"""tf.linalg against real TensorFlow: inverses, determinants, solves, factorizations, matrix functions and TF's
composites; values, static shapes and gradients (for factorizations, of sign-invariant functions of the factors)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import check_gradient, rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

A = rand(2, 3, 3, seed=1).astype(np.float64) + 3.0 * np.eye(3)
B = rand(2, 3, 2, seed=2).astype(np.float64)
SPD = np.einsum("bij,bkj->bik", A, A) + np.eye(3)
WIDE = rand(2, 3, seed=5).astype(np.float64)
TALL = rand(4, 2, seed=6).astype(np.float64)


def test_inverse_determinant_slogdet():
    compare(lambda m, a: m.matrix_inverse(a), [A], rtol=1e-10, grad_rtol=1e-8)
    compare(lambda m, a: m.linalg.inv(a, adjoint=True), [A], rtol=1e-10, grad_rtol=1e-8)
    compare(lambda m, a: m.matrix_determinant(a), [A], rtol=1e-10, grad_rtol=1e-8)
    compare(lambda m, a: list(m.linalg.slogdet(a - 3.5 * np.eye(3))), [A], rtol=1e-10, grad_rtol=1e-8)


def test_singular_matrix_errors():
    singular = np.ones((2, 2))
    assert compare_error(lambda m, a: m.matrix_inverse(a), [singular]) == "InvalidArgumentError"
    # TF 2's CPU kernel fills NaNs for a matrix that is not positive definite; dtf raises as TF1 did.
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Cholesky decomposition was not successful"):
            sess.run(tf.cholesky(tf.placeholder_with_default(-np.eye(2), [2, 2])))
    assert compare_error(lambda m, a: m.matrix_inverse(a), [np.ones((2, 3))]) == "ValueError"


@pytest.mark.parametrize("adjoint", [False, True])
def test_matrix_solve(adjoint):
    compare(lambda m, a, b: m.matrix_solve(a, b, adjoint=adjoint), [A, B], rtol=1e-10, grad_rtol=1e-8)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_triangular_solve(lower, adjoint):
    compare(
        lambda m, a, b: m.matrix_triangular_solve(a, b, lower=lower, adjoint=adjoint),
        [A, B],
        rtol=1e-10,
        grad_rtol=1e-8,
    )


def test_triangular_solve_broadcasts_batches():
    compare(lambda m, a, b: m.linalg.triangular_solve(a, b), [A[0], B], rtol=1e-10, grad_rtol=1e-8)


def test_cross():
    compare(
        lambda m, a, b: m.cross(a, b), [rand(4, 3, seed=3).astype(np.float64), rand(4, 3, seed=4).astype(np.float64)]
    )


def test_cholesky_and_composites():
    compare(lambda m, a: m.cholesky(a), [SPD], rtol=1e-10, grad_rtol=1e-8)
    compare(lambda m, a: m.linalg.logdet(a), [SPD], rtol=1e-10, grad_rtol=1e-8)
    compare(lambda m, a, b: m.cholesky_solve(m.cholesky(a), b), [SPD, B], rtol=1e-10, grad_rtol=1e-8)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("full", [False, True])
def test_qr(shape, full):
    x = rand(*shape, seed=7).astype(np.float64)
    if full and shape[0] > shape[1]:
        compare(lambda m, a: [abs(t) for t in m.qr(a, full_matrices=full)], [x], grad=False, rtol=1e-10)
        return
    compare(lambda m, a: [abs(t) for t in m.qr(a, full_matrices=full)], [x], rtol=1e-10, grad_rtol=1e-7)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape, full):
    x = rand(2, *shape, seed=8).astype(np.float64)

    def build(m, a):
        s, u, v = m.svd(a, full_matrices=full)
        k = min(shape)
        # u and v are unique up to sign: compare sign-invariant functions of them.
        recon = m.matmul(u[..., :, :k] * m.expand_dims(s, -2), v[..., :, :k], transpose_b=True)
        return [s, recon, abs(u[..., :, :k]), abs(v[..., :, :k])]

    compare(build, [x], rtol=1e-9, atol=1e-9, grad=not full, grad_rtol=1e-6, grad_atol=1e-9)
    compare(lambda m, a: m.svd(a, compute_uv=False), [x], rtol=1e-10, grad_rtol=1e-8)


def test_self_adjoint_eig():
    sym = SPD + rand(2, 3, 3, seed=9).astype(np.float64)  # only the lower triangle is read

    def build(m, a):
        e, v = m.self_adjoint_eig(a)
        return [e, v * v]

    compare(build, [sym], rtol=1e-9, atol=1e-10, grad_rtol=1e-7)
    compare(lambda m, a: m.self_adjoint_eigvals(a), [sym], rtol=1e-10, grad_rtol=1e-8)
    compare(lambda m, a: m.linalg.eigvalsh(a), [sym], rtol=1e-10, grad_rtol=1e-8)


def test_matrix_square_root_and_exponential():
    compare(lambda m, a: m.matrix_square_root(a), [SPD], rtol=1e-8, grad_rtol=1e-6)
    # TF's own expm gradient fails in graph mode (its while loop); dtf's is checked by finite differences.
    compare(lambda m, a: m.linalg.expm(a * 0.3), [A], rtol=1e-9, grad=False, static_shapes=False)
    check_gradient(lambda a: tf.linalg.expm(a * 0.3), [A[0]], rtol=1e-6)


def test_lu_and_helpers():
    compare(lambda m, a: list(m.linalg.lu(a)), [A], rtol=1e-10, grad=False)
    compare(lambda m, a: m.linalg.lu_reconstruct(*m.linalg.lu(a)), [A], rtol=1e-10, grad=False, static_shapes=False)
    compare(lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu(a), b), [A, B], rtol=1e-10, grad=False, static_shapes=False)
    compare(lambda m, a: m.linalg.lu_matrix_inverse(*m.linalg.lu(a)), [A], rtol=1e-10, grad=False, static_shapes=False)


@pytest.mark.parametrize("matrix", [TALL, WIDE], ids=["tall", "wide"])
@pytest.mark.parametrize("l2", [0.0, 0.5])
def test_matrix_solve_ls(matrix, l2):
    rhs = rand(matrix.shape[0], 2, seed=11).astype(np.float64)
    compare(lambda m, a, b: m.matrix_solve_ls(a, b, l2_regularizer=l2), [matrix, rhs], rtol=1e-9, grad_rtol=1e-7)
    compare(lambda m, a, b: m.linalg.lstsq(a, b, l2), [matrix, rhs], rtol=1e-9, grad=False)


@pytest.mark.parametrize(
    "ord_,axis",
    [("euclidean", None), (1, None), (np.inf, 0), (3, 1), ("fro", [0, 1]), (1, (0, 1)), (np.inf, [1, 0]), (2, (0, 1))],
    ids=str,
)
def test_norm(ord_, axis):
    x = rand(3, 4, seed=12).astype(np.float64)
    compare(lambda m, t: m.norm(t, ord=ord_, axis=axis), [x], rtol=1e-10, grad_rtol=1e-7, static_shapes=False)
    compare(
        lambda m, t: m.linalg.norm(t, ord=ord_, axis=axis, keepdims=True),
        [x],
        rtol=1e-10,
        grad=False,
        static_shapes=False,
    )


def test_trace_adjoint_matvec_pinv_rank_normalize():
    compare(lambda m, a: m.trace(a), [A])
    compare(lambda m, a: m.linalg.adjoint(a), [A])
    compare(lambda m, a, v: m.linalg.matvec(a, v), [A, B[..., 0]])
    compare(lambda m, a: m.linalg.pinv(a), [rand(2, 4, 3, seed=13).astype(np.float64)], rtol=1e-9, grad_rtol=1e-6)
    compare(lambda m: m.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])), [])
    compare(lambda m, a: list(m.linalg.normalize(a, axis=1)), [B], rtol=1e-10)


def test_names_of_tf1_aliases():
    with tf.Graph().as_default():
        x = tf.constant(SPD[0])
        assert tf.matrix_triangular_solve(x, x).op.name == "triangular_solve/MatrixTriangularSolve"
        assert tf.trace(x).op.name == "Trace"
        assert tf.linalg.det is tf.matrix_determinant and tf.linalg.inv is tf.matrix_inverse
        assert tf.linalg.eigh is tf.self_adjoint_eig and tf.linalg.solve is tf.matrix_solve
