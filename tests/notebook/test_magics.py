"""``%dtf_cluster`` in an in-process IPython shell, the cluster table (widget and plain) and task logs."""

from __future__ import annotations

import _thread
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("IPython")

from IPython.core.error import UsageError  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from dtf_notebook.notebook.cluster_widget import ClusterWidget, format_bytes  # noqa: E402
from dtf_notebook.notebook.local_cluster import ClusterStartError, LocalCluster  # noqa: E402
from dtf_notebook.notebook.magics import _start_failure, parse_task  # noqa: E402
from dtf_notebook.notebook.pids import pid_running  # noqa: E402
from dtf_notebook.notebook.task_logs import LogFollower, LogStream  # noqa: E402

pytestmark = pytest.mark.cluster

COMMANDS = ("start", "status", "stop", "restart", "kill", "connect", "list", "spec", "logs")


@pytest.fixture(scope="module")
def shell(runtime_dir):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "dtf_notebook")
    yield ip
    ip.run_line_magic("dtf_cluster", "stop --all")
    ip.run_line_magic("unload_ext", "dtf_notebook")


@pytest.fixture(scope="module")
def cluster(shell):
    """The current cluster of the shell, started through the magic (module scope: one start for most tests)."""
    shell.run_line_magic("dtf_cluster", "start --ps 1 --workers 2 --name magic-main --var main")
    yield shell.user_ns["main"]
    if shell.user_ns["main"].running:
        shell.run_line_magic("dtf_cluster", "stop magic-main")


def cell(shell, capsys, line: str):
    """Runs a cell as a notebook would; returns (result, stdout, stderr)."""
    capsys.readouterr()
    result = shell.run_cell(line)
    out, err = capsys.readouterr()
    return result, out, err


def row(table: ClusterWidget, job: str, task: int) -> dict:
    return next(r for r in table.rows if (r["job"], r["task"]) == (job, task))


# ---- help and parsing ---------------------------------------------------------------------------
def test_help_is_short_and_each_command_has_its_options(shell, capsys):
    doc = shell.find_magic("dtf_cluster").__doc__
    # %dtf_cluster? is one screen: a line per command, and where the options are.
    assert len(doc.splitlines()) < 20 and max(len(line) for line in doc.splitlines()) <= 100
    for command in COMMANDS:
        assert re.search(rf"^  {command} +\w", doc, re.M), command
    assert "%dtf_cluster help COMMAND" in doc
    _, out, _ = cell(shell, capsys, "%dtf_cluster help")
    for option in ("--ps N", "--workers M", "--job NAME=N [NAME=N ...]", "--virtual-gpus K", "--gpus-per-worker G"):
        assert option in out
    assert "%dtf_cluster logs [--follow]" in out and "JOB:TASK" in out and "--all" in out and "--name NAME" in out
    assert "%dtf_cluster restart [--cluster NAME] JOB:TASK" in out
    _, out, _ = cell(shell, capsys, "%dtf_cluster help kill")
    assert "%dtf_cluster kill" in out and "%dtf_cluster start" not in out


def test_parse_task():
    assert parse_task(" ps:0 ") == ("ps", 0)
    for bad in ("worker", "worker:", ":1", "worker:-1", "worker:x", "a b:1"):
        with pytest.raises(UsageError, match="JOB:TASK"):
            parse_task(bad)


# ---- the commands -------------------------------------------------------------------------------
def test_start_binds_the_cluster_and_shows_its_table(shell, cluster, capsys):
    assert isinstance(cluster, LocalCluster) and cluster.running and cluster.name == "magic-main"
    assert sorted(cluster.spec) == ["ps", "worker"] and len(cluster.spec["worker"]) == 2
    assert shell.run_line_magic("dtf_cluster", "spec") == cluster.spec
    _, out, _ = cell(shell, capsys, "%dtf_cluster list")
    assert any(line.split()[:2] == ["*", "magic-main"] and "(this kernel)" in line for line in out.splitlines())
    table = shell.run_line_magic("dtf_cluster", "status")
    assert table is shell.run_line_magic("dtf_cluster", "status")  # one live table per cluster
    assert [(r["job"], r["task"], r["status"]) for r in table.rows] == [
        ("ps", 0, "running"),
        ("worker", 0, "running"),
        ("worker", 1, "running"),
    ]
    assert "magic-main" in repr(table) and "<table" in table._repr_html_()


