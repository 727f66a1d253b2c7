"""Runtime transformations that run on the consumer's thread: map, filter, flat_map, interleave, batch,
padded_batch, shuffle, repeat, take, skip, shard, and map fused with batch.

``map`` followed by ``batch`` runs as one :class:`MapAndBatchDataset`: when the map function could be vectorized
(see :mod:`dtf_notebook.data.vectorize`) it runs once per batch on the stacked input components, which costs one
``Plan.run`` per batch instead of one per element; otherwise, or when a batch cannot be stacked before the map
(components of different shapes) or the batched run fails, the batch is mapped element by element, exactly as the
two transformations would, so results and errors stay TF's.

Example:
    >>> import torch
    >>> from dtf_notebook.data.kernels.sources import RangeDataset
    >>> it = BatchDataset(RangeDataset(0, 5, 1, torch.int64), 2, False).iterator()
    >>> [it.next(None), it.next(None), it.next(None), it.next(None)]
    [(tensor([0, 1]),), (tensor([2, 3]),), (tensor([4]),), None]
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.data.kernels.common import (
    RtDataset,
    RtIterator,
    concat,
    invalid,
    row,
    scalar_bool,
    stack,
)
from dtf_notebook.data.kernels.sparse import stack_elements
from dtf_notebook.lazy_modules import torch

__all__ = [
    "MapDataset",
    "FilterDataset",
    "FlatMapDataset",
    "InterleaveDataset",
    "BatchDataset",
    "PaddedBatchDataset",
    "MapAndBatchDataset",
    "ShuffleDataset",
    "RepeatDataset",
    "TakeDataset",
    "SkipDataset",
    "ShardDataset",
    "IgnoreErrorsDataset",
]

Function = Callable[[Sequence[Any]], list[Any]]


class _MapIterator(RtIterator):
    def __init__(self, source: RtIterator, fn: Function) -> None:
        self._source, self._fn = source, fn

    def next(self, step: Any) -> tuple | None:
        element = self._source.next(step)
        if element is None:
            return None
        return tuple(self._fn(element))

    def close(self) -> None:
        self._source.close()


class MapDataset(RtDataset):
    """``map(fn)``: ``fn`` applied to each element.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> it = MapDataset(RangeDataset(1, 3, 1, torch.int64), lambda e: [e[0] * 10]).iterator()
        >>> it.next(None), it.next(None), it.next(None)
        ((tensor(10),), (tensor(20),), None)
    """

    def __init__(self, source: RtDataset, fn: Function) -> None:
        self.source, self.fn = source, fn

    def iterator(self) -> RtIterator:
        return _MapIterator(self.source.iterator(), self.fn)


class _FilterIterator(RtIterator):
    def __init__(self, source: RtIterator, predicate: Function) -> None:
        self._source, self._predicate = source, predicate

    def next(self, step: Any) -> tuple | None:
        source, predicate = self._source, self._predicate
        while True:
            element = source.next(step)
            if element is None or scalar_bool(predicate(element)[0]):
                return element

    def close(self) -> None:
        self._source.close()


class FilterDataset(RtDataset):
    """``filter(predicate)``: the elements for which ``predicate`` gives True.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> it = FilterDataset(RangeDataset(0, 5, 1, torch.int64), lambda e: [e[0] % 2 == 0]).iterator()
        >>> [it.next(None), it.next(None), it.next(None), it.next(None)]
        [(tensor(0),), (tensor(2),), (tensor(4),), None]
    """

    def __init__(self, source: RtDataset, predicate: Function) -> None:
        self.source, self.predicate = source, predicate

    def iterator(self) -> RtIterator:
        return _FilterIterator(self.source.iterator(), self.predicate)


#: ``make(element) -> RtDataset``: the dataset a flat_map or interleave function returns for one input element.
DatasetMaker = Callable[[tuple], RtDataset]


class _FlatMapIterator(RtIterator):
    def __init__(self, source: RtIterator, make: DatasetMaker) -> None:
        self._source, self._make = source, make
        self._current: RtIterator | None = None

    def next(self, step: Any) -> tuple | None:
        while True:
            if self._current is None:
                element = self._source.next(step)
                if element is None:
                    return None
                self._current = self._make(element).iterator()
            out = self._current.next(step)
            if out is not None:
                return out
            self._current.close()
            self._current = None

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
        self._source.close()


class FlatMapDataset(RtDataset):
    """``flat_map(fn)``: the elements of the dataset ``fn`` gives for each input element, one after another.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> make = lambda e: RangeDataset(0, int(e[0]), 1, torch.int64)
        >>> it = FlatMapDataset(RangeDataset(1, 3, 1, torch.int64), make).iterator()
        >>> [int(it.next(None)[0]) for _ in range(3)], it.next(None)
        ([0, 0, 1], None)
    """

    def __init__(self, source: RtDataset, make: DatasetMaker) -> None:
        self.source, self.make = source, make

    def iterator(self) -> RtIterator:
        return _FlatMapIterator(self.source.iterator(), self.make)


class _InterleaveIterator(RtIterator):
    """TF's InterleaveDatasetOp, step for step: ``cycle_length`` open iterators, ``block_length`` elements each in
    turn; an exhausted slot takes the next input element's dataset when its turn comes."""

    def __init__(self, source: RtIterator, make: DatasetMaker, cycle_length: int, block_length: int) -> None:
        self._source, self._make = source, make
        self._cycle, self._block = cycle_length, block_length
        self._current: list[RtIterator | None] = [None] * cycle_length
        self._index = 0
        self._in_block = 0
        self._open = 0
        self._end_of_input = False

    def _advance_cycle(self) -> None:
        self._in_block = 0
        self._index = (self._index + 1) % self._cycle

    def next(self, step: Any) -> tuple | None:
        while not self._end_of_input or self._open > 0:
            current = self._current[self._index]
            if current is not None:
                out = current.next(step)
                if out is not None:
                    self._in_block += 1
                    if self._in_block == self._block:
                        self._advance_cycle()
                    return out
                current.close()
                self._current[self._index] = None
                self._open -= 1
                self._advance_cycle()
            elif not self._end_of_input:
                element = self._source.next(step)
                if element is None:
                    self._end_of_input = True
                else:
                    self._current[self._index] = self._make(element).iterator()
                    self._open += 1
            else:
                self._advance_cycle()
        return None

    def close(self) -> None:
        for it in self._current:
            if it is not None:
                it.close()
        self._source.close()


