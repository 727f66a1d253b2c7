"""``dtf-cluster``: start, list, stop and clean up local clusters, and make cluster keys.

Reads the cluster files in Jupyter's runtime directory (see
:mod:`~dtf_notebook.notebook.cluster_files`)::

    dtf-cluster start [--ps N] [--workers M] [--job NAME=N] [--name NAME] [--virtual-gpus K]
                      [--file-root DIR] [--no-auth]
                                     run a local cluster until interrupted (Ctrl-C); notebooks connect by name
    dtf-cluster list [--json]        NAME, TASKS, OWNER PID, AGE, STATUS of every running cluster
    dtf-cluster stop NAME [NAME...]  stop clusters by name (their tasks by pid, then their files)
    dtf-cluster stop --all
    dtf-cluster clean                remove the files of clusters whose owner and tasks are gone
    dtf-cluster keygen PATH          write a new random cluster key to PATH, readable by you only

A started cluster is locked: its tasks require a random key kept in its cluster file, which only you can
read. ``--no-auth`` runs it without one, open to every process of this machine. Listings never show keys.

Exit status: 0 on success, 1 when a named cluster does not exist or could not be stopped (or a cluster could
not start, or the key file exists), 2 for bad usage.

Example:
    >>> main(["clean"])  # doctest: +ELLIPSIS
    No stale cluster files in ...
    0
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
import warnings

from dtf_notebook.distributed.cluster_key import write_key_file
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
            {**r.public(), "path": r.path, "state": r.state(), "live_tasks": len(r.live_tasks())} for r in clusters
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


def _keygen(path: str) -> int:
    try:
        key = write_key_file(path)
    except OSError as e:
        print(
            f"dtf-cluster: cannot write a key file at {path}: {e.strerror or e} (a key file is never overwritten)",
            file=sys.stderr,
        )
        return 1
    print(
        f"Wrote a new cluster key to {path} (fingerprint {key.fingerprint}); only you can read it. Give it to "
        f"every task (dtf-server --key-file {path}) and client (DTF_CLUSTER_KEY_FILE={path})."
    )
    return 0


def _start(options: argparse.Namespace) -> int:
    from dtf_notebook.notebook.local_cluster import (
        ClusterStartError,
        LocalCluster,
        UnlockedClusterWarning,
        unlocked_message,
    )

    jobs = {"ps": options.ps, "worker": options.workers}
    for pair in options.job:
        job, _, count = pair.partition("=")
        if not job or not count.isdigit():
            print(f"dtf-cluster: --job takes NAME=N (like chief=1), not {pair!r}", file=sys.stderr)
            return 2
        jobs[job] = int(count)
    try:
        cluster = LocalCluster(
            jobs=jobs,
            virtual_gpus=options.virtual_gpus,
            name=options.name,
            cluster_key=False if options.no_auth else None,
            file_roots=options.file_root,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnlockedClusterWarning)  # said below in a plain line, not a warning
            cluster.start()
    except (ValueError, FileExistsError, ClusterStartError) as e:
        print(f"dtf-cluster: cannot start the cluster: {e}", file=sys.stderr)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if not cluster.locked:
        print(unlocked_message(cluster.name, "--no-auth") + ".", file=sys.stderr)
    lock = "locked with a key in its cluster file" if cluster.locked else "WITHOUT a key"
    print(f"Cluster {cluster.name!r} is running, {lock}:")
    for task in cluster.tasks:
        print(f"  {task.job}:{task.task}  {task.target}  pid {task.pid}")
    print(f"Connect from a notebook with `%dtf_cluster connect {cluster.name}`; Ctrl-C stops it.", flush=True)
    while not stop.wait(0.5):
        if not any(t.status == "running" for t in cluster.tasks):
            print("Every task has exited.", file=sys.stderr)
            break
    cluster.stop()
    print(f"Stopped cluster {cluster.name!r}.")
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
    p = argparse.ArgumentParser(
        prog="dtf-cluster", description="Start, list, stop and clean up local dtf_notebook clusters; make keys."
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="{start,list,stop,clean,keygen}")
    start = sub.add_parser("start", help="run a local cluster until interrupted")
    start.add_argument("--ps", type=int, default=1, metavar="N", help="ps tasks (default 1)")
    start.add_argument("--workers", type=int, default=2, metavar="M", help="worker tasks (default 2)")
    start.add_argument("--job", action="append", default=[], metavar="NAME=N", help="tasks of another job")
    start.add_argument("--name", help="the cluster's name (default: the first free local-N)")
    start.add_argument("--virtual-gpus", type=int, default=0, metavar="K", help="CPU-backed /gpu:N per non-ps task")
    start.add_argument("--file-root", action="append", metavar="DIR", help="confine the tasks' files to DIR")
    start.add_argument(
        "--no-auth", action="store_true", help="no key: every process of this machine may run ops on the tasks"
    )
    keygen = sub.add_parser("keygen", help="write a new random cluster key to a file only you can read")
    keygen.add_argument("path", metavar="PATH")
    listing = sub.add_parser("list", help="list running clusters")
    listing.add_argument("--json", action="store_true", help="print the cluster records as JSON")
    stop = sub.add_parser("stop", help="stop clusters by name, or all of them")
    stop.add_argument("names", nargs="*", metavar="NAME")
    stop.add_argument("--all", action="store_true", help="stop every running cluster")
    sub.add_parser("clean", help="remove cluster files of clusters that are gone")
    options = p.parse_args(argv)
    if options.command == "start":
        return _start(options)
    if options.command == "keygen":
        return _keygen(options.path)
    if options.command == "list":
        return _list(options.json)
    if options.command == "stop":
        if bool(options.names) == options.all:
            p.error("stop needs cluster names or --all (not both)")
        return _stop(options.names, options.all)
    return _clean()


if __name__ == "__main__":
    sys.exit(main())
