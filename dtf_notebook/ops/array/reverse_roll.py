"""Reordering along axes: ``ReverseV2`` (``tf.reverse``), ``Roll`` (``tf.roll``) and ``ReverseSequence``
(``tf.reverse_sequence``), with TF's gradients (each is its own inverse, up to the sign of the shift).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run([reverse([1, 2, 3], [0]), roll([1, 2, 3], 1, 0)]))
    [array([3, 2, 1], dtype=int32), array([3, 1, 2], dtype=int32)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import canonical_axis, dense, is_string, obj, op_scope
from dtf_notebook.ops.array.conversions import INDEX_DTYPES, int_tensor
from dtf_notebook.ops.array.diagnostics import invalid
from dtf_notebook.ops.array.static_values import const_ints
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = ["reverse", "reverse_v2", "roll", "reverse_sequence"]


def _axes(op: Operation, values: list[int], n: int, error: Callable[[str], Exception]) -> list[int]:
    seen: list[int] = []
    for a in values:
        if not -n <= a < n:
            raise error(f"'axis'[{len(seen)}] = {a} is out of valid range [{-n}, {n - 1}] for {op.type} '{op.name}'")
        a = canonical_axis(a, n)
        if a in seen:
            raise error(f"axis {a} specified more than once for {op.type} '{op.name}'")
        seen.append(a)
    return seen


# ---- ReverseV2 ----------------------------------------------------------------------------------------------------
def _reverse_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, axis = op.inputs
    if axis.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {axis.shape.ndims} for 'axis' of ReverseV2 '{op.name}'")
    values = const_ints(axis)
    if values is not None and x.shape.ndims is not None:
        _axes(op, values, x.shape.ndims, ValueError)
    return [(x.dtype, x.shape)]


def _reverse_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    static = const_ints(op.inputs[1])
    is_str = is_string(op.inputs[0])

    def run(x: Any, axis: Any) -> Any:
        values = static if static is not None else [int(a) for a in axis.reshape(-1).tolist()]
        dims = tuple(_axes(op, values, x.ndim, lambda m: invalid(op, m)))
        if not dims:
            return x
        return obj(np.flip(x, dims).copy()) if is_str else torch.flip(x, dims)

    return run


op_registry.register_op(
    "ReverseV2",
    infer=_reverse_infer,
    kernel=_reverse_kernel,
    grad=lambda op, grad: [reverse(dense(grad), op.inputs[1]), None],
)


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Tensor:
    """``tensor`` with the order of its entries reversed along each axis in ``axis`` (a list of ints).

    Raises:
        ValueError: an axis is out of range or repeated (when known while building).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reverse([[1, 2], [3, 4]], axis=[-1])))
        [[2 1]
         [4 3]]
    """
    with op_scope(name, "ReverseV2", [tensor, axis]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        a = int_tensor(axis, name="axis")
        return make_op("ReverseV2", [x, a], name=scope).outputs[0]


reverse_v2 = reverse


# ---- Roll ---------------------------------------------------------------------------------------------------------
def _roll_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, shift, axis = op.inputs
    for t, what in ((shift, "shift"), (axis, "axis")):
        if t.shape.ndims not in (None, 0, 1):
            raise ValueError(f"{what} must be a scalar or a 1-D vector, got rank {t.shape.ndims} for Roll '{op.name}'")
    if shift.shape.is_fully_defined() and axis.shape.is_fully_defined():
        if shift.shape.num_elements() != axis.shape.num_elements():
            raise ValueError(f"shift and axis must have the same size for Roll '{op.name}'")
    if x.shape.ndims == 0:
        raise ValueError(f"input must be 1-D or higher for Roll '{op.name}'")
    return [(x.dtype, x.shape)]


def _roll_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    is_str = is_string(op.inputs[0])

    def run(x: Any, shift: Any, axis: Any) -> Any:
        shifts = [int(s) for s in np.reshape(np.asarray(shift.tolist()), -1)]
        axes = [int(a) for a in np.reshape(np.asarray(axis.tolist()), -1)]
        if len(shifts) != len(axes):
            raise invalid(op, f"shift and axis must have the same size, got {len(shifts)} and {len(axes)}")
        n = x.ndim
        totals: dict[int, int] = {}
        for s, a in zip(shifts, axes):
            if not -n <= a < n:
                raise invalid(op, f"axis {a} is out of range for a tensor of rank {n}")
            a = canonical_axis(a, n)
            totals[a] = totals.get(a, 0) + s  # repeated axes roll by the sum of their shifts
        if not totals:
            return x
        if is_str:
            return obj(np.roll(x, list(totals.values()), list(totals)))
        return torch.roll(x, list(totals.values()), list(totals))

    return run


def _roll_grad(op: Operation, grad: Any) -> list[Any]:
    from dtf_notebook.ops.math_ops import negative

    return [roll(dense(grad), negative(op.inputs[1]), op.inputs[2]), None, None]


op_registry.register_op("Roll", infer=_roll_infer, kernel=_roll_kernel, grad=_roll_grad)


def roll(input: Any, shift: Any, axis: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Rotates ``input`` by ``shift`` places along ``axis`` (both may be lists; entries pushed off one end come back
    at the other).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.roll([[1, 2, 3], [4, 5, 6]], shift=[1, -1], axis=[0, 1])))
        [[5 6 4]
         [2 3 1]]
    """
    with op_scope(name, "Roll", [input, shift, axis]) as scope:
        x = convert_to_tensor(input, name="input")
        s = convert_to_tensor(shift, dtype=None if isinstance(shift, Tensor) else dtypes.int32, name="shift")
        a = convert_to_tensor(axis, dtype=None if isinstance(axis, Tensor) else dtypes.int32, name="axis")
        check_dtype(s, INDEX_DTYPES, "Roll", "shift")
        check_dtype(a, INDEX_DTYPES, "Roll", "axis")
        return make_op("Roll", [x, s, a], name=scope).outputs[0]


