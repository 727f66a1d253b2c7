"""One program, started once per task with ``TF_CONFIG`` set: how a TF1 Estimator program (``train_and_evaluate``,
``learn_runner.run``) runs on a cluster, here on loopback ports, as Kubernetes would run it (one pod per task).

Every task gets ``TF_CONFIG = {"cluster": ..., "task": {"type": job, "index": i}}`` (the evaluator is not part of
the cluster), ``DTF_CLUSTER_KEY`` (a fresh key locking the tasks' servers to each other) and this package on its
path; its output goes to a log file. :meth:`TaskPrograms.wait` waits for every task that ends by itself (all but
the ps tasks, which serve until stopped), then stops the rest.

Example:
    >>> import sys, tempfile
    >>> program = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
    >>> _ = program.write("import json, os; print(json.loads(os.environ['TF_CONFIG'])['task'])")
    >>> program.close()
    >>> run = launch_per_task(program.name, {"chief": 1, "ps": 1})
    >>> run.wait(timeout=60)
    {'chief:0': 0, 'ps:0': 0}
    >>> run.logs("chief", 0).strip()
    "{'type': 'chief', 'index': 0}"
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.local_process import free_port, task_env
from dtf_notebook.notebook.pids import start_ticks
from dtf_notebook.notebook.task_processes import TaskProcess

__all__ = ["TaskPrograms", "launch_per_task", "SERVING_JOBS"]

#: Jobs whose tasks serve until stopped (TF's ps tasks join their server).
SERVING_JOBS = frozenset({"ps"})
#: Jobs that take part in training and so have an address in the cluster spec.
_ORDER = ("chief", "master", "worker", "ps")
_live: list[TaskPrograms] = []


class TaskPrograms:
    """The processes of one program started per task; :meth:`wait` or :meth:`stop` ends them.

    Attributes:
        spec: The cluster spec the tasks were given (``{job: ["host:port", ...]}``).
        tasks: One :class:`TaskProcess` per task, the evaluator included.
    """

    def __init__(self, spec: dict[str, list[str]], tasks: list[TaskProcess], log_dir: str) -> None:
        self.spec = spec
        self.tasks = tasks
        self.log_dir = log_dir

    def task(self, job: str, index: int = 0) -> TaskProcess:
        """The task ``job:index``.

        Raises:
            KeyError: no such task.
        """
        for task in self.tasks:
            if (task.job, task.index) == (job, index):
                return task
        raise KeyError(f"No task {job}:{index} in this run (tasks: {[t.name for t in self.tasks]})")

    def logs(self, job: str, index: int = 0) -> str:
        """What task ``job:index`` printed so far."""
        with open(self.task(job, index).log, errors="replace") as f:
            return f.read()

    def exit_codes(self) -> dict[str, int | None]:
        """Each task's exit code (None while it runs)."""
        return {task.name: task.exit_code() for task in self.tasks}

    def wait(self, timeout: float | None = None) -> dict[str, int | None]:
        """Waits for the tasks that end by themselves, then stops the serving ones; returns the exit codes.

        A task that fails ends the wait at once (the others are stopped): its log says why. On timeout every task
        is stopped and ``TimeoutError`` names the tasks still running.

        Raises:
            TimeoutError: tasks were still running after ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        finishing = [t for t in self.tasks if t.job not in SERVING_JOBS]
        while any(t.running() for t in finishing):
            if any(t.exit_code() not in (None, 0) for t in finishing):
                break
            if deadline is not None and time.monotonic() > deadline:
                running = [t.name for t in finishing if t.running()]
                self.stop()
                raise TimeoutError(f"Tasks {running} still ran after {timeout} s; every task was stopped")
            time.sleep(0.2)
        self.stop()
        return self.exit_codes()

    def stop(self, grace: float = 5.0) -> None:
        """Stops every task still running (SIGTERM, then SIGKILL after ``grace`` seconds)."""
        for task in self.tasks:
            if task.running():
                task.signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for task in self.tasks:
            if not task.wait(max(0.0, deadline - time.monotonic())):
                task.signal(signal.SIGKILL)
                task.wait(grace)
        with contextlib.suppress(ValueError):
            _live.remove(self)

    def summary(self) -> str:
        """One line per task: its name, address and exit code, and the last line it printed."""
        lines = []
        for task in self.tasks:
            with open(task.log, errors="replace") as f:
                last = (f.read().strip().splitlines() or [""])[-1]
            lines.append(f"{task.name:<12} {task.address or '-':<22} exit {task.exit_code()!s:<5} {last[:100]}")
        return "\n".join(lines)


def _cluster(jobs: dict[str, int], host: str) -> dict[str, list[str]]:
    unknown = sorted(set(jobs) - set(_ORDER) - {"evaluator"})
    if unknown:
        raise ValueError(f"Unknown job names {unknown}: the jobs are chief, master, worker, ps and evaluator")
    if jobs.get("evaluator", 0) > 1:
        raise ValueError(f"There can only be one evaluator task, got {jobs['evaluator']}")
    shown = host if ":" not in host else f"[{host}]"
    return {job: [f"{shown}:{free_port(host)}" for _ in range(jobs[job])] for job in _ORDER if jobs.get(job)}


def launch_per_task(
    program: str | Sequence[str],
    jobs: dict[str, int],
    args: Sequence[str] = (),
    host: str = "127.0.0.1",
    env: dict[str, str] | None = None,
    log_dir: str | None = None,
    threads: int = 1,
    environment: str | None = None,
) -> TaskPrograms:
    """Starts ``program`` (a script path, or a full command) once per task of ``jobs`` with its ``TF_CONFIG``.

    Args:
        program: A Python script (run with this interpreter) or a command as a list.
        jobs: Tasks per job, e.g. ``{"chief": 1, "worker": 1, "ps": 1, "evaluator": 1}``.
        args: Arguments after the script.
        host: The loopback address the tasks bind.
        env: More environment variables for every task.
        log_dir: Where the task logs go (default: a new temporary directory).
        threads: torch threads per task.
        environment: ``TF_CONFIG``'s ``environment`` (``"cloud"`` makes a contrib.learn Experiment start servers).

    Raises:
        ValueError: an unknown job name or more than one evaluator.

    Example:
        >>> launch_per_task("x.py", {"evaluator": 2})
        Traceback (most recent call last):
        ValueError: There can only be one evaluator task, got 2
    """
    spec = _cluster(jobs, host)
    log_dir = log_dir or tempfile.mkdtemp(prefix="dtf-tasks-")
    command = [sys.executable, program] if isinstance(program, str) else list(program)
    key = ClusterKey.generate()
    tasks: list[TaskProcess] = []
    run = TaskPrograms(spec, tasks, log_dir)
    _live.append(run)
    roles = [(job, i, spec[job][i]) for job in spec for i in range(len(spec[job]))]
    roles += [("evaluator", 0, "")] if jobs.get("evaluator") else []
    for job, index, address in roles:
        task_env_vars = task_env(threads)
        task_env_vars.update(env or {})
        tf_config: dict[str, Any] = {"cluster": spec, "task": {"type": job, "index": index}}
        if environment:
            tf_config["environment"] = environment
        task_env_vars["TF_CONFIG"] = json.dumps(tf_config)
        task_env_vars["DTF_CLUSTER_KEY"] = key.text
        log = os.path.join(log_dir, f"{job}-{index}.log")
        with open(log, "w") as out:
            proc = subprocess.Popen(
                [*command, *args], env=task_env_vars, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        tasks.append(TaskProcess(job, index, address, proc.pid, log, start_ticks(proc.pid), proc=proc))
    return run


@atexit.register
def _stop_all() -> None:
    for run in list(_live):
        run.stop(grace=2.0)
