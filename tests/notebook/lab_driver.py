"""Driving JupyterLab from tests: a ``jupyter lab`` of the test's own, and Debian's chromium through Playwright.

:func:`running_lab` starts the server on a free loopback port with a token, serving a temporary copy of a
folder; :func:`chromium_page` opens Lab in chromium (``--no-sandbox`` only as root; never ``playwright install``).
Lab is started with ``expose_app_in_browser``, so the page is driven through Lab's own commands on
``window.jupyterapp``: :class:`Notebook` opens a notebook, runs its code cells one by one (``notebook:run-cell``)
and waits for each cell's prompt ``[n]:``; the widgets are then read from the page. Used by
``tests/notebook/test_browser.py``, which skips when Playwright or chromium is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import dtf_notebook
from dtf_notebook.distributed.local_process import free_port
from tests.notebook.process_util import stop_server

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")

CHROMIUM = shutil.which("chromium")
PACKAGE_PARENT = Path(dtf_notebook.__file__).resolve().parents[1]
# The lab extension as built from extension/ (its package.json names it: dtf-notebook).
LABEXTENSION = PACKAGE_PARENT / "dtf_notebook" / "lab" / "labextensions" / "dtf-notebook"

AS_ROOT = os.geteuid() == 0
CELL_TIMEOUT_MS = 240_000  # one cell, on a slow and loaded 2-core machine
STEP_TIMEOUT_MS = 90_000  # anything else the page is waited for
# Lab settings of its own: every cell stays in the page (no windowing), no news or update toasts.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}

# ---- JavaScript run in the page (JupyterLab exposes its application as window.jupyterapp) --------------------
_PANEL = """
const panelOf = (path) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w.context && w.context.path === path) return w;
  }
  return null;
};
"""
JS_OPEN = "async (path) => { await window.jupyterapp.commands.execute('docmanager:open', {path}); return true; }"
# Ready: the notebook's kernel is idle; its cells get data-dtf-cell="<index>" so locators can find them.
JS_READY = (
    "(path) => {"
    + _PANEL
    + """
  const panel = panelOf(path);
  if (!panel || !panel.context.isReady) return false;
  const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  panel.content.widgets.forEach((cell, i) => cell.node.setAttribute('data-dtf-cell', String(i)));
  window.jupyterapp.shell.activateById(panel.id);
  return true;
}"""
)
JS_CELLS = "(path) => {" + _PANEL + "return panelOf(path).content.widgets.map(c => c.model.type);}"
JS_RUN = (
    "([path, index]) => {"
    + _PANEL
    + """
  const panel = panelOf(path);
  window.jupyterapp.shell.activateById(panel.id);
  panel.content.activeCellIndex = index;
  panel.content.deselectAll();
  window.jupyterapp.commands.execute('notebook:run-cell');
  return true;
}"""
)
JS_PROMPT = (
    "([path, index]) => {"
    + _PANEL
    + """
  const prompt = panelOf(path).content.widgets[index].node.querySelector('.jp-InputPrompt');
  return prompt ? prompt.textContent.trim() : '';
}"""
)
JS_ERRORS = (
    "([path, index]) => {"
    + _PANEL
    + """
  return panelOf(path).content.widgets[index].model.outputs.toJSON()
    .filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue);
}"""
)
JS_DIRTY = "(path) => {" + _PANEL + "const p = panelOf(path); return p === null ? null : p.context.model.dirty;}"
JS_CLOSE = "(path) => {" + _PANEL + "panelOf(path).close(); return true;}"
JS_OPEN_PATHS = """() => {
  const paths = [];
  for (const w of window.jupyterapp.shell.widgets('main')) if (w.context) paths.push(w.context.path);
  return paths;
}"""
# Rows of the cluster table's grid (the live widget: a GridBox of nine text cells and two buttons per row).
JS_GRID_ROWS = """(grid) => {
  const texts = Array.from(grid.children).map(c => c.innerText.trim());
  const rows = [];
  for (let i = 0; i < texts.length; i += 11) rows.push(texts.slice(i, i + 9));
  return rows;
}"""
# A HTML table as a list of {header: text} rows (rows whose cells do not match the header are skipped).
JS_TABLE_ROWS = """(table) => {
  const heads = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
  return Array.from(table.querySelectorAll('tbody tr'))
    .map(tr => Array.from(tr.children).map(td => td.innerText.trim()))
    .filter(cells => cells.length === heads.length)
    .map(cells => Object.fromEntries(heads.map((h, i) => [h, cells[i]])));
}"""


# ---- the server ------------------------------------------------------------------------------------------------
class Lab:
    """A running ``jupyter lab``: its base URL and token, the folder it serves, its runtime directory."""

    def __init__(self, base: str, token: str, root: Path, runtime: Path, proc: subprocess.Popen) -> None:
        self.base, self.token, self.root, self.runtime, self.proc = base, token, root, runtime, proc

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"{self.base}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def shutdown_kernel_of(self, path: str) -> None:
        """Shuts down the kernel of the notebook at ``path`` (relative to the served folder)."""
        for session in self.api("GET", "/api/sessions"):
            if session["path"] == path:
                self.api("DELETE", f"/api/kernels/{session['kernel']['id']}")

    def shutdown_kernels(self) -> list[str]:
        """Shuts down every kernel of this server (``DELETE /api/kernels/<id>``); returns their ids."""
        ids = [k["id"] for k in self.api("GET", "/api/kernels")]
        for kernel_id in ids:
            self.api("DELETE", f"/api/kernels/{kernel_id}")
        return ids


@contextlib.contextmanager
def running_lab(tmp: Path, notebooks: Path) -> Iterator[Lab]:
    """``jupyter lab`` serving a copy of ``notebooks`` (in ``tmp``) on a free loopback port, with runtime, config,
    data, settings and workspaces directories of its own; then its kernels shut down, it stopped, and checked
    that no kernel process or cluster file is left."""
    root, runtime = tmp / "notebooks", tmp / "runtime"
    shutil.copytree(notebooks, root)
    for name, values in LAB_SETTINGS.items():
        path = tmp / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {
        **os.environ,
        # The server extension and the kernels import the dtf_notebook under test, whatever an install points at.
        "PYTHONPATH": os.pathsep.join([str(PACKAGE_PARENT), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_CONFIG_DIR": str(tmp / "config"),
        "JUPYTER_DATA_DIR": str(tmp / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "workspaces"),
        "BROWSER": "true",
        "MPLBACKEND": "agg",
    }
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: the page is driven through Lab's commands
        # dtf_notebook's server and lab extensions, from this checkout (built by scripts/setup.sh or pip install)
        "--ServerApp.jpserver_extensions=dtf_notebook.lab=True",
        f"--LabApp.extra_labextensions_path={LABEXTENSION.parent}",
    ] + (["--allow-root"] if AS_ROOT else [])
    log_path = tmp / "lab.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(command, cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = Lab(f"http://127.0.0.1:{port}", token, root, runtime, proc)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, f"jupyter lab exited early:\n{log_path.read_text()[-3000:]}"
            try:
                server.api("GET", "/api/status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                assert time.monotonic() < deadline, f"jupyter lab did not answer:\n{log_path.read_text()[-3000:]}"
                time.sleep(0.5)
        yield server
    finally:
        try:
            if proc.poll() is None:
                server.shutdown_kernels()
        finally:
            stop_server(proc, str(runtime), "jupyter lab")
        assert sorted(runtime.glob("dtf-cluster-*.json")) == [], "cluster files left in the runtime directory"


@contextlib.contextmanager
def chromium_page(lab: Lab) -> Iterator[Any]:
    """A page of Debian's chromium on ``lab`` (1280x1000: a laptop's window), Lab started in it."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"] if AS_ROOT else [])
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 1000})
            tab.set_default_timeout(STEP_TIMEOUT_MS)
            tab.goto(f"{lab.base}/lab?token={lab.token}")
            tab.wait_for_function("() => window.jupyterapp && window.jupyterapp.started", polling=250)
            tab.evaluate("() => window.jupyterapp.started")
            yield tab
        finally:
            browser.close()


