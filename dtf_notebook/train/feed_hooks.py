"""Hooks that add to runs without watching the step: feed every run, or run final ops at the end.

Example:
    >>> FinalOpsHook(None).final_ops_values is None
    True
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook

# All standard hooks log under one name, that of the module exporting them (TF1's module name), so a
# single logger configuration (level, filters) covers every one of them.
_log = logging.getLogger("dtf_notebook.train.basic_session_run_hooks")


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


__all__ = ["FeedFnHook", "FinalOpsHook"]
