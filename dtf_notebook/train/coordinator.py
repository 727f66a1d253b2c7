"""``tf.train.Coordinator`` and ``LooperThread``: stopping a group of threads together.

Any thread may call :meth:`Coordinator.request_stop` (optionally with the exception that made it stop);
every other thread sees :meth:`Coordinator.should_stop` turn True and winds down, and
:meth:`Coordinator.join` waits for them and re-raises the first reported exception.

Example:
    >>> import threading
    >>> coord = Coordinator()
    >>> def work():
    ...     with coord.stop_on_exception():
    ...         raise ValueError("input file missing")
    >>> t = threading.Thread(target=work); t.start()
    >>> try:
    ...     coord.join([t])
    ... except ValueError as e:
    ...     print(e)
    input file missing
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any

from dtf_notebook import errors

__all__ = ["Coordinator", "LooperThread"]

_log = logging.getLogger(__name__)

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None]


class Coordinator:
    """Coordinates the termination of a set of threads.

    Args:
        clean_stop_exception_types: Exception types that stop the threads *without* being re-raised from
            :meth:`join` (default ``(tf.errors.OutOfRangeError,)``, how input queues signal the end of data).

    Example:
        >>> coord = Coordinator()
        >>> coord.should_stop()
        False
        >>> coord.request_stop(); coord.should_stop()
        True
    """

    def __init__(self, clean_stop_exception_types: Iterable[type[BaseException]] | None = None) -> None:
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: ExcInfo | None = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def _filter_exception(self, ex: Any) -> Any:
        exception = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(exception, self._clean_stop_exception_types) else ex

    def request_stop(self, ex: BaseException | ExcInfo | None = None) -> None:
        """Asks every thread to stop; the first exception reported is re-raised by :meth:`join`.

        Args:
            ex: The exception being handled (or a ``sys.exc_info()`` tuple), or None for a clean stop.

        Raises:
            BaseException: ``ex`` itself, when the coordinator was already joined (nobody else would see it).

        Example:
            >>> coord = Coordinator()
            >>> try:
            ...     raise RuntimeError("worker thread failed")
            ... except RuntimeError as e:
            ...     coord.request_stop(e)
            >>> try:
            ...     coord.raise_requested_exception()
            ... except RuntimeError as e:
            ...     print(e)
            worker thread failed
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined and ex is not None:
                raise ex[1] if isinstance(ex, tuple) else ex
            if self._stop_event.is_set():
                return
            if ex is not None and self._exc_info_to_raise is None:
                if isinstance(ex, tuple):
                    self._exc_info_to_raise = ex
                else:
                    self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                _log.info("Error reported to Coordinator: %r", self._exc_info_to_raise[1])
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Forgets the stop request and any reported exception (``should_stop()`` is False again).

        Example:
            >>> coord = Coordinator()
            >>> coord.request_stop(); coord.clear_stop(); coord.should_stop()
            False
        """
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop was requested.

        Example:
            >>> Coordinator().should_stop()
            False
        """
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Requests a stop, with the exception, when the body raises (and swallows it: :meth:`join` re-raises).

        Example:
            >>> coord = Coordinator()
            >>> with coord.stop_on_exception():
            ...     raise KeyError("missing")
            >>> coord.should_stop()
            True
        """
        try:
            yield
        except BaseException:  # noqa: BLE001 - handed to the coordinator, re-raised by join()
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        """Waits until a stop is requested; returns False when ``timeout`` seconds passed first.

        Example:
            >>> Coordinator().wait_for_stop(0.01)
            False
        """
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Adds ``thread`` to those :meth:`join` waits for."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Waits for ``threads`` (and registered threads) to end, then re-raises the reported exception.

        Threads get ``stop_grace_period_secs`` after the stop request to finish.

        Raises:
            BaseException: the exception passed to :meth:`request_stop`, if any.
            RuntimeError: threads still run after the grace period (unless ``ignore_live_threads``); names them.

        Example:
            >>> import threading
            >>> coord = Coordinator()
            >>> t = threading.Thread(target=coord.wait_for_stop); t.start()
            >>> coord.request_stop(); coord.join([t]); coord.joined
            True
        """
        with self._lock:
            waiting = list(self._registered_threads.union(threads or ()))
        # Until a stop is requested, threads may run as long as they like.
        while any(t.is_alive() for t in waiting) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in waiting:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in waiting if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1]
        if stragglers:
            message = f"Coordinator stopped with threads still running: {' '.join(stragglers)}"
            if not ignore_live_threads:
                raise RuntimeError(message)
            _log.info(message)

    @property
    def joined(self) -> bool:
        """True once :meth:`join` has returned or raised."""
        return self._joined

    def raise_requested_exception(self) -> None:
        """Raises the exception passed to :meth:`request_stop`, if there was one.

        Example:
            >>> Coordinator().raise_requested_exception() is None
            True
        """
        with self._lock:
            if self._exc_info_to_raise is not None:
                raise self._exc_info_to_raise[1]


class LooperThread(threading.Thread):
    """A daemon thread calling ``target`` repeatedly (every ``timer_interval_secs``, or back to back if None).

    It stops when the coordinator asks; an exception from ``target`` is reported to the coordinator.

    Example:
        >>> coord = Coordinator()
        >>> calls = []
        >>> def tick():
        ...     calls.append(1)
        ...     if len(calls) == 3:
        ...         coord.request_stop()
        >>> looper = LooperThread.loop(coord, 0.01, target=tick)
        >>> coord.join(); len(calls)
        3
    """

    def __init__(
        self,
        coord: Coordinator,
        timer_interval_secs: float | None,
        target: Callable[..., Any] | None = None,
        args: Iterable[Any] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord!r}")
        if target is None and (args or kwargs):
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._loop_target = target
        self._loop_args = tuple(args or ())
        self._loop_kwargs = dict(kwargs or {})
        coord.register_thread(self)

    @staticmethod
    def loop(
        coord: Coordinator,
        timer_interval_secs: float | None,
        target: Callable[..., Any],
        args: Iterable[Any] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> LooperThread:
        """Starts and returns a LooperThread calling ``target(*args, **kwargs)`` until the coordinator stops."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic()
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts (override in subclasses)."""

    def stop_loop(self) -> None:
        """Called once when the thread stops (override in subclasses)."""

    def run_loop(self) -> None:
        """Called at every timer tick; runs ``target`` (override in subclasses)."""
        if self._loop_target is not None:
            self._loop_target(*self._loop_args, **self._loop_kwargs)