# ---- ReverseSequence ----------------------------------------------------------------------------------------------
def _reverse_sequence_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, lengths = op.inputs
    seq, batch = op.get_attr("seq_dim"), op.get_attr("batch_dim")
    if lengths.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {lengths.shape.ndims} for ReverseSequence '{op.name}'")
    if x.shape.ndims is not None:
        n = x.shape.ndims
        if seq == batch or not (0 <= seq < n and 0 <= batch < n):
            raise ValueError(f"Invalid seq_dim {seq} or batch_dim {batch} for input of rank {n} ({op.name})")
        if not x.shape[batch].is_compatible_with(lengths.shape[0] if lengths.shape.ndims == 1 else None):
            raise ValueError(
                f"Dimensions must be equal, but are {x.shape[batch].value} and {lengths.shape[0].value} for "
                f"ReverseSequence '{op.name}'"
            )
    return [(x.dtype, x.shape)]


def _reverse_sequence_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    seq, batch = op.get_attr("seq_dim"), op.get_attr("batch_dim")

    def run(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        t_len = x.shape[seq]
        lens = lengths.long().to(x.device)
        if lens.numel() != x.shape[batch]:
            raise invalid(op, f"len(seq_lens) != input.dims({batch}), ({lens.numel()} vs. {x.shape[batch]})")
        if lens.numel() and (int(lens.min()) < 0 or int(lens.max()) > t_len):
            bad = int(torch.nonzero((lens < 0) | (lens > t_len))[0, 0])
            raise invalid(op, f"seq_lens({bad}) > input.dims({seq}) or is negative: {int(lens[bad])} vs. {t_len}")
        # For batch entry b, position t < L_b takes position L_b - 1 - t; the rest stay where they are.
        t = torch.arange(t_len, device=x.device).view(1, -1)
        lb = lens.view(-1, 1)
        source = torch.where(t < lb, lb - 1 - t, t)  # [batch, seq]
        view = [1] * x.dim()
        view[batch], view[seq] = x.shape[batch], t_len
        if batch > seq:
            source = source.t()
        index = source.reshape(view).expand(x.shape)
        return torch.gather(x, seq, index)

    return run


op_registry.register_op(
    "ReverseSequence",
    infer=_reverse_sequence_infer,
    kernel=_reverse_sequence_kernel,
    grad=lambda op, grad: [
        reverse_sequence(
            dense(grad), op.inputs[1], seq_axis=op.get_attr("seq_dim"), batch_axis=op.get_attr("batch_dim")
        ),
        None,
    ],
)


def reverse_sequence(
    input: Any,  # noqa: A002 - TF's name
    seq_lengths: Any,
    seq_axis: int | None = None,
    batch_axis: int | None = None,
    name: str | None = None,
    seq_dim: int | None = None,
    batch_dim: int | None = None,
) -> Tensor:
    """Reverses the first ``seq_lengths[b]`` entries along ``seq_axis`` of each batch entry ``b`` (along
    ``batch_axis``, default 0); ``seq_dim``/``batch_dim`` are TF1's older names.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1)))
        [[2 1 3]
         [6 5 4]]
    """
    if seq_dim is not None:
        if seq_axis is not None:
            raise ValueError("Cannot specify both 'seq_axis' and 'seq_dim'")
        seq_axis = seq_dim
    if batch_dim is not None:
        if batch_axis is not None:
            raise ValueError("Cannot specify both 'batch_axis' and 'batch_dim'")
        batch_axis = batch_dim
    if seq_axis is None:
        raise TypeError("reverse_sequence() needs seq_axis")
    batch_axis = 0 if batch_axis is None else batch_axis
    with op_scope(name, "ReverseSequence", [input, seq_lengths]) as scope:
        x = convert_to_tensor(input, name="input")
        lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
        check_dtype(lengths, INDEX_DTYPES, "ReverseSequence", "seq_lengths")
        n = x.shape.ndims
        seq, batch = (
            (canonical_axis(seq_axis, n), canonical_axis(batch_axis, n)) if n is not None else (seq_axis, batch_axis)
        )
        attrs = {"seq_dim": int(seq), "batch_dim": int(batch)}
        return make_op("ReverseSequence", [x, lengths], attrs, name=scope).outputs[0]
