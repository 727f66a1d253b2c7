"""A partition's outgoing tensors, held back briefly so that the ones bound for the same task travel together.

A partition's ``_Send`` kernels often run back to back (the ps reading and sending every variable of a layer,
a worker sending every gradient at the end of its step). Each message costs both tasks a wake-up, so the
worker service puts sends in an :class:`Outbox` and flushes it -- one ``SendTensor`` per receiving task --
when a kernel is about to wait (``StepContext.before_wait``), when the partition ends, and as soon as the held
tensors reach ``flush_bytes`` (large tensors should be on the wire at once).

Example:
    >>> sent = []
    >>> box = Outbox(lambda task, keys, values: sent.append((task, keys)), flush_bytes=1 << 20)
    >>> box.add("/job:ps/task:0", "w:0", b"w" * 8)
    >>> box.add("/job:ps/task:0", "b:0", b"b" * 8)
    >>> box.add("/job:worker/task:1", "h:0", b"h" * 8)
    >>> sent
    []
    >>> box.flush()
    >>> sent
    [('/job:ps/task:0', ['w:0', 'b:0']), ('/job:worker/task:1', ['h:0'])]
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dtf_notebook.runtime import values

FLUSH_BYTES = 1 << 20


class Outbox:
    """Tensors waiting to be sent, grouped by receiving task (thread-safe).

    Args:
        deliver: ``deliver(task, keys, values)`` sends one group (one message).
        flush_bytes: Held bytes at which :meth:`add` flushes at once.

    Example:
        >>> groups = []
        >>> box = Outbox(lambda task, keys, values: groups.append(len(keys)), flush_bytes=10)
        >>> box.add("/job:ps/task:0", "big:0", b"x" * 16)   # past flush_bytes: sent at once
        >>> groups
        [1]
    """

    def __init__(self, deliver: Callable[[str, list[str], list[Any]], None], flush_bytes: int = FLUSH_BYTES) -> None:
        self._deliver = deliver
        self._flush_bytes = flush_bytes
        self._held: dict[str, tuple[list[str], list[Any]]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def add(self, task: str, key: str, value: Any) -> None:
        """Holds ``value`` for ``task`` under rendezvous ``key``; flushes when enough bytes are held."""
        with self._lock:
            keys, held = self._held.setdefault(task, ([], []))
            keys.append(key)
            held.append(value)
            self._bytes += len(value) if isinstance(value, bytes) else values.nbytes(value)
            full = self._bytes >= self._flush_bytes
        if full:
            self.flush()

    def flush(self) -> None:
        """Sends every held group, one message per receiving task."""
        with self._lock:
            groups, self._held, self._bytes = self._held, {}, 0
        for task, (keys, held) in groups.items():
            self._deliver(task, keys, held)

    def discard(self) -> None:
        """Drops what is held (the step failed; nobody will receive it)."""
        with self._lock:
            self._held, self._bytes = {}, 0


__all__ = ["FLUSH_BYTES", "Outbox"]
