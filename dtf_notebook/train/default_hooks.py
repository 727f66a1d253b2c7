"""Hooks that every ``MonitoredTrainingSession`` adds on top of the ones it is given.

One is built in: a progress bar where someone watches (a Jupyter kernel, or a terminal on standard
error), decided when each session is created by
:func:`dtf_notebook.train.progress_hook.default_progress_hook`; a script whose output is piped or
captured gets none, so it behaves exactly like TF1. Others may be registered: a factory is called
with the hooks the session was given and returns one more hook, or None to add nothing.

Example:
    >>> from dtf_notebook.train.session_run_hook import SessionRunHook
    >>> factory = lambda hooks: SessionRunHook()
    >>> add_default_hook_factory(factory)
    >>> len(default_hooks([], automatic=False))
    1
    >>> remove_default_hook_factory(factory); default_hooks([], automatic=False)
    []
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.train.progress_hook import default_progress_hook

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
        >>> len(default_hooks([], automatic=False)), default_hooks(["given"], automatic=False)
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
        >>> default_hooks([], automatic=False)
        []
    """
    with _lock:
        if factory in _factories:
            _factories.remove(factory)


def default_hooks(hooks: Sequence[Any], automatic: bool = True) -> list[Any]:
    """The extra hooks for a session given ``hooks``: those of the registered factories, in the order they
    were added, then (with ``automatic``) the built-in progress bar when one is wanted now.

    Example:
        >>> first, second = (lambda hooks: "first"), (lambda hooks: "second")
        >>> add_default_hook_factory(first); add_default_hook_factory(second)
        >>> default_hooks([], automatic=False)
        ['first', 'second']
        >>> remove_default_hook_factory(first); remove_default_hook_factory(second)
    """
    with _lock:
        factories = list(_factories)
    made = [factory(hooks) for factory in factories]
    if automatic:
        made.append(default_progress_hook([*hooks, *made]))  # no second bar beside a factory's
    return [hook for hook in made if hook is not None]
