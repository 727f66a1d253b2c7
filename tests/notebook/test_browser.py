"""Tutorials 01, 02 and 04 run in JupyterLab, as a person runs them, driven in Debian's chromium by Playwright.

One ``jupyter lab`` on the loopback address serves a temporary copy of ``notebooks/`` (saved notebooks never
dirty the repository), with its own runtime, config, data, settings and workspaces directories. Each tutorial
is opened, every code cell but the last (``%dtf_cluster stop --all``) is run one by one, and the widgets are
read from the page: 01's cluster table says every task is running, 02's placement graph is an SVG with one
Graphviz box per task, 04's variable watcher changes its values while the training cell runs and the training
progress bar reaches its total. Then the last cell stops the cluster, every cluster table turns into a static
table saying stopped, the notebook is saved, closed and opened again, and the saved file and the page show the
static pictures (01 also with a new kernel: the saved table is all there is then). Nothing the test started
outlives it. The last test reopens 02 and 04 with a new kernel: the placement graph, still a live widget when saved,
shows its static copy through the lab extension's fallback.

``DTF_SCREENSHOTS=1`` writes the screenshots of the three widgets to ``docs/images/`` (the README shows them);
otherwise they go to the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
pytest.importorskip("jupyterlab", reason="JupyterLab is not installed")
pytest.importorskip("ipywidgets", reason="ipywidgets is not installed")

from tests.notebook.lab_driver import (  # noqa: E402
    CELL_TIMEOUT_MS,
    CHROMIUM,
    JS_GRID_ROWS,
    JS_PROMPT,
    JS_TABLE_ROWS,
    LABEXTENSION,
    Notebook,
    chromium_page,
    close,
    reopen,
    running_lab,
    saved_html,
    screenshot,
    stop_and_check_tables,
    sync_api,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.cluster,
    pytest.mark.browser,
    pytest.mark.timeout(600),
    pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (scripts/setup.sh installs it)"),
]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    with running_lab(tmp_path_factory.mktemp("lab"), ROOT / "notebooks") as server:
        yield server


@pytest.fixture(scope="module")
def page(lab):
    with chromium_page(lab) as tab:
        yield tab


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where screenshots go: docs/images/ with DTF_SCREENSHOTS=1 (tracked files), else a temporary directory."""
    if os.environ.get("DTF_SCREENSHOTS") == "1":
        folder = ROOT / "docs" / "images"
        folder.mkdir(parents=True, exist_ok=True)
        return folder
    return tmp_path_factory.mktemp("screenshots")


# ---- the tutorials ---------------------------------------------------------------------------------------------
def test_01_cluster_table(lab, page, shots):
    path = "01_clusters.ipynb"
    nb = Notebook(page, path, lab.root / path)
    start_cell = next(i for i in nb.code_cells if "%dtf_cluster start" in nb.sources[i])
    for index in nb.code_cells[:-1]:
        nb.run(index)

    table = nb.output(start_cell).locator(".widget-vbox", has_text="LocalCluster 'tut01': running").first
    sync_api.expect(table).to_be_visible()
    rows = table.locator(".widget-gridbox").first.evaluate(JS_GRID_ROWS)
    header, tasks = rows[0], rows[1:]
    assert header[:5] == ["job", "task", "address", "pid", "status"], header
    assert [(r[0], r[1]) for r in tasks] == [("ps", "0"), ("worker", "0"), ("worker", "1")], rows
    assert {r[4] for r in tasks} == {"running"}, rows
    nb.activate(nb.code_cells[-1])
    screenshot([nb.output(start_cell)], shots / "cluster-table.png", page)

    stop_and_check_tables(nb)
    nb.save_and_close(lab.root / path)
    html = saved_html(lab.root / path, start_cell)
    assert "LocalCluster &#x27;tut01&#x27;: stopped, 3 tasks" in html or "LocalCluster 'tut01': stopped" in html, html
    again = reopen(nb, lab.root / path)
    sync_api.expect(again.output(start_cell)).to_contain_text("LocalCluster 'tut01': stopped, 3 tasks")
    rows = again.output(start_cell).locator("table").first.evaluate(JS_TABLE_ROWS)
    assert len(rows) == 3 and {r["status"] for r in rows} == {"stopped"}, rows

    # Opened later, with a new kernel, the saved table is all there is: it still says stopped.
    close(page, path)
    lab.shutdown_kernel_of(path)
    fresh = Notebook(page, path, lab.root / path)
    sync_api.expect(fresh.output(start_cell)).to_contain_text("LocalCluster 'tut01': stopped, 3 tasks")
    close(page, path)