class InterleaveDataset(RtDataset):
    """``interleave(fn, cycle_length, block_length)``.

    Raises:
        InvalidArgumentError: ``cycle_length`` or ``block_length`` is not positive.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset, TensorsDataset
        >>> make = lambda e: RangeDataset(int(e[0]) * 10, int(e[0]) * 10 + 2, 1, torch.int64)
        >>> it = InterleaveDataset(RangeDataset(1, 3, 1, torch.int64), make, 2, 1).iterator()
        >>> [int(it.next(None)[0]) for _ in range(4)], it.next(None)
        ([10, 20, 11, 21], None)
    """

    def __init__(self, source: RtDataset, make: DatasetMaker, cycle_length: int, block_length: int) -> None:
        if cycle_length <= 0:
            raise invalid("cycle_length must be greater than zero.")
        if block_length <= 0:
            raise invalid("block_length must be greater than zero.")
        self.source, self.make = source, make
        self.cycle_length, self.block_length = cycle_length, block_length

    def iterator(self) -> RtIterator:
        return _InterleaveIterator(self.source.iterator(), self.make, self.cycle_length, self.block_length)


# ---- batching ----------------------------------------------------------------------------------------------------
def _take_elements(source: RtIterator, n: int, step: Any) -> list[tuple]:
    elements: list[tuple] = []
    while len(elements) < n:
        element = source.next(step)
        if element is None:
            break
        elements.append(element)
    return elements


def _check_batch_size(batch_size: int) -> None:
    if batch_size <= 0:
        raise invalid("Batch size must be greater than zero.")


class _BatchIterator(RtIterator):
    def __init__(self, source: RtIterator, n: int, drop_remainder: bool, sparse: Sequence[int]) -> None:
        self._source, self._n, self._drop, self._sparse = source, n, drop_remainder, sparse
        self._done = False

    def next(self, step: Any) -> tuple | None:
        if self._done:
            return None
        source, n = self._source, self._n
        if source.next_batch is not None and not self._sparse:
            batch = source.next_batch(n, step)
            if batch is None:
                self._done = True
                return None
            if int(batch[0].shape[0]) < n:
                self._done = True
                if self._drop:
                    return None
            return batch
        elements = _take_elements(source, n, step)
        if len(elements) < n:
            self._done = True
            if not elements or self._drop:
                return None
        return stack_elements(elements, self._sparse)

    def close(self) -> None:
        self._source.close()


