"""The layers a monitored session runs through: hooks, coordinator, recovery, and a step function's context.

From the inside out: ``_HookedSession`` calls the hooks around each ``run``; ``_CoordinatedSession`` stops
with the threads of a :class:`~dtf_notebook.train.coordinator.Coordinator` and raises the error one of them
reported; ``_RecoverableSession`` re-creates the whole stack through ``_CoordinatedSessionCreator`` when a
worker or parameter server died or restarted (``AbortedError`` / ``UnavailableError``). A ``step_fn``
given to ``MonitoredSession.run_step_fn`` receives a :class:`StepContext`.

Example:
    >>> ctx = StepContext(session="raw session", run_with_hooks_fn=lambda fetches: f"ran {fetches} with hooks")
    >>> ctx.session, ctx.run_with_hooks("train_op")
    ('raw session', 'ran train_op with hooks')
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import GraphKeys, get_collection
from dtf_notebook.protos.config_pb import RunMetadata, RunOptions
from dtf_notebook.runtime.config import RunOptions as RuntimeRunOptions
from dtf_notebook.train import session_run_hook
from dtf_notebook.train.coordinator import Coordinator
from dtf_notebook.train.session_creators import SessionCreator
from dtf_notebook.train.session_manager import PREEMPTION_ERRORS

__all__ = ["StepContext"]

_log = logging.getLogger(__name__)


class StepContext:
    """What a ``step_fn`` passed to ``run_step_fn`` gets: the raw ``session`` and ``run_with_hooks``.

    Example:
        >>> ctx = StepContext(session=None, run_with_hooks_fn=lambda fetches: f"ran {fetches} with hooks")
        >>> ctx.run_with_hooks("loss:0")
        'ran loss:0 with hooks'
    """

    def __init__(self, session: Any, run_with_hooks_fn: Callable[..., Any]) -> None:
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self) -> Any:
        """The underlying session: its ``run`` calls skip the hooks."""
        return self._session

    def run_with_hooks(self, *args: Any, **kwargs: Any) -> Any:
        """Same as ``MonitoredSession.run``: the hooks see this call."""
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self) -> None:
        """Ends the step function and the training loop (raises StopIteration, which the ``with`` block ends on).

        Raises:
            StopIteration: always.
        """
        raise StopIteration("step_fn has requested the iterations to stop.")


class _CoordinatedSessionCreator(SessionCreator):
    """Wraps a creator: each new session gets a fresh Coordinator, queue runners, the hooks' after_create_session."""

    def __init__(self, session_creator: SessionCreator, hooks: list[Any], stop_grace_period_secs: float) -> None:
        self._session_creator = session_creator
        self._hooks = hooks
        self._stop_grace_period_secs = stop_grace_period_secs
        self.max_wait_secs = getattr(session_creator, "max_wait_secs", SessionCreator.max_wait_secs)
        self.recovery_wait_secs = getattr(session_creator, "recovery_wait_secs", SessionCreator.recovery_wait_secs)
        self.coord: Coordinator | None = None
        self.tf_sess: Any = None

    def create_session(self) -> _CoordinatedSession:
        self.tf_sess = self._session_creator.create_session()
        self.coord = Coordinator(clean_stop_exception_types=[])
        for runner in get_collection(GraphKeys.QUEUE_RUNNERS):
            runner.create_threads(self.tf_sess, coord=self.coord, daemon=True, start=True)
        for hook in self._hooks:
            hook.after_create_session(self.tf_sess, self.coord)
        return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord, self._stop_grace_period_secs)


class _WrappedSession:
    """Forwards to a session (or another wrapper); adds ``should_stop`` and a ``close`` that never raises preemption."""

    def __init__(self, sess: Any) -> None:
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(sess, _WrappedSession)

    @property
    def graph(self) -> Any:
        return self._sess.graph

    @property
    def sess_str(self) -> str:
        return self._sess.sess_str

    def should_stop(self) -> bool:
        if self._check_stop():
            return True
        if self._sess:
            return self._wrapped_is_stoppable and self._sess.should_stop()
        return True

    def _check_stop(self) -> bool:
        return False

    def close(self) -> None:
        if self._sess:
            try:
                self._sess.close()
            except PREEMPTION_ERRORS as e:
                _log.error("Error while closing the session (a worker or parameter server may be gone): %s", e)
            finally:
                self._sess = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn: Callable[[StepContext], Any], raw_session: Any, run_with_hooks: Any) -> Any:
        return step_fn(StepContext(raw_session, run_with_hooks or self.run))


