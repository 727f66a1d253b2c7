"""N-d indexing: ``GatherNd`` (``tf.gather_nd``), ``ScatterNd`` (``tf.scatter_nd``) and the out-of-place updates
``TensorScatterUpdate/Add/Sub/Max/Min`` (``tf.tensor_scatter_nd_*``), with TF's gradients; ``batch_gather`` and
``gather_nd(..., batch_dims=b)`` are composites.

The last axis of ``indices`` holds coordinates into the leading ``K`` axes of the indexed tensor; each index
addresses the slice ``tensor[i0, ..., iK-1, ...]``. Kernels turn coordinates into row numbers of the tensor
seen as ``[prod(shape[:K]), prod(shape[K:])]`` and use one ``index_select``/``index_add_``/``scatter_reduce_``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(gather_nd([[1, 2], [3, 4]], [[1, 0], [0, 1]])))
    ...     print(sess.run(scatter_nd([[1], [3]], [5.0, 7.0], [4])))
    [3 2]
    [0. 5. 0. 7.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import dense, is_string, obj, op_scope
from dtf_notebook.ops.array.concat_split import concat
from dtf_notebook.ops.array.conversions import INDEX_DTYPES, int_tensor
from dtf_notebook.ops.array.diagnostics import fmt_dims, fmt_shape, invalid
from dtf_notebook.ops.array.fill import zeros_like
from dtf_notebook.ops.array.reshape import broadcast_to, reshape, squeeze
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.array.static_values import partial_shape
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.ops.state_ops import subtract_rows

__all__ = [
    "gather_nd",
    "scatter_nd",
    "tensor_scatter_nd_update",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_update",
    "tensor_scatter_add",
    "tensor_scatter_sub",
    "batch_gather",
]


# ---- shared kernel helpers ------------------------------------------------------------------------------------
def _rows(op: Operation, idx: torch.Tensor, dims: tuple[int, ...], what: str) -> torch.Tensor:
    """Row numbers of the coordinates ``idx[..., :K]`` in a tensor of shape ``dims`` seen as rows of its tail."""
    k = idx.shape[-1]
    if k > len(dims):
        raise invalid(op, f"index innermost dimension length must be <= params rank; saw: {k} vs. {len(dims)}")
    flat = idx.reshape(int(np.prod(idx.shape[:-1], dtype=np.int64)), k).long()
    if flat.numel():
        limits = torch.tensor(dims[:k], dtype=torch.int64, device=flat.device)
        bad = ((flat < 0) | (flat >= limits)).any(1)
        if bool(bad.any()):
            i = int(torch.nonzero(bad)[0, 0])
            where = ",".join(str(v) for v in np.unravel_index(i, tuple(idx.shape[:-1]))) if idx.dim() > 1 else str(i)
            coords = ", ".join(str(int(v)) for v in flat[i])
            raise invalid(op, f"indices[{where}] = [{coords}] does not index into {what} {fmt_dims(dims)}")
    strides = [1] * k
    for j in range(k - 2, -1, -1):
        strides[j] = strides[j + 1] * dims[j + 1]
    return flat @ torch.tensor(strides, dtype=torch.int64, device=flat.device) if k else flat.new_zeros(flat.shape[0])


def _as_rows(x: torch.Tensor, k: int) -> torch.Tensor:
    """``x`` viewed as ``[prod(shape[:k]), prod(shape[k:])]``."""
    lead = int(np.prod(x.shape[:k], dtype=np.int64))
    return x.reshape(lead, -1) if x.numel() else x.reshape(lead, int(np.prod(x.shape[k:], dtype=np.int64)))


# ---- GatherNd -------------------------------------------------------------------------------------------------
def _gather_nd_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    params, indices = op.inputs
    if indices.shape.ndims == 0:
        raise ValueError(f"indices must be at least rank 1 for GatherNd '{op.name}'")
    k = indices.shape[-1].value if indices.shape.ndims is not None else None
    if k is None or params.shape.ndims is None:
        return [(params.dtype, unknown_shape())]
    if k > params.shape.ndims:
        raise ValueError(
            f"indices.shape[-1] must be <= params.rank, but saw indices shape: {fmt_shape(indices.shape)} and "
            f"params shape: {fmt_shape(params.shape)} for GatherNd '{op.name}'"
        )
    return [(params.dtype, TensorShape(indices.shape.as_list()[:-1] + params.shape.as_list()[k:]))]


def _gather_nd_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    is_str = is_string(op.inputs[0])

    def run(params: Any, indices: torch.Tensor) -> Any:
        if isinstance(indices, np.ndarray):
            indices = torch.from_numpy(indices)
        dims = tuple(params.shape)
        k = indices.shape[-1]
        rows = _rows(op, indices, dims, "param shape")
        out_shape = tuple(indices.shape[:-1]) + dims[k:]
        if is_str:
            flat = np.asarray(params).reshape((int(np.prod(dims[:k], dtype=np.int64)), -1))
            return obj(flat[rows.cpu().numpy()].reshape(out_shape))
        return _as_rows(params, k).index_select(0, rows.to(params.device)).reshape(out_shape)

    return run


def _gather_nd_grad(op: Operation, grad: Any) -> list[Any]:
    ref, indices = op.inputs
    grad = dense(grad)
    ref_shape = shape(ref, out_type=indices.dtype)
    if indices.shape.ndims == 2 and indices.shape[-1].value == 1:
        return [IndexedSlices(grad, squeeze(indices, axis=[-1]), ref_shape), None]
    return [scatter_nd(indices, grad, ref_shape), None]


op_registry.register_op("GatherNd", infer=_gather_nd_infer, kernel=_gather_nd_kernel, grad=_gather_nd_grad)


def gather_nd(params: Any, indices: Any, name: str | None = None, batch_dims: int = 0) -> Tensor:
    """Gathers the slices of ``params`` at the coordinates in the last axis of ``indices``: the result has shape
    ``indices.shape[:-1] + params.shape[indices.shape[-1]:]``. With ``batch_dims = b`` the first ``b`` axes of both
    are batch axes, and coordinates index into each batch element.

    Raises:
        ValueError: ``indices.shape[-1]`` exceeds the rank of ``params`` (when known while building).
        InvalidArgumentError: (at run time) a coordinate is out of range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.gather_nd([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], [[1, 0]])))
        [[5 6]]
    """
    if batch_dims:
        return _batch_gather_nd(params, indices, int(batch_dims), name)
    with op_scope(name, "GatherNd", [params, indices]) as scope:
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, name="indices")
        check_dtype(i, (dtypes.int16, dtypes.int32, dtypes.int64), "GatherNd", "indices")
        return make_op("GatherNd", [p, i], name=scope).outputs[0]


def _batch_gather_nd(params: Any, indices: Any, batch_dims: int, name: str | None) -> Tensor:
    """``gather_nd`` with batch axes: each index gets its batch coordinates prepended, over flattened batches."""
    with op_scope(name, "batch_gather_nd", [params, indices]):
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, name="indices")
        if i.shape.ndims is None or p.shape.ndims is None:
            raise ValueError("gather_nd with batch_dims needs params and indices of known rank")
        if batch_dims < 0:
            batch_dims += i.shape.ndims
        p_shape, i_shape = shape(p), shape(i, out_type=i.dtype)
        batch_shape = p_shape[:batch_dims]
        batch_size = math_ops.reduce_prod(batch_shape, keepdims=True)
        flat_p = reshape(p, concat([batch_size, p_shape[batch_dims:]], 0))
        flat_i = reshape(i, concat([math_ops.cast(batch_size, i.dtype), i_shape[batch_dims:]], 0))
        rest = i.shape.ndims - batch_dims  # axes of flat_i after the flattened batch axis
        batch_ids = reshape(math_ops.range(math_ops.cast(batch_size[0], i.dtype)), [-1] + [1] * rest)
        batch_ids = broadcast_to(batch_ids, concat([shape(flat_i, out_type=i.dtype)[:-1], [1]], 0))
        gathered = gather_nd(flat_p, concat([batch_ids, flat_i], -1))
        out = reshape(gathered, concat([batch_shape, shape(gathered)[1:]], 0))
        k = i.shape[-1].value
        if k is not None:
            out.set_shape(
                p.shape[:batch_dims].concatenate(i.shape[batch_dims:-1]).concatenate(p.shape[batch_dims + k :])
            )
        return out


# ---- ScatterNd ------------------------------------------------------------------------------------------------
def _check_updates(op: Operation, indices: Tensor, updates: Tensor, target: TensorShape) -> None:
    """TF's build-time check: ``updates.shape == indices.shape[:-1] + target[K:]`` where all are known."""
    if indices.shape.ndims is None or updates.shape.ndims is None or target.ndims is None:
        return
    k = indices.shape[-1].value
    if k is None:
        return
    outer = indices.shape.ndims - 1
    expected = TensorShape(indices.shape.as_list()[:-1] + target.as_list()[k:])
    if not updates.shape.is_compatible_with(expected):
        raise ValueError(
            f"Dimensions of updates {fmt_shape(updates.shape)} do not match indices {fmt_shape(indices.shape)} and "
            f"shape {fmt_shape(target)}: the outer {outer} dimensions of updates must match those of indices and "
            f"the rest must be shape[{k}:] for {op.type} '{op.name}'"
        )


