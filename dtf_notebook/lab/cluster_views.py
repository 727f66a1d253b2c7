"""What the lab extension's REST API shows of a local cluster, as plain JSON-ready data, never a key.

Every function reads the cluster files of this user (see :mod:`~dtf_notebook.notebook.cluster_files`: files of
other users are ignored there) and asks the tasks themselves, with the cluster's key taken from its file, for
their variables. Nothing here knows about HTTP; :mod:`~dtf_notebook.lab.handlers` serves these dicts.

Example:
    >>> import tempfile
    >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
    >>> from dtf_notebook.notebook.local_cluster import LocalCluster
    >>> with LocalCluster(ps=1, workers=1, name="doc-views") as cluster:
    ...     summary = cluster_summary("doc-views")
    ...     print(summary["owner"], summary["state"], [(t["job"], t["status"]) for t in summary["tasks"]])
    ...     print("key" in summary, summary["locked"])
    server running [('ps', 'running'), ('worker', 'running')]
    False True
    >>> del os.environ["JUPYTER_RUNTIME_DIR"]
"""

from __future__ import annotations

import math
import os
from typing import Any

from dtf_notebook.notebook import cluster_files
from dtf_notebook.notebook.cluster_widget import task_rows
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.variable_watcher import VariableWatcher

__all__ = ["cluster_summary", "connect", "list_summaries", "log_tail", "owner_kind", "variables"]

MAX_LOG_BYTES = 256 * 1024  # a log tail never reads more than this from the end of the file


def owner_kind(owner_pid: int) -> str:
    """Who started a cluster, from its owner's command line: ``server`` (this process), ``kernel`` (a Jupyter
    kernel), ``cli`` (``dtf-cluster start``) or ``process`` (any other program).

    Example:
        >>> owner_kind(os.getpid())
        'server'
    """
    if owner_pid == os.getpid():
        return "server"
    try:
        with open(f"/proc/{owner_pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return "process"
    if "ipykernel" in command:
        return "kernel"
    if "dtf-cluster" in command or "dtf_notebook.notebook.cli" in command:
        return "cli"
    return "process"


def connect(name: str) -> LocalCluster:
    """The running cluster ``name``: this process's own object when it started it, else one connected to it.

    Raises:
        ClusterNotFoundError: no such cluster of this user, or it is no longer running.
        ValueError: the name is not a cluster name.

    Example:
        >>> connect("no-such-cluster")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.notebook.cluster_files.ClusterNotFoundError: No cluster 'no-such-cluster' ...
    """
    cluster_files.check_name(name)  # a name, never a path: the API reaches cluster files by name only
    return LocalCluster.connect(name, timeout=2.0)


def _record(cluster: LocalCluster) -> cluster_files.ClusterRecord:
    return cluster_files.find(cluster.name)


def cluster_summary(name: str, with_variables: bool = True) -> dict[str, Any]:
    """One cluster: its file's public fields, who owns it, its state and one row per task (status, pid,
    variables held and their bytes, resident memory), with the totals.

    Raises:
        ClusterNotFoundError: no such running cluster of this user.

    Example:
        >>> cluster_summary("no-such-cluster")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.notebook.cluster_files.ClusterNotFoundError: No cluster 'no-such-cluster' ...
    """
    cluster = connect(name)
    return _summary(cluster, _record(cluster), with_variables)


def _summary(cluster: LocalCluster, record: cluster_files.ClusterRecord, with_variables: bool) -> dict[str, Any]:
    rows = task_rows(cluster, cluster.cluster_key, timeout=1.0, variables=with_variables)
    data = record.public()
    data.pop("log_dir", None)  # where logs are is the server's business; the API serves their tails
    for task in data.get("tasks", []):
        task.pop("log", None)
    return {
        "name": record.name,
        "owner": owner_kind(record.owner_pid),
        "owner_pid": record.owner_pid,
        "started": record.started,
        "state": record.state(),
        "locked": record.cluster_key,
        "spec": record.spec,
        "jobs": {job: len(addresses) for job, addresses in record.spec.items()},
        "tasks": rows,
        "variables": sum(r["variables"] or 0 for r in rows),
        "variable_bytes": sum(r["variable_bytes"] or 0 for r in rows),
        "memory_bytes": sum(r["memory_bytes"] or 0 for r in rows),
    }


def list_summaries(with_variables: bool = True) -> list[dict[str, Any]]:
    """Every running cluster of this user, oldest first (see :func:`cluster_summary`); a cluster that stops
    while it is being looked at is left out.

    Example:
        >>> isinstance(list_summaries(), list)
        True
    """
    summaries = []
    for record in cluster_files.list_clusters():
        try:
            cluster = connect(record.name)
            summaries.append(_summary(cluster, record, with_variables))
        except (cluster_files.ClusterNotFoundError, ValueError):
            continue  # gone meanwhile, or a file we cannot use
    return summaries


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such a statistic (of an empty or overflowed variable) becomes its text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def variables(name: str, timeout: float = 2.0) -> dict[str, Any]:
    """The variables every task of cluster ``name`` holds, with their statistics computed on the task:
    ``{"tasks": {task: "ok" | "unavailable: ..."}, "variables": [row, ...]}`` (rows as
    :attr:`~dtf_notebook.notebook.variable_watcher.VariableWatcher.rows`).

    Raises:
        ClusterNotFoundError: no such running cluster of this user.

    Example:
        >>> variables("no-such-cluster")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.notebook.cluster_files.ClusterNotFoundError: No cluster 'no-such-cluster' ...
    """
    cluster = connect(name)
    key = cluster.cluster_key
    watcher = VariableWatcher(cluster.spec, cluster_key=key, timeout=timeout, start=False)
    rows = watcher.poll()
    return {
        "tasks": dict(watcher.status),
        "variables": [{k: _finite(v) for k, v in row.items()} for row in rows],
    }


def log_tail(name: str, job: str, task: int, lines: int = 200) -> dict[str, Any]:
    """The last ``lines`` lines (at most :data:`MAX_LOG_BYTES`) of the log of a task's current process.

    Raises:
        ClusterNotFoundError: no such running cluster of this user.
        ValueError: no such task in it.

    Example:
        >>> log_tail("no-such-cluster", "ps", 0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.notebook.cluster_files.ClusterNotFoundError: No cluster 'no-such-cluster' ...
    """
    record = cluster_files.find(cluster_files.check_name(name))
    row = next((t for t in record.tasks if t["job"] == job and t["task"] == task), None)
    if row is None:
        have = ", ".join(f"{t['job']}:{t['task']}" for t in record.tasks)
        raise ValueError(f"Cluster {name!r} has no task {job}:{task} (its tasks: {have})")
    try:
        with open(row["log"], "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(size - MAX_LOG_BYTES, 0))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        text, size = "", 0
    kept = text.splitlines(keepends=True)[-lines:] if lines > 0 else []
    return {"job": job, "task": task, "pid": row["pid"], "size": size, "text": "".join(kept)}
