"""``tf.logging``: TF1's logging functions on Python's ``logging``, through the logger named ``"tensorflow"``.

The logger is configured the first time it is asked for, as TF does: when the root logger has no
handlers, it gets one writing ``LEVEL:tensorflow:message`` lines to stderr (stdout and INFO in an
interactive shell). The levels are Python's, so ``set_verbosity(INFO)`` is ``setLevel(logging.INFO)``.
Records name the line of user code that logged, not this module.

Example:
    >>> import logging
    >>> set_verbosity(INFO)
    >>> get_verbosity() == logging.INFO
    True
    >>> set_verbosity(WARN)
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import traceback
from logging import DEBUG, ERROR, FATAL, INFO, WARN
from types import FrameType
from typing import Any

_logger: logging.Logger | None = None
_logger_lock = threading.Lock()
# Frames in these files are the logging machinery, never the caller a record should name.
_INTERNAL_FILES = {os.path.normcase(logging.__file__), os.path.normcase(__file__)}
# How many times each (file, line) of log_every_n / log_first_n has been reached.
_counts: dict[tuple[str, int], int] = {}
_counts_lock = threading.Lock()


def _caller_frame() -> FrameType | None:
    frame = sys._getframe(1)
    while frame is not None and os.path.normcase(frame.f_code.co_filename) in _INTERNAL_FILES:
        frame = frame.f_back
    return frame


def _find_caller(stack_info: bool = False, stacklevel: int = 1) -> tuple[str, int, str, str | None]:
    """``Logger.findCaller`` that skips this module's frames as well as ``logging``'s."""
    frame = _caller_frame()
    sinfo = "Stack (most recent call last):\n" + "".join(traceback.format_stack(frame)) if stack_info else None
    if frame is None:
        return "(unknown file)", 0, "(unknown function)", sinfo
    return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, sinfo


def _interactive() -> bool:
    return hasattr(sys, "ps1") or bool(sys.flags.interactive)


def get_logger() -> logging.Logger:
    """The ``"tensorflow"`` logger, given a stderr handler the first time when nothing else configured logging.

    Example:
        >>> get_logger() is logging.getLogger("tensorflow")
        True
    """
    global _logger
    if _logger is not None:
        return _logger
    with _logger_lock:
        if _logger is None:
            logger = logging.getLogger("tensorflow")
            logger.findCaller = _find_caller
            # Like TF: leave a configured root logger alone (no double lines); and a handler already on the
            # logger (real TF's, in a process that imported both) is not doubled either.
            if not logging.getLogger().handlers and not logger.handlers:
                if _interactive():
                    logger.setLevel(INFO)
                handler = logging.StreamHandler(sys.stdout if _interactive() else sys.stderr)
                handler.setFormatter(logging.Formatter(logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _logger = logger
    return _logger


def _log(level: int, msg: Any, args: tuple, kwargs: dict) -> None:
    get_logger().log(level, msg, *args, **kwargs)


def log(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at ``level``.

    Example:
        >>> log(DEBUG, "not shown at the default verbosity: %d", 1)
    """
    _log(level, msg, args, kwargs)


def debug(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at DEBUG.

    Example:
        >>> debug("step %d", 3)
    """
    _log(DEBUG, msg, args, kwargs)


def info(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at INFO.

    Example:
        >>> info("loss = %.3f", 0.25)
    """
    _log(INFO, msg, args, kwargs)


def warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at WARN.

    Example:
        >>> get_logger().isEnabledFor(WARN)
        True
    """
    _log(WARN, msg, args, kwargs)


def warn(msg: Any, *args: Any, **kwargs: Any) -> None:
    """TF1's alias of :func:`warning`.

    Example:
        >>> warn is not warning
        True
    """
    _log(WARN, msg, args, kwargs)


def error(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at ERROR.

    Example:
        >>> ERROR
        40
    """
    _log(ERROR, msg, args, kwargs)


def fatal(msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at FATAL (Python's CRITICAL); like TF, it does not end the program.

    Example:
        >>> FATAL == logging.CRITICAL
        True
    """
    _log(FATAL, msg, args, kwargs)


def vlog(level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
    """Logs ``msg % args`` at ``level`` (TF1 maps verbose levels straight onto Python's).

    Example:
        >>> vlog(INFO, "verbose %s", "detail")
    """
    _log(level, msg, args, kwargs)


def TaskLevelStatusMessage(msg: Any) -> None:
    """Logs a task's status message at ERROR, as TF1 does.

    Example:
        >>> callable(TaskLevelStatusMessage)
        True
    """
    _log(ERROR, msg, (), {})


def flush() -> None:
    """Flushes the handlers of the ``"tensorflow"`` logger (TF1's raises NotImplementedError).

    Example:
        >>> flush()
    """
    for handler in get_logger().handlers:
        handler.flush()


def log_if(level: int, msg: Any, condition: Any, *args: Any) -> None:
    """Logs ``msg % args`` at ``level`` when ``condition`` holds.

    Example:
        >>> log_if(INFO, "only when %s", False, "true")
    """
    if condition:
        _log(level, msg, args, {})


def _next_count() -> int:
    """How many times the caller's caller's line has called before (0 the first time)."""
    frame = _caller_frame()
    key = ("<unknown>", 0) if frame is None else (frame.f_code.co_filename, frame.f_lineno)
    with _counts_lock:
        count = _counts.get(key, -1) + 1
        _counts[key] = count
    return count


def log_every_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs ``msg % args`` on the 1st, (n+1)th, (2n+1)th, ... call from the same line of code.

    Example:
        >>> for step in range(5):
        ...     log_every_n(INFO, "step %d", 2, step)  # logs steps 0, 2 and 4
    """
    if _next_count() % n == 0:
        _log(level, msg, args, {})


def log_first_n(level: int, msg: Any, n: int, *args: Any) -> None:
    """Logs ``msg % args`` on the first ``n`` calls from the same line of code only.

    Example:
        >>> for step in range(5):
        ...     log_first_n(INFO, "step %d", 2, step)  # logs steps 0 and 1
    """
    if _next_count() < n:
        _log(level, msg, args, {})


def get_verbosity() -> int:
    """The effective level of the ``"tensorflow"`` logger (WARN unless set).

    Example:
        >>> get_verbosity() in (DEBUG, INFO, WARN, ERROR, FATAL)
        True
    """
    return get_logger().getEffectiveLevel()


def set_verbosity(v: int) -> None:
    """Sets the threshold below which messages are dropped.

    Example:
        >>> set_verbosity(ERROR); get_verbosity()
        40
        >>> set_verbosity(WARN)
    """
    get_logger().setLevel(v)


__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "TaskLevelStatusMessage",
    "debug",
    "error",
    "fatal",
    "flush",
    "get_logger",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "vlog",
    "warn",
    "warning",
]
