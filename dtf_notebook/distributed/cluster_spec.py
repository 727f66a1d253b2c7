"""``ClusterSpec``: the jobs and tasks of a cluster, as TF1's ``tf.train.ClusterSpec``.

A cluster is a set of jobs (``"ps"``, ``"worker"``, ...); each job holds tasks,
numbered from 0, each with the network address (``"host:port"``) of its server.
A job may be sparse (only some indices known), so a server can be started
without knowing every peer. Construction, accessors, ``as_dict`` and the error
messages follow ``tensorflow/python/training/server_lib.py`` (checked against
TF 2.21's ``tf.train.ClusterSpec``), with these deliberate differences:

* ``jobs`` and ``as_dict`` keep the order the jobs were given in, as TF's do
  (a copy of a ``ClusterSpec`` lists them sorted, as TF's does); ``repr``,
  ``as_cluster_def`` and ``task_names`` are sorted. Equality ignores the order.
* Job names must be valid in device names, ``[a-zA-Z][a-zA-Z0-9_]*``: TF accepts
  ``"bad-name"`` here and then aborts the process when a server starts.
* Task indices must be non-negative and unique after ``int()``; ``bytes`` job
  names and addresses are decoded to ``str``; ``job_tasks`` of an empty job
  raises ``ValueError`` naming the job (TF's is ``max()``'s); ``{"job": []}`` is
  the empty cluster's def (TF: a job named ``"job"`` without tasks).
* ``as_cluster_def`` returns TF's ``ClusterDef`` protobuf, as TF's does, and a ``ClusterDef`` is accepted;
  :meth:`ClusterSpec.as_cluster_def_dict` gives the same as plain data (msgpack, JSON), which is accepted too.
* A ``ClusterSpec`` is immutable and hashable, and equals only another
  ``ClusterSpec`` (TF compares its private dict, so it "equals" some dicts).

Example:
    >>> cluster = ClusterSpec({"worker": {1: "w1:2222"}, "ps": ["ps0:2222"]})
    >>> cluster.jobs, cluster.num_tasks("worker"), cluster.task_address("ps", 0)
    (['worker', 'ps'], 1, 'ps0:2222')
    >>> cluster.job_tasks("worker")
    [None, 'w1:2222']
    >>> cluster.task_names()
    ['/job:ps/replica:0/task:0', '/job:worker/replica:0/task:1']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dtf_notebook.protos.config_pb import ClusterDef

__all__ = ["ClusterSpec"]

# DeviceNameUtils::ParseFullName's rule for job names; others break device names.
_JOB_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9_]*\Z")

_BAD_CLUSTER = (
    "cluster must be a dictionary mapping one or more job names to lists of network addresses, "
    "or a ClusterDef protocol buffer (or its plain-data form {'job': [{'name': ..., 'tasks': {...}}]})"
)


def _as_text(value: Any, what: str) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    raise TypeError(f"{what} {value!r} must be bytes or unicode")


def _job_name(name: Any) -> str:
    text = _as_text(name, "Job name")
    if not _JOB_NAME.match(text):
        raise ValueError(
            f"Job name {text!r} is not valid: it must start with a letter and contain only letters, digits and '_'"
        )
    return text


def _task_index(index: Any, job: str) -> int:
    # int() like TF, so JSON's string keys ("1") work; floats and bools would
    # silently truncate there, so they are refused here.
    if isinstance(index, bool) or not isinstance(index, int | str):
        raise TypeError(f"Task index {index!r} of job {job!r} must be an integer")
    try:
        value = int(index)
    except ValueError:
        raise ValueError(f"Task index {index!r} of job {job!r} is not an integer") from None
    if value < 0:
        raise ValueError(f"Task index {index!r} of job {job!r} must not be negative")
    return value


def _job_tasks(job: str, tasks: Any) -> dict[int, str]:
    if isinstance(tasks, list | tuple):
        items = list(enumerate(tasks))
    elif isinstance(tasks, Mapping):
        items = list(tasks.items())
    else:
        raise TypeError(
            f"The tasks for job {job!r} must be a list or a dictionary from integers to strings. Got {tasks!r}."
        )
    result: dict[int, str] = {}
    for index, address in items:
        position = _task_index(index, job)
        if position in result:
            raise ValueError(f"Task index {index!r} of job {job!r} is given twice")
        result[position] = _as_text(address, "Task address")
    return result


def _is_cluster_def(cluster: Mapping[Any, Any]) -> bool:
    # {"job": [{"name": ..., "tasks": ...}]} cannot be a job named "job": task
    # addresses are strings, never dicts. {"job": []} is read as the empty
    # cluster's def (TF: a job named "job" with no tasks) so that every
    # as_cluster_def() result round-trips.
    jobs = cluster.get("job") if len(cluster) == 1 else None
    return isinstance(jobs, list) and all(isinstance(job, Mapping) for job in jobs)


def _from_cluster_def(cluster_def: Any) -> dict[str, dict[int, str]]:
    if isinstance(cluster_def, ClusterDef):
        cluster_def = {"job": [{"name": job.name, "tasks": dict(job.tasks)} for job in cluster_def.job]}
    if not isinstance(cluster_def, Mapping) or not isinstance(cluster_def.get("job", []), list):
        raise TypeError(f"A cluster def must be a dict {{'job': [...]}}, not {cluster_def!r}")
    spec: dict[str, dict[int, str]] = {}
    for job_def in cluster_def.get("job", []):
        if not isinstance(job_def, Mapping) or "name" not in job_def:
            raise TypeError(f"A job in a cluster def must be a dict with 'name' and 'tasks', not {job_def!r}")
        name = _job_name(job_def["name"])
        if name in spec:
            raise ValueError(f"Job {name!r} appears twice in the cluster def")
        tasks = job_def.get("tasks", {})
        if not isinstance(tasks, Mapping):
            raise TypeError(f"The tasks of job {name!r} in a cluster def must be a dict, not {tasks!r}")
        spec[name] = _job_tasks(name, tasks)
    return spec


class ClusterSpec:
    """Represents a cluster as a set of tasks, organised into jobs (``tf.train.ClusterSpec``).

    Example:
        >>> cluster = ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["ps0:2222"]})
        >>> cluster
        ClusterSpec({'ps': ['ps0:2222'], 'worker': ['w0:2222', 'w1:2222']})
        >>> ClusterSpec(cluster.as_cluster_def()) == ClusterSpec(cluster.as_cluster_def_dict()) == cluster
        True
        >>> cluster.num_tasks("pss")
        Traceback (most recent call last):
        ...
        ValueError: No such job in cluster: 'pss'

    Args:
        cluster: a dict mapping job names to lists of addresses or to dicts
            ``{task_index: address}``; another ``ClusterSpec``; a ``ClusterDef``
            protobuf; or the plain-data cluster def of :meth:`as_cluster_def_dict`.

    Raises:
        TypeError: ``cluster``, a job's tasks, a job name or an address has the wrong type.
        ValueError: a job name is not valid in a device name, or a task index
            is negative, not an integer or given twice.
    """

    __slots__ = ("_spec",)
    _spec: dict[str, dict[int, str]]

    def __init__(self, cluster: Mapping[Any, Any] | ClusterSpec | ClusterDef) -> None:
        if isinstance(cluster, ClusterDef):
            spec = _from_cluster_def(cluster)
        elif isinstance(cluster, ClusterSpec):
            # TF copies through its (sorted) ClusterDef, so a copy lists its jobs sorted.
            spec = {job: dict(cluster._spec[job]) for job in sorted(cluster._spec)}
        elif isinstance(cluster, Mapping):
            if _is_cluster_def(cluster):
                spec = _from_cluster_def(cluster)
            else:
                spec = {}
                for job, tasks in cluster.items():
                    # Type first, so a bad name type reads as TF's TypeError.
                    name = _job_name(job)
                    if name in spec:
                        raise ValueError(f"Job {name!r} appears twice in the cluster")
                    spec[name] = _job_tasks(name, tasks)
        else:
            raise TypeError(f"{_BAD_CLUSTER}; got {cluster!r}")
        # Jobs keep the order given (TF's ``jobs``); tasks are sorted by index.
        object.__setattr__(self, "_spec", {job: dict(sorted(tasks.items())) for job, tasks in spec.items()})

    @classmethod
    def from_cluster_def(cls, cluster_def: Mapping[str, Any] | ClusterDef) -> ClusterSpec:
        """Builds a ``ClusterSpec`` from a ``ClusterDef`` protobuf or its plain-data form (:meth:`as_cluster_def_dict`).

        The constructor accepts the same data; this name says what is meant.
        Task keys may be strings, as after a JSON round trip.

        Example:
            >>> ClusterSpec.from_cluster_def({"job": [{"name": "ps", "tasks": {"0": "ps0:1"}}]})
            ClusterSpec({'ps': ['ps0:1']})
            >>> bool(ClusterSpec.from_cluster_def({"job": []}))
            False

        Raises:
            TypeError: ``cluster_def`` is not shaped like a cluster def.
            ValueError: a job name or task index is invalid or repeated.
        """
        # A dict of job -> dict is never read as a cluster def, so this cannot recurse.
        return cls(_from_cluster_def(cluster_def))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ClusterSpec is immutable; cannot set {name!r}")

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._spec[job_name]
        except (KeyError, TypeError):
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    @property
    def jobs(self) -> list[str]:
        """The job names of this cluster, in the order they were given (sorted for a copied ``ClusterSpec``).

        Example:
            >>> ClusterSpec({"worker": ["w0:1"], "ps": ["p0:1"]}).jobs
            ['worker', 'ps']
        """
        return list(self._spec)

    def num_tasks(self, job_name: str) -> int:
        """Returns how many tasks job ``job_name`` defines (gaps of a sparse job not counted).

        Example:
            >>> ClusterSpec({"worker": {0: "w0:1", 5: "w5:1"}}).num_tasks("worker")
            2

        Raises:
            ValueError: ``job_name`` is not a job of this cluster.
        """
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        """Returns the sorted task indices defined in job ``job_name``.

        Example:
            >>> ClusterSpec({"worker": {3: "w3:1", 1: "w1:1"}}).task_indices("worker")
            [1, 3]

        Raises:
            ValueError: ``job_name`` is not a job of this cluster.
        """
        return list(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        """Returns the address of task ``task_index`` of job ``job_name``.

        Example:
            >>> cluster = ClusterSpec({"worker": ["w0:1", "w1:1"]})
            >>> cluster.task_address("worker", 1)
            'w1:1'
            >>> cluster.task_address("worker", 3)
            Traceback (most recent call last):
            ...
            ValueError: No task with index 3 in job 'worker'

        Raises:
            ValueError: no such job, or no such task in it.
        """
        job = self._job(job_name)
        try:
            return job[task_index]
        except (KeyError, TypeError):
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Returns the addresses of job ``job_name`` as a list indexed by task, ``None`` in gaps.

        Example:
            >>> ClusterSpec({"worker": {1: "w1:1", 3: "w3:1"}}).job_tasks("worker")
            [None, 'w1:1', None, 'w3:1']

        Raises:
            ValueError: ``job_name`` is not a job of this cluster, or the job has no tasks (as in TF).
        """
        job = self._job(job_name)
        if not job:
            raise ValueError(f"Job {job_name!r} has no tasks")
        tasks: list[str | None] = [None] * (max(job) + 1)
        for index, address in job.items():
            tasks[index] = address
        return tasks

    def as_dict(self) -> dict[str, list[str] | dict[int, str]]:
        """Returns a new dict of job to a list of addresses (dense job) or ``{index: address}`` (sparse).

        Jobs come in the order of :attr:`jobs`; an empty job maps to ``{}``, as in TF.

        Example:
            >>> ClusterSpec({"ps": ["p0:1"], "worker": {2: "w2:1"}, "chief": []}).as_dict()
            {'ps': ['p0:1'], 'worker': {2: 'w2:1'}, 'chief': {}}
        """
        result: dict[str, list[str] | dict[int, str]] = {}
        for job, tasks in self._spec.items():
            dense = bool(tasks) and max(tasks) + 1 == len(tasks)
            result[job] = list(tasks.values()) if dense else dict(tasks)
        return result

    def as_cluster_def(self) -> ClusterDef:
        """Returns the cluster as TF's ``ClusterDef`` protobuf (``tf.train.ClusterDef``); jobs and tasks sorted.

        Example:
            >>> cluster_def = ClusterSpec({"worker": ["w0:1"], "ps": {1: "p1:1"}}).as_cluster_def()
            >>> [(job.name, dict(job.tasks)) for job in cluster_def.job]
            [('ps', {1: 'p1:1'}), ('worker', {0: 'w0:1'})]
        """
        cluster_def = ClusterDef()
        for job, tasks in self._sorted():
            cluster_def.job.add(name=job, tasks=tasks)
        return cluster_def

    def as_cluster_def_dict(self) -> dict[str, list[dict[str, Any]]]:
        """Returns the cluster as new plain data shaped like TF's ``ClusterDef`` protobuf.

        Jobs and tasks are sorted; the result is safe to send as msgpack (or
        JSON, whose string task keys :meth:`from_cluster_def` accepts).

        Example:
            >>> ClusterSpec({"worker": ["w0:1"], "ps": {1: "p1:1"}}).as_cluster_def_dict()
            {'job': [{'name': 'ps', 'tasks': {1: 'p1:1'}}, {'name': 'worker', 'tasks': {0: 'w0:1'}}]}
        """
        return {"job": [{"name": job, "tasks": dict(tasks)} for job, tasks in self._sorted()]}

    def task_names(self) -> list[str]:
        """Returns the device-name prefix of every task, sorted by job then index.

        Example:
            >>> ClusterSpec({"worker": ["w0:1", "w1:1"], "ps": ["p0:1"]}).task_names()
            ['/job:ps/replica:0/task:0', '/job:worker/replica:0/task:0', '/job:worker/replica:0/task:1']
        """
        return [f"/job:{job}/replica:0/task:{index}" for job, tasks in self._sorted() for index in tasks]

    def task_of(self, address: str) -> tuple[str, int] | None:
        """Returns ``(job, index)`` of the first task (by job, then index) at ``address``, else ``None``.

        Example:
            >>> cluster = ClusterSpec({"worker": ["localhost:2223"], "ps": ["localhost:2222"]})
            >>> cluster.task_of("localhost:2223"), cluster.task_of("localhost:9")
            (('worker', 0), None)
        """
        for job, tasks in self._sorted():
            for index, task_address in tasks.items():
                if task_address == address:
                    return job, index
        return None

    def _sorted(self) -> list[tuple[str, dict[int, str]]]:
        return sorted(self._spec.items())

    def __bool__(self) -> bool:
        return bool(self._spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterSpec):
            return NotImplemented
        return self._spec == other._spec

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(tuple((job, tuple(tasks.items())) for job, tasks in self._sorted()))

    def __repr__(self) -> str:
        as_dict = self.as_dict()
        items = ", ".join(f"{job!r}: {as_dict[job]!r}" for job in sorted(as_dict))
        return f"ClusterSpec({{{items}}})"

    __str__ = __repr__
