"""Set-like ops on 1-D tensors: ``UniqueWithCounts`` (``tf.unique_with_counts``) and ``ListDiff``
(``tf.setdiff1d``). Neither has a gradient (their outputs are values picked by equality, and indices).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     y, idx, count = unique_with_counts([4, 1, 4, 4, 2])
    ...     print(sess.run([y, count]))
    [array([4, 1, 2], dtype=int32), array([3, 1, 1], dtype=int32)]
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import is_string, op_scope
from dtf_notebook.ops.array.conversions import INDEX_DTYPES
from dtf_notebook.ops.array.diagnostics import fmt_dims, invalid, require_rank
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import torch_dtype

__all__ = ["unique_with_counts", "setdiff1d"]

#: The results of :func:`unique_with_counts` and :func:`setdiff1d`, readable by name as TF's named tuples.
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def _index_dtype(value: Any, attr: str) -> dtypes.DType:
    dtype = dtypes.as_dtype(value)
    if dtype not in INDEX_DTYPES:
        raise TypeError(f"Value for attr '{attr}' of {dtype.name} is not in the list of allowed values: int32, int64")
    return dtype


# ---- UniqueWithCounts ---------------------------------------------------------------------------------------------
def _unique_with_counts_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    require_rank(x, 1)
    out_idx = op.get_attr("out_idx")
    return [(x.dtype, TensorShape([None])), (out_idx, x.shape.with_rank(1)), (out_idx, TensorShape([None]))]


def _unique_with_counts_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    out_idx = torch_dtype(op.get_attr("out_idx"))
    is_str = is_string(op.inputs[0])

    def run(x: Any) -> tuple[Any, torch.Tensor, torch.Tensor]:
        if x.ndim != 1:
            raise invalid(op, f"unique expects a 1D vector, got shape {fmt_dims(x.shape)}")
        if is_str:
            seen: dict[bytes, int] = {}
            idx = [seen.setdefault(v, len(seen)) for v in x]
            y = np.empty(len(seen), dtype=object)
            y[:] = list(seen)
            counts = np.bincount(np.asarray(idx, dtype=np.int64), minlength=len(seen))
            return y, torch.tensor(idx, dtype=out_idx), torch.from_numpy(counts).to(out_idx)
        values, inverse, counts = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        n = values.numel()
        # torch orders distinct values by size; TF orders them by first occurrence.
        first = torch.full((n,), x.numel(), dtype=torch.int64, device=x.device)
        first.scatter_reduce_(0, inverse, torch.arange(x.numel(), device=x.device), reduce="amin")
        order = torch.argsort(first)
        position = torch.empty_like(order)
        position[order] = torch.arange(n, device=x.device)
        return values[order], position[inverse].to(out_idx), counts[order].to(out_idx)

    return run


op_registry.register_op(
    "UniqueWithCounts",
    infer=_unique_with_counts_infer,
    kernel=_unique_with_counts_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """The distinct elements ``y`` of the 1-D ``x`` in order of first occurrence, ``idx`` with ``x == y[idx]``, and
    how often each element of ``y`` occurs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unique_with_counts(["b", "a", "b"]).count))
        [2 1]
    """
    with op_scope(name, "UniqueWithCounts", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        attrs = {"out_idx": _index_dtype(out_idx, "out_idx")}
        y, idx, count = make_op("UniqueWithCounts", [t], attrs, name=scope).outputs
        return UniqueWithCounts(y, idx, count)


# ---- ListDiff -----------------------------------------------------------------------------------------------------
def _list_diff_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, y = op.inputs
    require_rank(x, 1)
    require_rank(y, 1)
    return [(x.dtype, TensorShape([None])), (op.get_attr("out_idx"), TensorShape([None]))]


def _list_diff_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    out_idx = torch_dtype(op.get_attr("out_idx"))
    is_str = is_string(op.inputs[0])

    def run(x: Any, y: Any) -> tuple[Any, torch.Tensor]:
        if x.ndim != 1 or y.ndim != 1:
            raise invalid(op, f"x and y must be 1-D, got shapes {fmt_dims(x.shape)} and {fmt_dims(y.shape)}")
        if is_str:
            drop = set(y.tolist())
            keep = np.array([v not in drop for v in x], dtype=bool)
            kept = np.asarray(x)[keep]
            return kept.astype(object), torch.from_numpy(np.nonzero(keep)[0]).to(out_idx)
        keep = ~torch.isin(x, y)
        return x[keep], torch.nonzero(keep).reshape(-1).to(out_idx)

    return run


op_registry.register_op(
    "ListDiff", infer=_list_diff_infer, kernel=_list_diff_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The entries of the 1-D ``x`` that are not in ``y`` (in ``x``'s order, repeats kept) and their positions in
    ``x``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     out, idx = tf.setdiff1d([1, 2, 3, 4, 2], [2, 4])
        ...     print(sess.run([out, idx]))
        [array([1, 3], dtype=int32), array([0, 2], dtype=int32)]
    """
    with op_scope(name, "ListDiff", [x, y]) as scope:
        a = convert_to_tensor(x, name="x")
        b = convert_to_tensor(y, dtype=a.dtype, name="y")
        attrs = {"out_idx": _index_dtype(index_dtype, "out_idx")}
        out, idx = make_op("ListDiff", [a, b], attrs, name=scope).outputs
        return ListDiff(out, idx)
