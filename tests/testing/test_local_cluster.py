"""``tf.test.create_local_cluster``: in-process servers on free loopback ports that run a between-task graph, are
locked with a key of their own, release their ports when stopped and never keep a process alive; a TF1 program
using it gives the same values under real TF."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import keyring
from dtf_notebook.testing import stop_local_cluster

pytestmark = pytest.mark.cluster

_PROGRAM = textwrap.dedent(
    """
    import importlib, json, os, sys

    tf = importlib.import_module(os.environ["TF_MODULE"])
    tf.disable_eager_execution()
    workers, ps = tf.test.create_local_cluster(num_workers=2, num_ps=1)
    out = {
        "counts": [len(workers), len(ps)],
        "jobs": sorted(workers[0].server_def.cluster.job[i].name for i in range(2)),
        "tasks": [[s.server_def.job_name, s.server_def.task_index] for s in workers + ps],
        "hosts": sorted({t.split(":")[0] for j in workers[0].server_def.cluster.job for t in j.tasks.values()}),
    }
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            total = tf.Variable(0.0, name="total")
        steps = []
        for i in range(2):
            with tf.device("/job:worker/task:%d" % i):
                steps.append(total.assign_add(tf.constant(float(i + 1)) * 10.0))
        values = []
        with tf.Session(workers[0].target) as sess:
            sess.run(total.initializer)
            values.append(float(sess.run(steps[0])))
        with tf.Session(workers[1].target) as sess:  # the variable lives on the ps task, shared by both sessions
            values.append(float(sess.run(steps[1])))
            values.append(float(sess.run(total)))
    out["values"] = values
    print("RESULT " + json.dumps(out))
    sys.stdout.flush()
    """
)

# TF's create_local_cluster imports portpicker, which is not installed here: a stand-in with its one function.
_PORTPICKER = textwrap.dedent(
    """
    import socket

    def pick_unused_port():
        with socket.socket() as s:
            s.bind(("localhost", 0))
            return s.getsockname()[1]
    """
)


def _run(module: str, tmp_path) -> dict:
    (tmp_path / "portpicker.py").write_text(_PORTPICKER)
    script = tmp_path / "local_cluster_program.py"
    script.write_text(_PROGRAM)
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, TF_MODULE=module, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=path)
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-3000:]
    line = [x for x in result.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT ") :])


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_program_using_create_local_cluster_gives_tf_values(tmp_path):
    pytest.importorskip("tensorflow")
    ours = _run("dtf_notebook.compat.v1", tmp_path)
    theirs = _run("tensorflow.compat.v1", tmp_path)
    assert ours == theirs
    assert ours["values"] == [10.0, 30.0, 30.0]


def _bindable(address: str) -> bool:
    port = int(address.rsplit(":", 1)[1])
    with socket.socket() as s:
        # as a server binds (ZeroMQ too): connections of the stopped task may linger in TIME_WAIT
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            s.listen()
        except OSError:
            return False
    return True


@pytest.mark.slow
def test_servers_are_locked_run_across_tasks_and_release_their_ports():
    workers, ps = tf.test.create_local_cluster(2, 1)
    try:
        addresses = [s.address for s in workers + ps]
        assert all(a.startswith("localhost:") for a in addresses)
        assert all(s.cluster_key is not None for s in workers + ps)
        assert len({s.cluster_key for s in workers + ps}) == 1
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(1.0)
            with tf.device("/job:worker/task:1"):
                y = v * 5.0
            with tf.Session(workers[0].target) as sess:
                sess.run(v.initializer)
                assert sess.run(y) == 5.0
        # Another process without the key (another user of the machine) is refused; with it, it gets through.
        code = textwrap.dedent(
            f"""
            import dtf_notebook.compat.v1 as tf
            try:
                with tf.Session("{workers[0].target}") as sess:
                    print(sess.run(tf.constant(7)))
            except tf.errors.UnauthenticatedError:
                print("refused")
            """
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("DTF_CLUSTER_KEY")}
        for key, expected in ((None, "refused"), (workers[0].cluster_key.text, "7")):
            run_env = env if key is None else dict(env, DTF_CLUSTER_KEY=key)
            result = subprocess.run(
                [sys.executable, "-c", code], env=run_env, capture_output=True, text=True, timeout=120
            )
            assert result.stdout.strip() == expected, result.stderr[-3000:]
    finally:
        stop_local_cluster(workers + ps)
    assert all(_bindable(a) for a in addresses)
    assert keyring.client_key(addresses[0]) is None or "DTF_CLUSTER_KEY" in os.environ


def test_a_config_with_a_key_of_its_own_keeps_it():
    from dtf_notebook.distributed.cluster_key import ClusterKey

    own = ClusterKey.generate()
    workers, ps = tf.test.create_local_cluster(1, 1, worker_config=tf.ConfigProto(cluster_key=own.text))
    try:
        assert workers[0].cluster_key == own
        assert ps[0].cluster_key != own
    finally:
        stop_local_cluster(workers + ps)


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="at least one worker"):
        tf.test.create_local_cluster(0, 1)
    with pytest.raises(ValueError, match="num_ps"):
        tf.test.create_local_cluster(1, -1)


def test_servers_left_running_do_not_keep_the_process_alive():
    code = textwrap.dedent(
        """
        import dtf_notebook.compat.v1 as tf
        workers, ps = tf.test.create_local_cluster(1, 1)
        with tf.Session(workers[0].target) as sess:
            print(sess.run(tf.constant(3)))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "3"
