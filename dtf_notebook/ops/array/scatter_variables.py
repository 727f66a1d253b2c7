"""Sparse in-place updates of variables beyond ``state_ops``' scatter_update/add/sub: the n-d forms
``ScatterNdUpdate``/``ScatterNdAdd``/``ScatterNdSub`` (``tf.scatter_nd_update`` ...), the row forms ``ScatterMul``,
``ScatterDiv``, ``ScatterMax``, ``ScatterMin``, and TF's composite ``batch_scatter_update``.

Like ``Assign``, each op takes the variable by reference, writes under its lock when ``use_locking`` is set, and
outputs the reference, so that reading the result reads the updated variable. None has a gradient (TF defines none).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    ...     with tf.Session() as sess:
    ...         sess.run(v.initializer)
    ...         print(sess.run(scatter_nd_update(v, [[1, 0]], [9.0])))
    [[1. 2.]
     [9. 4.]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.diagnostics import fmt_dims, invalid
from dtf_notebook.ops.array.scatter_nd import _as_rows, _check_updates, _rows  # the n-d indexing shared with ScatterNd
from dtf_notebook.ops.state_ops import (
    build_scatter,
    current_value,
    locked,
    register_scatter,
    row_scatter_kernel,
    subtract_rows,
)
from dtf_notebook.runtime.resources import VariableResource

__all__ = [
    "scatter_nd_update",
    "scatter_nd_add",
    "scatter_nd_sub",
    "scatter_mul",
    "scatter_div",
    "scatter_max",
    "scatter_min",
    "batch_scatter_update",
]


# ---- ScatterNdUpdate / Add / Sub ------------------------------------------------------------------------------------
def _nd_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    ref, indices, updates = op.inputs
    _check_updates(op, indices, updates, ref.shape)
    return [(ref.dtype, ref.shape)]


def _nd_kernel(combine: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], Any]):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        use_locking = op.get_attr("use_locking")

        def run(resource: VariableResource, indices: torch.Tensor, updates: torch.Tensor) -> VariableResource:
            with locked(resource, use_locking):
                current = current_value(resource)
                k = indices.shape[-1]
                rows = _rows(op, indices, tuple(current.shape), "shape").to(current.device)
                expected = tuple(indices.shape[:-1]) + tuple(current.shape[k:])
                if tuple(updates.shape) != expected:
                    raise invalid(
                        op,
                        f"updates.shape {fmt_dims(updates.shape)} must be indices.shape[:-1] + ref.shape[K:] "
                        f"= {fmt_dims(expected)}",
                    )
                flat = _as_rows(current, k)
                if rows.numel():
                    combine(flat, rows, updates.reshape(rows.shape[0], flat.shape[1]).to(current.dtype))
            return resource

        return run

    return factory


# ---- ScatterMul / Div / Max / Min (rows of the first axis) -----------------------------------------------------------
def _row_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    ref, indices, updates = op.inputs
    if ref.shape.ndims is not None and indices.shape.ndims is not None and updates.shape.ndims is not None:
        expected = indices.shape.concatenate(ref.shape[1:])
        if updates.shape.ndims > 0 and not updates.shape.is_compatible_with(expected):
            raise ValueError(
                f"Shapes of updates {updates.shape} and indices {indices.shape} do not fit ref {ref.shape} for "
                f"{op.type} '{op.name}': updates must have shape indices.shape + ref.shape[1:]"
            )
    return [(ref.dtype, ref.shape)]


def _divide_rows(current: torch.Tensor, idx: torch.Tensor, rows: torch.Tensor) -> None:
    if current.dtype.is_floating_point:
        # Dividing by each repeated index in turn is dividing by their product.
        divisor = torch.ones_like(current).scatter_reduce_(
            0, idx.view(-1, *[1] * (rows.dim() - 1)).expand_as(rows), rows, "prod"
        )
        current.div_(divisor)
        return
    for i, row in zip(idx.tolist(), rows):  # integer division truncates at every step, as TF's kernel does
        current[i] = torch.div(current[i], row, rounding_mode="trunc")


def _reduce_rows(reduce: str) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None]:
    def combine(current: torch.Tensor, idx: torch.Tensor, rows: torch.Tensor) -> None:
        index = idx.view(-1, *[1] * (rows.dim() - 1)).expand_as(rows)
        current.scatter_reduce_(0, index, rows, reduce, include_self=True)

    return combine


for _type, _infer, _kernel in (
    ("ScatterNdUpdate", _nd_infer, _nd_kernel(lambda flat, rows, vals: flat.index_copy_(0, rows, vals))),
    ("ScatterNdAdd", _nd_infer, _nd_kernel(lambda flat, rows, vals: flat.index_add_(0, rows, vals))),
    ("ScatterNdSub", _nd_infer, _nd_kernel(subtract_rows)),
    ("ScatterMul", _row_infer, row_scatter_kernel(_reduce_rows("prod"))),
    ("ScatterDiv", _row_infer, row_scatter_kernel(_divide_rows)),
    ("ScatterMax", _row_infer, row_scatter_kernel(_reduce_rows("amax"))),
    ("ScatterMin", _row_infer, row_scatter_kernel(_reduce_rows("amin"))),
):
    register_scatter(_type, _infer, _kernel)


# ---- builders --------------------------------------------------------------------------------------------------------
def scatter_nd_update(
    ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """Writes ``updates`` into the slices of the variable ``ref`` at the n-d ``indices`` (see :func:`tf.gather_nd`).

    Raises:
        TypeError: ``ref`` is not a variable; InvalidArgumentError: (at run time) an index is out of range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1, 2, 3, 4])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_nd_update(v, [[0], [3]], [9, 8])))
        [9 2 3 8]
    """
    return build_scatter("ScatterNdUpdate", ref, indices, updates, use_locking, name)


def scatter_nd_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Adds ``updates`` to the slices of the variable ``ref`` at the n-d ``indices`` (repeated indices add up).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1, 2, 3])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_nd_add(v, [[0], [0]], [5, 5])))
        [11  2  3]
    """
    return build_scatter("ScatterNdAdd", ref, indices, updates, use_locking, name)


