"""Storage for the elements of a queue whose components all have fully defined shapes: one growing array per
component, an element being one row of each.

A queue that kept each element as a tuple of tensors made 2 Python objects per component per element: an
``enqueue_many`` of 100 split its batch into 200 tensors and a ``dequeue_many`` stacked them again (about 0.5 ms
each under the GIL), and a shuffle queue holding thousands of elements gave the cyclic garbage collector
thousands of tuples to walk. Here an element is an ``int`` row number: a batch goes in with one copy per component
and comes out with one ``take`` per component. Rows are numpy arrays (numpy's copies are single-threaded; torch's
hand large copies to its intra-op threads, which costs milliseconds on a busy machine) and leave as tensors.

Example:
    >>> import torch
    >>> from dtf_notebook.framework import dtypes
    >>> store = RowStore([dtypes.float32, dtypes.string], [(2,), ()])
    >>> rows = store.put((torch.tensor([[1.0, 2.0], [3.0, 4.0]]), np.array([b"a", b"b"], dtype=object)), 0, 2)
    >>> x, names = store.take(rows[::-1])
    >>> x.tolist(), names.tolist(), store.in_use
    ([[3.0, 4.0], [1.0, 2.0]], [b'b', b'a'], 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime import values

__all__ = ["RowStore", "row_storable"]

_FIRST_ROWS = 64
_FIRST_BYTES = 1 << 20  # the first allocation holds at most this much (or the first batch): big rows grow from few


def row_storable(component_types: Sequence[dtypes.DType], shapes: Sequence[tuple[Any, ...]]) -> bool:
    """Whether a queue of these components can keep its elements as rows: every shape given and fully defined,
    every type one numpy holds (strings as objects; not bfloat16, resources or variants).

    Example:
        >>> row_storable([dtypes.float32], [(784,)]), row_storable([dtypes.float32], [(None,)])
        (True, False)
    """
    if not shapes or len(shapes) != len(component_types):
        return False
    if any(shape is None or any(d is None for d in shape) for shape in shapes):
        return False  # (a shape of unknown rank, or an unknown dimension)
    return all(_numpy_dtype(t) is not None for t in component_types)


def _numpy_dtype(dtype: dtypes.DType) -> Any:
    if dtype.is_string:
        return np.dtype(object)
    if dtype.base_dtype in (dtypes.bfloat16, dtypes.resource, dtypes.variant):
        return None
    try:
        found = np.dtype(dtype.as_numpy_dtype)
    except (TypeError, AttributeError):
        return None
    return found if found.kind in "biufc" else None  # (quantized types are structured dtypes: kept as tuples)


class RowStore:
    """One array per component, ``rows x shape``, grown by doubling up to the queue's capacity; free rows are reused.

    Args:
        component_types: The queue's component types (see :func:`row_storable`).
        shapes: Their fully defined shapes.
        capacity: The queue's capacity (negative: unbounded): the most rows ever needed.

    Example:
        >>> import torch
        >>> store = RowStore([dtypes.int64], [()])
        >>> first = store.put((torch.arange(3),), 0, 3)
        >>> store.take(first[:1])[0].tolist(), store.take_one(first[2])[0].item(), store.in_use
        ([0], 2, 1)
    """

    def __init__(
        self, component_types: Sequence[dtypes.DType], shapes: Sequence[tuple[int, ...]], capacity: int = -1
    ) -> None:
        self._capacity = int(capacity) if capacity >= 0 else None
        self._dtypes = [_numpy_dtype(t) for t in component_types]
        self._torch = [None if t.is_string else values.torch_dtype(t) for t in component_types]
        self._shapes = [tuple(int(d) for d in s) for s in shapes]
        self._columns: list[np.ndarray] = [np.empty((0, *s), dtype=d) for s, d in zip(self._shapes, self._dtypes)]
        self._free: list[int] = []

    @property
    def in_use(self) -> int:
        """Rows holding an element."""
        return len(self._columns[0]) - len(self._free) if self._columns else 0

    def _grow(self, wanted: int) -> None:
        old = len(self._columns[0])
        row_bytes = sum(c.dtype.itemsize * int(np.prod(c.shape[1:])) for c in self._columns)
        first = max(1, min(_FIRST_ROWS, _FIRST_BYTES // max(1, row_bytes)))
        new = max(first, 2 * old, old + wanted)
        if self._capacity is not None:
            new = max(min(new, self._capacity), old + wanted)
        for i, column in enumerate(self._columns):
            grown = np.empty((new, *column.shape[1:]), dtype=column.dtype)
            grown[:old] = column
            self._columns[i] = grown
        # Lowest rows first, so a queue that drains and refills writes the same memory.
        self._free.extend(range(new - 1, old - 1, -1))

    def put(self, components: Sequence[Any], start: int, stop: int) -> list[int]:
        """Copies elements ``start:stop`` of a batch (components split along dimension 0) into free rows; returns
        their row numbers, in order."""
        count = stop - start
        arrays = [_as_numpy(value)[start:stop] for value in components]  # (before taking rows: this may fail)
        if count > len(self._free):
            self._grow(count - len(self._free))
        rows = [self._free.pop() for _ in range(count)]
        index = np.asarray(rows, dtype=np.intp)
        for column, array in zip(self._columns, arrays):
            column[index] = array
        return rows

    def put_one(self, components: Sequence[Any]) -> int:
        """Copies one element into a free row; returns its row number."""
        arrays = [_as_numpy(value) for value in components]
        if not self._free:
            self._grow(1)
        row = self._free.pop()
        for column, array in zip(self._columns, arrays):
            column[row, ...] = array  # (``column[row] =`` would store a 0-d object array as an object)
        return row

    def take(self, rows: Sequence[int]) -> tuple[Any, ...]:
        """The elements of ``rows``, stacked per component (tensors; strings as object arrays); the rows are
        free again afterwards."""
        index = np.asarray(rows, dtype=np.intp)
        out = tuple(self._out(column.take(index, axis=0), i) for i, column in enumerate(self._columns))
        self._release(index)
        self._free.extend(rows)
        return out

    def take_one(self, row: int) -> tuple[Any, ...]:
        """The element of ``row`` (no batch dimension); the row is free again afterwards."""
        out = tuple(self._out(column[row, ...].copy(), i) for i, column in enumerate(self._columns))
        self._release(row)
        self._free.append(row)
        return out

    def _release(self, rows: Any) -> None:
        for column in self._columns:
            if column.dtype == object:
                column[rows, ...] = None  # free rows keep no strings alive

    def _out(self, array: np.ndarray, i: int) -> Any:
        return array if self._torch[i] is None else torch.from_numpy(array)


def _as_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu" or value.requires_grad:
            value = value.detach().cpu()
        return value.numpy()
    return np.asarray(value)
