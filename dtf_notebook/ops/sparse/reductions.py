"""Sparse ops that produce dense results or reduce: ``SparseReduceSum``/``Max`` (dense and ``*Sparse`` forms),
``SparseTensorDenseMatMul`` and ``SparseToDense`` with TF's gradients, and TF's composites built on them
(``sparse_tensor_to_dense``, ``sparse_to_indicator``, ``sparse_merge``, ``sparse_matmul``).

A reduction sees the entries present only: missing entries are not zeros taking part in a maximum, and a group
without entries gives 0 (TF's kernels initialise the output with zeros).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0], [2, 3])
    ...     print(sess.run([tf.sparse_reduce_sum(sp, 1), tf.sparse_tensor_to_dense(sp)]))
    [array([3., 3.], dtype=float32), array([[1., 0., 2.],
           [0., 3., 0.]], dtype=float32)]
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.framework.tensor_util import constant_value, shape_from_tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.scatter_nd import gather_nd
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.sparse.common import as_sparse, check_parts, host, invalid, like, parts, static_rank
from dtf_notebook.ops.sparse.structure import sparse_reorder

__all__ = [
    "sparse_matmul",
    "sparse_merge",
    "sparse_reduce_max",
    "sparse_reduce_max_sparse",
    "sparse_reduce_sum",
    "sparse_reduce_sum_sparse",
    "sparse_tensor_dense_matmul",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
    "sparse_to_indicator",
]


# ---- SparseReduceSum / SparseReduceMax ------------------------------------------------------------------------
def _reduction_plan(op: Operation, ind: np.ndarray, dims: np.ndarray, axes: Any) -> tuple[np.ndarray, list[int], list]:
    """The group (output position) of each entry, the kept axes and the output shape."""
    rank = len(dims)
    reduced = set()
    for axis in np.asarray(axes).reshape(-1).tolist():
        if not -rank <= axis < rank:
            raise invalid(op, f"Invalid reduction dimension {axis}, for input with {rank} dimensions.")
        reduced.add(axis % rank)
    kept = [d for d in range(rank) if d not in reduced]
    kept_dims = tuple(int(dims[d]) for d in kept)
    if len(ind) and kept:
        group = np.ravel_multi_index(tuple(ind[:, kept].T), kept_dims)
    else:
        group = np.zeros(len(ind), dtype=np.int64)
    keep_dims = op.get_attr("keep_dims")
    out_shape = [1 if d in reduced else int(dims[d]) for d in range(rank)] if keep_dims else list(kept_dims)
    return group.astype(np.int64), kept, out_shape


def _reduce_values(kind: str, values: Any, group: np.ndarray, n: int) -> Any:
    out = values.new_zeros((n,))
    if len(group):
        index = like(group, values)
        if kind == "Sum":
            out = out.index_add(0, index, values)
        else:
            out = out.scatter_reduce(0, index, values, "amax", include_self=False)
    return out


def _reduce_kernel(kind: str) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        def run(indices: Any, values: Any, shape: Any, axes: Any) -> Any:
            ind, dims = host(indices), host(shape)
            check_parts(op, ind, len(values), dims)
            group, kept, out_shape = _reduction_plan(op, ind, dims, host(axes))
            n = int(np.prod([int(dims[d]) for d in kept], dtype=np.int64))
            return _reduce_values(kind, values, group, n).reshape(out_shape)

        return run

    return factory


def _reduce_sparse_kernel(kind: str) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        keep_dims = op.get_attr("keep_dims")

        def run(indices: Any, values: Any, shape: Any, axes: Any) -> tuple[Any, Any, Any]:
            ind, dims = host(indices), host(shape)
            check_parts(op, ind, len(values), dims)
            group, kept, out_shape = _reduction_plan(op, ind, dims, host(axes))
            present, inverse = np.unique(group, return_inverse=True)
            reduced = _reduce_values(kind, values, inverse.reshape(-1), len(present))
            kept_dims = tuple(int(dims[d]) for d in kept)
            coords = np.stack(np.unravel_index(present, kept_dims), 1) if kept else np.zeros((len(present), 0))
            if keep_dims:
                out_ind = np.zeros((len(present), len(dims)), dtype=np.int64)
                out_ind[:, kept] = coords
            else:
                out_ind = coords.astype(np.int64)
            return like(out_ind, indices), reduced, like(np.array(out_shape, dtype=np.int64), shape)

        return run

    return factory


def _reduce_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    dims, axes = constant_value(op.inputs[2]), constant_value(op.inputs[3])
    if dims is None or axes is None:
        return [(op.inputs[1].dtype, unknown_shape())]
    dims = np.asarray(dims).reshape(-1)
    rank = len(dims)
    if rank == 0:
        raise ValueError("Number of dims in shape tensor must not be 0")
    reduced = {int(a) % rank for a in np.asarray(axes).reshape(-1)}
    if op.get_attr("keep_dims"):
        shape = [1 if d in reduced else int(dims[d]) for d in range(rank)]
    else:
        shape = [int(dims[d]) for d in range(rank) if d not in reduced]
    return [(op.inputs[1].dtype, TensorShape(shape))]


def _kept_shape(shape: Tensor, axes: Tensor) -> Tensor:
    """``shape`` with the ``axes`` set to 1 (TF's ``reduced_shape``)."""
    rank = array_ops.size(shape)
    axes = math_ops.floormod(math_ops.cast(axes, dtypes.int32) + rank, rank)
    hit = math_ops.reduce_any(
        math_ops.equal(array_ops.expand_dims(math_ops.range(rank), 1), array_ops.reshape(axes, [1, -1])), 1
    )
    return math_ops.where(hit, array_ops.ones_like(shape), shape)


def _reduce_sum_grad(op: Operation, grad: Any) -> list[Any]:
    indices, shape = op.inputs[0], op.inputs[2]
    kept = _kept_shape(shape, op.inputs[3])
    scale = math_ops.floordiv(shape, kept)
    return [None, gather_nd(array_ops.reshape(grad, kept), math_ops.floordiv(indices, scale)), None, None]


def _sparse_outputs(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    # TF's shape function of the *Sparse forms leaves every output shape unknown.
    return [(dtypes.int64, unknown_shape()), (op.inputs[1].dtype, unknown_shape()), (dtypes.int64, unknown_shape())]


for _kind, _grad in (("Sum", _reduce_sum_grad), ("Max", None)):
    op_registry.register_op(
        f"SparseReduce{_kind}", infer=_reduce_infer, kernel=_reduce_kernel(_kind), grad=_grad, cpu_only=True
    )
    op_registry.register_op(
        f"SparseReduce{_kind}Sparse",
        infer=_sparse_outputs,
        kernel=_reduce_sparse_kernel(_kind),
        grad=op_registry.NOT_DIFFERENTIABLE,
        cpu_only=True,
    )


def _reduction_axes(sp: SparseTensor, axis: Any) -> Tensor:
    if axis is not None:
        return convert_to_tensor(axis, dtype=dtypes.int32)
    rank = static_rank(sp)
    if rank:
        return convert_to_tensor(np.arange(rank, dtype=np.int32))
    return math_ops.range(0, array_ops.size(sp.dense_shape))


def _old_names(axis: Any, keepdims: Any, reduction_axes: Any, keep_dims: Any) -> tuple[Any, bool]:
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    if reduction_axes is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_axes'")
        axis = reduction_axes
    return axis, bool(keepdims)


def _reduce(op_type: str, sp_input: Any, axis: Any, keepdims: bool) -> Any:
    sp = as_sparse(sp_input)
    outputs = make_op(op_type, [*parts(sp), _reduction_axes(sp, axis)], {"keep_dims": keepdims}, name=op_type).outputs
    return outputs[0] if len(outputs) == 1 else SparseTensor(*outputs)


def sparse_reduce_sum(
    sp_input: Any, axis: Any = None, keepdims: Any = None, reduction_axes: Any = None, keep_dims: Any = None
) -> Tensor:
    """The sum of a sparse tensor's entries along ``axis`` (all axes by default), as a dense tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [0, 2], [1, 1]], [1, 2, 3], [2, 3])
        ...     print(sess.run([tf.sparse_reduce_sum(sp), tf.sparse_reduce_sum(sp, 0, keepdims=True)]))
        [np.int32(6), array([[1, 3, 2]], dtype=int32)]
    """
    axis, keepdims = _old_names(axis, keepdims, reduction_axes, keep_dims)
    return _reduce("SparseReduceSum", sp_input, axis, keepdims)


def sparse_reduce_sum_sparse(
    sp_input: Any, axis: Any = None, keepdims: Any = None, reduction_axes: Any = None, keep_dims: Any = None
) -> SparseTensor:
    """:func:`sparse_reduce_sum` as a SparseTensor of the positions some entry falls into (no gradient, as in TF).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [0, 2], [2, 1]], [1, 2, 3], [3, 3])
        ...     out = sess.run(tf.sparse_reduce_sum_sparse(sp, 1))
        >>> out.indices.tolist(), out.values.tolist(), out.dense_shape.tolist()
        ([[0], [2]], [3, 3], [3])
    """
    axis, keepdims = _old_names(axis, keepdims, reduction_axes, keep_dims)
    return _reduce("SparseReduceSumSparse", sp_input, axis, keepdims)


def sparse_reduce_max(
    sp_input: Any, axis: Any = None, keepdims: Any = None, reduction_axes: Any = None, keep_dims: Any = None
) -> Tensor:
    """The largest entry along ``axis`` (all axes by default), as a dense tensor: missing entries take no part and a
    position without entries gives 0. It has no gradient, as in TF.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [-7, 4, 3], [3, 2])
        ...     print(sess.run(tf.sparse_reduce_max(sp, 1)))
        [-7  4  0]
    """
    axis, keepdims = _old_names(axis, keepdims, reduction_axes, keep_dims)
    return _reduce("SparseReduceMax", sp_input, axis, keepdims)


def sparse_reduce_max_sparse(
    sp_input: Any, axis: Any = None, keepdims: Any = None, reduction_axes: Any = None, keep_dims: Any = None
) -> SparseTensor:
    """:func:`sparse_reduce_max` as a SparseTensor of the positions some entry falls into.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [-7, 4, 3], [3, 2])
        ...     print(sess.run(tf.sparse_reduce_max_sparse(sp, 1)).values)
        [-7  4]
    """
    axis, keepdims = _old_names(axis, keepdims, reduction_axes, keep_dims)
    return _reduce("SparseReduceMaxSparse", sp_input, axis, keepdims)


# ---- SparseTensorDenseMatMul -----------------------------------------------------------------------------------
def _matmul_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    adjoint_a, adjoint_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")

    def run(indices: Any, values: Any, shape: Any, b: Any) -> Any:
        ind, dims = host(indices), host(shape)
        check_parts(op, ind, len(values), dims)
        if len(dims) != 2 or b.dim() != 2:
            raise invalid(
                op, f"Tensor 'a_shape' and 'b' must be matrices, got shapes {dims.tolist()} and {list(b.shape)}"
            )
        rows, inner = (int(dims[1]), int(dims[0])) if adjoint_a else (int(dims[0]), int(dims[1]))
        right = b.conj().t() if adjoint_b else b
        if right.shape[0] != inner:
            raise invalid(
                op,
                f"Cannot multiply A and B because inner dimension does not match: {inner} vs. "
                f"{right.shape[0]}.  Did you forget a transpose?  Dimensions of A: [{rows}, {inner}).  "
                f"Dimensions of B: {list(b.shape)}",
            )
        r, c = (ind[:, 1], ind[:, 0]) if adjoint_a else (ind[:, 0], ind[:, 1])
        out_of_range = np.nonzero((r < 0) | (r >= rows) | (c < 0) | (c >= inner))[0]
        if len(out_of_range):
            i = int(out_of_range[0])
            raise invalid(op, f"k ({c[i]}) from index[{i},{1 - int(adjoint_a)}] out of bounds (>={inner})")
        vals = values.conj() if adjoint_a else values
        out = right.new_zeros((rows, right.shape[1]))
        if len(ind):
            out.index_add_(0, like(r, b), vals.unsqueeze(1) * right[like(c, b)])
        return out

    return run


def _matmul_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a_dims = shape_from_tensor(op.inputs[2])
    b = op.inputs[3].shape.with_rank(2)
    a = a_dims.with_rank(2) if a_dims.ndims is not None else TensorShape([None, None])
    rows, inner_a = (a[1], a[0]) if op.get_attr("adjoint_a") else (a[0], a[1])
    inner_b, cols = (b[1], b[0]) if op.get_attr("adjoint_b") else (b[0], b[1])
    if not inner_a.is_compatible_with(inner_b):
        raise ValueError(
            f"Dimensions must be equal, but are {inner_a.value} and {inner_b.value} for '{op.name}' "
            f"(SparseTensorDenseMatMul) with shapes {a} and {b}"
        )
    return [(op.inputs[3].dtype, TensorShape([rows, cols]))]


def _matmul_grad(op: Operation, grad: Any) -> list[Any]:
    indices, values, shape, b = op.inputs
    adjoint_a, adjoint_b = op.get_attr("adjoint_a"), op.get_attr("adjoint_b")
    b_grad = make_op(
        "SparseTensorDenseMatMul",
        [indices, values, shape, grad],
        {"adjoint_a": not adjoint_a, "adjoint_b": False, "T": values.dtype},
    ).outputs[0]
    if adjoint_b:
        b_grad = array_ops.transpose(b_grad)
    rows, cols = indices[:, 0], indices[:, 1]
    parts_a = array_ops.gather(grad, cols if adjoint_a else rows)
    parts_b = array_ops.gather(array_ops.transpose(b) if adjoint_b else b, rows if adjoint_a else cols)
    # Real values: d out[r, :] / d a[r, c] = b[c, :] (the other cases swap r and c or transpose b).
    return [None, math_ops.reduce_sum(parts_a * parts_b, axis=1), None, b_grad]


op_registry.register_op("SparseTensorDenseMatMul", infer=_matmul_infer, kernel=_matmul_kernel, grad=_matmul_grad)


def sparse_tensor_dense_matmul(
    sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False, name: str | None = None
) -> Tensor:
    """``sp_a @ b`` for a sparse matrix ``sp_a`` and a dense matrix ``b`` (either adjointed first); when ``b`` is the
    sparse one, ``transpose(b' @ a')`` is computed instead, as TF does.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
        ...     print(sess.run(tf.sparse_tensor_dense_matmul(sp, [[1.0, 2.0], [3.0, 4.0]])))
        [[6. 8.]
         [3. 6.]]
    """
    if isinstance(b, SparseTensor | SparseTensorValue):
        if adjoint_a != adjoint_b:
            return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, adjoint_a, adjoint_b))
        return array_ops.transpose(sparse_tensor_dense_matmul(b, sp_a, not adjoint_a, not adjoint_b))
    sp = as_sparse(sp_a, "sp_a")
    with name_scope(name, "SparseTensorDenseMatMul", [sp.indices, sp.values, b]) as scope:
        dense = convert_to_tensor(b, name="b")
        if dense.dtype is not sp.values.dtype:
            raise TypeError(
                f"Input 'b' of 'SparseTensorDenseMatMul' Op has type {dense.dtype.name} that does not match type "
                f"{sp.values.dtype.name} of argument 'a_values'."
            )
        attrs = {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b), "T": dense.dtype}
        return make_op("SparseTensorDenseMatMul", [*parts(sp), dense], attrs, name=scope).outputs[0]


