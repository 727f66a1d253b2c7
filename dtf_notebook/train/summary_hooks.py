"""The hook that runs the summary op every N steps or seconds and writes what it returns.

Example:
    >>> SummarySaverHook(save_secs=30, summary_op=["a:0", "b:0"])._get_summary_op()
    ['a:0', 'b:0']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.summary.messages import SessionLog
from dtf_notebook.summary.writer import FileWriterCache
from dtf_notebook.train.hook_timers import SecondOrStepTimer, _global_step_read
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues


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


__all__ = ["SummarySaverHook"]
