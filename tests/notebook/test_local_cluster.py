"""LocalCluster: real task processes forked from the template on loopback ports, always stopped."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.local_process import free_port
from dtf_notebook.notebook import cluster_files, local_cluster
from dtf_notebook.notebook.local_cluster import ClusterStartError, LocalCluster
from dtf_notebook.notebook.pids import pid_running
from dtf_notebook.notebook.template_client import TemplateError, shared_template
from tests.distributed.cluster_util import SIMPLE_CLIENT, run_client, task_env

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster(runtime_dir):
    with LocalCluster(ps=1, workers=2, virtual_gpus=1, threads=2, name="shared") as c:
        log_dir = cluster_files.find("shared").log_dir
        assert os.path.isdir(log_dir)
        yield c
    assert not [t for t in c.tasks if pid_running(t.pid)]
    assert not os.path.exists(log_dir) and not os.path.exists(cluster_files.cluster_file("shared"))


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while any(pid_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(pid_running(p) for p in pids)


def test_start_answers_with_devices_and_writes_the_cluster_file(cluster, runtime_dir):
    rows = {(t.job, t.task): t for t in cluster.tasks}
    assert sorted(rows) == [("ps", 0), ("worker", 0), ("worker", 1)]
    assert all(t.status == "running" and pid_running(t.pid) for t in rows.values())
    assert rows["worker", 1].address == cluster.spec["worker"][1] and rows["ps", 0].address.startswith("127.0.0.1:")
    assert "/job:worker/replica:0/task:1/device:GPU:0" in rows["worker", 1].devices  # --virtual-gpus reached it
    assert not any("GPU" in d for d in rows["ps", 0].devices)
    assert cluster.cluster_spec.jobs == ["ps", "worker"]
    assert cluster.file == str(runtime_dir / "dtf-cluster-shared.json")
    record = cluster_files.find("shared")
    assert record.status == "running" and record.owner_pid == os.getpid()
    assert sorted(t["pid"] for t in record.tasks) == sorted(t.pid for t in rows.values())
    assert "ready worker 1" in cluster.logs("worker", 1)


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def test_tasks_are_forked_by_a_single_threaded_template(cluster):
    template = shared_template(start=False)
    assert template is not None and template.threads == 1
    assert {parent_of(t.pid) for t in cluster.tasks} == {template.pid}


def test_sessions_run_across_tasks_with_torch_threads(cluster):
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(np.ones((256, 256), np.float32), name="w")
    with tf.device("/job:worker/task:1/gpu:0"):
        y = tf.reduce_sum(tf.matmul(w, w))
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(w.initializer)
        assert sess.run(y) == 256.0**3


def test_seed_002_shared_variable_across_two_client_processes(cluster):
    assert run_client(SIMPLE_CLIENT, cluster.target("worker", 0), "init").strip() == "1.0"
    assert run_client(SIMPLE_CLIENT, cluster.target("worker", 1)).strip() == "2.0"
    tf.Session.reset(cluster.target("worker", 0))


def test_kill_and_restart_on_the_same_address(cluster):
    before = {(t.job, t.task): t for t in cluster.tasks}["worker", 1]
    cluster.kill("worker", 1)
    killed = {(t.job, t.task): t for t in cluster.tasks}["worker", 1]
    assert killed.status == "killed" and not pid_running(before.pid)
    row = cluster.restart("worker", 1)
    assert (row.status, row.address) == ("running", before.address) and row.pid != before.pid
    assert cluster_files.find("shared").tasks[2]["pid"] == row.pid
    with tf.device("/job:worker/task:1"):
        z = tf.constant(2.0) * 3.0
    with tf.Session(cluster.target("worker", 0)) as sess:
        assert sess.run(z) == 6.0


def test_bad_tasks_jobs_and_names_are_named(cluster):
    with pytest.raises(ValueError, match="pss"):
        cluster.target("pss", 0)
    with pytest.raises(ValueError, match="index 5 in job 'worker'"):
        cluster.kill("worker", 5)
    with pytest.raises(ValueError, match="Job 'worker' needs a count"):
        LocalCluster(jobs={"worker": -1})
    with pytest.raises(ValueError, match="at least one task"):
        LocalCluster(ps=0, workers=0)
    with pytest.raises(FileExistsError, match="'shared' is already running"):
        LocalCluster(jobs={"worker": 1}, name="shared").start()
    with pytest.raises(RuntimeError, match="already running"):
        cluster.start()
    for port in (0, -1, 65536, 99999, "2222", True):
        with pytest.raises(ValueError, match=f"ports for job 'ps' must be port numbers from 1 to 65535, not {port!r}"):
            LocalCluster(ps=1, workers=1, ports={"ps": [port]})
    for threads in (0, -2, 1.5):
        with pytest.raises(ValueError, match=f"threads must be an int >= 1 .*, not {threads!r}"):
            LocalCluster(ps=1, workers=1, threads=threads)


def test_repr_and_html_table(cluster):
    assert "'shared'" in repr(cluster) and "running" in repr(cluster)
    table = cluster._repr_html_()
    assert table.count("<tr>") == 4 and "GPU:0" in table and "<th>status</th>" in table


def test_failed_task_is_named_with_its_log_and_nothing_is_left(runtime_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        c = LocalCluster(ps=1, workers=2, ports={"worker": [port]}, name="broken")
        with pytest.raises(ClusterStartError, match=r"Task worker:0 of cluster 'broken' .* with code 1") as info:
            c.start()
    assert info.value.exit_code == 1 and (info.value.job, info.value.task) == ("worker", 0)
    assert "Could not bind" in str(info.value) and "Could not bind" in info.value.log
    assert gone([t.pid for t in c.tasks], 1.0)
    assert not c.running and not os.path.exists(cluster_files.cluster_file("broken"))


def test_a_task_that_fails_while_forked_leaves_its_traceback_in_its_log(runtime_dir, monkeypatch, tmp_path):
    # Becoming the task fails (an environment variable name the system refuses) before the server runs.
    monkeypatch.setattr(LocalCluster, "_task_env", lambda self, job, index: {"BAD=NAME": "1"})
    c = LocalCluster(jobs={"worker": 1}, name="unforked", start_method="fork")
    with pytest.raises(ClusterStartError, match=r"Task worker:0 .* exited before serving with code 70") as info:
        c.start()
    assert "Traceback (most recent call last):" in info.value.log and "ValueError" in info.value.log
    assert "(empty)" not in str(info.value) and not c.running
    # The server fails to set up (torch refuses 0 threads): a traceback and code 1, as from a plain process.
    template = shared_template()
    template.wait_ready(120)
    spec = f'{{"local": ["127.0.0.1:{free_port()}"]}}'
    log = tmp_path / "no-threads.log"
    pid = template.spawn(["--cluster", spec, "--job", "local", "--task", "0"], str(log), threads=0)
    assert template.wait(pid, 30) == 1
    assert "Traceback (most recent call last):" in log.read_text() and "set_num_threads" in log.read_text()


CONNECT = """
import sys
from dtf_notebook.notebook.local_cluster import LocalCluster

