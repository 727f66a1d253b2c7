"""Inverses, determinants and linear solves: ``MatrixInverse``, ``MatrixDeterminant``, ``LogMatrixDeterminant``,
``MatrixSolve``, ``MatrixTriangularSolve``, and the vector product ``Cross``, with TF's gradients.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.constant([[2.0, 0.0], [0.0, 4.0]])
    ...     print(sess.run([matrix_determinant(a), matrix_solve(a, [[2.0], [2.0]])]))
    [np.float32(8.0), array([[1. ],
           [0.5]], dtype=float32)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import dense
from dtf_notebook.ops.array.diagnostics import fmt_shape, invalid
from dtf_notebook.ops.linalg.common import LINALG_FLOAT, linalg_errors, matrix_batch, square_batch
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = [
    "matrix_inverse",
    "matrix_determinant",
    "matrix_solve",
    "matrix_triangular_solve",
    "cross",
]


def _square_input(x: Any, op_type: str) -> Tensor:
    t = convert_to_tensor(x, name="input")
    check_dtype(t, LINALG_FLOAT, op_type, "input")
    return t


def _mt(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(-1, -2)


# ---- MatrixInverse ----------------------------------------------------------------------------------------------
def _inverse_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    adjoint = op.get_attr("adjoint")

    def run(x: torch.Tensor) -> torch.Tensor:
        with linalg_errors(op, "Input is not invertible."):
            return torch.linalg.inv(_mt(x) if adjoint else x)

    return run


def _inverse_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.math_ops import matmul, negative

    ainv = op.outputs[0]
    adjoint = op.get_attr("adjoint")
    inner = matmul(dense(grad), ainv, adjoint_a=adjoint, adjoint_b=not adjoint)
    return [negative(matmul(ainv, inner, adjoint_a=not adjoint))]


op_registry.register_op(
    "MatrixInverse",
    infer=lambda op: [(op.inputs[0].dtype, square_batch(op.inputs[0], f"MatrixInverse '{op.name}'"))],
    kernel=_inverse_kernel,
    grad=_inverse_grad,
)


def matrix_inverse(input: Any, adjoint: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of each square matrix (of its adjoint with ``adjoint=True``).

    Raises:
        InvalidArgumentError: (at run time) a matrix is singular.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_inverse([[2.0, 0.0], [0.0, 4.0]])))
        [[0.5  0.  ]
         [0.   0.25]]
    """
    with name_scope(name, "MatrixInverse", [input]) as scope:
        x = _square_input(input, "MatrixInverse")
        return make_op("MatrixInverse", [x], {"adjoint": bool(adjoint)}, name=scope).outputs[0]


# ---- MatrixDeterminant, LogMatrixDeterminant ------------------------------------------------------------------------
def _batch_only(op: Operation) -> TensorShape:
    shape = square_batch(op.inputs[0], f"{op.type} '{op.name}'")
    return shape[:-2] if shape.ndims is not None else unknown_shape()


def _det_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops

    a, c = op.inputs[0], op.outputs[0]
    a_adj_inv = matrix_inverse(a, adjoint=True)
    multipliers = array_ops.reshape(
        math_ops.multiply(dense(grad), c), array_ops.concat([array_ops.shape(c), [1, 1]], 0)
    )
    return [math_ops.multiply(multipliers, a_adj_inv)]


def _log_det_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        sign, log_abs = torch.linalg.slogdet(x)
        return sign, log_abs

    return run


