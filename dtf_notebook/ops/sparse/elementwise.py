"""Sparse ops that combine values entry by entry: ``SparseAdd`` (and ``SparseTensorDenseAdd``),
``SparseSparseMaximum``/``Minimum`` and ``SparseSoftmax`` with TF's gradients, and TF's composites ``sparse_retain``
and ``sparse_mask``.

Two sparse operands must have the same dense shape and, as TF assumes, entries in row-major order (see
``sparse_reorder``): the result lists the union of their index rows in that order.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     a = tf.SparseTensor([[0, 0], [1, 1]], [1.0, 2.0], [2, 2])
    ...     b = tf.SparseTensor([[1, 1]], [5.0], [2, 2])
    ...     print(sess.run(sparse_add(a, b)).values)
    [1. 7.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.scatter_nd import gather_nd
from dtf_notebook.ops.array.sets import setdiff1d
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.sparse.common import as_sparse, check_parts, host, invalid, like, parts, row_keys, take
from dtf_notebook.ops.sparse.reductions import sparse_reduce_sum

__all__ = ["sparse_add", "sparse_mask", "sparse_maximum", "sparse_minimum", "sparse_retain", "sparse_softmax"]

_MATRIX = TensorShape([None, None])
_VECTOR = TensorShape([None])


def _union(a_ind: np.ndarray, b_ind: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of two row-major index lists: its rows, and for each the position in ``a`` and ``b`` (-1: absent)."""
    keys = np.concatenate([row_keys(a_ind), row_keys(b_ind)])
    rows = np.concatenate([a_ind, b_ind]).astype(np.int64).reshape(-1, a_ind.shape[1])
    # Sort by row (lexicographic), a's entry before b's at equal rows.
    order = np.lexsort((np.arange(len(keys)), *rows.T[::-1])) if len(keys) else np.zeros(0, np.int64)
    sorted_keys = keys[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    group = np.cumsum(first) - 1
    n_a = len(a_ind)
    pos_a = np.full(int(first.sum()), -1, dtype=np.int64)
    pos_b = np.full(int(first.sum()), -1, dtype=np.int64)
    from_a = order < n_a
    pos_a[group[from_a]] = order[from_a]
    pos_b[group[~from_a]] = order[~from_a] - n_a
    return rows[order[first]], pos_a, pos_b


def _check_same_shapes(op: Operation, a_shape: np.ndarray, b_shape: np.ndarray) -> None:
    if a_shape.shape != b_shape.shape or (a_shape != b_shape).any():
        raise invalid(op, f"Operands do not have the same ranks; got shapes: {a_shape.tolist()} and {b_shape.tolist()}")


def _pick(values: Any, positions: np.ndarray, filler: Any) -> Any:
    """``values[positions]``, ``filler`` where a position is -1."""
    gathered = take(values, np.maximum(positions, 0))
    missing = positions < 0
    if not missing.any():
        return gathered
    if isinstance(gathered, np.ndarray):
        gathered[missing] = filler
        return gathered
    gathered[like(np.nonzero(missing)[0], gathered)] = filler
    return gathered


# ---- SparseAdd -------------------------------------------------------------------------------------------------
def _add_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(a_i: Any, a_v: Any, a_s: Any, b_i: Any, b_v: Any, b_s: Any, thresh: Any) -> tuple[Any, Any, Any]:
        a_ind, b_ind, a_shape, b_shape = host(a_i), host(b_i), host(a_s), host(b_s)
        check_parts(op, a_ind, len(a_v), a_shape)
        check_parts(op, b_ind, len(b_v), b_shape)
        _check_same_shapes(op, a_shape, b_shape)
        rows, pos_a, pos_b = _union(a_ind, b_ind)
        values = _pick(a_v, pos_a, 0) + _pick(b_v, pos_b, 0)
        both = (pos_a >= 0) & (pos_b >= 0)
        if both.any():
            # A sum of two entries below the threshold is dropped (an entry of one operand never is).
            small = (torch.abs(values) < thresh).cpu().numpy() & both
            keep = np.nonzero(~small)[0]
            rows, values = rows[keep], take(values, keep)
        return like(rows, a_i), values, a_s.clone()

    return run


def _add_grad(op: Operation, _: Any, values_grad: Any, __: Any) -> list[Any]:
    a_grad, b_grad = make_op("SparseAddGrad", [values_grad, op.inputs[0], op.inputs[3], op.outputs[0]]).outputs
    a_grad.set_shape(op.inputs[1].shape)
    b_grad.set_shape(op.inputs[4].shape)
    return [None, a_grad, None, None, b_grad, None, None]


op_registry.register_op(
    "SparseAdd",
    infer=lambda op: [
        (dtypes.int64, TensorShape([None, op.inputs[0].shape[1].value if op.inputs[0].shape.ndims == 2 else None])),
        (op.inputs[1].dtype, _VECTOR),
        (dtypes.int64, op.inputs[2].shape),
    ],
    kernel=_add_kernel,
    grad=_add_grad,
    cpu_only=True,
)


def _add_grad_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(grad: Any, a_i: Any, b_i: Any, sum_i: Any) -> tuple[Any, Any]:
        where = {key: i for i, key in enumerate(row_keys(host(sum_i)).tolist())}
        out = []
        for ind in (host(a_i), host(b_i)):
            source = np.array([where.get(key, -1) for key in row_keys(ind).tolist()], dtype=np.int64)
            out.append(_pick(grad, source, 0) if len(source) else grad.new_zeros((0,)))
        return out[0], out[1]

    return run


op_registry.register_op(
    "SparseAddGrad",
    infer=lambda op: [
        (op.inputs[0].dtype, TensorShape([op.inputs[1].shape[0] if op.inputs[1].shape.ndims == 2 else None])),
        (op.inputs[0].dtype, TensorShape([op.inputs[2].shape[0] if op.inputs[2].shape.ndims == 2 else None])),
    ],
    kernel=_add_grad_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def _dense_add_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: Any, values: Any, shape: Any, dense: Any) -> Any:
        ind, dims = host(indices), host(shape)
        check_parts(op, ind, len(values), dims)
        if list(dims) != list(dense.shape):
            raise invalid(op, f"Dimensions {dims.tolist()} and {list(dense.shape)} are not compatible")
        if len(ind) and ((ind < 0) | (ind >= dims)).any():
            bad = int(np.nonzero(((ind < 0) | (ind >= dims)).any(1))[0][0])
            raise invalid(op, f"Index {ind[bad].tolist()} is out of bounds of the dense shape {dims.tolist()}")
        out = dense.clone()
        if len(ind):
            out.index_put_(tuple(like(col, dense) for col in ind.T), values, accumulate=True)
        return out

    return run


op_registry.register_op(
    "SparseTensorDenseAdd",
    infer=lambda op: [(op.inputs[3].dtype, op.inputs[3].shape)],
    kernel=_dense_add_kernel,
    grad=lambda op, grad: [None, gather_nd(grad, op.inputs[0]), None, grad],
)


def sparse_add(a: Any, b: Any, threshold: Any = None, thresh: Any = None) -> Any:
    """``a + b`` where at least one is sparse: a SparseTensor when both are (sums of two entries whose magnitude is
    below ``threshold`` are dropped), else a dense tensor.

    Args:
        a: A SparseTensor or dense tensor.
        b: A SparseTensor or dense tensor of the same dense shape.
        threshold: The magnitude below which a sum of two entries is dropped (default 0, drop nothing).
        thresh: TF1's older name of ``threshold``.

    Raises:
        TypeError: neither operand is sparse.
        InvalidArgumentError: (at run time) the dense shapes differ.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1]], [5.0], [2, 2])
        ...     print(sess.run(tf.sparse_add(sp, tf.ones([2, 2]))))
        [[1. 6.]
         [1. 1.]]
    """
    if thresh is not None:
        if threshold is not None:
            raise ValueError("Cannot specify both 'threshold' and 'thresh'")
        threshold = thresh
    threshold = 0 if threshold is None else threshold
    sparse_kinds = (SparseTensor, SparseTensorValue)
    if not any(isinstance(x, sparse_kinds) for x in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if all(isinstance(x, sparse_kinds) for x in (a, b)):
        a, b = as_sparse(a, "a"), as_sparse(b, "b")
        if not a.shape.is_compatible_with(b.shape):
            raise ValueError(f"Operands' dense shapes differ: {a.shape} and {b.shape} (SparseAdd)")
        limit = convert_to_tensor(threshold, dtype=a.values.dtype.real_dtype, name="threshold")
        outputs = make_op("SparseAdd", [*parts(a), *parts(b), limit], name="SparseAdd").outputs
        a_shape, b_shape = a.shape, b.shape
        result = SparseTensor(*outputs)
        if a_shape.is_compatible_with(b_shape):
            result._dense_shape_default = a_shape.merge_with(b_shape)
        return result
    if isinstance(b, sparse_kinds):
        a, b = b, a
    a = as_sparse(a, "a")
    dense = convert_to_tensor(b, dtype=a.values.dtype)
    return make_op("SparseTensorDenseAdd", [*parts(a), dense], name="SparseTensorDenseAdd").outputs[0]


# ---- SparseSparseMaximum / Minimum ----------------------------------------------------------------------------
def _extreme_kernel(pick: Callable[..., Any]) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        def run(a_i: Any, a_v: Any, a_s: Any, b_i: Any, b_v: Any, b_s: Any) -> tuple[Any, Any]:
            a_ind, b_ind, a_shape, b_shape = host(a_i), host(b_i), host(a_s), host(b_s)
            check_parts(op, a_ind, len(a_v), a_shape)
            check_parts(op, b_ind, len(b_v), b_shape)
            _check_same_shapes(op, a_shape, b_shape)
            rows, pos_a, pos_b = _union(a_ind, b_ind)
            # An index present in one operand only meets the other's implicit zero.
            return like(rows, a_i), pick(_pick(a_v, pos_a, 0), _pick(b_v, pos_b, 0))

        return run

    return factory


for _type, _fn in (("SparseSparseMaximum", "maximum"), ("SparseSparseMinimum", "minimum")):
    op_registry.register_op(
        _type,
        infer=lambda op: [(dtypes.int64, _MATRIX), (op.inputs[1].dtype, _VECTOR)],
        kernel=_extreme_kernel(lambda x, y, fn=_fn: getattr(torch, fn)(x, y)),
        cpu_only=True,
    )


def _extreme(op_type: str, sp_a: Any, sp_b: Any, name: str | None) -> SparseTensor:
    a, b = as_sparse(sp_a, "sp_a"), as_sparse(sp_b, "sp_b")
    with name_scope(name, op_type, [a.indices, a.values, b.indices, b.values]) as scope:
        indices, values = make_op(op_type, [*parts(a), *parts(b)], name=scope).outputs
    return SparseTensor(indices, values, a.dense_shape)


def sparse_maximum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """The elementwise maximum of two sparse tensors of one dense shape (an entry of one meets the other's implicit
    zero). It has no gradient, as in TF.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.SparseTensor([[0], [1]], [-1.0, 3.0], [3])
        ...     b = tf.SparseTensor([[1], [2]], [4.0, -2.0], [3])
        ...     print(sess.run(tf.sparse_maximum(a, b)).values)
        [0. 4. 0.]
    """
    return _extreme("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a: Any, sp_b: Any, name: str | None = None) -> SparseTensor:
    """The elementwise minimum of two sparse tensors of one dense shape (see :func:`sparse_maximum`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.SparseTensor([[0], [1]], [-1.0, 3.0], [3])
        ...     b = tf.SparseTensor([[1], [2]], [4.0, -2.0], [3])
        ...     print(sess.run(tf.sparse_minimum(a, b)).values)
        [-1.  3. -2.]
    """
    return _extreme("SparseSparseMinimum", sp_a, sp_b, name)


# ---- SparseSoftmax ---------------------------------------------------------------------------------------------
def _softmax_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: Any, values: Any, shape: Any) -> Any:
        ind, dims = host(indices), host(shape)
        if len(dims) < 2:
            raise invalid(op, f"Input should have rank >= 2, but received shape: {dims.tolist()}")
        check_parts(op, ind, len(values), dims)
        if not len(ind):
            return values.clone()
        # Entries that agree on every coordinate but the last form one softmax.
        _, group = np.unique(row_keys(ind[:, :-1]), return_inverse=True)
        group_t = like(group.astype(np.int64), values)
        n = int(group.max()) + 1
        top = values.new_full((n,), -float("inf")).scatter_reduce(0, group_t, values, "amax", include_self=True)
        exp = torch.exp(values - top[group_t])
        total = values.new_zeros((n,)).index_add(0, group_t, exp)
        return exp / total[group_t]

    return run


def _softmax_grad(op: Operation, grad: Any) -> list[Any]:
    indices = op.inputs[0]
    out = op.outputs[0]
    # d(softmax)/dx = out * (g - sum over the group of out * g); the group sums through a dense [..., B, 1] tensor.
    product = SparseTensor(indices, out * grad, op.inputs[2])
    sums = sparse_reduce_sum(product, [-1], keepdims=True)
    prefix = array_ops.concat([indices[:, :-1], array_ops.zeros_like(indices[:, -1:])], 1)
    return [None, (grad - gather_nd(sums, prefix)) * out, None]


op_registry.register_op(
    "SparseSoftmax",
    infer=lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)],
    kernel=_softmax_kernel,
    grad=_softmax_grad,
    cpu_only=True,
)