def test_start_with_more_jobs_and_gpus(shell, cluster, capsys):
    result, out, err = cell(
        shell,
        capsys,
        "%dtf_cluster start --ps 0 --workers 1 --job chief=1 evaluator=1 --virtual-gpus 2 --name magic-gpus --var g",
    )
    assert result.success, err
    g = shell.user_ns["g"]
    try:
        assert g.jobs == {"worker": 1, "chief": 1, "evaluator": 1}  # --job takes several NAME=N
        assert "Started cluster 'magic-gpus' (worker=1 chief=1 evaluator=1)" in out
        devices = {d.split("/device:")[-1] for t in g.tasks for d in t.devices}
        assert {"CPU:0", "GPU:0", "GPU:1"} <= devices
        # The newest cluster is the current one; a name picks another.
        assert shell.run_line_magic("dtf_cluster", "spec") == g.spec
        assert shell.run_line_magic("dtf_cluster", "spec magic-main") == cluster.spec
    finally:
        _, out, _ = cell(shell, capsys, "%dtf_cluster stop magic-gpus")
    assert "Stopped cluster 'magic-gpus' (3 tasks)." in out and not g.running
    assert shell.run_line_magic("dtf_cluster", "spec") == cluster.spec  # back to the one still running


def test_start_is_locked_unless_no_auth_and_passes_file_roots(shell, cluster, capsys, tmp_path):
    import dtf_notebook.compat.v1 as tf
    from dtf_notebook.distributed.transport import Client
    from dtf_notebook.ops import io_ops

    assert cluster.locked and cluster.cluster_key is not None  # the default: a random key
    result, out, err = cell(
        shell,
        capsys,
        f"%dtf_cluster start --ps 1 --workers 0 --name magic-open --var o --no-auth --file-root {tmp_path}",
    )
    assert result.success, err
    opened = shell.user_ns["o"]
    try:
        assert not opened.locked and opened.cluster_key is None
        assert "Cluster 'magic-open' runs without a key (--no-auth): every process on this machine can" in err
        client = Client(dead_after=2.0)  # no key at all: an open cluster answers
        try:
            assert client.call(opened.spec["ps"][0], "GetStatus", {}, timeout=10)[0]["job"] == "ps"
        finally:
            client.close()
        with tf.Graph().as_default(), tf.device("/job:ps/task:0"):
            outside = io_ops.save_shard(str(tmp_path.parent / "outside"), [tf.constant(1.0)], ["w"], [""], 0, 1)
            with tf.Session(opened.target("ps", 0)) as sess:
                with pytest.raises(tf.errors.PermissionDeniedError, match="outside this task's file roots"):
                    sess.run(outside)
    finally:
        cell(shell, capsys, "%dtf_cluster stop magic-open")


def test_kill_restart_and_logs(shell, cluster, capsys):
    old_pid = row(shell.run_line_magic("dtf_cluster", "status"), "worker", 1)["pid"]
    _, out, _ = cell(shell, capsys, "%dtf_cluster kill worker:1")
    assert "Killed task worker:1 of cluster 'magic-main'" in out and not pid_running(old_pid)
    assert row(shell.run_line_magic("dtf_cluster", "status"), "worker", 1)["status"] == "killed"
    _, out, _ = cell(shell, capsys, "%dtf_cluster restart worker:1 --cluster magic-main")
    new = row(shell.run_line_magic("dtf_cluster", "status"), "worker", 1)
    assert new["status"] == "running" and new["pid"] != old_pid and f"pid {new['pid']}" in out
    _, out, _ = cell(shell, capsys, "%dtf_cluster logs worker:1")
    assert out.startswith(f"ready worker 1 {new['address']}")
    _, out, _ = cell(shell, capsys, "%dtf_cluster logs worker:1 --tail 0")
    assert "has written nothing" in out


def test_status_says_why_a_task_ended(shell, cluster, capsys):
    pid = row(shell.run_line_magic("dtf_cluster", "status"), "worker", 0)["pid"]
    os.kill(pid, signal.SIGTERM)  # the task shuts down on its own: an exit code, not a kill
    deadline = time.monotonic() + 10
    while cluster.tasks[1].status == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
    result, _, err = cell(shell, capsys, "%dtf_cluster status")
    assert result.success
    assert "Task worker:0 exited(" in err
    assert "last lines of its log:\nready worker 0" in err
    assert "%dtf_cluster restart worker:0" in err
    shell.run_line_magic("dtf_cluster", "restart worker:0")
    assert row(shell.run_line_magic("dtf_cluster", "status"), "worker", 0)["status"] == "running"


