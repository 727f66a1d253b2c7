"""Hooks that watch the global step: stop at a step, count steps per second, wait for a step to start.

Example:
    >>> StopAtStepHook(last_step=10)._last_step
    10
"""

from __future__ import annotations

import logging
import time
from typing import Any

from dtf_notebook.summary.messages import Summary
from dtf_notebook.summary.writer import FileWriterCache
from dtf_notebook.train import training_util
from dtf_notebook.train.hook_timers import SecondOrStepTimer, _global_step_read
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

# All standard hooks log under one name, that of the module exporting them (TF1's module name), so a
# single logger configuration (level, filters) covers every one of them.
_log = logging.getLogger("dtf_notebook.train.basic_session_run_hooks")


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step`` (or ``num_steps`` past its start value).

    Raises:
        ValueError: neither or both of ``num_steps`` and ``last_step`` are given.
        RuntimeError: (in ``begin``) the graph has no global step.

    Example:
        >>> StopAtStepHook(num_steps=100)._num_steps
        100
    """

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step_tensor = _global_step_read("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            self._last_step = session.run(self._global_step_tensor) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        # The fetched value is the step before this run's increment; read again only when it may be done.
        if run_values.results + 1 >= self._last_step:
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class StepCounterHook(SessionRunHook):
    """Logs and records global steps per second (summary tag ``global_step/sec``).

    Args:
        every_n_steps: Measure every N global steps.
        every_n_secs: Measure every N seconds (give exactly one of the two).
        output_dir: Where to write the summary (through ``FileWriterCache``) when no writer is given.
        summary_writer: A ``FileWriter`` to write to.

    Raises:
        ValueError: neither or both of ``every_n_steps`` and ``every_n_secs`` are given.

    Example:
        >>> StepCounterHook(every_n_steps=None, every_n_secs=5)._timer.should_trigger_for_step(0)
        True
    """

    def __init__(
        self,
        every_n_steps: int | None = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step: int | None = None
        self._steps_per_run = 1
        self._stalled_warnings = 0

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step_tensor = _global_step_read("StepCounterHook")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps: int, elapsed_time: float, global_step: int) -> None:
        steps_per_sec = elapsed_steps / elapsed_time if elapsed_time > 0 else float("inf")
        if self._summary_writer is not None:
            summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step and self._stalled_warnings < 5:
            self._stalled_warnings += 1
            _log.warning(
                "It seems that global step (tf.train.get_global_step) has not been increased. Current value "
                "(could be stable): %s vs previous value: %s. You could increase the global step by passing "
                "tf.train.get_global_step() to Optimizer.apply_gradients or Optimizer.minimize.",
                stale_global_step,
                self._last_global_step,
            )
        self._last_global_step = stale_global_step


class GlobalStepWaiterHook(SessionRunHook):
    """Holds back the first ``run`` until the global step reaches ``wait_until_step`` (staggered workers).

    Example:
        >>> GlobalStepWaiterHook(wait_until_step=0)._wait_until_step
        0
    """

    def __init__(self, wait_until_step: int) -> None:
        self._wait_until_step = wait_until_step

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step_tensor = _global_step_read("_GlobalStepWaiterHook")

    def before_run(self, run_context: SessionRunContext) -> None:
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = run_context.session.run(self._global_step_tensor)
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                _log.info(
                    "Waiting for global step %d before starting training. Current step is %d.",
                    self._wait_until_step,
                    current_step,
                )
                last_logged_step = current_step
            time.sleep(0.5)


__all__ = ["GlobalStepWaiterHook", "StepCounterHook", "StopAtStepHook"]
