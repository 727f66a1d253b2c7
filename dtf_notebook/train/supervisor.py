"""``tf.train.Supervisor``: TF1's training helper -- initialise or restore, checkpoint, summarise, stop cleanly.

The chief supervisor (``is_chief=True``) restores the latest checkpoint of ``logdir`` or runs ``init_op`` /
``init_fn``, writes the graph, and starts the standard services (summaries every ``save_summaries_secs``, a
checkpoint every ``save_model_secs``, a steps-per-second counter) and the graph's queue runners. Other supervisors
wait until the chief has made the model ready, polling every ``recovery_wait_secs`` and giving up after
``max_wait_secs`` with a ``DeadlineExceededError`` naming the uninitialised variables. ``managed_session`` wraps it
all: an exception raised in its block (or in a service thread) stops the threads and closes the session before it
is raised again, except ``OutOfRangeError``, the end of the input, which ends the block cleanly.

The pieces are those of ``MonitoredTrainingSession``: a :class:`~dtf_notebook.train.session_manager.SessionManager`,
a :class:`~dtf_notebook.train.coordinator.Coordinator`, the graph's queue runners and a ``Saver``; defaults come from
the graph's collections as in TF1's ``supervisor.py``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     train_op = tf.assign_add(step, 1)
    ...     sv = tf.train.Supervisor(logdir="memory://supervisor_doc")
    ...     with sv.managed_session() as sess:
    ...         while not sv.should_stop():
    ...             if sess.run(train_op) >= 3:
    ...                 sv.request_stop()
    ...     print(sv.should_stop())
    True
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.ops import identity_ops, lookup_ops, variables
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.summary.messages import SessionLog
from dtf_notebook.summary.summary_ops import merge_all
from dtf_notebook.summary.writer import FileWriter
from dtf_notebook.train import training_util
from dtf_notebook.train.coordinator import Coordinator, LooperThread
from dtf_notebook.train.graph_io import write_graph_and_meta_graph
from dtf_notebook.train.saver import Saver
from dtf_notebook.train.session_manager import SessionManager, _close_quietly
from dtf_notebook.train.supervisor_services import SVStepCounterThread, SVSummaryThread, SVTimerCheckpointThread

__all__ = ["Supervisor"]

_log = logging.getLogger(__name__)

_VARIABLE_OPS = ("Variable", "VariableV2")  # TF checks reference variables only


class Supervisor:
    """Creates a session whose model is ready, runs the standard services, and stops them cleanly.

    Args:
        graph: The model's graph (default graph); finalized by the constructor.
        ready_op: 1-D string tensor naming what is uninitialised (default the first of ``READY_OP`` or
            ``report_uninitialized_variables()``). None skips the check.
        ready_for_local_init_op: Checked before ``local_init_op`` (default the first of ``READY_FOR_LOCAL_INIT_OP``).
        is_chief: Whether this supervisor initialises/restores the model and writes checkpoints and summaries.
        init_op: Run by the chief when nothing was restored (default the first of ``INIT_OP`` or
            ``global_variables_initializer()``). None runs nothing (then ``init_fn`` initialises).
        init_feed_dict: Feeds for ``init_op``.
        local_init_op: Run by every supervisor in every new session (default the first of ``LOCAL_INIT_OP`` or
            the local variables' and tables' initializers).
        logdir: The chief's directory for checkpoints, ``graph.pbtxt`` and event files (created if missing).
        summary_op: Run every ``save_summaries_secs`` (default the first of ``SUMMARY_OP`` or ``merge_all()``).
        saver: Saves every ``save_model_secs`` and restores at start (default the first of ``SAVERS`` or a new
            ``Saver()`` when the graph has global variables).
        global_step: The step written with summaries and checkpoints (default the first of ``GLOBAL_STEP`` or the
            graph's integer ``global_step:0``).
        save_summaries_secs: Seconds between summaries (0 disables them).
        save_model_secs: Seconds between checkpoints (0 disables them).
        recovery_wait_secs: Seconds between readiness checks of a waiting supervisor (TF's 30).
        stop_grace_secs: How long ``stop`` waits for threads after asking them to stop.
        checkpoint_basename: File name prefix of checkpoints in ``logdir``.
        session_manager: A ``SessionManager`` to use instead of one made from these arguments.
        summary_writer: A ``FileWriter``, None for no summaries, or ``USE_DEFAULT`` (a writer on ``logdir``).
        init_fn: Called as ``init_fn(sess)`` after ``init_op`` when nothing was restored.
        local_init_run_options: ``RunOptions`` for ``local_init_op``.

    Raises:
        ValueError: a non-chief supervisor's graph has a variable without a device (replicas must pin their
            variables, as in TF1).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(2.0, name="v")
        ...     sv = tf.train.Supervisor(logdir=None)
        ...     sess = sv.prepare_or_wait_for_session("")
        ...     print(sess.run(v), sv.is_chief, sv.init_op.name)
        ...     sv.stop(); sess.close()
        2.0 True init
    """

    #: Marks an argument whose default comes from the graph's collections (TF's value, 0).
    USE_DEFAULT = 0

    def __init__(
        self,
        graph: Graph | None = None,
        ready_op: Any = USE_DEFAULT,
        ready_for_local_init_op: Any = USE_DEFAULT,
        is_chief: bool = True,
        init_op: Any = USE_DEFAULT,
        init_feed_dict: dict | None = None,
        local_init_op: Any = USE_DEFAULT,
        logdir: str | None = None,
        summary_op: Any = USE_DEFAULT,
        saver: Any = USE_DEFAULT,
        global_step: Any = USE_DEFAULT,
        save_summaries_secs: float = 120,
        save_model_secs: float = 600,
        recovery_wait_secs: float = 30,
        stop_grace_secs: float = 120,
        checkpoint_basename: str = "model.ckpt",
        session_manager: SessionManager | None = None,
        summary_writer: Any = USE_DEFAULT,
        init_fn: Callable[[Any], Any] | None = None,
        local_init_run_options: Any = None,
    ) -> None:
        graph = graph if graph is not None else get_default_graph()
        with graph.as_default():
            self._ready_op = _default(ready_op, GraphKeys.READY_OP, variables.report_uninitialized_variables)
            self._ready_for_local_init_op = _default(ready_for_local_init_op, GraphKeys.READY_FOR_LOCAL_INIT_OP, None)
            self._init_op = _default(init_op, GraphKeys.INIT_OP, variables.global_variables_initializer)
            self._init_feed_dict = init_feed_dict
            self._local_init_op = _default(local_init_op, GraphKeys.LOCAL_INIT_OP, _default_local_init_op)
            self._saver = _default(saver, GraphKeys.SAVERS, _default_saver)
            self._summary_op = _default(summary_op, GraphKeys.SUMMARY_OP, merge_all)
            self._global_step = _default(global_step, GraphKeys.GLOBAL_STEP, lambda: _default_global_step(graph))
        self._graph = graph
        self._is_chief = is_chief
        self._coord = Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        # Only a chief writes: a worker's logdir, intervals and writer are ignored, as in TF1.
        self._logdir: str | None = None
        self._save_summaries_secs: float | None = None
        self._save_model_secs: float | None = None
        self._save_path: str | None = None
        self._summary_writer: Any = None
        self._graph_added_to_summary = False
        if is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if logdir:
                self._save_path = os.path.join(logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                self._summary_writer = FileWriter(logdir) if logdir else None
            else:
                self._summary_writer = summary_writer
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op,
            ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op,
            graph=graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options,
        )
        self._verify_setup()
        graph.finalize()

    def _verify_setup(self) -> None:
        if self._is_chief:
            return
        for op in self._graph.get_operations():
            if op.type in _VARIABLE_OPS and not op.device:
                raise ValueError(
                    f"When using replicas, all Variables must have their device set: variable {op.name!r} has none "
                    "(place variables with tf.device(tf.train.replica_device_setter(...)))"
                )

    # ---- what the supervisor holds ------------------------------------------------------------
    @property
    def is_chief(self) -> bool:
        """True for the chief supervisor, which initialises, restores, checkpoints and summarises."""
        return self._is_chief

    @property
    def session_manager(self) -> SessionManager:
        return self._session_manager

    @property
    def coord(self) -> Coordinator:
        """The coordinator of the supervisor's threads (and of any the user adds)."""
        return self._coord

    @property
    def init_op(self) -> Any:
        return self._init_op

    @property
    def init_feed_dict(self) -> dict | None:
        return self._init_feed_dict

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
    def summary_writer(self) -> Any:
        return self._summary_writer

    @property
    def summary_op(self) -> Any:
        return self._summary_op

    @property
    def save_summaries_secs(self) -> float | None:
        return self._save_summaries_secs

    @property
    def global_step(self) -> Any:
        return self._global_step

    @property
    def saver(self) -> Any:
        return self._saver

    @property
    def save_model_secs(self) -> float | None:
        return self._save_model_secs

    @property
    def save_path(self) -> str | None:
        """``logdir/checkpoint_basename`` for a chief with a logdir, else None."""
        return self._save_path

    # ---- sessions -----------------------------------------------------------------------------
    def prepare_or_wait_for_session(
        self,
        master: str = "",
        config: ConfigProto | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        start_standard_services: bool = True,
    ) -> Any:
        """A session on ``master`` whose model is ready: the chief's restored or initialised, a worker's waited for.

        With ``start_standard_services`` the chief also writes the graph and starts the summary, step-counter and
        checkpoint threads, and every supervisor starts the graph's queue runners.

        Raises:
            DeadlineExceededError: (not the chief) the model was not ready within ``max_wait_secs``; names what
                was still uninitialised.
            RuntimeError: (the chief) the init ops did not make the model ready.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     with tf.device("/cpu:0"):
            ...         w = tf.Variable(1.0, name="weights")
            ...     sv = tf.train.Supervisor(is_chief=False, recovery_wait_secs=0.01)
            ...     try:
            ...         sv.prepare_or_wait_for_session("", max_wait_secs=0.05)
            ...     except tf.errors.DeadlineExceededError as e:
            ...         print(e)
            Session was not ready after waiting 0.05 secs. Variables not initialized: weights
        """
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master,
                init_op=self._init_op,
                saver=self._saver,
                checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs,
                config=config,
                init_feed_dict=self._init_feed_dict,
                init_fn=self._init_fn,
            )
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    @contextlib.contextmanager
    def managed_session(
        self,
        master: str = "",
        config: ConfigProto | None = None,
        start_standard_services: bool = True,
        close_summary_writer: bool = True,
    ) -> Iterator[Any]:
        """A context manager yielding a ready session; on exit it stops the threads and closes the session.

        An exception from the block or from a service thread is raised again once everything is stopped and the
        session closed; ``OutOfRangeError`` (the input is exhausted) ends the block cleanly instead.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     v = tf.Variable(1.0)
            ...     sv = tf.train.Supervisor()
            ...     with sv.managed_session() as sess:
            ...         raise tf.errors.OutOfRangeError(None, None, "input exhausted")
            ...     print("clean stop:", sv.should_stop())
            clean stop: True
        """
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services
            )
            yield sess
        except Exception as e:  # noqa: BLE001 -- recorded in the coordinator; stop() raises it again
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    _close_quietly(sess)

    def start_standard_services(self, sess: Any) -> list[LooperThread] | None:
        """Starts the chief's summary, step-counter and checkpoint threads for ``sess``; returns them.

        Returns None (with a warning) without a logdir.

        Raises:
            RuntimeError: this supervisor is not the chief.
        """
        if not self._is_chief:
            raise RuntimeError(
                "Only chief supervisor can start standard services. Because only chief supervisors can write events."
            )
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer:
            step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        threads: list[LooperThread] = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for thread in threads:
            thread.start()
        return threads

    def start_queue_runners(self, sess: Any, queue_runners: list[Any] | None = None) -> list[Any]:
        """Starts daemon threads for ``queue_runners`` (default the graph's ``QUEUE_RUNNERS``) under the coordinator.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     q = tf.FIFOQueue(4, tf.float32)
            ...     tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(1.0)]))
            ...     one = q.dequeue()
            ...     sv = tf.train.Supervisor()
            ...     with sv.managed_session(start_standard_services=False) as sess:
            ...         threads = sv.start_queue_runners(sess)
            ...         print(len(threads) > 0, sess.run(one))
            True 1.0
        """
        if queue_runners is None:
            queue_runners = self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads: list[Any] = []
        for runner in queue_runners:
            threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(
        self,
        timer_interval_secs: float | None,
        target: Callable[..., Any],
        args: Any = None,
        kwargs: dict[str, Any] | None = None,
    ) -> LooperThread:
        """Starts a thread calling ``target(*args, **kwargs)`` every ``timer_interval_secs`` until a stop.

        The thread is the coordinator's: :meth:`stop` joins it. With ``timer_interval_secs=None`` it calls
        ``target`` back to back.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     sv = tf.train.Supervisor()
            ...     ticks = []
            ...     _ = sv.loop(0.01, lambda: ticks.append(1) if len(ticks) < 3 else sv.request_stop())
            ...     sv.wait_for_stop(); sv.stop()
            ...     print(len(ticks))
            3
        """
        return LooperThread.loop(self._coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)

    # ---- stopping -----------------------------------------------------------------------------
    def stop(
        self, threads: list[Any] | None = None, close_summary_writer: bool = True, ignore_live_threads: bool = False
    ) -> None:
        """Asks every thread to stop, joins them (``stop_grace_secs`` at most) and closes the summary writer.

        The session is not closed. An exception reported to the coordinator is raised here.

        Raises:
            RuntimeError: threads were still running after the grace period (unless ``ignore_live_threads``).
        """
        self._coord.request_stop()
        try:
            self._coord.join(
                threads, stop_grace_period_secs=self._stop_grace_secs, ignore_live_threads=ignore_live_threads
            )
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex: Any = None) -> None:
        """Asks the threads to stop; ``ex`` (an exception or ``sys.exc_info()``) is raised again by :meth:`stop`."""
        self._coord.request_stop(ex=ex)

    def should_stop(self) -> bool:
        """True once a stop was requested."""
        return self._coord.should_stop()

    def stop_on_exception(self) -> contextlib.AbstractContextManager[None]:
        """A context manager that requests a stop, with the exception, when its body raises."""
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        """Blocks until a stop is requested."""
        self._coord.wait_for_stop()

    # ---- events -------------------------------------------------------------------------------
    def summary_computed(self, sess: Any, summary: Any, global_step: int | None = None) -> None:
        """Writes a summary computed by the caller, at ``global_step`` (default: the current global step).

        Raises:
            RuntimeError: the supervisor has no summary writer (not the chief, or no logdir).
        """
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = training_util.global_step(sess, self._global_step)
        self._summary_writer.add_summary(summary, global_step)

    def _write_graph(self) -> None:
        """TF's: ``graph.pbtxt`` in the logdir, and the graph and its meta graph (with the saver) as events."""
        writer = self._summary_writer if not self._graph_added_to_summary else None
        write_graph_and_meta_graph(self._graph, self._logdir, writer, self._saver)
        if writer is not None:
            self._graph_added_to_summary = True

    # TF1's CamelCase aliases.
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


def _default(value: Any, key: str, make: Callable[[], Any] | None) -> Any:
    """``value``, or for ``USE_DEFAULT`` the first item of collection ``key``, else ``make()`` (stored in ``key``)."""
    if value is not Supervisor.USE_DEFAULT:
        return value
    items = get_default_graph().get_collection(key)
    if len(items) > 1:
        _log.info("Found %d %s operations. Returning the first one.", len(items), key)
    if items:
        return items[0]
    made = make() if make is not None else None
    if made is not None:
        get_default_graph().add_to_collection(key, made)
    return made


def _default_local_init_op() -> Any:
    return identity_ops.group(variables.local_variables_initializer(), lookup_ops.tables_initializer())


def _default_saver() -> Saver | None:
    return Saver() if variables.global_variables() else None


def _default_global_step(graph: Graph) -> Any:
    try:
        step = graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None
    if step.dtype.base_dtype.name in ("int32", "int64"):
        return step
    _log.warning("Found 'global_step' is not an int type: %s", step.dtype)
    return None
