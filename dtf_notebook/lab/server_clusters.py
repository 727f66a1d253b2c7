"""Clusters the Jupyter server starts for the lab extension, and what the API does to any cluster's tasks.

:func:`start_options` reads a start request's JSON with the options of ``%dtf_cluster start`` (``ps``,
``workers``, ``jobs``, ``virtual_gpus``, ``gpus_per_worker``, ``name``, ``threads``, ``ports``, ``file_roots``,
``no_auth``) and :func:`start` starts that :class:`~dtf_notebook.notebook.local_cluster.LocalCluster` in the server
process: the server owns it (its tasks follow the server out), so it can also restart its tasks. :func:`stop`,
:func:`kill` and :func:`restart` act on any running cluster of this user by name, as ``%dtf_cluster`` does from
another kernel (a task of a cluster owned by another process can be killed, but only its owner restarts it).

Example:
    >>> import os, tempfile
    >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
    >>> cluster = start(start_options({"ps": 1, "workers": 1, "name": "doc-server"}))
    >>> kill("doc-server", "worker", 0); restart("doc-server", "worker", 0)["status"]
    'running'
    >>> stop("doc-server")
    2
    >>> del os.environ["JUPYTER_RUNTIME_DIR"]
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook.lab.cluster_views import connect
from dtf_notebook.notebook.local_cluster import LocalCluster, UnlockedClusterWarning

__all__ = ["StartOptions", "kill", "restart", "start", "start_options", "stop"]


@dataclass(frozen=True)
class StartOptions:
    """The options of a cluster started through the API (those of ``%dtf_cluster start``).

    Example:
        >>> StartOptions(jobs={"ps": 1, "worker": 2}).cluster().spec.keys()
        dict_keys(['ps', 'worker'])
    """

    jobs: dict[str, int]
    virtual_gpus: int = 0
    gpus_per_worker: int | None = None
    name: str | None = None
    threads: int = 1
    ports: dict[str, list[int]] = field(default_factory=dict)
    file_roots: list[str] | None = None
    no_auth: bool = False

    def cluster(self) -> LocalCluster:
        """The (not yet started) cluster these options describe.

        Raises:
            ValueError: a bad job, count, name, port or root (the message names it).
        """
        return LocalCluster(
            jobs=self.jobs,
            virtual_gpus=self.virtual_gpus,
            gpus_per_worker=self.gpus_per_worker,
            name=self.name,
            threads=self.threads,
            ports=self.ports,
            cluster_key=False if self.no_auth else None,
            file_roots=self.file_roots,
        )


def _count(body: dict[str, Any], key: str, default: int | None, least: int = 0) -> int | None:
    value = body.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{key} must be a whole number >= {least}, not {value!r}")
    return value


def start_options(body: Any) -> StartOptions:
    """Reads a start request: ``{"ps": 1, "workers": 2, "jobs": {"chief": 1}, "virtual_gpus": 0,
    "gpus_per_worker": null, "name": "exp", "threads": 1, "ports": {"ps": [2222]}, "file_roots": ["/data"],
    "no_auth": false}``, every key optional.

    Raises:
        ValueError: an unknown key or a bad value (named).

    Example:
        >>> start_options({"ps": 2, "jobs": {"chief": 1}}).jobs
        {'ps': 2, 'worker': 2, 'chief': 1}
        >>> start_options({"workers": -1})
        Traceback (most recent call last):
            ...
        ValueError: workers must be a whole number >= 0, not -1
    """
    if not isinstance(body, dict):
        raise ValueError(f"A cluster start request is a JSON object, not {type(body).__name__}")
    known = {"ps", "workers", "jobs", "virtual_gpus", "gpus_per_worker", "name", "threads", "ports"}
    unknown = sorted(set(body) - known - {"file_roots", "no_auth"})
    if unknown:
        options = sorted(known | {"file_roots", "no_auth"})
        raise ValueError(f"Unknown cluster option(s) {unknown}; the options are {options}")
    jobs = {"ps": _count(body, "ps", 1), "worker": _count(body, "workers", 2)}
    extra = body.get("jobs") or {}
    if not isinstance(extra, dict):
        raise ValueError(f"jobs must map job names to task counts, like {{'chief': 1}}, not {extra!r}")
    for job in extra:
        jobs[str(job)] = _count(extra, job, 0)
    ports = body.get("ports") or {}
    if not isinstance(ports, dict) or not all(isinstance(p, list) for p in ports.values()):
        raise ValueError(f"ports must map job names to lists of ports, like {{'ps': [2222]}}, not {ports!r}")
    roots = body.get("file_roots")
    if roots is not None and (not isinstance(roots, list) or not all(isinstance(r, str) for r in roots)):
        raise ValueError(f"file_roots must be a list of directories, not {roots!r}")
    name = body.get("name") or None
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name must be a text, not {name!r}")
    no_auth = body.get("no_auth", False)
    if not isinstance(no_auth, bool):
        raise ValueError(f"no_auth must be true or false, not {no_auth!r}")
    return StartOptions(
        jobs=jobs,
        virtual_gpus=_count(body, "virtual_gpus", 0),
        gpus_per_worker=_count(body, "gpus_per_worker", None),
        name=name,
        threads=_count(body, "threads", 1, least=1),
        ports={str(job): list(p) for job, p in ports.items()},
        file_roots=roots or None,
        no_auth=no_auth,
    )


def start(options: StartOptions) -> LocalCluster:
    """Starts a cluster owned by this process (the server); returns once every task serves.

    Raises:
        ValueError: a bad option. FileExistsError: a running cluster has that name.
        ClusterStartError: a task did not start (its log's last lines are in the message).
    """
    cluster = options.cluster()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnlockedClusterWarning)  # the API's answer says it runs without a key
        return cluster.start()


def stop(name: str) -> int:
    """Stops cluster ``name`` (any of this user's: its tasks by pid, then its file); returns its task count.

    Raises:
        ClusterNotFoundError: no such running cluster. RuntimeError: a task would not stop (its pid is named).
    """
    cluster = connect(name)
    count = len(cluster.tasks)
    cluster.stop()
    return count


def kill(name: str, job: str, task: int) -> None:
    """Kills one task of cluster ``name`` (SIGKILL), as a crash would.

    Raises:
        ClusterNotFoundError: no such running cluster. ValueError: no such task.
    """
    connect(name).kill(job, task)


def restart(name: str, job: str, task: int) -> dict[str, Any]:
    """Starts a task of a cluster this server owns again on its address; returns its new ``job``, ``task``,
    ``pid``, ``address`` and ``status``.

    Raises:
        ClusterNotFoundError: no such running cluster. ValueError: no such task.
        RuntimeError: another process owns the cluster (the message names it: restart the task there).
    """
    info = connect(name).restart(job, task)
    return {"job": info.job, "task": info.task, "pid": info.pid, "address": info.address, "status": info.status}
