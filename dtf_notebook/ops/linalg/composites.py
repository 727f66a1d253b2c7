"""TF's Python-level linear algebra, built from the ops as TF builds it: ``trace``, ``logdet``, ``adjoint``,
``matvec``, ``cholesky_solve``, ``matrix_solve_ls`` (``lstsq``), ``norm``, ``pinv``, ``matrix_rank``, ``normalize``
and the LU helpers ``lu_reconstruct``, ``lu_solve`` and ``lu_matrix_inverse``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run([trace([[1.0, 2.0], [3.0, 4.0]]), norm([3.0, 4.0])]))
    [np.float32(5.0), np.float32(5.0)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.array_extras import matrix_transpose
from dtf_notebook.ops.array.matrix_diag import eye, matrix_band_part, matrix_diag_part, matrix_set_diag
from dtf_notebook.ops.linalg.decompositions import cholesky, svd
from dtf_notebook.ops.linalg.solvers import matrix_triangular_solve
from dtf_notebook.ops.math._common import deprecated_arg
from dtf_notebook.ops.math.select_v2 import where_v2

__all__ = ["trace", "cholesky_solve", "matrix_solve_ls", "norm"]


def trace(x: Any, name: str | None = None) -> Tensor:
    """The sum of each matrix's diagonal.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.trace([[[1, 2], [3, 4]], [[5, 0], [0, 5]]])))
        [ 5 10]
    """
    with name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return math_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


def logdet(matrix: Any, name: str | None = None) -> Tensor:
    """``log(det(matrix))`` of symmetric positive definite matrices, from their Cholesky factor (stable).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.logdet([[2.0, 0.0], [0.0, 3.0]])).round(4))
        1.7918
    """
    with name_scope(name, "logdet", [matrix]):
        chol = cholesky(matrix)
        return math_ops.multiply(2.0, math_ops.reduce_sum(math_ops.log(matrix_diag_part(chol)), axis=[-1]))


def adjoint(matrix: Any, name: str | None = None) -> Tensor:
    """The conjugate transpose of each matrix (the transpose, for real matrices).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.adjoint([[1, 2]])))
        [[1]
         [2]]
    """
    with name_scope(name, "adjoint", [matrix]):
        return matrix_transpose(convert_to_tensor(matrix, name="matrix"), conjugate=True)


def matvec(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """The matrix-vector product ``a @ b`` over batches (``b``'s last axis is the vector).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.matvec([[1.0, 2.0], [3.0, 4.0]], [1.0, 1.0])))
        [3. 7.]
    """
    with name_scope(name, "MatVec", [a, b]):
        out = math_ops.matmul(a, array_ops.expand_dims(b, axis=-1), transpose_a=transpose_a, adjoint_a=adjoint_a)
        return array_ops.squeeze(out, axis=-1)


def cholesky_solve(chol: Any, rhs: Any, name: str | None = None) -> Tensor:
    """``X`` with ``A @ X = rhs`` given the Cholesky factor ``chol`` of ``A``: two triangular solves.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cholesky_solve([[2.0, 0.0], [0.0, 1.0]], [[8.0], [1.0]])))
        [[2.]
         [1.]]
    """
    with name_scope(name, "cholesky_solve", [chol, rhs]):
        y = matrix_triangular_solve(chol, rhs, adjoint=False, lower=True)
        return matrix_triangular_solve(chol, y, adjoint=True, lower=True)


def _regularized_gramian_cholesky(matrix: Tensor, l2_regularizer: Any, first_kind: bool) -> Tensor:
    gramian = math_ops.matmul(matrix, matrix, adjoint_a=first_kind, adjoint_b=not first_kind)
    if isinstance(l2_regularizer, Tensor) or l2_regularizer != 0:
        matrix_shape = array_ops.shape(matrix)
        batch_shape = matrix_shape[:-2]
        small_dim = matrix_shape[-1] if first_kind else matrix_shape[-2]
        identity = eye(small_dim, batch_shape=batch_shape, dtype=matrix.dtype)
        small_static = matrix.shape[-1 if first_kind else -2] if matrix.shape.ndims is not None else None
        if matrix.shape.ndims is not None:
            identity.set_shape(matrix.shape[:-2].concatenate([small_static, small_static]))
        gramian = math_ops.add(gramian, math_ops.multiply(l2_regularizer, identity))
    return cholesky(gramian)


def matrix_solve_ls(
    matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True, name: str | None = None
) -> Tensor:
    """The least-squares solution of ``matrix @ X = rhs`` (minimum-norm when underdetermined), with an optional
    ``l2_regularizer``, by TF's normal-equation composite (``fast=True``, the only method offered).

    Raises:
        ValueError: ``fast`` is False, or the matrix sizes are unknown while building.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.matrix_solve_ls([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0], [1.0], [2.0]])
        ...     print(sess.run(x).round(4))
        [[1.]
         [1.]]
    """
    if not fast:
        raise ValueError("matrix_solve_ls is implemented by TF's fast (Cholesky) method only; pass fast=True")
    with name_scope(name, "matrix_solve_ls", [matrix, rhs, l2_regularizer]):
        matrix = convert_to_tensor(matrix, name="matrix")
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype, name="rhs")
        sizes = matrix.shape[-2:] if matrix.shape.ndims is not None else None
        if sizes is None or not sizes.is_fully_defined():
            raise ValueError(f"matrix_solve_ls needs the matrix sizes while building, got shape {matrix.shape}")
        if sizes[-2].value >= sizes[-1].value:
            chol = _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=True)
            return cholesky_solve(chol, math_ops.matmul(matrix, rhs, adjoint_a=True))
        chol = _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind=False)
        return math_ops.matmul(matrix, cholesky_solve(chol, rhs), adjoint_a=True)


def norm(
    tensor: Any,
    ord: Any = "euclidean",  # noqa: A002 - TF's name
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Vector norms (``axis`` None or an int) and matrix norms (``axis`` a pair): ``"euclidean"``/``"fro"``, 1,
    2 (the largest singular value, for matrices), ``np.inf``, or any positive ``p`` for vectors.

    Raises:
        ValueError: an unsupported ``ord`` or ``axis``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.norm([[1.0, -2.0], [3.0, 4.0]], ord=1, axis=[-2, -1])))
        6.0
    """
    keepdims = bool(deprecated_arg("keepdims", keepdims, "keep_dims", keep_dims) or False)
    is_matrix_norm = isinstance(axis, tuple | list) and len(axis) == 2
    if is_matrix_norm:
        axis = tuple(axis)
        if not isinstance(axis[0], int) or not isinstance(axis[1], int) or axis[0] == axis[1]:
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        supported = ["euclidean", "fro", 1, 2, np.inf]
        if ord not in supported:
            raise ValueError(f"'ord' must be a supported matrix norm in {supported}, got {ord}")
    else:
        if not (isinstance(axis, int) or axis is None):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        if ord not in ["euclidean", 1, 2, np.inf] and (not np.isreal(ord) or ord <= 0):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
        if axis is not None:
            axis = (axis,)
    with name_scope(name, "norm", [tensor]):
        tensor = convert_to_tensor(tensor)
        if ord in ["fro", "euclidean", 2, 2.0]:
            if is_matrix_norm and ord in [2, 2.0]:
                result = _matrix_2_norm(tensor, axis)
            else:
                result = math_ops.sqrt(math_ops.reduce_sum(math_ops.multiply(tensor, tensor), axis, keepdims=True))
        else:
            result = math_ops.abs(tensor)
            if ord == 1:
                result = math_ops.reduce_sum(result, None if axis is None else axis[0], keepdims=True)
                if is_matrix_norm:
                    result = math_ops.reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix_norm:
                    result = math_ops.reduce_sum(result, axis[1], keepdims=True)
                result = math_ops.reduce_max(result, None if axis is None else axis[0], keepdims=True)
            else:
                summed = math_ops.reduce_sum(math_ops.pow(result, ord), axis, keepdims=True)
                result = math_ops.pow(summed, 1.0 / ord)
        if not keepdims:
            result = array_ops.squeeze(result, axis)
        return result


