"""``tf.train.replica_device_setter``: a device function putting variables on ps tasks, other ops on workers.

The returned function is used as ``with tf.device(replica_device_setter(...)):``. For each op created in
the block it returns a device: ops whose type is in ``ps_ops`` (variables and other state holders) go to
``ps_device`` with a task chosen by ``ps_strategy`` (round-robin by default); every other op goes to
``worker_device``. What inner ``tf.device`` blocks asked for is kept field by field (the graph's device
stack hands the op to the function with those fields already set), so ``/gpu:1`` or ``/task:1`` inside the
block refine the worker device and an inner ``/job:moon`` keeps a variable off the ps job's round-robin.
Behaviour follows TF1's ``tensorflow/python/training/device_setter.py``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    ...         v1 = tf.Variable(1.0, name="v1")
    ...         v2 = tf.Variable(2.0, name="v2")
    ...         s = v1 + v2
    ...         with tf.device("/gpu:1"):
    ...             p = 2 * s
    >>> v1.device, v2.device, s.device, p.device
    ('/job:ps/task:0', '/job:ps/task:1', '/job:worker', '/job:worker/device:GPU:1')
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dtf_notebook.framework.device_spec import DeviceSpec
from dtf_notebook.protos.config_pb import ClusterDef

__all__ = ["STANDARD_PS_OPS", "replica_device_setter"]

_log = logging.getLogger(__name__)

#: Op types placed on ps tasks by default: TF1's list. It holds ``ResourceConditionalAccumulator``, the op
#: ``tf.ConditionalAccumulator`` builds, so a dense accumulator goes to a ps task; queues and the
#: reference-typed ``SparseConditionalAccumulator`` are not in it (TF leaves them with the worker unless pinned).
STANDARD_PS_OPS = (
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
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTreeResource",
)


class _RoundRobinStrategy:
    """Cycles through ps tasks ``0, 1, ..., num_tasks - 1, 0, ...``, one per ps op."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op: Any) -> int:
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    """The device function behind :func:`replica_device_setter` (its state: the strategy's counters)."""

    def __init__(
        self,
        ps_tasks: int,
        ps_device: str,
        worker_device: str,
        merge_devices: bool,
        ps_ops: Iterable[str],
        ps_strategy: Callable[[Any], int],
    ) -> None:
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op: Any) -> str:
        """The device for ``op``, whose ``.device`` holds what the scopes inside this one asked for."""
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps_device = DeviceSpec.from_string(self._ps_device)
            # The strategy picks the task only when the op stays on the ps job: an inner
            # "/job:moon" wins, and then the ps task number would be meaningless.
            if ps_device.job and (not current.job or current.job == ps_device.job):
                ps_device = ps_device.replace(task=int(self._ps_strategy(op)))
            return ps_device.make_merged_spec(current).to_string()
        worker_device = DeviceSpec.from_string(self._worker_device or "")
        return worker_device.make_merged_spec(current).to_string()


def _ps_task_count(cluster: Any, ps_job: str | None) -> int | None:
    """How many tasks the ps job of ``cluster`` has; None when it has no such job.

    ``cluster`` is a ``ClusterSpec`` (anything with ``as_dict()``), a dict of job name to task addresses
    (a list, or a dict by task index), a ``tf.train.ClusterDef`` protobuf or its plain-data form
    ``{"job": [{"name", "tasks"}]}``.
    """
    if callable(getattr(cluster, "as_dict", None)):
        jobs = cluster.as_dict()
    elif isinstance(cluster, ClusterDef):
        jobs = {j.name: dict(j.tasks) for j in cluster.job}
    elif isinstance(cluster, Mapping):
        job_defs = cluster.get("job") if len(cluster) == 1 else None
        if isinstance(job_defs, list) and all(isinstance(j, Mapping) for j in job_defs):
            jobs = {j.get("name"): j.get("tasks", {}) for j in job_defs}
        else:
            jobs = dict(cluster)
    else:
        raise TypeError(
            "cluster must be a ClusterSpec, a dict of job names to task addresses or a ClusterDef, "
            f"got {type(cluster).__name__}: {cluster!r}"
        )
    tasks = jobs.get(ps_job)
    if tasks is None:
        return None
    if not isinstance(tasks, list | tuple | Mapping):
        raise TypeError(f"The tasks of job {ps_job!r} must be a list or a dict of addresses, got {tasks!r}")
    return len(tasks)


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster: Any = None,
    ps_ops: Iterable[str] | None = None,
    ps_strategy: Callable[[Any], int] | None = None,
) -> Callable[[Any], str] | None:
    """Returns a device function for ``tf.device`` that places variables on ps tasks and the rest on workers.

    Args:
        ps_tasks: Number of ps tasks; ignored when ``cluster`` is given.
        ps_device: Device of the ps job (``""``: no op goes to a ps).
        worker_device: Device for every op not in ``ps_ops`` (``""``: leave them as they are).
        merge_devices: Keep the fields inner ``tf.device`` blocks set and fill only the others. With False an op
            that already has any device keeps it unchanged (TF1's deprecated behaviour).
        cluster: A ``ClusterSpec``, a dict of job name to addresses, or a cluster def: ``ps_tasks`` is the
            number of tasks of the ps job in it.
        ps_ops: Op types placed on the ps job (default :data:`STANDARD_PS_OPS`).
        ps_strategy: ``fn(op) -> task index`` choosing each ps op's task (default: round-robin). See
            ``tf.contrib.training.GreedyLoadBalancingStrategy`` and ``RandomStrategy``.

    Returns:
        The device function, or None when there are no ps tasks (``tf.device(None)`` then changes nothing).

    Raises:
        TypeError: ``cluster`` has the wrong type, or ``ps_strategy`` is not callable.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222"]}
        >>> with tf.Graph().as_default():
        ...     with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        ...         w = [tf.Variable(0.0, name=f"w{i}") for i in range(3)]
        ...         with tf.device("/job:moon"):
        ...             m = tf.Variable(0.0, name="m")
        >>> [v.device for v in w], m.device
        (['/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:0'], '/job:moon')
        >>> tf.train.replica_device_setter(cluster={"worker": ["w0:2222"]}) is None
        True
    """
    if cluster is not None:
        count = _ps_task_count(cluster, DeviceSpec.from_string(ps_device).job)
        if count is None:
            return None
        ps_tasks = count
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        # TF1 places LOCAL_VARIABLES on the ps too: the op type is all the function sees.
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        _log.warning("DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy)
    return chooser.device_function