def test_logs_follow_streams_until_interrupted(shell, cluster, capsys):
    timer = threading.Timer(1.0, _thread.interrupt_main)  # what a kernel interrupt does
    timer.start()
    try:
        result, out, err = cell(shell, capsys, "%dtf_cluster logs ps:0 --follow")
    finally:
        timer.cancel()
    assert result.success, err
    assert out.startswith("ready ps 0") and out.endswith("(stopped following ps:0)\n")
    assert "Traceback" not in out + err


def test_connect_to_a_cluster_by_name_and_file(shell, cluster, capsys):
    with LocalCluster(ps=1, workers=1, name="magic-other") as other:
        _, out, _ = cell(shell, capsys, "%dtf_cluster connect magic-other --var other")
        assert "Connected to cluster 'magic-other' (ps=1 worker=1)" in out
        assert shell.user_ns["other"] is other  # a cluster of this process keeps its own object
        assert shell.run_line_magic("dtf_cluster", "spec") == other.spec
        shell.run_line_magic("dtf_cluster", f"connect {cluster.file}")
        assert shell.user_ns["cluster"] is cluster
        assert shell.run_line_magic("dtf_cluster", "spec") == cluster.spec
    assert shell.run_line_magic("dtf_cluster", "spec") == cluster.spec


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%dtf_cluster", "needs a command"),
        ("%dtf_cluster bogus", "No %dtf_cluster command 'bogus'"),
        ("%dtf_cluster kill worker0", "Expected a task as JOB:TASK (like worker:0), not 'worker0'"),
        ("%dtf_cluster kill worker:7", "No task with index 7 in job 'worker'"),
        ("%dtf_cluster restart chief:0", "chief"),
        ("%dtf_cluster logs ps:0 --cluster nope", "No cluster 'nope'"),
        ("%dtf_cluster connect nope", "No cluster 'nope'"),
        ("%dtf_cluster start --job chief", "--job takes JOB=N, not 'chief'"),
        ("%dtf_cluster start --job chief=x", "--job needs a whole number, not 'x'"),
        ("%dtf_cluster start --job chief=1 --job evaluator=x", "--job needs a whole number, not 'x'"),
        ("%dtf_cluster start --job chief=1 evaluator", "--job takes JOB=N, not 'evaluator'"),
        ("%dtf_cluster start --port ps=99999", "--port needs port numbers from 1 to 65535, not '99999'"),
        ("%dtf_cluster start --port ps=-1", "--port needs port numbers from 1 to 65535, not '-1'"),
        ("%dtf_cluster start --port ps=0", "--port needs port numbers from 1 to 65535, not '0'"),
        ("%dtf_cluster start --port worker=2222,70000", "not '70000'"),
        ("%dtf_cluster start --threads 0", "threads must be an int >= 1 (torch threads per task), not 0"),
        ("%dtf_cluster start --ps -1", "Job 'ps' needs a count of tasks >= 0"),
        ("%dtf_cluster start --var 1x", "--var needs a Python variable name"),
        ("%dtf_cluster start --name magic-main --workers 1", "already running in this kernel with other tasks"),
        ("%dtf_cluster start --name bad/name", "Invalid cluster name"),
        ("%dtf_cluster start --workers", "expected one argument"),
        ("%dtf_cluster stop --all magic-main", "not both"),
    ],
)
def test_mistakes_give_one_message_and_no_traceback(shell, cluster, capsys, line, message):
    result, out, err = cell(shell, capsys, line)
    assert isinstance(result.error_in_exec, UsageError)
    assert message in str(result.error_in_exec)
    assert err.startswith("UsageError: ") and "Traceback" not in out + err


def test_a_port_in_use_is_named(shell, cluster):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(UsageError, match=f"Port {port} for task ps:0 is in use by another process"):
            shell.run_line_magic("dtf_cluster", f"start --port ps={port}")


