"""Splitting a tensor by partition number and merging pieces back by index: ``dynamic_partition`` (op
``DynamicPartition``) and ``dynamic_stitch`` (ops ``DynamicStitch`` and ``ParallelDynamicStitch``).

A partitioned embedding lookup uses the pair: the ids are split by owning shard, each shard gathers only
its ids, and the rows are stitched back in id order. Each op's gradient is built from the other one.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([10, 20, 30, 40])
    ...     parts = tf.dynamic_partition(x, [1, 0, 1, 0], num_partitions=2)
    ...     where = tf.dynamic_partition(tf.range(4), [1, 0, 1, 0], num_partitions=2)
    ...     back = tf.dynamic_stitch(where, parts)
    ...     with tf.Session() as sess:
    ...         print([p.tolist() for p in sess.run(parts)], sess.run(back).tolist())
    [[20, 40], [10, 30]] [10, 20, 30, 40]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import is_string, obj, op_scope
from dtf_notebook.ops.array.conversions import same_dtype_tensors
from dtf_notebook.ops.array.diagnostics import fmt_dims, invalid
from dtf_notebook.ops.array.gather import gather
from dtf_notebook.ops.array.reshape import reshape
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.array.static_values import const_ints
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch"]


def _suffix_after_prefix(data: TensorShape, prefix: TensorShape) -> TensorShape:
    """``data``'s dims after those of ``prefix``; raises TF's shape error when ``data`` does not start with it."""
    if prefix.ndims is None or data.ndims is None:
        return unknown_shape()
    if data.ndims < prefix.ndims:
        raise ValueError(f"Shape must be at least rank {prefix.ndims} but is rank {data.ndims}")
    for a, b in zip(data.as_list(), prefix.as_list()):
        if a is not None and b is not None and a != b:
            raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return TensorShape(data.as_list()[prefix.ndims :])


def _int32(value: Any, name: str) -> Tensor:
    """A tensor as it is (its dtype checked by the caller, with TF's message), anything else as int32."""
    return convert_to_tensor(value) if is_tensor_like(value) else convert_to_tensor(value, dtypes.int32, name=name)


# ---- DynamicPartition --------------------------------------------------------------------------
def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: str | None = None) -> list[Tensor]:
    """Splits ``data`` into ``num_partitions`` tensors: entry ``i`` goes to output ``partitions[i]``.

    ``partitions`` (int32) has the shape of a prefix of ``data``'s; output ``p`` holds, in order, the slices
    ``data[i, ...]`` with ``partitions[i] == p``, so its shape is ``[count_p] + data.shape[partitions.ndim:]``.

    Raises:
        ValueError: ``num_partitions`` is below 1, or ``data``'s shape does not start with ``partitions``'.
        TypeError: ``partitions`` is not int32.
        InvalidArgumentError: (when run) a partition number is outside ``[0, num_partitions)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     parts = tf.dynamic_partition([[1, 1], [2, 2], [3, 3]], [2, 0, 2], num_partitions=3)
        ...     with tf.Session() as sess:
        ...         print([p.tolist() for p in sess.run(parts)])
        [[[2, 2]], [], [[1, 1], [3, 3]]]
    """
    num_partitions = int(num_partitions)
    if num_partitions < 1:
        raise ValueError(f"Attr 'num_partitions' of 'DynamicPartition' Op passed {num_partitions} less than minimum 1.")
    with op_scope(name, "DynamicPartition", [data, partitions]) as scope:
        d = convert_to_tensor(data, name="data")
        p = _int32(partitions, "partitions")
        if p.dtype is not dtypes.int32:
            raise TypeError(
                f"Input 'partitions' of 'DynamicPartition' Op has type {p.dtype.name} that does not match "
                "expected type of int32."
            )
        return make_op("DynamicPartition", [d, p], {"num_partitions": num_partitions}, name=scope).outputs


def _partition_infer(op: Operation) -> list:
    data, partitions = op.inputs
    n = op.get_attr("num_partitions")
    if partitions.shape.ndims is None:
        return [(data.dtype, unknown_shape())] * n
    rest = _suffix_after_prefix(data.shape, partitions.shape)
    return [(data.dtype, TensorShape([None]).concatenate(rest))] * n


def _partition_error(op: Operation, partitions: torch.Tensor, n: int) -> Exception:
    bad = ((partitions < 0) | (partitions >= n)).nonzero()[0].tolist()
    where = ",".join(str(k) for k in bad)
    return invalid(op, f"partitions[{where}] = {int(partitions[tuple(bad)])} is not in [0, {n})")


