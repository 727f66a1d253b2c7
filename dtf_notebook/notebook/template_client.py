"""The kernel's side of the task template: start it, ask it for tasks, learn how they ended.

:class:`TaskTemplate` starts ``python -m dtf_notebook.notebook.task_template serve``
(see :mod:`~dtf_notebook.notebook.task_template` for the process and its JSON-lines
protocol) in its own session, so that a kernel interrupt (SIGINT to the kernel's
process group) never reaches the cluster. A reader thread collects the template's
replies and the exit codes of its tasks. :func:`shared_template` keeps one
template per process, started on first use and again if it died.

The template lives as long as the clusters it forks tasks for: a cluster holds it
from its start (:func:`hold_template`) to its stop (:func:`release_template`), and
the last release closes it, so a process whose clusters have all stopped (or that
never started one, only connected to others) keeps no template of about 230 MB.
A template started by :func:`shared_template` alone (``prewarm()``) stays until a
cluster that used it stops, or until this process exits.

Example:
    >>> hold_template("demo") is shared_template()   # a cluster starting: the template runs while held
    True
    >>> pid = shared_template().pid
    >>> release_template("demo")                     # its last holder stopped: the template is gone
    >>> shared_template(start=False) is None, os.path.exists(f"/proc/{pid}")
    (True, False)
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from dtf_notebook.distributed.local_process import task_env

__all__ = ["TaskTemplate", "TemplateError", "fork_available", "hold_template", "release_template", "shared_template"]


class TemplateError(RuntimeError):
    """The template process failed to start, died, or refused a request.

    Example:
        >>> try:
        ...     raise TemplateError("The task template exited with code 1")
        ... except RuntimeError as e:
        ...     print(type(e).__name__, e)
        TemplateError The task template exited with code 1
    """


def fork_available() -> bool:
    """Whether tasks can be forked from a template on this system (POSIX ``fork``).

    Example:
        >>> fork_available() == hasattr(os, "fork")
        True
    """
    return hasattr(os, "fork") and sys.platform != "win32"


class TaskTemplate:
    """The parent's handle on a template process (thread-safe).

    Args:
        env: The template's environment (default: a task's, see ``local_process.task_env``); tasks inherit it.

    Example:
        >>> import json
        >>> from dtf_notebook.distributed.local_process import free_port
        >>> template = shared_template()              # this process's TaskTemplate
        >>> template.wait_ready(120)
        >>> template.threads                          # nothing but the main thread: safe to fork
        1
        >>> spec = json.dumps({"local": [f"127.0.0.1:{free_port()}"]})
        >>> pid = template.spawn(["--cluster", spec, "--job", "local", "--task", "0"], os.devnull)
        >>> os.kill(pid, 9); template.wait(pid, 10)   # its exit code, reported by the template
        -9
    """

    def __init__(self, env: dict[str, str] | None = None) -> None:
        fd, self.log = tempfile.mkstemp(prefix="dtf-template-", suffix=".log")
        self.started = time.monotonic()
        with os.fdopen(fd, "w") as err:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "dtf_notebook.notebook.task_template", "serve", "--log", self.log],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env if env is not None else task_env(),
                start_new_session=True,  # a kernel interrupt (SIGINT to its process group) must not stop tasks
            )
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._ids = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._hello: dict[str, Any] | None = None
        self._closed = False
        self.ready_after: float | None = None
        self._reader = threading.Thread(target=self._read, name="dtf-template-reader", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def alive(self) -> bool:
        """Whether the template process still runs and answers."""
        return not self._closed and self._proc.poll() is None

    @property
    def threads(self) -> int | None:
        """The template's thread count when it became ready (1: safe to fork)."""
        return None if self._hello is None else self._hello.get("threads")

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for raw in self._proc.stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # stray output of imported code; the template keeps its real output on stderr
            if not isinstance(message, dict):
                continue
            with self._cond:
                if message.get("event") == "hello":
                    self._hello = message
                    self.ready_after = time.monotonic() - self.started
                elif message.get("event") == "exit":
                    self._exits[int(message["pid"])] = int(message["code"])
                elif isinstance(message.get("id"), int):
                    self._replies[message["id"]] = message
                self._cond.notify_all()
        self._proc.wait()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _failure(self, what: str) -> TemplateError:
        code = self._proc.poll()
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                tail = f.read()[-2000:]
        except OSError:
            tail = ""
        state = f"exited with code {code}" if code is not None else "is running"
        return TemplateError(f"Task template (pid {self.pid}) {what}; it {state}. Its output:\n{tail}")

    def wait_ready(self, timeout: float) -> None:
        """Waits until the template has imported everything and can fork.

        Raises:
            TemplateError: it exited or did not get ready within ``timeout`` seconds.
        """
        with self._cond:
            if not self._cond.wait_for(lambda: self._hello is not None or self._closed, timeout):
                raise self._failure(f"was not ready within {timeout:g} s")
            if self._hello is None:
                raise self._failure("failed to start")

    def spawn(
        self,
        args: list[str],
        log: str,
        env: dict[str, str | None] | None = None,
        threads: int = 1,
        timeout: float = 30.0,
    ) -> int:
        """Forks a task running ``dtf_notebook.server`` with ``args``, its output in ``log``; returns its pid.

        Raises:
            TemplateError: the template is gone or refused.
        """
        self.wait_ready(timeout)
        with self._cond:
            self._ids += 1
            request_id = self._ids
        request = {"op": "spawn", "id": request_id, "args": args, "log": log, "env": env or {}, "threads": threads}
        try:
            assert self._proc.stdin is not None
            with self._write_lock:  # one writer at a time: lines must not interleave
                self._proc.stdin.write((json.dumps(request) + "\n").encode())
                self._proc.stdin.flush()
        except (OSError, ValueError):
            raise self._failure("could not be reached") from None
        with self._cond:
            if not self._cond.wait_for(lambda: request_id in self._replies or self._closed, timeout):
                raise self._failure(f"did not answer within {timeout:g} s")
            reply = self._replies.pop(request_id, None)
        if reply is None:
            raise self._failure("died while starting a task")
        if "error" in reply:
            raise TemplateError(f"Task template refused to start a task: {reply['error']}")
        return int(reply["pid"])

    def returncode(self, pid: int) -> int | None:
        """The exit code of task ``pid`` (negative: killed by that signal), or None while it runs."""
        return self._exits.get(pid)

    def wait(self, pid: int, timeout: float) -> int | None:
        """Waits up to ``timeout`` seconds for task ``pid`` to end; its exit code, or None if it still runs."""
        with self._cond:
            self._cond.wait_for(lambda: pid in self._exits or self._closed, timeout)
            return self._exits.get(pid)

    def close(self, timeout: float = 5.0) -> None:
        """Closes the template's stdin (it then stops its tasks and exits); kills it if it lingers."""
        try:
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout)
        self._reader.join(timeout)
        if self._proc.stdout is not None and not self._reader.is_alive():
            self._proc.stdout.close()
        try:
            os.unlink(self.log)
        except OSError:
            pass


