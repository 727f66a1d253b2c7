"""The resolver that builds a SLURM job step's cluster, and SLURM's host-list and tasks-per-node parsers.

Example:
    >>> env = {"SLURM_PROCID": "1", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_TASKS_PER_NODE": "1(x2)"}
    >>> env["SLURM_NTASKS"] = "2"
    >>> SlurmClusterResolver(environ=env).master()
    'zmq://n2:8888'
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

from dtf_notebook.distributed.cluster_resolver import DEFAULT_RPC_LAYER, ClusterResolver, Environ, _environ
from dtf_notebook.distributed.cluster_spec import ClusterSpec

__all__ = ["SlurmClusterResolver", "expand_hostlist", "expand_tasks_per_node"]


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
