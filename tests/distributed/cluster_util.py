"""Starting real task processes on loopback ports picked at run time, and always stopping them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = REPO + os.pathsep + e.get("PYTHONPATH", "")
    e["OMP_NUM_THREADS"] = "1"  # several tasks share two cores
    return e


@dataclass
class Task:
    job: str
    index: int
    address: str
    proc: subprocess.Popen
    log: str
    args: list[str] = field(default_factory=list)

    def output(self) -> str:
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()

    @property
    def target(self) -> str:
        return f"zmq://{self.address}"


class ProcessCluster:
    """Each task is ``python -m dtf_notebook.server`` in its own process.

    Example:
        with ProcessCluster({"ps": 1, "worker": 2}) as cluster:
            cluster.target("worker", 0)
    """

    def __init__(self, jobs: dict[str, int], extra_args: dict[str, list[str]] | None = None) -> None:
        self.spec = {job: [f"127.0.0.1:{free_port()}" for _ in range(n)] for job, n in jobs.items()}
        self.extra_args = extra_args or {}
        self.tasks: dict[tuple[str, int], Task] = {}
        self._logdir = tempfile.mkdtemp(prefix="dtf-cluster-")

    def start_task(self, job: str, index: int, wait: bool = True) -> Task:
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
            *self.extra_args.get(job, []),
        ]
        log = os.path.join(self._logdir, f"{job}-{index}-{len(self.tasks)}.log")
        with open(log, "w") as out:  # a file, not a pipe: a chatty task must never block on a full pipe
            proc = subprocess.Popen(args, env=env(), stdout=out, stderr=subprocess.STDOUT)
        task = Task(job, index, self.spec[job][index], proc, log, args)
        self.tasks[(job, index)] = task
        if wait:
            self._wait_ready(task)
        return task

    def _wait_ready(self, task: Task, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(line.startswith("ready ") for line in task.output().splitlines()):
                return
            if task.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"task {task.job}:{task.index} did not start: {task.output()[-2000:]}")

    def start(self) -> ProcessCluster:
        for job, addresses in self.spec.items():
            for i in range(len(addresses)):
                self.start_task(job, i, wait=False)
        for task in self.tasks.values():
            self._wait_ready(task)
        return self

    def target(self, job: str, index: int = 0) -> str:
        return f"zmq://{self.spec[job][index]}"

    def kill(self, job: str, index: int) -> None:
        task = self.tasks[(job, index)]
        task.proc.kill()
        task.proc.wait(10)

    def restart(self, job: str, index: int) -> Task:
        self.kill(job, index)
        return self.start_task(job, index)

    def stop(self) -> None:
        for task in self.tasks.values():
            if task.proc.poll() is None:
                task.proc.terminate()
        for task in self.tasks.values():
            try:
                task.proc.wait(10)
            except subprocess.TimeoutExpired:
                task.proc.kill()
                task.proc.wait(10)

    def __enter__(self) -> ProcessCluster:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def run_client(script: str, *args: str, timeout: float = 120) -> str:
    """Runs a client script in its own process and returns its stdout (raises on failure)."""
    result = subprocess.run(
        [sys.executable, "-c", script, *args], env=env(), capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise RuntimeError(f"client failed ({result.returncode}): {result.stderr[-3000:]}")
    return result.stdout
