"""``tf.estimator.RunConfig``: where an Estimator runs (the cluster and task from ``TF_CONFIG``) and how often it
saves.

``TF_CONFIG`` is read when the config is made, as TF does: ``{"cluster": {job: [host:port, ...]}, "task":
{"type": ..., "index": ...}}``. With a cluster, the task is the chief (one ``chief`` job of one task), a
``worker``, a ``ps`` or the ``evaluator`` (which is not part of the training cluster); without one, the
process trains locally as the only worker.

Example:
    >>> import json, os
    >>> os.environ["TF_CONFIG"] = json.dumps({
    ...     "cluster": {"chief": ["localhost:2220"], "worker": ["localhost:2221"], "ps": ["localhost:2222"]},
    ...     "task": {"type": "worker", "index": 0}})
    >>> config = RunConfig()
    >>> config.task_type, config.master, config.is_chief, config.num_ps_replicas, config.num_worker_replicas
    ('worker', 'grpc://localhost:2221', False, 1, 2)
    >>> del os.environ["TF_CONFIG"]
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

from dtf_notebook.distributed.cluster_spec import ClusterSpec

__all__ = ["RunConfig", "TaskType"]

_USE_DEFAULT = object()
_GRPC_SCHEME = "grpc://"
_LOCAL_MASTER = ""


class TaskType:
    """The task types of ``TF_CONFIG`` (``tf.estimator.RunConfig``'s ``task_type`` values).

    Example:
        >>> TaskType.CHIEF, TaskType.EVALUATOR
        ('chief', 'evaluator')
    """

    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


def _tf_config() -> dict[str, Any]:
    text = os.environ.get("TF_CONFIG", "") or "{}"
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}): {text!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object, not {text!r}")
    return config


def _validate_task(cluster: ClusterSpec, task_env: dict[str, Any], chief_type: str) -> tuple[str, int]:
    if chief_type not in cluster.jobs:
        raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief_type}" node.')
    if len(cluster.job_tasks(chief_type)) > 1:
        raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief_type}" node.')
    task_type, task_id = task_env.get("type"), task_env.get("index")
    if not task_type:
        raise ValueError('If "cluster" is set in TF_CONFIG, must have one "task_type" set.')
    if task_id is None:
        raise ValueError('If "cluster" is set in TF_CONFIG, must have one "task_id" set.')
    task_id = int(task_id)
    if task_id < 0:
        raise ValueError("Task index must be non-negative number.")
    if task_type == TaskType.EVALUATOR:
        return task_type, task_id
    if task_type not in cluster.jobs:
        raise ValueError(
            f"{task_type} is not a valid task_type in the cluster_spec:\n{cluster}\n\n"
            "Note that these values may be coming from the TF_CONFIG environment variable."
        )
    if not 0 <= task_id < len(cluster.job_tasks(task_type)):
        raise ValueError(
            f"{task_id} is not a valid task_id for task_type {task_type} in the cluster_spec:\n{cluster}\n\n"
            "Note that these values may be coming from the TF_CONFIG environment variable."
        )
    return task_type, task_id


def _global_id(cluster: ClusterSpec, task_type: str, task_id: int, chief_type: str) -> int:
    """The task's id in the whole cluster: the chief 0, then the workers, then the other jobs by name."""
    order = [chief_type, TaskType.WORKER] + sorted(j for j in cluster.jobs if j not in (chief_type, "worker"))
    offset = 0
    for job in order:
        if job == task_type:
            return offset + task_id
        offset += len(cluster.job_tasks(job)) if job in cluster.jobs else 0
    raise RuntimeError(f"Internal error: task type {task_type!r} is not in the cluster {cluster}")


class RunConfig:
    """Run settings of an Estimator, with the cluster and task from ``TF_CONFIG`` (``tf.estimator.RunConfig``).

    Checkpoints are saved every 600 seconds unless ``save_checkpoints_steps`` or ``save_checkpoints_secs`` says
    otherwise (giving both raises). ``replace(**kwargs)`` gives a copy with some settings changed.

    Raises:
        ValueError: both checkpoint intervals are given, or ``TF_CONFIG`` names a task the cluster lacks.

    Example:
        >>> config = RunConfig(model_dir="/tmp/m", save_checkpoints_steps=100)
        >>> config.save_checkpoints_steps, config.save_checkpoints_secs, config.is_chief, config.master
        (100, None, True, '')
    """

    def __init__(
        self,
        model_dir: str | None = None,
        tf_random_seed: int | None = None,
        save_summary_steps: int = 100,
        save_checkpoints_steps: Any = _USE_DEFAULT,
        save_checkpoints_secs: Any = _USE_DEFAULT,
        session_config: Any = None,
        keep_checkpoint_max: int = 5,
        keep_checkpoint_every_n_hours: float = 10000,
        log_step_count_steps: int = 100,
        train_distribute: Any = None,
        device_fn: Any = None,
        protocol: str | None = None,
        eval_distribute: Any = None,
        experimental_distribute: Any = None,
        experimental_max_worker_delay_secs: int | None = None,
        session_creation_timeout_secs: int = 7200,
        checkpoint_save_graph_def: bool = True,
    ) -> None:
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, 600
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and save_checkpoints_secs.")
        if train_distribute is not None or eval_distribute is not None or experimental_distribute is not None:
            raise ValueError(
                "Distribution strategies are not supported here; use TF_CONFIG with ps tasks (between-graph "
                "replication through replica_device_setter) instead."
            )
        self._model_dir = None if model_dir is None else os.fspath(model_dir)
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._device_fn = device_fn
        self._protocol = protocol
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._checkpoint_save_graph_def = checkpoint_save_graph_def
        self._train_distribute = self._eval_distribute = None
        self._init_distributed_setting_from_environment_var(_tf_config())

    # ---- TF_CONFIG ----------------------------------------------------------------------------------------
    def _init_distributed_setting_from_environment_var(self, tf_config: dict[str, Any]) -> None:
        self._service = tf_config.get("service")
        self._cluster_spec = ClusterSpec(tf_config.get("cluster", {}))
        task_env = tf_config.get("task", {})
        if self._cluster_spec.jobs:
            chief = TaskType.MASTER if TaskType.MASTER in self._cluster_spec.jobs else TaskType.CHIEF
            self._task_type, self._task_id = _validate_task(self._cluster_spec, task_env, chief)
            self._evaluation_master = tf_config.get("eval_session_master", _LOCAL_MASTER)
            if self._task_type != TaskType.EVALUATOR:
                address = self._cluster_spec.job_tasks(self._task_type)[self._task_id]
                self._master = tf_config.get("session_master", _GRPC_SCHEME + address)
                self._num_ps_replicas = (
                    len(self._cluster_spec.job_tasks(TaskType.PS)) if "ps" in self._cluster_spec.jobs else 0
                )
                self._num_worker_replicas = sum(
                    len(self._cluster_spec.job_tasks(j))
                    for j in (chief, TaskType.WORKER)
                    if j in self._cluster_spec.jobs
                )
                self._global_id_in_cluster = _global_id(self._cluster_spec, self._task_type, self._task_id, chief)
            else:  # the evaluator is not part of the training cluster
                self._cluster_spec = ClusterSpec({})
                self._master = _LOCAL_MASTER
                self._num_ps_replicas = self._num_worker_replicas = 0
                self._global_id_in_cluster = None
            self._is_chief = self._task_type == chief
        else:
            self._task_type = task_env.get("type", TaskType.WORKER)
            self._task_id = int(task_env.get("index", 0))
            self._global_id_in_cluster = 0
            if self._task_type != TaskType.WORKER:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
            if self._task_id != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
            self._master = tf_config.get("session_master", _LOCAL_MASTER)
            self._evaluation_master = tf_config.get("eval_session_master", _LOCAL_MASTER)
            self._is_chief = True
            self._num_ps_replicas = 0
            self._num_worker_replicas = 1

    # ---- properties -----------------------------------------------------------------------------------------
    cluster_spec = property(lambda self: self._cluster_spec, doc="The training cluster (empty when local).")
    task_type = property(lambda self: self._task_type, doc="chief, worker, ps, evaluator or master.")
    task_id = property(lambda self: self._task_id, doc="The task's index in its job.")
    master = property(lambda self: self._master, doc="The session target the task trains through.")
    evaluation_master = property(lambda self: self._evaluation_master, doc="The target evaluate() runs on.")
    is_chief = property(lambda self: self._is_chief, doc="Whether the task initialises and checkpoints.")
    num_ps_replicas = property(lambda self: self._num_ps_replicas, doc="Tasks of the ps job.")
    num_worker_replicas = property(lambda self: self._num_worker_replicas, doc="The chief and the workers.")
    global_id_in_cluster = property(lambda self: self._global_id_in_cluster, doc="The task's cluster-wide id.")
    service = property(lambda self: self._service, doc="TF_CONFIG's service section.")
    model_dir = property(lambda self: self._model_dir, doc="Where checkpoints and summaries go.")
    tf_random_seed = property(lambda self: self._tf_random_seed, doc="The graph-level seed.")
    save_summary_steps = property(lambda self: self._save_summary_steps, doc="Summary interval in steps.")
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps, doc="Checkpoint interval (steps).")
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs, doc="Checkpoint interval (secs).")
    session_config = property(lambda self: self._session_config, doc="The ConfigProto of sessions.")
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max, doc="Checkpoints kept.")
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours, doc="Kept forever.")
    log_step_count_steps = property(lambda self: self._log_step_count_steps, doc="Logging interval in steps.")
    device_fn = property(lambda self: self._device_fn, doc="Overrides the replica_device_setter.")
    protocol = property(lambda self: self._protocol, doc="The protocol of the task's server.")
    train_distribute = property(lambda self: None, doc="Always None: no distribution strategies here.")
    eval_distribute = property(lambda self: None, doc="Always None: no distribution strategies here.")
    experimental_max_worker_delay_secs = property(
        lambda self: self._experimental_max_worker_delay_secs, doc="Cap of a worker's start delay."
    )
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs, doc="Wait limit.")
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def, doc="Write graph.pbtxt.")

    _REPLACEABLE = frozenset(
        {
            "model_dir",
            "tf_random_seed",
            "save_summary_steps",
            "save_checkpoints_steps",
            "save_checkpoints_secs",
            "session_config",
            "keep_checkpoint_max",
            "keep_checkpoint_every_n_hours",
            "log_step_count_steps",
            "train_distribute",
            "device_fn",
            "protocol",
            "eval_distribute",
            "experimental_distribute",
            "experimental_max_worker_delay_secs",
            "session_creation_timeout_secs",
            "checkpoint_save_graph_def",
        }
    )

    def replace(self, **kwargs: Any) -> RunConfig:
        """A copy with the given settings changed (the cluster and task stay).

        Raises:
            ValueError: a setting that cannot be replaced, or both checkpoint intervals.

        Example:
            >>> RunConfig().replace(save_checkpoints_steps=5).save_checkpoints_secs is None
            True
        """
        for key in kwargs:
            if key not in self._REPLACEABLE:
                raise ValueError(f"{key} property is not allowed to be replaced.")
        new = copy.copy(self)
        if "save_checkpoints_steps" in kwargs and kwargs["save_checkpoints_steps"] is not None:
            kwargs.setdefault("save_checkpoints_secs", None)
        if "save_checkpoints_secs" in kwargs and kwargs["save_checkpoints_secs"] is not None:
            kwargs.setdefault("save_checkpoints_steps", None)
        for key, value in kwargs.items():
            if key in ("train_distribute", "eval_distribute", "experimental_distribute") and value is not None:
                raise ValueError("Distribution strategies are not supported here.")
            setattr(new, "_" + key, value if key != "model_dir" or value is None else os.fspath(value))
        if new._save_checkpoints_steps is not None and new._save_checkpoints_secs is not None:
            raise ValueError("Can not provide both save_checkpoints_steps and save_checkpoints_secs.")
        return new

    def __repr__(self) -> str:
        return (
            f"RunConfig(task_type={self._task_type!r}, task_id={self._task_id}, master={self._master!r}, "
            f"model_dir={self._model_dir!r}, is_chief={self._is_chief})"
        )
