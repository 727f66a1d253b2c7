"""``dtf-cluster``: list, stop and clean up the local clusters of this machine's notebooks.

Reads the cluster files in Jupyter's runtime directory (see
:mod:`~dtf_notebook.notebook.cluster_files`)::

    dtf-cluster list [--json]        NAME, TASKS, OWNER PID, AGE, STATUS of every running cluster
    dtf-cluster stop NAME [NAME...]  stop clusters by name (their tasks by pid, then their files)
    dtf-cluster stop --all
    dtf-cluster clean                remove the files of clusters whose owner and tasks are gone

Exit status: 0 on success, 1 when a named cluster does not exist or could not be stopped, 2 for bad usage.

Example:
    >>> main(["clean"])  # doctest: +ELLIPSIS
    No stale cluster files in ...
    0
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from dtf_notebook.notebook import cluster_files

__all__ = ["main"]


def format_age(seconds: float) -> str:
    """A short age: ``42s``, ``5m``, ``3h``, ``2d``.

    Example:
        >>> format_age(59), format_age(61), format_age(7300), format_age(200000)
        ('59s', '1m', '2h', '2d')
    """
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(int(seconds), 0)}s"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows)


def _list(as_json: bool) -> int:
    clusters = cluster_files.list_clusters()
    if as_json:
        records = [
            {**json.loads(r.to_json()), "path": r.path, "state": r.state(), "live_tasks": len(r.live_tasks())}
            for r in clusters
        ]
        print(json.dumps(records, indent=1))
        return 0
    if not clusters:
        print(f"No running clusters (cluster files live in {cluster_files.runtime_dir()}).")
        return 0
    rows = [["NAME", "TASKS", "OWNER PID", "AGE", "STATUS"]]
    now = time.time()
    for r in clusters:
        jobs = " ".join(f"{job}={len(addresses)}" for job, addresses in r.spec.items())
        rows.append([r.name, jobs, str(r.owner_pid), format_age(now - r.started), r.state()])
    print(_table(rows))
    return 0


def _stop(names: list[str], every: bool) -> int:
    from dtf_notebook.notebook.local_cluster import LocalCluster

    if every:
        names = [r.name for r in cluster_files.list_clusters()]
        if not names:
            print("No running clusters.")
            return 0
    status = 0
    for name in names:
        try:
            cluster = LocalCluster.connect(name)
            count = len(cluster.tasks)
            cluster.stop()
        except (cluster_files.ClusterNotFoundError, ValueError, RuntimeError) as e:
            print(f"dtf-cluster: {e}", file=sys.stderr)
            status = 1
            continue
        print(f"Stopped cluster {name!r} ({count} task{'s' * (count != 1)}).")
    return status


def _clean() -> int:
    removed = cluster_files.clean_stale()
    if not removed:
        print(f"No stale cluster files in {cluster_files.runtime_dir()}.")
    for path in removed:
        print(f"Removed {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Runs ``dtf-cluster`` with ``argv`` (default: the command line); returns the exit status.

    Example:
        >>> import os, tempfile
        >>> os.environ["JUPYTER_RUNTIME_DIR"] = tempfile.mkdtemp()  # a directory with no clusters
        >>> main(["list", "--json"])
        []
        0
        >>> del os.environ["JUPYTER_RUNTIME_DIR"]
    """
    p = argparse.ArgumentParser(prog="dtf-cluster", description="List, stop and clean up local dtf_notebook clusters.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{list,stop,clean}")
    listing = sub.add_parser("list", help="list running clusters")
    listing.add_argument("--json", action="store_true", help="print the cluster records as JSON")
    stop = sub.add_parser("stop", help="stop clusters by name, or all of them")
    stop.add_argument("names", nargs="*", metavar="NAME")
    stop.add_argument("--all", action="store_true", help="stop every running cluster")
    sub.add_parser("clean", help="remove cluster files of clusters that are gone")
    options = p.parse_args(argv)
    if options.command == "list":
        return _list(options.json)
    if options.command == "stop":
        if bool(options.names) == options.all:
            p.error("stop needs cluster names or --all (not both)")
        return _stop(options.names, options.all)
    return _clean()


if __name__ == "__main__":
    sys.exit(main())
