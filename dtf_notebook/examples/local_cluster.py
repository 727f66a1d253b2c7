"""Run the distributed examples on this machine: task processes on loopback ports, all stopped at the end.

The examples are plain TF1 scripts; this module only plays the part of the machines of a real cluster.
:func:`serving` starts one server process per task (what ``server.join()`` in a TF1 script does on a real
machine) with the package's one launcher of local clusters,
:class:`~dtf_notebook.notebook.local_cluster.LocalCluster`, and stops them when the ``with`` block ends.
:func:`run_task_clients` starts one process per task of a job that runs an example script as that task
(``--cluster JSON --job worker --task i``), TF1's between-graph replication where every worker is its own
client; their output is printed live, each line prefixed with the task, and every process still running when
one fails is stopped.

Typical use in an example's ``--local-cluster`` path::

    with serving({"ps": 1, "worker": 2}) as cluster:       # three server processes
        train(target=cluster.target("worker", 0))          # this process is the one client
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from dtf_notebook.distributed.local_process import task_env
from dtf_notebook.notebook.local_cluster import LocalCluster

__all__ = ["TaskClientError", "describe", "run_task_clients", "serving"]


class TaskClientError(RuntimeError):
    """A task's client process failed or ran out of time; the message holds its exit code and last output.

    Example:
        >>> str(TaskClientError("worker:1 exited with code 1; last output: ..."))
        'worker:1 exited with code 1; last output: ...'
    """


def describe(cluster: LocalCluster) -> str:
    """One line naming every started task of ``cluster``: ``job:index pid N at host:port``.

    Example:
        >>> describe(LocalCluster(jobs={"ps": 1}))   # nothing started yet
        ''
    """
    return ", ".join(f"{t.job}:{t.task} pid {t.pid} at {t.address}" for t in cluster.tasks)


@contextmanager
def serving(jobs: dict[str, int], serve: Sequence[str] | None = None) -> Iterator[LocalCluster]:
    """Start the tasks of ``jobs`` as server processes, yield the cluster, stop every process on exit.

    Args:
        jobs: Tasks per job, e.g. ``{"ps": 2, "worker": 2}``; every task gets a free loopback port.
        serve: The jobs to start servers for (default: all). Tasks of the other jobs get an address in
            ``cluster.spec`` but no process: their own client process runs their server (see
            :func:`run_task_clients`).

    Example:
        >>> with serving({"ps": 1, "worker": 1}, serve=["ps"]) as cluster:  # doctest: +ELLIPSIS
        ...     [(t.job, t.task, t.status) for t in cluster.tasks]
        Local cluster {"ps": ["127.0.0.1:..."], "worker": ["127.0.0.1:..."]}: ps:0 pid ... at 127.0.0.1:...
        [('ps', 0, 'running')]
        >>> cluster.task("ps", 0).status   # stopped
        'exited(0)'
    """
    cluster = LocalCluster(jobs=jobs)
    try:
        cluster.start(serve=serve)
        print(f"Local cluster {json.dumps(cluster.spec)}: {describe(cluster)}", flush=True)
        yield cluster
    finally:
        cluster.stop()


def _pump(proc: subprocess.Popen, prefix: str, lines: list[str]) -> None:
    """Copies a client's output to ours line by line, prefixed, and keeps it (a reader thread drains the pipe,
    so a chatty client never blocks on a full pipe)."""
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        print(prefix + line, end="", flush=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def run_task_clients(
    module: str,
    spec: dict[str, list[str]],
    job: str,
    args: Sequence[str] = (),
    timeout: float = 300.0,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """Run ``python -m module --cluster SPEC --job JOB --task i *args`` for every task ``i`` of ``job`` at once.

    Each process is one task of the cluster and its own client, as on a real cluster. Their output is printed
    live with a ``[job:i]`` prefix.

    Args:
        module: The example module, e.g. ``"dtf_notebook.examples.between_graph"``.
        spec: The cluster spec (job -> addresses), e.g. ``LocalCluster.spec``.
        job: The job whose tasks run as client processes.
        args: Further command-line arguments for every process.
        timeout: Seconds all of them together may take.
        env: Their environment (default ``task_env()``); for a locked cluster, ``cluster.client_env()``, which
            hands them the cluster's key file.

    Returns:
        The output of each task, in task order.

    Raises:
        TaskClientError: a process exited with a non-zero code or did not finish in time; every process
            still running is stopped first.

    Example (each worker trains; see ``between_graph.py``, whose ``--local-cluster`` does exactly this):
        >>> with serving({"ps": 2, "worker": 2}, serve=["ps"]) as cluster:  # doctest: +SKIP
        ...     outputs = run_task_clients("dtf_notebook.examples.between_graph", cluster.spec, "worker",
        ...                                    env=cluster.client_env())
    """
    command = [sys.executable, "-m", module, "--cluster", json.dumps(spec), "--job", job]
    procs: list[subprocess.Popen] = []
    outputs: list[list[str]] = []
    pumps: list[threading.Thread] = []
    failure: tuple[int, str] | None = None
    try:
        for index in range(len(spec[job])):
            proc = subprocess.Popen(
                [*command, "--task", str(index), *args],
                env=dict(env) if env is not None else task_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            procs.append(proc)
            outputs.append([])
            pump = threading.Thread(target=_pump, args=(proc, f"[{job}:{index}] ", outputs[-1]), daemon=True)
            pump.start()
            pumps.append(pump)
        deadline = time.monotonic() + timeout
        # Poll them all, so that the first one to fail ends the run (the others may be waiting for it).
        while failure is None:
            codes = [proc.poll() for proc in procs]
            failed = [i for i, code in enumerate(codes) if code not in (None, 0)]
            if failed:
                failure = (failed[0], f"exited with code {codes[failed[0]]}")
            elif None not in codes:
                break
            elif time.monotonic() > deadline:
                failure = (codes.index(None), f"did not finish within {timeout:g} s")
            else:
                time.sleep(0.05)
    finally:
        for proc in procs:
            _stop(proc)
        for proc, pump in zip(procs, pumps):
            pump.join(10)  # the pipe ends once the process has gone
            if proc.stdout is not None:
                proc.stdout.close()
    if failure is not None:
        index, what = failure
        raise TaskClientError(f"Task {job}:{index} {what}. Last output:\n" + "".join(outputs[index][-40:]))
    return ["".join(lines) for lines in outputs]
