"""``LocalCluster``: a multi-process cluster on this machine, ready in a moment: the one launcher of local clusters.

Notebooks (``%dtf_cluster start``), the ``dtf-cluster`` command, the examples'
``--local-cluster`` runs, the benchmarks and the cluster tests all start their
local clusters with it.

Every task is its own OS process serving on a free 127.0.0.1 port. Tasks are
forked from a warmed template process (see
:mod:`~dtf_notebook.notebook.task_template`) that imported torch and
dtf_notebook once, so a task starts in tens of milliseconds instead of paying
the imports again. The template starts with the first cluster this process
starts (:func:`prewarm` starts it ahead of time) and exits when the last of them
stops, so a kernel that only connects to other kernels' clusters, or has stopped
its own, keeps no template. Where forking is unavailable, tasks start as plain
processes, with a warning; ``start_method="subprocess"`` asks for them (each task
then imports everything itself, in ``python -m`` processes of its own).

``start()`` returns once every task answers a ``GetStatus`` request; a task
that fails to start stops the others, and the error names it with its exit
code and last log lines. A running cluster has a cluster file (see
:mod:`~dtf_notebook.notebook.cluster_files`) through which another kernel can
:meth:`LocalCluster.connect` to it and the ``dtf-cluster`` command can list and
stop it. Clusters stop when the kernel exits; and since every task watches its
parent process, even a killed kernel leaves no task behind. Nor does it leave
its cluster file and temporary logs for long: the template removes them once
the tasks are gone, and every ``start()`` removes those of clusters whose owner
and tasks are gone (as ``dtf-cluster list`` does), such as those left when the
template was killed too.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with LocalCluster(ps=1, workers=1) as cluster, tf.Graph().as_default():
    ...     with tf.device("/job:ps/task:0"):
    ...         x = tf.Variable(1.5, name="x")
    ...     with tf.Session(cluster.target("worker", 0)) as sess:
    ...         sess.run(x.initializer)
    ...         print(sess.run(x + 1), [t.status for t in cluster.tasks])
    2.5 ['running', 'running']
"""

from __future__ import annotations

import atexit
import contextlib
import html
import json
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed import keyring
from dtf_notebook.distributed.cluster_key import ClusterKey, write_key_file
from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.local_process import free_port, task_env
from dtf_notebook.distributed.peer_limits import PeerLimits
from dtf_notebook.distributed.transport import shared_client
from dtf_notebook.notebook import cluster_files
from dtf_notebook.notebook.pids import stop_pids
from dtf_notebook.notebook.task_processes import TaskProcess, fork_task, subprocess_task
from dtf_notebook.notebook.template_client import (
    TemplateError,
    fork_available,
    hold_template,
    release_template,
    shared_template,
)
from dtf_notebook.runtime.file_access import FileAccess

__all__ = [
    "ClusterStartError",
    "LocalCluster",
    "TaskInfo",
    "UnlockedClusterWarning",
    "prewarm",
    "running_clusters",
    "unlocked_message",
]

_running: dict[int, LocalCluster] = {}  # strong references: a started cluster lives until stopped
_running_lock = threading.Lock()


class ClusterStartError(RuntimeError):
    """A task did not start serving; ``job``, ``task``, ``exit_code`` (None: still running) and ``log`` say more.

    Example:
        >>> error = ClusterStartError("Task worker:1 exited with code 2", "worker", 1, 2, "bad flag")
        >>> error.job, error.task, error.exit_code, str(error)
        ('worker', 1, 2, 'Task worker:1 exited with code 2')
    """

    def __init__(self, message: str, job: str, task: int, exit_code: int | None, log: str) -> None:
        super().__init__(message)
        self.job, self.task, self.exit_code, self.log = job, task, exit_code, log


