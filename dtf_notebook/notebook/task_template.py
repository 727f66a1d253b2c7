"""A warmed template process that forks cluster tasks, so that a task starts in milliseconds.

Every task of a local cluster needs ``torch`` and ``dtf_notebook``, whose import
costs one to two seconds per process. The template (like multiprocessing's
forkserver) is a process that imports them once and then waits; asked for a
task, it forks a child that becomes the task: it points its output at the
task's log, resets what a fork copies but must not share (signal handlers,
random seeds, the parent's pipes), sets torch's thread count, and runs
:func:`dtf_notebook.server.main` with the task's arguments, exactly like
``python -m dtf_notebook.server``.

The template runs no thread and opens no ZeroMQ context (forking a process
with threads can copy a lock held by a thread that does not exist in the
child). It talks to its parent over its stdin/stdout pipes in JSON lines, never
pickle::

    parent → template   {"op": "spawn", "id": 1, "args": [...], "log": "/tmp/.../worker-0.log",
                         "env": {"CUDA_VISIBLE_DEVICES": "0"}, "threads": 1}
    template → parent   {"event": "hello", "pid": 123, "threads": 1}        once, when warm
                        {"id": 1, "pid": 124}        or  {"id": 1, "error": "..."}
                        {"event": "exit", "pid": 124, "code": -9}           when a task ends

Lifetime: the template exits, stopping its tasks, when its stdin closes (the
parent exited or was killed) or its parent changes; every task also exits
when its parent process goes, so even a SIGKILLed kernel leaves nothing behind.
The parent owns every cluster the template forks tasks for, so when the
template outlives it with tasks still running (the parent was killed before it
could stop its clusters), it reaps those tasks and then removes the cluster
files whose owner and tasks are gone, with their temporary log directories
(:func:`~dtf_notebook.notebook.cluster_files.clean_stale`).
``python -m dtf_notebook.notebook.task_template task --parent-pid P -- ARGS``
runs one task in a plain process with the same watch on its parent (the
fallback where fork is unavailable).

The parent's side is :class:`~dtf_notebook.notebook.template_client.TaskTemplate`.

Example:
    >>> native_threads() >= 1
    True
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import select
import signal
import sys
import threading
import time
import traceback
from typing import Any

from dtf_notebook.notebook.pids import pid_running, start_ticks

__all__ = ["main", "native_threads", "run_task"]


def native_threads() -> int:
    """Threads of this process as the OS counts them (Python's and native ones; 1 where unknown).

    Example:
        >>> native_threads() >= threading.active_count()  # native threads (torch's pool, ...) count too
        True
    """
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


# ---- in a task process ---------------------------------------------------------------------------
def _watch_parent(parent: int) -> None:
    """Stops this task when its parent goes (the task is then re-parented, so ``getppid`` changes)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.25)
        os.kill(os.getpid(), signal.SIGTERM)  # the server's handler stops it cleanly
        time.sleep(5.0)
        os._exit(1)

    threading.Thread(target=watch, name="dtf-parent-watch", daemon=True).start()


def run_task(args: list[str], parent: int, threads: int = 1) -> None:
    """Runs one task's server (``dtf_notebook.server.main(args)``) in this process, then leaves it.

    Exits with the server's status: 0 when stopped, 1 with a traceback on an error, 2 for bad arguments.
    """
    sys.argv = ["dtf-server", *args]
    try:
        import torch

        from dtf_notebook import server

        _watch_parent(parent)
        # As the server would with OMP_NUM_THREADS: in a forked child the template's setting is no guide.
        torch.set_num_threads(threads)
        code = server.main(args)
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
        code = e.code if isinstance(e.code, int) else int(e.code is not None)
    except BaseException:  # noqa: BLE001 - reported in the task's log, like an uncaught error would be
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