class BatchDataset(RtDataset):
    """``batch(batch_size, drop_remainder)``: consecutive elements stacked along a new dimension 0 (the
    SparseTensors whose components start at the slots ``sparse`` batched as TF does, see :mod:`.sparse`).

    Raises:
        InvalidArgumentError: ``batch_size`` is not positive (and, per batch, elements of different shapes, or
            SparseTensors of different ranks).

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> it = BatchDataset(RangeDataset(0, 5, 1, torch.int64), 2, True).iterator()
        >>> [it.next(None), it.next(None), it.next(None)]
        [(tensor([0, 1]),), (tensor([2, 3]),), None]
    """

    def __init__(self, source: RtDataset, batch_size: int, drop_remainder: bool, sparse: Sequence[int] = ()) -> None:
        _check_batch_size(batch_size)
        self.source, self.batch_size, self.drop_remainder = source, batch_size, drop_remainder
        self.sparse = list(sparse)

    def iterator(self) -> RtIterator:
        return _BatchIterator(self.source.iterator(), self.batch_size, self.drop_remainder, self.sparse)


def _pad_component(parts: list[Any], padded: Sequence[int], fill: Any, component: int) -> Any:
    rank = len(padded)
    for p in parts:
        if len(p.shape) != rank:
            raise invalid(
                f"Padded shape has rank {rank} but component {component} of the input element has rank {len(p.shape)}."
            )
    dims = []
    for d, want in enumerate(padded):
        longest = max(int(p.shape[d]) for p in parts)
        if want >= 0 and longest > want:
            raise errors.DataLossError(None, None, "Attempted to pad to a smaller size than the input element.")
        dims.append(want if want >= 0 else longest)
    shape = (len(parts), *dims)
    if isinstance(parts[0], torch.Tensor):
        out = torch.full(shape, fill.item() if isinstance(fill, torch.Tensor) else fill, dtype=parts[0].dtype)
        for i, p in enumerate(parts):
            out[(i, *(slice(0, int(s)) for s in p.shape))] = p
        return out
    out = np.empty(shape, dtype=object)
    out.fill(fill[()] if isinstance(fill, np.ndarray) else fill)
    for i, p in enumerate(parts):
        out[(i, *(slice(0, int(s)) for s in p.shape), Ellipsis)] = p
    return out


class _PaddedBatchIterator(RtIterator):
    def __init__(self, owner: PaddedBatchDataset) -> None:
        self._owner = owner
        self._source = owner.source.iterator()
        self._done = False

    def next(self, step: Any) -> tuple | None:
        if self._done:
            return None
        owner = self._owner
        elements = _take_elements(self._source, owner.batch_size, step)
        if len(elements) < owner.batch_size:
            self._done = True
            if not elements or owner.drop_remainder:
                return None
        return tuple(
            _pad_component([e[c] for e in elements], owner.padded_shapes[c], owner.padding_values[c], c)
            for c in range(len(elements[0]))
        )

    def close(self) -> None:
        self._source.close()


class PaddedBatchDataset(RtDataset):
    """``padded_batch``: like ``batch``, each component padded to its padded shape (-1: the batch's longest).

    Example:
        >>> from dtf_notebook.data.kernels.sources import TensorSlicesDataset
        >>> src = MapDataset(TensorSlicesDataset([torch.tensor([1, 2])]), lambda e: [torch.ones(int(e[0]))])
        >>> it = PaddedBatchDataset(src, 2, [[-1]], [torch.tensor(0.0)], False).iterator()
        >>> it.next(None)
        (tensor([[1., 0.],
                [1., 1.]]),)
    """

    def __init__(
        self,
        source: RtDataset,
        batch_size: int,
        padded_shapes: Sequence[Sequence[int]],
        padding_values: Sequence[Any],
        drop_remainder: bool,
    ) -> None:
        _check_batch_size(batch_size)
        self.source, self.batch_size, self.drop_remainder = source, batch_size, drop_remainder
        self.padded_shapes = [[int(d) for d in s] for s in padded_shapes]
        self.padding_values = list(padding_values)

    def iterator(self) -> RtIterator:
        return _PaddedBatchIterator(self)


