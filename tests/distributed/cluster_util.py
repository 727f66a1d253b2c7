"""Cluster helpers for tests: the package's process launcher plus running client scripts in their own process."""

from __future__ import annotations

import subprocess
import sys

from dtf_notebook.distributed.launcher import ProcessCluster, free_port, task_env

__all__ = ["ProcessCluster", "free_port", "run_client", "task_env"]


def run_client(script: str, *args: str, timeout: float = 120) -> str:
    """Runs a client script in its own process and returns its stdout (raises on failure)."""
    result = subprocess.run(
        [sys.executable, "-c", script, *args], env=task_env(), capture_output=True, text=True, timeout=timeout
    )
    if result.returncode != 0:
        raise RuntimeError(f"client failed ({result.returncode}): {result.stderr[-3000:]}")
    return result.stdout
