"""A ``jupyter server`` of a test's own with the lab extension's API, and requests to it.

:func:`running_server` starts it on a free loopback port with a random token, its runtime directory the test's (so
it sees the clusters the test starts, and the test sees the server's), config and data directories of its own;
then it is stopped by its process group and checked to leave no process behind. :meth:`Server.call` sends one
request and returns the status and the JSON answer (never raising for an error status).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dtf_notebook
from dtf_notebook.distributed.local_process import free_port
from tests.notebook.process_util import stop_server

PACKAGE_PARENT = Path(dtf_notebook.__file__).resolve().parents[1]


class Server:
    """A running server: its base URL, token, process and log file."""

    def __init__(self, base: str, token: str, proc: subprocess.Popen, log: Path) -> None:
        self.base, self.token, self.proc, self.log = base, token, proc, log
        self.bodies: list[bytes] = []  # every answer's body, to check that none holds a key

    def call(self, method: str, path: str, body: Any = None, token: bool = True) -> tuple[int, Any]:
        """Sends ``method path`` (with the token unless ``token=False``); returns the status and the JSON answer."""
        headers = {"Authorization": f"token {self.token}"} if token else {}
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                status, raw = reply.status, reply.read()
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read()
        self.bodies.append(raw)
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")


@contextlib.contextmanager
def running_server(tmp: Path, runtime: Path, app: str = "server", extra: list[str] | None = None) -> Iterator[Server]:
    """``jupyter <app>`` with the ``dtf_notebook.lab`` server extension on a free loopback port, token on."""
    env = {
        **os.environ,
        # The dtf_notebook under test, whatever an install points at (a worktree, a checkout moved since).
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_PARENT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_CONFIG_DIR": str(tmp / "config"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "BROWSER": "true",
    }
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        app,
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={tmp}",
        "--ServerApp.jpserver_extensions=dtf_notebook.lab=True",
        *(extra or []),
    ] + (["--allow-root"] if os.geteuid() == 0 else [])
    log = tmp / f"jupyter-{app}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(command, cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", token, proc, log)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, f"jupyter {app} exited early:\n{log.read_text()[-3000:]}"
            try:
                if server.call("GET", "/api/status")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, f"jupyter {app} did not answer:\n{log.read_text()[-3000:]}"
            time.sleep(0.5)
        yield server
    finally:
        stop_server(proc, str(runtime), f"jupyter {app}")
