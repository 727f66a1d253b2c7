"""``tf.estimator.train_and_evaluate`` with ``TrainSpec`` and ``EvalSpec``: one program, started once per task.

Without a cluster in ``TF_CONFIG`` it trains and evaluates after each checkpoint, in this process. With one,
each task does its part, as TF's ``_TrainingExecutor`` does: a ``ps`` task starts its server and joins it; the
``chief`` and each ``worker`` start their server and train (between-graph replication: variables on the ps
tasks, the chief initialising and checkpointing, workers waiting for it and starting a few seconds apart);
the ``evaluator`` starts no server and evaluates each new checkpoint in ``model_dir``, at most every
``throttle_secs``, until the global step reaches ``TrainSpec.max_steps``. After each evaluation the ``EvalSpec``'s
exporters run (the last one told it is final).

Example:
    >>> spec = TrainSpec(input_fn=lambda: None, max_steps=100)
    >>> EvalSpec(input_fn=lambda: None, steps=10, throttle_secs=0).throttle_secs, spec.max_steps
    (0, 100)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from dtf_notebook.distributed.server import Server
from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.estimator.exporter import Exporter, export_path
from dtf_notebook.estimator.run_config import TaskType
from dtf_notebook.platform import tf_logging as logging
from dtf_notebook.train.checkpoint_saver_hook import CheckpointSaverListener
from dtf_notebook.train.hook_timers import SecondOrStepTimer

__all__ = ["TrainSpec", "EvalSpec", "train_and_evaluate"]

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60


def _check_hooks(hooks: Any) -> tuple:
    from dtf_notebook.train.session_run_hook import SessionRunHook

    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook!r}")
    return hooks


class _TrainFields(NamedTuple):
    input_fn: Callable[..., Any]
    max_steps: int | None
    hooks: tuple
    saving_listeners: tuple


class TrainSpec(_TrainFields):
    """What ``train_and_evaluate`` trains on (``tf.estimator.TrainSpec``).

    Raises:
        TypeError: ``input_fn`` is not callable, or a hook is not a SessionRunHook.
        ValueError: ``max_steps`` is not positive.

    Example:
        >>> TrainSpec(lambda: None, max_steps=0)
        Traceback (most recent call last):
        ValueError: Must specify max_steps > 0, given: 0
    """

    def __new__(
        cls, input_fn: Callable[..., Any], max_steps: int | None = None, hooks: Any = None, saving_listeners: Any = None
    ) -> TrainSpec:
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, _check_hooks(hooks), tuple(saving_listeners or ()))


class _EvalFields(NamedTuple):
    input_fn: Callable[..., Any]
    steps: int | None
    name: str | None
    hooks: tuple
    exporters: tuple
    start_delay_secs: float
    throttle_secs: float


def _check_exporters(exporters: Any) -> tuple:
    """``exporters`` as a tuple of uniquely named ``Exporter``s (TF's checks and messages)."""
    if not exporters:
        return ()
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    names: list[str] = []
    try:
        for exporter in exporters:
            if not isinstance(exporter, Exporter):
                raise TypeError(exporter)
            if not exporter.name:
                raise ValueError(
                    "An Exporter cannot have a name that is `None` or empty. All exporter names: "
                    f"{[e.name for e in exporters]}"
                )
            if not isinstance(exporter.name, str):
                raise ValueError(f"An Exporter must have a string name. Given: {type(exporter.name)}")
            if exporter.name in names:
                raise ValueError(
                    "`exporters` must have unique names. Such a name cannot be `None`. All exporter names: "
                    f"{[e.name for e in exporters]}"
                )
            names.append(exporter.name)
    except TypeError:
        raise TypeError(
            f"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found {exporters}."
        ) from None
    return tuple(exporters)


class EvalSpec(_EvalFields):
    """How ``train_and_evaluate`` evaluates and exports (``tf.estimator.EvalSpec``): after each evaluation every
    exporter (:mod:`dtf_notebook.estimator.exporter`) writes into ``<model_dir>/export/<its name>``.

    Raises:
        TypeError: ``input_fn`` is not callable, a hook is not a SessionRunHook, or an exporter not an Exporter.
        ValueError: a non-positive ``steps``, negative ``start_delay_secs`` or ``throttle_secs``, or exporters
            without a name or with the same name.

    Example:
        >>> EvalSpec(lambda: None).steps, EvalSpec(lambda: None).throttle_secs
        (100, 600)
    """

    def __new__(
        cls,
        input_fn: Callable[..., Any],
        steps: int | None = 100,
        name: str | None = None,
        hooks: Any = None,
        exporters: Any = None,
        start_delay_secs: float = 120,
        throttle_secs: float = 600,
    ) -> EvalSpec:
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if start_delay_secs < 0:
            raise ValueError(f"Must specify start_delay_secs >= 0, given: {start_delay_secs}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        checked = _check_exporters(exporters)
        return super().__new__(
            cls, input_fn, steps, name, _check_hooks(hooks), checked, start_delay_secs, throttle_secs
        )


def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec) -> Any:
    """Trains and evaluates ``estimator`` as this process's task in ``TF_CONFIG`` says (see the module).

    Returns ``(eval_result, export_results)`` when run locally (the last evaluation's metrics and what each
    exporter returned after it), None for a distributed task.

    Raises:
        TypeError: the arguments are not an Estimator, a TrainSpec and an EvalSpec.
        ValueError: an evaluator with an index other than 0, or a task type the executor does not run.

    Example:
        >>> train_and_evaluate(None, None, None)
        Traceback (most recent call last):
        TypeError: `estimator` must have type `tf.estimator.Estimator`. Got: <class 'NoneType'>
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    config = estimator.config
    if config.task_type == TaskType.EVALUATOR and config.task_id > 0:
        raise ValueError(
            "For distributed training, there can only be one `evaluator` task (with task id 0).  Given task id "
            f"{config.task_id}"
        )
    return _TrainingExecutor(estimator, train_spec, eval_spec).run()


class _EvalResult(NamedTuple):
    status: str
    metrics: Any = None
    checkpoint_path: str | None = None
    export_results: tuple = ()


class _Evaluator:
    """Evaluates the latest checkpoint unless it was evaluated already; knows when the last one is done."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec, max_training_steps: int | None) -> None:
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._max_training_steps = max_training_steps
        self._previous_checkpoint: str | None = None
        self.is_final_export_triggered = False

    def evaluate_and_export(self) -> _EvalResult:
        path = self._estimator.latest_checkpoint()
        if not path:
            logging.info("Estimator is not trained yet. Will start an evaluation when a checkpoint is ready.")
            return _EvalResult("missing checkpoint")
        if path == self._previous_checkpoint:
            logging.info(
                "No new checkpoint ready for evaluation. Skip the current evaluation pass as evaluation results "
                "are expected to be same for the same checkpoint."
            )
            return _EvalResult("no new checkpoint")
        metrics = self._estimator.evaluate(
            input_fn=self._eval_spec.input_fn,
            steps=self._eval_spec.steps,
            name=self._eval_spec.name,
            checkpoint_path=path,
            hooks=self._eval_spec.hooks,
        )
        self._previous_checkpoint = path
        step = int(metrics["global_step"])
        is_final = self._max_training_steps is not None and step >= self._max_training_steps
        exports = self._export(metrics, path, is_final)
        if is_final:
            self.is_final_export_triggered = True
        return _EvalResult("evaluated", metrics, path, exports)

    def _export(self, metrics: Any, checkpoint_path: str, is_final: bool) -> tuple:
        return tuple(
            exporter.export(
                estimator=self._estimator,
                export_path=export_path(self._estimator, exporter.name),
                checkpoint_path=checkpoint_path,
                eval_result=metrics,
                is_the_final_export=is_final,
            )
            for exporter in self._eval_spec.exporters
        )


class _NewCheckpointListenerForEvaluate(CheckpointSaverListener):
    """Evaluates after a checkpoint is saved, at most every ``throttle_secs``, and once more at the end."""

    def __init__(self, evaluator: _Evaluator, throttle_secs: float) -> None:
        self._evaluator = evaluator
        self._throttle_secs = throttle_secs
        self.eval_result: _EvalResult | None = None

    def begin(self) -> None:
        self._timer = SecondOrStepTimer(every_secs=self._throttle_secs)

    def after_save(self, session: Any, global_step_value: int) -> bool:
        if self._timer.should_trigger_for_step(global_step_value):
            self._timer.update_last_triggered_step(global_step_value)
            self._evaluate()
        return self._evaluator.is_final_export_triggered

    def end(self, session: Any, global_step_value: int) -> None:
        if global_step_value != self._timer.last_triggered_step():
            self._evaluate()

    def _evaluate(self) -> None:
        result = self._evaluator.evaluate_and_export()
        if result.status == "evaluated":
            self.eval_result = result


class _TrainingExecutor:
    """Runs the part of ``train_and_evaluate`` that this task's type calls for (``run_<task_type>``)."""

    def __init__(self, estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec) -> None:
        self._estimator = estimator
        self._train_spec = train_spec
        self._eval_spec = eval_spec

    def run(self) -> Any:
        config = self._estimator.config
        if not config.cluster_spec.jobs and config.task_type != TaskType.EVALUATOR:
            logging.info("Running training and evaluation locally (non-distributed).")
            return self.run_local()
        if not config.task_type:
            raise ValueError(
                "`estimator.config` must have task_type set. This usually means TF_CONFIG environment is not set "
                "correctly."
            )
        runners = {
            "chief": self.run_chief,
            "worker": self.run_worker,
            "ps": self.run_ps,
            "evaluator": self.run_evaluator,
            "master": self.run_master,
        }
        if config.task_type not in runners:
            raise ValueError(
                f"Task type {config.task_type} is not supported. Supported task types are {sorted(runners)}"
            )
        runners[config.task_type]()
        return None

    # ---- per task type ----------------------------------------------------------------------------------
    def run_chief(self) -> None:
        """Starts the chief's server and trains (initialising, checkpointing)."""
        self._start_distributed_training()

    def run_worker(self) -> None:
        """Starts the worker's server and trains, after a delay that grows with its index."""
        self._start_distributed_training()

    def run_master(self) -> None:
        """The legacy ``master`` job: trains as the chief and evaluates after checkpoints."""
        evaluator = _Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        self._start_distributed_training([_NewCheckpointListenerForEvaluate(evaluator, self._eval_spec.throttle_secs)])

    def run_ps(self) -> None:
        """Starts the ps task's server and serves until the process is stopped."""
        self._start_std_server().join()

    def run_evaluator(self) -> None:
        """Evaluates each new checkpoint until the last training step's checkpoint is evaluated."""
        self._start_continuous_evaluation()

    def run_local(self) -> tuple[Any, list]:
        """Trains here, evaluating after each checkpoint (at most every ``throttle_secs``) and at the end."""
        config = self._estimator.config
        logging.info(
            "Start train and evaluate loop. The evaluate will happen after every checkpoint. Checkpoint frequency "
            "is determined based on RunConfig arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.",
            config.save_checkpoints_steps,
            config.save_checkpoints_secs,
        )
        evaluator = _Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        listener = _NewCheckpointListenerForEvaluate(evaluator, self._eval_spec.throttle_secs)
        self._estimator.train(
            input_fn=self._train_spec.input_fn,
            max_steps=self._train_spec.max_steps,
            hooks=list(self._train_spec.hooks),
            saving_listeners=[listener, *self._train_spec.saving_listeners],
        )
        result = listener.eval_result or _EvalResult("missing checkpoint")
        return result.metrics, list(result.export_results)

    # ---- helpers ------------------------------------------------------------------------------------------
    def _start_std_server(self) -> Server:
        config = self._estimator.config
        if not config.cluster_spec.jobs or not config.task_type or config.task_id is None:
            raise RuntimeError(
                "Could not start server; be sure to specify cluster_spec, task_type, and task in "
                "RunConfig or set the TF_CONFIG environment variable."
            )
        logging.info("Start Tensorflow server.")
        server = Server(
            config.cluster_spec,
            job_name=config.task_type,
            task_index=config.task_id,
            config=config.session_config,
            start=False,
            protocol=config.protocol,
        )
        server.start()
        return server

    def _start_distributed_training(self, saving_listeners: list | None = None) -> None:
        config = self._estimator.config
        server = self._start_std_server()
        delay = 0
        if config.task_type == TaskType.WORKER:
            most = _MAX_DELAY_SECS
            if config.experimental_max_worker_delay_secs is not None:
                most = int(config.experimental_max_worker_delay_secs)
            delay = min(most, (config.task_id + 1) * _DELAY_SECS_PER_WORKER)
        if delay > 0:
            logging.info("Waiting %d secs before starting training.", delay)
            time.sleep(delay)
        try:
            self._estimator.train(
                input_fn=self._train_spec.input_fn,
                max_steps=self._train_spec.max_steps,
                hooks=list(self._train_spec.hooks),
                saving_listeners=[*(saving_listeners or []), *self._train_spec.saving_listeners],
            )
        finally:
            server.stop()

    def _start_continuous_evaluation(self) -> None:
        delay = self._eval_spec.start_delay_secs
        if delay:
            logging.info("Waiting %f secs before starting eval.", delay)
            time.sleep(delay)
        evaluator = _Evaluator(self._estimator, self._eval_spec, self._train_spec.max_steps)
        while True:
            start = time.time()
            evaluator.evaluate_and_export()
            if evaluator.is_final_export_triggered:
                logging.info("Exiting evaluation, global step >= train max_steps.")
                return
            left = self._eval_spec.throttle_secs - (time.time() - start)
            if left > 0:
                logging.info("Waiting %f secs before starting next eval run.", left)
                time.sleep(left)
