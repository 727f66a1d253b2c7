"""The lab extension end to end: ``jupyter lab`` on loopback, driven in Debian's chromium by Playwright, as a person.

The sidebar is opened from its tab, a cluster started from its dialog and seen with its 3 tasks running; the
"Connect code" button puts ``%dtf_cluster connect`` into a notebook, which runs it and then makes a variable on the
cluster; the variables panel shows it; a task is killed and restarted from the sidebar and its log panel shows the
new process; the cluster is stopped from the sidebar, and no task process is left. ``DTF_SCREENSHOTS=1`` writes the
screenshots (light and dark theme) to ``docs/images/`` (the README shows them); otherwise they go to the test's
temporary directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
pytest.importorskip("jupyterlab", reason="JupyterLab is not installed")

from dtf_notebook.notebook.pids import pid_running  # noqa: E402
from tests.notebook.lab_driver import (  # noqa: E402
    CHROMIUM,
    JS_READY,
    LABEXTENSION,
    STEP_TIMEOUT_MS,
    Notebook,
    chromium_page,
    running_lab,
    sync_api,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.cluster,
    pytest.mark.browser,
    pytest.mark.timeout(600),
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/setup.sh installs it)"),
    pytest.mark.skipif(
        not (LABEXTENSION / "package.json").exists(),
        reason="the lab extension is not built (scripts/setup.sh builds it: npm run build in extension/)",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = "lab-e2e"
VARIABLE_CODE = """import dtf_notebook.compat.v1 as tf
with tf.device("/job:ps/task:0"):
    lab_weights = tf.Variable(tf.ones([16, 8]), name="lab_weights")
