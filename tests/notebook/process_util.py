"""What the tests that start servers and kernels share: stopping a process group, finding processes by their
command line, and waiting until no local cluster is left."""

from __future__ import annotations

import os
import signal
import subprocess
import time

from dtf_notebook.notebook import cluster_files
from dtf_notebook.notebook.pids import pid_running


def stop_group(proc: subprocess.Popen, grace: float = 30.0) -> None:
    """Stops ``proc`` and every process of its session (started with ``start_new_session=True``):
    SIGTERM, then SIGKILL after ``grace`` seconds."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def stop_server(proc: subprocess.Popen, runtime: str, what: str) -> None:
    """Stops a Jupyter server's process group, then waits up to 20 s for the processes naming its runtime directory
    (its kernels, which run in sessions of their own, are named by their connection files there) to end; kills
    those left and fails naming them."""
    stop_group(proc)
    deadline = time.monotonic() + 20
    while (left := processes_mentioning(runtime)) and time.monotonic() < deadline:
        time.sleep(0.5)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], f"processes left behind by {what}: {left}"


def processes_mentioning(text: str) -> list[int]:
    """Pids of this machine's processes whose command line contains ``text``."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        pids.append(int(entry))
            except OSError:
                continue  # gone while we looked
    return pids


def clusters_left(within: float = 10.0) -> list[str]:
    """The names of the local clusters still running (in this process's runtime directory) after waiting up to
    ``within`` seconds for them to go; a kernel's clusters follow it out a moment after it exits."""
    deadline = time.monotonic() + within
    records = cluster_files.list_clusters()
    while time.monotonic() < deadline and (records or any(pid_running(t["pid"]) for r in records for t in r.tasks)):
        time.sleep(0.2)
        records = cluster_files.list_clusters()
    return [r.name for r in records]