def test_a_task_that_fails_to_start_is_described_briefly():
    bind = "dtf_notebook.errors.UnavailableError: Could not bind 127.0.0.1:2222: Address already in use"
    e = ClusterStartError("Task ps:0 ... exited before serving with code 1.\nTraceback...", "ps", 0, 1, bind)
    assert _start_failure(e).startswith("Task ps:0 could not listen on its port: another process uses it.")
    log = "\n".join(f"line {i}" for i in range(20)) + "\nValueError: bad flag"
    e = ClusterStartError(
        "Task worker:1 of cluster 'x' exited before serving with code 2. Last lines:\n" + log, "worker", 1, 2, log
    )
    message = _start_failure(e).splitlines()
    assert message[0] == "Task worker:1 of cluster 'x' exited before serving with code 2. Last lines:"
    assert message[1:] == [f"line {i}" for i in range(13, 20)] + ["ValueError: bad flag"]


# ---- the table ----------------------------------------------------------------------------------
def test_widget_rows_buttons_and_refresh_thread(runtime_dir):
    pytest.importorskip("ipywidgets")
    with LocalCluster(ps=1, workers=1, name="magic-widget") as c:
        table = ClusterWidget(c, interval=0.2, use_widgets=True)
        try:
            assert table.widget is not None and table._thread.is_alive()
            # One output: the live grid plus a static copy of the table, for viewers without a kernel.
            bundle = table._live.bundle()
            assert "application/vnd.jupyter.widget-view+json" in bundle
            assert "running, 2 tasks" in bundle["text/html"] and "<td>ps</td>" in bundle["text/html"]
            header, first = table.grid.children[:9], table.grid.children[11:20]
            assert [h.value for h in header][:2] == ["<b>job</b>", "<b>task</b>"]
            assert "ps" in first[0].value and str(row(table, "ps", 0)["pid"]) in first[3].value
            old_pid = row(table, "worker", 0)["pid"]
            table.buttons[("worker", 0, "kill")].click()
            assert row(table, "worker", 0)["status"] == "killed" and table.message == "Killed task worker:0."
            assert table.buttons[("worker", 0, "kill")].disabled  # nothing left to kill
            table.buttons[("worker", 0, "restart")].click()
            assert row(table, "worker", 0)["status"] == "running" and row(table, "worker", 0)["pid"] != old_pid
            table.buttons[("stop",)].click()
            assert not c.running and table.message == "Stopped cluster 'magic-widget'."
            table._thread.join(timeout=5)
            assert not table._thread.is_alive()  # a stopped cluster needs no refreshing
            assert all(b.disabled for b in table.buttons.values())
            # Its output is now the final table alone: a saved notebook shows it stopped, no dead widget.
            assert table._live.finished and "application/vnd.jupyter.widget-view+json" not in table._live.bundle()
            assert "stopped, 2 tasks" in table._live.bundle()["text/plain"]
            assert "<td>stopped</td>" in table._live.bundle()["text/html"]
        finally:
            table.close()


def test_stop_updates_every_view_of_the_cluster(shell, capsys, runtime_dir, monkeypatch):
    pytest.importorskip("ipywidgets")
    monkeypatch.setattr("dtf_notebook.notebook.cluster_widget.widgets_available", lambda: True)  # as in a kernel
    shell.run_line_magic("dtf_cluster", "start --ps 1 --workers 1 --name magic-views --var views")
    c = shell.user_ns["views"]
    magic_table = shell.run_line_magic("dtf_cluster", "status")
    mine = ClusterWidget(c, interval=0.2, use_widgets=True)
    try:
        assert "running" in mine._caption_html.value and "running" in magic_table._caption_html.value
        shell.run_line_magic("dtf_cluster", "stop magic-views")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not mine._live.finished:
            time.sleep(0.05)
        for table in (magic_table, mine):
            assert "stopped" in table._caption_html.value, table._caption_html.value
            assert {r["status"] for r in table.rows} == {"stopped"}
            assert table._live.finished and all(b.disabled for b in table.buttons.values())
    finally:
        mine.close()