@dataclass(frozen=True)
class TaskInfo:
    """One row of :attr:`LocalCluster.tasks`.

    Example:
        >>> info = TaskInfo("ps", 0, "127.0.0.1:2222", pid=1234, status="running", devices=("/device:CPU:0",))
        >>> info.target
        'zmq://127.0.0.1:2222'
    """

    job: str
    task: int
    address: str
    pid: int
    status: str
    devices: tuple[str, ...]

    @property
    def target(self) -> str:
        return f"zmq://{self.address}"


def prewarm() -> None:
    """Starts this process's task template in the background, so the next cluster starts warm.

    Returns at once; the template imports torch and dtf_notebook in its own process. Nothing else starts it
    ahead of a cluster (``%load_ext dtf_notebook`` does not); it runs until the next cluster that uses it stops,
    or until this process exits.

    Example:
        >>> prewarm()
    """
    if fork_available():
        shared_template()


def running_clusters() -> list[LocalCluster]:
    """The clusters this process started and has not stopped.

    Example:
        >>> isinstance(running_clusters(), list)
        True
    """
    with _running_lock:
        return list(_running.values())


class UnlockedClusterWarning(RuntimeWarning):
    """A cluster was started without a key (the magic and the CLI say so in a line of their own instead)."""


def unlocked_message(name: str, how: str) -> str:
    """The one line that says what a cluster started without a key (by ``how``) exposes.

    Example:
        >>> unlocked_message("exp", "--no-auth")  # doctest: +ELLIPSIS
        "Cluster 'exp' runs without a key (--no-auth): every process on this machine can open sessions on its ..."
    """
    return (
        f"Cluster {name!r} runs without a key ({how}): every process on this machine can open sessions on its "
        "tasks, read and change their variables and read or write files wherever they may"
    )


def _passphrase_key(text: str, name: str) -> ClusterKey:
    """The key of a key text given for local cluster ``name``: a passphrase is salted with the cluster's name."""
    return ClusterKey.parse(text, salt=f"dtf_notebook local cluster {name}")


def _absolute_root(root: str) -> str:
    """A file root as the tasks must see it: a local path made absolute (their working directory may differ one
    day), a URL (``memory://...``, ``file:...``) as it is.

    Example:
        >>> _absolute_root("memory://ckpts"), _absolute_root("/data/ckpts"), os.path.isabs(_absolute_root("ckpts"))
        ('memory://ckpts', '/data/ckpts', True)
    """
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", root):
        return root
    return os.path.abspath(os.path.expanduser(root))


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


