"""Cluster files: written atomically, found by name or path, removed on stop, stale ones cleaned (no processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from dtf_notebook.notebook import cluster_files
from dtf_notebook.notebook.cluster_files import ClusterNotFoundError, ClusterRecord
from dtf_notebook.notebook.pids import pid_running, start_ticks, stop_pids


@pytest.fixture(autouse=True)
def runtime_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    return tmp_path / "runtime"


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def record(name: str = "", **kw) -> ClusterRecord:
    return ClusterRecord(name=name, spec={"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}, **kw)


def test_claim_writes_a_private_file_in_the_runtime_dir_without_the_key(runtime_dir):
    r = cluster_files.claim(record("exp", cluster_key=True, log_dir="/tmp/logs"))
    assert r.path == str(runtime_dir / "dtf-cluster-exp.json")
    assert os.stat(r.path).st_mode & 0o777 == 0o600
    with open(r.path) as f:
        data = json.load(f)
    assert data["name"] == "exp" and data["spec"]["worker"] == ["127.0.0.1:2"]
    assert data["owner_pid"] == os.getpid() and data["cluster_key"] is True and data["log_dir"] == "/tmp/logs"
    assert "path" not in data
    assert [f for f in os.listdir(runtime_dir) if f.startswith(".")] == []  # no temporary file left


def test_auto_names_skip_live_clusters_and_reuse_stale_ones():
    first, second = cluster_files.claim(record()), cluster_files.claim(record())
    assert (first.name, second.name) == ("local-1", "local-2")
    cluster_files.update(ClusterRecord(name="local-1", spec={}, owner_pid=dead_pid(), path=first.path))
    assert cluster_files.claim(record()).name == "local-1"  # its owner is gone: the name is free again


def test_a_live_name_cannot_be_claimed_twice():
    cluster_files.claim(record("exp"))
    with pytest.raises(FileExistsError, match="'exp' is already running.*owner pid"):
        cluster_files.claim(record("exp"))


def test_update_and_find_by_name_or_path():
    r = cluster_files.claim(record("exp"))
    r.status, r.tasks = "running", [{"job": "ps", "task": 0, "address": "127.0.0.1:1", "pid": os.getpid()}]
    cluster_files.update(r)
    for key in ("exp", r.path):
        found = cluster_files.find(key)
        assert (found.status, found.tasks[0]["pid"], found.path) == ("running", os.getpid(), r.path)


def test_find_missing_cluster_names_the_running_ones():
    cluster_files.claim(record("alive"))
    with pytest.raises(ClusterNotFoundError, match="No cluster 'nope'.*running clusters: 'alive'"):
        cluster_files.find("nope")


@pytest.mark.parametrize("bad", ["", "../x", "a b", "-x", "x" * 65])
def test_bad_names_are_refused(bad):
    with pytest.raises(ValueError, match="Invalid cluster name"):
        cluster_files.cluster_file(bad)


def test_list_keeps_live_clusters_and_removes_stale_and_corrupt_files(runtime_dir):
    live = cluster_files.claim(record("live"))
    orphan = cluster_files.claim(record("orphan"))
    cluster_files.update(
        ClusterRecord(
            name="orphan",
            spec={},
            owner_pid=dead_pid(),
            tasks=[{"job": "ps", "task": 0, "pid": os.getpid(), "start_ticks": start_ticks(os.getpid())}],
            path=orphan.path,
        )
    )
    stale = cluster_files.claim(record("stale"))
    cluster_files.update(ClusterRecord(name="stale", spec={}, owner_pid=dead_pid(), path=stale.path))
    (runtime_dir / "dtf-cluster-corrupt.json").write_text("{not json")
    assert [r.name for r in cluster_files.list_clusters(clean=False)] == ["live", "orphan"]
    assert os.path.exists(stale.path)
    assert {r.name: r.state() for r in cluster_files.list_clusters()} == {"live": "starting", "orphan": "orphaned"}
    assert not os.path.exists(stale.path) and not (runtime_dir / "dtf-cluster-corrupt.json").exists()
    assert os.path.exists(live.path)


def test_clean_stale_reports_removed_files_and_remove_is_idempotent(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    stale = cluster_files.claim(record("stale"))
    kept = cluster_files.claim(record("kept"))
    for r, temporary in ((stale, True), (kept, False)):
        dead = ClusterRecord(name=r.name, spec={}, owner_pid=dead_pid(), path=r.path, log_dir=str(logs))
        dead.temporary_logs = temporary
        cluster_files.update(dead)
    assert cluster_files.clean_stale() == [kept.path, stale.path]
    assert not logs.exists()  # the stale cluster's temporary log directory went with its file
    assert cluster_files.clean_stale() == []
    cluster_files.remove("stale")  # already gone: fine


def test_state_of_running_and_degraded_clusters():
    me = {"pid": os.getpid(), "start_ticks": start_ticks(os.getpid())}
    r = record("x", status="running", tasks=[me, me])
    assert r.state() == "running"
    r.tasks.append({"pid": dead_pid(), "start_ticks": None})
    assert r.state() == "degraded 2/3"


def test_pids_are_checked_against_their_start_time():
    me = os.getpid()
    assert pid_running(me, start_ticks(me)) and not pid_running(me, start_ticks(me) + 1)
    assert not pid_running(dead_pid()) and not pid_running(0)


def test_stop_pids_escalates_to_sigkill():
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); "
    stubborn += "time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "up\n"
    assert stop_pids([(proc.pid, start_ticks(proc.pid))], grace=0.3) == []
    assert proc.wait(5) == -9
    proc.stdout.close()


def stale_file(name: str, log_dir: str = "") -> ClusterRecord:
    """A cluster file as a killed kernel leaves it: owner gone, written a while ago."""
    r = cluster_files.claim(record(name))
    dead = ClusterRecord(name=name, spec={}, owner_pid=dead_pid(), path=r.path, log_dir=log_dir, temporary_logs=True)
    cluster_files.update(dead)
    os.utime(r.path, (1e9, 1e9))
    return dead


@pytest.fixture
def unremovable(monkeypatch):
    """Makes unlinking the paths added to the returned set fail, as in a directory we may not write to (tests may run
    as root, whom permissions do not stop)."""
    paths, real_unlink = set(), os.unlink

    def unlink(path, *args, **kwargs):
        if str(path) in paths:
            raise PermissionError(13, "Permission denied", str(path))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    return paths


def test_a_stale_file_that_cannot_be_removed_is_left_with_a_warning(unremovable, tmp_path, caplog):
    logs = tmp_path / "logs"
    logs.mkdir()
    stuck, gone = stale_file("stuck", str(logs)), stale_file("gone")
    unremovable.add(stuck.path)
    with caplog.at_level("WARNING", logger=cluster_files.__name__):
        assert cluster_files.clean_stale() == [gone.path]
        assert cluster_files.remove_if_stale(stuck.path) is False
        assert cluster_files.list_clusters() == []
    assert os.path.exists(stuck.path) and logs.exists()  # its logs stay with the file that names them
    assert f"Could not remove the stale cluster file {stuck.path}: Permission denied" in caplog.text


def test_claim_skips_or_names_a_stale_file_that_cannot_be_removed(unremovable):
    stuck = stale_file("local-1")
    unremovable.add(stuck.path)
    assert cluster_files.claim(record()).name == "local-2"  # an automatic name goes on to the next one
    with pytest.raises(FileExistsError, match="'local-1' left a stale file that cannot be removed.*Permission denied"):
        cluster_files.claim(record("local-1"))
    unremovable.clear()
    assert cluster_files.claim(record("local-1")).owner_pid == os.getpid()  # removable again: replaced


def test_a_log_directory_that_cannot_be_removed_is_reported(tmp_path, monkeypatch, caplog):
    logs = tmp_path / "logs"
    logs.mkdir()
    stale = stale_file("stale", str(logs))
    monkeypatch.setattr(cluster_files.shutil, "rmtree", lambda path, ignore_errors=False: None)  # removes nothing
    with caplog.at_level("WARNING", logger=cluster_files.__name__):
        assert cluster_files.clean_stale() == [stale.path]
    assert f"Could not remove all of the temporary log directory {logs}" in caplog.text


def test_a_stale_file_replaced_after_it_was_read_is_kept():
    stale = stale_file("local-1")
    old, file_id = cluster_files._load(stale.path)
    assert old.is_stale()
    os.unlink(stale.path)  # another kernel cleaned it and took the name meanwhile
    live = cluster_files.claim(record())
    assert live.path == stale.path
    assert cluster_files._remove_stale(stale.path, old, file_id) is False
    assert cluster_files.find("local-1").owner_pid == os.getpid()
