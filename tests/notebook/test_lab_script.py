"""``bash scripts/lab.sh``, as a person runs it: it prints the URL of JupyterLab on the loopback address, that URL
shows notebooks/01_clusters.ipynb in Debian's chromium (driven by Playwright), and nothing it started outlives it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from dtf_notebook.distributed.local_process import free_port
from tests.notebook.process_util import processes_mentioning, stop_group

sync_api = pytest.importorskip("playwright.sync_api")

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.browser]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = shutil.which("chromium")
URL = re.compile(r"(http://127\.0\.0\.1:\d+/lab/tree/notebooks/01_clusters\.ipynb\?token=\w+)")


@pytest.fixture
def lab(tmp_path):
    """``bash scripts/lab.sh --no-browser --port P`` running, and the URL it printed; stopped afterwards."""
    runtime = tmp_path / "runtime"
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER": "true",
    }
    log_path = tmp_path / "lab.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            ["bash", os.path.join(ROOT, "scripts", "lab.sh"), "--no-browser", "--port", str(free_port())],
            cwd=tmp_path,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while not (match := URL.search(log_path.read_text())):
            assert proc.poll() is None, f"scripts/lab.sh exited early:\n{log_path.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"scripts/lab.sh printed no URL:\n{log_path.read_text()[-3000:]}"
            time.sleep(0.5)
        yield match.group(1)
    finally:
        stop_group(proc)
        # Kernels run in sessions of their own, named by their connection files in this runtime directory.
        deadline = time.monotonic() + 15
        while (left := processes_mentioning(str(runtime))) and time.monotonic() < deadline:
            time.sleep(0.5)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert left == [], f"processes left behind by scripts/lab.sh: {left}"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/setup.sh installs it)")
def test_lab_script_opens_first_tutorial(lab):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        try:
            page = browser.new_page()
            page.goto(lab)
            tab = page.locator(".lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel", has_text="01_clusters.ipynb")
            tab.first.wait_for(timeout=90_000)
            first_code = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .cm-content").first
            sync_api.expect(first_code).to_contain_text("%load_ext dtf_notebook", timeout=60_000)
        finally:
            browser.close()