class LocalCluster:
    """A cluster whose tasks are processes on this machine.

    Args:
        ps, workers: Tasks of the ``ps`` and ``worker`` jobs (ignored when ``jobs`` is given).
        jobs: Tasks per job in general, e.g. ``{"ps": 1, "worker": 2, "chief": 1}``.
        virtual_gpus: CPU-backed ``/gpu:N`` devices for every task not in job ``ps``.
        gpus_per_worker: GPUs for every task not in job ``ps``: real ones through ``CUDA_VISIBLE_DEVICES``
            (round robin, shared when there are too few; ps tasks then see none) where this machine has GPUs,
            else that many virtual GPUs, so the same notebook runs on a laptop.
        name: The cluster's name (default: the first free ``local-N``); names its cluster file.
        threads: torch threads per task, at least 1 (the machine's cores are shared by all tasks).
        ports: Fixed ports (1 to 65535) for some tasks, e.g. ``{"ps": [2222]}``; the others get free ports.
        cluster_key: The key the tasks require of every peer (a :class:`ClusterKey`, a ``dtfkey1:`` text, or a
            passphrase, salted with the cluster's name). By default a new random key: the cluster is *locked*,
            and only this user's processes reach it, through the cluster file (owner-only) that carries the key.
            ``False`` runs the tasks without a key: every process of this machine can then open sessions on them,
            read and change their variables, and read and write files wherever they may (a warning says so).
        file_roots: Directories outside which no task reads or writes a file (checkpoints); default: anywhere.
        server_args: Further ``dtf-server`` arguments for the tasks of a job, e.g. ``{"ps": ["--cluster-salt",
            "s"]}`` (the options above cover the usual ones).
        peer_limits: Caps on what one peer may hold of a task at once (sessions, requests and bytes in flight).
        start_method: ``"fork"`` (from the template; the default where available) or ``"subprocess"``.
        start_timeout: Seconds allowed for the whole start.
        log_dir: Where task logs go (default: a temporary directory removed by :meth:`stop`).

    Raises:
        ValueError: a bad job, count, name or option (the message names it).

    Example:
        >>> cluster = LocalCluster(jobs={"chief": 1, "worker": 2, "ps": 0})  # nothing starts before start()
        >>> {job: len(addresses) for job, addresses in cluster.spec.items()}
        {'chief': 1, 'worker': 2}
    """

    def __init__(
        self,
        ps: int = 1,
        workers: int = 2,
        jobs: dict[str, int] | None = None,
        virtual_gpus: int = 0,
        gpus_per_worker: int | None = None,
        name: str | None = None,
        *,
        threads: int = 1,
        host: str = "127.0.0.1",
        ports: dict[str, list[int]] | None = None,
        cluster_key: ClusterKey | str | bool | None = None,
        start_method: str | None = None,
        start_timeout: float = 60.0,
        log_dir: str | None = None,
        file_roots: Sequence[str] | None = None,
        peer_limits: PeerLimits | None = None,
        server_args: dict[str, list[str]] | None = None,
    ) -> None:
        jobs = dict(jobs) if jobs is not None else {"ps": ps, "worker": workers}
        for job, count in jobs.items():
            if not isinstance(count, int) or count < 0:
                raise ValueError(f"Job {job!r} needs a count of tasks >= 0, not {count!r}")
        self.jobs = {job: count for job, count in jobs.items() if count > 0}
        if not self.jobs:
            raise ValueError(f"A cluster needs at least one task; got jobs {jobs}")
        for option, value in (("virtual_gpus", virtual_gpus), ("gpus_per_worker", gpus_per_worker or 0)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{option} must be an int >= 0, not {value!r}")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ValueError(f"threads must be an int >= 1 (torch threads per task), not {threads!r}")
        if start_method not in (None, "fork", "subprocess"):
            raise ValueError(f"start_method must be 'fork' or 'subprocess', not {start_method!r}")
        if start_method == "fork" and not fork_available():
            raise ValueError("start_method='fork' needs os.fork, which this system lacks")
        self.name = cluster_files.check_name(name) if name is not None else ""
        self.virtual_gpus, self.gpus_per_worker, self.threads = virtual_gpus, gpus_per_worker, threads
        self.start_method = start_method or ("fork" if fork_available() else "subprocess")
        self.start_timeout, self.startup_seconds = start_timeout, 0.0
        fixed = ports or {}
        for job, job_ports in fixed.items():
            if len(job_ports) > self.jobs.get(job, 0):
                raise ValueError(
                    f"ports gives {len(job_ports)} port(s) for job {job!r}, which has {self.jobs.get(job, 0)}"
                )
            for port in job_ports:
                # Port 0 would make the system pick one, which the cluster spec could not know.
                if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
                    raise ValueError(f"ports for job {job!r} must be port numbers from 1 to 65535, not {port!r}")
        self._spec = {
            job: [f"{host}:{port}" for port in self._ports(fixed.get(job, []), n, host)] for job, n in self.jobs.items()
        }
        ClusterSpec(self._spec)  # names a job name that device names cannot hold
        if cluster_key is not None and not isinstance(cluster_key, (ClusterKey, str, bool)):
            raise ValueError(f"cluster_key must be a ClusterKey, a key text, True or False, not {cluster_key!r}")
        self._key_choice = cluster_key
        self._key: ClusterKey | None = None  # decided at start(): a passphrase is salted with the cluster's name
        self.file_roots = None if file_roots is None else [_absolute_root(str(r)) for r in file_roots]
        FileAccess(self.file_roots)  # a root that does not exist is an error now, not in every task
        self.peer_limits = peer_limits
        self.server_args = {job: [str(a) for a in args] for job, args in (server_args or {}).items()}
        for job in self.server_args:
            if job not in self.jobs:
                raise ValueError(f"server_args names job {job!r}, which this cluster lacks (jobs: {list(self.jobs)})")
        self._log_root, self._own_log_dir, self._log_dir = log_dir, log_dir is None, ""
        self._tasks: dict[tuple[str, int], TaskProcess] = {}
        self._record: cluster_files.ClusterRecord | None = None
        self._owned, self._starts = True, 0

    @staticmethod
    def _ports(fixed: list[int], count: int, host: str) -> list[int]:
        return [*fixed, *(free_port(host) for _ in range(count - len(fixed)))]

    # ---- what the cluster is ------------------------------------------------------------------
    @property
    def spec(self) -> dict[str, list[str]]:
        """The cluster as ``{job: ["host:port", ...]}``.

        Example:
            >>> spec = LocalCluster(ps=1, workers=2).spec
            >>> len(spec["ps"]), len(spec["worker"]), spec["worker"][0].startswith("127.0.0.1:")
            (1, 2, True)
        """
        return {job: list(addresses) for job, addresses in self._spec.items()}

    @property
    def cluster_spec(self) -> ClusterSpec:
        """The cluster as a :class:`~dtf_notebook.distributed.cluster_spec.ClusterSpec`."""
        return ClusterSpec(self._spec)

    def target(self, job: str = "worker", task: int = 0) -> str:
        """The session target of a task, ``zmq://host:port``.

        Raises:
            ValueError: no such job or task.

        Example:
            >>> LocalCluster(ps=1, workers=1, ports={"worker": [2222]}).target("worker", 0)
            'zmq://127.0.0.1:2222'
        """
        return f"zmq://{self.cluster_spec.task_address(job, task)}"

    @property
    def running(self) -> bool:
        """Whether the cluster was started and not stopped (its tasks may have died since: see ``tasks``)."""
        return self._record is not None

    @property
    def file(self) -> str | None:
        """The cluster file while running."""
        return self._record.path if self._record is not None else None

    @property
    def tasks(self) -> list[TaskInfo]:
        """Every task: job, task, address, pid, status (``running``/``exited(CODE)``/``killed``) and devices."""
        return [
            TaskInfo(t.job, t.index, t.address, t.pid, t.status(), tuple(t.devices))
            for t in sorted(self._tasks.values(), key=lambda t: (t.job, t.index))
        ]

    def _task(self, job: str, task: int) -> TaskProcess:
        self.cluster_spec.task_address(job, task)  # names a missing job or task
        found = self._tasks.get((job, task))
        if found is None:
            raise ValueError(f"Task {job}:{task} of cluster {self.name or '(unnamed)'!r} was never started")
        return found

    def task(self, job: str, task: int = 0) -> TaskInfo:
        """One row of :attr:`tasks`.

        Raises:
            ValueError: no such task, or it was never started.
        """
        found = self._task(job, task)
        return TaskInfo(found.job, found.index, found.address, found.pid, found.status(), tuple(found.devices))

    def logs(self, job: str, task: int = 0) -> str:
        """The output of a task's current process (the log of its latest start)."""
        return self._task(job, task).output()

    # ---- starting -----------------------------------------------------------------------------
    def _task_args(self, job: str, index: int) -> list[str]:
        args = ["--cluster", json.dumps(self._spec), "--job", job, "--task", str(index)]
        # Without real GPUs, gpus_per_worker becomes virtual GPUs: device scopes like /gpu:1 keep working.
        virtual = self.virtual_gpus or (0 if self._real_gpus() else self.gpus_per_worker or 0)
        if job != "ps" and virtual:
            args += ["--virtual-gpus", str(virtual)]
        if self._key is not None:
            args += ["--key-file", os.path.join(self._log_dir, "cluster.key")]
        for root in self.file_roots or ():
            args += ["--file-root", root]
        if self.peer_limits is not None:
            for name, value in asdict(self.peer_limits).items():
                args += [f"--{name.replace('_', '-')}-per-peer", str(value)]
        return args + self.server_args.get(job, [])

    def _real_gpus(self) -> int:
        if not self.gpus_per_worker:
            return 0
        import torch

        return torch.cuda.device_count()

    def _task_env(self, job: str, index: int) -> dict[str, str | None]:
        real = self._real_gpus()
        if not real:
            return {}
        if job == "ps":
            return {"CUDA_VISIBLE_DEVICES": ""}
        compute = [(j, i) for j, n in self.jobs.items() if j != "ps" for i in range(n)]
        first = compute.index((job, index)) * self.gpus_per_worker
        return {"CUDA_VISIBLE_DEVICES": ",".join(str((first + k) % real) for k in range(self.gpus_per_worker))}

    def _launch(self, job: str, index: int) -> TaskProcess:
        self._starts += 1
        log = os.path.join(self._log_dir, f"{job}-{index}-{self._starts}.log")
        args, env, address = self._task_args(job, index), self._task_env(job, index), self._spec[job][index]
        if self.start_method == "fork":
            try:
                template = shared_template()
                template.wait_ready(self.start_timeout)
                return fork_task(template, job, index, address, args, log, env, self.threads, self.start_timeout)
            except (TemplateError, OSError) as e:
                self._fall_back(e, stacklevel=4)
        return subprocess_task(job, index, address, args, log, env, self.threads)

    def _fall_back(self, error: Exception, stacklevel: int) -> None:
        warnings.warn(f"Starting tasks as plain processes (slower): {error}", RuntimeWarning, stacklevel=stacklevel)
        self.start_method = "subprocess"

    def _wait_serving(self, tasks: list[TaskProcess], deadline: float) -> None:
        """Waits until each task printed its ready line and answers GetStatus with its own job and index."""
        client = shared_client(self._key)
        pending = list(tasks)
        while pending:
            for task in list(pending):
                if "\nready " in "\n" + task.output():
                    timeout = max(deadline - time.monotonic(), 1.0)
                    try:
                        reply, _ = client.call(task.address, "GetStatus", {}, timeout=timeout)
                    except errors.OpError as e:
                        raise self._start_error(task, f"does not answer GetStatus ({e.message})") from None
                    if (reply.get("job"), reply.get("task")) != (task.job, task.index):
                        got = f"{reply.get('job')}:{reply.get('task')}"
                        raise self._start_error(task, f"is answered at {task.address} by another task ({got})")
                    task.devices = [d["name"] for d in reply.get("devices", [])]
                    pending.remove(task)
                elif not task.running():
                    raise self._start_error(task, "exited before serving")
            if pending and time.monotonic() > deadline:
                raise self._start_error(pending[0], f"did not serve within {self.start_timeout:g} s")
            time.sleep(0.005)

    def _start_error(self, task: TaskProcess, what: str) -> ClusterStartError:
        task.wait(0.5)  # a crashing task may still be writing its traceback
        code = task.exit_code()
        status = "" if code is None else f" with code {code}"
        log = _tail(task.output())
        message = (
            f"Task {task.name} of cluster {self.name!r} (pid {task.pid}, {task.address}) {what}{status}. "
            f"Last lines of its log:\n{log or '(empty)'}"
        )
        return ClusterStartError(message, task.job, task.index, code, log)

    def start(self, serve: Sequence[str] | None = None) -> LocalCluster:
        """Starts every task and returns once all answer; stops them all if one fails.

        Args:
            serve: The jobs whose tasks to start (default: all). The others keep their addresses in the spec but
                get no process here: their own process serves them, as a TF1 script's ``tf.train.Server`` does
                (with :meth:`client_env` for the key).

        Raises:
            ClusterStartError: a task exited or did not serve in time (the message has its log's last lines).
            FileExistsError: a running cluster already has this name.
            RuntimeError: this cluster is already running.
        """
        if self.running:
            raise RuntimeError(f"Cluster {self.name!r} is already running; stop() it first")
        for job in serve or ():
            if job not in self.jobs:
                raise ValueError(f"serve names job {job!r}, which this cluster lacks (jobs: {list(self.jobs)})")
        real = self._real_gpus()
        if real and (self.gpus_per_worker or 0) > real:
            # CUDA_VISIBLE_DEVICES cannot list one GPU twice: a task cannot have more GPUs than the machine.
            raise ValueError(
                f"gpus_per_worker={self.gpus_per_worker} asks for more GPUs per task than the {real} this machine "
                f"has; use at most {real} (tasks may share GPUs), or virtual_gpus for CPU-backed ones"
            )
        began = time.monotonic()
        # What killed kernels left where no template cleaned up (killed too, or plain processes); never fails.
        cluster_files.clean_stale()
        self._record = cluster_files.claim(cluster_files.ClusterRecord(name=self.name, spec=self.spec))
        self.name = self._record.name
        try:
            self._key = self._decide_key()
        except ValueError:
            cluster_files.remove(self._record)
            self._record = None
            raise
        self._record.cluster_key, self._record.key = self._key is not None, self._key.text if self._key else ""
        if self._key is None:
            warnings.warn(unlocked_message(self.name, "cluster_key=False"), UnlockedClusterWarning, stacklevel=2)
        real, compute = self._real_gpus(), sum(n for job, n in self.jobs.items() if job != "ps")
        if real and compute * (self.gpus_per_worker or 0) > real:
            warnings.warn(
                f"{compute} tasks x {self.gpus_per_worker} GPUs need more than the {real} GPUs here: tasks share GPUs",
                RuntimeWarning,
                stacklevel=2,
            )
        if self.start_method == "fork":
            try:
                shared_template()  # imports in the background while we prepare
                hold_template(self)  # until stop() (also of a failed start): the last cluster to stop closes it
            except (TemplateError, OSError) as e:
                self._fall_back(e, stacklevel=3)
        try:
            self._log_dir = self._log_root or tempfile.mkdtemp(prefix=f"dtf-cluster-{self.name}-")
            os.makedirs(self._log_dir, exist_ok=True)
            if self._key is not None:
                key_file = os.path.join(self._log_dir, "cluster.key")
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(key_file)  # a kept log directory: the key of an earlier start
                write_key_file(key_file, self._key)
            keyring.remember(self.addresses, self._key)
            self._record.log_dir, self._record.temporary_logs = self._log_dir, self._own_log_dir
            for job, n in self.jobs.items():
                for index in range(n if serve is None or job in serve else 0):
                    self._tasks[(job, index)] = self._launch(job, index)
            self._wait_serving(list(self._tasks.values()), began + self.start_timeout)
        except BaseException:
            self.stop()
            raise
        self._record.status = "running"
        self._write_record()
        with _running_lock:
            _running[id(self)] = self
        self.startup_seconds = time.monotonic() - began
        return self

    def _decide_key(self) -> ClusterKey | None:
        choice = self._key_choice
        if choice is False:
            return None
        if isinstance(choice, ClusterKey):
            return choice
        if isinstance(choice, str):
            return _passphrase_key(choice, self.name)
        return ClusterKey.generate()

    @property
    def addresses(self) -> list[str]:
        """Every task's ``host:port``."""
        return [address for addresses in self._spec.values() for address in addresses]

    @property
    def cluster_key(self) -> ClusterKey | None:
        """The key the tasks require (None: started with ``cluster_key=False``, or not started yet). Sessions of
        this process find it by the tasks' addresses; give ``cluster_key.text`` to a process that cannot."""
        return self._key

    @property
    def key_file(self) -> str | None:
        """The file holding the cluster key, owner-only, while a locked cluster this process started runs."""
        if not self._owned or self._key is None or not self.running:
            return None
        return os.path.join(self._log_dir, "cluster.key")

    def client_env(self) -> dict[str, str]:
        """The environment for a client script in its own process: this package importable, one torch thread,
        and the cluster's key file (``DTF_CLUSTER_KEY_FILE``) while a locked cluster runs.

        Example:
            >>> with LocalCluster(jobs={"ps": 1}) as cluster:
            ...     os.path.basename(cluster.client_env()["DTF_CLUSTER_KEY_FILE"])
            'cluster.key'
        """
        env = task_env()
        if self.key_file is not None:
            env["DTF_CLUSTER_KEY_FILE"] = self.key_file
        return env

    @property
    def locked(self) -> bool:
        """Whether the tasks require a key (they do unless started with ``cluster_key=False``)."""
        if self._record is not None:
            return self._record.cluster_key
        return self._key_choice is not False

    def _write_record(self) -> None:
        if self._record is not None:
            self._record.tasks = [t.row() for t in self._tasks.values()]
            cluster_files.update(self._record)

    # ---- fault-tolerance demos ----------------------------------------------------------------
    def kill(self, job: str, task: int = 0) -> None:
        """Kills one task at once (SIGKILL), as a crashed machine would; the others keep running.

        Raises:
            ValueError: no such task.
            RuntimeError: the task's process did not go away.
        """
        found = self._task(job, task)
        found.signal(signal.SIGKILL)
        if not found.wait(10.0):
            raise RuntimeError(f"Task {found.name} (pid {found.pid}) is still running after SIGKILL")

    def restart(self, job: str, task: int = 0) -> TaskInfo:
        """Kills a task if it runs and starts it again on the same address; returns once it serves.

        Raises:
            ValueError: no such task.
            RuntimeError: the cluster was started by another process (restart it there).
            ClusterStartError: the new process did not serve.
        """
        old = self._task(job, task)
        if not self._owned:
            raise RuntimeError(
                f"Task {old.name} belongs to cluster {self.name!r} of process {self._record.owner_pid}; restart it "
                "there (a task restarted here would stop with this process)"
            )
        self.kill(job, task)
        new = self._tasks[(job, task)] = self._launch(job, task)
        self._wait_serving([new], time.monotonic() + self.start_timeout)
        self._write_record()
        return next(t for t in self.tasks if (t.job, t.task) == (job, task))

    # ---- stopping -----------------------------------------------------------------------------
    def stop(self, grace: float = 5.0) -> None:
        """Stops every task (SIGTERM, then SIGKILL after ``grace`` s) and removes the cluster file.

        A connected cluster's tasks are stopped by pid. When no other cluster of this process still uses the task
        template, it exits too. Stopping a stopped cluster does nothing.

        Raises:
            RuntimeError: a task's process could not be stopped (its pid is named).
        """
        with _running_lock:
            _running.pop(id(self), None)
        tasks = list(self._tasks.values())
        if self._owned:
            for task in tasks:
                task.signal(signal.SIGTERM)
            deadline = time.monotonic() + grace
            for task in tasks:
                if not task.wait(max(deadline - time.monotonic(), 0.0)):
                    task.signal(signal.SIGKILL)
            left = [task.pid for task in tasks if not task.wait(5.0)]
        else:
            left = stop_pids([(task.pid, task.ticks) for task in tasks], grace)
        if self._record is not None:
            cluster_files.remove(self._record)
            self._record = None
        release_template(self)
        keyring.forget(self.addresses)
        if self._owned and self._log_dir and not self._own_log_dir:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self._log_dir, "cluster.key"))  # the logs stay; the key has no use left
        if self._own_log_dir and self._log_dir:
            shutil.rmtree(self._log_dir, ignore_errors=True)
        if left:
            raise RuntimeError(f"Cluster {self.name!r}: task process(es) {left} could not be stopped")

    def __enter__(self) -> LocalCluster:
        return self if self.running else self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---- another kernel's cluster -------------------------------------------------------------
    @classmethod
    def connect(
        cls, name_or_file: str, cluster_key: ClusterKey | str | None = None, timeout: float = 5.0
    ) -> LocalCluster:
        """Attaches to a cluster another process started, by name or cluster file path.

        The result can give targets, list, kill and stop the tasks (by pid: they are not our children). A locked
        cluster's key comes from its cluster file (``cluster_key`` overrides it); sessions of this process then
        find it by the tasks' addresses. A cluster this process started is returned as itself (so that stopping it
        by name stops it here too). Connecting starts no task template.

        Raises:
            ClusterNotFoundError: no such cluster, or it is no longer running.
            ValueError: the key is malformed.
        """
        record = cluster_files.find(name_or_file)
        ours = next((c for c in running_clusters() if c.file == record.path), None)
        if ours is not None:
            return ours
        if record.is_stale():
            cluster_files.remove(record)
            raise cluster_files.ClusterNotFoundError(
                f"Cluster {record.name!r} is no longer running (its process {record.owner_pid} and tasks are gone)"
            )
        cluster = cls(jobs={job: len(addresses) for job, addresses in record.spec.items()}, name=record.name)
        if isinstance(cluster_key, str):
            cluster_key = _passphrase_key(cluster_key, record.name)
        if cluster_key is None and record.key:
            cluster_key = ClusterKey.parse(record.key)
        cluster._spec, cluster._key, cluster._owned, cluster._record = record.spec, cluster_key, False, record
        cluster._log_dir, cluster._own_log_dir = record.log_dir, record.temporary_logs
        keyring.remember(cluster.addresses, cluster_key)
        for row in record.tasks:
            task = TaskProcess(row["job"], row["task"], row["address"], row["pid"], row["log"], row["start_ticks"])
            cluster._tasks[(task.job, task.index)] = task
            if task.running() and (cluster_key is not None or not record.cluster_key):
                try:
                    reply, _ = shared_client(cluster_key).call(task.address, "GetStatus", {}, timeout=timeout)
                    task.devices = [d["name"] for d in reply.get("devices", [])]
                except errors.OpError:
                    pass  # listed with its status; the devices stay unknown
        return cluster

    # ---- display ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        jobs = ", ".join(f"{job}={n}" for job, n in self.jobs.items())
        state = "running" if self.running else "stopped"
        first = self.target(*next(iter(self._tasks), (next(iter(self.jobs)), 0)))
        return f"<LocalCluster {self.name or '(unnamed)'!r} {jobs} {state} first target {first}>"

    def _repr_html_(self) -> str:
        rows = ""
        for t in self.tasks:
            devices = ", ".join(d.split("/device:")[-1] for d in t.devices)
            cells = (t.job, t.task, t.address, t.pid, t.status, devices)
            rows += "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in cells) + "</tr>"
        head = "".join(f"<th>{h}</th>" for h in ("job", "task", "address", "pid", "status", "devices"))
        state = "running" if self.running else "stopped"
        caption = f"LocalCluster {html.escape(self.name or '(unnamed)')} ({state})"
        return f"<table><caption>{caption}</caption><tr>{head}</tr>{rows}</table>"


@atexit.register
def _stop_all() -> None:
    for cluster in running_clusters():
        try:
            cluster.stop()
        except RuntimeError as e:
            warnings.warn(str(e), RuntimeWarning, stacklevel=1)