sess = tf.Session(cluster.target("worker", 0))
sess.run(lab_weights.initializer)
print("initialized", lab_weights.name)
"""


def _notebook(folder: Path) -> None:
    """A notebook of two code cells: an empty one (the connect code goes below it), then VARIABLE_CODE."""
    cells = [
        {"cell_type": "code", "execution_count": None, "id": "empty", "metadata": {}, "outputs": [], "source": ""},
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "var",
            "metadata": {},
            "outputs": [],
            "source": VARIABLE_CODE,
        },
    ]
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    folder.mkdir(parents=True)
    (folder / "connect.ipynb").write_text(json.dumps(notebook))


@pytest.fixture(autouse=True)
def patient_expect():
    """Starting a cluster or a kernel takes seconds on a loaded 2-core machine: every expectation waits as long as a
    step may take (Playwright's default is 5 s)."""
    sync_api.expect.set_options(timeout=STEP_TIMEOUT_MS)
    yield
    sync_api.expect.set_options(timeout=5_000)


@pytest.fixture
def shots(tmp_path) -> Path:
    if os.environ.get("DTF_SCREENSHOTS") == "1":
        folder = ROOT / "docs" / "images"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path


def _open_sidebar(page) -> None:
    page.locator('.jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id="dtf-clusters-sidebar"]').click()
    sync_api.expect(page.locator("#dtf-clusters-sidebar")).to_be_visible()


def _widen_for_pictures(page) -> None:
    """A wider window, and the sidebar dragged wider by its handle, so that the pictures show every column."""
    page.set_viewport_size({"width": 1600, "height": 900})
    handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle").first
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + 140, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    page.mouse.move(5, 890)  # no hover highlight
    page.wait_for_timeout(500)


def _status(page, task: str):
    return page.locator(f'[data-dtf-cluster="{CLUSTER}"] tr[data-dtf-task="{task}"] td').nth(1)


def test_sidebar_start_connect_variables_kill_restart_stop(tmp_path, shots):
    _notebook(tmp_path / "work")
    with running_lab(tmp_path / "lab", tmp_path / "work") as lab, chromium_page(lab) as page:
        # Open the sidebar from its tab and start a cluster from the dialog.
        _open_sidebar(page)
        page.locator('#dtf-clusters-sidebar [data-dtf-action="start"]').click()
        dialog = page.locator(".jp-Dialog")
        sync_api.expect(dialog).to_contain_text("Start a local cluster")
        dialog.locator('input[name="name"]').fill(CLUSTER)
        dialog.locator("button.jp-mod-accept").click()
        card = page.locator(f'[data-dtf-cluster="{CLUSTER}"]')
        sync_api.expect(card.locator("tr[data-dtf-task]")).to_have_count(3)
        for task in ("ps:0", "worker:0", "worker:1"):
            sync_api.expect(_status(page, task)).to_have_text("running")
        sync_api.expect(card.locator(".dtf-Cluster-owner")).to_have_text("server")
        pids = {t["job"] + str(t["task"]): t["pid"] for t in lab.api("GET", f"/dtf/clusters/{CLUSTER}")["tasks"]}

        # The connect code goes into the notebook, below its active cell, and runs there.
        nb = Notebook(page, "connect.ipynb", lab.root / "connect.ipynb")
        _open_sidebar(page)
        card.locator('[data-dtf-action="connect"]').click()
        sources = (
            "(p) => window.jupyterapp.shell.currentWidget.content.widgets.map(c => c.model.sharedModel.getSource())"
        )
        page.wait_for_function(f"(p) => ({sources})(p).length === 3", arg=None)
        assert page.evaluate(sources, None)[1] == f"%load_ext dtf_notebook\n%dtf_cluster connect {CLUSTER}"
        page.wait_for_function(JS_READY, arg=nb.path)  # marks the cells again, the new one included
        nb.run(1)
        sync_api.expect(nb.output(1)).to_contain_text(f"Connected to cluster '{CLUSTER}'")
        nb.run(2)
        sync_api.expect(nb.output(2)).to_contain_text("initialized lab_weights")

        # The variables panel shows the new variable, computed on its task.
        card.locator('[data-dtf-action="variables"]').click()
        row = page.locator('.dtf-VariablesPanel tr[data-dtf-variable="lab_weights"]')
        sync_api.expect(row).to_contain_text("[16, 8]")
        sync_api.expect(row).to_contain_text("11.31")  # the norm of 128 ones
        sync_api.expect(card.locator('tr[data-dtf-task="ps:0"] td').nth(2)).to_have_text("1")  # its variables
        _widen_for_pictures(page)
        page.screenshot(path=str(shots / "lab-extension.png"))
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        page.wait_for_timeout(500)
        page.screenshot(path=str(shots / "lab-extension-dark.png"))
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")

        # Kill a task, then restart it; its log panel follows the new process.
        worker = card.locator('tr[data-dtf-task="worker:1"]')
        worker.locator('[data-dtf-action="kill"]').click()
        sync_api.expect(_status(page, "worker:1")).to_have_text("killed")
        assert not pid_running(pids["worker1"])
        worker.locator('[data-dtf-action="restart"]').click()
        sync_api.expect(_status(page, "worker:1")).to_have_text("running")
        restarted = next(
            t for t in lab.api("GET", f"/dtf/clusters/{CLUSTER}")["tasks"] if t["job"] == "worker" and t["task"] == 1
        )
        assert restarted["pid"] != pids["worker1"] and pid_running(restarted["pid"])
        worker.locator('[data-dtf-action="log"]').click()
        sync_api.expect(page.locator(".dtf-LogPanel .dtf-Panel-status")).to_contain_text(f"pid {restarted['pid']}")
        sync_api.expect(page.locator(".dtf-LogPanel pre")).to_contain_text("ready worker 1")

        # Stop it from the sidebar (after the confirmation): it leaves the list, and no task is left.
        card.locator('[data-dtf-action="stop"]').click()
        page.locator(".jp-Dialog button.jp-mod-accept").click()
        sync_api.expect(card).to_have_count(0)
        assert [p for p in [*pids.values(), restarted["pid"]] if pid_running(p)] == []
        assert lab.api("GET", "/dtf/clusters") == {"clusters": []}
