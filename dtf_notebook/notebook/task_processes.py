"""One task process of a local cluster, however it was started, and how to start one.

A task is forked by this process's template (see
:mod:`~dtf_notebook.notebook.task_template`), started as a plain process when
forking is unavailable, or found in another process's cluster file. The three
differ in what can be known: a forked task's exit code comes from the template,
a plain process's from ``Popen``, and a task of another process has no exit
code for us, only a pid that runs or not. :class:`TaskProcess` hides the
difference behind ``running()``, ``status()``, ``signal()`` and ``wait()``.

Example:
    >>> task = TaskProcess("ps", 0, "127.0.0.1:2222", pid=os.getpid(), log="")
    >>> task.running(), task.status()
    (True, 'running')
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook.distributed.local_process import task_env
from dtf_notebook.notebook.pids import pid_running, start_ticks
from dtf_notebook.notebook.template_client import TaskTemplate

__all__ = ["TaskProcess", "fork_task", "subprocess_task"]


@dataclass
class TaskProcess:
    """A task's place in the cluster and its process.

    Attributes:
        job, index, address: The task in the cluster spec.
        pid, ticks: Its process and that process's start time (see :mod:`~dtf_notebook.notebook.pids`).
        log: The file holding the task's output.
        template: The template that forked it (its exit code comes from there), or None.
        proc: Its ``Popen`` when it is a plain child of this process, or None.
        devices: Device names the task reported when it started serving.
        killed: True once :meth:`signal` sent it SIGKILL.

    Example:
        >>> task = TaskProcess("worker", 1, "127.0.0.1:2223", pid=os.getpid(), log="/tmp/worker-1.log")
        >>> task.name, task.running(), task.exit_code()
        ('worker:1', True, None)
        >>> task.row()["address"]
        '127.0.0.1:2223'
    """

    job: str
    index: int
    address: str
    pid: int
    log: str
    ticks: int | None = None
    template: TaskTemplate | None = None
    proc: subprocess.Popen | None = None
    devices: list[str] = field(default_factory=list)
    killed: bool = False

    @property
    def name(self) -> str:
        return f"{self.job}:{self.index}"

    def exit_code(self) -> int | None:
        """The exit code once known (negative: the signal that ended it); None while running or unknown."""
        if self.proc is not None:
            return self.proc.poll()
        if self.template is not None:
            return self.template.returncode(self.pid)
        return None

    def running(self) -> bool:
        """Whether the task's process still runs."""
        if self.proc is not None:
            return self.proc.poll() is None
        if self.template is not None and self.template.alive:
            return self.template.returncode(self.pid) is None
        return pid_running(self.pid, self.ticks)

    def status(self) -> str:
        """``running``, ``killed``, ``exited(CODE)``, or ``exited`` when the code is not ours to know.

        Example:
            >>> TaskProcess("ps", 0, "127.0.0.1:1", pid=0, log="").status()
            'exited'
        """
        if self.running():
            return "running"
        code = self.exit_code()
        if self.killed or code == -signal.SIGKILL:
            return "killed"
        return "exited" if code is None else f"exited({code})"

    def signal(self, sig: int) -> None:
        """Sends ``sig`` to the task if it still runs."""
        if self.running():
            if sig == signal.SIGKILL:
                self.killed = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, sig)

    def wait(self, timeout: float) -> bool:
        """Waits up to ``timeout`` seconds for the task to end; True once it has."""
        deadline = time.monotonic() + timeout
        if self.proc is not None:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        if self.template is not None and self.template.alive:
            if self.template.wait(self.pid, timeout) is not None:
                return True
        while self.running() and time.monotonic() < deadline:
            time.sleep(0.02)
        return not self.running()

    def output(self) -> str:
        """Everything the task wrote to its log so far ('' when the log is gone)."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def row(self) -> dict[str, Any]:
        """The task as a cluster-file row."""
        return {
            "job": self.job,
            "task": self.index,
            "address": self.address,
            "pid": self.pid,
            "start_ticks": self.ticks,
            "log": self.log,
        }


def fork_task(
    template: TaskTemplate,
    job: str,
    index: int,
    address: str,
    args: list[str],
    log: str,
    env: dict[str, str | None],
    threads: int,
    timeout: float,
) -> TaskProcess:
    """Forks a task from ``template``.

    Raises:
        TemplateError: the template is gone or refused.
    """
    pid = template.spawn(args, log, env, threads, timeout)
    return TaskProcess(job, index, address, pid, log, start_ticks(pid), template=template)


def subprocess_task(
    job: str, index: int, address: str, args: list[str], log: str, env: dict[str, str | None], threads: int
) -> TaskProcess:
    """Starts a task as a plain Python process (which imports everything itself) that stops when we go."""
    full_env = task_env(threads)
    for key, value in env.items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    command = [sys.executable, "-m", "dtf_notebook.notebook.task_template", "task"]
    command += ["--parent-pid", str(os.getpid()), "--threads", str(threads), "--", *args]
    with open(log, "w") as out:
        # Its own session: a kernel interrupt (SIGINT to the kernel's process group) must not reach the task.
        proc = subprocess.Popen(command, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return TaskProcess(job, index, address, proc.pid, log, start_ticks(proc.pid), proc=proc)
