"""SparseTensors in runtime datasets: batching them, and slicing one into rows (``from_tensor_slices``).

A sparse leaf of an element travels as three components, ``indices`` (int64 ``[N, rank]``), ``values`` (``[N]``)
and ``dense_shape`` (int64 ``[rank]``); every transformation that passes elements along carries them untouched.
Only the ones that see a sparse leaf as one value are told where its components start (``sparse`` slots, see
:func:`dtf_notebook.data.structure.sparse_slots`):

* ``batch`` concatenates the SparseTensors of a batch as TF does: each entry's index gains its position in the batch,
  and the batch's dense shape is ``[n, largest of each dimension]`` (all of one rank);
* ``from_tensor_slices`` splits a SparseTensor of rank >= 2 into the rows of its dimension 0, after checking its
  indices as TF does (in bounds, in row-major order, no repeats).

Example:
    >>> import torch
    >>> a = (torch.tensor([[0]]), torch.tensor([5.0]), torch.tensor([1]))
    >>> b = (torch.tensor([[2]]), torch.tensor([6.0]), torch.tensor([3]))
    >>> batch_sparse([a, b])
    (tensor([[0, 0],
            [1, 2]]), tensor([5., 6.]), tensor([2, 3]))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.data.kernels.common import concat, invalid, stack
from dtf_notebook.lazy_modules import torch

__all__ = ["batch_sparse", "stack_elements", "check_indices", "SparseRows"]

Sparse = tuple[Any, Any, Any]  # (indices, values, dense_shape)


def batch_sparse(parts: Sequence[Sparse]) -> Sparse:
    """SparseTensors of one rank as one SparseTensor with a new leading dimension (TF's batching rule).

    Raises:
        InvalidArgumentError: their ranks differ (TF's message).

    Example:
        >>> empty = (torch.zeros((0, 1), dtype=torch.int64), torch.zeros(0), torch.tensor([4]))
        >>> batch_sparse([empty, empty])[2]
        tensor([2, 4])
    """
    rank = int(parts[0][2].shape[0])
    for i, (_, _, shape) in enumerate(parts):
        if int(shape.shape[0]) != rank:
            raise invalid(
                f"Inconsistent shape across SparseTensors: rank prior to SparseTensor[{i}] was: {rank} but rank of "
                f"SparseTensor[{i}] is: {int(shape.shape[0])}"
            )
    indices = torch.cat(
        [
            torch.cat([torch.full((int(idx.shape[0]), 1), b, dtype=torch.int64), idx.to(torch.int64)], dim=1)
            for b, (idx, _, _) in enumerate(parts)
        ]
    )
    values = concat([v for _, v, _ in parts])
    shapes = torch.stack([s.to(torch.int64) for _, _, s in parts])
    largest = shapes.max(dim=0).values if rank else shapes.new_zeros(0)
    dense_shape = torch.cat([torch.tensor([len(parts)], dtype=torch.int64), largest])
    return indices, values, dense_shape


def stack_elements(elements: Sequence[tuple], sparse: Sequence[int] = ()) -> tuple:
    """A batch of elements: dense components stacked, the three components of a sparse leaf (starting at the
    slots ``sparse``) batched by :func:`batch_sparse`.

    Raises:
        InvalidArgumentError: dense components of different shapes, or sparse ones of different ranks.

    Example:
        >>> element = (torch.tensor(1), torch.tensor([[0]]), torch.tensor([7]), torch.tensor([2]))
        >>> [t.tolist() for t in stack_elements([element, element], sparse=[1])]
        [[1, 1], [[0, 0], [1, 0]], [7, 7], [2, 2]]
    """
    width = len(elements[0])
    if not sparse:
        return tuple(stack([e[c] for e in elements], c) for c in range(width))
    starts = set(sparse)
    out: list[Any] = []
    c, leaf = 0, 0
    while c < width:
        if c in starts:
            out.extend(batch_sparse([(e[c], e[c + 1], e[c + 2]) for e in elements]))
            c += 3
        else:
            out.append(stack([e[c] for e in elements], leaf))
            c += 1
        leaf += 1
    return tuple(out)


def _index_text(row: Any) -> str:
    return ",".join(str(int(d)) for d in row)


def check_indices(indices: Any, dense_shape: Any) -> None:
    """Raises TF's error for the first index out of bounds, out of row-major order or repeated.

    Raises:
        InvalidArgumentError: as ``SparseTensor::IndicesValid`` words it.

    Example:
        >>> check_indices(torch.tensor([[0, 1], [0, 1]]), torch.tensor([2, 2]))
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.InvalidArgumentError: indices[1] = [0,1] is repeated
    """
    n = int(indices.shape[0])
    if n == 0:
        return
    idx, shape = indices.to(torch.int64), dense_shape.to(torch.int64)
    out_of_bounds = ((idx < 0) | (idx >= shape)).any(dim=1)
    out_of_order = torch.zeros(n, dtype=torch.bool)
    repeated = torch.zeros(n, dtype=torch.bool)
    if n > 1 and idx.shape[1] > 0:
        diff = idx[1:] - idx[:-1]
        moved = diff != 0
        first = moved.to(torch.int8).argmax(dim=1, keepdim=True)
        out_of_order[1:] = moved.any(dim=1) & (diff.gather(1, first).squeeze(1) < 0)
        repeated[1:] = ~moved.any(dim=1)
    elif n > 1:
        repeated[1:] = True
    bad = out_of_bounds | out_of_order | repeated
    if not bool(bad.any()):
        return
    i = int(bad.to(torch.int8).argmax())
    where = f"indices[{i}] = [{_index_text(idx[i])}]"
    if bool(out_of_bounds[i]):
        raise invalid(f"{where} is out of bounds: need 0 <= index < [{_index_text(shape)}]")
    if bool(out_of_order[i]):
        raise invalid(
            f"{where} is out of order. Many sparse ops require sorted indices.\n"
            "    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n"
        )
    raise invalid(f"{where} is repeated")


class SparseRows:
    """The rows of dimension 0 of a SparseTensor of rank >= 2, each a SparseTensor of one rank less.

    Raises:
        InvalidArgumentError: the rank is below 2, or the indices are not valid (see :func:`check_indices`).

    Example:
        >>> rows = SparseRows(torch.tensor([[0, 0], [2, 1]]), torch.tensor([1.0, 2.0]), torch.tensor([3, 4]))
        >>> rows.n, rows.row(1)[0].shape, rows.row(2)
        (3, torch.Size([0, 1]), (tensor([[1]]), tensor([2.]), tensor([4])))
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        rank = int(dense_shape.shape[0])
        if rank < 2:
            raise invalid(f"Rank of input SparseTensor should be > 1, but saw rank: {rank}")
        check_indices(indices, dense_shape)
        self.indices, self.values = indices.to(torch.int64), values
        self.dense_shape = dense_shape.to(torch.int64)
        self.n = int(self.dense_shape[0])
        rows = torch.arange(self.n + 1, dtype=torch.int64)
        self._bounds = torch.searchsorted(self.indices[:, 0].contiguous(), rows).tolist()

    def row(self, i: int) -> Sparse:
        """Row ``i``: ``(indices, values, dense_shape)`` without dimension 0."""
        start, stop = self._bounds[i], self._bounds[i + 1]
        return self.indices[start:stop, 1:], self.values[start:stop], self.dense_shape[1:]