def _become_task(request: dict[str, Any], parent: int, inherited: list[int]) -> None:
    """In a freshly forked child: turn into the task ``request`` describes (never returns)."""
    signal.set_wakeup_fd(-1)
    for fd in inherited:
        os.close(fd)  # the template's pipes: the parent must see them close when the template goes
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    for key, value in (request.get("env") or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
    # Forked children share the template's random state: step ids and unseeded ops must differ per task.
    # (Generators the template never created are seeded afresh by whoever creates them in the task.)
    import torch

    random.seed()
    torch.seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    threads = int(request.get("threads", 1))
    os.environ["OMP_NUM_THREADS"] = str(threads)
    run_task([str(a) for a in request["args"]], parent, threads)


# ---- the template process ------------------------------------------------------------------------
class _Template:
    """The template's loop: read requests, fork tasks, reap them and report their exit codes."""

    def __init__(self, log: str | None = None) -> None:
        self.parent, self.log = os.getppid(), log
        self.parent_ticks = start_ticks(self.parent)
        # Keep the pipes on private descriptors; stray prints of imported code then go to the template's log.
        self.requests = os.dup(0)
        self.replies = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        os.close(devnull)
        # SIGCHLD wakes the loop (through the wakeup pipe) so exits are reported at once.
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a kernel interrupt is not meant for the cluster
        self.children: set[int] = set()

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.replies, data) :]

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            self.children.discard(pid)
            with contextlib.suppress(OSError):  # the reply pipe is gone with the parent: keep reaping all the same
                self.send({"event": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})

    def spawn(self, request: dict[str, Any]) -> int:
        if not isinstance(request.get("args"), list) or not isinstance(request.get("log"), str):
            raise ValueError("spawn needs 'args' (a list) and 'log' (a path)")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                _become_task(request, os.getppid(), [self.requests, self.replies, self.wake_r, self.wake_w])
            except BaseException:  # noqa: BLE001 - the task's log (or, before it was opened, the template's) says why
                traceback.print_exc()
                sys.stderr.flush()
            finally:
                os._exit(70)  # only reached when becoming the task itself failed
        self.children.add(pid)
        return pid

    def handle(self, line: bytes) -> None:
        request = None
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or request.get("op") != "spawn":
                raise ValueError(f"unknown request {line[:200]!r}")
            self.send({"id": request.get("id"), "pid": self.spawn(request)})
        except (ValueError, OSError) as e:
            self.send({"id": request.get("id") if isinstance(request, dict) else None, "error": str(e)})

    def serve(self) -> None:
        # What a task needs beyond the package itself (imported by ``-m``): the server and its entry point, and
        # torch, ZeroMQ and safetensors, which the package imports only when it first uses them (lazy_modules):
        # imported here once, they are in every task forked from this template.
        import dtf_notebook.distributed.server  # noqa: F401
        import dtf_notebook.server  # noqa: F401
        from dtf_notebook.lazy_modules import F, load, safetensors, safetensors_torch, torch, zmq

        load(torch, F, zmq, safetensors, safetensors_torch)

        # Keep the imported objects out of the tasks' garbage collections: a collection would touch (and so
        # copy) every page the fork shares with the template.
        gc.freeze()
        self.send({"event": "hello", "pid": os.getpid(), "threads": native_threads()})
        buffer = b""
        while os.getppid() == self.parent:
            try:
                readable, _, _ = select.select([self.requests, self.wake_r], [], [], 0.5)
            except InterruptedError:
                readable = []
            if self.wake_r in readable:
                os.read(self.wake_r, 4096)
            self.reap()
            if self.requests in readable:
                chunk = os.read(self.requests, 65536)
                if not chunk:
                    break  # the parent closed the pipe or died
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in filter(None, lines):
                    self.handle(line)
        self.shutdown()

    def parent_gone(self, patience: float) -> bool:
        """Whether our parent has exited, waiting up to ``patience`` s (a killed parent closes our pipe a moment
        before it counts as gone)."""
        deadline = time.monotonic() + patience
        while pid_running(self.parent, self.parent_ticks):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def shutdown(self) -> None:
        """Stops every task still running (SIGTERM, then SIGKILL after 3 s), cleans up after a killed parent, exits."""
        # A parent that ends in order stops its clusters (removing their files) before it closes our pipe: tasks
        # still running here mean it was killed, and its cluster files are left for us.
        orphaned = bool(self.children)
        for sig, patience in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
            for pid in list(self.children):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + patience
            while self.children and time.monotonic() < deadline:
                self.reap()
                time.sleep(0.02)
        clean = True
        if orphaned and self.parent_gone(1.0):
            try:
                from dtf_notebook.notebook import cluster_files

                cluster_files.clean_stale()  # our parent's clusters now have no owner and no task
            except Exception:  # noqa: BLE001 - the template must still exit; its log keeps the reason
                traceback.print_exc()
                clean = False
        if self.log and clean:
            with contextlib.suppress(OSError):
                os.unlink(self.log)  # an orderly end: nobody needs the template's output now
        os._exit(0)


def main(argv: list[str] | None = None) -> None:
    """``serve`` runs a template; ``task --parent-pid P [--threads N] -- ARGS`` runs one task in this process.

    Example:
        >>> main(["task"])  # a task needs --parent-pid: a usage error, as from the command line
        Traceback (most recent call last):
            ...
        SystemExit: 2
    """
    p = argparse.ArgumentParser(prog="python -m dtf_notebook.notebook.task_template")
    sub = p.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run a template on stdin/stdout (started by TaskTemplate)")
    serve.add_argument("--log", help="the template's own output file, removed when it ends in order")
    task = sub.add_parser("task", help="run one task that stops when process PARENT_PID goes")
    task.add_argument("--parent-pid", type=int, required=True)
    task.add_argument("--threads", type=int, default=1)
    task.add_argument("args", nargs=argparse.REMAINDER, help="dtf-server arguments (after --)")
    options = p.parse_args(argv)
    if options.command == "serve":
        _Template(options.log).serve()
    else:
        args = options.args[1:] if options.args[:1] == ["--"] else options.args
        run_task(args, options.parent_pid, options.threads)


if __name__ == "__main__":
    main()
