"""``%dtf_cluster``: start, watch and stop local clusters from a notebook.

``%load_ext dtf_notebook`` registers the magic; ``%dtf_cluster?`` lists the sub-commands and
``%dtf_cluster help COMMAND`` shows one's options::

    %dtf_cluster start [--ps N] [--workers M] [--job NAME=N ...] [--virtual-gpus K] [--gpus-per-worker G]
                       [--name NAME] [--var NAME] [--port JOB=PORT[,PORT...]] [--stream-logs]
                       [--file-root DIR] [--no-auth]
    %dtf_cluster status [NAME]            the live task table (returns it: w = %dtf_cluster status)
    %dtf_cluster stop [--all] [NAME]
    %dtf_cluster restart JOB:TASK         %dtf_cluster kill JOB:TASK
    %dtf_cluster connect NAME|FILE        attach to another kernel's cluster
    %dtf_cluster list                     %dtf_cluster spec [NAME]
    %dtf_cluster logs JOB:TASK [--follow] [--tail N]

Several clusters may run; commands act on the current one (the last started or connected) unless a
name is given. Mistakes and failures (a bad ``JOB:TASK``, no such task, no cluster, a port in use, a
task that died) end the command with one message naming what went wrong, not a traceback.

Example:
    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> shell.register_magics(ClusterMagics)
    >>> shell.run_line_magic("dtf_cluster", "start --ps 1 --workers 1 --name doc-magics")  # doctest: +ELLIPSIS
    Started cluster 'doc-magics' (ps=1 worker=1) in ... s; the variable `cluster` holds it.
    LocalCluster 'doc-magics': running, 2 tasks
    ...
    >>> shell.user_ns["cluster"].target("worker", 0).startswith("zmq://127.0.0.1:")
    True
    >>> shell.run_line_magic("dtf_cluster", "kill worker0")
    Traceback (most recent call last):
    ...
    IPython.core.error.UsageError: Expected a task as JOB:TASK (like worker:0), not 'worker0'
    >>> shell.run_line_magic("dtf_cluster", "stop")
    Stopped cluster 'doc-magics' (2 tasks).
"""

from __future__ import annotations

import contextlib
import errno
import keyword
import os
import re
import shlex
import socket
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from dtf_notebook import errors
from dtf_notebook.notebook import cluster_files
from dtf_notebook.notebook.cli import format_age
from dtf_notebook.notebook.cluster_widget import ClusterWidget, cluster_alive
from dtf_notebook.notebook.local_cluster import (
    ClusterStartError,
    LocalCluster,
    UnlockedClusterWarning,
    running_clusters,
    unlocked_message,
)
from dtf_notebook.notebook.task_logs import LogFollower, LogStream, follow
from dtf_notebook.notebook.task_programs import TaskPrograms, launch_per_task
from dtf_notebook.notebook.widget_fallback import text_table, widgets_available

__all__ = ["ClusterMagics", "parse_task"]

_TASK = re.compile(r"\A([A-Za-z_][A-Za-z0-9_.-]*):([0-9]+)\Z")


def parse_task(text: str) -> tuple[str, int]:
    """``"worker:1"`` as ``("worker", 1)``.

    Raises:
        UsageError: ``text`` is not ``JOB:TASK``.

    Example:
        >>> parse_task("worker:1")
        ('worker', 1)
    """
    match = _TASK.match(text.strip())
    if match is None:
        raise UsageError(f"Expected a task as JOB:TASK (like worker:0), not {text!r}")
    return match.group(1), int(match.group(2))


