"""Cluster resolvers: find the cluster and this process's task from the environment.

Mirrors ``tf.distribute.cluster_resolver`` (TF 2.21's ``cluster_resolver.py``,
``tfconfig_cluster_resolver.py`` and ``slurm_cluster_resolver.py``):

* :class:`SimpleClusterResolver` holds what it is given.
* :class:`TFConfigClusterResolver` reads the ``TF_CONFIG`` JSON that Kubernetes /
  Kubeflow TFJob operators set, every time it is asked (never at import).
* :class:`SlurmClusterResolver` reads SLURM's job-step variables when built.
* :func:`resolve_from_environment` picks one of the last two, or ``None``.

Differences from TF, all deliberate: ``master()`` defaults to the ``zmq://``
scheme (``rpc_layer="grpc"`` gives ``grpc://``, which our sessions accept);
``SimpleClusterResolver.master()`` without arguments falls back to its own task's
address; resolvers take an optional ``environ`` mapping to read (and, for
SLURM's ``CUDA_VISIBLE_DEVICES``, write) instead of ``os.environ``; SLURM tasks
follow the node list's order (TF sorts host names, so ``node10`` came before
``node9``) and GPUs are only managed when ``gpus_per_node`` or ``gpus_per_task``
is given (TF runs ``nvidia-smi``). Task types stay TF's: ``chief``, ``worker``,
``ps`` and ``evaluator`` (the evaluator is usually not part of the cluster).

Example:
    >>> import json
    >>> env = {"TF_CONFIG": json.dumps({"cluster": {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"]},
    ...                                 "task": {"type": "worker", "index": 1}})}
    >>> resolver = resolve_from_environment(environ=env)
    >>> resolver.task_type, resolver.task_id, resolver.master()
    ('worker', 1, 'zmq://w1:2222')
"""

from __future__ import annotations

import abc
import itertools
import json
import os
import re
from collections.abc import Mapping, MutableMapping
from typing import Any

from dtf_notebook.distributed.cluster_spec import ClusterSpec

__all__ = [
    "ClusterResolver",
    "SimpleClusterResolver",
    "SlurmClusterResolver",
    "TFConfigClusterResolver",
    "expand_hostlist",
    "expand_tasks_per_node",
    "format_master_url",
    "resolve_from_environment",
]

DEFAULT_RPC_LAYER = "zmq"
Environ = MutableMapping[str, str]


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """Prefixes ``master`` with ``rpc_layer://`` unless it is empty or already has a scheme.

    Example:
        >>> format_master_url("w0:2222", "zmq"), format_master_url("grpc://w0:2222", "zmq")
        ('zmq://w0:2222', 'grpc://w0:2222')
    """
    # TF prefixes blindly ("grpc://grpc://..."); an address with a scheme is final.
    if not master or not rpc_layer or "://" in master:
        return master
    return f"{rpc_layer}://{master}"