def sparse_matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """TF1's ``tf.sparse_matmul``: a dense float32 matrix product of float32/bfloat16 matrices. The ``*_is_sparse``
    hints chose a kernel in TF; here the product is ``MatMul``'s (same values).

    Raises:
        TypeError: an operand is neither float32 nor bfloat16.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sparse_matmul([[1.0, 0.0]], [[2.0], [3.0]], a_is_sparse=True)))
        [[2.]]
    """
    with name_scope(name, "SparseMatMul", [a, b]) as scope:
        x, y = convert_to_tensor(a, name="a"), convert_to_tensor(b, name="b")
        for arg, t in (("a", x), ("b", y)):
            if t.dtype not in (dtypes.float32, dtypes.bfloat16):
                raise TypeError(
                    f"Value passed to parameter '{arg}' has DataType {t.dtype.name} not in list of allowed values: "
                    "float32, bfloat16"
                )
        x, y = math_ops.cast(x, dtypes.float32), math_ops.cast(y, dtypes.float32)
        return math_ops.matmul(x, y, transpose_a=transpose_a, transpose_b=transpose_b, name=scope)


# ---- SparseToDense ---------------------------------------------------------------------------------------------
def _to_dense_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    validate = op.get_attr("validate_indices")
    is_string = op.inputs[2].dtype.is_string

    def run(indices: Any, shape: Any, values: Any, default: Any) -> Any:
        dims = host(shape).reshape(-1).astype(np.int64)
        ind = host(indices).astype(np.int64)
        ind = ind.reshape(-1, 1) if ind.ndim == 1 else ind.reshape(1, -1) if ind.ndim == 0 else ind
        if ind.ndim != 2 or ind.shape[1] != len(dims):
            raise invalid(
                op,
                f"sparse_indices should be a scalar, vector, or matrix, and its number of columns "
                f"must match the output rank {len(dims)}, got shape {list(host(indices).shape)}",
            )
        n = len(ind)
        count = values.size if is_string else values.numel()
        if count not in (1, n) or (getattr(values, "ndim", 0) > 1):
            raise invalid(op, f"sparse_values has incorrect shape {list(values.shape)}, should be [] or [{n}]")
        if len(ind):
            outside = ((ind < 0) | (ind >= dims)).any(1)
            if outside.any():
                i = int(np.nonzero(outside)[0][0])
                raise invalid(
                    op, f"indices[{i}] = {ind[i].tolist()} is out of bounds: need 0 <= index < {dims.tolist()}"
                )
            if validate and n > 1:
                linear = np.ravel_multi_index(tuple(ind.T), tuple(dims))
                step = np.diff(linear)
                if (step <= 0).any():
                    i = int(np.nonzero(step <= 0)[0][0]) + 1
                    problem = "repeated" if step[i - 1] == 0 else "out of order"
                    raise invalid(
                        op,
                        f"indices[{i}] = {ind[i].tolist()} is {problem}. Many sparse ops require "
                        "sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered copy.",
                    )
        if is_string:
            out = np.full(tuple(dims), np.asarray(default).reshape(()).item(), dtype=object)
            if n:
                out[tuple(ind.T)] = np.broadcast_to(np.asarray(values, dtype=object).reshape(-1), (n,))
            return out
        out = torch.full(tuple(dims.tolist()), 0, dtype=values.dtype, device=values.device)
        out.fill_(default.reshape(()))
        if n:
            out[tuple(like(col, values) for col in ind.T)] = values.reshape(-1).expand(n)
        return out

    return run


