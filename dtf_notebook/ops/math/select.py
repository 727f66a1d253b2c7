"""TF1's ``tf.where``: the ``Select`` op (pick from ``x`` or ``y``) and the ``Where`` op (coordinates of true entries).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(where([True, False], [1.0, 2.0], [-1.0, -2.0])))
    [ 1. -2.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import REAL, array_ops, dense, fmt_shape
from dtf_notebook.ops.math.compare import bool_operand
from dtf_notebook.ops.op_helpers import binary_operands, check_dtype, make_op


def _select_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    c, x, y = op.inputs
    try:
        shape = x.shape.merge_with(y.shape)
    except ValueError:
        raise ValueError(
            f"Shapes of x and y must be equal in Select, got {fmt_shape(x.shape)} and {fmt_shape(y.shape)}."
        ) from None
    cs = c.shape
    if cs.ndims is None or cs.ndims == 0 or shape.ndims is None:
        return [(x.dtype, shape)]
    if cs.ndims == 1 and shape.ndims > 1:
        # TF1 rule: a vector condition picks whole rows.
        rows, n = shape[0].value, cs[0].value
        if rows is not None and n is not None and rows != n:
            raise ValueError(
                f"Dimension 0 in both shapes must be equal, but are {n} and {rows}. "
                f"Shapes are {fmt_shape(cs)} and {fmt_shape(shape)}."
            )
        return [(x.dtype, shape)]
    try:
        return [(x.dtype, shape.merge_with(cs))]
    except ValueError:
        raise ValueError(
            f"Condition of shape {fmt_shape(cs)} must be a scalar, a vector matching the first dimension, or have the "
            f"shape of x and y ({fmt_shape(shape)}) in Select."
        ) from None


def _select_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    if op.inputs[1].dtype.is_string:

        def run_strings(c: torch.Tensor, x: np.ndarray, y: np.ndarray) -> np.ndarray:
            cond = c.cpu().numpy()
            if cond.ndim == 1 and x.ndim > 1:
                cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
            return np.where(cond, x, y)

        return run_strings

    def run(c: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if c.dim() == 1 and x.dim() > 1:
            c = c.view((-1,) + (1,) * (x.dim() - 1))
        return torch.where(c, x, y)

    return run


def _select_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    c = op.inputs[0]
    zeros = array_ops().zeros_like(grad)
    return [None, where(c, grad, zeros), where(c, zeros, grad)]


def _where_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    rank = op.inputs[0].shape.ndims
    return [(dtypes.int64, TensorShape([None, rank]) if rank is not None else unknown_shape(2))]


op_registry.register_op("Select", infer=_select_infer, kernel=_select_kernel, grad=_select_grad)
op_registry.register_op(
    "Where", infer=_where_infer, kernel=lambda op, ctx: torch.nonzero, grad=op_registry.NOT_DIFFERENTIABLE
)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF1's ``tf.where``: with ``x`` and ``y``, picks from ``x`` where ``condition`` holds, else from ``y``;
    without them, the int64 coordinates ``[N, rank]`` of the true entries of ``condition``.

    ``x`` and ``y`` must have the same shape; ``condition`` has that shape too, or is a scalar, or is a
    vector that selects whole rows (TF1's rule; no broadcasting).

    Raises:
        ValueError: only one of ``x``, ``y`` is given, or the shapes do not fit.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     c = tf.constant([True, False])
        ...     print(sess.run(tf.where(c, [[1, 2], [3, 4]], [[0, 0], [0, 0]])))
        ...     print(sess.run(tf.where(c)))
        [[1 2]
         [0 0]]
        [[0]]
    """
    if x is None and y is None:
        with name_scope(name, "Where", [condition]) as scope:
            c = convert_to_tensor(condition, preferred_dtype=dtypes.bool, name="input")
            check_dtype(c, REAL + (dtypes.bool,), "Where", "input")
            return make_op("Where", [c], name=scope).outputs[0]
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with name_scope(name, "Select", [condition, x, y]) as scope:
        c = bool_operand(condition, "Select", "condition")
        x, y = binary_operands(x, y, "Select")
        return make_op("Select", [c, x, y], name=scope).outputs[0]
