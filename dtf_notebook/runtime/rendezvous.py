"""Per-step rendezvous: where a ``_Send`` leaves a tensor and the matching ``_Recv`` picks it up.

Keys name one edge of one step (``send_device;incarnation;recv_device;tensor_name;frame:iter``; the
frame and iteration tell apart the values a pair inside a loop moves each iteration). A
:class:`Rendezvous` holds the tensors of one step on one task; ``recv`` blocks until the value
arrives, the step's deadline passes, or the step is aborted (a peer failed), so a broken step
never hangs. While a receive waits, :attr:`Rendezvous.waiting` counts it, so that the task's own
sends can go out at once rather than wait behind it (what it waits for may need them first).

A step run on a task's event loop must not block its thread: its rendezvous is *suspending*
(:attr:`Rendezvous.on_ready` set). A receive of a value not there yet then raises :class:`WouldBlock`
instead of waiting, the run stops where it stands, and ``on_ready`` is called once the value (or an
abort) arrives, to run it on from that receive.

Example:
    >>> r = Rendezvous()
    >>> r.put("k", 42)
    >>> r.recv("k", deadline=None)
    42
"""

from __future__ import annotations

import threading
import time
from typing import Any

from dtf_notebook import errors


class WouldBlock(BaseException):
    """A receive of a suspending rendezvous found no value: the run stops here and goes on once ``on_ready`` is
    called. A BaseException, so that no ``except Exception`` on the way turns it into an op's failure.

    Example:
        >>> r = Rendezvous()
        >>> r.on_ready = lambda: None
        >>> try:
        ...     r.recv("k", deadline=None)
        ... except WouldBlock as e:
        ...     print(e.key)
        k
    """

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class Rendezvous:
    """Tensors of one step, by key. Thread-safe.

    Example:
        >>> r = Rendezvous()
        >>> r.put("a;1;b;t:0;0:0", 7)
        >>> r.recv("a;1;b;t:0;0:0", deadline=time.monotonic() + 1)
        7
        >>> r.recv("never;sent", deadline=time.monotonic() + 0.01)
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.DeadlineExceededError: Timed out waiting for tensor 'never;sent'
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._values: dict[str, Any] = {}
        self._error: errors.OpError | None = None
        #: Called while a receive waits; raises to give up (e.g. when the step's master is gone).
        self.watchdog: Any = None
        #: Called when a receive starts waiting, after it counts in :attr:`waiting` (sends held back go out).
        self.on_wait: Any = None
        #: How many receives are waiting now.
        self.waiting = 0
        #: Set: receives never wait (they raise :class:`WouldBlock`), and this is called (on the delivering or
        #: aborting thread, outside the lock) when the value a suspended receive wanted arrives, or an abort.
        self.on_ready: Any = None
        self._suspended_on: str | None = None

    def put(self, key: str, value: Any) -> None:
        """Delivers ``value`` under ``key`` (a second delivery of the same key is an error)."""
        with self._cond:
            if key in self._values:
                raise errors.AlreadyExistsError(None, None, f"Tensor {key!r} was sent twice in one step")
            self._values[key] = value
            wake = self._suspended_on == key
            if wake:
                self._suspended_on = None
            elif self.waiting:
                self._cond.notify_all()
        if wake:
            self.on_ready()

    def recv(self, key: str, deadline: float | None) -> Any:
        """Waits for ``key``'s value and removes it.

        Raises:
            DeadlineExceededError: ``deadline`` (a ``time.monotonic()`` value) passed first.
            OpError: the step was aborted; the abort's error is raised.
        """
        with self._cond:
            if key in self._values:
                return self._values.pop(key)
            if self.on_ready is not None:
                if self._error is not None:
                    raise self._error
                self._suspended_on = key
                raise WouldBlock(key)
            self.waiting += 1
        try:
            # Counted first, then flushed: a send held back before is flushed here, one made after sees the count.
            if self.on_wait is not None:
                self.on_wait()
            while True:
                with self._cond:
                    if key in self._values:
                        return self._values.pop(key)
                    if self._error is not None:
                        raise self._error
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise errors.DeadlineExceededError(None, None, f"Timed out waiting for tensor {key!r}")
                    self._cond.wait(0.5 if remaining is None else min(remaining, 0.5))
                    if key in self._values:
                        return self._values.pop(key)
                if self.watchdog is not None:
                    self.watchdog()  # outside the lock: it may take a network round trip
        finally:
            with self._cond:
                self.waiting -= 1

    def abort(self, error: errors.OpError) -> None:
        """Fails every current and future ``recv`` with ``error``."""
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()
            wake = self._suspended_on is not None
            self._suspended_on = None
        if wake:
            self.on_ready()

    @property
    def aborted(self) -> errors.OpError | None:
        return self._error


class RendezvousTable:
    """The rendezvous of every live step on one task, created on first touch (a send may arrive first).

    Example:
        >>> table = RendezvousTable()
        >>> table.get(7) is table.acquire(7)
        True
        >>> table.release(7)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # step id -> [rendezvous, first-touch time, in use by a running partition]
        self._steps: dict[int, list[Any]] = {}

    def _entry(self, step_id: int) -> list[Any]:
        entry = self._steps.get(step_id)
        if entry is None:
            entry = self._steps[step_id] = [Rendezvous(), time.monotonic(), False]
        return entry

    def get(self, step_id: int) -> Rendezvous:
        """The step's rendezvous (created if this is the first touch)."""
        with self._lock:
            return self._entry(step_id)[0]

    def acquire(self, step_id: int) -> Rendezvous:
        """The step's rendezvous, marked in use by a running partition until :meth:`release`."""
        with self._lock:
            entry = self._entry(step_id)
            entry[2] = True
            return entry[0]

    def release(self, step_id: int) -> None:
        """Forgets a finished step."""
        with self._lock:
            self._steps.pop(step_id, None)

    def abort(self, step_id: int, error: errors.OpError) -> None:
        """Aborts one step (its receivers raise ``error``)."""
        self.get(step_id).abort(error)

    def abort_all(self, error: errors.OpError) -> None:
        """Aborts every live step (used when the task shuts down)."""
        with self._lock:
            entries = list(self._steps.values())
        for rendezvous, _, _ in entries:
            rendezvous.abort(error)

    def expire(self, older_than: float) -> int:
        """Drops steps not in use and first touched more than ``older_than`` seconds ago (sends for steps
        that never ran here because their master failed first)."""
        cutoff = time.monotonic() - older_than
        with self._lock:
            old = [sid for sid, (_, born, in_use) in self._steps.items() if born < cutoff and not in_use]
            for sid in old:
                del self._steps[sid]
        return len(old)
