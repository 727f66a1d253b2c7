"""The lab extension's REST API against a real ``jupyter server`` on loopback, token on.

The server starts a real cluster through the API, the test process starts another (owned by "a process"); both are
listed, looked into (tasks, variables, logs, placement), their tasks killed and restarted, and stopped, and nothing
is left running. No answer ever carries a cluster's key.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("jupyter_server", reason="jupyter_server is not installed")

import dtf_notebook.compat.v1 as tf  # noqa: E402
from dtf_notebook.notebook import cluster_files  # noqa: E402
from dtf_notebook.notebook.local_cluster import LocalCluster  # noqa: E402
from dtf_notebook.notebook.pids import pid_running  # noqa: E402
from dtf_notebook.notebook.placement_graph import show_placement  # noqa: E402
from tests.lab.server_driver import running_server  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.timeout(400)]


@pytest.fixture(scope="module")
def server(tmp_path_factory, runtime_dir):
    with running_server(tmp_path_factory.mktemp("server"), runtime_dir) as running:
        yield running
        keys = [r.key for r in cluster_files.list_clusters() if r.key]
        assert not any(key.encode() in body for key in keys for body in running.bodies)


def _wait_for(condition, what: str, within: float = 30.0):
    deadline = time.monotonic() + within
    while not (result := condition()):
        assert time.monotonic() < deadline, f"not {what} within {within} s"
        time.sleep(0.2)
    return result


def test_a_request_without_the_token_is_refused(server):
    status, _ = server.call("GET", "/dtf/clusters", token=False)
    assert status == 403
    status, _ = server.call("POST", "/dtf/clusters", {"ps": 1, "workers": 0}, token=False)
    assert status == 403
    assert cluster_files.list_clusters() == []


def test_bad_requests_name_what_is_wrong(server):
    status, answer = server.call("GET", "/dtf/clusters/nowhere")
    assert status == 404 and "No cluster 'nowhere'" in answer["message"]
    status, answer = server.call("POST", "/dtf/clusters", {"workers": -1})
    assert status == 400 and answer["message"] == "workers must be a whole number >= 0, not -1"
    status, answer = server.call("POST", "/dtf/clusters", {"gpus": 1})
    assert status == 400 and "Unknown cluster option(s) ['gpus']" in answer["message"]
    status, answer = server.call("POST", "/dtf/clusters", {"name": "../etc"})
    assert status == 400 and "Invalid cluster name '../etc'" in answer["message"]
    status, _ = server.call("GET", "/dtf/clusters/..%2Fetc")
    assert status == 404


def test_start_inspect_kill_restart_and_stop_a_server_cluster(server, runtime_dir):
    status, cluster = server.call("POST", "/dtf/clusters", {"ps": 1, "workers": 2, "name": "api-1"})
    assert status == 201, cluster
    assert cluster["name"] == "api-1" and cluster["owner"] == "server" and cluster["locked"] is True
    assert cluster["owner_pid"] == server.proc.pid
    assert [(t["job"], t["task"], t["status"]) for t in cluster["tasks"]] == [
        ("ps", 0, "running"),
        ("worker", 0, "running"),
        ("worker", 1, "running"),
    ]
    assert all(t["memory_bytes"] > 0 and t["variables"] == 0 for t in cluster["tasks"])
    assert "key" not in cluster and "log_dir" not in cluster
    pids = [t["pid"] for t in cluster["tasks"]]

    # The cluster file is the kernels' own: a client of this process finds it, key included, and uses it.
    record = cluster_files.find("api-1")
    assert record.owner_pid == cluster["owner_pid"] and record.key
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            weights = tf.Variable(tf.ones([3, 4]), name="weights")
        with tf.device("/job:worker/task:0"):
            loss = tf.reduce_sum(weights * 2.0, name="loss")
        with tf.Session(f"zmq://{record.spec['worker'][0]}") as sess:
            sess.run(weights.initializer)
            options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            meta = tf.RunMetadata()
            sess.run(loss, options=options, run_metadata=meta)
            show_placement(loss, session=sess, run_metadata=meta, widget=False)

    status, answer = server.call("GET", "/dtf/clusters/api-1/variables")
    assert status == 200
    rows = [(v["task"], v["name"], v["shape"], v["norm"]) for v in answer["variables"]]
    assert rows == [("/job:ps/replica:0/task:0", "weights", [3, 4], pytest.approx(12**0.5))]
    status, tasks = server.call("GET", "/dtf/clusters/api-1/tasks")
    assert [t["variables"] for t in tasks["tasks"]] == [1, 0, 0] and tasks["tasks"][0]["variable_bytes"] == 48

    status, placement = server.call("GET", "/dtf/clusters/api-1/placement")
    assert status == 200, placement
    assert placement["cluster"] == "api-1" and "/job:ps/replica:0/task:0" in {n["task"] for n in placement["nodes"]}
    assert placement["svg"] is None or placement["svg"].lstrip().startswith(("<svg", "<?xml"))

    status, log = server.call("GET", "/dtf/clusters/api-1/tasks/worker/1/log?lines=1")
    assert status == 200 and log["text"].startswith("ready worker 1 ") and log["pid"] == pids[2]

    status, answer = server.call("POST", "/dtf/clusters/api-1/tasks/worker/1/kill")
    assert status == 200 and answer["status"] == "killed"
    assert not pid_running(pids[2])
    status, cluster = server.call("GET", "/dtf/clusters/api-1")
    assert [t["status"] for t in cluster["tasks"]] == ["running", "running", "killed"]
    assert cluster["state"] == "degraded 2/3"
    status, answer = server.call("POST", "/dtf/clusters/api-1/tasks/worker/1/restart")
    assert status == 200 and answer["status"] == "running" and answer["pid"] != pids[2]
    status, cluster = server.call("GET", "/dtf/clusters/api-1")
    assert [t["status"] for t in cluster["tasks"]] == ["running"] * 3 and cluster["state"] == "running"
    status, answer = server.call("POST", "/dtf/clusters/api-1/tasks/worker/7/kill")
    assert status == 400 and "worker" in answer["message"]

    status, answer = server.call("POST", "/dtf/clusters", {"ps": 1, "workers": 0, "name": "api-1"})
    assert status == 409 and "already running" in answer["message"]

    status, answer = server.call("DELETE", "/dtf/clusters/api-1")
    assert status == 200 and answer == {"name": "api-1", "stopped": 3}
    assert server.call("GET", "/dtf/clusters")[1] == {"clusters": []}
    _wait_for(lambda: not any(pid_running(p) for p in [*pids, cluster["tasks"][2]["pid"]]), "every task gone", 10)
    assert list(runtime_dir.glob("dtf-cluster-*.json")) == []


def test_a_cluster_of_another_process_is_listed_killed_and_stopped_but_not_restarted(server):
    with LocalCluster(ps=1, workers=1, name="api-other") as cluster:
        status, listing = server.call("GET", "/dtf/clusters")
        assert status == 200
        [shown] = listing["clusters"]
        assert shown["name"] == "api-other" and shown["owner"] == "process" and shown["owner_pid"] != server.proc.pid
        assert [t["pid"] for t in shown["tasks"]] == [t.pid for t in cluster.tasks]

        status, answer = server.call("POST", "/dtf/clusters/api-other/tasks/worker/0/kill")
        assert status == 200
        _wait_for(lambda: cluster.task("worker", 0).status == "killed", "worker 0 killed")
        status, answer = server.call("POST", "/dtf/clusters/api-other/tasks/worker/0/restart")
        assert status == 409 and "restart it there" in answer["message"]
        cluster.restart("worker", 0)  # its owner can

        status, answer = server.call("DELETE", "/dtf/clusters/api-other")
        assert status == 200 and answer["stopped"] == 2
        assert not any(pid_running(t.pid) for t in cluster.tasks)
        assert cluster_files.list_clusters() == []
