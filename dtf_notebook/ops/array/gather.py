"""Selecting elements by index or mask: ``gather`` (op ``GatherV2``), ``boolean_mask`` and ``unique``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     p = tf.placeholder(tf.float32, [None, 3])
    ...     gather(p, [[0, 1]], axis=1).shape.as_list(), boolean_mask(p, tf.ones([3], tf.bool), axis=1).shape.as_list()
    ([None, 1, 2], [None, None])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import canonical_axis, dense, is_string, obj, op_scope
from dtf_notebook.ops.array.concat_split import concat
from dtf_notebook.ops.array.conversions import INDEX_DTYPES, int_tensor
from dtf_notebook.ops.array.diagnostics import fmt_dims, invalid, require_rank
from dtf_notebook.ops.array.fill import ones
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.reshape import expand_dims, reshape, squeeze
from dtf_notebook.ops.array.shape_ops import rank, shape, size
from dtf_notebook.ops.array.static_values import const_int
from dtf_notebook.ops.array.transpose import transpose
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.runtime.values import torch_dtype


# ---- GatherV2 ----------------------------------------------------------------------------------
def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = None,
    batch_dims: int = 0,
) -> Tensor:
    """Gathers slices of ``params`` along ``axis`` at ``indices`` (any shape): the result has shape
    ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    The gradient for ``params`` along axis 0 is an ``IndexedSlices`` (only the gathered rows).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     p = tf.constant([[1, 2], [3, 4], [5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.gather(p, [2, 0])).tolist(), sess.run(tf.gather(p, 1, axis=1)).tolist())
        [[5, 6], [1, 2]] [2, 4, 6]
    """
    if axis is None:
        axis = batch_dims
    with op_scope(name, "GatherV2", [params, indices, axis]) as scope:
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, name="indices")
        check_dtype(i, (dtypes.int16, dtypes.int32, dtypes.int64), "GatherV2", "indices")
        a = int_tensor(axis, name="axis")
        batch_dims = int(batch_dims)
        if batch_dims < 0:
            if i.shape.ndims is None:
                raise ValueError("batch_dims < 0 needs indices of known rank")
            batch_dims += i.shape.ndims
        return make_op("GatherV2", [p, i, a], {"batch_dims": batch_dims}, name=scope).outputs[0]


def _gather_infer(op: Operation) -> list:
    p, i, axis_t = op.inputs
    b = op.get_attr("batch_dims")
    axis = const_int(axis_t)
    require_rank(axis_t, 0)
    if p.shape.ndims is None or i.shape.ndims is None or axis is None:
        if p.shape.ndims is not None and i.shape.ndims is not None:
            return [(p.dtype, unknown_shape(p.shape.ndims + i.shape.ndims - 1 - b))]
        return [(p.dtype, unknown_shape())]
    n = p.shape.ndims
    if axis >= n:
        raise ValueError(f"Shape must be at least rank {axis + 1} but is rank {n}")
    if axis < -n:
        raise ValueError(f"Expected axis in the range [{-n}, {n}), but got {axis}")
    a = canonical_axis(axis, n)
    if b > i.shape.ndims:
        raise ValueError(f"batch_dims ({b}) must be less than or equal to rank(indices) ({i.shape.ndims}).")
    if b > a:
        raise ValueError(f"batch_dims ({b}) must be less than or equal to axis ({a}).")
    pd, idims = p.shape.as_list(), i.shape.as_list()
    for k in range(b):
        if pd[k] is not None and idims[k] is not None and pd[k] != idims[k]:
            raise ValueError(f"Dimension {k} in both shapes must be equal, but are {pd[k]} and {idims[k]}")
    return [(p.dtype, TensorShape(pd[:a] + idims[b:] + pd[a + 1 :]))]


def _gather_error(op: Operation, idx: torch.Tensor, limit: int) -> errors.InvalidArgumentError:
    bad = ((idx < 0) | (idx >= limit)).nonzero()[0].tolist()
    value = int(idx[tuple(bad)])
    where = ",".join(str(k) for k in bad)
    return invalid(op, f"indices[{where}] = {value} is not in [0, {limit})")


def _gather_kernel(op: Operation, ctx: Any):
    static_axis = const_int(op.inputs[2])
    b = op.get_attr("batch_dims")
    is_str = is_string(op.inputs[0])

    def run(params: Any, idx: Any, axis_value: Any) -> Any:
        axis = static_axis if static_axis is not None else int(axis_value)
        n = params.ndim
        if not -n <= axis < n:
            raise invalid(op, f"Expected axis in the range [{-n}, {n}), but got {axis}")
        a = canonical_axis(axis, n)
        limit = params.shape[a]
        if isinstance(idx, np.ndarray):
            idx = torch.from_numpy(idx)
        if idx.numel():
            # One reduction + host read: an out-of-range index must fail loudly (CUDA would assert instead).
            lo, hi = torch.aminmax(idx)
            if int(lo) < 0 or int(hi) >= limit:
                raise _gather_error(op, idx, limit)
        if is_str:
            return _gather_numpy(params, idx.cpu().numpy(), a, b)
        if b == 0:
            flat = params.index_select(a, idx.reshape(-1))
            return flat.reshape(params.shape[:a] + idx.shape + params.shape[a + 1 :])
        return _batch_gather(params, idx, a, b)

    return run


def _gather_numpy(params: np.ndarray, idx: np.ndarray, a: int, b: int) -> np.ndarray:
    if b == 0:
        return obj(np.take(params, idx, axis=a))
    batch = params.shape[:b]
    out = [np.take(params[k], idx[k], axis=a - b) for k in np.ndindex(*batch)]
    if out:
        return np.stack(out).reshape(batch + out[0].shape)
    return np.empty(batch + params.shape[b:a] + idx.shape[b:] + params.shape[a + 1 :], dtype=object)


def _batch_gather(params: torch.Tensor, idx: torch.Tensor, a: int, b: int) -> torch.Tensor:
    """Gather with ``b`` leading batch dimensions shared by ``params`` and ``idx``."""
    batch = params.shape[:b]
    nb = int(np.prod(batch, dtype=np.int64))
    outer = params.shape[b:a]
    inner = params.shape[a + 1 :]
    p = params.reshape((nb, int(np.prod(outer, dtype=np.int64)), params.shape[a], -1))
    i = idx.reshape(nb, -1).long()
    rows = torch.arange(nb, device=params.device).view(nb, 1, 1)
    cols = torch.arange(p.shape[1], device=params.device).view(1, -1, 1)
    out = p[rows, cols, i.unsqueeze(1)]  # [nb, outer, n_idx, inner]
    return out.reshape(batch + outer + idx.shape[b:] + inner)


def _gather_grad(op: Operation, grad: Any) -> list:
    params, indices, axis_t = op.inputs
    b = op.get_attr("batch_dims")
    axis = const_int(axis_t)
    grad = dense(grad)
    graph = op.graph
    with graph.colocate_with(params.op):
        params_shape = shape(params)
    if axis == 0:
        n_idx = indices.shape.num_elements()
        tail = params.shape[1:] if params.shape.ndims is not None else unknown_shape()
        if n_idx is not None and tail.is_fully_defined():
            values_shape: Any = constant([n_idx] + tail.as_list(), dtype=dtypes.int32)
            flat_indices_shape: Any = constant([n_idx], dtype=dtypes.int32)
        else:
            flat_indices_shape = expand_dims(size(indices), 0)
            values_shape = concat([flat_indices_shape, params_shape[1:]], 0)
        values = reshape(grad, values_shape)
        flat_indices = reshape(indices, flat_indices_shape)
        return [IndexedSlices(values, flat_indices, params_shape), None, None]
    return [_gather_grad_along_axis(params, indices, axis_t, b, grad, params_shape), None, None]


def _gather_grad_along_axis(
    params: Tensor, indices: Tensor, axis_t: Tensor, b: int, grad: Tensor, params_shape: Tensor
) -> Tensor:
    """TF's gradient for gathers along a non-leading axis: move the gathered axis right after the batch
    dimensions, segment-sum the rows into place, and move it back."""
    axis = const_int(axis_t)
    n = params.shape.ndims
    if axis is not None and n is not None:
        a = canonical_axis(axis, n)
        perm = list(range(b)) + [a] + list(range(b, a)) + list(range(a + 1, n))
        transpose_dims: Any = constant(perm, dtype=dtypes.int32)
        invert_dims: Any = constant(np.argsort(perm).astype(np.int32), dtype=dtypes.int32)
        if params.shape.is_fully_defined():
            dims = params.shape.as_list()
            values_shape: Any = constant(dims[:a] + [-1] + dims[a + 1 :], dtype=dtypes.int32)
            gather_dim_size: Any = constant(dims[a], dtype=dtypes.int32)
        else:
            values_shape = concat([params_shape[:a], [-1], params_shape[a + 1 :]], 0)
            gather_dim_size = params_shape[a]
    else:
        a_t = math_ops.floormod(axis_t, rank(params))
        outer_shape = params_shape[:a_t]
        values_shape = concat([outer_shape, [-1], params_shape[a_t:][1:]], 0)
        gather_dim_size = gather(params_shape, a_t)
        values_dims = size(values_shape)
        axis_dims = size(outer_shape)
        outer_batch = math_ops.range(b)
        batch_axis = math_ops.range(b, axis_dims)
        inner_axes = math_ops.range(math_ops.add(axis_dims, 1), values_dims)
        transpose_dims = concat([outer_batch, expand_dims(axis_dims, 0), batch_axis, inner_axes], 0)
        invert_dims = concat([outer_batch, math_ops.add(batch_axis, 1), [b], inner_axes], 0)
    values_t = transpose(reshape(grad, values_shape), transpose_dims)
    if not b:
        params_grad = math_ops.unsorted_segment_sum(values_t, reshape(indices, [-1]), gather_dim_size)
        return transpose(params_grad, invert_dims)
    # Batched: offset each batch's indices by batch_index * gather_dim_size and segment-sum over the flat batch.
    values_t_shape = shape(values_t)
    batch_shape = values_t_shape[:b]
    flat_values_shape = concat([[-1], values_t_shape[b + 1 :]], 0)
    batch_size = math_ops.reduce_prod(batch_shape)
    offsets = math_ops.multiply(math_ops.range(batch_size), gather_dim_size)
    rest = indices.shape.ndims - b if indices.shape.ndims is not None else math_ops.subtract(rank(indices), b)
    rest_ones = ones(stack([rest]) if isinstance(rest, Tensor) else [rest], dtypes.int32)
    offsets = reshape(offsets, concat([batch_shape, rest_ones], 0))
    flat_idx = math_ops.add(math_ops.cast(indices, dtypes.int32), offsets)
    segments = math_ops.unsorted_segment_sum(
        reshape(values_t, flat_values_shape), reshape(flat_idx, [-1]), math_ops.multiply(gather_dim_size, batch_size)
    )
    params_grad = reshape(segments, concat([batch_shape, flat_values_shape], 0))
    return transpose(params_grad, invert_dims)


op_registry.register_op("GatherV2", infer=_gather_infer, kernel=_gather_kernel, grad=_gather_grad)


# ---- boolean_mask ------------------------------------------------------------------------------
def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Tensor:
    """The elements (or slices) of ``tensor`` where the bool ``mask`` is true, flattened over the mask's dims.

    ``mask``'s shape must match ``tensor.shape[axis:axis + mask.ndim]``. Works on string tensors.

    Raises:
        ValueError: ``mask`` is a scalar, has unknown rank, or its shape does not match.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     names = tf.constant(["a", "b", "c"])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.boolean_mask(names, [True, False, True])))
        [b'a' b'c']
    """
    with op_scope(name, "boolean_mask", [tensor, mask]):
        x = convert_to_tensor(tensor, name="tensor")
        m = convert_to_tensor(mask, name="mask")
        nd_mask = m.shape.ndims
        if nd_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if nd_mask is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions are None.  E.g. "
                "shape=[None] is ok, but shape=None is not."
            )
        axis = 0 if axis is None else axis
        axis_value = const_int(axis) if isinstance(axis, Tensor) else int(axis)
        shape_x = x.shape
        if axis_value is not None and shape_x.ndims is not None:
            if axis_value < 0:
                axis_value += shape_x.ndims
            shape_x[axis_value : axis_value + nd_mask].assert_is_compatible_with(m.shape)
        if axis_value is not None and shape_x.ndims is not None and shape_x.is_fully_defined():
            dims = shape_x.as_list()
            leading = int(np.prod(dims[axis_value : axis_value + nd_mask], dtype=np.int64))
            new_shape: Any = constant(dims[:axis_value] + [leading] + dims[axis_value + nd_mask :], dtype=dtypes.int32)
        else:
            a = axis_value if axis_value is not None else axis
            shape_t = shape(x)
            leading = math_ops.reduce_prod(shape_t[a : a + nd_mask], [0])
            new_shape = concat([shape_t[:a], [leading], shape_t[a + nd_mask :]], 0)
        flat = reshape(x, new_shape)
        if axis_value is not None and shape_x.ndims is not None:
            first = shape_x[axis_value : axis_value + nd_mask].num_elements()
            flat.set_shape(shape_x[:axis_value].concatenate([first]).concatenate(shape_x[axis_value + nd_mask :]))
        flat_mask = reshape(m, [-1])
        indices = squeeze(math_ops.where(flat_mask), axis=[1])
        return gather(flat, indices, axis=axis_value if axis_value is not None else axis)


# ---- Unique ------------------------------------------------------------------------------------
def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The distinct elements ``y`` of the 1-D ``x`` in order of first occurrence, and ``idx`` with ``x == y[idx]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y, idx = tf.unique([3, 1, 3, 2, 1])
        ...     with tf.Session() as sess:
        ...         print(sess.run(y).tolist(), sess.run(idx).tolist())
        [3, 1, 2] [0, 1, 0, 2, 1]
    """
    with op_scope(name, "Unique", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        out_idx = dtypes.as_dtype(out_idx)
        if out_idx not in INDEX_DTYPES:
            raise TypeError(
                f"Value for attr 'out_idx' of {out_idx.name} is not in the list of allowed values: int32, int64"
            )
        y, idx = make_op("Unique", [t], {"out_idx": out_idx}, name=scope).outputs
        return y, idx


def _unique_infer(op: Operation) -> list:
    x = op.inputs[0]
    require_rank(x, 1)
    return [(x.dtype, TensorShape([None])), (op.get_attr("out_idx"), x.shape.with_rank(1))]


def _unique_kernel(op: Operation, ctx: Any):
    out_idx = torch_dtype(op.get_attr("out_idx"))
    is_str = is_string(op.inputs[0])

    def run(x: Any) -> tuple[Any, Any]:
        if x.ndim != 1:
            raise invalid(op, f"unique expects a 1D vector, got shape {fmt_dims(x.shape)}")
        if is_str:
            seen: dict[bytes, int] = {}
            idx = [seen.setdefault(v, len(seen)) for v in x]
            y = np.empty(len(seen), dtype=object)
            y[:] = list(seen)
            return y, torch.tensor(idx, dtype=out_idx)
        values, inverse = torch.unique(x, sorted=True, return_inverse=True)
        n = values.numel()
        # torch orders distinct values by size; TF orders them by first occurrence.
        first = torch.full((n,), x.numel(), dtype=torch.int64, device=x.device)
        first.scatter_reduce_(0, inverse, torch.arange(x.numel(), device=x.device), reduce="amin")
        order = torch.argsort(first)
        position = torch.empty_like(order)
        position[order] = torch.arange(n, device=x.device)
        return values[order], position[inverse].to(out_idx)

    return run


op_registry.register_op("Unique", infer=_unique_infer, kernel=_unique_kernel, grad=op_registry.NOT_DIFFERENTIABLE)
