"""Queues that hand elements out in another order than they came in: shuffled, or by priority.

* :class:`RandomShuffleQueueResource` (TF1's ``RandomShuffleQueue``): each dequeue takes a uniformly random
  element, and while the queue is open it keeps ``min_after_dequeue`` elements back, so the elements of a
  batch come from a well-mixed pool. Once closed, it hands out everything it holds.
* :class:`PriorityQueueResource` (TF1's ``PriorityQueue``): component 0 of each element is an int64 scalar
  priority; dequeues take the smallest priority first (among equal priorities, the oldest first).

Both are FIFO queues in every other respect (capacity, blocking, closing, errors), so every ``Queue*V2`` op
and reader that takes a queue takes them too.

Example:
    >>> import numpy as np, torch
    >>> q = PriorityQueueResource("q", [dtypes.int64, dtypes.string], [(), ()], capacity=5)
    >>> q.enqueue_many((torch.tensor([3, 1]), np.array([b"c", b"a"], dtype=object)), step=None)
    >>> q.dequeue(step=None)
    (tensor(1), array(b'a', dtype=object))
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.runtime.queues import FIFOQueueResource, format_shape

__all__ = ["RandomShuffleQueueResource", "PriorityQueueResource"]


class RandomShuffleQueueResource(FIFOQueueResource):
    """A queue whose dequeues take random elements, keeping ``min_after_dequeue`` back while it is open.

    Args:
        name, component_types, shapes, capacity, container, mgr, device: As :class:`FIFOQueueResource`.
        min_after_dequeue: Elements kept back from dequeues until the queue is closed.
        seed, seed2: The op's seeds; both 0 draws fresh entropy (TF's rule), else the order is reproducible.

    Raises:
        InvalidArgumentError: ``min_after_dequeue`` is not below the capacity.

    Example:
        >>> import torch
        >>> q = RandomShuffleQueueResource("q", [dtypes.int64], [()], capacity=10, min_after_dequeue=2, seed=7)
        >>> q.enqueue_many((torch.arange(5),), step=None)
        >>> len(q.dequeue_many(3, step=None)[0]), q.size()  # three random elements; two kept back
        (3, 2)
    """

    kind = "RandomShuffleQueue"

    def __init__(
        self,
        name: str,
        component_types: Sequence[dtypes.DType],
        shapes: Sequence[Any],
        capacity: int,
        min_after_dequeue: int = 0,
        seed: int = 0,
        seed2: int = 0,
        container: str = "",
        mgr: Any = None,
        device: str = "",
    ) -> None:
        super().__init__(name, component_types, shapes, capacity, container, mgr, device)
        if min_after_dequeue >= self._limit:
            raise errors.InvalidArgumentError(
                None, None, f"min_after_dequeue {min_after_dequeue} must be < capacity {capacity}"
            )
        self.min_after_dequeue = int(min_after_dequeue)
        self.seeds = (int(seed), int(seed2))
        # (Python's generator: a numpy one costs microseconds per index, and a batch draws one index per element)
        self._rng = random.Random(None if self.seeds == (0, 0) else self.seeds[0] * 2**32 + self.seeds[1])
        self._pool: list[Any] = []  # row numbers or tuples (see FIFOQueueResource._rows)

    def verify(
        self,
        component_types: Sequence[dtypes.DType],
        shapes: Sequence[Any],
        capacity: int,
        min_after_dequeue: int | None = None,
    ) -> None:
        """:meth:`FIFOQueueResource.verify`, and the same ``min_after_dequeue``.

        Example:
            >>> q = RandomShuffleQueueResource("q", [dtypes.float32], [], capacity=5, min_after_dequeue=1)
            >>> q.verify([dtypes.float32], [], 5, 2)
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.InvalidArgumentError: Shared queue 'q' has min_after_dequeue 1 but requested \
min_after_dequeue was 2
        """
        super().verify(component_types, shapes, capacity)
        if min_after_dequeue is not None and int(min_after_dequeue) != self.min_after_dequeue:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shared queue '{self.name}' has min_after_dequeue {self.min_after_dequeue} but requested "
                f"min_after_dequeue was {min_after_dequeue}",
            )

    def _push(self, element: Any) -> None:
        self._pool.append(element)

    def _push_many(self, elements: Sequence[Any]) -> None:
        self._pool.extend(elements)

    def _pop(self) -> Any:
        # TF's way: a random index, swapped with the last element, which is then removed.
        pool = self._pool
        index = self._rng.randrange(len(pool))
        pool[index], pool[-1] = pool[-1], pool[index]
        return pool.pop()

    def _pop_many(self, k: int) -> list[Any]:
        # The same draws and swaps as ``k`` calls of _pop, without a method call and randrange's checks per element
        # (``randrange(n)`` is ``_randbelow(n)`` for an int n > 0).
        pool, below, out = self._pool, self._rng._randbelow, []
        for _ in range(k):
            index = below(len(pool))
            last = pool.pop()
            if index < len(pool):
                out.append(pool[index])
                pool[index] = last
            else:
                out.append(last)
        return out

    def _put_back(self, taken: list[Any]) -> None:
        self._pool.extend(taken)

    def _available(self) -> int:
        held = len(self._pool)
        return held if self._closed else max(0, held - self.min_after_dequeue)

    def size(self) -> int:
        """The number of elements in the queue (those kept back included).

        Example:
            >>> RandomShuffleQueueResource("q", [dtypes.float32], [], capacity=2).size()
            0
        """
        return len(self._pool)


class PriorityQueueResource(FIFOQueueResource):
    """A queue whose dequeues take the element with the smallest int64 priority (its component 0) first.

    Args:
        name, capacity, container, mgr, device: As :class:`FIFOQueueResource`.
        component_types: The element's types, the int64 priority first.
        shapes: The element's shapes, the priority's ``()`` first (or empty: any shapes).

    Example:
        >>> import torch
        >>> q = PriorityQueueResource("q", [dtypes.int64, dtypes.float32], [], capacity=-1)
        >>> q.enqueue((torch.tensor(2), torch.tensor(0.5)), step=None)
        >>> q.enqueue((torch.tensor([1, 2]), torch.tensor(0.5)), step=None)
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.InvalidArgumentError: The priority of an element of queue 'q' must be an int64 \
scalar, got shape [2]
    """

    kind = "PriorityQueue"
    row_storage = False  # (its order reads each element's priority)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._heap: list[tuple[int, int, tuple[Any, ...]]] = []
        self._order = itertools.count()  # among equal priorities the oldest leaves first
        self._front = itertools.count(-1, -1)  # elements put back by a failed dequeue leave before them

    def _check_components(self, components: Sequence[Any], batched: bool) -> int:
        count = super()._check_components(components, batched)
        priority = components[0]
        expected = 1 if batched else 0
        if len(priority.shape) != expected:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"The priority of an element of queue '{self.name}' must be an int64 scalar, got shape "
                f"{format_shape(tuple(priority.shape[expected:]) if batched else tuple(priority.shape))}",
            )
        return count

    def _push(self, element: tuple[Any, ...]) -> None:
        heapq.heappush(self._heap, (int(element[0]), next(self._order), element))

    def _push_many(self, elements: Sequence[Any]) -> None:
        for element in elements:
            self._push(element)

    def _pop(self) -> tuple[Any, ...]:
        return heapq.heappop(self._heap)[2]

    def _put_back(self, taken: list[tuple[Any, ...]]) -> None:
        for element in reversed(taken):
            heapq.heappush(self._heap, (int(element[0]), next(self._front), element))

    def _available(self) -> int:
        return len(self._heap)

    def size(self) -> int:
        """The number of elements in the queue.

        Example:
            >>> PriorityQueueResource("q", [dtypes.int64], [()], capacity=2).size()
            0
        """
        return len(self._heap)