def _partition_kernel(op: Operation, ctx: Any):
    n = op.get_attr("num_partitions")
    is_str = is_string(op.inputs[0])

    def run(data: Any, partitions: torch.Tensor) -> Any:
        parts = split(data, partitions)
        return parts if n > 1 else parts[0]  # a kernel returns a one-output op's value bare

    def split(data: Any, partitions: torch.Tensor) -> tuple[Any, ...]:
        prefix = tuple(partitions.shape)
        if tuple(data.shape[: len(prefix)]) != prefix:
            raise invalid(
                op,
                f"data.shape must start with partitions.shape, got data.shape = {fmt_dims(data.shape)}, "
                f"partitions.shape = {fmt_dims(prefix)}",
            )
        flat_p = partitions.reshape(-1).long()
        if flat_p.numel():
            lo, hi = torch.aminmax(flat_p)
            if int(lo) < 0 or int(hi) >= n:
                raise _partition_error(op, partitions, n)
        # A stable sort by partition keeps each partition's entries in their original order.
        order = torch.sort(flat_p, stable=True).indices
        counts = torch.bincount(flat_p, minlength=n).tolist()
        rows = data.reshape((flat_p.numel(),) + tuple(data.shape[len(prefix) :]))
        if is_str:
            return tuple(obj(part) for part in np.split(rows[order.numpy()], np.cumsum(counts)[:-1]))
        return tuple(torch.split(rows.index_select(0, order.to(rows.device)), counts))

    return run


def _partition_grad(op: Operation, *grads: Any) -> list:
    """Each input row's gradient is the row of its partition's gradient at its position there."""
    data, partitions = op.inputs
    prefix_shape = shape(partitions)
    original_indices = reshape(math_ops.range(math_ops.reduce_prod(prefix_shape)), prefix_shape)
    partitioned_indices = dynamic_partition(original_indices, partitions, op.get_attr("num_partitions"))
    reconstructed = parallel_dynamic_stitch(partitioned_indices, list(grads))
    return [reshape(reconstructed, shape(data)), None]


op_registry.register_op("DynamicPartition", infer=_partition_infer, kernel=_partition_kernel, grad=_partition_grad)


# ---- DynamicStitch / ParallelDynamicStitch ------------------------------------------------------
def _stitch(op_type: str, indices: Any, data: Any, name: str | None) -> Tensor:
    indices, data = list(indices), list(data)
    if not indices or len(indices) != len(data):
        raise ValueError(
            f"{op_type} needs as many indices as data tensors, at least one, got {len(indices)} and {len(data)}"
        )
    with op_scope(name, op_type, indices + data) as scope:
        idx = [_int32(i, "indices") for i in indices]
        bad = [t.dtype.name for t in idx if t.dtype is not dtypes.int32]
        if bad:
            raise TypeError(
                f"Tensors in list passed to 'indices' of '{op_type}' Op have types [{', '.join(bad)}] that do not "
                "match expected type int32."
            )
        values = same_dtype_tensors(data, op_type, "data")
        return make_op(op_type, idx + values, {"N": len(idx)}, name=scope).outputs[0]


def dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """Merges the ``data`` tensors into one: ``merged[indices[m][i, ...]] = data[m][i, ...]``.

    Each ``data[m]`` has shape ``indices[m].shape + rest`` (``rest`` the same for all). The result has
    ``max(indices) + 1`` rows; rows no index names are zeros, and when an index repeats the last one (in
    order of ``m``, then ``i``) wins.

    Raises:
        ValueError: ``indices`` and ``data`` differ in length, or shapes do not fit.
        TypeError: an index tensor is not int32, or the data tensors differ in dtype.
        InvalidArgumentError: (when run) a negative index, or shapes that do not fit.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     merged = tf.dynamic_stitch([[0, 4], [2]], [[[1, 1], [2, 2]], [[3, 3]]])
        ...     with tf.Session() as sess:
        ...         print(merged.shape.as_list(), sess.run(merged).tolist())
        [5, 2] [[1, 1], [0, 0], [3, 3], [0, 0], [2, 2]]
    """
    return _stitch("DynamicStitch", indices, data, name)


def parallel_dynamic_stitch(indices: Any, data: Any, name: str | None = None) -> Tensor:
    """:func:`dynamic_stitch` as op ``ParallelDynamicStitch``, for indices known to be distinct.

    TF leaves the winner among repeated indices unspecified here; this runtime gives the same result as
    ``dynamic_stitch``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     merged = parallel_dynamic_stitch([[1], [0]], [[5.0], [7.0]])
        ...     with tf.Session() as sess:
        ...         print(merged.op.type, sess.run(merged).tolist())
        ParallelDynamicStitch [7.0, 5.0]
    """
    return _stitch("ParallelDynamicStitch", indices, data, name)


