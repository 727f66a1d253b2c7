"""Cluster helpers for tests: the package's one launcher of local clusters plus running client scripts in their own
process."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from dtf_notebook.distributed.local_process import free_port, task_env
from dtf_notebook.notebook.local_cluster import LocalCluster

__all__ = ["SIMPLE_CLIENT", "LocalCluster", "eventually", "free_port", "pump_loop_peers", "run_client", "task_env"]

# Seed 002's simple_client.py: ``python -c SIMPLE_CLIENT TARGET [init]`` increments the shared x and prints it.
SIMPLE_CLIENT = """
import sys
import dtf_notebook.compat.v1 as tf

x = tf.Variable(0.0, name="x")
increment_x = tf.assign(x, x + 1)

with tf.Session(sys.argv[1]) as sess:
    if sys.argv[2:] == ["init"]:
        sess.run(x.initializer)
    sess.run(increment_x)
    print(x.eval())
"""


def run_client(script: str, *args: str, timeout: float = 120, env: dict[str, str] | None = None) -> str:
    """Runs a client script in its own process and returns its stdout (raises on failure).

    ``env`` defaults to :func:`task_env`; a client of a locked LocalCluster takes ``cluster.client_env()``.
    """
    result = subprocess.run(
        [sys.executable, "-c", script, *args], env=env or task_env(), capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise RuntimeError(f"client failed ({result.returncode}): {result.stderr[-3000:]}")
    return result.stdout


def pump_loop_peers(peers: Any, poller: Any, until: Callable[[], object], timeout: float = 10.0) -> bool:
    """Drives a ``LoopPeers`` from the calling thread as a task's event loop does (send what waits, poll, read
    replies, heartbeat) until ``until()`` is true or ``timeout`` seconds pass; whether it came true."""
    deadline = time.monotonic() + timeout
    while not until() and time.monotonic() < deadline:
        peers.pump()
        ready = dict(poller.poll(20))
        polled = time.monotonic()
        peers.receive(ready)
        peers.heartbeat(time.monotonic(), polled)
    return bool(until())


def eventually(condition: Callable[[], object], timeout: float = 10.0) -> bool:
    """Whether ``condition()`` turns true within ``timeout`` seconds (checked every 20 ms)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