class _MapAndBatchIterator(RtIterator):
    def __init__(self, owner: MapAndBatchDataset) -> None:
        self._owner = owner
        self._source = owner.source.iterator()
        self._done = False

    def next(self, step: Any) -> tuple | None:
        if self._done:
            return None
        owner, source, n = self._owner, self._source, self._owner.batch_size
        stacked: tuple | None = None
        elements: list[tuple] | None = None
        if source.next_batch is not None and owner.batched is not None:
            stacked = source.next_batch(n, step)
            count = 0 if stacked is None else int(stacked[0].shape[0])
        else:
            elements = _take_elements(source, n, step)
            count = len(elements)
        if count < n:
            self._done = True
            if count == 0 or owner.drop_remainder:
                return None
        if owner.batched is not None:
            if stacked is None:
                try:
                    stacked = stack_elements(elements)
                except errors.InvalidArgumentError:
                    stacked = None  # elements of different shapes: map them one by one
            if stacked is not None:
                result = owner.run_batched(stacked, count)
                if result is not None:
                    return result
                if elements is None:
                    elements = [tuple(row(c, i) for c in stacked) for i in range(count)]
        fn = owner.fn
        return stack_elements([tuple(fn(e)) for e in elements], owner.sparse)

    def close(self) -> None:
        self._source.close()


class MapAndBatchDataset(RtDataset):
    """``map(fn).batch(n)`` fused: the function runs once per batch when it was vectorized, else per element.

    Args:
        source: The map's input.
        fn: The per-element function.
        batched: The vectorized function (taking and giving stacked components), or None.
        batched_outputs: For each output of ``batched``, whether it has the batch dimension (else it is the same
            for every element and gets repeated).
        batch_size, drop_remainder: The batch's.
        sparse: Where the components of the function's sparse outputs start (such a function is never vectorized).

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> double = lambda e: [e[0] * 2]
        >>> it = MapAndBatchDataset(RangeDataset(0, 3, 1, torch.int64), double, double, [True], 2, False).iterator()
        >>> it.next(None), it.next(None), it.next(None)
        ((tensor([0, 2]),), (tensor([4]),), None)
    """

    def __init__(
        self,
        source: RtDataset,
        fn: Function,
        batched: Function | None,
        batched_outputs: Sequence[bool],
        batch_size: int,
        drop_remainder: bool,
        sparse: Sequence[int] = (),
    ) -> None:
        _check_batch_size(batch_size)
        self.source, self.fn, self.batched = source, fn, batched
        self.sparse = list(sparse)
        self.batched_outputs = list(batched_outputs)
        self.batch_size, self.drop_remainder = batch_size, drop_remainder

    def run_batched(self, stacked: tuple, count: int) -> tuple | None:
        """The batch from one run of the vectorized function; None when it cannot stand for the element-wise map
        (it failed, or gave another batch size): the caller then maps element by element."""
        try:
            outs = self.batched(stacked)
        except errors.OpError:
            return None
        result = []
        for value, has_batch in zip(outs, self.batched_outputs):
            if has_batch:
                if len(value.shape) == 0 or int(value.shape[0]) != count:
                    return None
                result.append(value)
            elif isinstance(value, torch.Tensor):
                result.append(value.unsqueeze(0).expand(count, *value.shape).contiguous())
            else:
                result.append(stack([value] * count))
        return tuple(result)

    def iterator(self) -> RtIterator:
        return _MapAndBatchIterator(self)


# ---- order, repetition, selection --------------------------------------------------------------------------------
class _ShuffleIterator(RtIterator):
    def __init__(self, source: RtIterator, buffer_size: int, seed: int) -> None:
        self._source, self._size = source, buffer_size
        self._random = random.Random(seed)
        self._buffer: list[Any] = []
        self._end = False
        # Over the rows of tensors (from_tensor_slices) the buffer holds row indices, and a batch is one gather.
        self._indices = getattr(source, "next_index", None)
        if self._indices is not None:
            self.next_batch = self._next_batch

    def _pick(self, step: Any) -> Any:
        buffer = self._buffer
        while not self._end and len(buffer) < self._size:
            element = self._indices() if self._indices is not None else self._source.next(step)
            if element is None:
                self._end = True
                break
            buffer.append(element)
        if not buffer:
            return None
        i = self._random.randrange(len(buffer))
        out = buffer[i]
        last = buffer.pop()
        if i < len(buffer):
            buffer[i] = last
        return out

    def next(self, step: Any) -> tuple | None:
        picked = self._pick(step)
        if picked is None or self._indices is None:
            return picked
        return tuple(row(c, picked) for c in self._source.components)

    def _next_batch(self, n: int, step: Any) -> tuple | None:
        picked = []
        while len(picked) < n:
            index = self._pick(step)
            if index is None:
                break
            picked.append(index)
        return self._source.gather(picked) if picked else None

    def close(self) -> None:
        self._buffer = []
        self._source.close()


