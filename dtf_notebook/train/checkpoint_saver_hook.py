"""``tf.train.CheckpointSaverHook``: save checkpoints every N steps or seconds, and ``CheckpointSaverListener``.

The hook saves once right after the session is created (the state at the starting step: 0 for a fresh
model, the restored step after a restart), then whenever its timer fires, and once more at the end if the
last step was not saved yet. Listeners are told before and after every save; one returning True from
``after_save`` stops the training loop.

Example:
    >>> import tempfile
    >>> import dtf_notebook.compat.v1 as tf
    >>> ckpt_dir = tempfile.mkdtemp()
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     train_op = tf.assign_add(step, 1)
    ...     saver_hook = tf.train.CheckpointSaverHook(ckpt_dir, save_steps=2)
    ...     stop_hook = tf.train.StopAtStepHook(last_step=5)
    ...     with tf.train.SingularMonitoredSession(hooks=[saver_hook, stop_hook]) as sess:
    ...         while not sess.should_stop():
    ...             _ = sess.run(train_op)
    >>> tf.train.latest_checkpoint(ckpt_dir).endswith("model.ckpt-5")
    True
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import Any

from dtf_notebook.framework.graph import GraphKeys, get_collection, get_default_graph
from dtf_notebook.summary.messages import SessionLog
from dtf_notebook.summary.writer import FileWriterCache
from dtf_notebook.train import training_util
from dtf_notebook.train.basic_session_run_hooks import SecondOrStepTimer
from dtf_notebook.train.graph_io import write_graph_and_meta_graph
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener"]

_log = logging.getLogger(__name__)


class CheckpointSaverListener:
    """Actions around the saves of a :class:`CheckpointSaverHook`; every method does nothing unless overridden.

    Example:
        >>> class PrintSaves(CheckpointSaverListener):
        ...     def after_save(self, session, global_step_value):
        ...         print("saved step", global_step_value)
        >>> PrintSaves().after_save(None, 10)
        saved step 10
    """

    def begin(self) -> None:
        """Called once from the hook's ``begin`` (the graph may still be changed)."""

    def before_save(self, session: Any, global_step_value: int) -> None:
        """Called right before each save."""

    def after_save(self, session: Any, global_step_value: int) -> bool | None:
        """Called right after each save; returning True asks the training loop to stop."""
        return None

    def end(self, session: Any, global_step_value: int) -> None:
        """Called once at the end of the session, after the last save."""


class CheckpointSaverHook(SessionRunHook):
    """Saves checkpoints of the model into ``checkpoint_dir`` every ``save_steps`` steps or ``save_secs`` seconds.

    Args:
        checkpoint_dir: Directory of the checkpoint files (and of their ``checkpoint`` state file).
        save_secs: Save every this many seconds.
        save_steps: Save every this many global steps.
        saver: The Saver to use (default: the scaffold's, else the one in the ``SAVERS`` collection).
        checkpoint_basename: File prefix; checkpoints are ``<basename>-<global step>``.
        scaffold: A Scaffold whose saver to use.
        listeners: CheckpointSaverListener objects told about every save.
        save_graph_def: Also write ``graph.pbtxt`` and the graph and meta graph events as the session starts, and
            each checkpoint's meta graph (``<checkpoint>.meta``).

    Every save is also logged as a ``SessionLog.CHECKPOINT`` event in ``checkpoint_dir``'s event file,
    for TensorBoard.

    Raises:
        ValueError: neither or both of ``save_steps`` / ``save_secs``, or both ``saver`` and ``scaffold``.

    Example:
        >>> hook = CheckpointSaverHook("/tmp/train_dir", save_steps=100)
        >>> hook.checkpoint_path
        '/tmp/train_dir/model.ckpt'
    """

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: Iterable[CheckpointSaverListener] | None = None,
        save_graph_def: bool = True,
    ) -> None:
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._scaffold = scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def
        self._global_step_tensor: Any = None
        self._summary_writer: Any = None

    @property
    def checkpoint_path(self) -> str:
        """The prefix checkpoints are written under (``checkpoint_dir/checkpoint_basename``)."""
        return self._save_path

    def begin(self) -> None:
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step_tensor = training_util._get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._save_graph_def:
            # As TF: here, not in begin(), so that the graph other hooks completed in their begin() is written.
            graph = getattr(session, "graph", None) or get_default_graph()
            write_graph_and_meta_graph(graph, self._checkpoint_dir, self._summary_writer, self._get_saver())
        # The checkpoint written here holds the state at the starting step (0, or the restored step).
        global_step = int(session.run(self._global_step_tensor))
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        # The fetched step is read before this step's increment (of at least one), so the real step is read
        # only when a save may be due, not on every step.
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + 1):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session: Any, step: int) -> bool:
        """Saves a checkpoint for ``step``; True when a listener asked to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step
        )
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped: %r", listener)
                should_stop = True
        return should_stop

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the collection or provide a "
                "saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to use by "
                "passing it to the constructor."
            )
        self._saver = savers[0]
        return self._saver
