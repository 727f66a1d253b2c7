"""``tf.train.SessionManager``: create a session whose model is ready, by restoring, initialising or waiting.

The chief calls :meth:`SessionManager.prepare_session`: it restores the latest checkpoint of a directory or,
when there is none, runs the init op. Other workers call :meth:`SessionManager.wait_for_session`, which
polls the ``ready_op`` (names of uninitialised variables) until the chief has made the model ready, and
gives up after ``max_wait_secs`` with an error naming the variables still uninitialised.

Unlike TF1 (30 s), readiness is polled every second by default (``recovery_wait_secs``); a cluster whose
tasks are briefly unreachable while a worker waits counts as "not ready yet", not as a failure.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(3.0, name="v")
    ...     sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
    ...     sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
    ...     print(sess.run(v))
    ...     sess.close()
    3.0
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.runtime.session import Session
from dtf_notebook.train.checkpoint_management import get_checkpoint_state

__all__ = ["SessionManager"]

_log = logging.getLogger(__name__)

# Errors meaning a task of the cluster died or restarted: the session is lost, a new one may work.
PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)


class SessionManager:
    """Restores or initialises a model when creating a session, or waits for another process to do it.

    Args:
        local_init_op: Run after every session creation (local variables, tables), once
            ``ready_for_local_init_op`` reports nothing missing.
        ready_op: A 1-D string tensor naming what is not initialised; empty when the model is ready.
            None skips the check.
        ready_for_local_init_op: Like ``ready_op``, checked before running ``local_init_op``.
        graph: The graph of the sessions (default graph).
        recovery_wait_secs: Seconds between readiness checks (and between checks for a checkpoint).
        local_init_run_options: RunOptions for running ``local_init_op``.
        local_init_feed_dict: Feeds for running ``local_init_op``.

    Raises:
        ValueError: ``ready_for_local_init_op`` is given without ``local_init_op``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0, name="weights")
        ...     sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(), recovery_wait_secs=0.01)
        ...     try:
        ...         sm.wait_for_session("", max_wait_secs=0.02)
        ...     except tf.errors.DeadlineExceededError as e:
        ...         print(e)
        Session was not ready after waiting 0.02 secs. Variables not initialized: weights
    """

    def __init__(
        self,
        local_init_op: Any = None,
        ready_op: Any = None,
        ready_for_local_init_op: Any = None,
        graph: Graph | None = None,
        recovery_wait_secs: float = 1,
        local_init_run_options: Any = None,
        local_init_feed_dict: dict | None = None,
    ) -> None:
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(
                "If you pass a ready_for_local_init_op you must also pass a local_init_op, "
                f"ready_for_local_init_op [{ready_for_local_init_op}]"
            )
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        self._target: str | None = None

    # ---- restoring --------------------------------------------------------------------------------
    def _restore_checkpoint(
        self,
        master: str,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: ConfigProto | None = None,
    ) -> tuple[Session, bool]:
        """A new session, and whether a checkpoint was restored into it."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        self._target = master
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        try:
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                _log.info("Restored model from %s", checkpoint_filename_with_path)
                return sess, True
            deadline = time.monotonic() + max_wait_secs
            state = get_checkpoint_state(checkpoint_dir)
            while state is None or not state.model_checkpoint_path:
                if not wait_for_checkpoint or time.monotonic() >= deadline:
                    return sess, False
                _log.info("Waiting for checkpoint to be available in %s.", checkpoint_dir)
                time.sleep(self._recovery_wait_secs)
                state = get_checkpoint_state(checkpoint_dir)
            saver.restore(sess, state.model_checkpoint_path)
            saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
            _log.info("Restored model from %s", state.model_checkpoint_path)
        except BaseException:
            _close_quietly(sess)
            raise
        return sess, True

    def prepare_session(
        self,
        master: str,
        init_op: Any = None,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: ConfigProto | None = None,
        init_feed_dict: dict | None = None,
        init_fn: Callable[[Session], Any] | None = None,
    ) -> Session:
        """A session on ``master`` whose model is restored from the latest checkpoint, or else initialised.

        ``init_op`` and ``init_fn`` run only when nothing was restored; ``local_init_op`` always runs.

        Raises:
            RuntimeError: nothing was restored and there is nothing to initialise with, or the model is still
                not ready afterwards (the message names the uninitialised variables).
            ValueError: both ``checkpoint_dir`` and ``checkpoint_filename_with_path`` are given.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     v = tf.Variable(5.0, name="v")
            ...     sm = tf.train.SessionManager()
            ...     sess = sm.prepare_session("", init_fn=lambda s: s.run(v.initializer))
            ...     print(sess.run(v))
            ...     sess.close()
            5.0
        """
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, msg = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError(
                    "Init operations did not make model ready for local_init.  "
                    f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, error: {msg}"
                )
            ready, msg = self._model_ready(sess)
            if not ready:
                raise RuntimeError(
                    "Init operations did not make model ready.  Init op: "
                    f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                    f"{_maybe_name(self._local_init_op)}, error: {msg}"
                )
        except BaseException:
            _close_quietly(sess)
            raise
        return sess

    def recover_session(
        self,
        master: str,
        saver: Any = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config: ConfigProto | None = None,
    ) -> tuple[Session, bool]:
        """A new session, restored from a checkpoint if one exists: ``(sess, initialized)``.

        ``initialized`` is True when a checkpoint was restored and the model is ready; the caller
        initialises the model otherwise. ``local_init_op`` is always tried.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     v = tf.Variable(1.0)
            ...     sess, initialized = tf.train.SessionManager().recover_session("")
            ...     sess.close()
            >>> initialized
            False
        """
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        local_ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not local_ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s", source, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        return sess, True

    # ---- waiting ----------------------------------------------------------------------------------
    def wait_for_session(
        self, master: str, config: ConfigProto | None = None, max_wait_secs: float | None = float("inf")
    ) -> Session:
        """A new session on ``master``, once another process (the chief) has made the model ready.

        Checks every ``recovery_wait_secs``; unreachable or restarting tasks count as "not ready yet".

        Raises:
            DeadlineExceededError: the model was not ready within ``max_wait_secs``; the message says what
                was missing (e.g. ``Variables not initialized: w, b``).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     c = tf.constant(2.0)
            ...     sess = tf.train.SessionManager().wait_for_session("")   # nothing to wait for
            ...     print(sess.run(c))
            ...     sess.close()
            2.0
        """
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            try:
                ok, not_ready = self._try_run_local_init_op(sess)
                if ok:
                    ok, not_ready = self._model_ready(sess)
                    if ok:
                        return sess
            except PREEMPTION_ERRORS as e:
                # A task is down or restarting: the chief will bring the model back; keep waiting.
                not_ready = f"{type(e).__name__}: {e.message}"
            except BaseException:
                _close_quietly(sess)
                raise
            _close_quietly(sess)
            if deadline - time.monotonic() < self._recovery_wait_secs:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs:g} secs. {not_ready}"
                )
            _log.info("Waiting for model to be ready: %s", not_ready)
            time.sleep(self._recovery_wait_secs)

    # ---- readiness --------------------------------------------------------------------------------
    def _model_ready(self, sess: Session) -> tuple[bool, str | None]:
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess: Session) -> tuple[bool, str | None]:
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess: Session) -> tuple[bool, str | None]:
        """Runs ``local_init_op`` when the model is ready for it: ``(done, why not)``."""
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_run_options)
        return True, None


def _ready(op: Any, sess: Session, what: str) -> tuple[bool, str | None]:
    """Runs a readiness op: ``(True, None)`` when it reports nothing, else ``(False, names of what is missing)``."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            _log.warning("%s : error [%s]", what, e)
            raise
        return False, str(e)
    # Empty means ready; int32 results are accepted as "ready" for ops predating string reports (as TF does).
    if value is None or np.asarray(value).dtype == np.int32 or np.size(value) == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in np.ravel(value))
    return False, f"Variables not initialized: {names}"


def _maybe_name(obj: Any) -> str:
    if obj is None:
        return "None"
    return getattr(obj, "name", f"<no name for {type(obj)}>")


def _close_quietly(sess: Session) -> None:
    # A session whose tasks are gone cannot be closed cleanly; nothing is left to free in that case.
    try:
        sess.close()
    except (errors.OpError, RuntimeError) as e:
        _log.debug("Ignoring error while closing a session: %s", e)
