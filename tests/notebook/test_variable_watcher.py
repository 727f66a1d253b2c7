"""VariableWatcher: finding a cluster's tasks, live rows while another process trains, dead tasks, stopping."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.variable_watcher import VariableWatcher, cluster_tasks

SPEC = {"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223", "127.0.0.1:2224"]}

# Trains w toward 3.0 on the ps task until killed (the watcher must see w move).
TRAINER = """
import sys, time
import dtf_notebook.compat.v1 as tf
with tf.device("/job:ps/task:0"):
    w = tf.get_variable("w", initializer=tf.zeros([64]))
with tf.device("/job:worker/task:0"):
    loss = tf.reduce_sum(tf.square(w - 3.0))
    train = tf.train.GradientDescentOptimizer(0.001).minimize(loss)
with tf.Session(sys.argv[1]) as sess:
    sess.run(w.initializer)
    print("ready", flush=True)
    while True:
        sess.run(train)
        time.sleep(0.01)
"""


def _watcher_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "dtf-variable-watcher"]


class _HasSpec:
    spec = SPEC


@pytest.mark.parametrize("cluster", [SPEC, ClusterSpec(SPEC), _HasSpec()], ids=["dict", "ClusterSpec", "spec-attr"])
def test_cluster_tasks_from_specs(cluster: object) -> None:
    assert cluster_tasks(cluster) == {
        "/job:ps/replica:0/task:0": "127.0.0.1:2222",
        "/job:worker/replica:0/task:0": "127.0.0.1:2223",
        "/job:worker/replica:0/task:1": "127.0.0.1:2224",
    }


def test_cluster_tasks_rejects_other_things() -> None:
    with pytest.raises(TypeError, match="not int"):
        cluster_tasks(42)


def test_refresh_must_be_positive() -> None:
    with pytest.raises(ValueError, match="refresh"):
        VariableWatcher(SPEC, refresh=0, start=False)


def test_a_local_server_target_lists_its_variables_and_histograms() -> None:
    with tf.train.Server.create_local_server() as server, tf.Graph().as_default():
        v = tf.Variable(tf.range(10, dtype=tf.float32), name="v")
        s = tf.Variable("text", name="s")
        with tf.Session(server.target) as sess:
            sess.run([v.initializer, s.initializer])
            with VariableWatcher(server.target, start=False) as watcher:
                rows = {r["name"]: r for r in watcher.poll()}
                hist = watcher.histogram("v", bins=5)
                html = watcher._repr_html_()
                text = repr(watcher)
    assert set(watcher.tasks) == {"/job:localhost/replica:0/task:0"}
    assert rows["v"]["shape"] == [10] and rows["v"]["max"] == 9.0 and rows["v"]["available"]
    assert rows["s"]["dtype"] == "string" and rows["s"].get("norm") is None
    assert hist["counts"] == [2, 2, 2, 2, 2] and hist["edges"][0] == 0.0 and hist["edges"][-1] == 9.0
    assert "<svg" in html and "v" in html and "stopped" in text
    with pytest.raises(ValueError, match="No variable 'nope'"):
        watcher.find("nope")


def test_containers_filter_one_several_or_all() -> None:
    with tf.train.Server.create_local_server() as server, tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        with tf.container("expA"):
            b = tf.Variable(2.0, name="b")
        with tf.container("expB"):
            c = tf.Variable(3.0, name="c")
        with tf.Session(server.target) as sess:
            sess.run([a.initializer, b.initializer, c.initializer])
            listed = {}
            for key, containers in [
                ("one", "expA"),  # a name is one container, not its letters
                ("one in a list", ["expB"]),
                ("several", ("expA", "expB")),
                ("the default", ""),
                ("all", None),
                ("none", []),
            ]:
                with VariableWatcher(server.target, containers=containers, start=False) as watcher:
                    listed[key] = [(r["container"], r["name"]) for r in watcher.poll()]
    assert listed == {
        "one": [("expA", "b")],
        "one in a list": [("expB", "c")],
        "several": [("expA", "b"), ("expB", "c")],
        "the default": [("", "a")],
        "all": [("", "a"), ("expA", "b"), ("expB", "c")],
        "none": [],
    }
    assert VariableWatcher(SPEC, containers="expA", start=False).containers == ["expA"]
    with pytest.raises(TypeError, match="not 3"):
        VariableWatcher(SPEC, containers=["expA", 3], start=False)


def test_the_table_has_a_device_column_in_html_text_and_widget() -> None:
    pytest.importorskip("ipywidgets")
    from dtf_notebook.notebook.watcher_widget import VariableWatcherWidget

    device = "/job:localhost/replica:0/task:0/device:CPU:0"
    with tf.train.Server.create_local_server() as server, tf.Graph().as_default():
        v = tf.Variable([3.0, 4.0], name="v")
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
            with VariableWatcher(server.target, start=False) as watcher:
                view = VariableWatcherWidget(watcher)
                (row,) = watcher.poll()
    assert row["device"] == device
    # Grouped by task: the task heads its rows, which name the device within it (no repeated task).
    task = "/job:localhost/replica:0/task:0"
    for table in (watcher.table_html(), view.table.value):
        assert re.search(r"<th[^>]*>dtype</th><th[^>]*>device</th><th[^>]*>min</th>", table)
        assert f"{task} <span" in table and re.search(r"<td[^>]*>CPU:0</td>", table) and device not in table
        assert not re.search(r">(task|container)</th>", table)  # only default containers: no container column
    head, _, line = repr(watcher).splitlines()[1:]
    assert head.split()[4:7] == ["dtype", "device", "min"] and line.index(device) == head.index("device")


@pytest.mark.cluster
def test_watching_a_cluster_while_another_process_trains(runtime_dir) -> None:
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster:
        trainer = subprocess.Popen(
            [sys.executable, "-c", TRAINER, cluster.target("worker", 0)],
            env=cluster.client_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert trainer.stdout.readline().strip() == "ready"
            watcher = VariableWatcher(cluster, refresh=0.1, timeout=2.0)
            key = ("/job:ps/replica:0/task:0", "", "w")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len({n for _, n in watcher.history.get(key, [])}) < 3:
                time.sleep(0.1)
            norms = [n for _, n in watcher.history[key]]
            assert len(set(norms)) >= 3, norms  # w moves between refreshes
            assert watcher.running and watcher.status == {
                "/job:ps/replica:0/task:0": "ok",
                "/job:worker/replica:0/task:0": "ok",
            }
            row = watcher.find("w")
            assert (row["shape"], row["dtype"], row["device"]) == (
                [64],
                "float32",
                "/job:ps/replica:0/task:0/device:CPU:0",
            )
            assert sum(watcher.histogram("w", bins=8)["counts"]) == 64

            from dtf_notebook.notebook.watcher_widget import VariableWatcherWidget

            widget = VariableWatcherWidget(watcher)
            widget.picker.value = key
            assert "<rect" in widget.histogram.value
            polls = watcher.polls
            deadline = time.monotonic() + 10
            while watcher.polls < polls + 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "w" in widget.table.value and "<polyline" in widget.table.value

            cluster.kill("ps", 0)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not watcher.status[key[0]].startswith("unavailable"):
                time.sleep(0.1)
            assert watcher.status[key[0]].startswith("unavailable")
            assert watcher.status["/job:worker/replica:0/task:0"] == "ok"
            assert watcher.running and watcher.error is None  # a dead task does not stop the watcher
            assert not watcher.find("w")["available"]
            assert "unavailable" in watcher.table_html()
            widget._draw_histogram()  # what the next refresh does
            assert "No histogram of w" in widget.histogram.value
        finally:
            trainer.kill()
            trainer.wait(10)
            if "watcher" in locals():
                watcher.stop()
    assert not watcher.running and _watcher_threads() == []


@pytest.mark.cluster
def test_the_watcher_says_when_its_cluster_stopped(runtime_dir) -> None:
    pytest.importorskip("ipywidgets")
    from dtf_notebook.notebook.watcher_widget import VariableWatcherWidget

    cluster = LocalCluster(ps=1, workers=1, name="watch-stop").start()
    try:
        other_kernel = LocalCluster.connect("watch-stop")  # what another kernel holds
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable([3.0, 4.0], name="v")
            with tf.Session(cluster.target("worker", 0)) as sess:
                sess.run(v.initializer)
        watcher = VariableWatcher(other_kernel, refresh=0.1)
        view = VariableWatcherWidget(watcher)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not watcher.rows:
            time.sleep(0.05)
        assert "refreshing" in view.status.value and "color:#b22" not in view.status.value
    finally:
        cluster.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and watcher.running:
        time.sleep(0.05)
    assert not watcher.running and watcher.cluster_stopped  # it ended by itself
    # Said where the eye is (the status line above the table), and the stale rows greyed.
    assert "Cluster stopped" in view.status.value and "the cluster stopped" in view.status.value
    assert view.toggle.disabled and 'style="color:#999"' in view.table.value
    assert set(watcher.status.values()) == {"cluster stopped"}


def test_stop_leaves_the_last_table_in_the_output_and_pause_keeps_it_live() -> None:
    pytest.importorskip("ipywidgets")
    with tf.train.Server.create_local_server() as server, tf.Graph().as_default():
        v = tf.Variable([3.0, 4.0], name="v")
        with tf.Session(server.target) as sess:
            sess.run(v.initializer)
            watcher = VariableWatcher(server.target, refresh=0.1)
            view = watcher.widget()
            view._ipython_display_()  # what showing it in a notebook does
            view.toggle.click()  # the Stop button pauses: the output stays a live widget
            assert not watcher.running and not view._live.finished and view.toggle.description == "Start"
            view.toggle.click()
            assert watcher.running
            watcher.stop()  # stopped in code: the output keeps the last table alone
    bundle = view._live.bundle()
    assert view._live.finished and "application/vnd.jupyter.widget-view+json" not in bundle
    assert re.search(r"<td[^>]*>v</td>", bundle["text/html"]) and "; stopped;" in bundle["text/html"]
    assert view.picker.value == () and view.picker.options[0][0] == "(pick a variable for its histogram)"
