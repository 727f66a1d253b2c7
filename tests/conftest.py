"""Fixtures shared by every test package."""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import sys
import tempfile
import time
import uuid

import pytest


@pytest.fixture(scope="module")
def runtime_dir(tmp_path_factory):
    """A Jupyter runtime directory of the test module's own, so cluster files stay out of the user's."""
    with pytest.MonkeyPatch.context() as m:
        path = tmp_path_factory.mktemp("runtime")
        m.setenv("JUPYTER_RUNTIME_DIR", str(path))
        yield path


# ---- nothing outlives the suite -------------------------------------------------------------------------
# Every process a test starts (tasks, templates, kernels, servers) inherits this marker, so one left running
# is found by it at the end, however it was started and whoever adopted it. Cluster files and task logs
# are found by name.
_RUN_MARK = f"DTF_TEST_RUN={uuid.uuid4().hex}"


def _left_behind() -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                marked = _RUN_MARK.encode() in f.read().split(b"\0")
            if marked:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                with open(f"/proc/{entry}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
                if state != b"Z":  # a zombie holds nothing; its parent reaps it
                    found.append(f"process {entry}: {command[:160]}")
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found


def _cluster_leftovers() -> set[str]:
    from dtf_notebook.notebook.cluster_files import runtime_dir

    names = set(glob.glob(os.path.join(tempfile.gettempdir(), "dtf-cluster-*")))
    with contextlib.suppress(OSError):
        names |= set(glob.glob(os.path.join(runtime_dir(), "dtf-cluster-*.json")))
    return names


def pytest_sessionstart(session: pytest.Session) -> None:
    name, value = _RUN_MARK.split("=")
    os.environ[name] = value
    session.config._dtf_leftovers_before = _cluster_leftovers()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not sys.platform.startswith("linux") or hasattr(session.config, "workerinput"):
        return
    deadline = time.monotonic() + 10  # tasks watching a parent that just exited take a moment to follow it
    left = _left_behind()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _left_behind()
    files = sorted(_cluster_leftovers() - getattr(session.config, "_dtf_leftovers_before", set()))
    if left or files:
        report = "\n".join(["The test run left these behind:", *left, *files])
        session.config.get_terminal_writer().line(report, red=True)
        for line in left:
            with contextlib.suppress(OSError):
                os.kill(int(line.split()[1].rstrip(":")), signal.SIGKILL)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