# ---- driving one notebook --------------------------------------------------------------------------------------
class Notebook:
    """One open notebook: runs its code cells one by one and finds their outputs on the page."""

    def __init__(self, page, path: str, file: Path) -> None:
        self.page, self.path = page, path
        self.runs = 0
        self.open()
        cells = json.loads(file.read_text())["cells"]
        assert page.evaluate(JS_CELLS, path) == [c["cell_type"] for c in cells]
        self.code_cells = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
        self.sources = {i: "".join(cells[i]["source"]) for i in self.code_cells}

    def open(self) -> None:
        self.page.evaluate(JS_OPEN, self.path)
        self.page.wait_for_function(JS_READY, arg=self.path, polling=250, timeout=CELL_TIMEOUT_MS)
        self.page.evaluate("() => { window.jupyterapp.shell.collapseLeft(); return true; }")  # the notebook's width

    def activate(self, index: int) -> None:
        """Makes cell ``index`` the active one (the others lose their blue marker)."""
        self.page.evaluate(
            "([path, index]) => {" + _PANEL + "panelOf(path).content.activeCellIndex = index;}", [self.path, index]
        )

    def hide_input(self, index: int, hidden: bool) -> None:
        """Collapses (or shows again) the code of cell ``index``, as its blue bar on the left does."""
        self.page.evaluate(
            "([path, index, hidden]) => {" + _PANEL + "panelOf(path).content.widgets[index].inputHidden = hidden;}",
            [self.path, index, hidden],
        )

    def cell(self, index: int):
        return self.page.locator(f'.jp-NotebookPanel:not(.lm-mod-hidden) [data-dtf-cell="{index}"]')

    def output(self, index: int):
        return self.cell(index).locator(".jp-Cell-outputArea")

    def start(self, index: int) -> int:
        """Starts running code cell ``index``; returns the execution count it will show when done."""
        self.page.evaluate(JS_RUN, [self.path, index])
        self.runs += 1  # a fresh kernel numbers the cells it runs 1, 2, 3, ...
        return self.runs

    def wait(self, index: int, count: int) -> None:
        """Waits for cell ``index`` to show the prompt ``[count]:``; fails on an error in its outputs."""
        try:
            self.page.wait_for_function(
                f"(args) => ({JS_PROMPT})(args) === '[{count}]:'",
                arg=[self.path, index],
                polling=250,
                timeout=CELL_TIMEOUT_MS,
            )
        except sync_api.TimeoutError:
            prompt = self.page.evaluate(JS_PROMPT, [self.path, index])
            pytest.fail(f"{self.path}: cell {index} still shows {prompt!r}, not [{count}]:, after {CELL_TIMEOUT_MS} ms")
        errors = self.page.evaluate(JS_ERRORS, [self.path, index])
        assert errors == [], f"{self.path}: cell {index} failed: {errors}"

    def run(self, index: int) -> None:
        self.wait(index, self.start(index))

    def save_and_close(self, saved: Path) -> None:
        """Saves with Ctrl+S (waits for the file to change on disk and the model to be clean), then closes."""
        before = saved.stat().st_mtime_ns
        self.cell(self.code_cells[0]).locator(".jp-InputPrompt").click()  # command mode: Ctrl+S is Lab's save
        self.page.keyboard.press("Control+s")
        wait_js(self.page, f"(path) => ({JS_DIRTY})(path) === false", self.path, f"{self.path} saved by Ctrl+S")
        deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
        while saved.stat().st_mtime_ns == before:
            assert time.monotonic() < deadline, f"{self.path} was not saved"
            time.sleep(0.25)
        close(self.page, self.path)


