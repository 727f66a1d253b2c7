"""Writes ``Event`` records to an event file from a background thread.

The file is ``<logdir>/events.out.tfevents.<seconds>.<hostname><suffix>``, opened through fsspec (so
``memory://`` and other filesystems work), and starts with an ``Event`` holding
``file_version: "brain.Event:2"``, as TensorBoard expects. Callers queue events and go on; the thread
writes them and flushes the file every ``flush_secs`` seconds, after every ``max_queue`` events,
and when asked (``flush``, ``close``). The queue holds at most ``max_queue`` events: a caller
producing faster than the file takes them waits.

Example:
    >>> from dtf_notebook.summary.messages import Event
    >>> writer = EventFileWriter("memory://event_file_writer_doc")
    >>> writer.add_event(Event(step=1, file_version="x"))
    >>> writer.close()
    >>> from dtf_notebook.summary.summary_iterator import summary_iterator
    >>> [e.file_version for e in summary_iterator(writer.filename)]
    ['brain.Event:2', 'x']
"""

from __future__ import annotations

import atexit
import logging
import posixpath
import queue
import socket
import threading
import time
import weakref
from typing import Any

import fsspec

from dtf_notebook.summary.messages import Event
from dtf_notebook.summary.record_writer import RecordWriter

_log = logging.getLogger(__name__)

FILE_VERSION = "brain.Event:2"


class _Flush:
    """A request to flush; ``done`` is set once the file is flushed."""

    def __init__(self) -> None:
        self.done = threading.Event()


_CLOSE = object()

# Writers still open when the interpreter exits are closed then, so queued events are not lost.
_OPEN_WRITERS: weakref.WeakSet[EventFileWriter] = weakref.WeakSet()


@atexit.register
def _close_open_writers() -> None:
    for writer in list(_OPEN_WRITERS):
        writer.close()


class EventFileWriter:
    """Queues events and writes them to a new event file in ``logdir`` from a background thread.

    Args:
        logdir: Directory (a local path or an fsspec URL); created when missing.
        max_queue: Most events waiting to be written; also how many written events force a flush.
        flush_secs: Longest time written events stay unflushed.
        filename_suffix: Appended to the file name.

    Example:
        >>> w = EventFileWriter("memory://efw_doc2", filename_suffix=".v1")
        >>> w.filename.startswith("memory://efw_doc2/events.out.tfevents."), w.filename.endswith(".v1")
        (True, True)
        >>> w.close()
    """

    def __init__(
        self, logdir: str, max_queue: int = 10, flush_secs: float = 120, filename_suffix: str | None = None
    ) -> None:
        self._logdir = str(logdir)
        self._fs, self._dir = fsspec.core.url_to_fs(self._logdir)
        self._fs.makedirs(self._dir, exist_ok=True)
        self._max_queue = max(1, int(max_queue))
        self._flush_secs = float(flush_secs)
        self._suffix = filename_suffix or ""
        self._lock = threading.Lock()
        self._failure: BaseException | None = None
        self._record_writer: RecordWriter | None = None
        self._filename = ""
        self._open_file()
        self._start()

    # ---- public API ---------------------------------------------------------------------------
    def get_logdir(self) -> str:
        """The directory holding the event file."""
        return self._logdir

    @property
    def filename(self) -> str:
        """Path (or URL, for a logdir given as one) of the event file being written."""
        return self._filename

    def add_event(self, event: Event) -> None:
        """Queues ``event`` for writing; does nothing once closed.

        Raises:
            OSError: writing an earlier event failed (the writer is then closed).
        """
        if not self._closed:
            self._put(event.SerializeToString())

    def flush(self) -> None:
        """Writes every queued event and flushes the file.

        Raises:
            OSError: writing failed.
        """
        if self._closed:
            return
        request = _Flush()
        self._put(request)
        # A concurrent close may stop the thread before it reaches this request.
        while not request.done.wait(0.1) and self._thread.is_alive():
            pass
        self._raise_failure()

    def close(self) -> None:
        """Flushes, then stops the thread and closes the file. A closed writer ignores new events."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._stop()

    def reopen(self) -> None:
        """Makes a closed writer usable again; the next event goes to a new event file."""
        if self._closed:
            self._failure = None
            self._start()

    # ---- internals ----------------------------------------------------------------------------
    def _start(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue(self._max_queue)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="EventLoggerThread", daemon=True)
        self._thread.start()
        _OPEN_WRITERS.add(self)

    def _stop(self) -> None:
        self._closed = True
        _OPEN_WRITERS.discard(self)
        if self._thread.is_alive():
            self._queue.put(_CLOSE)
            self._thread.join()
        if self._record_writer is not None:
            self._record_writer.close()
            self._record_writer = None

    def _put(self, item: Any) -> None:
        self._raise_failure()
        thread = self._thread
        while True:
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                if not thread.is_alive():  # closed meanwhile by another thread: the event is dropped
                    return

    def _raise_failure(self) -> None:
        failure = self._failure
        if failure is not None:
            self._stop()
            raise failure

    def _open_file(self) -> None:
        """Starts a new event file with its ``file_version`` record (never overwrites an existing one)."""
        now = time.time()
        stem = f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}"
        name, n = stem + self._suffix, 0
        while self._fs.exists(posixpath.join(self._dir, name)):
            n += 1
            name = f"{stem}.{n}{self._suffix}"
        self._filename = posixpath.join(self._logdir, name)
        self._record_writer = RecordWriter(self._fs.open(posixpath.join(self._dir, name), "wb"))
        self._record_writer.write(Event(wall_time=now, file_version=FILE_VERSION).SerializeToString())
        self._record_writer.flush()

    def _run(self) -> None:
        unflushed = 0
        deadline = None
        while True:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None  # the flush deadline passed with nothing new to write
            if item is _CLOSE:
                return
            if self._failure is None:
                try:
                    if isinstance(item, bytes):
                        self._write(item)
                        unflushed += 1
                        deadline = deadline or time.monotonic() + self._flush_secs
                    if item is None or isinstance(item, _Flush) or unflushed >= self._max_queue:
                        if self._record_writer is not None:
                            self._record_writer.flush()
                        unflushed, deadline = 0, None
                except Exception as e:  # noqa: BLE001 - handed to the caller's next add_event/flush
                    _log.error("Writing event file %s failed: %s", self._filename, e)
                    # After a failure the thread keeps draining the queue, so no caller waits forever.
                    self._failure = e
            if isinstance(item, _Flush):
                item.done.set()

    def _write(self, record: bytes) -> None:
        if self._record_writer is None:
            self._open_file()
        self._record_writer.write(record)


__all__ = ["EventFileWriter", "FILE_VERSION"]
