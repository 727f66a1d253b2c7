"""``tf.contrib.learn.learn_runner.run``: builds an Experiment and runs the schedule this task's role calls for.

Without a cluster the schedule is ``train_and_evaluate``; on one, the ``master`` trains and evaluates, a ``worker``
trains and a ``ps`` runs its server, unless ``schedule`` names another Experiment method.

Example:
    >>> run(lambda output_dir: None)
    Traceback (most recent call last):
    ValueError: Must specify either output_dir or run_config
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["run"]


def _default_schedule(config: Any) -> str:
    if not config or len(config.cluster_spec.jobs) == 0:
        return "train_and_evaluate"
    if not config.task_type:
        raise ValueError("Must specify a schedule")
    schedules = {"master": "train_and_evaluate", "chief": "train", "ps": "run_std_server", "worker": "train"}
    if config.task_type not in schedules:
        raise ValueError(f"No default schedule for task type: {config.task_type}")
    return schedules[config.task_type]


def _execute_schedule(experiment: Any, schedule: str) -> Any:
    if not hasattr(experiment, schedule):
        raise ValueError(f"Schedule references non-existent task {schedule}")
    task = getattr(experiment, schedule)
    if not callable(task):
        raise TypeError(f"Schedule references non-callable member {schedule}")
    return task()


def run(
    experiment_fn: Callable[..., Any],
    output_dir: str | None = None,
    schedule: str | None = None,
    run_config: Any = None,
    hparams: Any = None,
) -> Any:
    """Builds ``experiment_fn(output_dir=...)`` (or ``experiment_fn(run_config=..., hparams=...)``) and runs the
    schedule (the named Experiment method, or the task's default); returns what the schedule returns.

    Raises:
        ValueError: both or neither of ``output_dir`` and ``run_config``, ``hparams`` without ``run_config``, or
            a schedule the Experiment lacks.
        TypeError: ``experiment_fn`` is not callable.

    Example:
        >>> run(None, output_dir="/tmp/x")
        Traceback (most recent call last):
        TypeError: Experiment builder "None" is not callable.
    """
    if output_dir is not None and run_config is not None:
        raise ValueError("Cannot provide both output_dir and run_config")
    if output_dir is None and run_config is None:
        raise ValueError("Must specify either output_dir or run_config")
    if not callable(experiment_fn):
        raise TypeError(f'Experiment builder "{experiment_fn}" is not callable.')
    if run_config is not None:
        experiment = experiment_fn(run_config=run_config, hparams=hparams)
    else:
        if hparams is not None:
            raise ValueError("Must set run_config with hparams.")
        experiment = experiment_fn(output_dir=output_dir)
    if not schedule:
        schedule = _default_schedule(experiment.estimator.config)
    return _execute_schedule(experiment, schedule)
