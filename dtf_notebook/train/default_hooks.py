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
    """Makes every later ``MonitoredTrainingSession`` add ``factory(hooks)`` (unless None); added once.

    Example:
        >>> from dtf_notebook.train.session_run_hook import SessionRunHook
        >>> factory = lambda hooks: None if hooks else SessionRunHook()
        >>> add_default_hook_factory(factory); add_default_hook_factory(factory)  # added once
        >>> len(default_hooks([])), default_hooks(["given"])
        (1, [])
        >>> remove_default_hook_factory(factory)
    """
    with _lock:
        if factory not in _factories:
            _factories.append(factory)


def remove_default_hook_factory(factory: HookFactory) -> None:
    """Undoes :func:`add_default_hook_factory` (a no-op for a factory that was not added).

    Example:
        >>> factory = lambda hooks: "extra"
        >>> add_default_hook_factory(factory); remove_default_hook_factory(factory)
        >>> remove_default_hook_factory(factory)  # not added any more: nothing to do
        >>> default_hooks([])
        []
    """
    with _lock:
        if factory in _factories:
            _factories.remove(factory)


def default_hooks(hooks: Sequence[Any]) -> list[Any]:
    """The extra hooks for a session given ``hooks``, in the order their factories were added.

    Example:
        >>> first, second = (lambda hooks: "first"), (lambda hooks: "second")
        >>> add_default_hook_factory(first); add_default_hook_factory(second)
        >>> default_hooks([])
        ['first', 'second']
        >>> remove_default_hook_factory(first); remove_default_hook_factory(second)
    """
    with _lock:
        factories = list(_factories)
    made = (factory(hooks) for factory in factories)
    return [hook for hook in made if hook is not None]