c = LocalCluster.connect(sys.argv[1])
print(c.target("worker", 0), sorted(t.status for t in c.tasks), bool(c.tasks[1].devices))
c.kill("worker", 0)
print(sorted(t.status for t in c.tasks))
c.stop()
"""


def test_connect_from_another_process_kills_and_stops_by_pid(runtime_dir):
    c = LocalCluster(ps=1, workers=1, name="other").start()
    try:
        pids = [t.pid for t in c.tasks]
        out = run_client(CONNECT, "other").splitlines()
        assert out[0] == f"{c.target('worker', 0)} ['running', 'running'] True"
        assert out[1] == "['killed', 'running']"
        assert gone(pids, 2.0)
        assert {t.job: t.status for t in c.tasks} == {"ps": "exited(0)", "worker": "killed"}
        assert not os.path.exists(cluster_files.cluster_file("other"))
    finally:
        c.stop()


def test_connect_to_a_missing_cluster_names_it(runtime_dir):
    with pytest.raises(cluster_files.ClusterNotFoundError, match="No cluster 'ghost'"):
        LocalCluster.connect("ghost")


ORPHAN = """
import time
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.template_client import shared_template

cluster = LocalCluster(ps=1, workers=1, name="orphan").start()
print(*[t.pid for t in cluster.tasks], shared_template().pid, flush=True)
time.sleep(120)
"""


def test_tasks_die_with_a_killed_parent(runtime_dir):
    proc = subprocess.Popen([sys.executable, "-c", ORPHAN], env=task_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert select.select([proc.stdout], [], [], 90)[0], "the child did not start its cluster"
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3 and all(pid_running(p) for p in pids)
        log_dir = cluster_files.find("orphan").log_dir
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
    assert gone(pids, 5.0), [p for p in pids if pid_running(p)]
    # The template removes the dead cluster's file and temporary logs on its way out: nobody has to list or clean.
    path = cluster_files.cluster_file("orphan")
    deadline = time.monotonic() + 10
    while (os.path.exists(path) or os.path.exists(log_dir)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(log_dir) and not os.path.exists(path)


def _stale_cluster(name: str, tmp_path) -> tuple[str, str]:
    """A cluster file as a killed kernel leaves it (owner and tasks gone), with its temporary log directory."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    log_dir = tmp_path / f"logs-{name}"
    log_dir.mkdir()
    (log_dir / "ps-0-1.log").write_text("ready ps 0\n")
    record = cluster_files.ClusterRecord(name=name, spec={"ps": ["127.0.0.1:1"]}, owner_pid=dead.pid)
    record.log_dir, record.temporary_logs = str(log_dir), True
    record.tasks = [{"job": "ps", "task": 0, "address": "127.0.0.1:1", "pid": dead.pid, "start_ticks": 0, "log": ""}]
    return cluster_files.claim(record).path, str(log_dir)


