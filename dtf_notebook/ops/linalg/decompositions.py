"""Factorizations: ``Cholesky``, ``Qr``, ``Svd``, ``SelfAdjointEigV2``, ``Lu``, and the matrix functions
``MatrixSquareRoot`` and ``MatrixExponential``, with TF's gradients (``Lu`` has none, as in TF).

``MatrixSquareRoot`` runs TF's real-Schur algorithm (``real_sqrtm``: NaN where no real root exists; torch has
none); ``MatrixExponential`` runs ``torch.linalg.matrix_exp`` and differentiates through the exponential of the
block matrix ``[[A^T, G], [0, A^T]]``, whose upper-right block is the gradient (TF builds ``expm`` from a Padé
approximant instead; the values agree to rounding).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(cholesky([[4.0, 2.0], [2.0, 5.0]])))
    [[2. 0.]
     [1. 2.]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import dense
from dtf_notebook.ops.linalg.common import LINALG_FLOAT, linalg_errors, matrix_batch, square_batch
from dtf_notebook.ops.linalg.solvers import matrix_solve, matrix_triangular_solve
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = ["cholesky", "qr", "svd", "self_adjoint_eig", "self_adjoint_eigvals", "matrix_square_root"]


def _input(x: Any, op_type: str) -> Tensor:
    t = convert_to_tensor(x, name="input")
    check_dtype(t, LINALG_FLOAT, op_type, "input")
    return t


def _adjoint(x: Tensor) -> Tensor:
    from dtf_notebook.ops.array.array_extras import matrix_transpose

    return matrix_transpose(x)


def _safe_reciprocal(x: Tensor, epsilon: float = 1e-20) -> Tensor:
    from dtf_notebook.ops import math_ops

    return math_ops.multiply(x, math_ops.reciprocal(math_ops.add(math_ops.multiply(x, x), epsilon)))


# ---- Cholesky -------------------------------------------------------------------------------------------------------
def _cholesky_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(x: torch.Tensor) -> torch.Tensor:
        with linalg_errors(op, "Cholesky decomposition was not successful. The input might not be valid."):
            return torch.linalg.cholesky(x)  # reads the lower triangle only, as TF's kernel does

    return run


def _cholesky_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.matrix_diag import eye, matrix_band_part, matrix_diag_part, matrix_set_diag

    l_ = op.outputs[0]
    num_rows = array_ops.shape(l_)[-1]
    batch_shape = array_ops.shape(l_)[:-2]
    l_inverse = matrix_triangular_solve(l_, eye(num_rows, batch_shape=batch_shape, dtype=l_.dtype))
    middle = math_ops.matmul(l_, dense(grad), adjoint_a=True)
    middle = matrix_set_diag(middle, math_ops.multiply(0.5, matrix_diag_part(middle)))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = math_ops.matmul(math_ops.matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    grad_a = math_ops.add(grad_a, _adjoint(grad_a))
    return [math_ops.multiply(grad_a, 0.5)]


op_registry.register_op(
    "Cholesky",
    infer=lambda op: [(op.inputs[0].dtype, square_batch(op.inputs[0], f"Cholesky '{op.name}'"))],
    kernel=_cholesky_kernel,
    grad=_cholesky_grad,
)


def cholesky(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The lower-triangular ``L`` with ``L @ L^T = input`` for each symmetric positive definite matrix (only the
    lower triangle of ``input`` is read).

    Raises:
        InvalidArgumentError: (at run time) a matrix is not positive definite.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cholesky([[9.0, 0.0], [3.0, 2.0]])))
        [[3. 0.]
         [1. 1.]]
    """
    with name_scope(name, "Cholesky", [input]) as scope:
        return make_op("Cholesky", [_input(input, "Cholesky")], name=scope).outputs[0]


