"""Closes the master sessions of garbage-collected ``Session`` objects on a thread of its own.

A session nobody closed is closed by its finaliser, which runs on whatever thread happened to collect it: a
training loop, a task's event loop, a notebook cell. Its ``CloseSession`` may wait seconds on a master that is
gone, so the finaliser only queues it here. At exit the queue gets a short while to empty, so that a script that
never closed its session still frees its partitions on the cluster.

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
_EXIT_GRACE_SECS = 2.0  # how long interpreter exit waits for the queued closes

_queue: queue.Queue[Callable[[], None]] = queue.Queue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def close_soon(close: Callable[[], None]) -> None:
    """Runs ``close()`` on the closer thread, after the closes queued before it; returns at once (while the
    interpreter shuts down, when no thread can start or run, it runs here)."""
    global _thread
    if sys.is_finalizing():
        close()
        return
    _queue.put(close)
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_serve, name="dtf-session-closer", daemon=True)
            _thread.start()
            atexit.register(_drain_at_exit)


def _serve() -> None:
    while True:
        close = _queue.get()
        try:
            close()
        except Exception:  # noqa: BLE001 - one master that cannot be reached must not stop the others' closes
            _log.debug("Closing a collected session failed", exc_info=True)
        finally:
            _queue.task_done()


def _drain_at_exit() -> None:
    finished = threading.Event()
    threading.Thread(target=lambda: (_queue.join(), finished.set()), daemon=True).start()
    finished.wait(_EXIT_GRACE_SECS)
