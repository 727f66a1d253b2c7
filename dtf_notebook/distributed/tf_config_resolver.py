"""The resolver that reads the cluster and task from ``TF_CONFIG`` (Kubernetes / Kubeflow TFJob operators).

Example:
    >>> env = {"TF_CONFIG": '{"cluster": {"ps": ["p0:1"], "worker": ["w0:1"]}, "task": {"type": "ps", "index": 0}}'}
    >>> TFConfigClusterResolver(environ=env).master()
    'zmq://p0:1'
"""

from __future__ import annotations

import json
from typing import Any

from dtf_notebook.distributed.cluster_resolver import ClusterResolver, Environ, _environ
from dtf_notebook.distributed.cluster_spec import ClusterSpec

__all__ = ["TFConfigClusterResolver"]


class TFConfigClusterResolver(ClusterResolver):
    """Reads the cluster and task from the ``TF_CONFIG`` environment variable, on every call.

    ``TF_CONFIG`` is JSON: ``{"cluster": {job: [addresses]}, "task": {"type": ...,
    "index": ...}, "rpc_layer": ..., "session_master": ...}``, every key optional.
    Constructor arguments (and the setters) override what it says.

    Example:
        >>> env = {"TF_CONFIG": '{"cluster": {"worker": ["w0:1", "w1:1"]}, "task": {"type": "worker", "index": 0}}'}
        >>> resolver = TFConfigClusterResolver(environ=env)
        >>> resolver.cluster_spec(), resolver.master(rpc_layer="grpc")
        (ClusterSpec({'worker': ['w0:1', 'w1:1']}), 'grpc://w0:1')

    Raises:
        ValueError: (from its methods and properties) ``TF_CONFIG`` is not a
            JSON object, or its ``cluster`` or ``task`` section is malformed.
    """

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str | None = None,
        *,
        environ: Environ | None = None,
    ) -> None:
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment
        self._environ = environ

    def _tf_config(self) -> dict[str, Any]:
        text = _environ(self._environ).get("TF_CONFIG", "").strip() or "{}"
        try:
            config = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"TF_CONFIG is not valid JSON ({error}): {text!r}") from None
        if not isinstance(config, dict):
            raise ValueError(f"TF_CONFIG must be a JSON object, not {text!r}")
        return config

    def _configured_task(self) -> tuple[str | None, int | None]:
        task = self._tf_config().get("task", {})
        if not isinstance(task, dict):
            raise ValueError(f"TF_CONFIG 'task' must be an object like {{'type': 'worker', 'index': 0}}, not {task!r}")
        task_type, index = task.get("type"), task.get("index")
        try:
            task_id = None if index is None else int(index)
        except (TypeError, ValueError):
            raise ValueError(f"TF_CONFIG task index {index!r} is not an integer") from None
        return (None if task_type is None else str(task_type)), task_id

    def _configured_rpc_layer(self) -> str | None:
        return self._tf_config().get("rpc_layer")

    def cluster_spec(self) -> ClusterSpec:
        """Returns ``TF_CONFIG``'s cluster (empty when it has none).

        Raises:
            ValueError: ``TF_CONFIG`` or its ``cluster`` section is malformed.
        """
        cluster = self._tf_config().get("cluster", {})
        try:
            return ClusterSpec(cluster)
        except (TypeError, ValueError) as error:
            raise ValueError(f"TF_CONFIG 'cluster' is invalid: {error}") from None

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """Returns ``session_master`` if set, ``""`` for a one-task cluster, else the task's address.

        Example:
            >>> TFConfigClusterResolver(environ={"TF_CONFIG": '{"cluster": {"worker": ["w0:1"]}}'}).master()
            ''

        Raises:
            RuntimeError: no task given and ``TF_CONFIG`` names none.
            ValueError: the task is not in the cluster, or ``TF_CONFIG`` is malformed.
        """
        session_master = self._tf_config().get("session_master")
        if session_master:
            return str(session_master)
        cluster = self.cluster_spec()
        # TF's rule: no jobs, or one job whose task list has length one, runs in-process.
        jobs = cluster.jobs
        if not jobs or (len(jobs) == 1 and len(cluster.job_tasks(jobs[0])) == 1):
            return ""
        return self._task_master(task_type, task_id, rpc_layer)