def _to_dense_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    return [(op.inputs[2].dtype, shape_from_tensor(op.inputs[1]))]


def _to_dense_grad(op: Operation, grad: Any) -> list[Any]:
    indices = op.inputs[0]
    values_grad = gather_nd(grad, indices if indices.shape.ndims == 2 else array_ops.reshape(indices, [-1, 1]))
    values_grad = array_ops.reshape(values_grad, array_ops.shape(op.inputs[2]))
    default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


op_registry.register_op("SparseToDense", infer=_to_dense_infer, kernel=_to_dense_kernel, grad=_to_dense_grad)


def _sparse_to_dense(indices: Any, shape: Any, values: Any, default: Any, validate: bool, name: str | None) -> Tensor:
    with name_scope(name, "SparseToDense", [indices, shape, values, default]) as scope:
        ind = convert_to_tensor(indices, name="sparse_indices")
        if ind.dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError(f"sparse_indices must be int32 or int64, got {ind.dtype.name}")
        out_shape = convert_to_tensor(
            shape, dtype=None if isinstance(shape, Tensor) else ind.dtype, name="output_shape"
        )
        if out_shape.dtype is not ind.dtype:
            raise TypeError(
                f"Input 'output_shape' of 'SparseToDense' Op has type {out_shape.dtype.name} that does not match type "
                f"{ind.dtype.name} of argument 'sparse_indices'."
            )
        vals = convert_to_tensor(values, name="sparse_values")
        fill = convert_to_tensor(default, dtype=vals.dtype, name="default_value")
        attrs = {"validate_indices": bool(validate), "T": vals.dtype, "Tindices": ind.dtype}
        return make_op("SparseToDense", [ind, out_shape, vals, fill], attrs, name=scope).outputs[0]


