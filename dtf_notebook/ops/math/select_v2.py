"""``tf.where_v2``: the ``SelectV2`` op, which picks from ``x`` or ``y`` by ``condition`` with numpy broadcasting
of all three (TF1's ``Select`` only picks whole rows by a vector).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(where_v2([[True], [False]], [1, 2], 0)))
    [[1 2]
     [0 0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import dense, fmt_shape
from dtf_notebook.ops.math.broadcast import unbroadcast
from dtf_notebook.ops.math.compare import bool_operand
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.op_helpers import binary_operands, make_op

__all__ = ["where_v2"]


def _select_v2_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    c, x, y = op.inputs
    try:
        shape = broadcast_shapes(broadcast_shapes(c.shape, x.shape), y.shape)
    except ValueError:
        raise ValueError(
            f"Incompatible shapes in SelectV2 '{op.name}': condition {fmt_shape(c.shape)}, "
            f"t {fmt_shape(x.shape)}, e {fmt_shape(y.shape)}"
        ) from None
    return [(x.dtype, shape)]


def _select_v2_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    if op.inputs[1].dtype.is_string:
        return lambda c, x, y: np.where(c.cpu().numpy(), x, y).astype(object)
    return torch.where


def _select_v2_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.array_ops import zeros

    c, x, y = op.inputs
    grad = dense(grad)
    z = op.outputs[0]
    zero = zeros([], dtype=grad.dtype)
    gx = where_v2(c, grad, zero)
    gy = where_v2(c, zero, grad)
    return [None, unbroadcast(gx, x, z.shape), unbroadcast(gy, y, z.shape)]


op_registry.register_op("SelectV2", infer=_select_v2_infer, kernel=_select_v2_kernel, grad=_select_v2_grad)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """With ``x`` and ``y``: ``x`` where ``condition`` holds, else ``y``, all three broadcast together (op
    ``SelectV2``). Without them: the int64 coordinates of the true entries of ``condition`` (as :func:`where`).

    Raises:
        ValueError: only one of ``x``, ``y`` is given, or the shapes do not broadcast.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.where_v2([True, False, True], 1.0, [5.0, 6.0, 7.0])))
        [1. 6. 1.]
    """
    if x is None and y is None:
        return where(condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with name_scope(name, "SelectV2", [condition, x, y]) as scope:
        c = bool_operand(condition, "SelectV2", "condition")
        x, y = binary_operands(x, y, "SelectV2")
        return make_op("SelectV2", [c, x, y], name=scope).outputs[0]
