"""The placement of a cluster's last traced step, published for the lab extension (or anyone of this user).

:func:`~dtf_notebook.notebook.placement_graph.show_placement` given a session on a local cluster and the
``run_metadata`` of a traced step calls :func:`publish`: the picture (SVG, when Graphviz drew it) and its nodes and
edges go to ``dtf-placement-<name>.json`` beside the cluster's file in Jupyter's runtime directory, written
atomically and readable by its owner only. :func:`read` gives it back while that cluster runs (a file left from an
earlier cluster of the same name is not its placement and is ignored).

Example:
    >>> import os, tempfile
    >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()
    >>> from dtf_notebook.notebook import cluster_files
    >>> record = cluster_files.claim(cluster_files.ClusterRecord(name="demo", spec={"worker": ["127.0.0.1:2999"]}))
    >>> write(record, {"summary": "2 nodes on 1 task", "nodes": [], "edges": [], "svg": None})
    >>> read("demo")["summary"]
    '2 nodes on 1 task'
    >>> cluster_files.remove(record); del os.environ["JUPYTER_RUNTIME_DIR"]
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
import time
from typing import Any

from dtf_notebook.distributed.keyring import same_task
from dtf_notebook.notebook import cluster_files

__all__ = ["cluster_of_target", "publish", "read", "write"]

_PREFIX = "dtf-placement-"


def _path(name: str) -> str:
    return os.path.join(cluster_files.runtime_dir(), f"{_PREFIX}{cluster_files.check_name(name)}.json")


def cluster_of_target(target: str) -> cluster_files.ClusterRecord | None:
    """The running local cluster (of this user) that has a task at session target ``target``, or None.

    Example:
        >>> cluster_of_target("zmq://127.0.0.1:1") is None
        True
    """
    if not target or "://" not in target:
        return None
    task = same_task(target)
    for record in cluster_files.list_clusters(clean=False):
        addresses = [a for job in record.spec.values() for a in job]
        if any(same_task(a) == task for a in addresses):
            return record
    return None


def _remove_orphans() -> None:
    """Removes the published placements of clusters that are gone (their cluster files are)."""
    for path in glob.glob(os.path.join(glob.escape(cluster_files.runtime_dir()), f"{_PREFIX}*.json")):
        name = os.path.basename(path)[len(_PREFIX) : -len(".json")]
        if not os.path.exists(os.path.join(os.path.dirname(path), f"dtf-cluster-{name}.json")):
            with contextlib.suppress(OSError):
                os.unlink(path)


def write(record: cluster_files.ClusterRecord, placement: dict[str, Any]) -> None:
    """Writes ``placement`` (``summary``, ``nodes``, ``edges``, ``svg``) as cluster ``record``'s published one
    (and removes those of clusters that are gone)."""
    _remove_orphans()
    data = {**placement, "cluster": record.name, "cluster_started": record.started, "published": time.time()}
    directory = cluster_files.runtime_dir()
    fd, tmp = tempfile.mkstemp(prefix=".dtf-placement-", suffix=".tmp", dir=directory)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, _path(record.name))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def publish(view: Any, session: Any) -> str | None:
    """Publishes the placement ``view`` of a traced step of ``session`` when the session runs on a local cluster
    of this user; returns that cluster's name (None: not a local cluster's session, nothing written).

    Example:
        >>> publish(None, None) is None
        True
    """
    target = getattr(session, "sess_str", "") or ""
    record = cluster_of_target(target)
    if record is None:
        return None
    write(record, {"summary": view.summary(), "nodes": view.nodes, "edges": view.edges, "svg": view.svg()})
    return record.name


def read(name: str) -> dict[str, Any]:
    """The placement published for running cluster ``name``.

    Raises:
        ClusterNotFoundError: no such running cluster, or no placement published for it yet.

    Example:
        >>> read("no-such-cluster")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        dtf_notebook.notebook.cluster_files.ClusterNotFoundError: No cluster 'no-such-cluster' ...
    """
    record = cluster_files.find(cluster_files.check_name(name))
    try:
        with open(_path(name), encoding="utf-8") as f:
            if os.fstat(f.fileno()).st_uid != os.geteuid():
                raise FileNotFoundError(_path(name))  # another user's file is never ours to show
            data = json.load(f)
    except (FileNotFoundError, ValueError):
        data = None
    if not isinstance(data, dict) or data.get("cluster_started") != record.started:
        raise cluster_files.ClusterNotFoundError(
            f"No placement published for cluster {name!r}: show_placement(..., session=sess, run_metadata=meta) "
            "of a traced step on it publishes one"
        )
    return data
