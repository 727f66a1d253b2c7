"""Multi-process cluster tests: every task is its own OS process on loopback ports picked at run time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.distributed.cluster_util import SIMPLE_CLIENT, LocalCluster, run_client, task_env

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(jobs={"ps": 1, "worker": 2}, virtual_gpus=2) as c:
        yield c


def test_seed_000_pinning_across_tasks(cluster):
    with tf.device("/job:ps/task:0/cpu:0"):
        a = tf.constant(1.0, name="a")
    with tf.device("/job:worker/task:0/gpu:1"):
        b = tf.add(a, 2.0, name="b")
    c = tf.add(a, b, name="c")
    with tf.Session(cluster.target("worker", 1)) as sess:
        assert sess.run(c) == 4.0
        names = [d.name for d in sess.list_devices()]
        placed = {row["name"]: row["device"] for row in sess.placement(c)["nodes"]}
    assert "/job:worker/replica:0/task:0/device:GPU:1" in names
    assert "/job:ps/replica:0/task:0/device:CPU:0" in names
    assert placed["a"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert placed["b"] == "/job:worker/replica:0/task:0/device:GPU:1"
    # Unpinned: the master's default device, its task's GPU:0 ("machine B's GPU #0" in the seed).
    assert placed["c"] == "/job:worker/replica:0/task:1/device:GPU:0"


def test_grpc_alias_and_feeds_and_fetch_structures(cluster):
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.device("/job:ps/task:0"):
        w = tf.Variable([[1.0], [2.0]], name="w_feed")
    y = tf.matmul(x, w)
    target = cluster.target("worker", 0).replace("zmq://", "grpc://")
    with tf.Session(target) as sess:
        sess.run(w.initializer)
        out = sess.run({"y": y, "both": [y, x]}, {x: [[1.0, 1.0], [2.0, 0.0]]})
    np.testing.assert_allclose(out["y"], [[3.0], [2.0]])
    np.testing.assert_allclose(out["both"][1], [[1.0, 1.0], [2.0, 0.0]])


def test_seed_002_shared_variable_across_clients_and_reset(cluster):
    env = cluster.client_env()  # a client in its own process takes the locked cluster's key file
    assert run_client(SIMPLE_CLIENT, cluster.target("worker", 0), "init", env=env).strip() == "1.0"
    assert run_client(SIMPLE_CLIENT, cluster.target("worker", 1), env=env).strip() == "2.0"
    tf.Session.reset(cluster.target("worker", 0))
    x = tf.Variable(0.0, name="x")
    with tf.Session(cluster.target("worker", 1)) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value x"):
            sess.run(x)


def test_containers_and_reset_of_named_container(cluster):
    with tf.container("experiment"):
        v = tf.Variable(5.0, name="cv")
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        assert sess.run(v) == 5.0
    tf.Session.reset(cluster.target("worker", 1), ["experiment"])
    with tf.Session(cluster.target("worker", 0)) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(v)


# One client process: builds the shared counter's graph once and runs ``assign_add`` in 200 steps.
COUNTING_CLIENT = """
import sys
import dtf_notebook.compat.v1 as tf

with tf.device("/job:ps/task:0"):
    counter = tf.Variable(0.0, name="counter")
inc = tf.assign_add(counter, 1.0, use_locking=True)
with tf.Session(sys.argv[1]) as sess:
    for _ in range(int(sys.argv[2])):
        sess.run(inc)