def sparse_to_dense(
    sparse_indices: Any,
    output_shape: Any,
    sparse_values: Any,
    default_value: Any = 0,
    validate_indices: bool = True,
    name: str | None = None,
) -> Tensor:
    """A dense tensor of ``output_shape`` holding ``sparse_values`` (one, or one per index) at ``sparse_indices`` and
    ``default_value`` elsewhere (TF1's deprecated ``tf.sparse_to_dense``).

    Raises:
        InvalidArgumentError: (at run time) an index out of bounds, or with ``validate_indices`` indices out of
            row-major order or repeated.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sparse_to_dense([1, 3], [5], 7, default_value=-1)))
        [-1  7 -1  7 -1]
    """
    return _sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value, validate_indices, name)


def sparse_tensor_to_dense(
    sp_input: Any, default_value: Any = None, validate_indices: bool = True, name: str | None = None
) -> Tensor:
    """The dense tensor of a SparseTensor, ``default_value`` (default 0 or ``b""``) where there is no entry.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1]], ["x"], [1, 2])
        ...     print(sess.run(tf.sparse_tensor_to_dense(sp, default_value="-")))
        [[b'-' b'x']]
    """
    sp = as_sparse(sp_input)
    if default_value is None:
        default_value = b"" if sp.dtype.is_string else np.zeros((), dtype=sp.dtype.np_dtype)
    return _sparse_to_dense(sp.indices, sp.dense_shape, sp.values, default_value, validate_indices, name)