# ---- Qr -------------------------------------------------------------------------------------------------------------
def _qr_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    shape = matrix_batch(x, f"Qr '{op.name}'")
    if shape.ndims is None:
        return [(x.dtype, unknown_shape()), (x.dtype, unknown_shape())]
    m, n = shape[-2].value, shape[-1].value
    full = op.get_attr("full_matrices")
    p = m if full else (min(m, n) if m is not None and n is not None else None)
    return [(x.dtype, shape[:-2].concatenate([m, p])), (x.dtype, shape[:-2].concatenate([p, n]))]


def _qr_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    mode = "complete" if op.get_attr("full_matrices") else "reduced"
    return lambda x: tuple(torch.linalg.qr(x, mode=mode))


def _qr_grad(op: Operation, dq: Any, dr: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.matrix_diag import matrix_band_part

    q, r = op.outputs
    dq, dr = dense(dq), dense(dr)
    if r.shape.ndims is None or r.shape[-2].value is None or r.shape[-1].value is None:
        raise ValueError(f"The gradient of Qr '{op.name}' needs the matrix sizes while building; got {r.shape}")
    if r.shape[-2].value > r.shape[-1].value and q.shape[-2].value == q.shape[-1].value:
        raise ValueError(
            f"The gradient of Qr '{op.name}' is not defined when nrows > ncols and full_matrices is true "
            f"(r's shape {r.shape}), as in TF"
        )

    def triangular_solve(x: Tensor, r_: Tensor) -> Tensor:
        """``x @ adjoint(inverse(r_))`` for an upper-triangular ``r_``."""
        return _adjoint(matrix_triangular_solve(r_, _adjoint(x), lower=False, adjoint=False))

    def square_and_deep(q_: Tensor, r_: Tensor, dq_: Tensor, dr_: Tensor) -> Tensor:
        qdq = math_ops.matmul(q_, dq_, adjoint_a=True)
        qdq_ = math_ops.subtract(qdq, _adjoint(qdq))
        rdr = math_ops.matmul(r_, dr_, adjoint_b=True)
        rdr_ = math_ops.subtract(rdr, _adjoint(rdr))
        tril = matrix_band_part(math_ops.add(qdq_, rdr_), -1, 0)
        grad_a = math_ops.matmul(q_, math_ops.add(dr_, triangular_solve(tril, r_)))
        grad_b = triangular_solve(math_ops.subtract(dq_, math_ops.matmul(q_, qdq)), r_)
        return math_ops.add(grad_a, grad_b)

    num_rows, num_cols = q.shape[-2].value, r.shape[-1].value
    if num_rows >= num_cols:
        return [square_and_deep(q, r, dq, dr)]
    a = op.inputs[0]
    y = a[..., :, num_rows:]
    u = r[..., :, :num_rows]
    dv = dr[..., :, num_rows:]
    du = dr[..., :, :num_rows]
    dy = math_ops.matmul(q, dv)
    dx = square_and_deep(q, u, math_ops.add(dq, math_ops.matmul(y, dv, adjoint_b=True)), du)
    return [array_ops.concat([dx, dy], axis=-1)]


op_registry.register_op("Qr", infer=_qr_infer, kernel=_qr_kernel, grad=_qr_grad)


def qr(input: Any, full_matrices: bool = False, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """The QR factorization ``input = q @ r`` of each matrix (``q`` with orthonormal columns, ``r`` upper
    triangular); ``full_matrices`` makes ``q`` square.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     q, r = tf.qr([[3.0, 1.0], [4.0, 2.0]])
        ...     print(abs(sess.run(r)).round(4))
        [[5.  2.2]
         [0.  0.4]]
    """
    with name_scope(name, "Qr", [input]) as scope:
        q, r = make_op("Qr", [_input(input, "Qr")], {"full_matrices": bool(full_matrices)}, name=scope).outputs
        return q, r


# ---- Svd ------------------------------------------------------------------------------------------------------------
def _svd_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    shape = matrix_batch(x, f"Svd '{op.name}'")
    if shape.ndims is None:
        return [(x.dtype, unknown_shape())] * 3
    m, n = shape[-2].value, shape[-1].value
    p = min(m, n) if m is not None and n is not None else None
    batch = shape[:-2]
    if not op.get_attr("compute_uv"):
        return [(x.dtype, batch.concatenate([p])), (x.dtype, TensorShape([0])), (x.dtype, TensorShape([0]))]
    full = op.get_attr("full_matrices")
    return [
        (x.dtype, batch.concatenate([p])),
        (x.dtype, batch.concatenate([m, m if full else p])),
        (x.dtype, batch.concatenate([n, n if full else p])),
    ]


def _svd_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    compute_uv, full = op.get_attr("compute_uv"), op.get_attr("full_matrices")

    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if not compute_uv:
            empty = torch.zeros(0, dtype=x.dtype, device=x.device)
            return torch.linalg.svdvals(x), empty, empty
        u, s, vh = torch.linalg.svd(x, full_matrices=full)
        return s, u, vh.transpose(-1, -2)

    return run


def _svd_grad(op: Operation, grad_s: Any, grad_u: Any, grad_v: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.matrix_diag import matrix_diag, matrix_set_diag

    a = op.inputs[0]
    a_shape = a.shape
    grad_s = dense(grad_s)
    grad_s_mat = matrix_diag(grad_s)
    if not op.get_attr("compute_uv"):
        _, u, v = svd(a, compute_uv=True)
        grad_a = math_ops.matmul(u, math_ops.matmul(grad_s_mat, v, adjoint_b=True))
        grad_a.set_shape(a_shape)
        return [grad_a]
    full_matrices = op.get_attr("full_matrices")
    s, u, v = op.outputs
    grad_u, grad_v = dense(grad_u), dense(grad_v)
    if a_shape.ndims is None or a_shape[-2].value is None or a_shape[-1].value is None:
        raise ValueError(f"The gradient of Svd '{op.name}' needs the matrix sizes while building; got {a_shape}")
    m, n = a_shape[-2].value, a_shape[-1].value
    use_adjoint = m > n
    if use_adjoint:
        m, n = n, m
        u, v = v, u
        grad_u, grad_v = grad_v, grad_u
    with control_dependencies([grad_s.op, grad_u.op, grad_v.op]):
        if full_matrices and abs(m - n) > 1:
            raise ValueError(
                f"The gradient of Svd '{op.name}' is not defined for abs(m - n) > 1 with full_matrices, as in TF "
                f"(m={m}, n={n})"
            )
        s_mat = matrix_diag(s)
        s2 = math_ops.square(s)
        f = matrix_set_diag(
            _safe_reciprocal(math_ops.subtract(array_ops.expand_dims(s2, -2), array_ops.expand_dims(s2, -1))),
            array_ops.zeros_like(s),
        )
        s_inv_mat = matrix_diag(_safe_reciprocal(s))
        v1 = v[..., :, :m]
        grad_v1 = grad_v[..., :, :m]
        u_gu = math_ops.matmul(u, grad_u, adjoint_a=True)
        v_gv = math_ops.matmul(v1, grad_v1, adjoint_a=True)
        f_u = math_ops.multiply(f, u_gu)
        f_v = math_ops.multiply(f, v_gv)
        term1_nouv = math_ops.add(
            math_ops.add(grad_s_mat, math_ops.matmul(math_ops.add(f_u, _adjoint(f_u)), s_mat)),
            math_ops.matmul(s_mat, math_ops.add(f_v, _adjoint(f_v))),
        )
        term1 = math_ops.matmul(u, math_ops.matmul(term1_nouv, v1, adjoint_b=True))
        if m == n:
            grad_a = term1
        else:
            gv1t = _adjoint(grad_v1)
            gv1t_v1 = math_ops.matmul(gv1t, v1)
            term2_nous = math_ops.subtract(gv1t, math_ops.matmul(gv1t_v1, v1, adjoint_b=True))
            if full_matrices:
                v2 = v[..., :, m:n]
                grad_v2 = grad_v[..., :, m:n]
                v1t_gv2 = math_ops.matmul(v1, grad_v2, adjoint_a=True)
                term2_nous = math_ops.subtract(term2_nous, math_ops.matmul(v1t_gv2, v2, adjoint_b=True))
            u_s_inv = math_ops.matmul(u, s_inv_mat)
            grad_a = math_ops.add(term1, math_ops.matmul(u_s_inv, term2_nous))
        if use_adjoint:
            grad_a = _adjoint(grad_a)
        grad_a.set_shape(a_shape)
        return [grad_a]


op_registry.register_op("Svd", infer=_svd_infer, kernel=_svd_kernel, grad=_svd_grad)


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True, name: str | None = None) -> Any:
    """The singular values ``s`` (descending) of each matrix and, with ``compute_uv``, ``u`` and ``v`` such that
    ``tensor = u @ diag(s) @ adjoint(v)``.

    Returns:
        ``(s, u, v)``, or ``s`` alone when ``compute_uv`` is False.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.svd([[3.0, 0.0], [0.0, -4.0]], compute_uv=False)))
        [4. 3.]
    """
    with name_scope(name, "Svd", [tensor]) as scope:
        attrs = {"compute_uv": bool(compute_uv), "full_matrices": bool(full_matrices)}
        s, u, v = make_op("Svd", [_input(tensor, "Svd")], attrs, name=scope).outputs
        return (s, u, v) if compute_uv else s


# ---- SelfAdjointEigV2 ------------------------------------------------------------------------------------------------
def _eig_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    shape = square_batch(x, f"SelfAdjointEigV2 '{op.name}'")
    if shape.ndims is None:
        return [(x.dtype, unknown_shape())] * 2
    e = shape[:-1]
    return [(x.dtype, e), (x.dtype, shape if op.get_attr("compute_v") else TensorShape([0]))]


def _eig_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    compute_v = op.get_attr("compute_v")

    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with linalg_errors(op, "Self-adjoint eigen decomposition was not successful."):
            # Both read the lower triangle only, as TF's kernel does.
            if not compute_v:
                return torch.linalg.eigvalsh(x), torch.zeros(0, dtype=x.dtype, device=x.device)
            e, v = torch.linalg.eigh(x)
            return e, v

    return run


def _eig_grad(op: Operation, grad_e: Any, grad_v: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.matrix_diag import matrix_band_part, matrix_diag, matrix_diag_part, matrix_set_diag

    e = op.outputs[0]
    grad_e = dense(grad_e)
    if op.get_attr("compute_v"):
        v = op.outputs[1]
        grad_v = dense(grad_v)
        f = matrix_set_diag(
            _safe_reciprocal(math_ops.subtract(array_ops.expand_dims(e, -2), array_ops.expand_dims(e, -1))),
            array_ops.zeros_like(e),
        )
        inner = math_ops.add(matrix_diag(grad_e), math_ops.multiply(f, math_ops.matmul(v, grad_v, adjoint_a=True)))
        grad_a = math_ops.matmul(v, math_ops.matmul(inner, v, adjoint_b=True))
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        grad_a = math_ops.matmul(v, math_ops.matmul(matrix_diag(grad_e), v, adjoint_b=True))
    # Only the lower triangle was read: fold the gradient onto it.
    grad_a = matrix_band_part(math_ops.add(grad_a, _adjoint(grad_a)), -1, 0)
    return [matrix_set_diag(grad_a, math_ops.multiply(0.5, matrix_diag_part(grad_a)))]


op_registry.register_op("SelfAdjointEigV2", infer=_eig_infer, kernel=_eig_kernel, grad=_eig_grad)


def self_adjoint_eig(tensor: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix (lower triangle read).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     e, v = tf.self_adjoint_eig([[2.0, 1.0], [1.0, 2.0]])
        ...     print(sess.run(e))
        [1. 3.]
    """
    with name_scope(name, "SelfAdjointEigV2", [tensor]) as scope:
        e, v = make_op(
            "SelfAdjointEigV2", [_input(tensor, "SelfAdjointEigV2")], {"compute_v": True}, name=scope
        ).outputs
        return e, v


def self_adjoint_eigvals(tensor: Any, name: str | None = None) -> Tensor:
    """The eigenvalues (ascending) of each symmetric matrix.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.self_adjoint_eigvals([[2.0, 0.0], [0.0, -1.0]])))
        [-1.  2.]
    """
    with name_scope(name, "SelfAdjointEigV2", [tensor]) as scope:
        x = _input(tensor, "SelfAdjointEigV2")
        return make_op("SelfAdjointEigV2", [x], {"compute_v": False}, name=scope).outputs[0]


# ---- MatrixSquareRoot ------------------------------------------------------------------------------------------------
def _sqrtm_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    from scipy import linalg  # a dependency of scikit-learn; imported only when a MatrixSquareRoot runs

    from dtf_notebook.ops.linalg.real_sqrtm import real_sqrtm

    def root(m: np.ndarray) -> np.ndarray:
        # Real matrices take TF's real-Schur path (NaN without a real root); complex ones the principal root.
        return real_sqrtm(m) if not np.iscomplexobj(m) else linalg.sqrtm(m)

    def run(x: torch.Tensor) -> torch.Tensor:
        values = x.detach().cpu().numpy()
        flat = values.reshape((-1,) + values.shape[-2:])
        roots = [root(m) if m.size else m for m in flat]
        out = np.stack(roots).reshape(values.shape) if roots else values
        return torch.from_numpy(np.ascontiguousarray(out, dtype=values.dtype)).to(x.device)

    return run


def _sqrtm_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.matrix_diag import eye

    def kronecker(b1: Tensor, b2: Tensor) -> Tensor:
        """The Kronecker product of two batches of square matrices."""
        b1_shape, b2_shape = array_ops.shape(b1), array_ops.shape(b2)
        b1_order, b2_order = b1_shape[-1], b2_shape[-1]
        shape_slice = array_ops.slice(b1_shape, [0], array_ops.stack([math_ops.subtract(array_ops.size(b1_shape), 2)]))
        b1_r = array_ops.reshape(b1, array_ops.concat([shape_slice, [b1_order], [1], [b1_order], [1]], 0))
        b2_r = array_ops.reshape(b2, array_ops.concat([shape_slice, [1], [b2_order], [1], [b2_order]], 0))
        order_prod = math_ops.multiply(b1_order, b2_order)
        return array_ops.reshape(
            math_ops.multiply(b1_r, b2_r), array_ops.concat([shape_slice, [order_prod], [order_prod]], 0)
        )

    # TF's formula: vec(dA) solves (I kron R^T + R kron I) vec(dR^T) = vec(G^T).
    sqrtm = op.outputs[0]
    shape = array_ops.shape(sqrtm)
    order = shape[-1]
    matrix_count = math_ops.reduce_prod(shape[0:-2])
    eye_batch = array_ops.reshape(
        array_ops.tile(array_ops.reshape(eye(order, dtype=sqrtm.dtype), [-1]), array_ops.stack([matrix_count])), shape
    )
    ksum = math_ops.add(kronecker(eye_batch, _adjoint(sqrtm)), kronecker(sqrtm, eye_batch))
    shape_slice = array_ops.slice(shape, [0], array_ops.stack([math_ops.subtract(array_ops.size(shape), 2)]))
    vec_da = array_ops.reshape(
        _adjoint(dense(grad)),
        array_ops.concat([shape_slice, array_ops.stack([math_ops.multiply(order, order)]), [1]], 0),
    )
    vec_dsqrtm = matrix_solve(ksum, vec_da)
    return [_adjoint(array_ops.reshape(vec_dsqrtm, shape))]


op_registry.register_op(
    "MatrixSquareRoot",
    infer=lambda op: [(op.inputs[0].dtype, square_batch(op.inputs[0], f"MatrixSquareRoot '{op.name}'"))],
    kernel=_sqrtm_kernel,
    grad=_sqrtm_grad,
    cpu_only=True,
)


def matrix_square_root(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The principal square root ``R`` (``R @ R = input``) of each matrix with no eigenvalue on the closed negative
    real axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_square_root([[4.0, 0.0], [0.0, 9.0]])))
        [[2. 0.]
         [0. 3.]]
    """
    with name_scope(name, "MatrixSquareRoot", [input]) as scope:
        return make_op("MatrixSquareRoot", [_input(input, "MatrixSquareRoot")], name=scope).outputs[0]


# ---- MatrixExponential --------------------------------------------------------------------------------------------
def _expm_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops

    # d/dA of <G, exp(A)> is the upper-right block of exp([[A^T, G], [0, A^T]]).
    a_t = _adjoint(op.inputs[0])
    grad = dense(grad)
    zeros = array_ops.zeros_like(a_t)
    block = array_ops.concat([array_ops.concat([a_t, grad], -1), array_ops.concat([zeros, a_t], -1)], -2)
    n = array_ops.shape(a_t)[-1]
    full = expm(block)
    return [full[..., :n, n:]]


op_registry.register_op(
    "MatrixExponential",
    infer=lambda op: [(op.inputs[0].dtype, square_batch(op.inputs[0], f"MatrixExponential '{op.name}'"))],
    kernel=lambda op, ctx: torch.linalg.matrix_exp,
    grad=_expm_grad,
)


def expm(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The matrix exponential of each square matrix.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linalg.expm([[0.0, 0.0], [0.0, 1.0]])))
        [[1.        0.       ]
         [0.        2.7182817]]
    """
    with name_scope(name, "matrix_exponential", [input]):
        x = _input(input, "MatrixExponential")
        return make_op("MatrixExponential", [x], name="MatrixExponential").outputs[0]


# ---- Lu -------------------------------------------------------------------------------------------------------------
def _lu_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    shape = square_batch(x, f"Lu '{op.name}'")
    perm = shape[:-1] if shape.ndims is not None else unknown_shape()
    return [(x.dtype, shape), (op.get_attr("output_idx_type"), perm)]


def _lu_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.runtime.values import torch_dtype

    idx_type = torch_dtype(op.get_attr("output_idx_type"))

    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with linalg_errors(op, "Input is not invertible."):
            lu, pivots = torch.linalg.lu_factor(x)
        # LAPACK's pivots are row swaps; TF reports the permutation they make: row i of P @ x is x[perm[i]].
        n = x.shape[-1]
        perm = torch.arange(n, device=x.device).expand(x.shape[:-1]).clone()
        swaps = (pivots - 1).long()
        for i in range(n):
            j = swaps[..., i : i + 1]
            row_i = perm[..., i : i + 1].clone()
            perm[..., i : i + 1] = torch.gather(perm, -1, j)
            perm.scatter_(-1, j, row_i)
        return lu, perm.to(idx_type)

    return run


op_registry.register_op("Lu", infer=_lu_infer, kernel=_lu_kernel, grad=None)


def lu(input: Any, output_idx_type: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002
    """The LU factorization with partial pivoting: ``lu`` holds ``L`` (unit diagonal, below) and ``U`` (on and
    above the diagonal), and ``p`` the row permutation, so that ``L @ U = gather(input, p)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     lu_, p = tf.linalg.lu([[1.0, 2.0], [3.0, 4.0]])
        ...     print(sess.run(p))
        [1 0]
    """
    with name_scope(name, "Lu", [input]) as scope:
        attrs = {"output_idx_type": dtypes.as_dtype(output_idx_type)}
        lu_, p = make_op("Lu", [_input(input, "Lu")], attrs, name=scope).outputs
        return lu_, p
