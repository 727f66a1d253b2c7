"""Runs code in a fresh interpreter, for tests of what a process does from its first line (imports, threads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_fresh(code: str) -> Any:
    """Runs ``code`` with this checkout first on the import path; returns the JSON value of its last printed line.

    Example:
        >>> run_fresh("import json; print(json.dumps({'answer': 6 * 7}))")
        {'answer': 42}
    """
    env = dict(os.environ, PYTHONPATH=_REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