# ---- sparse_merge / sparse_to_indicator -----------------------------------------------------------------------
def _merge(sp_ids: Any, sp_values: Any, vocab_size: Any, name: str | None, already_sorted: bool) -> SparseTensor:
    if isinstance(sp_ids, SparseTensor | SparseTensorValue):
        sp_ids = [sp_ids]
        if not isinstance(vocab_size, Tensor | numbers.Integral):
            raise TypeError(f"vocab_size has to be a Tensor or Python int. Found {type(vocab_size)}")
        vocab_size = [vocab_size]
    else:
        if not isinstance(sp_ids, list | tuple):
            raise TypeError(f"sp_ids has to be a SparseTensor or list thereof. Found {type(sp_ids)}")
        if not isinstance(vocab_size, list | tuple):
            raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found {type(vocab_size)}")
        for dim in vocab_size:
            if not isinstance(dim, Tensor | numbers.Integral):
                raise TypeError(f"vocab_size has to be a list of Tensors or Python ints. Found {type(dim)}")
        if len(sp_ids) != len(vocab_size):
            raise ValueError("sp_ids and vocab_size have to have equal lengths.")
    with name_scope(name, "SparseMerge", [sp_ids, sp_values]):
        id_parts = [as_sparse(sp, "sp_ids") for sp in sp_ids]
        values_sp = as_sparse(sp_values, "sp_values")
        ids = [array_ops.expand_dims(math_ops.cast(sp.values, dtypes.int64), axis=1) for sp in id_parts]
        sizes = [math_ops.cast(x, dtypes.int64) for x in vocab_size]
        # The kept columns and dense shape are the first ids' (TF's): ids and values that do not match fail in
        # SparseReorder, naming both counts.
        indices = array_ops.concat([id_parts[0].indices[:, :-1], *ids], 1)
        shape = array_ops.concat([id_parts[0].dense_shape[:-1], array_ops.stack(sizes)], 0)
        # The dense shape while building: TF's shape inference folds the concat of constants.
        first = id_parts[0].shape
        static = first[:-1] if first.ndims is not None else TensorShape(None)
        static = static.concatenate([int(v) if isinstance(v, numbers.Integral) else None for v in vocab_size])
        result = SparseTensor(indices, values_sp.values, shape)
        if not already_sorted:
            ordered = sparse_reorder(result)
            result = SparseTensor(ordered.indices, ordered.values, shape)
        result._dense_shape_default = static
        return result