class _RecoverableSession(_WrappedSession):
    """Re-creates the session through its creator when a run raises AbortedError or UnavailableError.

    Unlike TF1, which retries forever, it gives up (re-raising the last error) once the creator's
    ``max_wait_secs`` have passed without a session that works.
    """

    def __init__(self, sess_creator: _CoordinatedSessionCreator) -> None:
        self._sess_creator = sess_creator
        self._failing_since: float | None = None
        super().__init__(self._create_session())

    def _note_failure(self, error: errors.OpError, while_doing: str) -> None:
        """Logs a preemption; re-raises it when sessions have kept failing for longer than ``max_wait_secs``."""
        now = time.monotonic()
        if self._failing_since is None:
            self._failing_since = now
        if now - self._failing_since >= self._sess_creator.max_wait_secs:
            raise error
        _log.warning(
            "%s while %s; a worker or parameter server may have died or restarted. A new session will be "
            "created. Error: %s",
            type(error).__name__,
            while_doing,
            error.message,
        )

    def _create_session(self) -> _CoordinatedSession:
        while True:
            try:
                return self._sess_creator.create_session()
            except PREEMPTION_ERRORS as e:
                self._note_failure(e, "creating a session")
                time.sleep(self._sess_creator.recovery_wait_secs)

    def _check_stop(self) -> bool:
        try:
            if self._sess:
                return self._sess._check_stop()
            return True
        except PREEMPTION_ERRORS as e:
            self._note_failure(e, "checking whether to stop")
            self.close()
            self._sess = self._create_session()
            return False
        except Exception:  # noqa: BLE001 - any other error reported by the coordinator stops the loop, as in TF1
            return True

    def run(self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None) -> Any:
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                result = self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
                self._failing_since = None
                return result
            except PREEMPTION_ERRORS as e:
                self._note_failure(e, "running a step")
                self.close()
                self._sess = None

    def run_step_fn(self, step_fn: Callable[[StepContext], Any], raw_session: Any, run_with_hooks: Any) -> Any:
        while True:
            try:
                if not self._sess:
                    self._sess = self._create_session()
                result = self._sess.run_step_fn(step_fn, raw_session, self._sess.run)
                self._failing_since = None
                return result
            except PREEMPTION_ERRORS as e:
                self._note_failure(e, "running a step function")
                self.close()
                self._sess = None


class _CoordinatedSession(_WrappedSession):
    """Stops when the coordinator asks; an error a coordinated thread reported is raised from ``run``."""

    def __init__(self, sess: _HookedSession, coord: Coordinator, stop_grace_period_secs: float = 120) -> None:
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self) -> bool:
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self) -> None:
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        finally:
            try:
                super().close()
            except Exception as e:  # noqa: BLE001 - closing must not hide the error that ended the loop
                _log.debug("Ignoring error while closing the session: %s", e)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._sess.run(*args, **kwargs)
        except PREEMPTION_ERRORS:
            raise
        except Exception as original:
            # A thread's reported error (e.g. a queue runner's) explains this one better; preemptions win.
            try:
                self._coord.raise_requested_exception()
            except PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001 - the original error is the one to report
                raise original from None
            raise


class _HookedSession(_WrappedSession):
    """Calls the hooks' ``before_run``/``after_run`` around each run, merging their fetches, feeds and options."""

    def __init__(self, sess: Any, hooks: list[Any]) -> None:
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self) -> bool:
        return self._should_stop

    def run(self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None) -> Any:
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches: dict[Any, Any] = {"caller": fetches}
        run_context = session_run_hook.SessionRunContext(
            original_args=session_run_hook.SessionRunArgs(fetches, feed_dict), session=self._sess
        )
        # As TF's: the hooks see (and merge into) a protobuf RunOptions copied from the caller's.
        merged = RunOptions()
        if options is not None:
            merged.CopyFrom(options.to_proto() if isinstance(options, RuntimeRunOptions) else options)
        options = merged
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata if run_metadata is not None else RunMetadata()
        outputs = self._sess.run(actual_fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(
                run_context,
                session_run_hook.SessionRunValues(
                    results=outputs.get(hook), options=options, run_metadata=run_metadata
                ),
            )
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(
        self, run_context: Any, fetch_dict: dict[Any, Any], user_feed_dict: Any, options: RunOptions
    ) -> Any:
        hook_feeds: dict[Any, Any] = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        hook_feeds.update(user_feed_dict)
        return hook_feeds


def _raise_if_feeds_intersect(feeds1: dict, feeds2: dict, message: str) -> None:
    both = set(feeds1) & set(feeds2)
    if both:
        raise RuntimeError(f"{message} Conflict(s): {sorted(map(str, both))}")


def _merge_run_options(options: RunOptions, incoming: RunOptions) -> None:
    """Merges a hook's RunOptions into ``options``: numbers take the larger value, flags are or-ed."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool, incoming.inter_op_thread_pool)
    options.output_partition_graphs = options.output_partition_graphs or incoming.output_partition_graphs
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom or incoming.report_tensor_allocations_upon_oom
    )
