"""Hooks that look at tensor values: log them every N steps or seconds, and stop or fail on a NaN loss.

Example:
    >>> NanTensorHook("loss:0").before_run(None).fetches
    'loss:0'
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.train.hook_timers import NeverTriggerTimer, SecondOrStepTimer
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

# All standard hooks log under one name, that of the module exporting them (TF1's module name), so a
# single logger configuration (level, filters) covers every one of them.
_log = logging.getLogger("dtf_notebook.train.basic_session_run_hooks")


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


__all__ = ["LoggingTensorHook", "NanLossDuringTrainingError", "NanTensorHook"]
