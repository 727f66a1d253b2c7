"""``tf.estimator.Estimator``: trains, evaluates and predicts with a ``model_fn``, keeping checkpoints in
``model_dir``.

Every call builds a fresh graph: ``input_fn()`` gives features and labels (or a ``tf.data`` Dataset of them),
``model_fn(features, labels, mode, params, config)`` returns an :class:`EstimatorSpec`, and the Estimator runs
it in a ``MonitoredTrainingSession`` (train) or a ``MonitoredSession`` restored from the latest checkpoint
(evaluate, predict). On a cluster (``TF_CONFIG``), training places variables on the ps tasks with
``replica_device_setter`` and the rest on the task itself: between-graph replication, as TF1's Estimator does.

Example:
    >>> import tempfile
    >>> import numpy as np
    >>> import dtf_notebook.compat.v1 as tf
    >>> def model_fn(features, labels, mode):
    ...     w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    ...     predictions = features["x"] * w
    ...     loss = tf.losses.mean_squared_error(labels, predictions) if labels is not None else None
    ...     train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step()) \\
    ...         if mode == "train" else None
    ...     return tf.estimator.EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)
    >>> x = np.array([1.0, 2.0], np.float32)
    >>> est = Estimator(model_fn, model_dir=tempfile.mkdtemp())
    >>> input_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, 3 * x, batch_size=2, num_epochs=None, shuffle=False)
    >>> _ = est.train(input_fn, steps=50)
    >>> round(float(est.get_variable_value("w")), 3)
    3.0
"""

from __future__ import annotations

import copy
import inspect
import os
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dtf_notebook.estimator import warm_starting
from dtf_notebook.estimator.input_fn_util import features_and_labels
from dtf_notebook.estimator.model_fn import LOSS_METRIC_KEY, EstimatorSpec, ModeKeys
from dtf_notebook.estimator.run_config import RunConfig
from dtf_notebook.framework import dtypes
from dtf_notebook.framework import graph as ops
from dtf_notebook.framework.random_seed import set_random_seed
from dtf_notebook.ops import identity_ops, state_ops
from dtf_notebook.ops.init_ops import zeros_initializer
from dtf_notebook.ops.metrics import mean as metric_mean
from dtf_notebook.ops.variable_scope import get_variable
from dtf_notebook.platform import tf_logging as logging
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.summary import summary_ops
from dtf_notebook.summary.writer import FileWriterCache
from dtf_notebook.train import training_util
from dtf_notebook.train.checkpoint_management import latest_checkpoint
from dtf_notebook.train.checkpoint_saver_hook import CheckpointSaverHook
from dtf_notebook.train.checkpoint_utils import list_variables, load_variable
from dtf_notebook.train.device_setter import replica_device_setter
from dtf_notebook.train.feed_hooks import FinalOpsHook
from dtf_notebook.train.logging_hooks import LoggingTensorHook, NanTensorHook
from dtf_notebook.train.monitored_session import MonitoredSession, MonitoredTrainingSession
from dtf_notebook.train.saver import Saver
from dtf_notebook.train.session_creators import ChiefSessionCreator
from dtf_notebook.train.session_run_hook import SessionRunArgs, SessionRunHook
from dtf_notebook.train.step_hooks import StopAtStepHook

__all__ = ["Estimator"]

#: Ops replica_device_setter puts on the ps tasks for an Estimator (TF's list).
_PS_OPS = [
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
]


def _replica_device_setter(config: RunConfig) -> Any:
    """TF's device function of an Estimator: variables on the ps tasks, everything else on this task."""
    if config.task_type:
        worker_device = f"/job:{config.task_type}/task:{config.task_id}"
    else:
        worker_device = "/job:worker"
    if config.num_ps_replicas > 0:
        return replica_device_setter(
            ps_tasks=config.num_ps_replicas,
            worker_device=worker_device,
            merge_devices=True,
            ps_ops=_PS_OPS,
            cluster=config.cluster_spec,
        )
    return None


def _session_config(config: RunConfig) -> ConfigProto:
    """The sessions' ConfigProto: the user's, or one whose device filters keep a task to the ps and itself."""
    if config.session_config is not None:
        return config.session_config
    if config.cluster_spec.jobs and config.task_type in ("chief", "worker", "master"):
        filters = ["/job:ps", f"/job:{config.task_type}/task:{config.task_id}"]
        return ConfigProto(allow_soft_placement=True, device_filters=filters)
    return ConfigProto(allow_soft_placement=True)


