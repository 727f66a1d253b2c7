"""``%dtf_cluster`` in real IPython kernels, driven through jupyter_client: two kernels share one variable,
the cluster widget's rows come back as JSON, and no task outlives a stop or its kernel."""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

from dtf_notebook.notebook import cluster_files  # noqa: E402
from dtf_notebook.notebook.pids import pid_running  # noqa: E402

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


# In kernel 2 (connected to the cluster): the placement widget of seed 002's step after a run, and a
# VariableWatcher's rows; both printed as JSON.
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
print(type(view).__name__)
print(json.dumps([{k: n[k] for k in ("name", "kind", "device", "colour")} for n in view.nodes]))
with VariableWatcher(cluster, start=False) as watcher:
    rows = watcher.poll()
print(json.dumps([{k: r[k] for k in ("name", "task", "min", "max")} for r in rows]))
"""


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


def run(kc, code: str, timeout: float = 60) -> tuple[str, str]:
    """Runs ``code`` in the kernel; returns its (stdout, stderr); fails on a Python error."""
    out, err, failures = [], [], []

    def hook(msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            (out if content["name"] == "stdout" else err).append(content["text"])
        elif kind == "error":
            failures.append(f"{content['ename']}: {content['evalue']}")

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


def test_two_kernels_share_a_variable_and_stop_leaves_no_task(kernels):
    (k1, k2), kms = kernels
    out, _ = run(k1, "%dtf_cluster start --ps 1 --workers 2 --name shared-x")
    assert "Started cluster 'shared-x' (ps=1 worker=2)" in out
    pids = [r["pid"] for r in cluster_files.find("shared-x").tasks]
    assert len(pids) == 3 and all(pid_running(p) for p in pids)

    out, _ = run(k1, CLIENT.format(worker=0, init=True))
    assert out.strip() == "1.0"
    out, _ = run(k2, "%dtf_cluster connect shared-x")
    assert "Connected to cluster 'shared-x'" in out
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

    # Placement graph and live variables, read back from kernel 2's widget models.
    out, _ = run(
        k2,
        PLACEMENT_AND_WATCHER,
        timeout=90,
    )
    nodes, variables = (json.loads(line) for line in out.strip().splitlines()[-2:])
    by_name = {n["name"]: n for n in nodes}
    assert by_name["x"]["kind"] == "variable" and by_name["x"]["device"].startswith("/job:ps/replica:0/task:0")
    assert by_name["add"]["device"].startswith("/job:worker/replica:0/task:1")
    assert by_name["x"]["colour"] != by_name["add"]["colour"]  # one colour per device
    rows = [(v["name"], v["task"], v["min"], v["max"]) for v in variables]
    assert rows == [("x", "/job:ps/replica:0/task:0", 2.0, 2.0)]

    # Following a log ends cleanly at a kernel interrupt, which does not reach the tasks.
    out = interrupted(k1, kms[0], "%dtf_cluster logs ps:0 --follow", "ready ps 0")
    assert out.startswith("ready ps 0") and out.endswith("(stopped following ps:0)\n")
    assert all(pid_running(p) for p in pids)

    out, _ = run(k1, "%dtf_cluster stop")
    assert "Stopped cluster 'shared-x' (3 tasks)." in out
    assert gone(pids, 10)
    assert not os.path.exists(cluster_files.cluster_file("shared-x"))


def test_no_task_outlives_its_kernel(kernels):
    """A kernel shut down (atexit stops its clusters) or killed (tasks watch their parent) leaves no task."""
    (k1, k2), (km1, km2) = kernels
    run(k1, "%dtf_cluster start --ps 1 --workers 1 --name by-shutdown")
    run(k2, "%dtf_cluster start --ps 1 --workers 1 --name by-kill")
    by_shutdown = [r["pid"] for r in cluster_files.find("by-shutdown").tasks]
    by_kill = [r["pid"] for r in cluster_files.find("by-kill").tasks]
    assert len(by_shutdown) == len(by_kill) == 2 and all(pid_running(p) for p in by_shutdown + by_kill)

    km1.shutdown_kernel(now=False)
    km2.shutdown_kernel(now=True)  # SIGKILL: no atexit; the template and its tasks notice their parent is gone
    assert gone(by_shutdown, 10)
    assert gone(by_kill, 15)
