"""``dtf-cluster list|stop|clean``: run as a command (subprocess) against real clusters, and in-process for usage."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dtf_notebook.notebook import cluster_files
from dtf_notebook.notebook.cli import main
from dtf_notebook.notebook.cluster_files import ClusterRecord
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.pids import pid_running
from tests.distributed.cluster_util import task_env

pytestmark = pytest.mark.cluster


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    return tmp_path


def dtf_cluster(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "dtf_notebook.notebook.cli", *args]
    return subprocess.run(command, env=task_env(), capture_output=True, text=True, timeout=120)


def test_list_and_stop_a_running_cluster_from_the_command_line():
    cluster = LocalCluster(ps=1, workers=2, name="cli-demo").start()
    try:
        listing = dtf_cluster("list")
        assert listing.returncode == 0, listing.stderr
        header, row = listing.stdout.splitlines()
        assert header.split() == ["NAME", "TASKS", "OWNER", "PID", "AGE", "STATUS"]
        assert row.split()[:4] == ["cli-demo", "ps=1", "worker=2", str(cluster_files.find("cli-demo").owner_pid)]
        assert row.split()[-1] == "running"
        stopped = dtf_cluster("stop", "cli-demo")
        assert (stopped.returncode, stopped.stdout) == (0, "Stopped cluster 'cli-demo' (3 tasks).\n")
        assert not any(pid_running(t.pid) for t in cluster.tasks)
        assert cluster_files.list_clusters() == []
    finally:
        cluster.stop()


def test_stopping_an_unknown_cluster_is_a_plain_error():
    result = dtf_cluster("stop", "ghost")
    assert result.returncode == 1
    assert result.stderr.startswith("dtf-cluster: No cluster 'ghost'") and "Traceback" not in result.stderr


def test_empty_listing_json_and_stop_all(capsys):
    assert main(["list"]) == 0
    assert capsys.readouterr().out.startswith("No running clusters")
    with LocalCluster(jobs={"worker": 1}, name="a"):
        assert main(["list", "--json"]) == 0
        (record,) = json.loads(capsys.readouterr().out)
        assert (record["name"], record["state"], record["live_tasks"]) == ("a", "running", 1)
        # Locked by default, and a listing never shows the key (only whether there is one).
        assert record["cluster_key"] is True and "key" not in record
        assert "dtfkey1:" not in json.dumps(record)
        assert main(["stop", "--all"]) == 0
        assert capsys.readouterr().out == "Stopped cluster 'a' (1 task).\n"


def test_clean_removes_only_stale_files(capsys, runtime_dir):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = cluster_files.claim(ClusterRecord(name="old", spec={}))
    cluster_files.update(ClusterRecord(name="old", spec={}, owner_pid=gone.pid, path=stale.path))
    live = cluster_files.claim(ClusterRecord(name="mine", spec={}))
    assert main(["clean"]) == 0
    assert capsys.readouterr().out == f"Removed {stale.path}\n"
    assert cluster_files.find("mine").path == live.path


def test_list_removes_stale_files_and_their_temporary_logs(capsys, runtime_dir):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    logs = runtime_dir / "logs"
    logs.mkdir()
    stale = ClusterRecord(name="killed", spec={}, owner_pid=gone.pid, log_dir=str(logs), temporary_logs=True)
    path = cluster_files.claim(stale).path
    assert main(["list"]) == 0
    assert capsys.readouterr().out.startswith("No running clusters")
    assert not logs.exists() and not cluster_files.list_clusters(clean=False)
    assert not (runtime_dir / path).exists()


@pytest.mark.parametrize("argv", [[], ["stop"], ["stop", "x", "--all"], ["frobnicate"]])
def test_usage_errors_exit_with_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2 and "usage: dtf-cluster" in capsys.readouterr().err


def test_start_runs_a_locked_cluster_until_interrupted(tmp_path):
    import signal

    import dtf_notebook.compat.v1 as tf

    command = [sys.executable, "-m", "dtf_notebook.notebook.cli", "start", "--ps", "1", "--workers", "1"]
    proc = subprocess.Popen(
        [*command, "--name", "cli-start", "--file-root", str(tmp_path)],
        env=task_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert first == "Cluster 'cli-start' is running, locked with a key in its cluster file:\n", proc.stderr.read()
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines[-1].startswith("Connect from a notebook with `%dtf_cluster connect cli-start`")
        cluster = LocalCluster.connect("cli-start")  # another process of the same user: the key comes along
        assert cluster.locked and cluster.cluster_key is not None
        with tf.Graph().as_default(), tf.Session(cluster.target("worker", 0)) as sess:
            assert sess.run(tf.constant(20.0) + 1.0) == 21.0
        pids = [t.pid for t in cluster.tasks]
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert out.strip().endswith("Stopped cluster 'cli-start'.")
        assert not any(pid_running(pid) for pid in pids) and cluster_files.list_clusters() == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