def _scatter_nd_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    indices, updates, shape_t = op.inputs
    target = partial_shape(shape_t)
    _check_updates(op, indices, updates, target)
    return [(updates.dtype, target)]


def _scatter_nd_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: torch.Tensor, updates: torch.Tensor, shape_value: Any) -> torch.Tensor:
        dims = tuple(int(d) for d in shape_value.tolist())
        k = indices.shape[-1]
        rows = _rows(op, indices, dims, "shape")
        out = torch.zeros(dims, dtype=updates.dtype, device=updates.device)
        flat = _as_rows(out, k)
        values = updates.reshape(rows.shape[0], flat.shape[1]) if rows.numel() else None
        if values is not None:
            flat.index_add_(0, rows.to(updates.device), values)  # repeated indices accumulate
        return out

    return run


def _scatter_nd_grad(op: Operation, grad: Any) -> list[Any]:
    return [None, gather_nd(dense(grad), op.inputs[0]), None]


op_registry.register_op("ScatterNd", infer=_scatter_nd_infer, kernel=_scatter_nd_kernel, grad=_scatter_nd_grad)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """A tensor of ``shape`` holding zeros except at ``indices``, where ``updates`` are placed (repeated indices
    add up).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.scatter_nd([[0], [0], [2]], [[1, 1], [2, 2], [3, 3]], [3, 2])))
        [[3 3]
         [0 0]
         [3 3]]
    """
    with op_scope(name, "ScatterNd", [indices, updates, shape]) as scope:
        i = convert_to_tensor(indices, name="indices")
        check_dtype(i, (dtypes.int16, dtypes.int32, dtypes.int64), "ScatterNd", "indices")
        u = convert_to_tensor(updates, name="updates")
        s = int_tensor(shape, name="shape")
        if s.dtype is not i.dtype:
            from dtf_notebook.ops.math_ops import cast

            s = cast(s, i.dtype)
        return make_op("ScatterNd", [i, u, s], name=scope).outputs[0]


