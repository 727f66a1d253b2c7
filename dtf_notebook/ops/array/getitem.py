"""``Tensor.__getitem__``: Python indexing mapped onto ``StridedSlice`` exactly as TF's ``_slice_helper`` does.

Importing this module installs the operator on :class:`Tensor`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.zeros([3, 4, 5])
    ...     x[1, ::-1, newaxis].shape.as_list(), x[..., 0].op.type
    ([4, 1, 5], 'StridedSlice')
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import op_scope
from dtf_notebook.ops.array.gather import boolean_mask
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.slicing import strided_slice
from dtf_notebook.ops.constant_op import constant

#: ``x[tf.newaxis]`` inserts a dimension of size 1 (same as ``None``).
newaxis = None

_SLICE_TYPE_ERROR = (
    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 tensors are "
    "valid indices"
)
_SLICE_INDEX_DTYPES = (dtypes.int16, dtypes.int32, dtypes.int64)


def _check_index(idx: Any) -> None:
    if isinstance(idx, numbers.Integral | Dimension):
        return
    dtype = getattr(idx, "dtype", None)
    idx_shape = getattr(idx, "shape", None)
    if isinstance(idx_shape, TensorShape):
        rank_of = idx_shape.ndims
    else:
        rank_of = len(idx_shape) if idx_shape is not None else None
    if isinstance(dtype, dtypes.DType):
        ok_dtype = dtype in _SLICE_INDEX_DTYPES
    else:
        ok_dtype = dtype is not None and np.dtype(dtype).kind in "iu"
    if not ok_dtype or rank_of not in (None, 0):
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _index_value(v: Any) -> Any:
    if isinstance(v, Dimension):
        return v.value
    if isinstance(v, np.ndarray | np.generic) and v.dtype.kind in "iu" and v.ndim == 0:
        return int(v)
    return v


def _is_bool_index(spec: Any) -> bool:
    return (
        isinstance(spec, bool | np.bool_)
        or (isinstance(spec, Tensor) and spec.dtype is dtypes.bool)
        or (isinstance(spec, np.ndarray) and spec.dtype == np.bool_)
    )


def _slice_parts(s: builtins.slice) -> tuple[Any, Any, Any, bool, bool]:
    """A Python slice's ``(start, stop, step, begin masked, end masked)``; tensor bounds set the dtype of the rest."""
    bound_dtype = None
    for part in (s.start, s.stop, s.step):
        if isinstance(part, Tensor):
            if part.dtype is dtypes.int64 or bound_dtype is None:
                bound_dtype = part.dtype
    start, stop, step = (_index_value(part) for part in (s.start, s.stop, s.step))
    for part in (start, stop, step):
        if part is not None:
            _check_index(part)

    def default(value: int) -> Any:
        return value if bound_dtype is None else constant(value, dtype=bound_dtype)

    begin_masked, end_masked = start is None, stop is None
    if start is None:
        start = default(0)
    if stop is None:
        stop = default(0)
    if step is None:
        step = default(1)
    return start, stop, step, begin_masked, end_masked


def _slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Tensor:
    """``tensor[slice_spec]``: Python indexing mapped onto StridedSlice (TF's ``_slice_helper``).

    Ints drop a dimension, slices (any step, negative too) keep one, ``...`` stands for the remaining
    dimensions, ``None``/``tf.newaxis`` inserts one; scalar int tensors may replace ints and slice bounds.
    A bool tensor (or array) indexes with :func:`boolean_mask`.

    Raises:
        TypeError: an index is not one of those.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3], [4, 5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(x[1, ::-1]).tolist(), x[:, None, 0].shape.as_list())
        [6, 5, 4] [2, 1]
    """
    tensor = convert_to_tensor(tensor)
    if _is_bool_index(slice_spec):
        return boolean_mask(tensor, slice_spec)
    if not isinstance(slice_spec, list | tuple):
        slice_spec = [slice_spec]
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            start, stop, step, begin_masked, end_masked = _slice_parts(s)
            begin_mask |= bit if begin_masked else 0
            end_mask |= bit if end_masked else 0
        elif s is Ellipsis or s is None:
            start, stop, step = 0, 0, 1
            if s is Ellipsis:
                ellipsis_mask |= bit
            else:
                new_axis_mask |= bit
        else:
            s = _index_value(s)
            _check_index(s)
            # StridedSlice ignores `end` on a shrunk axis (it uses begin + 1), so no `s + 1` op is needed.
            start, stop, step = s, s, 1
            shrink_axis_mask |= bit
        begin.append(start)
        end.append(stop)
        strides.append(step)
    with op_scope(None, "strided_slice", [tensor] + begin + end + strides) as scope:
        if begin:
            packed = [stack(part) for part in (begin, end, strides)]
            if any(p.dtype is dtypes.int64 for p in packed) and not all(p.dtype is dtypes.int64 for p in packed):
                packed = [p if p.dtype is dtypes.int64 else math_ops.cast(p, dtypes.int64) for p in packed]
            packed_begin, packed_end, packed_strides = packed
        else:
            packed_begin = packed_end = packed_strides = constant([], dtype=dtypes.int32)
        return strided_slice(
            tensor,
            packed_begin,
            packed_end,
            packed_strides,
            begin_mask=begin_mask,
            end_mask=end_mask,
            shrink_axis_mask=shrink_axis_mask,
            new_axis_mask=new_axis_mask,
            ellipsis_mask=ellipsis_mask,
            var=var,
            name=scope,
        )


Tensor._override_operator("__getitem__", _slice_helper)
