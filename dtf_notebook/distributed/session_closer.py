"""Closes the master sessions of garbage-collected ``Session`` objects on a thread of its own.

A session nobody closed is closed by its finaliser, which runs on whatever thread happened to collect it: a
training loop, a task's event loop, a notebook cell. Its ``CloseSession`` may wait seconds on a master that is
gone, so the finaliser only queues it here. Sessions collected before the interpreter exits get up to two seconds
more at exit for their closes to go out; one still referenced then (a module's global) is closed while the
interpreter finalises, if it is collected at all.

Everything a finaliser calls here is safe to re-enter from another finaliser on the same thread (a collection can
start inside any allocation): ``queue.SimpleQueue.put`` is, and the thread is started under a lock taken only
without blocking.

Example:
    >>> done = threading.Event()
    >>> close_soon(done.set)
    >>> done.wait(5)
    True
"""

from __future__ import annotations

import atexit
import logging
import queue
import sys
import threading
from collections.abc import Callable

__all__ = ["close_soon"]

_log = logging.getLogger(__name__)
_EXIT_GRACE_SECS = 2.0  # how long interpreter exit waits for the closes queued before it

_queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_starting = threading.Lock()


def close_soon(close: Callable[[], None]) -> None:
    """Runs ``close()`` on the closer thread, after the closes queued before it; returns at once (while the
    interpreter finalises, when no thread can start or run, it runs here)."""
    if sys.is_finalizing():
        close()
        return
    _queue.put(close)
    if _thread is None and _starting.acquire(blocking=False):
        # A caller that finds the lock taken returns: whoever holds it (another thread, or this one further up its
        # stack) starts the thread, which serves what this call queued.
        try:
            _start()
        finally:
            _starting.release()


def _start() -> None:
    global _thread
    if _thread is None:
        thread = threading.Thread(target=_serve, name="dtf-session-closer", daemon=True)
        thread.start()
        _thread = thread
        atexit.register(_drain_at_exit)


def _serve() -> None:
    while True:
        close = _queue.get()
        try:
            close()
        except Exception:  # noqa: BLE001 - one master that cannot be reached must not stop the others' closes
            _log.debug("Closing a collected session failed", exc_info=True)


def _drain_at_exit() -> None:
    # The closer serves in order: once it runs this marker, everything queued before it has been sent.
    drained = threading.Event()
    _queue.put(drained.set)
    drained.wait(_EXIT_GRACE_SECS)
