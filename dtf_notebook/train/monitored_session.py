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

The pieces, from the inside out: a :class:`SessionCreator` makes a plain ``Session`` ready (with a
:class:`~dtf_notebook.train.session_manager.SessionManager` and the ops of a :class:`Scaffold`);
``_HookedSession`` calls the hooks around each run; ``_CoordinatedSession`` stops with the threads of a
:class:`~dtf_notebook.train.coordinator.Coordinator`; ``_RecoverableSession`` re-creates all of it after
a preemption error.

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

import abc
import dataclasses
import inspect
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_collection, get_default_graph
from dtf_notebook.ops import identity_ops, variables
from dtf_notebook.runtime.config import ConfigProto, RunMetadata, RunOptions
from dtf_notebook.summary.summary_ops import merge_all
from dtf_notebook.train import basic_session_run_hooks, session_run_hook
from dtf_notebook.train.checkpoint_saver_hook import CheckpointSaverHook
from dtf_notebook.train.coordinator import Coordinator
from dtf_notebook.train.saver import Saver
from dtf_notebook.train.session_manager import PREEMPTION_ERRORS, SessionManager

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
]

_log = logging.getLogger(__name__)

#: Marks an argument of :func:`MonitoredTrainingSession` left at TF1's default (which depends on the others).
USE_DEFAULT = object()


