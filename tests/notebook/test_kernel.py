"""``%dtf_cluster`` in real IPython kernels, driven through jupyter_client: two kernels share one variable;
the widgets' state is read from the comm messages a kernel sends its front end (the placement picture's
nodes and colours, the variable watcher's values, the training progress bar); and no task, template,
cluster file or log directory outlives a stop or its kernel."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

from dtf_notebook.notebook import cluster_files  # noqa: E402
from dtf_notebook.notebook.pids import pid_running  # noqa: E402
from tests.notebook.test_template_lifecycle import templates_of  # noqa: E402

pytestmark = pytest.mark.cluster

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Seed 002's simple_client.py, with x placed on the ps task so that both kernels (each talking to another
# worker) reach the same variable.
CLIENT = """
import dtf_notebook.compat.v1 as tf
with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        x = tf.Variable(0.0, name="x")
    increment_x = tf.assign(x, x + 1)
    with tf.Session(cluster.target("worker", {worker})) as sess:
        if {init}:
            sess.run(x.initializer)
        sess.run(increment_x)
        print(x.eval())
"""


# In kernel 2 (connected to the cluster): the placement view of seed 002's step after a run, and a
# VariableWatcher's widget after one refresh. Prints which widgets they are and the ids of their models.
PLACEMENT_AND_WATCHER = """
import json
import dtf_notebook.compat.v1 as tf
from dtf_notebook.notebook import show_placement, VariableWatcher
with tf.Graph().as_default():
    with tf.device("/job:ps/task:0"):
        x = tf.Variable(0.0, name="x")
    with tf.device("/job:worker/task:1"):
        increment_x = tf.assign(x, x + 1)
    with tf.Session(cluster.target("worker", 1)) as sess:
        view = show_placement(increment_x, session=sess, collapse=False)
watcher = VariableWatcher(cluster, start=False)
table = watcher.widget()
watcher.poll()
watcher.stop()
print(json.dumps({
    "placement": type(view).__name__, "picture": view.picture.model_id,
    "nodes": [{k: n[k] for k in ("id", "name", "colour")} for n in view.nodes],
    "watcher": type(table).__name__, "table": table.table.model_id,
}))
"""

# Training in a kernel, with no hook asked for: a notebook progress bar appears by itself.
TRAIN = """
import dtf_notebook.compat.v1 as tf
with tf.Graph().as_default():
    step = tf.train.get_or_create_global_step()
    loss = tf.cast(10 - step, tf.float32, name="loss")
    tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    train_op = tf.assign_add(step, 1)
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
"""


class Models(dict):
    """Widget model states by model id, as a front end builds them from the kernel's comm messages."""

    def receive(self, msg: dict) -> None:
        kind, content = msg["msg_type"], msg["content"]
        data = content.get("data") or {}
        if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
            self[content["comm_id"]] = dict(data.get("state", {}))
        elif kind == "comm_msg" and data.get("method") in ("update", "echo_update") and content["comm_id"] in self:
            self[content["comm_id"]].update(data.get("state", {}))

    def named(self, model_name: str) -> list[dict]:
        return [state for state in self.values() if state.get("_model_name") == model_name]


def svg_nodes(svg: str) -> dict[str, tuple[str, str]]:
    """Node id → (first line of its label, fill colour), read from a Graphviz SVG."""
    nodes = {}
    for group in svg.split('<g id="node')[1:]:
        group = group.split("</g>", 1)[0]
        node_id = re.search(r"<title>([^<]*)</title>", group).group(1)
        fill = re.search(r'fill="(#[0-9a-fA-F]{6})"', group).group(1)
        nodes[node_id] = (re.search(r"<text[^>]*>([^<]*)</text>", group).group(1), fill)
    return nodes