def _parse_pairs(values: list[str], option: str, what: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        job, sep, rest = value.partition("=")
        if not sep or not job or not rest:
            raise UsageError(f"{option} takes JOB={what}, not {value!r}")
        pairs[job] = rest
    return pairs


def _int(text: str, option: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{option} needs a whole number, not {text!r}") from None


def _port(text: str) -> int:
    """A ``--port`` value: a TCP port a task can listen on (0 would let the system pick one the cluster
    spec cannot know)."""
    port = _int(text, "--port")
    if not 1 <= port <= 65535:
        raise UsageError(f"--port needs port numbers from 1 to 65535, not {text!r}")
    return port


@contextlib.contextmanager
def _plain_errors(what: str = "") -> Iterator[None]:
    """Turns the errors a cluster operation reports about its arguments or tasks into one UsageError line."""
    try:
        yield
    except ClusterStartError as e:
        raise UsageError(_start_failure(e)) from None
    except (ValueError, RuntimeError, LookupError, FileExistsError, errors.OpError) as e:
        message = e.message if isinstance(e, errors.OpError) else str(e)
        raise UsageError(f"{what}{message}") from None


def _start_failure(e: ClusterStartError) -> str:
    """A short account of a task that did not start: the port it could not have, or its last log lines."""
    if "Address already in use" in e.log:
        return (
            f"Task {e.job}:{e.task} could not listen on its port: another process uses it. Pick another port "
            f"(--port {e.job}=PORT) or leave --port out to get a free one."
        )
    first = str(e).splitlines()[0]
    tail = "\n".join(e.log.strip().splitlines()[-8:])
    return f"{first}\n{tail}" if tail else first


def _check_ports_free(ports: dict[str, list[int]]) -> None:
    for job, job_ports in ports.items():
        for index, port in enumerate(job_ports):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the task's own bind does
                try:
                    s.bind(("127.0.0.1", port))
                except OSError as e:
                    if e.errno != errno.EADDRINUSE:
                        raise UsageError(f"Port {port} for task {job}:{index} cannot be used: {e.strerror}") from None
                    raise UsageError(
                        f"Port {port} for task {job}:{index} is in use by another process; pick another "
                        f"(--port {job}=PORT) or leave --port out to get a free one"
                    ) from None


# ---- sub-command parsers (their help texts make up %dtf_cluster?) ----------------------------------
@magic_arguments("dtf_cluster start")
@argument("--ps", type=int, default=1, metavar="N", help="tasks of job ps (default 1)")
@argument("--workers", type=int, default=2, metavar="M", help="tasks of job worker (default 2)")
@argument(
    "--job",
    action="append",
    nargs="+",
    default=[],
    metavar="NAME=N",
    help="tasks of any job, e.g. chief=1 evaluator=1 (repeatable)",
)
@argument("--virtual-gpus", type=int, default=0, metavar="K", help="CPU-backed /gpu:N devices per non-ps task")
@argument("--gpus-per-worker", type=int, default=None, metavar="G", help="GPUs per non-ps task (virtual without)")
@argument("--name", default=None, help="the cluster's name (default: the first free local-N)")
@argument("--var", default="cluster", metavar="NAME", help="the variable to bind it to (default: cluster)")
@argument("--port", action="append", default=[], metavar="JOB=PORT[,PORT...]", help="fixed ports (repeatable)")
@argument("--threads", type=int, default=1, metavar="T", help="torch threads per task (default 1)")
@argument("--stream-logs", action="store_true", help="show the tasks' output as it comes")
@argument("--file-root", action="append", default=None, metavar="DIR", help="confine the tasks' files to DIR")
@argument(
    "--no-auth",
    action="store_true",
    help="no key: every process of this machine may then run ops on the tasks (default: locked by a random key)",
)
def _start_args() -> None:
    """Start a local cluster, bind it to a variable and show its live task table."""


@magic_arguments("dtf_cluster status")
@argument("name", nargs="?", metavar="NAME", help="a cluster (default: the current one)")
def _status_args() -> None:
    """Show the live task table of a cluster (and return it), and why any task ended."""


@magic_arguments("dtf_cluster stop")
@argument("--all", action="store_true", help="every cluster this kernel started or connected to")
@argument(
    "name", nargs="?", metavar="NAME", help="a cluster (default: the current one); another kernel's is stopped too"
)
def _stop_args() -> None:
    """Stop a cluster's tasks."""


@magic_arguments("dtf_cluster restart")
@argument("task", metavar="JOB:TASK")
@argument("--cluster", metavar="NAME", help="default: the current cluster")
def _restart_args() -> None:
    """Kill a task if it runs and start it again on its address."""


@magic_arguments("dtf_cluster kill")
@argument("task", metavar="JOB:TASK")
@argument("--cluster", metavar="NAME", help="default: the current cluster")
def _kill_args() -> None:
    """Kill a task at once (SIGKILL), as a crash would."""


@magic_arguments("dtf_cluster connect")
@argument("cluster", metavar="NAME|FILE", help="a cluster name or cluster file")
@argument("--var", default="cluster", metavar="NAME", help="the variable to bind it to (default: cluster)")
def _connect_args() -> None:
    """Attach to a cluster another kernel started; it becomes the current cluster."""


@magic_arguments("dtf_cluster list")
def _list_args() -> None:
    """List the running clusters of this machine (* marks the current one)."""


@magic_arguments("dtf_cluster spec")
@argument("name", nargs="?", metavar="NAME", help="a cluster (default: the current one)")
def _spec_args() -> None:
    """Return the cluster spec, {job: ["host:port", ...]}."""


@magic_arguments("dtf_cluster logs")
@argument("task", metavar="JOB:TASK")
@argument("--follow", "-f", action="store_true", help="keep printing new output until interrupted")
@argument("--tail", type=int, default=None, metavar="N", help="only the last N lines")
@argument("--cluster", metavar="NAME", help="default: the current cluster")
def _logs_args() -> None:
    """Print a task's output (of its latest start)."""


@magic_arguments("dtf_cluster run")
@argument("program", metavar="PROGRAM.py", help="the program every task runs; its own arguments go after ' -- '")
@argument("--chief", type=int, default=1, metavar="N", help="chief tasks (default 1; 0 with --master)")
@argument("--master", type=int, default=0, metavar="N", help="master tasks (contrib.learn's chief)")
@argument("--workers", type=int, default=1, metavar="N", help="worker tasks (default 1)")
@argument("--ps", type=int, default=1, metavar="N", help="ps tasks (default 1)")
@argument("--evaluator", action="store_true", help="also an evaluator task")
@argument("--environment", default=None, metavar="ENV", help="TF_CONFIG's environment (cloud: for Experiments)")
@argument("--timeout", type=float, default=None, metavar="S", help="stop every task after S seconds")
def _run_args() -> None:
    """Run a program once per task with TF_CONFIG (train_and_evaluate, learn_runner) to its end."""


@magic_arguments("dtf_cluster help")
@argument("command", nargs="?", help="a sub-command")
def _help_args() -> None:
    """Show the options of one sub-command, or of all."""


_PARSERS = {
    "start": _start_args,
    "status": _status_args,
    "stop": _stop_args,
    "restart": _restart_args,
    "kill": _kill_args,
    "connect": _connect_args,
    "list": _list_args,
    "spec": _spec_args,
    "logs": _logs_args,
    "run": _run_args,
    "help": _help_args,
}
# What %dtf_cluster? shows: one line per command; each command's options are one `%dtf_cluster help COMMAND` away.
_HELP = (
    "Start, watch and stop local dtf_notebook clusters: %dtf_cluster COMMAND [options]\n\n"
    + "\n".join(f"  {name:<8} {parser.parser.description}" for name, parser in _PARSERS.items())
    + "\n\nCommands act on the current cluster (the last started or connected) unless a name is given.\n"
    "%dtf_cluster help COMMAND shows a command's options, e.g. %dtf_cluster help start."
)


@magics_class
class ClusterMagics(Magics):
    """The ``%dtf_cluster`` line magic and the clusters it knows (started or connected in this kernel).

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> magics = ClusterMagics(InteractiveShell.instance())
        >>> print(magics.dtf_cluster.__doc__.splitlines()[2])
          start    Start a local cluster, bind it to a variable and show its live task table.
    """

    def __init__(self, shell: Any = None) -> None:
        super().__init__(shell)
        # A reloaded extension keeps the clusters this process runs.
        self._clusters: dict[str, LocalCluster] = {c.name: c for c in running_clusters()}
        self._current: str | None = next(reversed(self._clusters), None)
        self._widgets: dict[str, ClusterWidget] = {}
        self._streams: dict[str, LogStream] = {}

    @line_magic
    def dtf_cluster(self, line: str) -> Any:
        command, _, rest = line.strip().partition(" ")
        if not command:
            raise UsageError(f"%dtf_cluster needs a command: {', '.join(_PARSERS)} (%dtf_cluster? for help)")
        parser = _PARSERS.get(command)
        if parser is None:
            raise UsageError(f"No %dtf_cluster command {command!r}; the commands are {', '.join(_PARSERS)}")
        program_args: list[str] = []
        if command == "run" and " -- " in f" {rest} ":
            rest, _, tail = f" {rest} ".partition(" -- ")
            program_args = shlex.split(tail)
        args = parse_argstring(parser, rest)
        if command == "run":
            args.program_args = program_args
        return getattr(self, f"_{command}")(args)

    dtf_cluster.__doc__ = _HELP

    def close(self) -> None:
        """Stops refreshing the tables and streaming logs (the clusters keep running)."""
        for closable in [*self._widgets.values(), *self._streams.values()]:
            closable.close()
        self._widgets.clear()
        self._streams.clear()

    # ---- which cluster ------------------------------------------------------------------------
    def _forget(self, name: str) -> None:
        self._clusters.pop(name, None)
        for table in (self._widgets, self._streams):
            closable = table.pop(name, None)
            if closable is not None:
                closable.close()
        if self._current == name:
            self._current = next(reversed(self._clusters), None)

    def _cluster(self, name: str | None) -> LocalCluster:
        for known, cluster in list(self._clusters.items()):
            if not cluster_alive(cluster):
                self._forget(known)
        if name is None:
            if self._current is None:
                raise UsageError(
                    "No cluster is running in this kernel: start one with %dtf_cluster start, or attach to "
                    "another kernel's with %dtf_cluster connect NAME (%dtf_cluster list shows them)"
                )
            return self._clusters[self._current]
        if name not in self._clusters:
            with _plain_errors():
                self._clusters[name] = LocalCluster.connect(name)
        return self._clusters[name]

    def _widget(self, cluster: LocalCluster) -> ClusterWidget:
        table = self._widgets.get(cluster.name)
        if table is None:
            table = self._widgets[cluster.name] = ClusterWidget(cluster)
        return table

    def _bind(self, var: str, cluster: LocalCluster) -> None:
        """Makes ``cluster`` the current one (known to this kernel) and binds it to the user's variable ``var``."""
        self._clusters[cluster.name] = cluster
        self._current = cluster.name
        self.shell.push({var: cluster})

    @staticmethod
    def _check_var(var: str) -> None:
        if not var.isidentifier() or keyword.iskeyword(var):
            raise UsageError(f"--var needs a Python variable name, not {var!r}")

    # ---- sub-commands -------------------------------------------------------------------------
    def _start(self, args: Any) -> None:
        self._check_var(args.var)
        jobs = {"ps": args.ps, "worker": args.workers}
        # --job a=1 --job b=2 and --job a=1 b=2 alike: append collects one list per --job.
        pairs = [pair for group in args.job for pair in group]
        jobs.update({job: _int(n, "--job") for job, n in _parse_pairs(pairs, "--job", "N").items()})
        ports = {
            job: [_port(p) for p in text.split(",")]
            for job, text in _parse_pairs(args.port, "--port", "PORT[,PORT...]").items()
        }
        if args.name is not None and self._reuse(args, jobs):
            return
        _check_ports_free(ports)
        with _plain_errors("Cannot start the cluster: "):
            cluster = LocalCluster(
                jobs=jobs,
                virtual_gpus=args.virtual_gpus,
                gpus_per_worker=args.gpus_per_worker,
                name=args.name,
                threads=args.threads,
                ports=ports,
                cluster_key=False if args.no_auth else None,
                file_roots=args.file_root,
            )
        with _plain_errors(), warnings.catch_warnings():
            warnings.simplefilter("ignore", UnlockedClusterWarning)  # said below in a plain line, not a warning
            cluster.start()
        if not cluster.locked:
            print(unlocked_message(cluster.name, "--no-auth") + ".", file=sys.stderr)
        self._bind(args.var, cluster)
        layout = " ".join(f"{job}={n}" for job, n in cluster.jobs.items())
        print(
            f"Started cluster {cluster.name!r} ({layout}) in {cluster.startup_seconds:.2f} s; "
            f"the variable `{args.var}` holds it."
        )
        display(self._widget(cluster))
        if args.stream_logs:
            stream = self._streams[cluster.name] = LogStream(cluster, use_widget=widgets_available())
            if stream.widget is not None:
                display(stream.widget)

    def _reuse(self, args: Any, jobs: dict[str, int]) -> bool:
        """A start cell run again (Run All, or by hand): this kernel's running cluster of that name is reused
        when it has the same tasks; with other tasks, the error says to stop it first."""
        ours = {c.name: c for c in running_clusters()}
        cluster = ours.get(args.name)
        if cluster is None or not cluster_alive(cluster):
            return False
        wanted = {job: n for job, n in jobs.items() if n > 0}
        layout = " ".join(f"{job}={len(a)}" for job, a in cluster.spec.items())
        if {job: len(a) for job, a in cluster.spec.items()} != wanted:
            raise UsageError(
                f"Cluster {args.name!r} is already running in this kernel with other tasks ({layout}): "
                f"%dtf_cluster stop {args.name} first, then start it again"
            )
        self._bind(args.var, cluster)
        print(
            f"Cluster {cluster.name!r} ({layout}) is already running in this kernel: reusing it, with the "
            f"variables its tasks hold; the variable `{args.var}` holds it. For a fresh cluster: "
            f"%dtf_cluster stop {cluster.name}, then start again."
        )
        display(self._widget(cluster))
        return True

    def _status(self, args: Any) -> ClusterWidget:
        cluster = self._cluster(args.name)
        for info in cluster.tasks:
            if info.status.startswith("exited"):
                tail = "\n".join(cluster.logs(info.job, info.task).strip().splitlines()[-8:])
                print(
                    f"Task {info.job}:{info.task} {info.status} (pid {info.pid}); last lines of its log:\n"
                    f"{tail or '(empty)'}\n(%dtf_cluster restart {info.job}:{info.task} starts it again)",
                    file=sys.stderr,
                )
        return self._widget(cluster)

    def _stop(self, args: Any) -> None:
        if args.all and args.name:
            raise UsageError("%dtf_cluster stop takes a cluster name or --all, not both")
        if args.all:
            # Also the clusters this process started in code, which the magic never saw.
            candidates = {**{c.name: c for c in running_clusters()}, **self._clusters}
            targets = [c for c in candidates.values() if cluster_alive(c)]
            if not targets:
                print("No clusters to stop.")
        else:
            targets = [self._cluster(args.name)]
        failures = []
        for cluster in targets:
            count = len(cluster.tasks)
            try:
                cluster.stop()
            except RuntimeError as e:  # a task that would not stop: go on with the others, then say so
                failures.append(str(e))
                continue
            finally:
                self._forget(cluster.name)  # after the stop, so its table's last refresh says stopped
            print(f"Stopped cluster {cluster.name!r} ({count} task{'s' * (count != 1)}).")
        if failures:
            raise UsageError("\n".join(failures))

    def _task_command(self, args: Any) -> tuple[LocalCluster, str, int]:
        job, task = parse_task(args.task)
        cluster = self._cluster(args.cluster)
        with _plain_errors(f"Cluster {cluster.name!r}: "):
            cluster.cluster_spec.task_address(job, task)
        return cluster, job, task

    def _restart(self, args: Any) -> None:
        cluster, job, task = self._task_command(args)
        with _plain_errors():
            info = cluster.restart(job, task)
        print(f"Restarted task {job}:{task} of cluster {cluster.name!r} (pid {info.pid}, {info.address}).")

    def _kill(self, args: Any) -> None:
        cluster, job, task = self._task_command(args)
        with _plain_errors():
            cluster.kill(job, task)
        print(f"Killed task {job}:{task} of cluster {cluster.name!r}; %dtf_cluster restart {job}:{task} restarts it.")

    def _connect(self, args: Any) -> None:
        self._check_var(args.var)
        with _plain_errors():
            cluster = LocalCluster.connect(args.cluster)
        # A cluster of this process (or connected before) keeps its object, which can restart tasks.
        ours = {c.name: c for c in running_clusters()}
        known = ours.get(cluster.name) or self._clusters.get(cluster.name)
        if known is not None and cluster_alive(known):
            cluster = known
        self._bind(args.var, cluster)
        layout = " ".join(f"{job}={len(a)}" for job, a in cluster.spec.items())
        print(f"Connected to cluster {cluster.name!r} ({layout}); the variable `{args.var}` holds it.")
        display(self._widget(cluster))

    def _list(self, args: Any) -> None:
        records = cluster_files.list_clusters()
        if not records:
            print("No running clusters.")
            return
        now, rows = time.time(), []
        for r in records:
            mark = "*" if r.name == self._current else ""
            owner = f"{r.owner_pid} (this kernel)" if r.owner_pid == os.getpid() else str(r.owner_pid)
            jobs = " ".join(f"{job}={len(a)}" for job, a in r.spec.items())
            rows.append([mark, r.name, jobs, owner, format_age(now - r.started), r.state()])
        print(text_table(["", "NAME", "TASKS", "OWNER PID", "AGE", "STATUS"], rows))

    def _spec(self, args: Any) -> dict[str, list[str]]:
        return self._cluster(args.name).spec

    def _logs(self, args: Any) -> None:
        cluster, job, task = self._task_command(args)
        follower = LogFollower(cluster, [(job, task)])
        text = follower.poll()
        if args.tail is not None:
            text = "".join(text.splitlines(keepends=True)[-args.tail :]) if args.tail > 0 else ""
        if not args.follow:
            print(text if text else f"(task {job}:{task} has written nothing)", end="" if text else "\n")
            return
        follow(follower, lambda: cluster_alive(cluster), text, f"{job}:{task}")

    def _run(self, args: Any) -> TaskPrograms:
        jobs = {"chief": args.chief, "master": args.master, "worker": args.workers, "ps": args.ps}
        jobs = {job: count for job, count in jobs.items() if count > 0}
        if args.evaluator:
            jobs["evaluator"] = 1
        if not os.path.isfile(args.program):
            raise UsageError(f"No program file {args.program!r}")
        run = launch_per_task(args.program, jobs, args.program_args, environment=args.environment)
        print(f"Started {', '.join(t.name for t in run.tasks)} of {args.program}; logs in {run.log_dir}")
        try:
            run.wait(args.timeout)
        except TimeoutError as e:
            print(e)
        except KeyboardInterrupt:
            run.stop()
            print("Interrupted: every task was stopped.")
        print(run.summary())
        return run

    def _help(self, args: Any) -> None:
        if args.command is None:
            print("\n".join(parser.__doc__ for parser in _PARSERS.values()))
        elif args.command in _PARSERS:
            print(_PARSERS[args.command].__doc__)
        else:
            raise UsageError(f"No %dtf_cluster command {args.command!r}; the commands are {', '.join(_PARSERS)}")