def sparse_merge(
    sp_ids: Any, sp_values: Any, vocab_size: Any, name: str | None = None, already_sorted: bool = False
) -> SparseTensor:
    """Combines ids and values into one SparseTensor whose last dimension is indexed by the ids: entry ``(..., k)``
    of ``sp_ids`` with value ``id`` puts ``sp_values``' entry ``(..., k)`` at ``(..., id)`` (TF1's deprecated
    ``tf.sparse_merge``); lists of ids and vocabulary sizes add one dimension each.

    Raises:
        TypeError: ``sp_ids`` or ``vocab_size`` of the wrong kind.
        ValueError: lists of different lengths.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 0, 2], tf.int64), [2, 2])
        ...     weights = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 1.5, 2.0], [2, 2])
        ...     out = sess.run(tf.sparse_merge(ids, weights, 4))
        >>> out.indices.tolist(), out.values.tolist(), out.dense_shape.tolist()
        ([[0, 0], [0, 3], [1, 2]], [1.5, 0.5, 2.0], [2, 4])
    """
    return _merge(sp_ids, sp_values, vocab_size, name, already_sorted)


def sparse_to_indicator(sp_input: Any, vocab_size: Any, name: str | None = None) -> Tensor:
    """A dense bool tensor ``[..., vocab_size]`` with True at ``(..., id)`` for each id in the last dimension of the
    int SparseTensor ``sp_input``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([3, 0, 2], tf.int64), [2, 2])
        ...     print(sess.run(tf.sparse_to_indicator(ids, 4)).astype(int))
        [[1 0 0 1]
         [0 0 1 0]]
    """
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseToIndicator", [sp]) as scope:
        count = array_ops.shape(sp.indices)[0]
        flags = SparseTensor(sp.indices, array_ops.fill(array_ops.expand_dims(count, 0), True), sp.dense_shape)
        merged = _merge(sp, flags, vocab_size, scope, False)
        dense = sparse_tensor_to_dense(merged, default_value=False, validate_indices=False, name=scope)
        dense.set_shape(merged.shape)
        return dense