class ShuffleDataset(RtDataset):
    """``shuffle(buffer_size, seed, reshuffle_each_iteration)``: TF's buffer algorithm (fill, pick one at random,
    refill its place). Each pass (epoch) draws a new order when reshuffling, from a sequence of seeds that the
    op's seeds fix; unseeded, the order differs in every run.

    Raises:
        InvalidArgumentError: ``buffer_size`` is not positive.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> ds = ShuffleDataset(RangeDataset(0, 5, 1, torch.int64), 5, 1, 2, reshuffle=False)
        >>> first = [int(x[0]) for x in _drain(ds.iterator())]; second = [int(x[0]) for x in _drain(ds.iterator())]
        >>> sorted(first), first == second
        ([0, 1, 2, 3, 4], True)
    """

    def __init__(self, source: RtDataset, buffer_size: int, seed: int, seed2: int, reshuffle: bool) -> None:
        if buffer_size <= 0:
            raise invalid(f"buffer_size must be greater than zero, got {buffer_size}.")
        self.source, self.buffer_size, self.reshuffle = source, buffer_size, reshuffle
        base = (seed, seed2) if (seed or seed2) else int.from_bytes(os.urandom(8), "little")
        self._seeds = random.Random(repr(base))
        self._fixed = self._seeds.getrandbits(64)

    def iterator(self) -> RtIterator:
        seed = self._seeds.getrandbits(64) if self.reshuffle else self._fixed
        return _ShuffleIterator(self.source.iterator(), self.buffer_size, seed)


def _drain(it: RtIterator) -> list[tuple]:
    out = []
    while (element := it.next(None)) is not None:
        out.append(element)
    return out


class _RepeatIterator(RtIterator):
    def __init__(self, source: RtDataset, count: int) -> None:
        self._dataset, self._left = source, count
        self._current: RtIterator | None = source.iterator() if count != 0 else None
        self._produced = False
        if self._current is not None and self._current.next_batch is not None:
            self.next_batch = self._next_batch

    def _next_epoch(self) -> None:
        """The current pass ended: start the next one, unless the count is reached or the pass was empty."""
        self._current.close()
        self._current = None
        if self._left > 0:
            self._left -= 1
        # An empty pass would repeat forever: stop (TF does the same for an empty input).
        if self._left != 0 and self._produced:
            self._produced = False
            self._current = self._dataset.iterator()

    def next(self, step: Any) -> tuple | None:
        while self._current is not None:
            element = self._current.next(step)
            if element is not None:
                self._produced = True
                return element
            self._next_epoch()
        return None

    def _next_batch(self, n: int, step: Any) -> tuple | None:
        """Up to ``n`` elements, across passes, stacked."""
        parts: list[tuple] = []
        count = 0
        while count < n and self._current is not None:
            part = self._current.next_batch(n - count, step)
            if part is None:
                self._next_epoch()
                continue
            self._produced = True
            parts.append(part)
            count += int(part[0].shape[0])
        if not parts:
            return None
        return tuple(concat([p[c] for p in parts]) for c in range(len(parts[0])))

    def close(self) -> None:
        if self._current is not None:
            self._current.close()


class RepeatDataset(RtDataset):
    """``repeat(count)``: the input ``count`` times (forever when -1).

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> [int(e[0]) for e in _drain(RepeatDataset(RangeDataset(0, 2, 1, torch.int64), 2).iterator())]
        [0, 1, 0, 1]
    """

    def __init__(self, source: RtDataset, count: int) -> None:
        self.source, self.count = source, count

    def iterator(self) -> RtIterator:
        return _RepeatIterator(self.source, self.count)


