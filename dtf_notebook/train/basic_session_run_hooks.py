"""TF1's standard hooks: stop at a step, count steps, log tensors, catch NaN, save summaries, run final ops.

Each hook follows the :class:`~dtf_notebook.train.session_run_hook.SessionRunHook` protocol and
TF1's semantics; a monitored session drives them. Hooks that watch the step read the global step
through a copy made at the start of the step (see ``training_util``), so they see its value before
the step's increment.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     train_op = tf.assign_add(step, 1)
    ...     hook = StopAtStepHook(last_step=3)
    ...     hook.begin()
    ...     with tf.Session() as sess:
    ...         sess.run(step.initializer)
    ...         hook.after_create_session(sess, None)
    ...         ctx = tf.train.SessionRunContext(tf.train.SessionRunArgs(train_op), sess)
    ...         while not ctx.stop_requested:
    ...             extra = hook.before_run(ctx)
    ...             _, stale = sess.run([train_op, extra.fetches])
    ...             hook.after_run(ctx, tf.train.SessionRunValues(stale, None, None))
    ...         print(sess.run(step))
    3
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.summary.messages import SessionLog, Summary
from dtf_notebook.summary.writer import FileWriterCache
from dtf_notebook.train import training_util
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

_log = logging.getLogger(__name__)


# ---- timers -------------------------------------------------------------------------------------
class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one of them).

    Raises:
        ValueError: neither or both of ``every_secs`` and ``every_steps`` are given.

    Example:
        >>> timer = SecondOrStepTimer(every_steps=10)
        >>> timer.should_trigger_for_step(0)
        True
        >>> _ = timer.update_last_triggered_step(0)
        >>> timer.should_trigger_for_step(5), timer.should_trigger_for_step(10)
        (False, True)
    """

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self) -> None:
        """Forgets the last trigger: the next step triggers."""
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        """True when ``step`` is due: the first call, or enough seconds/steps since the last trigger."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        if self._every_steps is not None and step >= self._last_triggered_step + self._every_steps:
            return True
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Records a trigger at ``step``; returns (seconds, steps) since the previous one, or (None, None)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - self._last_triggered_step)
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self) -> int | None:
        """The step of the last trigger, or None."""
        return self._last_triggered_step


class NeverTriggerTimer:
    """A timer that never triggers (LoggingTensorHook logging only at the end).

    Example:
        >>> NeverTriggerTimer().should_trigger_for_step(0)
        False
    """

    def reset(self) -> None:
        pass

    def should_trigger_for_step(self, step: int) -> bool:
        return False

    def update_last_triggered_step(self, step: int) -> tuple[None, None]:
        return (None, None)

    def last_triggered_step(self) -> None:
        return None


def _global_step_read(hook_name: str) -> Any:
    step = training_util._get_or_create_global_step_read()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def _as_graph_element(obj: Any) -> Any:
    """``obj`` (a tensor, op or its name) as an element of the default graph."""
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs (at least 2).")


# ---- hooks --------------------------------------------------------------------------------------
class LoggingTensorHook(SessionRunHook):
    """Logs tensors every N local steps, every N seconds, and/or at the end (``"loss = 0.5, step = 10"``).

    Args:
        tensors: A dict tag → tensor (or name), or a list of tensors/names (tagged by themselves).
        every_n_iter: Log every N calls of ``run`` on this worker.
        every_n_secs: Log at most every N seconds.
        at_end: Also log (fetching the tensors again) when the session ends.
        formatter: ``formatter(dict tag → value) -> str``; default ``"tag = value, ..."``.

    Raises:
        ValueError: neither or both of ``every_n_iter``/``every_n_secs`` (without ``at_end``), or
            ``every_n_iter`` is not positive.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     loss = tf.constant(0.5, name="loss")
        ...     hook = LoggingTensorHook({"loss": loss}, every_n_iter=10)
        ...     hook.begin()
        ...     ctx = tf.train.SessionRunContext(tf.train.SessionRunArgs(None), None)
        ...     hook.before_run(ctx).fetches
        {'loss': <tf.Tensor 'loss:0' shape=() dtype=float32>}
    """

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        else:
            self._tag_order = sorted(tensors.keys())
        self._tensors = tensors
        self._formatter = formatter
        self._timer: Any = (
            NeverTriggerTimer()
            if only_log_at_end
            else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        )
        self._log_at_end = at_end

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values: dict[Any, Any]) -> None:
        elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
        with np.printoptions(suppress=True):
            if self._formatter:
                _log.info(self._formatter(tensor_values))
                return
            stats = ", ".join(f"{tag} = {tensor_values[tag]}" for tag in self._tag_order)
            if elapsed_secs is not None:
                _log.info("%s (%.3f sec)", stats, elapsed_secs)
            else:
                _log.info("%s", stats)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


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


class NanLossDuringTrainingError(RuntimeError):
    """Raised by :class:`NanTensorHook` when the loss is NaN.

    Example:
        >>> str(NanLossDuringTrainingError())
        'NaN loss during training.'
    """

    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (``NanLossDuringTrainingError``) or requests a stop when ``loss_tensor`` is NaN.

    Example:
        >>> NanTensorHook("loss:0", fail_on_nan_loss=False).before_run(None).fetches
        'loss:0'
    """

    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True) -> None:
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error(failure_message)
                raise NanLossDuringTrainingError
            _log.warning(failure_message)
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every N steps or seconds and writes the result (TF1's ``SummarySaverHook``).

    Args:
        save_steps: Save every N global steps.
        save_secs: Save every N seconds (give exactly one of the two).
        output_dir: Where to write (through ``FileWriterCache``) when no ``summary_writer`` is given.
        summary_writer: A ``FileWriter``.
        scaffold: A ``Scaffold`` whose ``summary_op`` to run.
        summary_op: A summary tensor or a list of them (give exactly one of ``scaffold``/``summary_op``).

    Raises:
        ValueError: neither or both of ``scaffold`` and ``summary_op``, or of ``save_steps``/``save_secs``.

    Example:
        >>> SummarySaverHook(save_steps=10, summary_op="merged:0")._get_summary_op()
        ['merged:0']
    """

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ) -> None:
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step: int | None = None
        self._global_step_tensor = _global_step_read("SummarySaverHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests: dict[str, Any] = {"global_step": self._global_step_tensor}
        if self._request_summary:
            summary_op = self._get_summary_op()
            if summary_op is not None:
                requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if not self._summary_writer:
            return
        global_step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            global_step = run_context.session.run(self._global_step_tensor)
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session: Any = None) -> None:
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self) -> list[Any] | None:
        summary_op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]


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


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` when the session ends; their values are in :attr:`final_ops_values`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     hook = FinalOpsHook(tf.constant(7))
        ...     with tf.Session() as sess:
        ...         hook.end(sess)
        >>> hook.final_ops_values
        np.int32(7)
    """

    def __init__(self, final_ops: Any, final_ops_feed_dict: dict | None = None) -> None:
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values: Any = None

    @property
    def final_ops_values(self) -> Any:
        """What ``final_ops`` evaluated to at the end (None before)."""
        return self._final_ops_values

    def end(self, session: Any) -> None:
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            _log.warning(
                "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. This "
                "typically means the Ops running by the FinalOpsHook have a dependency back to some input "
                "source, which should not happen: final ops should only read variables."
            )
            raise


class FeedFnHook(SessionRunHook):
    """Feeds ``feed_fn()`` (a feed dict) into every ``run``.

    Example:
        >>> FeedFnHook(lambda: {"x:0": 1.0}).before_run(None).feed_dict
        {'x:0': 1.0}
    """

    def __init__(self, feed_fn: Callable[[], dict]) -> None:
        self.feed_fn = feed_fn

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


__all__ = [
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]