def _check_hooks(hooks: Any) -> list:
    hooks = list(hooks or [])
    for hook in hooks:
        if not isinstance(hook, SessionRunHook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {hook!r}")
    return hooks


class _StopAfterNEvalsHook(SessionRunHook):
    """Stops an evaluation after ``num_evals`` batches (None: at the end of the input), logging progress."""

    def __init__(self, num_evals: int | None, log_progress: bool = True) -> None:
        self._num_evals = num_evals
        self._evals_completed: Any = None
        self._log_progress = log_progress
        self._log_frequency = 1 if (num_evals is None or num_evals < 20) else int(num_evals // 10)

    def _set_evals_completed_tensor(self, updated_eval_step: Any) -> None:
        self._evals_completed = updated_eval_step

    def before_run(self, run_context: Any) -> SessionRunArgs:
        return SessionRunArgs({"evals_completed": self._evals_completed})

    def after_run(self, run_context: Any, run_values: Any) -> None:
        done = int(run_values.results["evals_completed"])
        if self._log_progress:
            if self._num_evals is None:
                logging.info("Evaluation [%d]", done)
            elif done % self._log_frequency == 0 or done == self._num_evals:
                logging.info("Evaluation [%d/%d]", done, self._num_evals)
        if self._num_evals is not None and done >= self._num_evals:
            run_context.request_stop()


def _eval_step() -> Any:
    """The local int64 ``eval_step`` counter of the graph (TF's, in the ``eval_step`` collection)."""
    found = ops.get_collection("eval_step")
    if found:
        return found[0]
    return get_variable(
        "eval_step",
        shape=[],
        dtype=dtypes.int64,
        initializer=zeros_initializer(),
        trainable=False,
        collections=[ops.GraphKeys.LOCAL_VARIABLES, "eval_step"],
    )


def _write_dict_to_summary(output_dir: str, dictionary: dict[str, Any], step: int) -> None:
    """Writes the scalar results of an evaluation as one summary Event at ``step`` (TF's eval event file)."""
    from dtf_notebook.summary import Summary

    logging.info("Saving dict for global step %d: %s", step, _dict_to_str(dictionary))
    writer = FileWriterCache.get(output_dir)
    summary = Summary()
    for key in sorted(dictionary):
        if key == "global_step":
            continue
        value = dictionary[key]
        if isinstance(value, np.floating | float | np.integer | int | np.bool_ | bool) or (
            isinstance(value, np.ndarray) and value.size == 1
        ):
            summary.value.add(tag=key, simple_value=float(np.asarray(value).reshape(())))
        else:
            logging.warning("Skipping summary for %s, must be a float, np.float32, np.int64, np.int32 or int.", key)
    writer.add_summary(summary, step)
    writer.flush()


def _dict_to_str(dictionary: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in sorted(dictionary.items()))


class Estimator:
    """Trains, evaluates and predicts with a ``model_fn`` (``tf.estimator.Estimator``).

    Args:
        model_fn: ``model_fn(features, labels, mode, params, config)`` (``labels``, ``mode``, ``params`` and
            ``config`` optional) returning an :class:`EstimatorSpec`.
        model_dir: Where checkpoints and summaries go (else ``config.model_dir``, else a temporary directory).
        config: A :class:`RunConfig`.
        params: A dict passed to ``model_fn`` (it must then take ``params``).
        warm_start_from: A checkpoint path or directory, or a :class:`WarmStartSettings`: variables start from
            it when training begins without a checkpoint of its own.

    Raises:
        ValueError: ``model_dir`` and ``config.model_dir`` differ, or ``model_fn`` lacks an argument given.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> def model_fn(features, labels, mode, params):
        ...     return tf.estimator.EstimatorSpec(mode, predictions=features * params["scale"])
        >>> est = Estimator(model_fn, params={"scale": 2.0})
        >>> list(est.predict(lambda: tf.data.Dataset.from_tensor_slices([1.0, 2.0]).batch(2)))
        [np.float32(2.0), np.float32(4.0)]
    """

    def __init__(
        self,
        model_fn: Callable[..., EstimatorSpec],
        model_dir: str | None = None,
        config: RunConfig | None = None,
        params: dict[str, Any] | None = None,
        warm_start_from: Any = None,
    ) -> None:
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
        model_dir = None if model_dir is None else os.fspath(model_dir)
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(
                "`model_dir` are set both in constructor and `RunConfig`, but with different values. In "
                f"constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' "
            )
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            logging.warning("Using temporary folder as model directory: %s", model_dir)
        self._config = config.replace(model_dir=model_dir)
        logging.info("Using config: %r", self._config)
        self._model_dir = model_dir
        self._session_config = _session_config(self._config)
        self._device_fn = self._config.device_fn or _replica_device_setter(self._config)
        _verify_model_fn_args(model_fn, params)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = warm_starting.settings(warm_start_from)

    model_dir = property(lambda self: self._model_dir, doc="Where checkpoints and summaries go.")
    config = property(lambda self: copy.copy(self._config), doc="A copy of the RunConfig.")
    params = property(lambda self: copy.deepcopy(self._params), doc="A copy of params.")
    model_fn = property(lambda self: self._call_model_fn_public, doc="The model_fn, params and config bound.")

    def _call_model_fn_public(self, features: Any, labels: Any, mode: str, config: Any = None) -> EstimatorSpec:
        return self._call_model_fn(features, labels, mode, config or self._config)

    # ---- checkpoint inspection -------------------------------------------------------------------------
    def latest_checkpoint(self) -> str | None:
        """The path of the newest checkpoint in ``model_dir``, or None.

        Example:
            >>> Estimator(lambda features: None).latest_checkpoint() is None
            True
        """
        return latest_checkpoint(self._model_dir)

    def _checkpoint(self) -> str:
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    def get_variable_names(self) -> list[str]:
        """The names of the variables in the latest checkpoint.

        Raises:
            ValueError: there is no checkpoint yet.

        Example:
            >>> Estimator(lambda features: None).get_variable_names()
            Traceback (most recent call last):
            ValueError: Could not find trained model in model_dir: ...
        """
        return [name for name, _ in list_variables(self._checkpoint())]

    def get_variable_value(self, name: str) -> np.ndarray:
        """The value of variable ``name`` in the latest checkpoint.

        Example:
            >>> Estimator(lambda features: None).get_variable_value("w")
            Traceback (most recent call last):
            ValueError: Could not find trained model in model_dir: ...
        """
        return load_variable(self._checkpoint(), name)

    # ---- building blocks --------------------------------------------------------------------------------
    def _call_input_fn(self, input_fn: Callable[..., Any], mode: str) -> Any:
        names = inspect.signature(input_fn).parameters
        kwargs: dict[str, Any] = {}
        if "mode" in names:
            kwargs["mode"] = mode
        if "params" in names:
            kwargs["params"] = self.params
        if "config" in names:
            kwargs["config"] = self.config
        with ops.device("/cpu:0"):
            return input_fn(**kwargs)

    def _features_and_labels(self, input_fn: Callable[..., Any], mode: str) -> tuple[Any, Any, list]:
        return features_and_labels(self._call_input_fn(input_fn, mode))

    def _call_model_fn(self, features: Any, labels: Any, mode: str, config: RunConfig) -> EstimatorSpec:
        names = inspect.signature(self._model_fn).parameters
        kwargs: dict[str, Any] = {}
        if "labels" in names:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in names:
            kwargs["mode"] = mode
        if "params" in names:
            kwargs["params"] = self.params
        if "config" in names:
            kwargs["config"] = config
        logging.info("Calling model_fn.")
        spec = self._model_fn(features=features, **kwargs)
        logging.info("Done calling model_fn.")
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn should return an EstimatorSpec. Given: {spec!r}")
        return spec

    @staticmethod
    def _create_global_step(graph: ops.Graph) -> Any:
        step = training_util.create_global_step(graph)
        if step.dtype.base_dtype.name != "int64":
            raise TypeError(f"Global step must have dtype int64, given: {step}")
        return step

    # ---- train ------------------------------------------------------------------------------------------
    def train(
        self,
        input_fn: Callable[..., Any],
        hooks: Any = None,
        steps: int | None = None,
        max_steps: int | None = None,
        saving_listeners: Any = None,
    ) -> Estimator:
        """Trains for ``steps`` more steps, or until the global step reaches ``max_steps``, or to the input's end.

        Raises:
            ValueError: both ``steps`` and ``max_steps``, or a non-positive one.

        Example:
            >>> Estimator(lambda features: None).train(lambda: None, steps=0)
            Traceback (most recent call last):
            ValueError: Must specify steps > 0, given: 0
        """
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None:
            start_step = self._checkpointed_step()
            if max_steps <= start_step:
                logging.info("Skipping training since max_steps has already saved.")
                return self
        hooks = _check_hooks(hooks)
        if steps is not None or max_steps is not None:
            hooks.append(StopAtStepHook(steps, max_steps))
        saving_listeners = list(saving_listeners or [])
        loss = self._train_model(input_fn, hooks, saving_listeners)
        logging.info("Loss for final step: %s.", loss)
        return self

    def _checkpointed_step(self) -> int:
        path = self.latest_checkpoint()
        if not path:
            return 0
        return int(load_variable(path, "global_step"))

    def _train_model(self, input_fn: Callable[..., Any], hooks: list, saving_listeners: list) -> Any:
        worker_hooks = list(hooks)
        with ops.Graph().as_default() as g, g.device(self._device_fn):
            set_random_seed(self._config.tf_random_seed)
            global_step = self._create_global_step(g)
            features, labels, input_hooks = self._features_and_labels(input_fn, ModeKeys.TRAIN)
            worker_hooks.extend(input_hooks)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN, self._config)
            return self._train_with_spec(spec, worker_hooks, global_step, saving_listeners)

    def _train_with_spec(self, spec: EstimatorSpec, worker_hooks: list, global_step: Any, listeners: list) -> Any:
        if self._warm_start_settings is not None:
            logging.info("Warm-starting with WarmStartSettings: %r", self._warm_start_settings)
            warm_starting.warm_start(self._warm_start_settings)
        if not any(t.op.name == "loss" for t in ops.get_collection(ops.GraphKeys.SUMMARIES)):
            summary_ops.scalar("loss", spec.loss)
        ops.add_to_collection(ops.GraphKeys.LOSSES, spec.loss)
        worker_hooks.extend(
            [
                NanTensorHook(spec.loss),
                LoggingTensorHook(
                    {"loss": spec.loss, "step": global_step}, every_n_iter=self._config.log_step_count_steps
                ),
            ]
        )
        worker_hooks.extend(spec.training_hooks)
        scaffold = spec.scaffold
        if not (scaffold.saver or ops.get_collection(ops.GraphKeys.SAVERS)):
            ops.add_to_collection(
                ops.GraphKeys.SAVERS,
                Saver(
                    sharded=True,
                    max_to_keep=self._config.keep_checkpoint_max,
                    keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                    defer_build=True,
                    save_relative_paths=True,
                ),
            )
        chief_hooks: list = []
        all_hooks = worker_hooks + list(spec.training_chief_hooks)
        saver_hooks = [h for h in all_hooks if isinstance(h, CheckpointSaverHook)]
        if self._config.save_checkpoints_secs or self._config.save_checkpoints_steps:
            if not saver_hooks:
                chief_hooks = [
                    CheckpointSaverHook(
                        self._model_dir,
                        save_secs=self._config.save_checkpoints_secs,
                        save_steps=self._config.save_checkpoints_steps,
                        scaffold=scaffold,
                        save_graph_def=self._config.checkpoint_save_graph_def,
                    )
                ]
                saver_hooks = [chief_hooks[0]]
        if listeners:
            if not saver_hooks:
                raise ValueError(
                    "There should be a CheckpointSaverHook to use saving_listeners. Please set one of the "
                    "RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs."
                )
            for listener in listeners:  # the listeners go on the (first) saver hook, once
                if listener not in saver_hooks[0]._listeners:
                    saver_hooks[0]._listeners.append(listener)
        loss = None
        with MonitoredTrainingSession(
            master=self._config.master,
            is_chief=self._config.is_chief,
            checkpoint_dir=self._model_dir,
            scaffold=scaffold,
            hooks=worker_hooks,
            chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
            save_checkpoint_secs=0,
            save_summaries_steps=self._config.save_summary_steps,
            config=self._session_config,
            log_step_count_steps=self._config.log_step_count_steps,
            max_wait_secs=self._config.session_creation_timeout_secs,
            save_graph_def=self._config.checkpoint_save_graph_def,
        ) as session:
            while not session.should_stop():
                _, loss = session.run([spec.train_op, spec.loss])
        return loss

    # ---- evaluate ---------------------------------------------------------------------------------------
    def eval_dir(self, name: str | None = None) -> str:
        """Where ``evaluate(name=...)`` writes its summaries: ``model_dir/eval`` or ``model_dir/eval_<name>``.

        Example:
            >>> Estimator(lambda features: None, model_dir="/tmp/m").eval_dir("test")
            '/tmp/m/eval_test'
        """
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def evaluate(
        self,
        input_fn: Callable[..., Any],
        steps: int | None = None,
        hooks: Any = None,
        checkpoint_path: str | None = None,
        name: str | None = None,
    ) -> dict[str, Any]:
        """Evaluates the latest (or the given) checkpoint on ``steps`` batches (None: to the input's end).

        Returns the metrics of ``eval_metric_ops``, the mean ``loss`` and the ``global_step``; writes them as a
        summary to :meth:`eval_dir`.

        Raises:
            ValueError: a non-positive ``steps``, or ``model_fn`` reports a metric named ``loss`` itself.

        Example:
            >>> Estimator(lambda features: None).evaluate(lambda: None, steps=0)
            Traceback (most recent call last):
            ValueError: Must specify steps > 0, given: 0
        """
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        hooks = _check_hooks(hooks)
        hooks.append(_StopAfterNEvalsHook(num_evals=steps))
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logging.info(
                    "Could not find trained model in model_dir: %s, running initialization to evaluate.",
                    self._model_dir,
                )
        with ops.Graph().as_default() as g:
            set_random_seed(self._config.tf_random_seed)
            global_step = self._create_global_step(g)
            features, labels, input_hooks = self._features_and_labels(input_fn, ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL, self._config)
            metrics = dict(spec.eval_metric_ops)
            if LOSS_METRIC_KEY in metrics:
                raise ValueError(
                    f"Metric with name {LOSS_METRIC_KEY!r} is not allowed, because Estimator "
                    + ("already defines a default metric with the same name.")
                )
            metrics[LOSS_METRIC_KEY] = metric_mean(spec.loss)
            update_op, eval_dict = _extract_metric_update_ops(metrics)
            if ops.GraphKeys.GLOBAL_STEP in eval_dict:
                raise ValueError(
                    "Metric with name `global_step` is not allowed, because Estimator already defines a"
                    " default metric with the same name."
                )
            eval_dict[ops.GraphKeys.GLOBAL_STEP] = global_step
            all_hooks = list(input_hooks) + hooks + list(spec.evaluation_hooks)
            results = _evaluate_once(
                checkpoint_path,
                self._config.evaluation_master,
                spec.scaffold,
                update_op,
                eval_dict,
                all_hooks,
                self._session_config,
            )
        results = {k: v for k, v in results.items()}
        step = int(results[ops.GraphKeys.GLOBAL_STEP])
        logging.info("Finished evaluation at step %d", step)
        _write_dict_to_summary(self.eval_dir(name), results, step)
        return results

    # ---- predict ----------------------------------------------------------------------------------------
    def predict(
        self,
        input_fn: Callable[..., Any],
        predict_keys: Any = None,
        hooks: Any = None,
        checkpoint_path: str | None = None,
        yield_single_examples: bool = True,
    ) -> Iterator[Any]:
        """Yields the model's predictions for the input, one example at a time (or one batch at a time).

        ``predict_keys`` picks some of a dict of predictions. The input ends the loop (its
        ``OutOfRangeError``), so ``input_fn`` should not repeat forever.

        Raises:
            ValueError: a key of ``predict_keys`` is not among the predictions.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> est = Estimator(lambda features, mode: tf.estimator.EstimatorSpec(mode, predictions={"y": -features}))
            >>> next(est.predict(lambda: tf.data.Dataset.from_tensors([1, 2])))
            {'y': np.int32(-1)}
        """
        hooks = _check_hooks(hooks)
        if not checkpoint_path:
            checkpoint_path = self.latest_checkpoint()
            if not checkpoint_path:
                logging.info(
                    "Could not find trained model in model_dir: %s, running initialization to predict.",
                    self._model_dir,
                )
        with ops.Graph().as_default() as g:
            set_random_seed(self._config.tf_random_seed)
            self._create_global_step(g)
            features, _, input_hooks = self._features_and_labels(input_fn, ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT, self._config)
            predictions = _extract_keys(spec.predictions, predict_keys)
            all_hooks = list(input_hooks) + hooks + list(spec.prediction_hooks)
            creator = ChiefSessionCreator(
                scaffold=spec.scaffold,
                master=self._config.master,
                config=self._session_config,
                checkpoint_filename_with_path=checkpoint_path,
            )
            with MonitoredSession(session_creator=creator, hooks=all_hooks) as session:
                while not session.should_stop():
                    values = session.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(predictions, dict):
                        yield from values
                    else:
                        for i in range(_batch_length(values)):
                            yield {key: value[i] for key, value in values.items()}

    def export_saved_model(
        self,
        export_dir_base: str,
        serving_input_receiver_fn: Callable[[], Any],
        assets_extra: Any = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
    ) -> bytes:
        """Writes the model of the latest checkpoint (or ``checkpoint_path``) as a SavedModel in a new
        ``<export_dir_base>/<timestamp>`` directory, served through ``serving_input_receiver_fn``'s tensors;
        returns that directory (see :mod:`dtf_notebook.estimator.exporting`). Default attrs are left out of the
        graph, as TF's."""
        return self.export_savedmodel(
            export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path, True
        )

    def export_savedmodel(
        self,
        export_dir_base: str,
        serving_input_receiver_fn: Callable[[], Any],
        assets_extra: Any = None,
        as_text: bool = False,
        checkpoint_path: str | None = None,
        strip_default_attrs: bool = False,
    ) -> bytes:
        """TF1's name of :meth:`export_saved_model` (with ``strip_default_attrs``)."""
        from dtf_notebook.estimator.exporting import export_saved_model

        return export_saved_model(
            self,
            export_dir_base,
            serving_input_receiver_fn,
            assets_extra,
            as_text,
            checkpoint_path,
            strip_default_attrs,
        )


def _verify_model_fn_args(model_fn: Callable[..., Any], params: Any) -> None:
    names = inspect.signature(model_fn).parameters
    if "features" not in names:
        raise ValueError(f"model_fn ({model_fn}) must include features argument.")
    if params is not None and "params" not in names:
        raise ValueError(
            f"model_fn ({model_fn}) does not include params argument, but params ({params}) is passed to Estimator."
        )


def _extract_metric_update_ops(metrics: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    update_ops, values = [], {}
    for name, (value, update) in sorted(metrics.items()):
        values[name] = value
        update_ops.append(update)
    return (identity_ops.group(*update_ops) if update_ops else None), values


def _extract_keys(predictions: Any, predict_keys: Any) -> Any:
    if not predict_keys:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
    keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
    missing = [k for k in keys if k not in predictions]
    if missing:
        raise ValueError(f"Expected to run at least one output from {sorted(predictions)}, provided {keys}.")
    return {k: predictions[k] for k in keys}


def _batch_length(values: dict[str, Any]) -> int:
    length = None
    for key, value in values.items():
        value = np.asarray(value)
        if value.ndim < 1:
            raise ValueError(f"Batch length of predictions should be same. {key} has shape {value.shape}.")
        if length is None:
            length = value.shape[0]
        elif value.shape[0] != length:
            raise ValueError(f"Batch length of predictions should be same. {key} has different batch length.")
    return length or 0


def _evaluate_once(
    checkpoint_path: str | None,
    master: str,
    scaffold: Any,
    eval_ops: Any,
    final_ops: dict[str, Any],
    hooks: list,
    config: Any,
) -> dict[str, Any]:
    """Restores ``checkpoint_path``, runs ``eval_ops`` until a hook stops, and returns ``final_ops``' values."""
    eval_step = _eval_step()
    update_eval_step = state_ops.assign_add(eval_step, 1)
    for hook in hooks:
        if isinstance(hook, _StopAfterNEvalsHook):
            hook._set_evals_completed_tensor(update_eval_step)
    eval_ops = [update_eval_step] if eval_ops is None else [eval_ops, update_eval_step]
    final_hook = FinalOpsHook(final_ops)
    creator = ChiefSessionCreator(
        scaffold=scaffold, master=master, config=config, checkpoint_filename_with_path=checkpoint_path
    )
    logging.info("Starting evaluation")
    with MonitoredSession(session_creator=creator, hooks=[*hooks, final_hook]) as session:
        while not session.should_stop():
            session.run(eval_ops)
    logging.info("Evaluation finished")
    return {k: _plain(v) for k, v in final_hook.final_ops_values.items()}


def _plain(value: Any) -> Any:
    value = np.asarray(value)
    return value[()] if value.ndim == 0 else value
