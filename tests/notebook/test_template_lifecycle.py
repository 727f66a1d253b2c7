"""The task template runs only while this process has clusters of its own: ``%load_ext`` and ``connect`` start
none, and it is gone (by ``/proc``) after the last stop, whichever way the cluster was stopped."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys

import pytest

from dtf_notebook.notebook.local_cluster import ClusterStartError, LocalCluster, prewarm
from dtf_notebook.notebook.pids import pid_running
from dtf_notebook.notebook.template_client import shared_template
from tests.distributed.cluster_util import task_env

pytestmark = pytest.mark.cluster


def templates_of(parent: int) -> list[int]:
    """The pids of the task templates that are children of process ``parent``, read from ``/proc``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue  # gone while we looked
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == parent and fields[0] not in "ZX" and b"dtf_notebook.notebook.task_template" in argv:
            if b"serve" in argv:
                found.append(int(entry))
    return found


def template_pid() -> int:
    """The running template's pid, from the template client, and checked by ``/proc``."""
    template = shared_template(start=False)
    assert template is not None and template.alive
    assert templates_of(os.getpid()) == [template.pid]
    return template.pid


def assert_gone(pid: int) -> None:
    """The template is gone: the client has none, and ``/proc`` has no such process (not even a zombie: the
    client waited for it)."""
    assert shared_template(start=False) is None
    assert not os.path.exists(f"/proc/{pid}"), f"the task template (pid {pid}) is still there"
    assert templates_of(os.getpid()) == []


ELSEWHERE = """
import sys, time
from dtf_notebook.notebook.local_cluster import LocalCluster

cluster = LocalCluster(ps=1, workers=1, name=sys.argv[1]).start()
print("started", flush=True)
sys.stdin.readline()
cluster.stop()
"""


@pytest.fixture(scope="module")
def elsewhere(runtime_dir):
    """A cluster started by another process; stopped when the test module is done."""
    proc = subprocess.Popen(
        [sys.executable, "-c", ELSEWHERE, "life-elsewhere"],
        env=task_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert select.select([proc.stdout], [], [], 120)[0], "the other process did not start its cluster"
        assert proc.stdout.readline().strip() == "started"
        yield "life-elsewhere"
    finally:
        proc.stdin.close()  # it stops its cluster and exits
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        proc.stdout.close()


@pytest.fixture()
def no_template():
    """Starts each test with no template (a doctest's prewarm may have left one running)."""
    template = shared_template(start=False)
    if template is not None:
        template.close()
    assert templates_of(os.getpid()) == []


def test_load_ext_and_connect_start_no_template_and_the_last_stop_ends_it(elsewhere, no_template, capsys):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    import dtf_notebook.compat.v1 as tf

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "dtf_notebook")
    try:
        assert shared_template(start=False) is None and templates_of(os.getpid()) == []
        shell.run_line_magic("dtf_cluster", f"connect {elsewhere} --var far")
        with tf.Graph().as_default(), tf.Session(shell.user_ns["far"].target("worker", 0)) as sess:
            assert sess.run(tf.constant(2.0) * 3) == 6.0
        assert shared_template(start=False) is None and templates_of(os.getpid()) == []

        # Two clusters of our own share one template; it stays until the second one stops (by the magic).
        shell.run_line_magic("dtf_cluster", "start --ps 1 --workers 1 --name life-magic --var mine")
        pid = template_pid()
        with LocalCluster(jobs={"worker": 1}, name="life-with"):
            assert template_pid() == pid
        assert template_pid() == pid  # the magic's cluster still runs
        shell.run_line_magic("dtf_cluster", "stop life-magic")
        assert_gone(pid)
        assert shell.user_ns["far"].tasks[0].status == "running"  # the other process's cluster is not ours to stop
    finally:
        shell.run_line_magic("unload_ext", "dtf_notebook")
        capsys.readouterr()


def test_stop_and_context_exit_end_the_template(runtime_dir, no_template):
    cluster = LocalCluster(jobs={"worker": 1}, name="life-stop").start()
    pid = template_pid()
    cluster.stop()
    assert_gone(pid)

    with LocalCluster(jobs={"worker": 1}, name="life-context"):
        pid = template_pid()
        with pytest.raises(FileExistsError, match="life-context"):  # a start refused at once holds nothing
            LocalCluster(jobs={"worker": 1}, name="life-context").start()
    assert_gone(pid)

    with socket.socket() as taken:  # a start that fails (its task cannot bind) lets go of the template too
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        failing = LocalCluster(jobs={"worker": 1}, ports={"worker": [taken.getsockname()[1]]}, name="life-failed")
        with pytest.raises(ClusterStartError, match="Could not bind"):
            failing.start()
    assert templates_of(os.getpid()) == [] and shared_template(start=False) is None

    prewarm()  # started explicitly: it runs until a cluster that used it stops
    pid = template_pid()
    with LocalCluster(jobs={"worker": 1}, name="life-prewarmed"):
        assert template_pid() == pid
    assert_gone(pid)


def test_the_widgets_stop_button_ends_the_template(runtime_dir, no_template):
    pytest.importorskip("ipywidgets")
    from dtf_notebook.notebook.cluster_widget import ClusterWidget

    cluster = LocalCluster(jobs={"worker": 1}, name="life-widget").start()
    pid = template_pid()
    table = ClusterWidget(cluster, use_widgets=True)
    try:
        table.buttons[("stop",)].click()
        assert not cluster.running
        assert_gone(pid)
    finally:
        table.close()
        cluster.stop()


AT_EXIT = """
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.pids import pid_running
from dtf_notebook.notebook.template_client import shared_template

cluster = LocalCluster(jobs={"worker": 1}, name="life-exit").start()
print(shared_template(start=False).pid, flush=True)
"""


def test_the_template_ends_at_interpreter_exit(runtime_dir):
    out = subprocess.run(
        [sys.executable, "-c", AT_EXIT], env=task_env(), capture_output=True, text=True, timeout=120, check=True
    ).stdout
    pid = int(out.split()[-1])
    assert not pid_running(pid), f"the task template (pid {pid}) outlived its process"