def _matrix_2_norm(tensor: Tensor, axis: tuple[int, int]) -> Tensor:
    """The largest singular value over the two ``axis``, kept as size-1 axes (TF's permute-and-SVD)."""
    rank = tensor.shape.ndims
    if rank is None:
        raise ValueError("The matrix 2-norm needs a tensor of known rank")
    positive = [a + rank if a < 0 else a for a in axis]
    before = [i for i in range(rank) if i not in positive] + positive
    after = list(np.argsort(before))
    permed = array_ops.transpose(tensor, perm=before)
    singular = svd(permed, compute_uv=False)
    top = array_ops.expand_dims(math_ops.reduce_max(math_ops.abs(singular), axis=-1, keepdims=True), axis=-1)
    return array_ops.transpose(top, perm=[int(p) for p in after])


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``tensor`` divided by its :func:`norm` along ``axis``, and that norm.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     unit, n = tf.linalg.normalize([3.0, 4.0])
        ...     print(sess.run([unit, n]))
        [array([0.6, 0.8], dtype=float32), array([5.], dtype=float32)]
    """
    with name_scope(name, "normalize", [tensor]):
        tensor = convert_to_tensor(tensor)
        n = norm(tensor, ord, axis, keepdims=True)
        n = math_ops.cast(n, tensor.dtype)
        return math_ops.truediv(tensor, n), n


def pinv(a: Any, rcond: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD; singular values below ``rcond`` times the
    largest are dropped (``rcond`` defaults to ``10 * max(m, n) * eps``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.pinv([[2.0, 0.0], [0.0, 0.0]])))
        [[0.5 0. ]
         [0.  0. ]]
    """
    with name_scope(name or "pinv"):
        a = convert_to_tensor(a, name="a")
        dtype = a.dtype.as_numpy_dtype
        if rcond is None:
            rows = a.shape[-2].value if a.shape.ndims is not None else None
            cols = a.shape[-1].value if a.shape.ndims is not None else None
            if rows is not None and cols is not None:
                max_rows_cols: Any = float(max(rows, cols))
            else:
                shape = array_ops.shape(a)
                max_rows_cols = math_ops.cast(math_ops.maximum(shape[-2], shape[-1]), a.dtype)
            rcond = math_ops.multiply(10.0 * np.finfo(dtype).eps, max_rows_cols)
        rcond = convert_to_tensor(rcond, dtype=a.dtype, name="rcond")
        singular_values, left, right = svd(a, full_matrices=False, compute_uv=True)
        cutoff = math_ops.multiply(rcond, math_ops.reduce_max(singular_values, axis=-1))
        singular_values = where_v2(
            math_ops.greater(singular_values, array_ops.expand_dims(cutoff, -1)),
            singular_values,
            convert_to_tensor(np.array(np.inf, dtype)),
        )
        a_pinv = math_ops.matmul(
            math_ops.truediv(right, array_ops.expand_dims(singular_values, -2)), left, adjoint_b=True
        )
        if a.shape.ndims is not None:
            a_pinv.set_shape(a.shape[:-2].concatenate([a.shape[-1], a.shape[-2]]))
        return a_pinv


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The number of singular values of each matrix above ``tol`` (default ``eps * max(m, n) * max(s)``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.matrix_rank([[1.0, 2.0], [2.0, 4.0]])))
        1
    """
    with name_scope(name or "matrix_rank"):
        a = convert_to_tensor(a, name="a")
        s = svd(a, compute_uv=False)
        if tol is None:
            if a.shape.ndims is not None and a.shape[-2:].is_fully_defined():
                m: Any = int(np.max(a.shape[-2:].as_list()))
            else:
                m = math_ops.reduce_max(array_ops.shape(a)[-2:])
            eps = np.finfo(a.dtype.as_numpy_dtype).eps
            tol = math_ops.multiply(
                math_ops.multiply(eps, math_ops.cast(m, a.dtype)), math_ops.reduce_max(s, axis=-1, keepdims=True)
            )
        return math_ops.reduce_sum(math_ops.cast(math_ops.greater(s, tol), dtypes.int32), axis=-1)


# ---- LU helpers -------------------------------------------------------------------------------------------------
def _unit_lower(lower_upper: Tensor) -> Tensor:
    shape = array_ops.shape(lower_upper)
    return matrix_set_diag(matrix_band_part(lower_upper, -1, 0), array_ops.ones(shape[:-1], dtype=lower_upper.dtype))


def _permute_rows(x: Tensor, perm: Tensor) -> Tensor:
    """Row ``i`` of each result matrix is row ``perm[..., i]`` of ``x``."""
    batch = perm.shape.ndims - 1 if perm.shape.ndims is not None else None
    if batch is None:
        raise ValueError("The LU helpers need a permutation of known rank")
    return array_ops.gather(x, perm, axis=batch, batch_dims=batch)


def lu_reconstruct(lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The matrix whose LU factorization is ``(lower_upper, perm)`` (the inverse of :func:`tf.linalg.lu`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.lu_reconstruct(*tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]]))))
        [[1. 2.]
         [3. 4.]]
    """
    from dtf_notebook.ops.math.sorting import argsort

    with name_scope(name or "lu_reconstruct"):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        x = math_ops.matmul(_unit_lower(lower_upper), matrix_band_part(lower_upper, 0, -1))
        x = _permute_rows(x, argsort(perm, axis=-1))  # the inverse permutation
        x.set_shape(lower_upper.shape)
        return x


