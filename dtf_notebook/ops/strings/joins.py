"""String ops that join: ``StringJoin`` (element-wise), ``ReduceJoin`` (along axes), ``UnsortedSegmentJoin``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(string_join([["a", "b"], "x"], separator="-")))
    ...     print(sess.run(reduce_join([["a", "b"], ["c", "d"]])))
    [b'a-x' b'b-x']
    b'abcd'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op
from dtf_notebook.ops.strings.common import register, shape_text, string_input, to_numpy

__all__ = ["string_join", "reduce_join", "unsorted_segment_join"]


# ---- StringJoin -------------------------------------------------------------------------------
def string_join(inputs: Any, separator: str = "", name: str | None = None) -> Tensor:
    """Joins the strings of ``inputs`` element-wise with ``separator``; scalar inputs are repeated.

    Raises:
        ValueError: two non-scalar inputs have different static shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_join(["x", ["1", "2"]])))
        [b'x1' b'x2']
    """
    tensors = [string_input(x, "StringJoin", "inputs") for x in inputs]
    attrs = {"N": len(tensors), "separator": separator}
    return make_op("StringJoin", tensors, attrs, name=name or "StringJoin").outputs[0]


def _join_infer(op: Any) -> list:
    shape = TensorShape([])
    for t in op.inputs:
        if t.shape.ndims == 0:
            continue
        if shape.ndims == 0:
            shape = t.shape
        elif not shape.is_compatible_with(t.shape):
            raise ValueError(
                f"Shapes must be equal rank, or dimensions must match: {shape_text(shape)} and "
                f"{shape_text(t.shape)} for '{op.name}' (op: 'StringJoin')"
            )
        else:
            shape = shape.merge_with(t.shape)
    if shape.ndims == 0 and any(t.shape.ndims is None for t in op.inputs):
        shape = unknown_shape()
    return [(dtypes.string, shape)]


def _join_kernel(op: Any, ctx: Any) -> Callable[..., np.ndarray]:
    separator = op.get_attr("separator").encode()

    def run(*values: np.ndarray) -> np.ndarray:
        shapes = [np.shape(v) for v in values if np.ndim(v) > 0]
        if len(set(shapes)) > 1:
            a, b = shapes[0], next(x for x in shapes if x != shapes[0])
            raise errors.InvalidArgumentError(
                None, op, f"Input shapes do not match: {shape_text(a)} vs. {shape_text(b)}"
            )
        shape = shapes[0] if shapes else ()
        parts = [np.broadcast_to(np.asarray(v, dtype=object), shape).reshape(-1) for v in values]
        out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=object)
        for i in range(out.size):
            out[i] = separator.join(p[i] for p in parts)
        return out.reshape(shape)

    return run


register("StringJoin", _join_infer, _join_kernel)


# ---- ReduceJoin -------------------------------------------------------------------------------
def reduce_join(
    inputs: Any,
    axis: Any = None,
    keep_dims: bool | None = None,
    separator: str = "",
    name: str | None = None,
    reduction_indices: Any = None,
    keepdims: bool | None = None,
) -> Tensor:
    """Joins the strings of ``inputs`` along ``axis`` (all axes by default), in row-major order.

    Args:
        inputs: A string tensor.
        axis: The axes to join along (negative counts from the end); None joins everything.
        keep_dims: Keep the joined axes with length 1 (``keepdims`` is the same).
        separator: Put between joined strings.
        name: Name of the op.
        reduction_indices: Old name of ``axis``.
        keepdims: New name of ``keep_dims``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(reduce_join([["a", "b"], ["c", "d"]], axis=0, separator=",")))
        [b'a,c' b'b,d']
    """
    if axis is None:
        axis = reduction_indices
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(None, "ReduceJoin", [inputs, axis]):
        x = string_input(inputs, "ReduceJoin", "inputs")
        if axis is None:
            if x.shape.ndims is not None:
                axes = convert_to_tensor(np.arange(x.shape.ndims - 1, -1, -1, dtype=np.int32))
            else:
                from dtf_notebook.ops import array_ops, math_ops

                axes = math_ops.range(array_ops.rank(x) - 1, -1, -1)
        else:
            axes = convert_to_tensor(axis, dtype=dtypes.int32, name="reduction_indices")
        check_dtype(axes, (dtypes.int32,), "ReduceJoin", "reduction_indices")
        attrs = {"keep_dims": keep, "separator": separator}
        return make_op("ReduceJoin", [x, axes], attrs, name=name or "ReduceJoin").outputs[0]


def _normalized_axes(rank: int, axes: np.ndarray, op: Any = None) -> list[int]:
    """The reduction axes as sorted non-negative ints: TF's run-time errors with ``op``, its build errors without."""
    seen: list[int] = []
    for a in axes.reshape(-1).tolist():
        if not -rank <= a < rank:
            if op is None:
                raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
            raise errors.OutOfRangeError(
                None, op, f"Invalid reduction dimension {a} for input with {rank} dimension(s)"
            )
        a = a + rank if a < 0 else a
        if a in seen:
            if op is None:
                continue  # (TF finds duplicates only when the op runs)
            raise errors.InvalidArgumentError(None, op, f"Duplicate reduction dimension {a}")
        seen.append(a)
    return sorted(seen)