# ---- TensorScatterUpdate / Add / Sub / Max / Min ----------------------------------------------------------------
def _tensor_scatter_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    tensor, indices, updates = op.inputs
    _check_updates(op, indices, updates, tensor.shape)
    return [(tensor.dtype, tensor.shape)]


def _tensor_scatter_kernel(combine: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None]):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        def run(tensor: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor) -> torch.Tensor:
            k = indices.shape[-1]
            rows = _rows(op, indices, tuple(tensor.shape), "shape").to(tensor.device)
            out = tensor.clone()  # never write into an input (it may be a cached constant)
            flat = _as_rows(out, k)
            if rows.numel():
                expected = tuple(indices.shape[:-1]) + tuple(tensor.shape[k:])
                if tuple(updates.shape) != expected:
                    raise invalid(
                        op,
                        f"updates.shape {fmt_dims(updates.shape)} must be indices.shape[:-1] + tensor.shape[K:] = "
                        f"{fmt_dims(expected)}",
                    )
                combine(flat, rows, updates.reshape(rows.shape[0], flat.shape[1]))
            return out

        return run

    return factory


def _scatter_reduce(reduce: str) -> Callable[[torch.Tensor, torch.Tensor, torch.Tensor], None]:
    def combine(flat: torch.Tensor, rows: torch.Tensor, values: torch.Tensor) -> None:
        flat.scatter_reduce_(0, rows.view(-1, 1).expand_as(values), values, reduce, include_self=True)

    return combine


def _tensor_scatter_update_grad(op: Operation, grad: Any) -> list[Any]:
    indices = op.inputs[1]
    grad = dense(grad)
    updates_grad = gather_nd(grad, indices)
    tensor_grad = tensor_scatter_nd_update(identity(grad), indices, zeros_like(op.inputs[2], dtype=grad.dtype))
    return [tensor_grad, None, updates_grad]


def _tensor_scatter_add_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    return [identity(grad), None, gather_nd(grad, op.inputs[1])]


def _tensor_scatter_sub_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.math_ops import negative

    grad = dense(grad)
    return [identity(grad), None, negative(gather_nd(grad, op.inputs[1]))]


