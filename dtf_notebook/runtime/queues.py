"""Queue resources: a thread-safe FIFO queue kept in a task's resource containers, and the waiting rules
that every resource a kernel can block on follows.

A :class:`FIFOQueueResource` lives in a :class:`~dtf_notebook.runtime.resources.ResourceMgr` under its
container and shared name, so every session that runs a graph naming it (on any server of the cluster)
uses the same queue. Enqueues block while it is full, dequeues while it is empty.

A blocked kernel never hangs: it waits in short slices (:data:`POLL_SECS`) and between them gives up with

* ``DeadlineExceededError`` when its step's deadline passes (``operation_timeout_in_ms``,
  ``RunOptions.timeout_in_ms``),
* the abort's error when its step is aborted (a peer task failed, the master is gone or sent ``AbortStep``),
* ``CancelledError`` when the resource was removed from its container (``Session.close`` of a local session,
  ``Session.reset``, ``CleanupContainers``),
* and, for queues, ``OutOfRangeError`` / ``CancelledError`` when the queue is closed (TF's semantics).

Limit: a blocked kernel holds one thread of its task's request pool while it waits (a server has 64, and
the master of the step holds one more on its own task). So a task can hold about 60 blocked steps at once;
past that, new requests, including the enqueue that would free them, wait behind them until a deadline
passes. Keep the number of replicas blocked on one ps (workers waiting for a token, dequeues of one
queue) well below that. Partitions with kernels that can wait never run on a server's I/O thread.

Example:
    >>> import torch
    >>> q = FIFOQueueResource("q", [dtypes.float32], [()], capacity=2)
    >>> q.enqueue((torch.tensor(1.0),), step=None)
    >>> q.size()
    1
    >>> q.dequeue(step=None)
    (tensor(1.),)
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.runtime import values
from dtf_notebook.runtime.queue_rows import RowStore, row_storable

__all__ = ["POLL_SECS", "SharedResource", "FIFOQueueResource", "format_shape"]

#: How often a blocked kernel wakes to check its step (deadline, abort) and its resource (still registered).
POLL_SECS = 0.05
_UNBOUNDED = 2**31 - 1  # TF's capacity for "no bound" (capacity < 0)


def format_shape(shape: Any) -> str:
    """A shape as TF writes it in messages: ``[2,3]``, ``[?,3]``, ``<unknown>``.

    Example:
        >>> format_shape((2, None)), format_shape(TensorShape(None))
        ('[2,?]', '<unknown>')
    """
    dims = TensorShape(shape).as_tuple()
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


class SharedResource:
    """A resource that kernels wait on: a condition variable, its place in a ResourceMgr, the wait loop.

    Args:
        name: Shared name (the op's name when its ``shared_name`` is empty).
        container: Resource container it lives in.
        mgr: The ResourceMgr holding it, so a waiter can tell that it was removed (None: never removed).
        device: The device of the op that created it.

    Example:
        >>> from dtf_notebook.runtime.resources import ResourceMgr
        >>> mgr = ResourceMgr()
        >>> r = mgr.lookup_or_create("", "r", lambda: SharedResource("r", "", mgr))
        >>> r.registered(), r.read().tolist()
        (True, [b'', b'r'])
        >>> _ = mgr.cleanup("localhost"); r.registered()
        False
    """

    kind = "Resource"

    def __init__(self, name: str, container: str = "", mgr: Any = None, device: str = "") -> None:
        self.name = name
        self.container = container
        self.device = device
        self._mgr = mgr
        self._generation = None if mgr is None else mgr.generation
        self._removed = False
        self._cond = threading.Condition()

    def read(self) -> np.ndarray:
        """The handle's value when fetched or read: ``[container, name]`` as strings (TF's string handle).

        Example:
            >>> SharedResource("q", "c").read().tolist()
            [b'c', b'q']
        """
        return np.array([self.container.encode(), self.name.encode()], dtype=object)

    def registered(self) -> bool:
        """False once the resource was removed from its container (it then stays removed).

        Example:
            >>> SharedResource("free").registered()  # in no ResourceMgr: never removed
            True
        """
        mgr = self._mgr
        if mgr is None or self._removed:
            return not self._removed
        generation = mgr.generation
        if generation == self._generation:
            return True
        try:
            still = mgr.lookup(self.container, self.name) is self
        except errors.NotFoundError:
            still = False
        if still:
            self._generation = generation
        else:
            self._removed = True
        return still

    def wait_until(self, ready: Callable[[], bool], step: Any, what: str) -> None:
        """Waits, holding ``self._cond`` on entry and on return, until ``ready()`` is true.

        ``ready`` runs under the lock and may raise (a queue closed under a dequeue).

        Example:
            >>> import time
            >>> from dtf_notebook.runtime.executor import StepContext
            >>> r = SharedResource("r")
            >>> with r._cond:
            ...     r.wait_until(lambda: False, StepContext(deadline=time.monotonic() + 0.01), "nothing")
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.DeadlineExceededError: Timed out waiting for nothing

        Raises:
            DeadlineExceededError: the step's deadline passed.
            CancelledError: the resource was removed from its container.
            OpError: the step was aborted (the abort's error).
        """
        cond = self._cond
        if ready():
            return
        if step is not None:
            # Held-back sends go out before blocking (without the lock: sending may take a moment).
            cond.release()
            try:
                step.before_wait()
            finally:
                cond.acquire()
        while not ready():
            timeout = POLL_SECS
            if step is not None and step.deadline is not None:
                timeout = max(0.0, min(timeout, step.deadline - time.monotonic()))
            cond.wait(timeout)
            if ready():
                return
            # Checks that may take a network round trip (is the step's master alive?) run without the lock.
            cond.release()
            try:
                if step is not None:
                    step.check_waiting(what)
                if not self.registered():
                    raise errors.CancelledError(
                        None,
                        None,
                        f"{self.kind} '{self.name}' was removed from its container (its session was closed or "
                        f"reset) while a step waited for {what}",
                    )
            finally:
                cond.acquire()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.container}/{self.name}>"


def _clone(value: torch.Tensor) -> torch.Tensor:
    # torch's clone of a large CPU tensor runs on its intra-op threads, whose hand-off costs milliseconds on a busy
    # machine (measured: 4 ms for a 100x784 batch, against 12 us for numpy's single-threaded copy).
    if value.device.type == "cpu" and value.dtype is not torch.bfloat16 and not value.requires_grad:
        return torch.from_numpy(value.numpy().copy())
    return value.clone()


def _copy(value: Any) -> Any:
    """A private copy: an enqueued value may be a variable's buffer that later changes in place."""
    return _clone(value) if isinstance(value, torch.Tensor) else np.array(value, dtype=object, copy=True)


def _rows(value: Any) -> list[Any]:
    """The elements along dimension 0, each a private copy."""
    if isinstance(value, torch.Tensor):
        return list(_clone(value).unbind(0))
    return [np.array(row, dtype=object, copy=True) for row in value]


def _stack(rows: Sequence[Any], dtype: dtypes.DType, shape: tuple[int, ...]) -> Any:
    if dtype.is_string:
        out = np.empty((len(rows),) + shape, dtype=object)
        for i, row in enumerate(rows):
            out[i, ...] = row  # (``out[i] = row`` would store a 0-d row as an array inside the array)
        return out
    if not rows:
        return torch.empty((0,) + shape, dtype=values.torch_dtype(dtype))
    return torch.stack(list(rows))


class FIFOQueueResource(SharedResource):
    """A first-in first-out queue of tuples of tensors, with a capacity.

    Args:
        name: Shared name.
        component_types: DType of each tuple component.
        shapes: Fully defined shape of each component, or empty (then any shapes, no ``dequeue_many``).
        capacity: Most elements held at once; negative means unbounded.
        container, mgr, device: See :class:`SharedResource`.

    Example:
        >>> import torch
        >>> q = FIFOQueueResource("q", [dtypes.int32], [(2,)], capacity=-1)
        >>> q.enqueue_many((torch.tensor([[1, 2], [3, 4]]),), step=None)
        >>> q.dequeue_many(2, step=None)[0].tolist()
        [[1, 2], [3, 4]]
    """

    kind = "FIFOQueue"
    # Whether elements of fully defined shapes are kept as rows of one array per component (see queue_rows); a
    # queue whose order reads the elements (priority) or whose shapes vary (padding) keeps tuples.
    row_storage = True

    def __init__(
        self,
        name: str,
        component_types: Sequence[dtypes.DType],
        shapes: Sequence[Any],
        capacity: int,
        container: str = "",
        mgr: Any = None,
        device: str = "",
    ) -> None:
        super().__init__(name, container, mgr, device)
        self.component_types = list(component_types)
        self.shapes = [TensorShape(s).as_tuple() for s in shapes]
        self.capacity = int(capacity)
        self._limit = _UNBOUNDED if capacity < 0 else int(capacity)
        # What the order below holds per element: a row number of ``_rows``, or else a tuple of private copies.
        self._rows = (
            RowStore(component_types, self.shapes, self.capacity)
            if self.row_storage and row_storable(self.component_types, self.shapes)
            else None
        )
        self._items: collections.deque[Any] = collections.deque()
        self._closed = False
        self._cancelled = 0  # grows on close(cancel_pending_enqueues=True): pending enqueues then fail

    # ---- identity checks ------------------------------------------------------------------------
    def verify(self, component_types: Sequence[dtypes.DType], shapes: Sequence[Any], capacity: int) -> None:
        """Checks that a second op naming this shared queue asks for the same queue.

        Raises:
            InvalidArgumentError: the capacity, component types or shapes differ (TF's messages).

        Example:
            >>> q = FIFOQueueResource("q", [dtypes.float32], [], capacity=5)
            >>> q.verify([dtypes.float32], [], 6)
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.InvalidArgumentError: Shared queue 'q' has capacity 5 but requested capacity was 6
        """
        if int(capacity) != self.capacity:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shared queue '{self.name}' has capacity {self.capacity} but requested capacity was {capacity}",
            )
        if list(component_types) != self.component_types:
            have = ", ".join(d.name for d in self.component_types)
            want = ", ".join(d.name for d in component_types)
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shared queue '{self.name}' has component types {have} but requested component types were {want}",
            )
        wanted = [TensorShape(s).as_tuple() for s in shapes]
        if wanted != self.shapes:
            have = ", ".join(format_shape(s) for s in self.shapes)
            want = ", ".join(format_shape(s) for s in wanted)
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Shared queue '{self.name}' has component shapes {have} but requested component shapes were {want}",
            )

    def _check_components(self, components: Sequence[Any], batched: bool) -> int:
        """Validates a tuple (or a batch of tuples); returns the number of elements it holds."""
        if len(components) != len(self.component_types):
            raise errors.InvalidArgumentError(
                None, None, f"Queue '{self.name}' has {len(self.component_types)} components, got {len(components)}"
            )
        count = 1
        if batched:
            sizes = [v.shape[0] if len(v.shape) else None for v in components]
            if any(s is None for s in sizes):
                raise errors.InvalidArgumentError(
                    None, None, f"Enqueue-many into queue '{self.name}' needs components of rank at least 1"
                )
            if len(set(sizes)) > 1:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    "QueueEnqueueMany requires all components to have the same size in the 0th dimension, got "
                    + ", ".join(str(s) for s in sizes),
                )
            count = int(sizes[0]) if sizes else 0
        if self.shapes:
            for i, (value, shape) in enumerate(zip(components, self.shapes)):
                expected = ((count,) if batched else ()) + shape
                got = tuple(value.shape)
                if len(got) != len(expected) or any(e is not None and e != g for e, g in zip(expected, got)):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch in tuple component {i}. Expected {format_shape(expected)}, "
                        f"got {format_shape(tuple(value.shape))}",
                    )
        return count

    # ---- enqueue --------------------------------------------------------------------------------
    def _enqueue_ready(self, epoch: int) -> bool:
        if self._cancelled != epoch:
            raise errors.CancelledError(None, None, f"Enqueue into queue '{self.name}' was cancelled by its close")
        return self.size() < self._limit

    def _check_open(self) -> None:
        if self._closed:
            raise errors.CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")

    def enqueue(self, components: Sequence[Any], step: Any) -> None:
        """Adds one element, waiting while the queue is full.

        Raises:
            InvalidArgumentError: a component has the wrong shape.
            CancelledError: the queue is closed, or was closed with ``cancel_pending_enqueues`` while waiting.

        Example:
            >>> import torch
            >>> q = FIFOQueueResource("q", [dtypes.float32], [(2,)], capacity=1)
            >>> q.enqueue((torch.zeros(3),), step=None)
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.InvalidArgumentError: Shape mismatch in tuple component 0. Expected [2], got [3]
        """
        self._check_components(components, batched=False)
        element = None if self._rows is not None else tuple(_copy(v) for v in components)
        with self._cond:
            self._check_open()
            epoch = self._cancelled
            if element is None and self.size() >= self._limit:
                components = tuple(_copy(v) for v in components)  # it waits for room: the value as it is now
            self.wait_until(lambda: self._enqueue_ready(epoch), step, f"room in queue '{self.name}'")
            self._push(self._rows.put_one(components) if element is None else element)
            self._cond.notify_all()

    def enqueue_many(self, components: Sequence[Any], step: Any) -> None:
        """Adds the elements of a batch (components split along dimension 0), waiting for room as needed.

        Elements go in as room frees up, so a batch larger than the capacity still gets through.

        Example:
            >>> import torch
            >>> q = FIFOQueueResource("q", [dtypes.int64], [()], capacity=-1)
            >>> q.enqueue_many((torch.arange(3),), step=None); q.size()
            3
        """
        count = self._check_components(components, batched=True)
        store = self._rows
        elements = None if store is not None else list(zip(*[_rows(v) for v in components]))
        with self._cond:
            self._check_open()
            epoch = self._cancelled
            if elements is None and self._limit - self.size() < count:
                components = tuple(_copy(v) for v in components)  # it waits for room: the values as they are now
            done = 0
            while done < count:
                self.wait_until(lambda: self._enqueue_ready(epoch), step, f"room in queue '{self.name}'")
                # As many as there is room for at once (one wake-up of the waiting dequeues per batch, not per element).
                room = min(self._limit - self.size(), count - done)
                self._push_many(
                    store.put(components, done, done + room) if elements is None else elements[done : done + room]
                )
                done += room
                self._cond.notify_all()

    # ---- dequeue --------------------------------------------------------------------------------
    def _insufficient(self, requested: int, have: int) -> errors.OpError:
        return errors.OutOfRangeError(
            None,
            None,
            f"{self.kind} '{self.name}' is closed and has insufficient elements (requested {requested}, "
            f"current size {have})",
        )

    def dequeue(self, step: Any) -> tuple[Any, ...]:
        """Removes and returns the oldest element, waiting while the queue is empty.

        Raises:
            OutOfRangeError: the queue is closed and empty.

        Example:
            >>> q = FIFOQueueResource("q", [dtypes.float32], [], capacity=1)
            >>> q.close()
            >>> q.dequeue(step=None)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            dtf_notebook.errors.OutOfRangeError: FIFOQueue 'q' is closed and has insufficient elements ...
        """
        with self._cond:

            def ready() -> bool:
                if self._available():
                    return True
                if self._closed:
                    raise self._insufficient(1, 0)
                return False

            self.wait_until(ready, step, f"an element of queue '{self.name}'")
            element = self._pop()
            if self._rows is not None:
                element = self._rows.take_one(element)
            self._cond.notify_all()
        return element

    def dequeue_many(self, n: int, step: Any, allow_smaller: bool = False) -> tuple[Any, ...]:
        """Removes ``n`` elements and returns them stacked per component.

        Elements are taken as they arrive (so ``n`` may exceed the capacity); on failure the ones taken go
        back to the front of the queue. With ``allow_smaller`` (``dequeue_up_to``) a closed queue gives what
        it has left.

        Raises:
            InvalidArgumentError: ``n`` is negative, or the queue's component shapes are not specified.
            OutOfRangeError: the queue is closed with fewer than ``n`` elements (none, with ``allow_smaller``).

        Example:
            >>> import torch
            >>> q = FIFOQueueResource("q", [dtypes.int64], [()], capacity=5)
            >>> q.enqueue_many((torch.arange(3),), step=None); q.close()
            >>> q.dequeue_many(5, step=None, allow_smaller=True)
            (tensor([0, 1, 2]),)
        """
        op_name = "DequeueUpTo" if allow_smaller else "DequeueMany"
        if n < 0:
            raise errors.InvalidArgumentError(
                None, None, f"{op_name} of queue '{self.name}' requested {n} < 0 elements"
            )
        if not self.shapes:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{self.kind}'s DequeueMany and DequeueUpTo require the components to have specified shapes.",
            )
        taken: list[tuple[Any, ...]] = []

        def ready() -> bool:
            return self._available() > 0 or self._closed

        with self._cond:
            try:
                while len(taken) < n:
                    self.wait_until(ready, step, f"{n - len(taken)} more elements of queue '{self.name}'")
                    if self._available():
                        taken.extend(self._pop_many(min(self._available(), n - len(taken))))
                        self._cond.notify_all()
                    elif allow_smaller and taken:
                        break
                    else:
                        raise self._insufficient(n, len(taken))
            except BaseException:
                self._put_back(taken)
                self._cond.notify_all()
                raise
            if self._rows is not None:  # (under the lock: the rows are free for the next enqueue once read)
                return self._rows.take(taken)
        return tuple(
            self._batch([element[i] for element in taken], dtype, shape)
            for i, (dtype, shape) in enumerate(zip(self.component_types, self.shapes))
        )

    def _batch(self, rows: Sequence[Any], dtype: dtypes.DType, shape: tuple[Any, ...]) -> Any:
        return _stack(rows, dtype, shape)

    # ---- storage: subclasses (shuffling, priority) change the order elements leave in ----------------
    def _push(self, element: tuple[Any, ...]) -> None:
        self._items.append(element)

    def _push_many(self, elements: Sequence[Any]) -> None:
        """Adds ``elements`` in order, as calls of :meth:`_push` would."""
        self._items.extend(elements)

    def _pop(self) -> tuple[Any, ...]:
        return self._items.popleft()

    def _pop_many(self, k: int) -> list[Any]:
        """``k`` elements as ``k`` calls of :meth:`_pop` would take them (the caller checked they are there)."""
        pop = self._pop
        return [pop() for _ in range(k)]

    def _put_back(self, taken: list[tuple[Any, ...]]) -> None:
        """Returns elements taken by a dequeue that failed, so the next dequeue sees them first."""
        self._items.extendleft(reversed(taken))

    def _available(self) -> int:
        """How many elements a dequeue may take now (a shuffling queue keeps some back until it is closed)."""
        return len(self._items)

    # ---- state ----------------------------------------------------------------------------------
    def close(self, cancel_pending_enqueues: bool = False) -> None:
        """Closes the queue: later enqueues fail, dequeues drain what is left then fail with OutOfRange.

        Enqueues already waiting for room still complete, unless ``cancel_pending_enqueues``.

        Raises:
            CancelledError: the queue was already closed.

        Example:
            >>> q = FIFOQueueResource("q", [dtypes.float32], [], capacity=1)
            >>> q.close(); q.is_closed
            True
        """
        with self._cond:
            if cancel_pending_enqueues:
                self._cancelled += 1
            if self._closed:
                self._cond.notify_all()
                raise errors.CancelledError(None, None, f"Queue '{self.name}' is already closed.")
            self._closed = True
            self._cond.notify_all()

    def size(self) -> int:
        """The number of elements in the queue.

        Example:
            >>> FIFOQueueResource("q", [dtypes.float32], [], capacity=1).size()
            0
        """
        return len(self._items)

    @property
    def is_closed(self) -> bool:
        return self._closed