class ClusterResolver(abc.ABC):
    """Base class: tells a process its cluster, its own task and the master to talk to.

    Subclasses implement :meth:`cluster_spec` and :meth:`master`. ``task_type``,
    ``task_id`` and ``rpc_layer`` are settable; a value set wins over what the
    environment says, and ``None`` means unknown (``rpc_layer``: ``"zmq"``).

    Example:
        >>> resolver = SimpleClusterResolver(ClusterSpec({"ps": ["p0:1"]}), task_type="ps", task_id=0)
        >>> resolver.task_id = 3
        >>> isinstance(resolver, ClusterResolver), resolver.task_id, resolver.rpc_layer, resolver.environment
        (True, 3, 'zmq', '')
    """

    _task_type: str | None = None
    _task_id: int | None = None
    _rpc_layer: str | None = None
    _environment: str | None = None

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """Returns the cluster as it is now (read afresh on every call)."""

    @abc.abstractmethod
    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """Returns the session target (``"zmq://host:port"``, or ``""`` for in-process)."""

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns accelerator counts per task (``{"GPU": 2}``); ``{}`` when the resolver does not know.

        Example:
            >>> SimpleClusterResolver(ClusterSpec({}), num_accelerators={"GPU": 2}).num_accelerators()
            {'GPU': 2}
        """
        return {}

    def _configured_task(self) -> tuple[str | None, int | None]:
        # What the environment names as this task; overridden by TFConfigClusterResolver.
        return None, None

    def _configured_rpc_layer(self) -> str | None:
        return None

    @property
    def environment(self) -> str:
        """``""`` outside Google's internal environment, as in TF."""
        return self._environment or ""

    @property
    def task_type(self) -> str | None:
        """This process's job name (``"chief"``, ``"worker"``, ``"ps"``, ``"evaluator"``...), if known."""
        return self._task_type if self._task_type is not None else self._configured_task()[0]

    @task_type.setter
    def task_type(self, task_type: str | None) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> int | None:
        """This process's task index within its job, if known."""
        return self._task_id if self._task_id is not None else self._configured_task()[1]

    @task_id.setter
    def task_id(self, task_id: int | None) -> None:
        self._task_id = task_id

    @property
    def rpc_layer(self) -> str:
        """The scheme put in front of master addresses: the one set, else the environment's, else ``"zmq"``."""
        return self._rpc_layer or self._configured_rpc_layer() or DEFAULT_RPC_LAYER

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: str | None) -> None:
        self._rpc_layer = rpc_layer

    def _task_master(self, task_type: str | None, task_id: int | None, rpc_layer: str | None) -> str:
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            raise RuntimeError(
                f"Cannot name a master: task_type={task_type!r}, task_id={task_id!r}; "
                "pass both, or give the resolver its own task"
            )
        address = self.cluster_spec().task_address(task_type, task_id)
        return format_master_url(address, rpc_layer or self.rpc_layer)