def scatter_nd_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Subtracts ``updates`` from the slices of the variable ``ref`` at the n-d ``indices``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1, 2, 3])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_nd_sub(v, [[2]], [10])))
        [ 1  2 -7]
    """
    return build_scatter("ScatterNdSub", ref, indices, updates, use_locking, name)


def scatter_mul(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Multiplies rows ``indices`` of the variable ``ref`` by ``updates``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0, 3.0])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_mul(v, [1, 1], [3.0, 2.0])))
        [ 1. 12.  3.]
    """
    return build_scatter("ScatterMul", ref, indices, updates, use_locking, name)


def scatter_div(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Divides rows ``indices`` of the variable ``ref`` by ``updates``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([8.0, 2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_div(v, [0], [4.0])))
        [2. 2.]
    """
    return build_scatter("ScatterDiv", ref, indices, updates, use_locking, name)


def scatter_max(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Rows ``indices`` of the variable ``ref`` become their maximum with ``updates``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1, 5])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_max(v, [0, 1], [3, 3])))
        [3 5]
    """
    return build_scatter("ScatterMax", ref, indices, updates, use_locking, name)


def scatter_min(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Rows ``indices`` of the variable ``ref`` become their minimum with ``updates``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1, 5])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_min(v, [0, 1], [3, 3])))
        [1 3]
    """
    return build_scatter("ScatterMin", ref, indices, updates, use_locking, name)


def batch_scatter_update(
    ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None
) -> Tensor:
    """``scatter_update`` along the first non-batch axis of ``ref``, every axis of ``indices`` but its last being a
    batch axis (TF's composite of ``scatter_nd_update``).

    Raises:
        ValueError: the rank of ``indices`` is unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([[1, 2, 3], [4, 5, 6]])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.batch_scatter_update(v, [[0], [2]], [[7], [9]])))
        [[7 2 3]
         [4 5 9]]
    """
    from dtf_notebook.ops import array_ops, math_ops

    with name_scope(name or "BatchScatterUpdate"):
        indices = convert_to_tensor(indices, name="indices")
        indices_shape = array_ops.shape(indices)
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        nd_indices = array_ops.expand_dims(indices, axis=-1)
        # Each index gets the coordinates of its batch position in front of it.
        parts = []
        for dimension in range(rank - 1):
            size = indices_shape[dimension]
            broadcast = [1] * (rank + 1)
            broadcast[dimension] = size
            positions = array_ops.reshape(math_ops.range(0, size, 1), broadcast)
            if positions.dtype is not nd_indices.dtype:
                positions = math_ops.cast(positions, nd_indices.dtype)
            parts.append(math_ops.multiply(positions, array_ops.ones_like(nd_indices)))
        parts.append(nd_indices)
        final_indices = array_ops.concat(parts, axis=-1)
        return scatter_nd_update(ref, final_indices, updates, use_locking=use_locking)