def test_02_placement_graph(lab, page, shots):
    path = "02_placement.ipynb"
    nb = Notebook(page, path, lab.root / path)
    traced = next(i for i in nb.code_cells if "show_placement(train_op, session=sess" in nb.sources[i])
    for index in nb.code_cells[:-1]:
        nb.run(index)

    # The traced step of worker 0's master: variables on ps 0 and ps 1, everything else on worker 0.
    picture = nb.output(traced).locator(".jupyter-widgets svg").first
    sync_api.expect(picture).to_be_visible()
    nb.activate(nb.code_cells[-1])
    screenshot([nb.output(traced).locator(".jupyter-widgets").first], shots / "placement-graph.png", page)
    width = picture.bounding_box()["width"]
    assert width <= nb.output(traced).bounding_box()["width"] + 1, "the graph is wider than the notebook"
    # A box's label is its direct <text>: a task ("/job:ps/replica:0/task:1") or a device in it ("CPU:0").
    labels = picture.locator("g.cluster").evaluate_all(
        "gs => gs.map(g => Array.from(g.children).filter(c => c.tagName === 'text').map(t => t.textContent).join(' '))"
    )
    tasks = sorted(re.sub(r"/replica:\d+", "", label) for label in labels if label.startswith("/job:"))
    assert tasks == ["/job:ps/task:0", "/job:ps/task:1", "/job:worker/task:0"], labels
    assert len(labels) == 2 * len(tasks), f"one device box in each task box: {labels}"

    stop_and_check_tables(nb)
    nb.save_and_close(lab.root / path)
    html = saved_html(lab.root / path, traced)
    assert "<svg" in html and 'class="cluster"' in html and "/job:ps/task:1" in html, html[:2000]
    again = reopen(nb, lab.root / path)
    sync_api.expect(again.output(traced).locator("svg g.cluster").first).to_be_attached()
    close(page, path)


def test_04_variable_watcher_and_progress_bar(lab, page, shots):
    path = "04_shared_state.ipynb"
    nb = Notebook(page, path, lab.root / path)
    texts = nb.sources
    training = next(i for i in nb.code_cells if "MonitoredTrainingSession" in texts[i])
    watcher_cell = max(i for i in nb.code_cells if i < training and texts[i].strip().endswith("watcher"))
    for index in nb.code_cells[: nb.code_cells.index(training)]:
        nb.run(index)

    table = nb.output(watcher_cell).locator("table.dtf-variables").first
    sync_api.expect(table).to_be_visible()
    count = nb.start(training)

    def norm() -> str | None:
        rows = table.evaluate(JS_TABLE_ROWS)
        found = [r["norm"] for r in rows if r.get("name") == "digits/weights_1"]
        return found[0] if found else None

    # Two reads of a norm at least a second apart differ while the training cell runs (its prompt says [*]).
    sync_api.expect(table).to_contain_text("digits/weights_1", timeout=CELL_TIMEOUT_MS)
    reads = [norm()]
    while page.evaluate(JS_PROMPT, [path, training]) == "[*]:" and reads[-1] == reads[0]:
        time.sleep(1.2)
        reads.append(norm())
    assert len(set(reads)) > 1, f"the watcher's norm of digits/weights_1 stayed {reads[0]} while training ran"
    nb.wait(training, count)
    bar = nb.output(training)
    sync_api.expect(bar).to_contain_text("1000/1000")
    nb.hide_input(training, True)  # the watcher right above its progress bar
    nb.activate(nb.code_cells[-1])
    screenshot([nb.output(watcher_cell), bar], shots / "variable-watcher.png", page)
    nb.hide_input(training, False)

    for index in nb.code_cells[nb.code_cells.index(training) + 1 : -1]:
        nb.run(index)
    stop_and_check_tables(nb)
    last_norm = norm()  # the watcher was stopped before the cluster: its table changes no more
    nb.save_and_close(lab.root / path)
    saved = lab.root / path
    assert "1000/1000" in saved_html(saved, training)
    watcher_html = saved_html(saved, watcher_cell)
    assert "dtf-variables" in watcher_html and "digits/weights_1" in watcher_html, watcher_html[:2000]
    again = reopen(nb, lab.root / path)
    sync_api.expect(again.output(training)).to_contain_text("1000/1000")
    sync_api.expect(again.output(watcher_cell).locator("table.dtf-variables").first).to_contain_text(last_norm)
    close(page, path)


# A placement graph stays a live widget as long as its kernel runs (it has controls, and nothing ends it), so a
# notebook saved then has the widget and its static copy in one output. JupyterLab's widget renderer, asked for a
# model a new kernel does not have, says "Error displaying widget: model not found"; the lab extension
# (extension/src/widgetFallback.ts) then shows the output's HTML copy in its place. A finished widget (the stopped
# watcher, the cluster table, the progress bar) is its static copy alone and reopens fine either way.
NEEDS_FALLBACK = pytest.mark.skipif(
    not (LABEXTENSION / "package.json").exists(),
    reason="the lab extension (its widget fallback) is not built: scripts/setup.sh builds it",
)


@pytest.mark.parametrize(
    "path",
    [pytest.param("02_placement.ipynb", marks=NEEDS_FALLBACK), "04_shared_state.ipynb"],
    ids=["02", "04"],
)
def test_saved_widget_shows_its_picture_with_a_new_kernel(lab, page, path):
    """The notebook as its test above saved it, opened again after its kernel was shut down."""
    if not any(c.get("outputs") for c in json.loads((lab.root / path).read_text())["cells"]):
        pytest.skip(f"{path} was not run and saved by its test")
    lab.shutdown_kernel_of(path)
    nb = Notebook(page, path, lab.root / path)
    try:
        if path.startswith("02"):
            traced = next(i for i in nb.code_cells if "show_placement(train_op, session=sess" in nb.sources[i])
            shown = nb.output(traced).locator("svg g.cluster").first
            sync_api.expect(shown).to_be_attached(timeout=30_000)
        else:
            training = next(i for i in nb.code_cells if "MonitoredTrainingSession" in nb.sources[i])
            watcher = max(i for i in nb.code_cells if i < training and nb.sources[i].strip().endswith("watcher"))
            shown = nb.output(watcher).locator("table.dtf-variables").first
            sync_api.expect(shown).to_contain_text("digits/weights_1", timeout=30_000)
    finally:
        close(page, path)
