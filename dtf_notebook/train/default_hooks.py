"""Hooks that every ``MonitoredTrainingSession`` adds on top of the ones it is given, when something asks.

Nothing is registered by default, so scripts behave exactly like TF1. An environment may opt in,
e.g. a notebook that shows a progress bar for each training loop
(``dtf_notebook.notebook.progress.enable_progress_bars``). A factory is called with the hooks
the session was given and returns one more hook, or None to add nothing.

Example:
    >>> from dtf_notebook.train.session_run_hook import SessionRunHook
    >>> factory = lambda hooks: SessionRunHook()
    >>> add_default_hook_factory(factory)
    >>> len(default_hooks([]))
    1
    >>> remove_default_hook_factory(factory); default_hooks([])
    []
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["add_default_hook_factory", "default_hooks", "remove_default_hook_factory"]

HookFactory = Callable[[Sequence[Any]], Any]

_factories: list[HookFactory] = []
_lock = threading.Lock()


def add_default_hook_factory(factory: HookFactory) -> None:
    """Makes every later ``MonitoredTrainingSession`` add ``factory(hooks)`` (unless None); added once."""
    with _lock:
        if factory not in _factories:
            _factories.append(factory)


def remove_default_hook_factory(factory: HookFactory) -> None:
    """Undoes :func:`add_default_hook_factory` (a no-op for a factory that was not added)."""
    with _lock:
        if factory in _factories:
            _factories.remove(factory)


def default_hooks(hooks: Sequence[Any]) -> list[Any]:
    """The extra hooks for a session given ``hooks``, in the order their factories were added."""
    with _lock:
        factories = list(_factories)
    made = (factory(hooks) for factory in factories)
    return [hook for hook in made if hook is not None]
