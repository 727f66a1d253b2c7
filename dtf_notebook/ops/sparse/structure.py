"""Sparse ops that move entries around: ``SparseReorder``, ``SparseReshape``, ``SparseSlice``, ``SparseSplit``,
``SparseConcat`` and ``SparseFillEmptyRows`` with TF's gradients, and TF's composites ``sparse_transpose``,
``sparse_reset_shape``, ``tf.sparse.expand_dims``, ``tf.sparse.eye`` and ``tf.sparse.from_dense``.

Entries are in *row-major order* when their index rows are sorted lexicographically (TF's canonical order).
``SparseReorder`` puts them so; ``SparseConcat`` and ``SparseFillEmptyRows`` give their output so when their inputs
are (as TF's kernels do).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sp = tf.SparseTensor([[1, 0], [0, 2]], [1.0, 2.0], [2, 3])
    ...     print(sess.run(sparse_reorder(sp)).indices.tolist())
    [[0, 2], [1, 0]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape
from dtf_notebook.framework.tensor_tools import get_static_value
from dtf_notebook.framework.tensor_util import constant_value, shape_from_tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.scatter_nd import gather_nd
from dtf_notebook.ops.check_ops import assert_equal, assert_less_equal
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.image.transforms import with_dependencies
from dtf_notebook.ops.math.select_v2 import where_v2
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.sparse.common import (
    as_sparse,
    check_parts,
    concat_values,
    host,
    int64,
    invalid,
    like,
    parts,
    row_keys,
    row_major_order,
    sparse_from_outputs,
    static_rank,
    take,
)

__all__ = [
    "KeywordRequired",
    "from_dense",
    "sparse_concat",
    "sparse_concat_v2",
    "sparse_expand_dims",
    "sparse_eye",
    "sparse_fill_empty_rows",
    "sparse_reorder",
    "sparse_reset_shape",
    "sparse_reshape",
    "sparse_slice",
    "sparse_split",
    "sparse_transpose",
]

_MATRIX = TensorShape([None, None])
_VECTOR = TensorShape([None])


def _first_dim(shape: Tensor) -> int | None:
    """The first dense dimension a shape tensor gives while building."""
    dims = shape_from_tensor(shape)
    return dims[0].value if dims.ndims else None


def _rows_like(t: Tensor) -> TensorShape:
    """``[?, rank]`` with the rank of the index matrix ``t``."""
    return TensorShape([None, t.shape[1].value if t.shape.ndims == 2 else None])


# ---- SparseReorder ---------------------------------------------------------------------------------------------
def _reorder_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: Any, values: Any, shape: Any) -> tuple[Any, Any]:
        ind = host(indices)
        if ind.ndim == 2 and len(ind) != len(values):  # (TF's ValidateSparseTensor words it so for this op)
            raise invalid(op, f"Number of elements in indices ({len(ind)}) and values ({len(values)}) do not match")
        check_parts(op, ind, len(values), host(shape))
        order = row_major_order(ind)
        return like(ind[order], indices), take(values, order)

    return run


def _reorder_grad(op: Operation, _: Any, values_grad: Any) -> list[Any]:
    indices, shape = op.inputs[0], op.inputs[2]
    entries = math_ops.range(array_ops.shape(indices)[0])
    ordered = sparse_reorder(SparseTensor(indices, entries, shape))
    return [None, array_ops.gather(values_grad, array_ops.invert_permutation(ordered.values)), None]


op_registry.register_op(
    "SparseReorder",
    infer=lambda op: [(dtypes.int64, op.inputs[0].shape), (op.inputs[1].dtype, op.inputs[1].shape)],
    kernel=_reorder_kernel,
    grad=_reorder_grad,
    cpu_only=True,
)


def sparse_reorder(sp_input: Any, name: str | None = None) -> SparseTensor:
    """The same sparse tensor with its entries in row-major order.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[2], [0]], ["b", "a"], [3])
        ...     print(sess.run(tf.sparse_reorder(sp)).values)
        [b'a' b'b']
    """
    sp = as_sparse(sp_input)
    indices, values = make_op("SparseReorder", parts(sp), name=name or "SparseReorder").outputs
    static = sp.shape
    if static.is_fully_defined():
        return SparseTensor(indices, values, static.as_list())
    return sparse_from_outputs(indices, values, identity(sp.dense_shape), static)


# ---- SparseReshape ---------------------------------------------------------------------------------------------
def _reshape_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: Any, shape: Any, new_shape: Any) -> tuple[Any, Any]:
        ind, old, new = host(indices), host(shape).astype(np.int64), host(new_shape).astype(np.int64).copy()
        size = int(np.prod(old))
        unknown = np.nonzero(new == -1)[0]
        if len(unknown) > 1:
            raise invalid(op, f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}")
        if (new < -1).any():
            bad = int(np.nonzero(new < -1)[0][0])
            raise invalid(op, f"size {bad} must be non-negative, not {new[bad]}")
        known = int(np.prod(new[new != -1]))
        if len(unknown):
            if known == 0:
                raise invalid(
                    op,
                    "reshape cannot infer the missing input size for an empty tensor unless all "
                    "specified input sizes are non-zero",
                )
            if size % known:
                raise invalid(
                    op,
                    f"Input to reshape is a SparseTensor with {size} dense values, but the requested "
                    f"shape requires a multiple of {known}. inputs shape: {old.tolist()}",
                )
            new[unknown[0]] = size // known
        if int(np.prod(new)) != size:
            raise invalid(
                op,
                f"Input to reshape is a tensor with {size} dense values, but the requested shape has "
                f"{int(np.prod(new))}. inputs shape: {old.tolist()} requested shape: {new.tolist()}",
            )
        if ind.shape[0]:
            linear = np.ravel_multi_index(tuple(ind.T), tuple(old)) if len(old) else np.zeros(ind.shape[0], np.int64)
            out = np.stack(np.unravel_index(linear, tuple(new)), 1) if len(new) else np.zeros((ind.shape[0], 0))
        else:
            out = np.zeros((0, len(new)))
        return like(out.astype(np.int64), indices), like(new, shape)

    return run


def _reshape_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    indices, new_shape = op.inputs[0], op.inputs[2]
    n = new_shape.shape[0].value if new_shape.shape.ndims == 1 else None
    return [
        (dtypes.int64, TensorShape([indices.shape[0] if indices.shape.ndims == 2 else None, n])),
        (dtypes.int64, TensorShape([n])),
    ]


op_registry.register_op(
    "SparseReshape", infer=_reshape_infer, kernel=_reshape_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
)


def sparse_reshape(sp_input: Any, shape: Any, name: str | None = None) -> SparseTensor:
    """The sparse tensor with the same entries in row-major order laid out in ``shape`` (one entry may be -1).

    Raises:
        ValueError: while building, when the shapes are known and hold different numbers of elements, or ``shape``
            has several -1.
        InvalidArgumentError: the same at run time.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [1, 2]], [1, 2], [2, 3])
        ...     print(sess.run(tf.sparse_reshape(sp, [3, -1])).indices.tolist())
        [[0, 1], [2, 1]]
    """
    sp = as_sparse(sp_input)
    shape = math_ops.cast(shape, dtypes.int64)
    with name_scope(name, "SparseReshape", [sp]) as scope:
        indices, out_shape = make_op("SparseReshape", [sp.indices, sp.dense_shape, shape], name=scope).outputs
        given = get_static_value(shape)
        static = shape_from_tensor(shape) if given is None else TensorShape([d if d >= 0 else None for d in given])
        if static.ndims is not None and sp.shape.is_fully_defined():
            if given is not None and int(np.sum(given == -1)) > 1:
                raise ValueError(f"At most one dimension can be inferred (-1). Found: {given}")
            dims = static.as_list()
            size = int(np.prod(sp.shape.as_list()))
            implied = [i for i, d in enumerate(dims) if d is None]
            rest = int(np.prod([d for d in dims if d is not None]))
            if len(implied) == 1 and 0 not in dims:
                dims[implied[0]] = size // rest
            if not implied or (len(implied) == 1 and 0 not in static.as_list() and size % rest == 0):
                if int(np.prod(dims)) != size:
                    raise ValueError(
                        f"Cannot reshape a tensor with {size} elements to shape {static.as_list()} "
                        f"({int(np.prod(dims))} elements)."
                    )
                out_shape = convert_to_tensor(np.array(dims, dtype=np.int64))
        return SparseTensor(indices, sp.values, out_shape)


def sparse_transpose(sp_input: Any, perm: Any = None, name: str | None = None) -> SparseTensor:
    """The sparse tensor with its dimensions permuted by ``perm`` (default: reversed), in row-major order.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 2], [1, 0]], [1, 2], [2, 3])
        ...     out = sess.run(tf.sparse_transpose(sp))
        >>> out.indices.tolist(), out.values.tolist(), out.dense_shape.tolist()
        ([[0, 1], [2, 0]], [2, 1], [3, 2])
    """
    with name_scope(name, "SparseTranspose", [sp_input]):
        sp = as_sparse(sp_input)
        if perm is None:
            if sp.shape.ndims is not None:
                perm = list(range(sp.shape.ndims))[::-1]
            else:
                rank = array_ops.rank(sp)
                perm = (rank - 1) - math_ops.range(0, rank, 1)
        indices = array_ops.transpose(array_ops.gather(array_ops.transpose(sp.indices), perm))
        perm_value = constant_value(convert_to_tensor(perm))
        if perm_value is not None and sp.shape.is_fully_defined():
            old = sp.shape.as_list()
            dense_shape: Any = [old[p] for p in perm_value]
        else:
            dense_shape = array_ops.gather(sp.dense_shape, perm)
        return sparse_reorder(SparseTensor(indices, sp.values, dense_shape))


# ---- SparseSlice -----------------------------------------------------------------------------------------------
def _slice_positions(ind: np.ndarray, start: np.ndarray, size: np.ndarray) -> np.ndarray:
    inside = np.all((ind >= start) & (ind < start + size), axis=1) if ind.shape[1] else np.ones(len(ind), bool)
    return np.nonzero(inside)[0]


def _slice_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: Any, values: Any, shape: Any, start: Any, size: Any) -> tuple[Any, Any, Any]:
        ind, dense, begin, count = host(indices), host(shape), host(start), host(size)
        check_parts(op, ind, len(values), dense)
        if begin.shape != dense.shape or count.shape != dense.shape:
            raise invalid(
                op,
                f"Expected start and size to have the rank {len(dense)} of the input, got "
                f"{list(begin.shape)} and {list(count.shape)}",
            )
        keep = _slice_positions(ind, begin, count)
        out_shape = np.maximum(np.minimum(begin + count, dense) - begin, 0)
        return like(ind[keep] - begin, indices), take(values, keep), like(out_shape.astype(np.int64), shape)

    return run


def _slice_grad(op: Operation, _: Any, values_grad: Any, __: Any) -> list[Any]:
    grad = make_op("SparseSliceGrad", [values_grad, op.inputs[0], op.inputs[3], op.outputs[0]]).outputs[0]
    grad.set_shape(op.inputs[1].shape)
    return [None, grad, None, None, None]


op_registry.register_op(
    "SparseSlice",
    infer=lambda op: [
        (dtypes.int64, _rows_like(op.inputs[0])),
        (op.inputs[1].dtype, _VECTOR),
        (dtypes.int64, op.inputs[2].shape),
    ],
    kernel=_slice_kernel,
    grad=_slice_grad,
    cpu_only=True,
)


def _slice_grad_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(grad: Any, input_indices: Any, start: Any, output_indices: Any) -> Any:
        ind, begin, out = host(input_indices), host(start), host(output_indices)
        where = {key: i for i, key in enumerate(row_keys(out).tolist())}
        shifted = row_keys(ind - begin).tolist()
        source = np.array([where.get(key, -1) for key in shifted], dtype=np.int64)
        result = grad.new_zeros((len(ind),))
        hit = np.nonzero(source >= 0)[0]
        if len(hit):
            result[like(hit, grad)] = take(grad, source[hit])
        return result

    return run


op_registry.register_op(
    "SparseSliceGrad",
    infer=lambda op: [(op.inputs[0].dtype, TensorShape([op.inputs[1].shape[0] if op.inputs[1].shape.ndims else None]))],
    kernel=_slice_grad_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def sparse_slice(sp_input: Any, start: Any, size: Any, name: str | None = None) -> SparseTensor:
    """The entries of ``sp_input`` inside the box ``[start, start + size)``, with indices relative to ``start``; the
    dense shape is the box cut to the input's shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [1, 3], [2, 1]], [1, 2, 3], [3, 4])
        ...     out = sess.run(tf.sparse_slice(sp, [1, 1], [5, 5]))
        >>> out.indices.tolist(), out.values.tolist(), out.dense_shape.tolist()
        ([[0, 2], [1, 0]], [2, 3], [2, 3])
    """
    sp = as_sparse(sp_input)
    start = convert_to_tensor(start, dtype=dtypes.int64)
    size = convert_to_tensor(size, dtype=dtypes.int64)
    with name_scope(name, "SparseSlice", [sp]) as scope:
        outputs = make_op("SparseSlice", [*parts(sp), start, size], name=scope).outputs
        return SparseTensor(*outputs)


# ---- SparseSplit -----------------------------------------------------------------------------------------------
def _split_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    n = op.get_attr("num_split")

    def run(split_dim: Any, indices: Any, values: Any, shape: Any) -> tuple[Any, ...]:
        ind, dense = host(indices), host(shape)
        check_parts(op, ind, len(values), dense)
        rank = len(dense)
        axis = int(split_dim)
        if not -rank <= axis < rank:
            raise invalid(op, f"Input split_dim should be between {-rank} and {rank}, got {axis}")
        axis %= rank
        length = int(dense[axis])
        if n > length:
            raise invalid(op, f"Input num_split should be between 1 and {length}, got {n}")
        base, extra = divmod(length, n)
        sizes = [base + 1 if i < extra else base for i in range(n)]
        bounds = np.cumsum([0, *sizes])
        piece = np.searchsorted(bounds, ind[:, axis], side="right") - 1 if len(ind) else np.zeros(0, np.int64)
        out_ind, out_val, out_shape = [], [], []
        for i in range(n):
            keep = np.nonzero(piece == i)[0]
            rows = ind[keep].copy()
            rows[:, axis] -= bounds[i]
            shape_i = dense.copy()
            shape_i[axis] = sizes[i]
            out_ind.append(like(rows, indices))
            out_val.append(take(values, keep))
            out_shape.append(like(shape_i.astype(np.int64), shape))
        return (*out_ind, *out_val, *out_shape)

    return run


def _split_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    n = op.get_attr("num_split")
    indices, values, shape = op.inputs[1:]
    return [(dtypes.int64, _rows_like(indices))] * n + [(values.dtype, _VECTOR)] * n + [(dtypes.int64, shape.shape)] * n


op_registry.register_op("SparseSplit", infer=_split_infer, kernel=_split_kernel, cpu_only=True)


class KeywordRequired:
    """TF's marker that a function takes its arguments by keyword only (``tf.sparse_split``'s first parameter).

    Example:
        >>> repr(KeywordRequired())
        'KeywordRequired()'
    """

    def __repr__(self) -> str:
        return "KeywordRequired()"


def sparse_split(
    keyword_required: Any = KeywordRequired(),  # noqa: B008 - TF's signature: the default object marks keyword use
    sp_input: Any = None,
    num_split: int | None = None,
    axis: Any = None,
    name: str | None = None,
    split_dim: Any = None,
) -> list[SparseTensor]:
    """``sp_input`` split along ``axis`` into ``num_split`` sparse tensors (the first ``size % num_split`` one longer);
    arguments by keyword only, as in TF1.

    Raises:
        ValueError: a positional argument, or ``sp_input``, ``num_split`` or ``axis`` missing.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 0], [0, 4], [1, 2]], [1, 2, 3], [2, 5])
        ...     first, second = sess.run(tf.sparse_split(sp_input=sp, num_split=2, axis=1))
        >>> first.indices.tolist(), second.indices.tolist(), second.dense_shape.tolist()
        ([[0, 0], [1, 2]], [[0, 1]], [2, 2])
    """
    if not isinstance(keyword_required, KeywordRequired):
        raise ValueError("Keyword arguments are required for this function.")
    if sp_input is None:
        raise ValueError("sp_input is required")
    if num_split is None:
        raise ValueError("num_split is required")
    if axis is None:  # TF1 asks for ``axis`` even when the old name ``split_dim`` is given
        raise ValueError("axis is required")
    if split_dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'split_dim'")
    sp = as_sparse(sp_input)
    axis_t = convert_to_tensor(axis, dtype=dtypes.int64, name="split_dim")
    outputs = make_op(
        "SparseSplit", [axis_t, *parts(sp)], {"num_split": int(num_split)}, name=name or "SparseSplit"
    ).outputs
    n = int(num_split)
    return [SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i]) for i in range(n)]


# ---- SparseConcat ----------------------------------------------------------------------------------------------
def _concat_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    n = op.get_attr("N")
    axis_attr = op.get_attr("concat_dim")
    dtype = op.inputs[n].dtype

    def run(*inputs: Any) -> tuple[Any, Any, Any]:
        inds = [host(t) for t in inputs[:n]]
        values, shapes = inputs[n : 2 * n], [host(t) for t in inputs[2 * n :]]
        for i in range(n):
            check_parts(op, inds[i], len(values[i]), shapes[i])
        rank = len(shapes[0])
        if not -rank <= axis_attr < rank:
            raise invalid(op, f"Concat dimension must be in range [{-rank}, {rank}), got {axis_attr}")
        axis = axis_attr % rank
        for i, shape in enumerate(shapes[1:], 1):
            if len(shape) != rank:
                raise invalid(
                    op, f"Ranks of all input tensors must match: expected {rank} but got {len(shape)} at position {i}"
                )
            other = np.delete(shape, axis) != np.delete(shapes[0], axis)
            if other.any():
                raise invalid(
                    op,
                    f"Input shapes must match: expected {shapes[0].tolist()} but got {shape.tolist()} at position {i}",
                )
        offsets = np.cumsum([0] + [int(s[axis]) for s in shapes])
        rows = []
        for i, ind in enumerate(inds):
            shifted = ind.copy()
            shifted[:, axis] += offsets[i]
            rows.append(shifted)
        all_rows = np.concatenate(rows).astype(np.int64) if rows else np.zeros((0, rank), np.int64)
        order = row_major_order(all_rows)
        out_shape = shapes[0].copy()
        out_shape[axis] = offsets[-1]
        joined = concat_values(list(values), dtype)
        return like(all_rows[order], inputs[0]), take(joined, order), like(out_shape.astype(np.int64), inputs[2 * n])

    return run


def _concat_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    n = op.get_attr("N")
    rank = next((t.shape[1].value for t in op.inputs[:n] if t.shape.ndims == 2 and t.shape[1].value is not None), None)
    rows = [t.shape[0].value if t.shape.ndims else None for t in op.inputs[:n]]
    total = None if None in rows else sum(rows)
    return [
        (dtypes.int64, TensorShape([total, rank])),
        (op.inputs[n].dtype, TensorShape([total])),
        (dtypes.int64, TensorShape([rank])),
    ]


op_registry.register_op(
    "SparseConcat", infer=_concat_infer, kernel=_concat_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
)


def sparse_concat_v2(axis: Any, sp_inputs: Any, expand_nonconcat_dims: bool = False, name: str | None = None) -> Any:
    """``sp_inputs`` joined along ``axis`` (``tf.sparse.concat``'s TF2 signature); the output is in row-major order.

    With ``expand_nonconcat_dims`` the other dimensions take the largest size among the inputs instead of having to
    agree.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.SparseTensor([[0, 2], [1, 0]], ["a", "b"], [2, 3])
        ...     b = tf.SparseTensor([[0, 1]], ["d"], [2, 4])
        ...     out = sess.run(sparse_concat_v2(1, [a, b]))
        >>> out.indices.tolist(), out.values.tolist(), out.dense_shape.tolist()
        ([[0, 2], [0, 4], [1, 0]], [b'a', b'd', b'b'], [2, 7])
    """
    sps = [as_sparse(sp, "sp_inputs") for sp in sp_inputs]
    if len(sps) == 1:
        return sps[0]
    axis = int(axis)
    inds = [sp.indices for sp in sps]
    vals = [sp.values for sp in sps]
    shapes = [sp.dense_shape for sp in sps]
    if expand_nonconcat_dims:
        largest = math_ops.reduce_max(array_ops.concat([array_ops.reshape(s, [1, -1]) for s in shapes], 0), 0)
        shapes = [
            array_ops.concat(
                [
                    largest[:axis],
                    s[-1:] if axis == -1 else s[axis : axis + 1],
                    [] if axis == -1 else largest[axis + 1 :],
                ],
                0,
            )
            for s in shapes
        ]
    attrs = {"N": len(sps), "concat_dim": axis}
    indices, values, shape = make_op(
        "SparseConcat", [*inds, *vals, *shapes], attrs, name=name or "SparseConcat"
    ).outputs
    statics = [sp.shape for sp in sps]
    if all(s.ndims is not None for s in statics):
        if expand_nonconcat_dims:
            dims: list[Any] = [max((s.dims[d] for s in statics), key=_dim_order) for d in range(statics[0].ndims)]
        else:
            dims = list(statics[0].dims)
        total = Dimension(0)
        for s in statics:
            total = total + s.dims[axis]
        dims[axis] = total
        static = TensorShape(dims)
    else:
        static = TensorShape(None)
    return sparse_from_outputs(indices, values, shape, static)


def _dim_order(dim: Dimension) -> float:
    # TF compares Dimensions with max(): an unknown one is never larger, so a known size wins.
    return -1.0 if dim.value is None else float(dim.value)


def sparse_concat(
    axis: Any,
    sp_inputs: Any,
    name: str | None = None,
    expand_nonconcat_dim: bool = False,
    concat_dim: Any = None,
    expand_nonconcat_dims: Any = None,
) -> Any:
    """TF1's ``tf.sparse_concat``: :func:`sparse_concat_v2` with TF1's argument order and old names (``concat_dim``,
    ``expand_nonconcat_dims``).

    Raises:
        ValueError: both ``axis`` and ``concat_dim`` given.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.SparseTensor([[0, 0]], [1.0], [1, 2])
        ...     b = tf.SparseTensor([[0, 1]], [2.0], [1, 3])
        ...     print(sess.run(tf.sparse_concat(1, [a, b])).indices.tolist())
        [[0, 0], [0, 3]]
    """
    if expand_nonconcat_dims is not None:
        # As TF1's argument lookup: the old name's default (False) counts as given, so the new name always clashes.
        raise ValueError("Cannot specify both 'expand_nonconcat_dim' and 'expand_nonconcat_dims'.")
    if concat_dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'concat_dim'")
        axis = concat_dim
    return sparse_concat_v2(axis, sp_inputs, expand_nonconcat_dim, name)


# ---- SparseFillEmptyRows ---------------------------------------------------------------------------------------
def _fill_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: Any, values: Any, shape: Any, default: Any) -> tuple[Any, Any, Any, Any]:
        ind, dense = host(indices), host(shape)
        check_parts(op, ind, len(values), dense)
        if len(dense) == 0:
            raise invalid(op, "Input dense_shape should have at least 1 dimension, got rank 0")
        rows = int(dense[0])
        n = len(ind)
        if n and rows <= 0:
            raise invalid(op, f"Input dense_shape[0] is {rows}, but the input has {n} values")
        row = ind[:, 0]
        bad = np.nonzero((row < 0) | (row >= rows))[0]
        if len(bad):
            raise invalid(op, f"indices({bad[0]}, 0) is invalid: {row[bad[0]]} >= {rows}")
        counts = np.bincount(row, minlength=rows) if rows else np.zeros(0, np.int64)
        empty = counts == 0
        per_row = np.maximum(counts, 1)
        starts = np.concatenate([[0], np.cumsum(per_row)[:-1]]) if rows else np.zeros(0, np.int64)
        # Entries keep their order within a row; an empty row gets one default entry at [row, 0, ...].
        order = np.argsort(row, kind="stable")
        within = np.arange(n) - np.concatenate([[0], np.cumsum(counts)[:-1]])[row[order]] if n else np.zeros(0, int)
        reverse = np.empty(n, dtype=np.int64)
        reverse[order] = starts[row[order]] + within
        total = int(per_row.sum())
        out_ind = np.zeros((total, ind.shape[1]), dtype=np.int64)
        out_ind[reverse] = ind
        empty_rows = np.nonzero(empty)[0]
        out_ind[starts[empty_rows], 0] = empty_rows
        source = np.full(total, n, dtype=np.int64)  # position n: the default value
        source[reverse] = np.arange(n)
        joined = concat_values([values, default.reshape(1)], op.inputs[1].dtype)
        return like(out_ind, indices), take(joined, source), like(empty, indices), like(reverse, indices)

    return run


def _fill_grad(op: Operation, _: Any, values_grad: Any, __: Any, ___: Any) -> list[Any]:
    reverse = op.outputs[3]
    d_values = array_ops.gather(values_grad, reverse)
    d_default = math_ops.reduce_sum(values_grad) - math_ops.reduce_sum(d_values)
    return [None, d_values, None, d_default]


op_registry.register_op(
    "SparseFillEmptyRows",
    infer=lambda op: [
        (dtypes.int64, _rows_like(op.inputs[0])),
        (op.inputs[1].dtype, _VECTOR),
        (dtypes.bool, TensorShape([_first_dim(op.inputs[2])])),
        (dtypes.int64, op.inputs[1].shape.with_rank(1)),
    ],
    kernel=_fill_kernel,
    grad=_fill_grad,
    cpu_only=True,
)


def sparse_fill_empty_rows(sp_input: Any, default_value: Any, name: str | None = None) -> tuple[SparseTensor, Tensor]:
    """``sp_input`` with one entry ``default_value`` at ``[row, 0, ...]`` for each row without entries, and a bool
    vector marking those rows.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [2, 0]], [5, 6], [4, 2])
        ...     filled, empty = sess.run(tf.sparse_fill_empty_rows(sp, -1))
        >>> filled.indices.tolist(), filled.values.tolist(), empty.tolist()
        ([[0, 1], [1, 0], [2, 0], [3, 0]], [5, -1, 6, -1], [False, True, False, True])
    """
    sp = as_sparse(sp_input)
    with name_scope(name, "SparseFillEmptyRows", [sp]):
        default = convert_to_tensor(default_value, dtype=sp.values.dtype)
        indices, values, empty, _ = make_op("SparseFillEmptyRows", [*parts(sp), default]).outputs
        return SparseTensor(indices, values, sp.dense_shape), empty


# ---- composites ------------------------------------------------------------------------------------------------
def sparse_reset_shape(sp_input: Any, new_shape: Any = None) -> SparseTensor:
    """``sp_input`` with dense shape ``new_shape`` (no smaller than the old one), or, when None, the smallest shape
    holding its entries.

    Raises:
        ValueError: ``new_shape`` is known while building and smaller than the input's shape, or of another rank.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[0, 1], [2, 0]], [5, 6], [4, 5])
        ...     print(sess.run(tf.sparse_reset_shape(sp)).dense_shape)
        [3 2]
    """
    sp = as_sparse(sp_input)
    indices, values, shape = identity(sp.indices), identity(sp.values), identity(sp.dense_shape)
    if new_shape is None:
        low = math_ops.reduce_max(indices, axis=0)
        out: Any = math_ops.maximum(
            convert_to_tensor(0, dtype=dtypes.int64), math_ops.add(low, array_ops.ones_like(shape))
        )
        return SparseTensor(indices, values, out)
    out = convert_to_tensor(new_shape)
    out.shape.with_rank(1)
    out = math_ops.cast(out, dtypes.int64)
    if out.shape.ndims is not None:
        out.shape.dims[0].merge_with(shape.shape.dims[0])
    known = get_static_value(out)
    if known is not None and sp.shape.is_fully_defined():
        old = np.array(sp.shape.as_list())
        if not np.all(old <= known):
            raise ValueError(
                f"Requested new_shape should have dimension sizes >= sp_input.shape.  Found new_shape "
                f"({old}), sp_input.shape ({known})."
            )
        return SparseTensor(indices, values, known)
    out = with_dependencies([assert_equal(array_ops.shape(shape), array_ops.shape(out))], out)
    out = with_dependencies([assert_less_equal(shape, out)], out)
    return SparseTensor(indices, values, out)


def sparse_expand_dims(sp_input: Any, axis: Any = None, name: str | None = None) -> SparseTensor:
    """``sp_input`` with a dimension of size 1 inserted at ``axis`` (default: last), as ``tf.expand_dims``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sp = tf.SparseTensor([[3, 1]], [7], [5, 2])
        ...     out = sess.run(sparse_expand_dims(sp, 0))
        >>> out.indices.tolist(), out.dense_shape.tolist()
        ([[0, 3, 1]], [1, 5, 2])
    """
    sp = as_sparse(sp_input)
    rank: Any = static_rank(sp)
    if rank is None:
        rank = array_ops.shape(sp.dense_shape)[0]
    axis = -1 if axis is None else axis
    with name_scope(name, "expand_dims", [sp]):
        if isinstance(axis, int | np.integer):
            axis = convert_to_tensor(int(axis), name="axis", dtype=dtypes.int32)
        elif not isinstance(axis, Tensor):
            raise TypeError("axis must be an integer value in range [-rank(sp_input) - 1, rank(sp_input)]")
        if isinstance(rank, int) and constant_value(axis) is not None:
            # Known while building: plain slices keep the static shapes TF's constant folding finds.
            at: Any = int(constant_value(axis))
            at = at if at >= 0 else at + rank + 1
            begin, end = [0, at], [-1, at]
        else:
            at = where_v2(axis >= 0, axis, axis + rank + 1)
            begin, end = array_ops.stack([0, at]), array_ops.stack([-1, at])
        column = array_ops.zeros(array_ops.stack([array_ops.shape(sp.indices)[0], 1]), dtype=dtypes.int64)
        if sp.indices.shape[0].value is not None:
            column = array_ops.zeros([sp.indices.shape[0].value, 1], dtype=dtypes.int64)
        before = array_ops.slice(sp.indices, [0, 0], end)
        after = array_ops.slice(sp.indices, begin, [-1, -1])
        indices = array_ops.concat([before, column, after], axis=1)
        at_1d = [at] if isinstance(at, int) else array_ops.expand_dims(at, 0)
        shape_before = array_ops.slice(sp.dense_shape, [0], at_1d)
        shape_after = array_ops.slice(sp.dense_shape, at_1d, [-1])
        one = convert_to_tensor([1], name="new_shape", dtype=dtypes.int64)
        return SparseTensor(indices, sp.values, array_ops.concat([shape_before, one, shape_after], axis=0))


def sparse_eye(num_rows: Any, num_columns: Any = None, dtype: Any = dtypes.float32, name: str | None = None) -> Any:
    """A sparse identity matrix ``[num_rows, num_columns]`` (square by default).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(sparse_eye(2, 3)).indices.tolist())
        [[0, 0], [1, 1]]
    """
    with name_scope(name, "eye", [num_rows, num_columns]):
        rows = int64(num_rows, "num_rows")
        cols = rows if num_columns is None else int64(num_columns, "num_columns")
        size: Any = math_ops.minimum(rows, cols)
        known = [get_static_value(t) for t in (rows, cols)]
        if all(k is not None for k in known):
            size = int(min(known))  # TF's shape inference folds the constants: the entry count is static
        diagonal = math_ops.range(size, dtype=dtypes.int64)
        count = [size] if isinstance(size, int) else array_ops.expand_dims(size, 0)
        return SparseTensor(
            array_ops.stack([diagonal, diagonal], axis=1),
            array_ops.ones(count, dtype=dtype),
            array_ops.stack([rows, cols]),
        )


def from_dense(tensor: Any, name: str | None = None) -> SparseTensor:
    """The non-zero entries of a dense tensor as a SparseTensor (``tf.sparse.from_dense``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     out = sess.run(from_dense([0, 3, 0, 1]))
        >>> out.indices.tolist(), out.values.tolist()
        ([[1], [3]], [3, 1])
    """
    with name_scope(name, "dense_to_sparse"):
        t = convert_to_tensor(tensor)
        indices = where_v2(math_ops.not_equal(t, array_ops.zeros_like(t)))
        values = gather_nd(t, indices)
        return SparseTensor(indices, values, array_ops.shape(t, out_type=dtypes.int64))