def _stitch_infer(op: Operation) -> list:
    n = op.get_attr("N")
    indices, data = op.inputs[:n], op.inputs[n:]
    rest = unknown_shape()
    max_index: int | None = -1
    for i, d in zip(indices, data):
        values = const_ints(i)
        if values is None:
            max_index = None
        elif max_index is not None:
            max_index = max([max_index, *values])
        if i.shape.ndims is None:
            continue
        suffix = _suffix_after_prefix(d.shape, i.shape)
        if rest.ndims is not None and suffix.ndims is not None and rest.ndims != suffix.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {rest.ndims} and {suffix.ndims}")
        try:
            rest = rest.merge_with(suffix)
        except ValueError:
            a, b = rest.as_list(), suffix.as_list()
            k = next(j for j in range(len(a)) if a[j] is not None and b[j] is not None and a[j] != b[j])
            raise ValueError(
                f"Dimension {k} in both shapes must be equal, but are {a[k]} and {b[k]}. Shapes are "
                f"{fmt_dims(a)} and {fmt_dims(b)}."
            ) from None
    first = None if max_index is None else max_index + 1
    return [(data[0].dtype, TensorShape([first]).concatenate(rest))]


def _stitch_kernel(op: Operation, ctx: Any):
    n = op.get_attr("N")
    is_str = is_string(op.inputs[n])

    def run(*inputs: Any) -> Any:
        indices, data = inputs[:n], inputs[n:]
        flat_idx, flat_rows = [], []
        rest = tuple(data[0].shape[indices[0].ndim :])
        for m, (idx, d) in enumerate(zip(indices, data)):
            if tuple(d.shape[: idx.ndim]) != tuple(idx.shape):
                raise invalid(
                    op,
                    f"data[{m}].shape = {fmt_dims(d.shape)} does not start with indices[{m}].shape = "
                    f"{fmt_dims(idx.shape)}",
                )
            if tuple(d.shape[idx.ndim :]) != rest:
                raise invalid(
                    op,
                    f"Need data[0].shape[{indices[0].ndim}:] = data[{m}].shape[{idx.ndim}:], got data[0].shape = "
                    f"{fmt_dims(data[0].shape)}, data[{m}].shape = {fmt_dims(d.shape)}, indices[0].shape = "
                    f"{fmt_dims(indices[0].shape)}, indices[{m}].shape = {fmt_dims(idx.shape)}",
                )
            flat_idx.append(idx.reshape(-1))
            flat_rows.append(d.reshape((-1,) + rest))
        all_idx = torch.cat(flat_idx).long().cpu()  # (one conversion for all: each costs a few microseconds)
        rows_out = 0
        if all_idx.numel():
            low, high = (int(v) for v in torch.aminmax(all_idx))
            if low < 0:
                raise invalid(op, f"indices[{int((all_idx < 0).nonzero()[0, 0])}] is out of range")
            rows_out = high + 1
            if not is_str:
                written = torch.bincount(all_idx, minlength=rows_out)
                if int(written.max()) == 1:
                    # No index repeats (embedding lookups stitch a permutation): one copy, no last-writer search.
                    source = torch.cat(flat_rows)
                    make = torch.empty if all_idx.numel() == rows_out else torch.zeros
                    out = make((rows_out,) + rest, dtype=source.dtype, device=source.device)
                    return out.index_copy_(0, all_idx.to(source.device), source)
        # The last writer of each output row, so that a repeated index keeps its last value.
        last = torch.full((rows_out,), -1, dtype=torch.int64)
        last.scatter_reduce_(0, all_idx, torch.arange(all_idx.numel()), reduce="amax")
        filled = (last >= 0).nonzero().reshape(-1)
        if is_str:
            out = np.full((rows_out,) + rest, b"", dtype=object)
            out[filled.numpy()] = np.concatenate(flat_rows)[last[filled].numpy()]
            return out
        source = torch.cat(flat_rows)
        out = torch.zeros((rows_out,) + rest, dtype=source.dtype, device=source.device)
        out[filled.to(source.device)] = source[last[filled].to(source.device)]
        return out

    return run


def _stitch_grad(op: Operation, grad: Any) -> list:
    """Each data tensor's gradient is the output gradient gathered at its indices."""
    n = op.get_attr("N")
    if isinstance(grad, IndexedSlices):
        rows = shape(op.outputs[0])[0]
        grad = math_ops.unsorted_segment_sum(grad.values, grad.indices, rows)
    return [None] * n + [gather(grad, i) for i in op.inputs[:n]]


for _op_type in ("DynamicStitch", "ParallelDynamicStitch"):
    op_registry.register_op(_op_type, infer=_stitch_infer, kernel=_stitch_kernel, grad=_stitch_grad)