def test_start_removes_what_killed_kernels_left_and_is_not_stopped_by_what_it_cannot(
    runtime_dir, tmp_path, monkeypatch
):
    path, log_dir = _stale_cluster("left-by-kill", tmp_path)
    stuck, stuck_logs = _stale_cluster("stuck", tmp_path)
    real_unlink = os.unlink

    def unlink(p, *args, **kwargs):  # as in a directory we may not write to (permissions do not stop root)
        if str(p) == stuck:
            raise PermissionError(13, "Permission denied", p)
        return real_unlink(p, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    with LocalCluster(jobs={"worker": 1}, name="after-kill") as c:
        assert c.tasks[0].status == "running"
        assert not os.path.exists(path) and not os.path.exists(log_dir)
        assert os.path.exists(stuck) and os.path.exists(stuck_logs)
    monkeypatch.undo()
    assert cluster_files.remove_if_stale(stuck) and not os.path.exists(stuck_logs)


def test_falls_back_to_plain_processes_when_the_template_fails(runtime_dir, monkeypatch):
    def broken_template(start=True):
        raise TemplateError("Task template (pid 1) failed to start")

    monkeypatch.setattr(local_cluster, "shared_template", broken_template)
    c = LocalCluster(jobs={"worker": 1}, name="plain")
    with pytest.warns(RuntimeWarning, match="plain processes"):
        c.start()
    try:
        (task,) = c.tasks
        assert task.status == "running" and c.start_method == "subprocess"
        with tf.Session(c.target("worker", 0)) as sess:
            assert sess.run(tf.constant(4.0) + 1) == 5.0
    finally:
        c.stop()
    assert c.tasks[0].status == "exited(0)" and not c.running


def test_gpus_per_worker_uses_real_gpus_or_virtual_ones(monkeypatch):
    import torch

    c = LocalCluster(ps=1, workers=2, gpus_per_worker=2)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    assert c._task_env("ps", 0) == {"CUDA_VISIBLE_DEVICES": ""}
    assert [c._task_env("worker", i)["CUDA_VISIBLE_DEVICES"] for i in (0, 1)] == ["0,1", "2,0"]
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # one GPU: a task cannot be given two
    with pytest.raises(ValueError, match="gpus_per_worker=2 asks for more GPUs per task than the 1 this machine"):
        c.start()
    assert not c.running
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    c._log_dir = ""
    assert c._task_env("worker", 0) == {}
    assert c._task_args("worker", 1)[-2:] == ["--virtual-gpus", "2"] and "--virtual-gpus" not in c._task_args("ps", 0)