class _Table(HTMLParser):
    """The header and rows of an HTML table, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(html: str) -> list[dict[str, str]]:
    parser = _Table()
    parser.feed(html)
    header, *rows = parser.rows
    return [dict(zip(header, row)) for row in rows]


def _kernel_spec_manager(tmp_path_factory) -> KernelSpecManager:
    """A kernel spec of this interpreter in a directory of its own: no installed kernel spec is needed."""
    kernels = tmp_path_factory.mktemp("kernels")
    spec_dir = kernels / "dtf-test"
    spec_dir.mkdir()
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec_dir / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "dtf-test", "language": "python"}))
    return KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)


def _start_kernel(specs: KernelSpecManager, runtime_dir) -> tuple[KernelManager, object]:
    km = KernelManager(kernel_name="dtf-test", kernel_spec_manager=specs)
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime_dir), "PYTHONPATH": ROOT}
    km.start_kernel(env=env, cwd=ROOT)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


@pytest.fixture(scope="module")
def kernels(runtime_dir, tmp_path_factory):
    specs = _kernel_spec_manager(tmp_path_factory)
    with ThreadPoolExecutor(2) as pool:
        started = list(pool.map(lambda _: _start_kernel(specs, runtime_dir), range(2)))
    # Loading the extension imports dtf_notebook (and torch): do it in both kernels at once.
    pending = [kc.execute("%load_ext dtf_notebook") for _, kc in started]
    for (_, kc), msg_id in zip(started, pending):
        _wait_reply(kc, msg_id, 120)
    yield [kc for _, kc in started], [km for km, _ in started]
    for km, kc in started:
        kc.stop_channels()
        if km.is_alive():
            km.shutdown_kernel(now=True)


def _wait_reply(kc, msg_id: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        reply = kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if reply["parent_header"].get("msg_id") == msg_id:
            assert reply["content"]["status"] == "ok", reply["content"]
            return


def run(kc, code: str, timeout: float = 60, models: Models | None = None) -> tuple[str, str]:
    """Runs ``code`` in the kernel; returns its (stdout, stderr); fails on a Python error. Widget models the
    code creates or changes go into ``models``."""
    out, err, failures = [], [], []

    def hook(msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            (out if content["name"] == "stdout" else err).append(content["text"])
        elif kind == "error":
            failures.append(f"{content['ename']}: {content['evalue']}")
        elif models is not None:
            models.receive(msg)

    reply = kc.execute_interactive(code, output_hook=hook, timeout=timeout)
    assert not failures, failures
    assert reply["content"]["status"] == "ok", (reply["content"], "".join(err))
    return "".join(out), "".join(err)


def interrupted(kc, km, code: str, wait_for: str, timeout: float = 30) -> str:
    """Runs ``code``, interrupts the kernel once ``wait_for`` was printed, and returns all it printed."""
    msg_id, out = kc.execute(code), []
    deadline, sent = time.monotonic() + timeout, False
    while True:
        msg = kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        assert kind != "error", f"{content['ename']}: {content['evalue']}"
        if kind == "stream" and content["name"] == "stdout":
            out.append(content["text"])
        if not sent and wait_for in "".join(out):
            km.interrupt_kernel()
            sent = True
        if kind == "status" and content["execution_state"] == "idle":
            break
    _wait_reply(kc, msg_id, timeout)
    return "".join(out)


def gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while any(pid_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(pid_running(p) for p in pids)


TEMPLATE_PID = "from dtf_notebook.notebook.template_client import shared_template\nprint(shared_template().pid)"
# The kernel's pid, and its template's pid as the template client knows it (None: no template).
KERNEL_AND_TEMPLATE = """
import os
from dtf_notebook.notebook.template_client import shared_template
print(os.getpid(), getattr(shared_template(start=False), "pid", None))
"""


def kernel_and_template(kc) -> tuple[int, int | None]:
    out, _ = run(kc, KERNEL_AND_TEMPLATE)
    kernel, template = out.split()
    return int(kernel), None if template == "None" else int(template)


def test_two_kernels_share_a_variable_and_stop_leaves_no_task(kernels):
    (k1, k2), kms = kernels
    # %load_ext (the fixture) starts no task template, in either kernel.
    for kc in (k1, k2):
        kernel, template = kernel_and_template(kc)
        assert template is None and templates_of(kernel) == []
    out, _ = run(k1, "%dtf_cluster start --ps 1 --workers 2 --name shared-x")
    assert "Started cluster 'shared-x' (ps=1 worker=2)" in out
    kernel1, template = kernel_and_template(k1)
    assert template is not None and templates_of(kernel1) == [template]
    pids = [r["pid"] for r in cluster_files.find("shared-x").tasks]
    assert len(pids) == 3 and all(pid_running(p) for p in pids)

    out, _ = run(k1, CLIENT.format(worker=0, init=True))
    assert out.strip() == "1.0"
    out, _ = run(k2, "%dtf_cluster connect shared-x")
    assert "Connected to cluster 'shared-x'" in out
    kernel2, none = kernel_and_template(k2)
    assert none is None and templates_of(kernel2) == []  # connecting starts no template
    out, _ = run(k2, "print(cluster.locked, cluster.cluster_key is not None)")
    assert out.split() == ["True", "True"]  # locked, and the second kernel found the key by the cluster's name
    out, _ = run(k2, CLIENT.format(worker=1, init=False))
    assert out.strip() == "2.0"

    # The live table of kernel 1: a widget (a kernel has a front end), its rows as JSON.
    out, _ = run(
        k1,
        "import json\nw = %dtf_cluster status\nw.refresh()\nprint(type(w.widget).__name__)\nprint(json.dumps(w.rows))",
    )
    kind, rows = out.strip().splitlines()
    assert kind == "VBox"
    rows = json.loads(rows)
    assert [(r["job"], r["task"], r["status"]) for r in rows] == [
        ("ps", 0, "running"),
        ("worker", 0, "running"),
        ("worker", 1, "running"),
    ]
    assert sorted(r["pid"] for r in rows) == sorted(pids)
    ps = rows[0]
    assert ps["variables"] == 1 and ps["variable_bytes"] == 4  # x: one float32
    assert all(r["memory_bytes"] > 0 and r["devices"] for r in rows)

    # Placement graph and live variables: what kernel 2's front end is sent for its widgets.
    models = Models()
    out, _ = run(k2, PLACEMENT_AND_WATCHER, timeout=90, models=models)
    shown = json.loads(out.strip().splitlines()[-1])
    assert (shown["placement"], shown["watcher"]) == ("PlacementWidget", "VariableWatcherWidget")
    drawn = svg_nodes(models[shown["picture"]]["value"])  # the picture's model holds the SVG
    assert {node_id: name for node_id, (name, _) in drawn.items()} == {n["id"]: n["name"] for n in shown["nodes"]}
    assert {node_id: colour for node_id, (_, colour) in drawn.items()} == {n["id"]: n["colour"] for n in shown["nodes"]}
    colour = {name: fill for name, fill in drawn.values()}
    # One colour per device: x (and the Assign colocated with it) on the ps task, add on worker 1.
    on_ps, on_worker = colour["x"], colour["add"]
    assert colour == {"x": on_ps, "x/read": on_ps, "Assign": on_ps, "add": on_worker, "add/y": on_worker}
    assert on_ps != on_worker
    legend = next(m["value"] for m in models.named("HTMLModel") if "<i>(assigned devices)</i>" in m.get("value", ""))
    assert f"background:{on_ps}" in legend and f"background:{on_worker}" in legend
    # The watcher's table is grouped by task: a line per task, then its variables.
    variables = table_rows(models[shown["table"]]["value"])
    assert [list(v.values())[0] for v in variables if len(v) == 1] == [
        "/job:ps/replica:0/task:0 ok",
        "/job:worker/replica:0/task:0 ok · no variables",
        "/job:worker/replica:0/task:1 ok · no variables",
    ]
    assert [(v["name"], v["device"], v["min"], v["max"]) for v in variables if len(v) > 1] == [("x", "CPU:0", "2", "2")]

    # Training in a kernel shows a notebook progress bar by itself: steps, steps/s and the loss.
    models = Models()
    run(k2, TRAIN, timeout=90, models=models)
    (bar,) = models.named("FloatProgressModel")
    assert (bar["max"], bar["value"]) == (3, 3)
    text = " ".join(m.get("value", "") for m in models.named("HTMLModel"))
    assert "3/3" in text and "step/s" in text and "loss=8" in text

    # Following a log ends cleanly at a kernel interrupt, which does not reach the tasks.
    out = interrupted(k1, kms[0], "%dtf_cluster logs ps:0 --follow", "ready ps 0")
    assert out.startswith("ready ps 0") and out.endswith("(stopped following ps:0)\n")
    assert all(pid_running(p) for p in pids)

    # Kernel 2 ran sessions, showed widgets and trained on the cluster: still no template of its own.
    assert kernel_and_template(k2)[1] is None and templates_of(kernel2) == []

    out, _ = run(k1, "%dtf_cluster stop")
    assert "Stopped cluster 'shared-x' (3 tasks)." in out
    assert gone(pids, 10)
    assert not os.path.exists(cluster_files.cluster_file("shared-x"))
    # Its last cluster stopped: kernel 1's template has left (the client waited for it, so not even a zombie).
    assert not os.path.exists(f"/proc/{template}") and templates_of(kernel1) == []
    assert kernel_and_template(k1)[1] is None


def test_no_task_outlives_its_kernel(kernels):
    """A kernel shut down (atexit stops its clusters) or killed (tasks watch their parent) leaves no task, no
    task template, no cluster file and no log directory."""
    (k1, k2), (km1, km2) = kernels
    left = {}
    for kc, name in ((k1, "by-shutdown"), (k2, "by-kill")):
        out, _ = run(kc, f"%dtf_cluster start --ps 1 --workers 1 --name {name}\n{TEMPLATE_PID}")
        record = cluster_files.find(name)
        pids = [r["pid"] for r in record.tasks] + [int(out.strip().splitlines()[-1])]
        assert len(pids) == 3 and all(pid_running(p) for p in pids) and os.path.isdir(record.log_dir)
        left[name] = (pids, record.path, record.log_dir)

    km1.shutdown_kernel(now=False)
    km2.shutdown_kernel(now=True)  # SIGKILL: no atexit; the template and its tasks notice their parent is gone
    for name, within in (("by-shutdown", 10), ("by-kill", 15)):
        pids, path, log_dir = left[name]
        assert gone(pids, within), (name, [p for p in pids if pid_running(p)])
        deadline = time.monotonic() + 10  # the template removes a killed kernel's file and logs as it ends
        while (os.path.exists(path) or os.path.exists(log_dir)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not os.path.exists(path) and not os.path.exists(log_dir), name