print("done")
"""


def test_concurrent_client_processes_lose_no_update(cluster):
    with tf.device("/job:ps/task:0"):
        counter = tf.Variable(0.0, name="counter")
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(counter.initializer)
    clients, steps = 16, 200
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTING_CLIENT, cluster.target("worker", i % 2), str(steps)],
            env=cluster.client_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(clients)
    ]
    try:
        outcomes = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
    failed = [err[-2000:] for p, (_, err) in zip(procs, outcomes) if p.returncode != 0]
    assert not failed, failed[0]
    assert all(out.strip() == "done" for out, _ in outcomes)
    with tf.Session(cluster.target("worker", 1)) as sess:
        assert sess.run(counter) == clients * steps


def test_placement_error_names_node_and_devices(cluster):
    with tf.device("/job:worker/task:0/gpu:7"):
        bad = tf.constant(1.0, name="on_missing_gpu")
    with tf.Session(cluster.target("worker", 0)) as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="on_missing_gpu.*GPU:7"):
            sess.run(bad)


def test_session_to_missing_task_fails_in_bounded_time():
    from tests.distributed.cluster_util import free_port

    spec = {"worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    try:
        config = tf.ConfigProto(cluster_wait_secs=1.0)
        start = time.monotonic()
        with pytest.raises(tf.errors.UnavailableError, match="task:1"):
            with tf.Session(server.target, config=config) as sess:
                sess.run(tf.constant(1.0))
        assert time.monotonic() - start < 15
    finally:
        server.stop()


def _start_blocked_step(sess, fetch) -> tuple[threading.Thread, list[BaseException]]:
    """Runs ``fetch`` on a thread, where it is to block (on a dequeue); returns the thread and the list that gets
    the error the step ends with."""
    outcome: list[BaseException] = []

    def blocked_step():
        try:
            sess.run(fetch)
        except BaseException as e:  # noqa: BLE001 - checked by the caller
            outcome.append(e)

    runner = threading.Thread(target=blocked_step, daemon=True)
    runner.start()
    time.sleep(1.0)  # the step is now waiting on the dequeue
    assert runner.is_alive()
    return runner, outcome


def test_task_killed_mid_step_gives_unavailable_and_its_restart_aborted():
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as c:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v_dead")
            queue = tf.FIFOQueue(1, tf.float32, shared_name="mid_step")
        inc = tf.assign_add(v, 1.0)
        taken = queue.dequeue() + 1.0  # the step waits on the ps until the ps dies
        with tf.device("/job:worker/task:0"):
            worker_only = tf.constant(5.0) * 2.0
        with tf.Session(c.target("worker", 0)) as sess:
            sess.run(v.initializer)
            assert sess.run(inc) == 2.0
            runner, outcome = _start_blocked_step(sess, taken)
            c.kill("ps", 0)
            killed = time.monotonic()
            runner.join(30)
            assert not runner.is_alive() and len(outcome) == 1
            assert type(outcome[0]) is tf.errors.UnavailableError, outcome[0]
            assert time.monotonic() - killed < 10  # heartbeats, not a hang
            assert sess.run(worker_only) == 10.0  # the worker keeps serving
            c.restart("ps", 0)  # the same address, empty containers
            with pytest.raises(tf.errors.AbortedError) as raised:
                sess.run(inc)
            assert type(raised.value) is tf.errors.AbortedError
            assert sess.run(worker_only) == 10.0
        # A new session on the restarted cluster works again (state was lost with the old ps).
        with tf.Session(c.target("worker", 0)) as sess:
            sess.run(v.initializer)
            assert sess.run(inc) == 2.0


def test_step_on_the_event_loop_fails_when_its_ps_restarts_on_the_same_port():
    # The second run of a signature is served on the worker's event loop, whose first request to the ps is this
    # step's: the loop has never heard the ps's incarnation. The ps dies holding it (waiting on an empty queue) and
    # is back on its port at once, answering pings: the step fails within seconds instead of waiting forever.
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as c:
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(10, tf.float32, shapes=[], shared_name="restarting")
        push = queue.enqueue(1.0)
        with tf.device("/job:worker/task:0"):
            taken = queue.dequeue() + 1.0
        with tf.Session(c.target("worker", 0)) as sess:
            sess.run(push)
            assert sess.run(taken) == 2.0  # compiles the plan (on a thread)
            runner, outcome = _start_blocked_step(sess, taken)
            c.kill("ps", 0)
            c.restart("ps", 0)  # the same address, empty containers
            runner.join(30)
            assert not runner.is_alive() and len(outcome) == 1
            assert type(outcome[0]) is tf.errors.UnavailableError, outcome[0]
            assert c.spec["ps"][0] in outcome[0].message
        with tf.Session(c.target("worker", 0)) as sess:  # a new session on the restarted ps works
            sess.run(push)
            assert sess.run(taken) == 2.0


def test_server_stop_releases_port_for_restart():
    from tests.distributed.cluster_util import free_port

    spec = {"local": [f"127.0.0.1:{free_port()}"]}
    server = tf.train.Server(spec)
    server.stop()
    again = tf.train.Server(spec)
    try:
        with tf.Session(again.target) as sess:
            assert sess.run(tf.constant(3.0)) == 3.0
    finally:
        again.stop()


def test_hello_world_local_server():
    c = tf.constant("Hello, distributed TensorFlow!")
    server = tf.train.Server.create_local_server()
    try:
        with tf.Session(server.target) as sess:
            assert sess.run(c) == b"Hello, distributed TensorFlow!"
    finally:
        server.stop()


def test_device_filters_limit_which_tasks_a_session_contacts(capfd):
    from tests.distributed.cluster_util import free_port

    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    ps = tf.train.Server(spec, job_name="ps", task_index=0)
    worker = tf.train.Server(spec, job_name="worker", task_index=0)  # worker 1 never starts
    try:
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(2.0, name="filtered")
        doubled = v * 2.0
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"], log_device_placement=True)
        with tf.Session(worker.target, config=config) as sess:
            sess.run(v.initializer)
            assert sess.run(doubled) == 4.0
            names = {d.name for d in sess.list_devices()}
        assert not any("task:1" in n and "worker" in n for n in names)
        out = capfd.readouterr().out
        assert "filtered: (VariableV2): /job:ps/replica:0/task:0/device:CPU:0" in out
    finally:
        worker.stop()
        ps.stop()


def test_server_cli_reads_tf_config():
    import json
    import subprocess
    import sys

    from tests.distributed.cluster_util import free_port

    address = f"127.0.0.1:{free_port()}"
    env = task_env()
    env["TF_CONFIG"] = json.dumps({"cluster": {"chief": [address]}, "task": {"type": "chief", "index": 0}})
    proc = subprocess.Popen([sys.executable, "-m", "dtf_notebook.server"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.split()[:4] == ["ready", "chief", "0", address]
        assert int(line.split()[4]) == proc.pid
        with tf.Session(f"zmq://{address}") as sess:
            assert sess.run(tf.constant(5.0)) == 5.0
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def test_large_fetch_comes_straight_from_the_task_holding_it(cluster):
    with tf.device("/job:ps/task:0"):
        big = tf.Variable(tf.range(0.0, 600_000.0), name="big_fetch")  # 2.4 MB: above the direct-fetch size
    small = tf.reduce_sum(big[:3])
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(big.initializer)
        value, total = sess.run([big, small])
        again = sess.run(big)
    assert value.shape == (600_000,) and value[-1] == 599_999.0 and total == 3.0
    np.testing.assert_array_equal(value, again)
