"""``tf.train.MonitoredTrainingSession``: a session that initialises, restores, runs hooks and recovers.

The training loop of distributed TF1::

    with tf.train.MonitoredTrainingSession(server.target, is_chief) as sess:
        while not sess.should_stop():
            sess.run(train_op)

On creation the chief restores the latest checkpoint of ``checkpoint_dir`` or initialises the variables;
other workers wait until the chief has done so. Every ``run`` goes through the hooks (stop at a step,
save checkpoints, count steps). When a task of the cluster dies or restarts (``UnavailableError`` /
``AbortedError``), the broken session is closed and a new one is created the same way -- the chief restores
the last checkpoint, since a restarted parameter server lost its variables -- and the loop goes on.

The pieces, from the inside out: a :class:`~dtf_notebook.train.session_creators.SessionCreator` makes a
plain ``Session`` ready (with a :class:`~dtf_notebook.train.session_manager.SessionManager` and the ops of a
:class:`~dtf_notebook.train.scaffold.Scaffold`); the wrappers of :mod:`dtf_notebook.train.session_wrappers`
call the hooks around each run, stop with the threads of a
:class:`~dtf_notebook.train.coordinator.Coordinator` and re-create all of it after a preemption error.
This module puts them together; it also re-exports the scaffold and the creators, TF1's ``tf.train`` names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     train_op = tf.assign_add(step, 1)
    ...     hooks = [tf.train.StopAtStepHook(last_step=3)]
    ...     with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
    ...         while not sess.should_stop():
    ...             print(sess.run(train_op))
    1
    2
    3
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.train import basic_session_run_hooks, default_hooks, rerun_notice, session_run_hook
from dtf_notebook.train.checkpoint_saver_hook import CheckpointSaverHook
from dtf_notebook.train.progress_hook import ProgressBarHook
from dtf_notebook.train.scaffold import Scaffold
from dtf_notebook.train.session_creators import ChiefSessionCreator, SessionCreator, WorkerSessionCreator
from dtf_notebook.train.session_wrappers import (
    StepContext,
    _CoordinatedSessionCreator,
    _RecoverableSession,
    _WrappedSession,
)

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
]

#: Marks an argument of :func:`MonitoredTrainingSession` left at TF1's default (which depends on the others).
USE_DEFAULT = object()


class _MonitoredSession:
    """Shared body of MonitoredSession and SingularMonitoredSession."""

    StepContext = StepContext

    def __init__(
        self,
        session_creator: SessionCreator | None,
        hooks: Iterable[session_run_hook.SessionRunHook] | None,
        should_recover: bool,
        stop_grace_period_secs: float = 120,
    ) -> None:
        self._graph_was_finalized = get_default_graph().finalized
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._coordinated_creator = _CoordinatedSessionCreator(
            session_creator or ChiefSessionCreator(), self._hooks, stop_grace_period_secs
        )
        self._sess: _WrappedSession | None
        try:
            if should_recover:
                self._sess = _RecoverableSession(self._coordinated_creator)
            else:
                self._sess = self._coordinated_creator.create_session()
        except BaseException:
            # The scaffold finalized the graph; a session that never came to be leaves it editable again.
            if not self._graph_was_finalized:
                get_default_graph()._unsafe_unfinalize()
            raise

    @property
    def graph(self) -> Any:
        """The graph the session runs (None once closed)."""
        tf_sess = self._tf_sess()
        return None if tf_sess is None else tf_sess.graph

    def run(self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None) -> Any:
        """Runs ``fetches`` like ``Session.run``, with the hooks around it (and recovery, for MonitoredSession)."""
        if self._sess is None:
            raise RuntimeError("Attempted to use a closed MonitoredSession.")
        return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)

    def run_step_fn(self, step_fn: Callable[[StepContext], Any]) -> Any:
        """Calls ``step_fn(step_context)``, which may run with or without hooks and may request a stop.

        Raises:
            ValueError: ``step_fn`` does not take exactly one ``step_context`` argument.
            StopIteration: ``step_fn`` called ``step_context.request_stop()``.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     c = tf.placeholder(tf.float32)
            ...     v = c + 4.0
            ...     def step_fn(step_context):
            ...         return step_context.run_with_hooks(v, feed_dict={c: 0.5})
            ...     with tf.train.MonitoredSession() as sess:
            ...         print(sess.run_step_fn(step_fn))
            4.5
        """
        params = tuple(inspect.signature(step_fn).parameters)
        if params not in (("step_context",), ("self", "step_context")):
            raise ValueError(
                "`step_fn` may either have one `step_context` argument, or `self` and `step_context` arguments "
                f"if it's an instance method. Got {params} instead."
            )
        if self._sess is None:
            raise RuntimeError("Attempted to use a closed MonitoredSession.")
        return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)

    def should_stop(self) -> bool:
        """True when a hook or the coordinator asked to stop, or the session is closed."""
        return self._sess is None or self._sess.should_stop()

    def close(self) -> None:
        """Calls the hooks' ``end`` and closes the session."""
        self._close_internal()

    def __enter__(self) -> _MonitoredSession:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        # End of input (OutOfRangeError) and a step_fn's request_stop() end the loop cleanly, as in TF1.
        if exc_type is not None and issubclass(exc_type, errors.OutOfRangeError | StopIteration):
            exc_type = None
        self._close_internal(exc_type)
        return exc_type is None

    def _close_internal(self, exception_type: Any = None) -> None:
        try:
            if not exception_type:
                for h in self._hooks:
                    h.end(self._coordinated_creator.tf_sess)
            else:
                # TF1 calls no hook's end after an error or an interrupt; a progress bar still closes, showing
                # how far training got (in a notebook: its static copy, not a widget frozen mid-run).
                for h in self._hooks:
                    if isinstance(h, ProgressBarHook):
                        h.close()
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    get_default_graph()._unsafe_unfinalize()

    def _is_closed(self) -> bool:
        return self._coordinated_creator.tf_sess is None

    def _tf_sess(self) -> Any:
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """A session that initialises or restores, runs hooks, and recovers when a task dies or restarts.

    On creation: the hooks' ``begin``, the scaffold's ``finalize``, a session from ``session_creator``
    (initialised or restored), queue runners started, the hooks' ``after_create_session``. On ``run``: the
    hooks' ``before_run``, one ``Session.run`` with their fetches and feeds merged in, their ``after_run``;
    an ``AbortedError``/``UnavailableError`` closes the session, creates a new one through the creator
    (the hooks are not re-begun) and runs again. On ``close``: the hooks' ``end``, then the session closes.

    Args:
        session_creator: A :class:`ChiefSessionCreator` (default) or :class:`WorkerSessionCreator`.
        hooks: SessionRunHook objects.
        stop_grace_period_secs: How long threads get to stop on ``close``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(2.0)
        ...     tripled = v * 3.0
        ...     with tf.train.MonitoredSession() as sess:
        ...         print(sess.run(tripled))
        6.0
    """

    def __init__(
        self,
        session_creator: SessionCreator | None = None,
        hooks: Iterable[session_run_hook.SessionRunHook] | None = None,
        stop_grace_period_secs: float = 120,
    ) -> None:
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A chief-only MonitoredSession without recovery, whose raw session is reachable (``raw_session()``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.5)
        ...     with tf.train.SingularMonitoredSession() as sess:
        ...         print(sess.raw_session().run(v))
        1.5
    """

    def __init__(
        self,
        hooks: Iterable[session_run_hook.SessionRunHook] | None = None,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        checkpoint_dir: str | None = None,
        stop_grace_period_secs: float = 120,
        checkpoint_filename_with_path: str | None = None,
    ) -> None:
        creator = ChiefSessionCreator(
            scaffold=scaffold,
            master=master,
            config=config,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
        )
        super().__init__(creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self) -> Any:
        """The underlying ``tf.Session``."""
        return self._tf_sess()


def MonitoredTrainingSession(
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: Iterable[session_run_hook.SessionRunHook] | None = None,
    chief_only_hooks: Iterable[session_run_hook.SessionRunHook] | None = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: ConfigProto | None = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int | None = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
    save_graph_def: bool = True,
) -> MonitoredSession:
    """A :class:`MonitoredSession` set up for training, as chief or as another worker.

    The chief restores from ``checkpoint_dir`` (or initialises) and gets the default hooks when it has a
    directory: a StepCounterHook (every ``log_step_count_steps``), a SummarySaverHook (every 100 steps
    unless ``save_summaries_steps``/``save_summaries_secs`` say otherwise) and a CheckpointSaverHook
    (every 600 s unless ``save_checkpoint_secs``/``save_checkpoint_steps`` say otherwise; both None turn
    it off; ``save_graph_def`` also writes each checkpoint's meta graph). Other workers wait up to
    ``max_wait_secs`` for the chief and run only ``hooks``.

    Without ``checkpoint_dir`` the chief starts from the variables' initial values every time, as in TF1. In
    a Jupyter kernel, when an earlier session trained the same graph (or one with the same variables: a
    re-run cell), it says so in one line on standard error (see :mod:`~dtf_notebook.train.rerun_notice`).
    Where someone watches, a progress bar shows the steps and the loss
    (:mod:`~dtf_notebook.train.progress_hook`).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     step = tf.train.get_or_create_global_step()
        ...     train_op = tf.assign_add(step, 1)
        ...     with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(num_steps=5)]) as sess:
        ...         while not sess.should_stop():
        ...             last = sess.run(train_op)
        >>> int(last)
        5
    """
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    if not is_chief:
        worker_creator = WorkerSessionCreator(
            scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs
        )
        worker_hooks = list(hooks or [])
        worker_hooks += default_hooks.default_hooks(worker_hooks)
        return MonitoredSession(worker_creator, hooks=worker_hooks, stop_grace_period_secs=stop_grace_period_secs)

    all_hooks: list[session_run_hook.SessionRunHook] = list(chief_only_hooks or [])
    chief_creator = ChiefSessionCreator(
        scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir, max_wait_secs=max_wait_secs
    )
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(
                basic_session_run_hooks.StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps)
            )
        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(
                basic_session_run_hooks.SummarySaverHook(
                    scaffold=scaffold,
                    save_steps=save_summaries_steps,
                    save_secs=save_summaries_secs,
                    output_dir=summary_dir,
                )
            )
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0) or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        all_hooks.append(
            CheckpointSaverHook(
                checkpoint_dir,
                save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs,
                scaffold=scaffold,
                save_graph_def=save_graph_def,
            )
        )
    all_hooks.extend(hooks or [])
    # In a notebook kernel: one line when this session restarts training an earlier one did (a re-run cell).
    all_hooks += rerun_notice.watch_reruns(checkpoint_dir, scaffold)
    # Extras: registered ones, and a progress bar where someone watches (a notebook, a terminal); none when the
    # output is piped or captured, so scripts print what they print under TF1.
    all_hooks += default_hooks.default_hooks(all_hooks)
    return MonitoredSession(chief_creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)