class _TakeIterator(RtIterator):
    def __init__(self, source: RtIterator, count: int) -> None:
        self._source, self._left = source, count
        if source.next_batch is not None:
            self.next_batch = self._next_batch

    def next(self, step: Any) -> tuple | None:
        if self._left == 0:
            return None
        element = self._source.next(step)
        if element is not None and self._left > 0:
            self._left -= 1
        return element

    def _next_batch(self, n: int, step: Any) -> tuple | None:
        if self._left == 0:
            return None
        part = self._source.next_batch(n if self._left < 0 else min(n, self._left), step)
        if part is not None and self._left > 0:
            self._left -= int(part[0].shape[0])
        return part

    def close(self) -> None:
        self._source.close()


class TakeDataset(RtDataset):
    """``take(count)``: the first ``count`` elements (all when -1).

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> [int(e[0]) for e in _drain(TakeDataset(RangeDataset(0, 9, 1, torch.int64), 2).iterator())]
        [0, 1]
    """

    def __init__(self, source: RtDataset, count: int) -> None:
        self.source, self.count = source, count

    def iterator(self) -> RtIterator:
        return _TakeIterator(self.source.iterator(), self.count)


class _SkipIterator(RtIterator):
    def __init__(self, source: RtIterator, count: int) -> None:
        self._source, self._skip = source, count

    def next(self, step: Any) -> tuple | None:
        while self._skip != 0:
            if self._source.next(step) is None:
                self._skip = 0
                return None
            if self._skip > 0:
                self._skip -= 1
        return self._source.next(step)

    def close(self) -> None:
        self._source.close()


class SkipDataset(RtDataset):
    """``skip(count)``: all but the first ``count`` elements (none when -1).

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> [int(e[0]) for e in _drain(SkipDataset(RangeDataset(0, 4, 1, torch.int64), 2).iterator())]
        [2, 3]
    """

    def __init__(self, source: RtDataset, count: int) -> None:
        self.source, self.count = source, count

    def iterator(self) -> RtIterator:
        return _SkipIterator(self.source.iterator(), self.count)


class _ShardIterator(RtIterator):
    def __init__(self, source: RtIterator, num_shards: int, index: int) -> None:
        self._source, self._n, self._index = source, num_shards, index
        self._position = 0

    def next(self, step: Any) -> tuple | None:
        while True:
            element = self._source.next(step)
            if element is None:
                return None
            position = self._position
            self._position = position + 1
            if position % self._n == self._index:
                return element

    def close(self) -> None:
        self._source.close()


class ShardDataset(RtDataset):
    """``shard(num_shards, index)``: every ``num_shards``-th element, starting at ``index``.

    Raises:
        InvalidArgumentError: ``num_shards`` is not positive or ``index`` is out of range (TF's messages).

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> [int(e[0]) for e in _drain(ShardDataset(RangeDataset(0, 7, 1, torch.int64), 3, 1).iterator())]
        [1, 4]
    """

    def __init__(self, source: RtDataset, num_shards: int, index: int) -> None:
        if num_shards <= 0:
            raise invalid(f"Number of shards must be greater than zero (currently num_shards = {num_shards}).")
        if not 0 <= index < num_shards:
            raise invalid(f"Index must be between 0 and {num_shards - 1} (currently index = {index}).")
        self.source, self.num_shards, self.index = source, num_shards, index

    def iterator(self) -> RtIterator:
        return _ShardIterator(self.source.iterator(), self.num_shards, self.index)


class _IgnoreErrorsIterator(RtIterator):
    def __init__(self, source: RtIterator) -> None:
        self._source = source

    def next(self, step: Any) -> tuple | None:
        while True:
            try:
                return self._source.next(step)
            except errors.OpError:
                continue

    def close(self) -> None:
        self._source.close()


class IgnoreErrorsDataset(RtDataset):
    """``ignore_errors()``: the input's elements, skipping those whose computation raised an error.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> def fail_on_one(e):
        ...     if int(e[0]) == 1:
        ...         raise invalid("bad element")
        ...     return [e[0]]
        >>> it = IgnoreErrorsDataset(MapDataset(RangeDataset(0, 3, 1, torch.int64), fail_on_one)).iterator()
        >>> [int(e[0]) for e in _drain(it)]
        [0, 2]
    """

    def __init__(self, source: RtDataset) -> None:
        self.source = source

    def iterator(self) -> RtIterator:
        return _IgnoreErrorsIterator(self.source.iterator())
