"""``tf.contrib.learn.Experiment``: an Estimator with its training and evaluation inputs, and the schedules a task
runs (``train``, ``evaluate``, ``train_and_evaluate``, ``continuous_eval``, ``run_std_server``, ``test``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> est = tf.estimator.Estimator(lambda features: None)
    >>> exp = Experiment(est, train_input_fn=lambda: None, eval_input_fn=lambda: None, train_steps=10)
    >>> exp.train_steps, exp.eval_steps
    (10, 100)
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from typing import Any

from dtf_notebook.distributed.server import Server
from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.estimator.exporter import export_path
from dtf_notebook.estimator.learn.export_strategy import ExportStrategy
from dtf_notebook.estimator.learn.run_config import Environment, RunConfig
from dtf_notebook.platform import tf_logging as logging
from dtf_notebook.train.step_hooks import GlobalStepWaiterHook

__all__ = ["Experiment"]


class Experiment:
    """What to train and evaluate, and how a task of a cluster takes part (``tf.contrib.learn.Experiment``).

    Args:
        estimator: The Estimator (a ``tf.estimator.Estimator`` or canned one).
        train_input_fn, eval_input_fn: The input functions.
        eval_metrics: Must be None (put metrics in the EstimatorSpec's ``eval_metric_ops``).
        train_steps: Train until this global step (None: until the input ends).
        eval_steps: Batches per evaluation (None: the whole input).
        train_monitors, eval_hooks: SessionRunHooks for training and evaluation.
        eval_delay_secs: Wait before the first evaluation.
        continuous_eval_throttle_secs: Least time between two continuous evaluations.
        delay_workers_by_global_step: Workers wait for global steps instead of seconds.
        saving_listeners: CheckpointSaverListeners of training.

    Raises:
        ValueError: ``eval_metrics`` given, an export strategy that is not an ``ExportStrategy``, or
            ``checkpoint_and_export``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> Experiment(tf.estimator.Estimator(lambda features: None), lambda: None, lambda: None, eval_metrics={})
        Traceback (most recent call last):
        ValueError: `eval_metrics` must be `None` with `tf.estimator.Estimator`. Use `eval_metric_ops` in ...instead.
    """

    def __init__(
        self,
        estimator: Estimator,
        train_input_fn: Callable[..., Any],
        eval_input_fn: Callable[..., Any],
        eval_metrics: Any = None,
        train_steps: int | None = None,
        eval_steps: int | None = 100,
        train_monitors: Any = None,
        eval_hooks: Any = None,
        local_eval_frequency: Any = None,
        eval_delay_secs: float = 120,
        continuous_eval_throttle_secs: float = 60,
        min_eval_frequency: Any = None,
        delay_workers_by_global_step: bool = False,
        export_strategies: Any = None,
        train_steps_per_iteration: Any = None,
        checkpoint_and_export: bool = False,
        saving_listeners: Any = None,
        check_interval_secs: float = 5,
    ) -> None:
        if not isinstance(estimator, Estimator):
            raise ValueError(f"`estimator` must be a tf.estimator.Estimator, given {type(estimator)}")
        if eval_metrics is not None:
            raise ValueError(
                "`eval_metrics` must be `None` with `tf.estimator.Estimator`. Use `eval_metric_ops` in "
                "`tf.estimator.EstimatorSpec` instead."
            )
        if checkpoint_and_export:
            raise ValueError("checkpoint_and_export=True (export after each checkpoint) is not supported here.")
        if isinstance(export_strategies, ExportStrategy):
            export_strategies = [export_strategies]
        for strategy in export_strategies or ():
            if not isinstance(strategy, ExportStrategy):
                raise ValueError(f"`export_strategies` must be an ExportStrategy, an iterable of ExportStrategy, or "
                                 f"`None`, found {strategy}.")  # fmt: skip
        self._export_strategies = tuple(export_strategies or ())
        self._estimator = estimator
        self._train_input_fn = train_input_fn
        self._eval_input_fn = eval_input_fn
        self._train_steps = train_steps
        self._eval_steps = eval_steps
        self._train_monitors = list(train_monitors or [])
        self._eval_hooks = list(eval_hooks or [])
        self._eval_delay_secs = eval_delay_secs
        self._continuous_eval_throttle_secs = continuous_eval_throttle_secs
        self._delay_workers_by_global_step = delay_workers_by_global_step
        self._saving_listeners = list(saving_listeners or [])

    estimator = property(lambda self: self._estimator, doc="The Estimator.")
    eval_metrics = property(lambda self: None, doc="Always None with a core Estimator.")
    train_steps = property(lambda self: self._train_steps, doc="The last global step of training.")
    eval_steps = property(lambda self: self._eval_steps, doc="Batches per evaluation.")

    def extend_train_hooks(self, additional_hooks: Any) -> None:
        """Adds training hooks."""
        self._train_monitors.extend(additional_hooks)

    # ---- schedules ----------------------------------------------------------------------------------------
    def _start_server(self) -> Server:
        config = self._estimator.config
        if not config.cluster_spec.jobs or not config.task_type or not config.master or config.task_id is None:
            raise ValueError(
                "Could not start server; be sure to specify cluster_spec, task_type, master, and task in RunConfig or "
                "set the TF_CONFIG environment variable."
            )
        server = Server(config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
                        config=config.session_config, start=False)  # fmt: skip
        server.start()
        return server

    def train(self, delay_secs: float | None = None) -> Estimator:
        """Trains to ``train_steps`` (starting this task's server first in the cloud environment).

        A worker waits ``min(60, 5 * task index)`` seconds first (or for global steps with
        ``delay_workers_by_global_step``), unless ``delay_secs`` says otherwise.
        """
        start = time.time()
        config = self._estimator.config
        server = None
        if isinstance(config, RunConfig):
            if config.cluster_spec.jobs and config.master and config.environment == Environment.LOCAL:
                logging.warning(
                    "ClusterSpec and master are provided, but environment is set to 'local'. Set environment to "
                    "'cloud' if you intend to use the distributed runtime."
                )
            if config.environment not in (Environment.LOCAL, Environment.GOOGLE) and config.cluster_spec.jobs:
                server = self._start_server()
        elif config.cluster_spec.jobs and config.master:
            raise ValueError(
                "For distributed runtime, Experiment class only works with tf.contrib.learn.RunConfig for now, but "
                f"provided {type(config)}"
            )
        hooks: list = []
        if delay_secs is None:
            task_id = config.task_id or 0
            if self._delay_workers_by_global_step:
                hooks.append(GlobalStepWaiterHook(int(8000.0 * math.log(task_id + 1))))
                delay_secs = 0
            else:
                delay_secs = min(60, task_id * 5)
        if delay_secs > 0:
            logging.info("Waiting %d secs before starting training.", delay_secs - (time.time() - start))
            time.sleep(delay_secs)
        try:
            return self._estimator.train(
                input_fn=self._train_input_fn,
                max_steps=self._train_steps,
                hooks=self._train_monitors + hooks,
                saving_listeners=self._saving_listeners,
            )
        finally:
            if server is not None:
                server.stop()

    def evaluate(self, delay_secs: float | None = None, name: str | None = None) -> dict[str, Any]:
        """Evaluates the latest checkpoint once (after ``eval_delay_secs`` by default), into ``eval_one_pass``."""
        delay_secs = self._eval_delay_secs if delay_secs is None else delay_secs
        if delay_secs:
            logging.info("Waiting %d secs before starting eval.", delay_secs)
            time.sleep(delay_secs)
        return self._estimator.evaluate(
            input_fn=self._eval_input_fn, steps=self._eval_steps, name=name or "one_pass", hooks=self._eval_hooks
        )

    def continuous_eval(
        self,
        delay_secs: float | None = None,
        throttle_delay_secs: float | None = None,
        evaluate_checkpoint_only_once: bool = True,
        continuous_eval_predicate_fn: Callable[..., bool] | None = None,
        name: str = "",
    ) -> None:
        """Evaluates each new checkpoint, at most every ``throttle_delay_secs``, while the predicate holds."""
        delay_secs = self._eval_delay_secs if delay_secs is None else delay_secs
        throttle = self._continuous_eval_throttle_secs if throttle_delay_secs is None else throttle_delay_secs
        if delay_secs:
            logging.info("Waiting %f secs before starting eval.", delay_secs)
            time.sleep(delay_secs)
        eval_name = "continuous" if not name else f"continuous_{name}"
        previous, result = None, None
        while _keep_going(continuous_eval_predicate_fn, result, previous):
            start = time.time()
            path = self._estimator.latest_checkpoint()
            if path is None:
                logging.warning("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
            elif evaluate_checkpoint_only_once and path == previous:
                logging.info("Skipping evaluation due to same checkpoint %s for step.", path)
            else:
                result = self._estimator.evaluate(
                    input_fn=self._eval_input_fn, steps=self._eval_steps, name=eval_name,
                    checkpoint_path=path, hooks=self._eval_hooks,
                )  # fmt: skip
                self._maybe_export(result, path)
                previous = path
            left = throttle - (time.time() - start)
            if left > 0:
                logging.info("Waiting %f secs before starting next eval run.", left)
                time.sleep(left)

    def train_and_evaluate(self) -> tuple[dict[str, Any], list]:
        """Trains, then evaluates the final checkpoint into ``eval`` and exports it by each export strategy;
        returns ``(eval_result, export_results)``."""
        self.train(delay_secs=0)
        result = self._estimator.evaluate(
            input_fn=self._eval_input_fn, steps=self._eval_steps, name=None, hooks=self._eval_hooks
        )
        return result, self._maybe_export(result)

    def _maybe_export(self, eval_result: Any, checkpoint_path: str | None = None) -> list:
        """Each export strategy's export after an evaluation, into ``<model_dir>/export/<strategy name>``."""
        return [
            strategy.export(self._estimator, export_path(self._estimator, strategy.name), checkpoint_path, eval_result)
            for strategy in self._export_strategies
        ]

    def run_std_server(self) -> None:
        """Starts this task's server and serves until the process is stopped (the ps schedule)."""
        self._start_server().join()

    def test(self) -> dict[str, Any]:
        """One training run and a one-batch evaluation, to check the experiment builds."""
        self.train(delay_secs=0)
        return self._estimator.evaluate(input_fn=self._eval_input_fn, steps=1, name="one_pass")


def _keep_going(predicate: Callable[..., bool] | None, result: Any, checkpoint: str | None) -> bool:
    if predicate is None:
        return True
    if "checkpoint_path" in inspect.signature(predicate).parameters:
        return predicate(result, checkpoint_path=checkpoint)
    return predicate(result)