def lu_solve(lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """``X`` with ``A @ X = rhs``, given the LU factorization ``(lower_upper, perm)`` of ``A``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     lu_, p = tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]])
        ...     print(sess.run(tf.linalg.lu_solve(lu_, p, [[5.0], [11.0]])).round(4))
        [[1.]
         [2.]]
    """
    with name_scope(name or "lu_solve"):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        rhs = convert_to_tensor(rhs, name="rhs", dtype=lower_upper.dtype)
        permuted_rhs = _permute_rows(rhs, perm)
        y = matrix_triangular_solve(_unit_lower(lower_upper), permuted_rhs, lower=True)
        return matrix_triangular_solve(lower_upper, y, lower=False)


def lu_matrix_inverse(lower_upper: Any, perm: Any, validate_args: bool = False, name: str | None = None) -> Tensor:
    """The inverse of the matrix whose LU factorization is ``(lower_upper, perm)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.lu_matrix_inverse(*tf.linalg.lu([[2.0, 0.0], [0.0, 4.0]]))))
        [[0.5  0.  ]
         [0.   0.25]]
    """
    with name_scope(name or "lu_matrix_inverse"):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        shape = array_ops.shape(lower_upper)
        identity = eye(shape[-1], batch_shape=shape[:-2], dtype=lower_upper.dtype)
        return lu_solve(lower_upper, perm, identity)