def _tensor_scatter_min_max_grad(op: Operation, grad: Any) -> list[Any]:
    x, indices, y = op.inputs
    grad = dense(grad)
    output = op.outputs[0]
    # Ties split the gradient evenly between the original entry and the updates that reach the extreme.
    x_indicators = math_ops.cast(math_ops.equal(x, output), grad.dtype)
    y_indicators = math_ops.cast(math_ops.equal(y, gather_nd(output, indices)), grad.dtype)
    ys_indicators = scatter_nd(indices, y_indicators, shape(x, out_type=indices.dtype))
    indicators = math_ops.add(x_indicators, ys_indicators)
    x_grad = math_ops.truediv(math_ops.multiply(grad, x_indicators), indicators)
    y_grad = math_ops.multiply(gather_nd(math_ops.truediv(grad, indicators), indices), y_indicators)
    return [x_grad, None, y_grad]


for _type, _combine, _grad in (
    ("TensorScatterUpdate", lambda flat, rows, values: flat.index_copy_(0, rows, values), _tensor_scatter_update_grad),
    ("TensorScatterAdd", lambda flat, rows, values: flat.index_add_(0, rows, values), _tensor_scatter_add_grad),
    ("TensorScatterSub", subtract_rows, _tensor_scatter_sub_grad),
    ("TensorScatterMax", _scatter_reduce("amax"), _tensor_scatter_min_max_grad),
    ("TensorScatterMin", _scatter_reduce("amin"), _tensor_scatter_min_max_grad),
):
    op_registry.register_op(_type, infer=_tensor_scatter_infer, kernel=_tensor_scatter_kernel(_combine), grad=_grad)


def _tensor_scatter(op_type: str, tensor: Any, indices: Any, updates: Any, name: str | None) -> Tensor:
    with op_scope(name, op_type, [tensor, indices, updates]) as scope:
        t = convert_to_tensor(tensor, name="tensor")
        i = convert_to_tensor(indices, name="indices")
        check_dtype(i, INDEX_DTYPES, op_type, "indices")
        u = convert_to_tensor(updates, dtype=t.dtype, name="updates")
        return make_op(op_type, [t, i, u], name=scope).outputs[0]


def tensor_scatter_nd_update(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with the slices at ``indices`` replaced by ``updates``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_update([1, 2, 3, 4], [[0], [2]], [9, 8])))
        [9 2 8 4]
    """
    return _tensor_scatter("TensorScatterUpdate", tensor, indices, updates, name)


def tensor_scatter_nd_add(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (repeated indices add up).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_add([1, 2, 3], [[0], [0]], [10, 20])))
        [31  2  3]
    """
    return _tensor_scatter("TensorScatterAdd", tensor, indices, updates, name)


def tensor_scatter_nd_sub(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_sub([1, 2, 3], [[2]], [10])))
        [ 1  2 -7]
    """
    return _tensor_scatter("TensorScatterSub", tensor, indices, updates, name)


def tensor_scatter_nd_max(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` holding, at ``indices``, the maximum of its entry and the ``updates`` there.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_max([1, 5, 3], [[0], [1]], [4, 4])))
        [4 5 3]
    """
    return _tensor_scatter("TensorScatterMax", tensor, indices, updates, name)


def tensor_scatter_nd_min(tensor: Any, indices: Any, updates: Any, name: str | None = None) -> Tensor:
    """A copy of ``tensor`` holding, at ``indices``, the minimum of its entry and the ``updates`` there.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tensor_scatter_nd_min([1, 5, 3], [[0], [1]], [4, 4])))
        [1 4 3]
    """
    return _tensor_scatter("TensorScatterMin", tensor, indices, updates, name)


# TF1's older names of the same ops.
tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub


def batch_gather(params: Any, indices: Any, name: str | None = None) -> Tensor:
    """Gathers along the first non-batch axis of ``params``, every axis of ``indices`` but its last being a batch
    axis shared with ``params`` (``gather`` with ``batch_dims = rank(indices) - 1``).

    Raises:
        ValueError: the rank of ``indices`` is unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.batch_gather([[1, 2, 3], [4, 5, 6]], [[2, 0], [1, 1]])))
        [[3 1]
         [5 5]]
    """
    from dtf_notebook.ops.array.gather import gather

    with op_scope(name, "BatchGather", [params, indices]):
        i = convert_to_tensor(indices, name="indices")
        p = convert_to_tensor(params, name="params")
        if i.shape.ndims is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        b = i.shape.ndims - 1
        return gather(p, i, axis=b, batch_dims=b)