class PaddingFIFOQueueResource(FIFOQueueResource):
    """A FIFO queue whose component shapes may leave dimensions unknown (None); ``dequeue_many`` pads.

    Each element must match its component's rank and known dimensions. A batch is padded, per unknown
    dimension, to the largest size among its elements: with zeros, and with empty strings for strings.

    Example:
        >>> import torch
        >>> q = PaddingFIFOQueueResource("q", [dtypes.int32], [(None,)], capacity=-1)
        >>> q.enqueue((torch.tensor([1, 2, 3]),), step=None); q.enqueue((torch.tensor([4]),), step=None)
        >>> q.dequeue_many(2, step=None)[0].tolist()
        [[1, 2, 3], [4, 0, 0]]
    """

    kind = "PaddingFIFOQueue"
    row_storage = False  # (its elements' shapes vary)

    def _batch(self, rows: Sequence[Any], dtype: dtypes.DType, shape: tuple[Any, ...]) -> Any:
        dims = tuple(
            d if d is not None else max((int(r.shape[i]) for r in rows), default=0) for i, d in enumerate(shape)
        )
        if dtype.is_string:
            out = np.full((len(rows),) + dims, b"", dtype=object)
        else:
            out = torch.zeros((len(rows),) + dims, dtype=values.torch_dtype(dtype))
        for i, row in enumerate(rows):
            out[(i, *(slice(0, n) for n in row.shape), Ellipsis)] = row
        return out
