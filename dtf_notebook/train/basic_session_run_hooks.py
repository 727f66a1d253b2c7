"""TF1's standard hooks: stop at a step, count steps, log tensors, catch NaN, save summaries, run final ops.

Each hook follows the :class:`~dtf_notebook.train.session_run_hook.SessionRunHook` protocol and
TF1's semantics; a monitored session drives them. Hooks that watch the step read the global step
through a copy made at the start of the step (see ``training_util``), so they see its value before
the step's increment.

The hooks live in modules of one kind each (``hook_timers``, ``step_hooks``, ``logging_hooks``,
``summary_hooks``, ``feed_hooks``); this module gathers them under TF1's name.

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

# Kept so that ``basic_session_run_hooks.time`` is the ``time`` module whose ``time()`` the timers read:
# patching ``basic_session_run_hooks.time.time`` moves their clock.
import time  # noqa: F401

from dtf_notebook.train.feed_hooks import FeedFnHook, FinalOpsHook
from dtf_notebook.train.hook_timers import NeverTriggerTimer as NeverTriggerTimer
from dtf_notebook.train.hook_timers import SecondOrStepTimer
from dtf_notebook.train.logging_hooks import LoggingTensorHook, NanLossDuringTrainingError, NanTensorHook
from dtf_notebook.train.step_hooks import GlobalStepWaiterHook, StepCounterHook, StopAtStepHook
from dtf_notebook.train.summary_hooks import SummarySaverHook

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
