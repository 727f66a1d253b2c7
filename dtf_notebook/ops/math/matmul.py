"""Matrix products: ``MatMul`` (rank 2) and ``BatchMatMulV2`` (batched, batch dimensions broadcast).

Both ops share the kernel wrapper and the gradient rule; the builder picks one by the operands' ranks.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     [matmul(tf.zeros([2, 3]), tf.zeros([3, 4])).op.type, matmul(tf.zeros([5, 2, 3]), tf.zeros([3, 4])).op.type]
    ['MatMul', 'BatchMatMulV2']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import COMPLEX, FLOAT, dense, fmt_shape
from dtf_notebook.ops.math.broadcast import unbroadcast
from dtf_notebook.ops.op_helpers import binary_operands, check_dtype, make_op

_MATMUL = FLOAT + (dtypes.int32, dtypes.int64) + COMPLEX
# The attrs that say whether each operand is transposed, by op type.
_TRANSPOSE_ATTRS = {"MatMul": ("transpose_a", "transpose_b"), "BatchMatMulV2": ("adj_x", "adj_y")}


def _matmul_dims(shape: TensorShape, transposed: bool) -> tuple[int | None, int | None]:
    if shape.ndims is None:
        return None, None
    rows, cols = shape.as_list()[-2:]
    return (cols, rows) if transposed else (rows, cols)


def _check_inner(op: Operation, k1: int | None, k2: int | None) -> None:
    if k1 is not None and k2 is not None and k1 != k2:
        a, b = op.inputs
        raise ValueError(
            f"Dimensions must be equal, but are {k1} and {k2} for '{op.name}' (op: '{op.type}') "
            f"with input shapes: {fmt_shape(a.shape)}, {fmt_shape(b.shape)}."
        )


def _output_matrix(op: Operation) -> tuple[int | None, int | None]:
    """The rows and columns of the product, after checking that the inner dimensions agree."""
    a, b = op.inputs
    ta, tb = (op.get_attr(attr) for attr in _TRANSPOSE_ATTRS[op.type])
    m, k1 = _matmul_dims(a.shape, ta)
    k2, n = _matmul_dims(b.shape, tb)
    _check_inner(op, k1, k2)
    return m, n


def _matmul_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    for s in (a.shape, b.shape):
        if s.ndims not in (None, 2):
            raise ValueError(
                f"Shape must be rank 2 but is rank {s.ndims} for '{op.name}' (op: 'MatMul') "
                f"with input shapes: {fmt_shape(a.shape)}, {fmt_shape(b.shape)}."
            )
    return [(a.dtype, TensorShape(list(_output_matrix(op))))]


def _batch_matmul_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    for s in (a.shape, b.shape):
        if s.ndims is not None and s.ndims < 2:
            raise ValueError(
                f"Shape must be at least rank 2 but is rank {s.ndims} for '{op.name}' (op: 'BatchMatMulV2') "
                f"with input shapes: {fmt_shape(a.shape)}, {fmt_shape(b.shape)}."
            )
    m, n = _output_matrix(op)
    if a.shape.ndims is None or b.shape.ndims is None:
        return [(a.dtype, unknown_shape())]
    try:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"Batch dimensions of {fmt_shape(a.shape)} and {fmt_shape(b.shape)} are not broadcastable for '{op.name}'"
        ) from None
    return [(a.dtype, batch.concatenate([m, n]))]


def _int_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # CUDA has no integer GEMM: multiply-and-sum stays exact and keeps the dtype.
    return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2, dtype=a.dtype)


def _matmul_kernel(product: str):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        ta, tb = (op.get_attr(a) for a in _TRANSPOSE_ATTRS[op.type])
        mm = getattr(torch, product)  # looked up when a plan is built: torch loads then
        if op.inputs[0].dtype.is_integer and ctx.device.type != "cpu":
            mm = _int_matmul
        if not ta and not tb:
            return mm
        if ta and not tb:
            return lambda a, b: mm(a.mT, b)
        if tb and not ta:
            return lambda a, b: mm(a, b.mT)
        return lambda a, b: mm(a.mT, b.mT)

    return factory


def _matmul_op(op_type: str, a: Tensor, b: Tensor, ta: bool, tb: bool, name: str | None = None) -> Tensor:
    attrs = dict(zip(_TRANSPOSE_ATTRS[op_type], (ta, tb)))
    return make_op(op_type, [a, b], attrs, name=name or op_type).outputs[0]


def _matmul_grads(op: Operation, grad: Any) -> tuple[Tensor, Tensor]:
    """The products giving the gradients of both operands (before undoing any batch broadcasting)."""
    from dtf_notebook.ops.math.binary import conj_if_complex

    x, y = (conj_if_complex(t) for t in op.inputs)  # TF's gradients of complex products use the conjugates
    grad = dense(grad)
    mm = lambda a, b, ta, tb: _matmul_op(op.type, a, b, ta, tb)
    tx, ty = (op.get_attr(attr) for attr in _TRANSPOSE_ATTRS[op.type])
    if not tx and not ty:
        return mm(grad, y, False, True), mm(x, grad, True, False)
    if not tx and ty:
        return mm(grad, y, False, False), mm(grad, x, True, False)
    if tx and not ty:
        return mm(y, grad, False, True), mm(x, grad, False, False)
    return mm(y, grad, True, True), mm(grad, x, True, True)


def _batch_dims_with_matrix(shape: TensorShape) -> TensorShape:
    """``shape``'s batch dimensions followed by a 1x1 matrix (what broadcasting may stretch)."""
    return unknown_shape() if shape.ndims is None else TensorShape(shape.as_list()[:-2] + [1, 1])


def _batch_matmul_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    gx, gy = _matmul_grads(op, grad)
    return [
        unbroadcast(gx, x, _batch_dims_with_matrix(y.shape)),
        unbroadcast(gy, y, _batch_dims_with_matrix(x.shape)),
    ]


op_registry.register_op(
    "MatMul", infer=_matmul_infer, kernel=_matmul_kernel("mm"), grad=lambda op, g: list(_matmul_grads(op, g))
)
op_registry.register_op(
    "BatchMatMulV2", infer=_batch_matmul_infer, kernel=_matmul_kernel("matmul"), grad=_batch_matmul_grad
)


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """The matrix product ``a @ b`` (batched, with broadcast batch dimensions, when a rank exceeds 2).

    ``adjoint_*`` conjugates and transposes (equals ``transpose_*`` for real types); the ``*_is_sparse`` hints are
    accepted and ignored.

    Raises:
        ValueError: the inner dimensions differ, or a rank is below 2 (names both shapes).
        TypeError: the dtypes differ or are not supported.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.constant([[1.0, 2.0]])
        ...     print(sess.run(tf.matmul(a, a, transpose_b=True)))
        [[5.]]
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with name_scope(name, "MatMul", [a, b]) as scope:
        a, b = binary_operands(a, b, "MatMul")
        check_dtype(a, _MATMUL, "MatMul", "a")
        if adjoint_a or adjoint_b:
            from dtf_notebook.ops.math.binary import conj_if_complex

            a, b = (conj_if_complex(a) if adjoint_a else a), (conj_if_complex(b) if adjoint_b else b)
        ta, tb = transpose_a or adjoint_a, transpose_b or adjoint_b
        ranks = (a.shape.ndims, b.shape.ndims)
        batched = any(r is None or r > 2 for r in ranks)
        return _matmul_op("BatchMatMulV2" if batched else "MatMul", a, b, ta, tb, name=scope)
