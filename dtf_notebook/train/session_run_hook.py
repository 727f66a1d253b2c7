"""``SessionRunHook``: code that runs around every ``run`` of a monitored session (TF1's hook protocol).

A hook sees the session's life in order: ``begin`` (graph still editable), ``after_create_session``,
then around each step ``before_run`` (may return :class:`SessionRunArgs` to fetch or feed more) and
``after_run`` (sees those results in :class:`SessionRunValues`, may ask the loop to stop), and ``end``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> class CountSteps(tf.train.SessionRunHook):
    ...     def begin(self):
    ...         self.steps = 0
    ...     def after_run(self, run_context, run_values):
    ...         self.steps += 1
    ...         if self.steps == 2:
    ...             run_context.request_stop()
    >>> hook = CountSteps()
    >>> hook.begin()
    >>> ctx = tf.train.SessionRunContext(original_args=tf.train.SessionRunArgs(None), session=None)
    >>> hook.after_run(ctx, None); hook.after_run(ctx, None); ctx.stop_requested
    True
"""

from __future__ import annotations

from typing import Any, NamedTuple


class SessionRunHook:
    """Base class for hooks; every method does nothing unless overridden.

    Example:
        >>> class FetchLoss(SessionRunHook):
        ...     def before_run(self, run_context):
        ...         return SessionRunArgs(fetches="loss:0")
        >>> FetchLoss().before_run(None).fetches, SessionRunHook().before_run(None)
        ('loss:0', None)
    """

    def begin(self) -> None:
        """Called once before the session is created; the graph may still be changed."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Called once the session exists and variables are initialised or restored."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        """Called before each ``run``; return :class:`SessionRunArgs` to add fetches, feeds or options."""
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """Called after each ``run`` with the results of what ``before_run`` asked for."""

    def end(self, session: Any) -> None:
        """Called once at the end of the session (not after an error)."""


class SessionRunArgs(NamedTuple):
    """What a hook adds to a ``run``: ``fetches`` (any fetch structure), ``feed_dict`` and ``options``.

    Example:
        >>> SessionRunArgs(fetches="loss:0").feed_dict is None
        True
    """

    fetches: Any
    feed_dict: dict | None = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """What ``after_run`` receives: ``results`` of the hook's fetches, the ``options`` and ``run_metadata``.

    Example:
        >>> SessionRunValues(results=3, options=None, run_metadata=None).results
        3
    """

    results: Any
    options: Any
    run_metadata: Any


class SessionRunContext:
    """The call being made (``original_args``), the ``session``, and a way for a hook to stop the loop.

    Example:
        >>> ctx = SessionRunContext(SessionRunArgs(fetches=[]), session=None)
        >>> ctx.request_stop(); ctx.stop_requested
        True
    """

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        """The fetches and feeds the user passed to ``run``."""
        return self._original_args

    @property
    def session(self) -> Any:
        """The underlying session (not the monitored wrapper)."""
        return self._session

    @property
    def stop_requested(self) -> bool:
        """True once some hook called :meth:`request_stop`."""
        return self._stop_requested

    def request_stop(self) -> None:
        """Asks the monitored session to stop after this step (``should_stop()`` turns True)."""
        self._stop_requested = True


__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]
