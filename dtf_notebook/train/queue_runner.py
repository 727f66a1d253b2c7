"""``tf.train.QueueRunner``: threads that keep running enqueue ops for a queue (TF1's queue runners).

A runner holds a queue and a list of enqueue ops; :meth:`QueueRunner.create_threads` starts one thread
per op, each running its op in a loop until the queue is closed (``OutOfRangeError`` and the other
``queue_closed_exception_types`` end the thread quietly; the last thread to end closes the queue), the
coordinator asks to stop, or the session is closed. Any other error is reported to the coordinator
(which re-raises it from ``join``) or, with no coordinator, recorded in ``exceptions_raised`` and raised
in the thread. With a coordinator, one more thread closes the queue with ``cancel_pending_enqueues``
once a stop is requested, so blocked enqueues end.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     q = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    ...     counter = tf.Variable(0)
    ...     runner = QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1))])
    ...     with tf.Session() as sess:
    ...         sess.run(counter.initializer)
    ...         coord = tf.train.Coordinator()
    ...         threads = runner.create_threads(sess, coord=coord, start=True)
    ...         print(sess.run(q.dequeue_many(3)))
    ...         coord.request_stop(); coord.join(threads)
    [1 2 3]
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_collection, get_default_graph
from dtf_notebook.framework.meta_graph import register_proto_function, strip_name_scope
from dtf_notebook.protos.graph_pb import QueueRunnerDef
from dtf_notebook.runtime.session import get_default_session

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger(__name__)


class QueueRunner:
    """Runs enqueue ops for a queue in background threads.

    Args:
        queue: The queue (a ``QueueBase``) the ops fill.
        enqueue_ops: Ops to run, one thread each (several ops fill the queue in parallel).
        close_op: Op closing the queue when every thread has ended (default: ``queue.close()``).
        cancel_op: Op closing the queue and cancelling pending enqueues on a stop
            (default: ``queue.close(cancel_pending_enqueues=True)``).
        queue_closed_exception_types: Errors meaning "the queue is closed, end quietly"
            (default ``(tf.errors.OutOfRangeError,)``).
        queue_runner_def: A ``QueueRunnerDef`` from :meth:`to_proto`: rebuild the runner from the ops of the
            default graph.
        import_scope: Name scope prepended to the op names of ``queue_runner_def``.

    Raises:
        ValueError: neither a queue with enqueue ops nor a ``queue_runner_def`` was given.
        TypeError: ``queue_closed_exception_types`` holds something that is not an OpError type.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     q = tf.FIFOQueue(1, tf.float32, name="q")
        ...     runner = QueueRunner(q, [q.enqueue(1.0)])
        >>> runner.name, runner.close_op.name, runner.cancel_op.name
        ('q', 'q_Close', 'q_Close_1')
    """

    def __init__(
        self,
        queue: Any = None,
        enqueue_ops: Sequence[Any] | None = None,
        close_op: Any = None,
        cancel_op: Any = None,
        queue_closed_exception_types: Sequence[type] | None = None,
        queue_runner_def: Any = None,
        import_scope: str | None = None,
    ) -> None:
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_def(queue_runner_def, import_scope)
        else:
            self._init_from_args(queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types)
        self._lock = threading.Lock()
        # Running threads per session: the last one to end closes the queue.
        self._runs_per_session: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._exceptions_raised: list[BaseException] = []

    def _init_from_args(
        self, queue: Any, enqueue_ops: Any, close_op: Any, cancel_op: Any, exception_types: Any
    ) -> None:
        if queue is None or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._queue_name = queue.name
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._queue_closed_exception_types = _exception_types(exception_types)

    def _init_from_def(self, definition: Any, import_scope: str | None) -> None:
        graph = get_default_graph()
        scope = import_scope.rstrip("/") + "/" if import_scope else ""

        def find(name: str) -> Any:
            return graph.as_graph_element(scope + name, allow_tensor=True, allow_operation=True)

        if isinstance(definition, dict):  # the plain form of the JSON meta graphs of earlier versions
            by_name = {cls.__name__: cls for cls in _OP_ERROR_TYPES}
            closed = [by_name[n] for n in definition.get("queue_closed_exception_types") or ["OutOfRangeError"]]
            definition = QueueRunnerDef(
                queue_name=definition["queue_name"],
                enqueue_op_name=definition["enqueue_op_name"],
                close_op_name=definition["close_op_name"],
                cancel_op_name=definition["cancel_op_name"],
                queue_closed_exception_types=[errors.error_code_from_exception_type(c) for c in closed],
            )
        self._queue = None
        self._queue_name = scope + definition.queue_name
        self._enqueue_ops = [find(n) for n in definition.enqueue_op_name]
        self._close_op = find(definition.close_op_name)
        self._cancel_op = find(definition.cancel_op_name)
        codes = list(definition.queue_closed_exception_types) or [errors.OUT_OF_RANGE]
        self._queue_closed_exception_types = _exception_types(
            [errors.exception_type_from_error_code(code) for code in codes]
        )

    # ---- properties ----------------------------------------------------------------------------
    @property
    def queue(self) -> Any:
        return self._queue

    @property
    def enqueue_ops(self) -> list[Any]:
        return self._enqueue_ops

    @property
    def close_op(self) -> Any:
        return self._close_op

    @property
    def cancel_op(self) -> Any:
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple[type, ...]:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list[BaseException]:
        """Errors raised by threads started without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue."""
        return self._queue_name

    # ---- threads --------------------------------------------------------------------------------
    def _run(self, sess: Any, enqueue_op: Any, coord: Any) -> None:
        decremented = False
        try:
            run = sess.make_callable(enqueue_op) if hasattr(sess, "make_callable") else lambda: sess.run(enqueue_op)
            while not (coord is not None and coord.should_stop()):
                try:
                    run()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        _run_quietly(sess, self._close_op)
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator, or recorded and raised
            if getattr(sess, "_closed", False):
                return  # the session was closed under the thread (then its step cancelled): a normal way to end
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner for %s: %s", self.name, e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess: Any, coord: Any) -> None:
        coord.wait_for_stop()
        _run_quietly(sess, self._cancel_op)

    def create_threads(self, sess: Any, coord: Any = None, daemon: bool = False, start: bool = False) -> list[Any]:
        """Creates (and with ``start`` starts) the threads running the enqueue ops in ``sess``.

        Returns an empty list when threads for ``sess`` are still running. With ``coord``, each thread
        is registered with it, stops when it asks, and one more thread cancels pending enqueues on a stop.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     q = tf.FIFOQueue(1, tf.float32)
            ...     runner = QueueRunner(q, [q.enqueue(1.0), q.enqueue(2.0)])
            ...     with tf.Session() as sess:
            ...         len(runner.create_threads(sess))
            2
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(target=self._run, args=(sess, op, coord), name=f"QueueRunnerThread-{self.name}-{op.name}")
            for op in self._enqueue_ops
        ]
        if coord is not None:
            threads.append(
                threading.Thread(
                    target=self._close_on_stop, args=(sess, coord), name=f"QueueRunnerThread-{self.name}-close_on_stop"
                )
            )
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads

    def to_proto(self, export_scope: str | None = None) -> Any:
        """The ``QueueRunnerDef`` naming the runner's queue and ops (TF's; what ``queue_runner_def`` takes back),
        names relative to ``export_scope``; None when the queue lies outside it.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     q = tf.FIFOQueue(1, tf.float32, name="q")
            ...     proto = QueueRunner(q, [q.enqueue(1.0)]).to_proto()
            >>> list(proto.enqueue_op_name), list(proto.queue_closed_exception_types)
            (['q_enqueue'], [11])
        """
        if export_scope and not self._queue_name.startswith(export_scope.rstrip("/") + "/"):
            return None

        def strip(name: str) -> str:
            return strip_name_scope(name, export_scope)

        return QueueRunnerDef(
            queue_name=strip(self._queue_name),
            enqueue_op_name=[strip(op.name) for op in self._enqueue_ops],
            close_op_name=strip(self._close_op.name),
            cancel_op_name=strip(self._cancel_op.name),
            queue_closed_exception_types=[
                errors.error_code_from_exception_type(t) for t in self._queue_closed_exception_types
            ],
        )

    @staticmethod
    def from_proto(queue_runner_def: Any, import_scope: str | None = None) -> QueueRunner:
        """A runner rebuilt from a ``QueueRunnerDef`` (:meth:`to_proto`) and the default graph's ops.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     q = tf.FIFOQueue(1, tf.float32, name="q")
            ...     copy = QueueRunner.from_proto(QueueRunner(q, [q.enqueue(1.0)]).to_proto())
            ...     [op.name for op in copy.enqueue_ops]
            ['q_enqueue']
        """
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)


