"""Timers that decide when a hook fires (every N seconds or steps), and the global-step read hooks watch.

Example:
    >>> timer = SecondOrStepTimer(every_secs=60)
    >>> timer.should_trigger_for_step(0), timer.update_last_triggered_step(0)
    (True, (None, None))
"""

from __future__ import annotations

import time
from typing import Any

from dtf_notebook.train import training_util


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


__all__ = ["NeverTriggerTimer", "SecondOrStepTimer"]