class Scaffold:
    """The ops a training session needs -- init, readiness checks, summaries, saver -- taken or made.

    Pieces not given are picked from the graph's collections (``INIT_OP``, ``READY_OP``, ``SAVERS``, ...)
    by :meth:`finalize`, which creates and stores the defaults when a collection is empty, then finalizes
    the graph (no op can be added afterwards).

    Args:
        init_op: Initialises the model (default: every global variable's initializer).
        init_feed_dict: Feeds for ``init_op``.
        init_fn: Called as ``init_fn(scaffold, session)`` after ``init_op``.
        ready_op: 1-D string tensor naming what is uninitialised (default ``report_uninitialized_variables()``).
        ready_for_local_init_op: Like ``ready_op``, over global variables only: checked before ``local_init_op``.
        local_init_op: Initialises local variables and tables (default :meth:`default_local_init_op`).
        summary_op: Merged summaries (default ``tf.summary.merge_all()``).
        saver: Saves and restores the model (default a sharded ``Saver`` of all saveable variables).
        copy_from_scaffold: A scaffold whose pieces fill those not given here.
        local_init_feed_dict: Feeds for ``local_init_op``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     v = tf.Variable(1.0, name="v")
        ...     scaffold = tf.train.Scaffold().finalize()
        >>> scaffold.init_op.type, g.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op], g.finalized
        ('NoOp', True, True)
    """

    def __init__(
        self,
        init_op: Any = None,
        init_feed_dict: dict | None = None,
        init_fn: Callable[[Scaffold, Any], Any] | None = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        local_init_op: Any = None,
        summary_op: Any = None,
        saver: Any = None,
        copy_from_scaffold: Scaffold | None = None,
        local_init_feed_dict: dict | None = None,
    ) -> None:
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            base = copy_from_scaffold
            init_op = _coalesce(init_op, base.init_op)
            init_feed_dict = _coalesce(init_feed_dict, base.init_feed_dict)
            init_fn = _coalesce(init_fn, base._user_init_fn)
            ready_op = _coalesce(ready_op, base.ready_op)
            ready_for_local_init_op = _coalesce(ready_for_local_init_op, base.ready_for_local_init_op)
            local_init_op = _coalesce(local_init_op, base.local_init_op)
            local_init_feed_dict = _coalesce(local_init_feed_dict, base.local_init_feed_dict)
            summary_op = _coalesce(summary_op, base.summary_op)
            saver = _coalesce(saver, base.saver)
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> Scaffold:
        """Fills every missing piece from the graph's collections (creating defaults) and finalizes the graph."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP, _default_init_op)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, variables.report_uninitialized_variables
            )
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op",
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()),
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = Scaffold.get_or_default(
                "saver", GraphKeys.SAVERS, lambda: Saver(sharded=True, allow_empty=True)
            )
        self._saver.build()
        get_default_graph().finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self) -> Callable[[Any], Any] | None:
        """``init_fn`` bound to this scaffold: called as ``init_fn(session)``."""
        return self._init_fn

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def ready_op(self) -> Any:
        return self._ready_op

    @property
    def ready_for_local_init_op(self) -> Any:
        return self._ready_for_local_init_op

    @property
    def local_init_op(self) -> Any:
        return self._local_init_op

    @property
    def local_init_feed_dict(self) -> dict | None:
        return self._local_init_feed_dict

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def init_feed_dict(self) -> dict | None:
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Callable[[], Any]) -> Any:
        """The one item of ``collection_key``, or a new one from ``default_constructor`` (stored there).

        Raises:
            RuntimeError: the collection holds more than one item.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     op = tf.train.Scaffold.get_or_default("init_op", "init_op", tf.no_op)
            ...     again = tf.train.Scaffold.get_or_default("init_op", "init_op", tf.no_op)
            >>> op is again
            True
        """
        elements = get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate which one to use '
                    f"by passing it to the tf.Scaffold constructor as:  tf.Scaffold({arg_name}=item to use)"
                )
            return elements[0]
        made = default_constructor()
        if made is not None:
            add_to_collection(collection_key, made)
        return made

    @staticmethod
    def default_local_init_op() -> Any:
        """Groups the local variables' initializers and the table initializers.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     tf.train.Scaffold.default_local_init_op().type
            'NoOp'
        """
        tables = get_collection(GraphKeys.TABLE_INITIALIZERS)
        return identity_ops.group(variables.local_variables_initializer(), *tables)


def _default_init_op() -> Any:
    return identity_ops.group(variables.global_variables_initializer())


def _coalesce(a: Any, b: Any) -> Any:
    return a if a is not None else b


# ---- session creators -------------------------------------------------------------------------------
class SessionCreator(abc.ABC):
    """Makes the session a monitored session runs on (TF1's ``tf.train.SessionCreator``).

    Attributes:
        max_wait_secs: How long a monitored session keeps re-creating sessions while tasks are unreachable.
        recovery_wait_secs: Pause between those attempts.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> class PlainSessions(tf.train.SessionCreator):
        ...     def create_session(self):
        ...         return tf.Session()
        >>> with tf.Graph().as_default():
        ...     two = tf.constant(2)
        ...     with tf.train.MonitoredSession(PlainSessions()) as sess:
        ...         print(sess.run(two))
        2
    """

    max_wait_secs: float = 7200
    recovery_wait_secs: float = 1

    @abc.abstractmethod
    def create_session(self) -> Any:
        """A new session, ready to run the model."""


class ChiefSessionCreator(SessionCreator):
    """Creates the chief's session: restores the latest checkpoint, or initialises the model.

    Args:
        scaffold: The ops to use (a default Scaffold if None); finalized on the first creation.
        master: The session target (``""`` for this process, ``zmq://host:port`` for a cluster task).
        config: ConfigProto of the session.
        checkpoint_dir: Directory whose latest checkpoint is restored.
        checkpoint_filename_with_path: A checkpoint file to restore instead.
        max_wait_secs: How long to keep re-creating the session while tasks are unreachable (after a crash).
        recovery_wait_secs: Pause between those attempts.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(4.0)
        ...     sess = tf.train.ChiefSessionCreator().create_session()
        ...     print(sess.run(v))
        ...     sess.close()
        4.0
    """

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        max_wait_secs: float = 7200,
        recovery_wait_secs: float = 1,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self.max_wait_secs = max_wait_secs
        self.recovery_wait_secs = recovery_wait_secs
        self._session_manager: SessionManager | None = None

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = _session_manager_for(self._scaffold, self.recovery_wait_secs)
        return self._session_manager

    def create_session(self) -> Any:
        """A session whose model is restored from ``checkpoint_dir`` or initialised."""
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(SessionCreator):
    """Creates a non-chief worker's session: waits until the chief has made the model ready.

    Args:
        scaffold: The ops to use (a default Scaffold if None); finalized on the first creation.
        master: The session target.
        config: ConfigProto of the session.
        max_wait_secs: How long to wait for the model to be ready before DeadlineExceededError.
        recovery_wait_secs: Seconds between readiness checks (TF1 used 30; 1 here).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(1.0, name="w")
        ...     creator = tf.train.WorkerSessionCreator(max_wait_secs=0.05, recovery_wait_secs=0.01)
        ...     try:
        ...         creator.create_session()
        ...     except tf.errors.DeadlineExceededError as e:
        ...         print(e)
        Session was not ready after waiting 0.05 secs. Variables not initialized: w
    """

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        max_wait_secs: float = 30 * 60,
        recovery_wait_secs: float = 1,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self.max_wait_secs = max_wait_secs
        self.recovery_wait_secs = recovery_wait_secs
        self._session_manager: SessionManager | None = None

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = _session_manager_for(self._scaffold, self.recovery_wait_secs)
        return self._session_manager

    def create_session(self) -> Any:
        """A session on a model the chief has made ready (waits up to ``max_wait_secs``)."""
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self.max_wait_secs
        )


def _session_manager_for(scaffold: Scaffold, recovery_wait_secs: float) -> SessionManager:
    return SessionManager(
        local_init_op=scaffold.local_init_op,
        local_init_feed_dict=scaffold.local_init_feed_dict,
        ready_op=scaffold.ready_op,
        ready_for_local_init_op=scaffold.ready_for_local_init_op,
        graph=get_default_graph(),
        recovery_wait_secs=recovery_wait_secs,
    )


# ---- monitored sessions -----------------------------------------------------------------------------
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
        return MonitoredSession(worker_creator, hooks=list(hooks or []), stop_grace_period_secs=stop_grace_period_secs)

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
    return MonitoredSession(chief_creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs)


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


# ---- session wrappers -------------------------------------------------------------------------------
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
        options = dataclasses.replace(options) if options is not None else RunOptions()
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