def test_plain_table_counts_variables_and_memory(runtime_dir):
    import dtf_notebook.compat.v1 as tf

    with LocalCluster(ps=1, workers=1, name="magic-vars") as c, tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.zeros([100, 10]), name="w")
            tf.Variable(tf.zeros([3], tf.int64), name="never_initialized")
        with tf.Session(c.target("worker", 0)) as sess:
            sess.run(w.initializer)
        table = ClusterWidget(c, use_widgets=False)
        ps = row(table, "ps", 0)
        assert (ps["variables"], ps["variable_bytes"]) == (1, 4000)  # a variable never initialized holds nothing
        assert ps["memory_bytes"] > 10 * 2**20
        assert "3.91 KiB" in repr(table) and "3.91 KiB" in table._repr_html_() and table._live is None
        c.kill("worker", 0)
        assert row(table, "worker", 0)["memory_bytes"] is None
    assert format_bytes(0) == "0 B" and format_bytes(5 * 2**40) == "5 TiB"


# ---- logs ---------------------------------------------------------------------------------------
def test_log_follower_notices_restarts_and_ends(runtime_dir):
    with LocalCluster(ps=1, workers=1, name="magic-follow") as c:
        follower = LogFollower(c, prefix=True)
        first = follower.poll().splitlines()
        assert sorted(line.split()[0] for line in first) == ["[ps:0]", "[worker:0]"]
        assert follower.poll() == ""
        info = c.restart("worker", 0)
        text = follower.poll()
        assert f"[worker:0 restarted, pid {info.pid}]\n[worker:0] ready worker 0" in text
        c.kill("ps", 0)
        assert follower.poll() == "[ps:0 killed]\n"


def test_stream_logs_prints_task_output_as_it_comes(shell, cluster, capsys):
    result, out, _ = cell(shell, capsys, "%dtf_cluster start --ps 1 --workers 1 --stream-logs --name magic-stream")
    try:
        assert result.success
        deadline = time.monotonic() + 10
        while "[worker:0] ready" not in out and time.monotonic() < deadline:
            time.sleep(0.1)
            out += capsys.readouterr().out
        assert "[ps:0] ready ps 0" in out and "[worker:0] ready worker 0" in out
    finally:
        shell.run_line_magic("dtf_cluster", "stop magic-stream")


def test_log_stream_widget_keeps_the_latest_lines(runtime_dir):
    pytest.importorskip("ipywidgets")
    with LocalCluster(ps=1, workers=1, name="magic-stream-widget") as c:
        stream = LogStream(c, use_widget=True)
        try:
            c.kill("worker", 0)
            deadline = time.monotonic() + 10
            while "[worker:0 killed]" not in stream.widget.value and time.monotonic() < deadline:
                time.sleep(0.05)
            assert "[ps:0] ready ps 0" in stream.widget.value and "[worker:0 killed]" in stream.widget.value
        finally:
            stream.close()


# ---- the extension ------------------------------------------------------------------------------
def test_importing_the_package_does_not_import_ipython():
    code = (
        "import sys, dtf_notebook, dtf_notebook.notebook; print(sorted({'IPython', 'ipywidgets'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"


def test_stop_all_then_no_cluster(shell, cluster, capsys):
    """Runs last: stops every cluster of the shell."""
    _, out, _ = cell(shell, capsys, "%dtf_cluster stop --all")
    assert "Stopped cluster 'magic-main' (3 tasks)." in out and not cluster.running
    pids = [t.pid for t in cluster.tasks]
    assert not any(pid_running(p) for p in pids)
    result, _, err = cell(shell, capsys, "%dtf_cluster status")
    assert isinstance(result.error_in_exec, UsageError)
    assert "No cluster is running in this kernel: start one with %dtf_cluster start" in err
    _, out, _ = cell(shell, capsys, "%dtf_cluster stop --all")
    assert "No clusters to stop." in out


def test_running_a_start_cell_again_reuses_the_cluster(shell, capsys, runtime_dir):
    shell.run_line_magic("dtf_cluster", "start --ps 1 --workers 1 --name magic-again --var again")
    first = shell.user_ns["again"]
    pids = sorted(t.pid for t in first.tasks)
    try:
        capsys.readouterr()
        _, out, _ = cell(shell, capsys, "%dtf_cluster start --ps 1 --workers 1 --name magic-again --var again")
        assert "already running in this kernel: reusing it" in out and "%dtf_cluster stop magic-again" in out
        assert shell.user_ns["again"] is first and sorted(t.pid for t in first.tasks) == pids
        with pytest.raises(UsageError, match=r"already running in this kernel with other tasks \(ps=1 worker=1\)"):
            shell.run_line_magic("dtf_cluster", "start --ps 1 --workers 2 --name magic-again")
    finally:
        shell.run_line_magic("dtf_cluster", "stop magic-again")
