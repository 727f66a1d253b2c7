"""A training progress bar: ``ProgressBarHook`` for monitored sessions, shown by default where someone watches.

The hook draws a tqdm bar of the global step, with tqdm's steps per second and the latest loss (by
default the loss the graph's optimizer minimizes: see :func:`~dtf_notebook.train.loss_tracking.training_loss`).
In a terminal it is tqdm's text bar. In a Jupyter kernel it is the bar the notebook layer registered with
:func:`~dtf_notebook.frontend.register_kernel_progress_bar` (``import dtf_notebook`` registers
:func:`dtf_notebook.notebook.progress_bar.progress_bar`: tqdm's widget, whose output also keeps a static
copy, so a saved notebook shows the final "400/400"); with none registered, ``tqdm.auto``'s. The bar is
closed when the session closes, also after an error or an interrupt (when TF1 calls no hook's ``end``).
Every ``MonitoredTrainingSession`` adds one by itself (unless it was given one) when, at the moment it is
created:

* :func:`enable_progress_bars` said so (``enable_progress_bars()`` always, ``enable_progress_bars(False)``
  never; ``enable_progress_bars(None)`` goes back to the rules below);
* else the environment variable ``DTF_PROGRESS_BARS`` says so (``1``/``on`` always, ``0``/``off`` never);
* else it runs in a Jupyter kernel (a widget bar), or its standard error is a terminal (a text bar).

So a script whose output is piped or captured prints exactly what it prints under TF1.

Example:
    >>> import io
    >>> import dtf_notebook.compat.v1 as tf
    >>> out = io.StringIO()
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     loss = tf.cast(10 - step, tf.float32, name="loss")
    ...     train_op = tf.assign_add(step, 1)
    ...     hooks = [tf.train.StopAtStepHook(last_step=4), ProgressBarHook(total_steps=4, loss=loss, file=out)]
    ...     with tf.train.MonitoredTrainingSession(hooks=hooks) as sess:
    ...         while not sess.should_stop():
    ...             _ = sess.run(train_op)
    >>> "4/4" in out.getvalue(), "loss=7" in out.getvalue()
    (True, True)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.frontend import jupyter_kernel, kernel_progress_bar, register_kernel_progress_bar
from dtf_notebook.train import training_util
from dtf_notebook.train.basic_session_run_hooks import StopAtStepHook
from dtf_notebook.train.loss_tracking import training_loss
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

__all__ = [
    "ProgressBarHook",
    "default_progress_hook",
    "disable_progress_bars",
    "enable_progress_bars",
    "progress_bars_wanted",
    "register_kernel_progress_bar",
]


class ProgressBarHook(SessionRunHook):
    """Shows training progress as a tqdm bar: global step, steps per second, loss.

    Args:
        total_steps: The step the bar fills at (None: an open-ended counter).
        loss: A tensor (or its name) shown beside the bar; None takes the one loss the graph's optimizers
            minimize, else the graph's only ``LOSSES`` collection member, else shows none (several different
            losses minimized, e.g. a GAN's: pass the one to show).
        every_n_steps: Update the bar (and fetch the loss) every this many runs.
        desc: Text before the bar.
        bar_factory: Makes the bar from tqdm's keyword arguments (default: the registered kernel bar in a
            Jupyter kernel, else ``tqdm.auto.tqdm``).
        **tqdm_kwargs: Passed to the bar (e.g. ``file=``, ``leave=``, ``mininterval=``).

    Raises:
        ValueError: ``every_n_steps`` is not positive.

    Example:
        >>> ProgressBarHook(total_steps=100, every_n_steps=10).total_steps
        100
    """

    def __init__(
        self,
        total_steps: int | None = None,
        loss: Any = None,
        every_n_steps: int = 1,
        desc: str = "training",
        bar_factory: Callable[..., Any] | None = None,
        **tqdm_kwargs: Any,
    ) -> None:
        if every_n_steps < 1:
            raise ValueError(f"every_n_steps must be a positive number of steps, got {every_n_steps!r}")
        self.total_steps, self.every_n_steps, self.desc = total_steps, every_n_steps, desc
        self._loss_arg, self._factory, self._kwargs = loss, bar_factory, tqdm_kwargs
        self._stop_hook: StopAtStepHook | None = None
        self.bar: Any = None

    def _follow(self, stop_hook: StopAtStepHook) -> None:
        """Takes the bar's length from ``stop_hook`` once the session knows it (its last step)."""
        self._stop_hook = stop_hook

    def begin(self) -> None:
        graph = get_default_graph()
        self._global_step = training_util.get_global_step(graph)
        loss = self._loss_arg
        if loss is None:
            loss = training_loss(graph)
        self._loss = None if loss is None else graph.as_graph_element(loss, allow_tensor=True, allow_operation=False)
        self._runs = 0
        self.bar = None  # begin() starts each MonitoredSession; only its re-created sessions share one bar

    def after_create_session(self, session: Any, coord: Any) -> None:
        self._position = int(session.run(self._global_step)) if self._global_step is not None else 0
        total = self.total_steps
        if total is None and self._stop_hook is not None:
            # StopAtStepHook resolves num_steps into its last step in its own after_create_session, which ran
            # before this one (it comes earlier in the hook list).
            total = self._stop_hook._last_step
        if self.bar is not None:  # a session re-created after a task failed: the same bar goes on, from there
            self.bar.n = self._position
            self.bar.refresh()
            return
        factory = self._factory
        if factory is None and jupyter_kernel():
            factory = kernel_progress_bar()
        if factory is None:
            from tqdm.auto import tqdm as factory
        self.bar = factory(total=total, initial=self._position, desc=self.desc, unit="step", **self._kwargs)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._runs += 1
        if self._runs % self.every_n_steps:
            return None
        fetches = {}
        if self._global_step is not None:
            fetches["step"] = self._global_step
        if self._loss is not None:
            fetches["loss"] = self._loss
        return SessionRunArgs(fetches)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        results = run_values.results
        if results is None or self.bar is None:
            return
        # Fetching the variable itself (not its read snapshot) gives its value once the run is over; without a
        # global step, every run counts as a step.
        position = int(results["step"]) if "step" in results else self._position + self.every_n_steps
        if "loss" in results:
            self.bar.set_postfix(loss=f"{float(results['loss']):.4g}", refresh=False)
        self.bar.update(max(0, position - self._position))
        self._position = max(position, self._position)

    def end(self, session: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the bar, leaving its last state shown; the session calls it when it closes after an error.

        Example:
            >>> ProgressBarHook().close()  # no bar yet: nothing to do
        """
        if self.bar is not None:
            self.bar.close()


_ENV = "DTF_PROGRESS_BARS"
_ON, _OFF = ("1", "on", "true", "yes"), ("0", "off", "false", "no")
_choice: bool | None = None  # what enable_progress_bars said last (None: the rules)
_options: dict[str, Any] = {}


def progress_bars_wanted() -> bool:
    """Whether a ``MonitoredTrainingSession`` created now adds a progress bar (see the module's rules).

    Raises:
        ValueError: ``DTF_PROGRESS_BARS`` holds something other than 1/on/true/yes, 0/off/false/no or nothing.

    Example:
        >>> enable_progress_bars(False); progress_bars_wanted()
        False
        >>> enable_progress_bars(None)  # back to the rules: here no kernel, no terminal (doctest output)
    """
    if _choice is not None:
        return _choice
    setting = os.environ.get(_ENV, "").strip().lower()  # read now: a notebook may set it after importing us
    if setting in _ON:
        return True
    if setting in _OFF:
        return False
    if setting not in ("", "auto"):
        raise ValueError(f"{_ENV} must be 1/on (always a progress bar), 0/off (never) or auto, not {setting!r}")
    if jupyter_kernel():
        return True
    stderr = sys.stderr
    return stderr is not None and hasattr(stderr, "isatty") and stderr.isatty()


def default_progress_hook(hooks: Sequence[Any]) -> ProgressBarHook | None:
    """The progress bar a ``MonitoredTrainingSession`` given ``hooks`` adds by itself, or None: when it was
    given one already, or :func:`progress_bars_wanted` says no. Sized by its StopAtStepHook, if it has one.

    Example:
        >>> enable_progress_bars(every_n_steps=5)
        >>> default_progress_hook([]).every_n_steps, default_progress_hook([ProgressBarHook()])
        (5, None)
        >>> enable_progress_bars(None)
    """
    if any(isinstance(h, ProgressBarHook) for h in hooks) or not progress_bars_wanted():
        return None
    hook = ProgressBarHook(**_options)
    stop = next((h for h in hooks if isinstance(h, StopAtStepHook)), None)
    if stop is not None and hook.total_steps is None:
        hook._follow(stop)
    return hook


def enable_progress_bars(enabled: bool | None = True, every_n_steps: int = 1, **tqdm_kwargs: Any) -> None:
    """Decides whether every later ``MonitoredTrainingSession`` shows a :class:`ProgressBarHook`.

    Args:
        enabled: True: always (even when the output is piped); False: never; None: by the module's rules
            (the environment variable, a Jupyter kernel, a terminal).
        every_n_steps, **tqdm_kwargs: How the bars are made (see :class:`ProgressBarHook`).

    Example:
        >>> enable_progress_bars(); progress_bars_wanted()
        True
        >>> enable_progress_bars(None)
    """
    global _choice, _options
    if every_n_steps < 1:
        raise ValueError(f"every_n_steps must be a positive number of steps, got {every_n_steps!r}")
    _choice, _options = enabled, {"every_n_steps": every_n_steps, **tqdm_kwargs}


def disable_progress_bars() -> None:
    """No progress bar unless a session is given one: ``enable_progress_bars(False)``.

    Example:
        >>> disable_progress_bars(); default_progress_hook([]) is None
        True
        >>> enable_progress_bars(None)
    """
    enable_progress_bars(False)
