"""Start a cluster of task processes on this machine (loopback ports picked at run time), and stop them.

Each task is ``python -m dtf_notebook.server`` in its own process, with its
output in a log file (never a pipe, which a chatty task could fill and block
on). :class:`ProcessCluster` waits until every task serves, remembers each
process by pid, and stops every process it started, also at interpreter exit.

Example:
    >>> with ProcessCluster({"ps": 1, "worker": 1}) as cluster:   # doctest: +SKIP
    ...     cluster.target("worker", 0)
    'zmq://127.0.0.1:40123'
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook.distributed import keyring
from dtf_notebook.distributed.cluster_key import ClusterKey, write_key_file

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_live: weakref.WeakSet[ProcessCluster] = weakref.WeakSet()


_LOW_PORT = 20000
_issued: collections.deque[int] = collections.deque(maxlen=1024)  # handed out lately by this process


def _ephemeral_range() -> tuple[int, int]:
    """The ports the kernel gives outgoing connections (Linux: ``ip_local_port_range``; elsewhere IANA's)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 49152, 65535


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago, for a task to bind shortly.

    The port is below the kernel's ephemeral range when there is room there: a port the kernel picks
    itself could be taken, before the task binds it, as the source port of any outgoing connection on the
    machine (a cluster's own tasks open many). Ports handed out lately by this process are not reused.

    ``host`` may be an IPv6 address, bracketed (``[::1]``) or not.

    Example:
        >>> port = free_port()
        >>> _LOW_PORT <= port < _ephemeral_range()[0] and port not in {free_port() for _ in range(20)}
        True
    """
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    low, _ = _ephemeral_range()
    if low - _LOW_PORT >= 1000:
        for _ in range(200):
            port = random.randrange(_LOW_PORT, low)
            if port in _issued:
                continue
            with socket.socket(family) as s:
                try:
                    s.bind((host, port))
                except OSError:
                    continue
            _issued.append(port)
            return port
    with socket.socket(family) as s:  # no room below the ephemeral range: let the kernel pick
        s.bind((host, 0))
        port = s.getsockname()[1]
    _issued.append(port)
    return port


def task_env(threads: int = 1) -> dict[str, str]:
    """Environment for a task process: this package importable, and a thread budget for shared cores.

    Example:
        >>> env = task_env(threads=2)
        >>> env["OMP_NUM_THREADS"], env["PYTHONPATH"].startswith(_PACKAGE_PARENT)
        ('2', True)
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = _PACKAGE_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = str(threads)
    return env


@dataclass
class TaskProcess:
    """One running task: its place in the cluster, its process and its log file.

    Example:
        >>> task = TaskProcess("worker", 0, "127.0.0.1:2223", proc=None, log="/tmp/worker-0.log")  # no process yet
        >>> task.target
        'zmq://127.0.0.1:2223'
    """

    job: str
    index: int
    address: str
    proc: subprocess.Popen
    log: str
    args: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def target(self) -> str:
        return f"zmq://{self.address}"

    def output(self) -> str:
        """Everything the task printed so far."""
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()


class ProcessCluster:
    """A local cluster whose tasks are separate processes.

    Locked by default: the tasks share a new random cluster key (a key file in the cluster's private log
    directory) and refuse every peer without it. Sessions of this process find the key by the tasks' addresses;
    a client script in another process takes it from :meth:`client_env` (``DTF_CLUSTER_KEY_FILE``).

    Args:
        jobs: Tasks per job, e.g. ``{"ps": 1, "worker": 2}``.
        extra_args: Extra ``dtf-server`` arguments per job (e.g. ``{"worker": ["--virtual-gpus", "2"]}``).
        host: Address to bind (loopback by default).
        start_timeout: Seconds to wait for each task to serve.
        cluster_key: The key the tasks require (default: a new random one); ``False`` runs them without one, so
            that anyone who can reach their ports can run any op on them.

    Example:
        >>> cluster = ProcessCluster({"ps": 1, "worker": 2})  # ports picked; nothing runs before start()
        >>> [len(cluster.spec[job]) for job in ("ps", "worker")], cluster.target("ps").startswith("zmq://127.0.0.1:")
        ([1, 2], True)
        >>> cluster.stop()
    """

    def __init__(
        self,
        jobs: dict[str, int],
        extra_args: dict[str, list[str]] | None = None,
        host: str = "127.0.0.1",
        start_timeout: float = 60.0,
        cluster_key: ClusterKey | bool | None = None,
    ) -> None:
        self.spec = {job: [f"{host}:{free_port(host)}" for _ in range(n)] for job, n in jobs.items()}
        self.extra_args = extra_args or {}
        self.start_timeout = start_timeout
        self.tasks: dict[tuple[str, int], TaskProcess] = {}
        self._logdir = tempfile.mkdtemp(prefix="dtf-cluster-")  # mode 0700: only this user reads the key file
        # The logs and the key file go with the cluster: at stop(), or when it is dropped unstarted, or at exit.
        self._remove_logdir = weakref.finalize(self, shutil.rmtree, self._logdir, ignore_errors=True)
        self._started = 0
        self.cluster_key: ClusterKey | None = None
        self.key_file: str | None = None
        if cluster_key is not False:
            key = cluster_key if isinstance(cluster_key, ClusterKey) else None
            self.key_file = os.path.join(self._logdir, "cluster.key")
            self.cluster_key = write_key_file(self.key_file, key)

    @property
    def addresses(self) -> list[str]:
        """Every task's ``host:port``."""
        return [address for addresses in self.spec.values() for address in addresses]

    def client_env(self) -> dict[str, str]:
        """The environment for a client script in its own process: :func:`task_env` plus the cluster's key file.

        Example:
            >>> cluster = ProcessCluster({"ps": 1})
            >>> os.path.basename(cluster.client_env()["DTF_CLUSTER_KEY_FILE"])
            'cluster.key'
            >>> cluster.stop()
        """
        env = task_env()
        if self.key_file is not None:
            env["DTF_CLUSTER_KEY_FILE"] = self.key_file
        return env

    def start_task(self, job: str, index: int, wait: bool = True) -> TaskProcess:
        """Starts (or restarts) one task on its address from the spec."""
        args = [
            sys.executable,
            "-m",
            "dtf_notebook.server",
            "--cluster",
            json.dumps(self.spec),
            "--job",
            job,
            "--task",
            str(index),
            *(["--key-file", self.key_file] if self.key_file is not None else []),
            *self.extra_args.get(job, []),
        ]
        self._started += 1
        log = os.path.join(self._logdir, f"{job}-{index}-{self._started}.log")
        with open(log, "w") as out:
            proc = subprocess.Popen(args, env=task_env(), stdout=out, stderr=subprocess.STDOUT)
        task = TaskProcess(job, index, self.spec[job][index], proc, log, args)
        self.tasks[(job, index)] = task
        _live.add(self)
        keyring.remember([task.address], self.cluster_key)  # sessions of this process find the key by address
        if wait:
            self.wait_ready(task)
        return task

    def wait_ready(self, task: TaskProcess) -> None:
        """Waits until ``task`` serves.

        Raises:
            RuntimeError: it exited or did not serve in time; the message has its exit code and last output.
        """
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if "\nready " in "\n" + task.output():
                return
            if task.proc.poll() is not None:
                break
            time.sleep(0.05)
        code = task.proc.poll()
        status = f"exited with code {code}" if code is not None else f"did not serve within {self.start_timeout:g} s"
        raise RuntimeError(f"Task {task.job}:{task.index} {status}. Last output:\n{task.output()[-2000:]}")

    def start(self) -> ProcessCluster:
        """Starts every task and waits until all serve (stopping all of them if one fails)."""
        try:
            for job, addresses in self.spec.items():
                for i in range(len(addresses)):
                    self.start_task(job, i, wait=False)
            for task in list(self.tasks.values()):
                self.wait_ready(task)
        except BaseException:
            self.stop()
            raise
        return self

    def target(self, job: str, index: int = 0) -> str:
        """The session target of a task: ``zmq://host:port``."""
        return f"zmq://{self.spec[job][index]}"

    def kill(self, job: str, index: int) -> None:
        """Kills one task at once (SIGKILL), as a crash would."""
        task = self.tasks[(job, index)]
        task.proc.kill()
        task.proc.wait(10)

    def restart(self, job: str, index: int) -> TaskProcess:
        """Kills one task and starts it again on the same address."""
        self.kill(job, index)
        return self.start_task(job, index)

    def stop(self) -> None:
        """Stops every process this cluster started (SIGTERM, then SIGKILL after 10 s) and removes their logs."""
        for task in self.tasks.values():
            if task.proc.poll() is None:
                task.proc.terminate()
        for task in self.tasks.values():
            try:
                task.proc.wait(10)
            except subprocess.TimeoutExpired:
                task.proc.kill()
                task.proc.wait(10)
        _live.discard(self)
        keyring.forget(self.addresses)
        self._remove_logdir()

    def __enter__(self) -> ProcessCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@atexit.register
def _stop_all() -> None:
    for cluster in list(_live):
        cluster.stop()