class SimpleClusterResolver(ClusterResolver):
    """A resolver holding a given cluster and task (``tf.distribute.cluster_resolver.SimpleClusterResolver``).

    The arguments keep TF's order (``master`` second), so pass the rest by keyword.

    Example:
        >>> cluster = ClusterSpec({"ps": ["p0:2222"], "worker": ["w0:2222", "w1:2222"]})
        >>> resolver = SimpleClusterResolver(cluster, task_type="worker", task_id=1)
        >>> resolver.master(), resolver.master("ps", 0, rpc_layer="grpc")
        ('zmq://w1:2222', 'grpc://p0:2222')

    Args:
        cluster_spec: a ``ClusterSpec`` or anything its constructor accepts.
        master: the session target when ``master()`` is called without a task;
            ``""`` means this process's own task (or in-process if it has none).
        task_type, task_id: this process's task.
        environment: returned by ``environment``.
        num_accelerators: returned by ``num_accelerators()``.
        rpc_layer: scheme for master addresses (``None``: ``"zmq"``).

    Raises:
        TypeError: ``master`` or ``task_type`` is not a string, or ``task_id`` not an int.
    """

    def __init__(
        self,
        cluster_spec: ClusterSpec | Mapping[str, Any],
        master: str = "",
        task_type: str | None = None,
        task_id: int | None = None,
        environment: str = "",
        num_accelerators: Mapping[str, int] | None = None,
        rpc_layer: str | None = DEFAULT_RPC_LAYER,
    ) -> None:
        # Checked because TF's order puts master second: SimpleClusterResolver(c, "worker", 0) must fail loudly.
        if not isinstance(master, str):
            raise TypeError(f"master must be a string, not {master!r}")
        if task_type is not None and not isinstance(task_type, str):
            raise TypeError(f"task_type must be a job name string, not {task_type!r}")
        if task_id is not None and (isinstance(task_id, bool) or not isinstance(task_id, int)):
            raise TypeError(f"task_id must be an integer, not {task_id!r}")
        self._cluster_spec = ClusterSpec(cluster_spec)
        self._master = master
        self._task_type = task_type
        self._task_id = task_id
        self._environment = environment
        self._num_accelerators = dict(num_accelerators or {})
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """Returns the cluster given to the constructor."""
        return self._cluster_spec

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """Returns the given task's address, else the ``master`` given, else this task's address, else ``""``.

        Example:
            >>> SimpleClusterResolver(ClusterSpec({"w": ["w0:1"]}), master="zmq://other:5").master()
            'zmq://other:5'

        Raises:
            ValueError: the task is not in the cluster.
        """
        explicit = task_type is not None or task_id is not None
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if (self._master and not explicit) or task_type is None or task_id is None:
            return format_master_url(self._master, rpc_layer or self.rpc_layer)
        return self._task_master(task_type, task_id, rpc_layer)

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns a copy of the ``num_accelerators`` given to the constructor."""
        return dict(self._num_accelerators)


def _environ(environ: Environ | None) -> Environ:
    # Resolved on each call, so tests and launchers may change os.environ freely.
    return os.environ if environ is None else environ


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


def _split_hostlist(hostlist: str) -> list[str]:
    # Commas inside brackets separate ranges, not hosts.
    parts, current, in_brackets = [], [], False
    for char in hostlist:
        if char == "[":
            if in_brackets:
                raise ValueError("nested '['")
            in_brackets = True
        elif char == "]":
            if not in_brackets:
                raise ValueError("']' without '['")
            in_brackets = False
        elif char == "," and not in_brackets:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    if in_brackets:
        raise ValueError("'[' without ']'")
    parts.append("".join(current))
    return parts


def _expand_ranges(ranges: str) -> list[str]:
    values = []
    for item in ranges.split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if match is None:
            raise ValueError(f"bad range {item!r}")
        low, high = match.group(1), match.group(2) or match.group(1)
        if int(high) < int(low):
            raise ValueError(f"range {item!r} runs backwards")
        # SLURM keeps the lower bound's width: "[08-10]" is node08..node10.
        values.extend(str(number).zfill(len(low)) for number in range(int(low), int(high) + 1))
    return values


def expand_hostlist(hostlist: str) -> list[str]:
    """Expands a SLURM host list (``node[01-03,07],gpu-a[1-2]``) into host names, in order.

    Several bracket groups in one name vary rightmost-fastest, as ``scontrol show hostnames`` does.

    Example:
        >>> expand_hostlist("node[01-03,07],gpu-a[1-2]")
        ['node01', 'node02', 'node03', 'node07', 'gpu-a1', 'gpu-a2']
        >>> expand_hostlist("r[1-2]n[8-9]")
        ['r1n8', 'r1n9', 'r2n8', 'r2n9']

    Raises:
        ValueError: the list is empty or malformed (the message quotes it).
    """
    hosts = []
    try:
        if not hostlist.strip():
            raise ValueError("it is empty")
        for part in _split_hostlist(hostlist.strip()):
            if not part:
                raise ValueError("empty host name")
            pieces = re.split(r"\[([^\]]*)\]", part)
            # re.split alternates literal text (even positions) and bracket contents (odd).
            choices = [[piece] if i % 2 == 0 else _expand_ranges(piece) for i, piece in enumerate(pieces)]
            hosts.extend("".join(combination) for combination in itertools.product(*choices))
    except ValueError as error:
        raise ValueError(f"Invalid SLURM host list {hostlist!r}: {error}") from None
    return hosts


def expand_tasks_per_node(tasks_per_node: str) -> list[int]:
    """Expands SLURM's tasks-per-node list (``"2(x3),1"``) into one count per node.

    Example:
        >>> expand_tasks_per_node("2(x3),1")
        [2, 2, 2, 1]

    Raises:
        ValueError: the list is malformed (the message quotes it).
    """
    counts = []
    for item in tasks_per_node.strip().split(","):
        match = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", item)
        if match is None:
            raise ValueError(f"Invalid SLURM tasks-per-node list {tasks_per_node!r}: bad item {item!r}")
        counts.extend([int(match.group(1))] * int(match.group(2) or 1))
    return counts


def _slurm_lookup(environ: Environ, *names: str) -> tuple[str, str]:
    # SLURM sets the STEP variables inside `srun`; the job-wide ones are the fallback.
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return name, value
    raise RuntimeError(f"{' or '.join(names)} not found in environment. Not running inside a SLURM job step?")


def _slurm_var(environ: Environ, *names: str) -> str:
    return _slurm_lookup(environ, *names)[1]


def _slurm_int(environ: Environ, *names: str) -> int:
    name, value = _slurm_lookup(environ, *names)
    try:
        return int(value)
    except ValueError:
        raise RuntimeError(f"{name}={value!r} is not an integer") from None


class SlurmClusterResolver(ClusterResolver):
    """Builds the cluster of a SLURM job step (``tf.distribute.cluster_resolver.SlurmClusterResolver``).

    Reads, when built: ``SLURM_PROCID`` (this task's rank); ``SLURM_STEP_NODELIST``
    (else ``SLURM_JOB_NODELIST``) and ``SLURM_STEP_TASKS_PER_NODE`` (else
    ``SLURM_TASKS_PER_NODE``) unless ``tasks_per_node`` is given; and, when
    ``jobs`` is not given, ``SLURM_STEP_NUM_TASKS`` (else ``SLURM_NTASKS``).
    Ranks fill the nodes in node-list order (SLURM's default block distribution);
    on each node, local rank ``r`` listens on ``port_base + r``. Ranks go to jobs
    in sorted job-name order, as in TF: with ``{"ps": 1, "worker": 2}`` rank 0 is
    ``ps:0`` and ranks 1-2 are ``worker:0-1``.

    GPUs are only managed when ``gpus_per_node`` or ``gpus_per_task`` is given
    (the other defaults to fit, ``gpus_per_node // max tasks per node`` or
    ``gpus_per_task * max tasks per node``): local rank ``r`` gets GPUs
    ``r*gpus_per_task ... (r+1)*gpus_per_task - 1``, and with ``auto_set_gpu``
    :meth:`cluster_spec` writes them to ``CUDA_VISIBLE_DEVICES``, so call it
    before torch initialises CUDA.

    Example:
        >>> env = {"SLURM_PROCID": "3", "SLURM_STEP_NODELIST": "node[1-2]", "SLURM_STEP_TASKS_PER_NODE": "2(x2)"}
        >>> resolver = SlurmClusterResolver({"ps": 1, "worker": 3}, port_base=9000, gpus_per_node=4, environ=env)
        >>> resolver.cluster_spec()
        ClusterSpec({'ps': ['node1:9000'], 'worker': ['node1:9001', 'node2:9000', 'node2:9001']})
        >>> resolver.get_task_info(), resolver.master(), env["CUDA_VISIBLE_DEVICES"]
        (('worker', 2), 'zmq://node2:9001', '2,3')

    Raises:
        RuntimeError: a needed SLURM variable is missing, the jobs ask for a
            different number of tasks than SLURM started, or more GPUs than a node has.
        ValueError: a SLURM list is malformed, or ``jobs`` holds a count that is not an int >= 0.
    """

    def __init__(
        self,
        jobs: Mapping[str, int] | None = None,
        port_base: int = 8888,
        gpus_per_node: int | None = None,
        gpus_per_task: int | None = None,
        tasks_per_node: int | Mapping[str, int] | None = None,
        auto_set_gpu: bool = True,
        rpc_layer: str | None = DEFAULT_RPC_LAYER,
        *,
        environ: Environ | None = None,
    ) -> None:
        self._environ = environ
        env = _environ(environ)
        self._rank = _slurm_int(env, "SLURM_PROCID")
        if isinstance(tasks_per_node, Mapping):
            hosts, counts = list(tasks_per_node), [int(count) for count in tasks_per_node.values()]
        else:
            hosts = expand_hostlist(_slurm_var(env, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"))
            if tasks_per_node is None:
                names = ("SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE")
                counts = expand_tasks_per_node(_slurm_var(env, *names))
                if len(counts) != len(hosts):
                    raise RuntimeError(f"{' / '.join(names)} gives {len(counts)} task counts for {len(hosts)} nodes")
            else:
                counts = [int(tasks_per_node)] * len(hosts)
        # Block distribution: ranks fill the nodes in node-list order.
        slots = [(host, local) for host, count in zip(hosts, counts) for local in range(count)]
        if jobs is None:
            jobs = {"worker": _slurm_int(env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS")}
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in jobs.values()):
            raise ValueError(f"jobs must map job names to task counts >= 0, not {dict(jobs)!r}")
        if sum(jobs.values()) != len(slots):
            raise RuntimeError(f"Requested {sum(jobs.values())} tasks ({dict(jobs)}) but SLURM assigned {len(slots)}")
        if not 0 <= self._rank < len(slots):
            raise RuntimeError(f"SLURM_PROCID={self._rank} is outside the {len(slots)} tasks of this step")
        addresses = [f"{host}:{port_base + local}" for host, local in slots]
        cluster, start = {}, 0
        # Sorted job names take consecutive ranks, as in TF.
        for job, count in sorted(jobs.items()):
            cluster[job] = addresses[start : start + count]
            if start <= self._rank < start + count:
                self._task_type, self._task_id = job, self._rank - start
            start += count
        self._cluster_spec = ClusterSpec(cluster)
        self._gpus_per_task = self._plan_gpus(gpus_per_node, gpus_per_task, max(counts, default=0))
        self._local_rank = slots[self._rank][1]
        self._auto_set_gpu = auto_set_gpu
        self._rpc_layer = rpc_layer

    @staticmethod
    def _plan_gpus(gpus_per_node: int | None, gpus_per_task: int | None, max_tasks: int) -> int | None:
        if gpus_per_node is None and gpus_per_task is None:
            return None
        if gpus_per_task is None:
            gpus_per_task = int(gpus_per_node or 0) // max(max_tasks, 1)
        if gpus_per_node is None:
            gpus_per_node = gpus_per_task * max_tasks
        if gpus_per_task * max_tasks > gpus_per_node:
            raise RuntimeError(
                f"Requested more GPUs per node than available: {max_tasks} tasks x "
                f"gpus_per_task={gpus_per_task} > gpus_per_node={gpus_per_node}"
            )
        return gpus_per_task

    def cluster_spec(self) -> ClusterSpec:
        """Returns the step's cluster; with ``auto_set_gpu`` also sets this task's ``CUDA_VISIBLE_DEVICES``."""
        if self._auto_set_gpu and self._gpus_per_task is not None:
            first = self._local_rank * self._gpus_per_task
            gpus = ",".join(str(gpu) for gpu in range(first, first + self._gpus_per_task))
            _environ(self._environ)["CUDA_VISIBLE_DEVICES"] = gpus
        return self._cluster_spec

    def get_task_info(self) -> tuple[str | None, int | None]:
        """Returns ``(task_type, task_id)`` of this process, as in TF."""
        return self.task_type, self.task_id

    def master(self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None) -> str:
        """Returns the address of the given task (default: this process's task) with its scheme.

        Raises:
            ValueError: the task is not in the cluster.
        """
        return self._task_master(task_type, task_id, rpc_layer)

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Returns ``{"GPU": gpus_per_task}``, or ``{}`` when GPUs are not managed."""
        return {} if self._gpus_per_task is None else {"GPU": self._gpus_per_task}


def resolve_from_environment(
    jobs: Mapping[str, int] | None = None, port_base: int = 8888, *, environ: Environ | None = None
) -> ClusterResolver | None:
    """Returns a resolver for the environment: ``TF_CONFIG`` if set, else SLURM if ``SLURM_PROCID`` is set, else None.

    ``jobs`` and ``port_base`` go to :class:`SlurmClusterResolver` (which then
    leaves GPUs alone); ``TF_CONFIG`` names its own jobs and ports.

    Example:
        >>> resolve_from_environment(environ={}) is None
        True
        >>> env = {"SLURM_PROCID": "0", "SLURM_JOB_NODELIST": "n1", "SLURM_TASKS_PER_NODE": "2", "SLURM_NTASKS": "2"}
        >>> resolve_from_environment(environ=env).cluster_spec()
        ClusterSpec({'worker': ['n1:8888', 'n1:8889']})
    """
    env = _environ(environ)
    if env.get("TF_CONFIG", "").strip():
        return TFConfigClusterResolver(environ=environ)
    if env.get("SLURM_PROCID", "").strip():
        return SlurmClusterResolver(jobs, port_base=port_base, environ=environ)
    return None
