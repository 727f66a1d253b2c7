"""TF's strided-slice spec rules as pure functions: the output shape of a slice, and how to run one in torch.

A spec is ``begin``/``end``/``strides`` plus five bit masks (``MASK_NAMES``); these functions follow TF's
``BuildDenseSpec`` and canonicalisation, so shapes and error texts match TF.

Example:
    >>> # x[1:, ::-1, None] on a [3, 4] input: begin_mask 0b010, end_mask 0b011, new_axis_mask 0b100.
    >>> strided_slice_shape([3, 4], [1, 0, 0], [0, 0, 0], [1, -1, 1], (0b010, 0b011, 0, 0b100, 0))
    [2, 4, 1]
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

NEW_AXIS = -1
MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


class SliceSpecError(ValueError):
    """A strided-slice spec that cannot apply to the input (TF's message).

    Example:
        >>> strided_slice_shape([3], [0, 0], [1, 1], [1, 1], (0, 0, 0b11, 0, 0))
        Traceback (most recent call last):
            ...
        dtf_notebook.ops.array.slice_spec.SliceSpecError: Multiple ellipses in slice spec not allowed
    """


def dense_spec(
    ndims: int, n_sparse: int, masks: Sequence[int]
) -> tuple[list[tuple[int | None, bool, bool, bool]], list[int]]:
    """TF's BuildDenseSpec: maps the sparse slice spec onto one entry per input dimension.

    Returns ``(dense, final)``: ``dense[d] = (sparse index or None, begin masked, end masked, shrink)`` and, per
    output dimension, the dense dimension it comes from (``NEW_AXIS`` for an inserted one); shrunk dimensions
    do not appear in ``final``.

    Example:
        >>> # x[0] on a [3, 4] input: dimension 0 shrinks, dimension 1 comes from the implicit ellipsis.
        >>> dense_spec(2, 1, (0, 0, 0, 0, 0b1))
        ([(0, False, False, True), (None, True, True, False)], [1])
    """
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    if bin(ellipsis_mask & ((1 << n_sparse) - 1)).count("1") > 1:
        raise SliceSpecError("Multiple ellipses in slice spec not allowed")
    ellipsis_seen = False
    new_after_ellipsis = 0
    for i in range(n_sparse):
        if ellipsis_seen and (new_axis_mask >> i) & 1:
            new_after_ellipsis += 1
        if (ellipsis_mask >> i) & 1:
            ellipsis_seen = True
    sparse_dims = n_sparse
    if not ellipsis_seen:
        ellipsis_mask |= 1 << n_sparse  # an implicit ellipsis at the end
        sparse_dims += 1
    dense: list[tuple[int | None, bool, bool, bool]] = []
    final: list[int] = []
    for i in range(sparse_dims):
        if (ellipsis_mask >> i) & 1:
            stop = min(ndims - (sparse_dims - i) + 1 + new_after_ellipsis, ndims)
            while len(dense) < stop:
                final.append(len(dense))
                dense.append((None, True, True, False))
        elif (new_axis_mask >> i) & 1:
            final.append(NEW_AXIS)
        else:
            if len(dense) == ndims:
                raise SliceSpecError(f"Index out of range using input dim {len(dense)}; input has only {ndims} dims")
            shrink = bool((shrink_mask >> i) & 1)
            if not shrink:
                final.append(len(dense))
            dense.append((i, bool((begin_mask >> i) & 1), bool((end_mask >> i) & 1), shrink))
    return dense, final


def slice_dim(
    i: int,
    dim: int | None,
    b: int | None,
    e: int | None,
    s: int | None,
    begin_masked: bool,
    end_masked: bool,
    shrink: bool,
) -> tuple[int | None, int | None, int | None]:
    """One dense dimension: ``(start, stop, size)`` after TF's canonicalisation (None where unknown).

    Example:
        >>> slice_dim(0, 5, 1, None, 2, begin_masked=False, end_masked=True, shrink=False)  # [1::2] of 5
        (1, 5, 2)
    """
    if s == 0:
        raise SliceSpecError(f"strides[{i}] must be non-zero")
    if dim is None:
        return None, None, 1 if shrink else None
    if shrink:
        if s is not None and s <= 0:
            raise SliceSpecError("only stride 1 allowed on non-range indexing.")
        if b is None:
            return None, None, 1
        x = b + dim if b < 0 else b
        if not 0 <= x < dim:
            raise SliceSpecError(f"slice index {x} of dimension {i} out of bounds.")
        return x, x + 1, 1
    if s is None:
        return None, None, None
    lo, hi = (0, dim) if s > 0 else (-1, dim - 1)

    def canonical(v: int | None, masked: bool, is_end: bool) -> int | None:
        if masked:
            return (hi if is_end else lo) if s > 0 else (lo if is_end else hi)
        if v is None:
            return None
        v = v + dim if v < 0 else v
        return min(max(v, lo), hi)

    start, stop = canonical(b, begin_masked, False), canonical(e, end_masked, True)
    if start is None or stop is None:
        return start, stop, None
    length = stop - start
    if length == 0 or (length < 0) != (s < 0):
        return start, stop, 0
    return start, stop, (abs(length) + abs(s) - 1) // abs(s)


def _resolve(
    dims: Sequence[int | None], spec: tuple[Sequence[int | None], ...], masks: Sequence[int]
) -> tuple[list[tuple[bool, int | None, tuple[int | None, int | None, int | None]]], list[int]]:
    """Per dense dimension ``(shrink, stride, (start, stop, size))``, and ``final`` from :func:`dense_spec`.

    ``spec`` is ``(begin, end, strides)``.
    """
    begin, end, strides = spec
    dense, final = dense_spec(len(dims), len(begin), masks)
    resolved = []
    for d, (j, begin_masked, end_masked, shrink) in enumerate(dense):
        b, e, s = (begin[j], end[j], strides[j]) if j is not None else (0, 0, 1)
        resolved.append((shrink, s, slice_dim(d, dims[d], b, e, s, begin_masked, end_masked, shrink)))
    return resolved, final


def strided_slice_shape(
    dims: Sequence[int | None],
    begin: Sequence[int | None],
    end: Sequence[int | None],
    strides: Sequence[int | None],
    masks: Sequence[int],
) -> list[int | None]:
    """The output shape of a strided slice over ``dims`` (entries may be unknown).

    Example:
        >>> strided_slice_shape([None, 4], [0, 1], [0, 3], [1, 1], (0b01, 0, 0, 0, 0))  # x[:, 1:3]
        [None, 2]
    """
    resolved, final = _resolve(dims, (begin, end, strides), masks)
    return [1 if f == NEW_AXIS else resolved[f][2][2] for f in final]


def strided_slice_plan(
    dims: Sequence[int], begin: Sequence[int], end: Sequence[int], strides: Sequence[int], masks: Sequence[int]
) -> tuple[tuple[Any, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...] | None]:
    """How to run a strided slice on a known shape: ``(index, flip_dims, sliced_shape, final_shape or None)``.

    ``x[index]`` takes the elements with positive steps (torch has no negative-step slicing), flipping
    ``flip_dims`` of that result restores the requested order, and a reshape to ``final_shape`` inserts new axes.

    Example:
        >>> # x[1:, ::-1] on a [3, 4] input: slice forward, then flip dimension 1 of the result.
        >>> strided_slice_plan([3, 4], [1, 0], [0, 0], [1, -1], (0b10, 0b11, 0, 0, 0))
        ((slice(1, 3, 1), slice(0, 4, 1)), (1,), (2, 4), None)
    """
    resolved, final = _resolve(dims, (begin, end, strides), masks)
    index: list[Any] = []
    flips: list[int] = []
    sliced: list[int] = []
    position: dict[int, int] = {}  # dense dimension -> its place in ``sliced`` (shrunk ones have none)
    for d, (shrink, s, (start, stop, n)) in enumerate(resolved):
        if shrink:
            index.append(start)
            continue
        if n == 0:
            index.append(builtins.slice(0, 0, 1))
        elif s > 0:
            index.append(builtins.slice(start, stop, s))
        else:
            last = start + s * (n - 1)
            index.append(builtins.slice(last, start + 1, -s))
            if n > 1:
                flips.append(len(sliced))
        position[d] = len(sliced)
        sliced.append(n)
    final_shape = None
    if NEW_AXIS in final:
        final_shape = tuple(1 if f == NEW_AXIS else sliced[position[f]] for f in final)
    return tuple(index), tuple(flips), tuple(sliced), final_shape
