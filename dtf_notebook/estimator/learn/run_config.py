"""``tf.contrib.learn.RunConfig``: the Experiment-era RunConfig, whose ``TF_CONFIG`` may hold a ``master`` job (the
chief) or none (then ``worker:0`` is the chief), and an ``environment`` (``local``, ``cloud``): an Experiment starts
its task's server only in the ``cloud`` environment, as TF's did.

Example:
    >>> import json, os
    >>> os.environ["TF_CONFIG"] = json.dumps({"cluster": {"ps": ["h:1"], "worker": ["h:2", "h:3"]},
    ...                                       "task": {"type": "worker", "index": 0}, "environment": "cloud"})
    >>> config = RunConfig()
    >>> config.is_chief, config.master, config.environment, config.num_worker_replicas
    (True, 'grpc://h:2', 'cloud', 2)
    >>> del os.environ["TF_CONFIG"]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.estimator.run_config import RunConfig as CoreRunConfig

__all__ = ["RunConfig", "Environment"]


class Environment:
    """Where a contrib.learn program runs (``TF_CONFIG``'s ``environment``).

    Example:
        >>> Environment.CLOUD
        'cloud'
    """

    LOCAL = "local"
    CLOUD = "cloud"
    GOOGLE = "google"


class RunConfig(CoreRunConfig):
    """``tf.contrib.learn.RunConfig``: a core RunConfig with contrib.learn's reading of ``TF_CONFIG``.

    Raises:
        ValueError: the task is not in the cluster.

    Example:
        >>> RunConfig(model_dir="/tmp/m").environment
        'local'
    """

    def __init__(self, master: str | None = None, evaluation_master: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if master is not None:
            self._master = master
        if evaluation_master:
            self._evaluation_master = evaluation_master

    def _init_distributed_setting_from_environment_var(self, tf_config: dict[str, Any]) -> None:
        self._environment = tf_config.get("environment", Environment.LOCAL)
        self._service = tf_config.get("service")
        self._cluster_spec = ClusterSpec(tf_config.get("cluster", {}))
        task = tf_config.get("task", {})
        self._task_type = task.get("type")
        self._task_id = int(task.get("index", 0) or 0)
        jobs = self._cluster_spec.jobs
        if self._task_type and jobs:
            if self._task_type not in jobs:
                raise ValueError(
                    f"{self._task_type} is not a valid task_type in the cluster_spec:\n{self._cluster_spec}"
                )
            addresses = self._cluster_spec.job_tasks(self._task_type)
            if not 0 <= self._task_id < len(addresses):
                raise ValueError(
                    f"{self._task_id} is not a valid task_id for task_type {self._task_type} in the "
                    f"cluster_spec:\n{self._cluster_spec}"
                )
            self._master = tf_config.get("session_master", "grpc://" + addresses[self._task_id])
        else:
            self._master = tf_config.get("session_master", "")
        self._evaluation_master = tf_config.get("eval_session_master", "")
        self._num_ps_replicas = len(self._cluster_spec.job_tasks("ps")) if "ps" in jobs else 0
        self._num_worker_replicas = sum(len(self._cluster_spec.job_tasks(j)) for j in ("master", "worker") if j in jobs)
        if not jobs:
            self._is_chief = True
        elif "master" in jobs:
            self._is_chief = self._task_type == "master" and self._task_id == 0
        else:
            self._is_chief = self._task_type == "worker" and self._task_id == 0
        self._global_id_in_cluster = None

    environment = property(lambda self: self._environment, doc="local, cloud or google.")

    @property
    def tf_config(self) -> Any:
        """The session ConfigProto (contrib.learn's name for it)."""
        return self._session_config