def sparse_softmax(sp_input: Any, name: str | None = None) -> SparseTensor:
    """The softmax over the last dimension of a sparse tensor (rank 2 or more), over present entries only: missing
    entries take no part (they are not zeros).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 1.0, 5.0], [2, 3])
        ...     print(sess.run(tf.sparse_softmax(sp)).values)
        [0.5 0.5 1. ]
    """
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseSoftmax", [sp.indices, sp.values]) as scope:
        values = make_op("SparseSoftmax", parts(sp), name=scope).outputs[0]
        return SparseTensor(sp.indices, values, sp.dense_shape)


# ---- composites ------------------------------------------------------------------------------------------------
def sparse_retain(sp_input: Any, to_retain: Any) -> SparseTensor:
    """The entries of ``sp_input`` where the bool vector ``to_retain`` is true (the dense shape stays).

    Raises:
        ValueError: ``to_retain`` is not a vector, or its length differs from the number of entries.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [1, 1], [2, 0]], [1, 2, 3], [3, 2])
        ...     print(sess.run(tf.sparse_retain(sp, [True, False, True])).values)
        [1 3]
    """
    sp = as_sparse(sp_input)
    keep = convert_to_tensor(to_retain)
    keep.shape.with_rank(1)
    if sp.values.shape.ndims is not None:
        n = keep.shape[0] if keep.shape.ndims else None
        sp.values.shape.dims[0].merge_with(n)
    where_true = array_ops.reshape(math_ops.where(keep), [-1])
    indices = array_ops.gather(sp.indices, where_true)
    values = array_ops.gather(sp.values, where_true)
    return SparseTensor(indices, values, identity(sp.dense_shape))


def sparse_mask(a: IndexedSlices, mask_indices: Any, name: str | None = None) -> IndexedSlices:
    """The rows of the ``IndexedSlices`` ``a`` whose indices are not in ``mask_indices``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     rows = tf.IndexedSlices(tf.constant([[1.0], [2.0], [3.0]]), tf.constant([0, 4, 7]))
        ...     kept = tf.sparse_mask(rows, [4])
        ...     print(sess.run([kept.indices, kept.values]))
        [array([0, 7], dtype=int32), array([[1.],
               [3.]], dtype=float32)]
    """
    with name_scope(name, "sparse_mask", [a, mask_indices]) as scope:
        out_indices, to_gather = setdiff1d(a.indices, mask_indices)
        values = array_ops.gather(a.values, to_gather, name=scope)
        return IndexedSlices(values, out_indices, a.dense_shape)