_OP_ERROR_TYPES = tuple(
    cls for cls in vars(errors).values() if isinstance(cls, type) and issubclass(cls, errors.OpError)
)


def _exception_types(types: Any) -> tuple[type, ...]:
    if types is None:
        return (errors.OutOfRangeError,)
    for t in types:
        if not (isinstance(t, type) and issubclass(t, errors.OpError)):
            raise TypeError(
                f"queue_closed_exception_types, when provided, must be a tuple of tf.error types, but saw: {types}"
            )
    return tuple(types)


def _run_quietly(sess: Any, op: Any) -> None:
    """Runs a close op; errors are expected (the queue may already be closed, the session gone) and ignored."""
    try:
        sess.run(op)
    except (errors.OpError, RuntimeError) as e:
        _log.debug("Ignored error closing a queue: %s", e)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Adds ``qr`` to a graph collection (``QUEUE_RUNNERS`` by default), where monitored sessions find it.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     q = tf.FIFOQueue(1, tf.float32)
        ...     add_queue_runner(QueueRunner(q, [q.enqueue(1.0)]))
        ...     len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))
        1
    """
    add_to_collection(collection, qr)


def start_queue_runners(
    sess: Any = None,
    coord: Any = None,
    daemon: bool = True,
    start: bool = True,
    collection: str = GraphKeys.QUEUE_RUNNERS,
) -> list[Any]:
    """Starts the threads of every queue runner in ``collection`` for ``sess`` (default: the default session).

    Raises:
        ValueError: there is no session to use.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
        ...     add_queue_runner(QueueRunner(q, [q.enqueue(7.0)]))
        ...     with tf.Session() as sess:
        ...         coord = tf.train.Coordinator()
        ...         threads = start_queue_runners(sess, coord)
        ...         print(sess.run(q.dequeue()))
        ...         coord.request_stop(); coord.join(threads)
        7.0
    """
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered.")
    threads: list[Any] = []
    for qr in get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


def _queue_runner_to_proto(runner: QueueRunner, export_scope: str | None = None) -> Any:
    return runner.to_proto(export_scope=export_scope)


register_proto_function(GraphKeys.QUEUE_RUNNERS, QueueRunnerDef, _queue_runner_to_proto, QueueRunner.from_proto)