_shared: TaskTemplate | None = None
_shared_owner = 0
_holders: set[object] = set()  # the clusters of this process that fork from the shared template
_shared_lock = threading.Lock()


def _start_if(start: bool) -> TaskTemplate | None:
    """The shared template (started if ``start`` and it is not running); called with ``_shared_lock`` held."""
    global _shared, _shared_owner
    # A process forked from ours must not use our template (its pipes are ours), nor count our holders.
    if _shared_owner != os.getpid():
        _shared = None
        _holders.clear()
    if _shared is None or not _shared.alive:
        if not start:
            return None
        _shared, _shared_owner = TaskTemplate(), os.getpid()
    return _shared


def shared_template(start: bool = True) -> TaskTemplate | None:
    """This process's template, started on first use (and again if it died); None when not started.

    Example:
        >>> shared_template(start=False) is None or shared_template(start=False).alive
        True
    """
    with _shared_lock:
        return _start_if(start)


def hold_template(holder: object) -> TaskTemplate:
    """The shared template, started if needed and kept running until ``holder`` (and every other holder) lets
    go of it with :func:`release_template`. Holding twice is holding once.

    Example:
        >>> hold_template("cluster-a").alive
        True
        >>> release_template("cluster-a")
    """
    with _shared_lock:
        template = _start_if(True)
        _holders.add(holder)
        return template


def release_template(holder: object) -> None:
    """``holder`` no longer needs the template; the last holder's release closes it (and waits until it has
    exited). Releasing what was not held does nothing.

    Example:
        >>> release_template("never-held")
    """
    global _shared
    with _shared_lock:
        if holder not in _holders or _shared_owner != os.getpid():
            return
        _holders.discard(holder)
        if _holders or _shared is None:
            return
        template, _shared = _shared, None
    template.close()


@atexit.register
def _close_shared() -> None:
    if _shared is not None and _shared_owner == os.getpid():
        _shared.close()