def _reduce_join_infer(op: Any) -> list:
    x, axes_t = op.inputs
    axes = constant_value(axes_t)
    keep = op.get_attr("keep_dims")
    if x.shape.ndims is None or axes is None:
        if axes is not None and axes.size == 0:
            return [(dtypes.string, x.shape)]
        return [(dtypes.string, unknown_shape())]
    axes = _normalized_axes(x.shape.ndims, np.asarray(axes))
    dims = x.shape.as_list()
    out = (
        [1 if i in axes else d for i, d in enumerate(dims)]
        if keep
        else [d for i, d in enumerate(dims) if i not in axes]
    )
    return [(dtypes.string, TensorShape(out))]


def _reduce_join_kernel(op: Any, ctx: Any) -> Callable[..., np.ndarray]:
    separator = op.get_attr("separator").encode()
    keep = op.get_attr("keep_dims")

    def run(values: np.ndarray, axes: Any) -> np.ndarray:
        values = np.asarray(values, dtype=object)
        rank = values.ndim
        reduced = _normalized_axes(rank, to_numpy(axes), op)
        kept = [i for i in range(rank) if i not in reduced]
        moved = np.transpose(values, kept + reduced)
        sizes = [int(np.prod([values.shape[i] for i in group], dtype=np.int64)) for group in (kept, reduced)]
        rows = moved.reshape(sizes)
        out = np.empty(sizes[0], dtype=object)
        for i, row in enumerate(rows):
            out[i] = separator.join(row) if reduced else row[0]
        shape = (
            [1 if i in reduced else values.shape[i] for i in range(rank)] if keep else [values.shape[i] for i in kept]
        )
        return out.reshape(shape)

    return run


register("ReduceJoin", _reduce_join_infer, _reduce_join_kernel)


# ---- UnsortedSegmentJoin ----------------------------------------------------------------------
def unsorted_segment_join(
    inputs: Any, segment_ids: Any, num_segments: Any, separator: str = "", name: str | None = None
) -> Tensor:
    """Joins the rows of ``inputs`` that share a segment id (in their order); empty segments are ``b""``.

    The output has ``num_segments`` rows of ``inputs.shape[rank(segment_ids):]``; ids must be in ``[0, num_segments)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 3, separator="+")))
        [b'b' b'a+c' b'']
    """
    x = string_input(inputs, "UnsortedSegmentJoin", "inputs")
    ids = convert_to_tensor(segment_ids, name="segment_ids")
    check_dtype(ids, (dtypes.int32, dtypes.int64), "UnsortedSegmentJoin", "segment_ids")
    n = convert_to_tensor(num_segments, name="num_segments")
    check_dtype(n, (dtypes.int32, dtypes.int64), "UnsortedSegmentJoin", "num_segments")
    attrs = {"separator": separator, "Tindices": ids.dtype, "Tnumsegments": n.dtype}
    return make_op("UnsortedSegmentJoin", [x, ids, n], attrs, name=name or "UnsortedSegmentJoin").outputs[0]


def _segment_join_infer(op: Any) -> list:
    x, ids, n = op.inputs
    count = constant_value(n)
    if x.shape.ndims is None or ids.shape.ndims is None:
        return [(dtypes.string, unknown_shape())]
    first = int(count) if count is not None else None
    return [(dtypes.string, TensorShape([first] + x.shape.as_list()[ids.shape.ndims :]))]


def _segment_join_kernel(op: Any, ctx: Any) -> Callable[..., np.ndarray]:
    separator = op.get_attr("separator").encode()

    def run(values: np.ndarray, segment_ids: Any, num_segments: Any) -> np.ndarray:
        values = np.asarray(values, dtype=object)
        ids = to_numpy(segment_ids)
        n = int(to_numpy(num_segments))
        if values.shape[: ids.ndim] != ids.shape:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"segment_ids.shape = {shape_text(ids.shape)} does not match inputs.shape = {shape_text(values.shape)}",
            )
        inner = values.shape[ids.ndim :]
        rows = values.reshape((-1,) + inner)
        groups: list[list[np.ndarray]] = [[] for _ in range(n)]
        for row, sid in zip(rows, ids.reshape(-1).tolist()):
            if not 0 <= sid < n:
                raise errors.InvalidArgumentError(
                    None, op, "segment_ids are not allowed to exceed num_segments or to have negative values."
                )
            groups[sid].append(np.asarray(row, dtype=object).reshape(-1))
        size = int(np.prod(inner, dtype=np.int64))
        out = np.empty((n, size), dtype=object)
        for s, members in enumerate(groups):
            for j in range(size):
                out[s, j] = separator.join(m[j] for m in members)
        return out.reshape((n,) + inner)

    return run


register("UnsortedSegmentJoin", _segment_join_infer, _segment_join_kernel)