def _log_det_grad(op: Operation, _: Any, grad_b: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops

    a, c = op.inputs[0], op.outputs[1]
    a_adj_inv = matrix_inverse(a, adjoint=True)
    multipliers = array_ops.reshape(dense(grad_b), array_ops.concat([array_ops.shape(c), [1, 1]], 0))
    return [math_ops.multiply(multipliers, a_adj_inv)]


op_registry.register_op(
    "MatrixDeterminant",
    infer=lambda op: [(op.inputs[0].dtype, _batch_only(op))],
    kernel=lambda op, ctx: torch.linalg.det,
    grad=_det_grad,
)
op_registry.register_op(
    "LogMatrixDeterminant",
    infer=lambda op: [(op.inputs[0].dtype, _batch_only(op))] * 2,
    kernel=_log_det_kernel,
    grad=_log_det_grad,
)


def matrix_determinant(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The determinant of each square matrix.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_determinant([[[1.0, 2.0], [3.0, 4.0]]])))
        [-2.]
    """
    with name_scope(name, "MatrixDeterminant", [input]) as scope:
        x = _square_input(input, "MatrixDeterminant")
        return make_op("MatrixDeterminant", [x], name=scope).outputs[0]


def slogdet(input: Any, name: str | None = None) -> tuple[Tensor, Tensor]:  # noqa: A002 - TF's name
    """The sign and the log of the absolute value of each determinant (stable where the determinant under- or
    overflows); only the log has a gradient.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sign, log_abs = tf.linalg.slogdet([[1.0, 2.0], [3.0, 4.0]])
        ...     print(sess.run([sign, log_abs]))
        [np.float32(-1.0), np.float32(0.6931472)]
    """
    with name_scope(name, "LogMatrixDeterminant", [input]) as scope:
        x = _square_input(input, "LogMatrixDeterminant")
        sign, log_abs = make_op("LogMatrixDeterminant", [x], name=scope).outputs
        return sign, log_abs


# ---- MatrixSolve -----------------------------------------------------------------------------------------------------
def _solve_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    sa = square_batch(a, f"MatrixSolve '{op.name}'")
    sb = matrix_batch(b, f"MatrixSolve '{op.name}'")
    if sa.ndims is None or sb.ndims is None:
        return [(b.dtype, unknown_shape() if sb.ndims is None else sb)]
    try:
        batch = sa[:-2].merge_with(sb[:-2])
        rows = sa[-1].merge_with(sb[-2])
    except ValueError:
        raise ValueError(
            f"Shapes {fmt_shape(sa)} and {fmt_shape(sb)} do not fit MatrixSolve '{op.name}': the batch dimensions and "
            "the matrix order must match the right-hand side's"
        ) from None
    return [(b.dtype, batch.concatenate([rows, sb[-1]]))]


def _solve_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    adjoint = op.get_attr("adjoint")

    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        with linalg_errors(op, "Input matrix is not invertible."):
            return torch.linalg.solve(_mt(a) if adjoint else a, b)

    return run


def _solve_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.math_ops import matmul, negative

    a = op.inputs[0]
    adjoint = op.get_attr("adjoint")
    c = op.outputs[0]
    grad_b = matrix_solve(a, dense(grad), adjoint=not adjoint)
    grad_a = matmul(c, grad_b, adjoint_b=True) if adjoint else matmul(grad_b, c, adjoint_b=True)
    return [negative(grad_a), grad_b]


op_registry.register_op("MatrixSolve", infer=_solve_infer, kernel=_solve_kernel, grad=_solve_grad)


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: str | None = None) -> Tensor:
    """``X`` with ``matrix @ X = rhs`` (``adjoint(matrix) @ X = rhs`` with ``adjoint=True``) for each batch entry.

    Raises:
        InvalidArgumentError: (at run time) a matrix is singular.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_solve([[1.0, 1.0], [0.0, 2.0]], [[3.0], [2.0]])))
        [[2.]
         [1.]]
    """
    with name_scope(name, "MatrixSolve", [matrix, rhs]) as scope:
        a = _square_input(matrix, "MatrixSolve")
        b = convert_to_tensor(rhs, dtype=a.dtype, name="rhs")
        return make_op("MatrixSolve", [a, b], {"adjoint": bool(adjoint)}, name=scope).outputs[0]


# ---- MatrixTriangularSolve ------------------------------------------------------------------------------------------
def _triangular_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    sa = square_batch(a, f"MatrixTriangularSolve '{op.name}'")
    sb = matrix_batch(b, f"MatrixTriangularSolve '{op.name}'")
    if sa.ndims is None or sb.ndims is None:
        return [(b.dtype, unknown_shape())]
    try:
        batch = broadcast_shapes(sa[:-2], sb[:-2])  # the batch dimensions broadcast (TF2's kernel)
        rows = sa[-1].merge_with(sb[-2])
    except ValueError:
        raise ValueError(
            f"Shapes {fmt_shape(sa)} and {fmt_shape(sb)} do not fit MatrixTriangularSolve '{op.name}'"
        ) from None
    return [(b.dtype, batch.concatenate([rows, sb[-1]]))]


def _triangular_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    lower, adjoint = op.get_attr("lower"), op.get_attr("adjoint")

    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # Only the triangle named by `lower` is read; a zero on its diagonal gives inf/nan, as in TF.
        matrix = torch.tril(a) if lower else torch.triu(a)
        if adjoint:
            matrix = _mt(matrix)
        batch = torch.broadcast_shapes(matrix.shape[:-2], b.shape[:-2])
        matrix = matrix.expand(batch + matrix.shape[-2:])
        b = b.expand(batch + b.shape[-2:])
        return torch.linalg.solve_triangular(matrix, b, upper=lower == adjoint)

    return run


def _triangular_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.array.matrix_diag import matrix_band_part

    a, b = op.inputs
    adjoint, lower = op.get_attr("adjoint"), op.get_attr("lower")
    c = op.outputs[0]
    grad_b = matrix_triangular_solve(a, dense(grad), lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = math_ops.negative(math_ops.matmul(c, grad_b, adjoint_b=True))
    else:
        grad_a = math_ops.negative(math_ops.matmul(grad_b, c, adjoint_b=True))
    grad_a = matrix_band_part(grad_a, -1, 0) if lower else matrix_band_part(grad_a, 0, -1)
    if a.shape.is_fully_defined() and b.shape.is_fully_defined() and a.shape[:-2] == b.shape[:-2]:
        return [grad_a, grad_b]
    # Broadcast batch dimensions: sum each gradient back to its input's shape.
    a_shape, b_shape = array_ops.shape(a), array_ops.shape(b)
    ra, rb = math_ops.broadcast_gradient_args(a_shape[:-2], b_shape[:-2])
    grad_a = array_ops.reshape(math_ops.reduce_sum(grad_a, axis=ra), a_shape)
    grad_b = array_ops.reshape(math_ops.reduce_sum(grad_b, axis=rb), b_shape)
    return [grad_a, grad_b]


op_registry.register_op(
    "MatrixTriangularSolve", infer=_triangular_infer, kernel=_triangular_kernel, grad=_triangular_grad
)


def matrix_triangular_solve(
    matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False, name: str | None = None
) -> Tensor:
    """``X`` with ``matrix @ X = rhs`` for lower (or upper, ``lower=False``) triangular matrices; the other triangle
    is not read. Batch dimensions broadcast.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_triangular_solve([[2.0, 9.0], [1.0, 1.0]], [[4.0], [3.0]])))
        [[2.]
         [1.]]
    """
    with name_scope(name, "triangular_solve", [matrix, rhs]):
        a = _square_input(matrix, "MatrixTriangularSolve")
        b = convert_to_tensor(rhs, dtype=a.dtype, name="rhs")
        attrs = {"lower": bool(lower), "adjoint": bool(adjoint)}
        return make_op("MatrixTriangularSolve", [a, b], attrs, name="MatrixTriangularSolve").outputs[0]


# ---- Cross ----------------------------------------------------------------------------------------------------------
def _cross_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    try:
        shape = a.shape.merge_with(b.shape)
    except ValueError:
        raise ValueError(f"Shapes {fmt_shape(a.shape)} and {fmt_shape(b.shape)} differ for Cross '{op.name}'") from None
    if shape.ndims is not None and shape[-1].value not in (None, 3):
        raise ValueError(f"Dimension must be 3 but is {shape[-1].value} for Cross '{op.name}'")
    return [(a.dtype, shape)]


def _cross_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if a.shape != b.shape or a.shape[-1] != 3:
            raise invalid(op, f"a and b must have the same shape ending in 3, got {list(a.shape)} and {list(b.shape)}")
        return torch.linalg.cross(a, b, dim=-1)

    return run


op_registry.register_op(
    "Cross",
    infer=_cross_infer,
    kernel=_cross_kernel,
    grad=lambda op, grad: [cross(op.inputs[1], dense(grad)), cross(dense(grad), op.inputs[0])],
)


def cross(a: Any, b: Any, name: str | None = None) -> Tensor:
    """The cross product of 3-vectors along the last axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cross([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])))
        [0. 0. 1.]
    """
    from dtf_notebook.ops.math._common import REAL
    from dtf_notebook.ops.op_helpers import binary_operands

    with name_scope(name, "Cross", [a, b]) as scope:
        x, y = binary_operands(a, b, "Cross")
        check_dtype(x, REAL, "Cross", "a")
        return make_op("Cross", [x, y], name=scope).outputs[0]