def close(page, path: str) -> None:
    """Closes the notebook's tab (its kernel keeps running, as when a person closes it)."""
    page.evaluate(JS_CLOSE, path)
    wait_js(page, f"(path) => !({JS_OPEN_PATHS})().includes(path)", path, f"{path} closed")


def wait_js(page, function: str, arg: object, what: str) -> None:
    """Waits for ``function(arg)`` to be true in the page; fails saying ``what`` did not happen."""
    try:
        page.wait_for_function(function, arg=arg, polling=250)
    except sync_api.TimeoutError:
        shot = Path(os.environ.get("TMPDIR", "/tmp")) / f"dtf-browser-{int(time.time())}.png"
        page.screenshot(path=str(shot))
        pytest.fail(f"not {what} within {STEP_TIMEOUT_MS} ms (the page then: {shot})")


def screenshot(locators: list, path: Path, page) -> None:
    """A PNG of the page area covering ``locators``, a little padding around, without the active cell's marker.

    The notebook scrolls inside the page, so the page is made tall enough to show them all at once first.
    """
    size = page.viewport_size
    height = sum(loc.bounding_box()["height"] for loc in locators)
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], int(height) + 400)})
    css = ".jp-Collapser, .jp-Collapser-child { background: transparent !important; }"
    style = page.add_style_tag(content=css)
    try:
        page.mouse.move(size["width"] - 2, size["height"] // 2)  # no hover highlight on an output
        locators[0].evaluate("e => e.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(500)  # the widgets lay themselves out again at the new size
        boxes = [loc.bounding_box() for loc in locators]
        left, top = min(b["x"] for b in boxes), min(b["y"] for b in boxes)
        right, bottom = max(b["x"] + b["width"] for b in boxes), max(b["y"] + b["height"] for b in boxes)
        # No margin above: the cell above ends right there.
        clip = {"x": max(left - 8, 0), "y": top, "width": right - left + 16, "height": bottom - top + 8}
        page.screenshot(path=str(path), clip=clip)
    finally:
        style.evaluate("e => e.remove()")
        page.set_viewport_size(size)


def cluster_tables(nb: Notebook) -> list[str]:
    """The captions of every cluster table in the notebook's outputs ("LocalCluster 'x': running, 3 tasks")."""
    text = " ".join(nb.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea").all_inner_texts())
    return re.findall(r"LocalCluster '[\w-]+': \w+, \d+ tasks?", text)


def stop_and_check_tables(nb: Notebook) -> None:
    """Runs the last code cell (``%dtf_cluster stop --all``); every cluster table then says stopped."""
    last = nb.code_cells[-1]
    nb.run(last)
    deadline = time.monotonic() + STEP_TIMEOUT_MS / 1000
    while (captions := cluster_tables(nb)) == [] or any(": running," in c for c in captions):
        assert time.monotonic() < deadline, f"{nb.path}: cluster tables after %dtf_cluster stop --all: {captions}"
        time.sleep(0.5)
    for table in nb.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea table").all():
        rows = table.evaluate(JS_TABLE_ROWS)
        if rows and "status" in rows[0]:
            assert {r["status"] for r in rows} == {"stopped"}, rows


def saved_html(path: Path, index: int) -> str:
    """The ``text/html`` of cell ``index``'s outputs in the saved notebook file (all joined)."""
    cell = json.loads(path.read_text())["cells"][index]
    parts = []
    for output in cell.get("outputs", []):
        html = output.get("data", {}).get("text/html", "")
        parts.append(html if isinstance(html, str) else "".join(html))
    return "".join(parts)


def reopen(nb: Notebook, file: Path) -> Notebook:
    """The same notebook opened again in the same Lab (its kernel still runs)."""
    again = Notebook(nb.page, nb.path, file)
    again.runs = nb.runs
    return again
