"""The background threads of a chief ``tf.train.Supervisor``: summaries, steps per second, checkpoints on a timer.

Each is a :class:`~dtf_notebook.train.coordinator.LooperThread` of the supervisor's coordinator: it runs once when
started, then every ``save_summaries_secs`` / ``save_model_secs``, stops when the coordinator asks, and reports an
exception to the coordinator (so ``managed_session`` re-raises it when its block ends). As in TF1, nothing is saved
when the supervisor stops: the last checkpoint is the last timer tick's.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> import time
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     sv = tf.train.Supervisor(logdir="memory://sv_services_doc", save_summaries_secs=0)
    ...     with sv.managed_session() as sess:  # the checkpoint thread saves at once, then every 600 s
    ...         while tf.train.latest_checkpoint("memory://sv_services_doc") is None:
    ...             time.sleep(0.01)
    >>> tf.train.latest_checkpoint("memory://sv_services_doc")
    'memory://sv_services_doc/model.ckpt-0'
"""

from __future__ import annotations

import logging
import time
from typing import Any

from dtf_notebook.summary.messages import SessionLog, Summary
from dtf_notebook.train import training_util
from dtf_notebook.train.coordinator import LooperThread

__all__ = ["SVStepCounterThread", "SVSummaryThread", "SVTimerCheckpointThread"]

_log = logging.getLogger(__name__)


class SVSummaryThread(LooperThread):
    """Runs the supervisor's ``summary_op`` every ``save_summaries_secs`` and writes it at the global step.

    Args:
        sv: The supervisor (a chief with a summary writer).
        sess: The session to run the summary op in.
    """

    def __init__(self, sv: Any, sess: Any) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self) -> None:
        if self._sv.global_step is not None:
            summary, step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary, step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", step)
            self._sv.summary_writer.add_summary(summary, step)


class SVStepCounterThread(LooperThread):
    """Writes ``<global step op>/sec``, the global steps per second since the last tick, every ``save_summaries_secs``.

    Args:
        sv: The supervisor.
        sess: The session to read the step counter in.
        step_counter: The step tensor (default the supervisor's global step).
    """

    def __init__(self, sv: Any, sess: Any, step_counter: Any = None) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"
        self._last_time = 0.0
        self._last_step = 0
        self._logged = 0

    def start_loop(self) -> None:
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self) -> None:
        step = training_util.global_step(self._sess, self._step_counter)
        now = time.time()
        elapsed, added = now - self._last_time, step - self._last_step
        self._last_time, self._last_step = now, step
        steps_per_sec = added / elapsed if elapsed > 0 else float("inf")
        if self._sv.summary_writer:
            summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)])
            self._sv.summary_writer.add_summary(summary, step)
        if self._logged < 10:  # TF logs the first ten
            self._logged += 1
            _log.info("%s: %g", self._summary_tag, steps_per_sec)


class SVTimerCheckpointThread(LooperThread):
    """Saves the model to ``sv.save_path`` (at the global step) every ``save_model_secs``.

    Args:
        sv: The supervisor (a chief with a saver and a logdir).
        sess: The session to save from.
    """

    def __init__(self, sv: Any, sess: Any) -> None:
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self) -> None:
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = training_util.global_step(self._sess, self._sv.global_step)
            log = SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path)
            self._sv.summary_writer.add_session_log(log, step)
