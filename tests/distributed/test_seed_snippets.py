"""Seed 003's replication snippets, run on clusters of real task processes with virtual GPUs.

Each snippet is the seed's code with only the import line changed (``import dtf_notebook.compat.v1 as tf``)
and the ``...`` the slides leave out filled in (initial values, the input, the loss ``f``). Two slips in the
slides are fixed as they would have to be in TensorFlow 1.x as well: the in-graph snippet's pre-1.0
``tf.split(0, num_workers, input)`` is written ``tf.split(input, num_workers, 0)``, and its towers read
``inputs[i]`` (the slide's ``input[i]`` would be one row of the whole batch, which ``tf.matmul`` rejects).

Where things ran is read back from the cluster itself: the master's placement of each step, the step stats
of a traced run (per device), and each task's ``ListVariables`` service (which variables it holds).

Already covered elsewhere and not repeated here: ``tf.train.Saver(sharded=True)`` writing one shard per ps
task (tests/distributed/test_sharded_saver.py) and the snippets' graphs alone (tests/train/test_device_setter.py).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.transport import Client
from dtf_notebook.notebook.local_cluster import LocalCluster
from tests.distributed.cluster_util import task_env

pytestmark = pytest.mark.cluster

TRUE_W = np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)
TRUE_B = 0.25


@pytest.fixture(scope="module")
def two_workers(runtime_dir):
    with LocalCluster(ps=1, workers=2, virtual_gpus=1) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def three_ps_cluster(runtime_dir):
    with LocalCluster(ps=3, workers=1, virtual_gpus=1) as cluster:
        yield cluster


@pytest.fixture
def three_ps(three_ps_cluster):
    """The 3-ps cluster, its containers emptied after each test (the snippets reuse variable names)."""
    yield three_ps_cluster
    tf.Session.reset(three_ps_cluster.target("worker", 0))


def _ran_on(sess, fetch, feed_dict=None) -> dict[str, str]:
    """Runs ``fetch`` traced; the device each node ran on, by node name."""
    meta = tf.RunMetadata()
    sess.run(fetch, feed_dict, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    return {s.node_name: dev.device for dev in meta.step_stats.dev_stats for s in dev.node_stats}


def _holders(cluster: LocalCluster) -> dict[str, list[tuple[int, dict]]]:
    """Variable name -> [(ps task index, its ListVariables row)] from every ps task's own report."""
    held: dict[str, list[tuple[int, dict]]] = {}
    client = Client(cluster.cluster_key)  # a raw client of a locked cluster needs its key
    try:
        for i, address in enumerate(cluster.spec["ps"]):
            reply = client.call(address, "ListVariables", {}, timeout=30)[0]
            for row in reply["variables"]:
                held.setdefault(row["name"], []).append((i, row))
    finally:
        client.close()
    return held


def _data(seed: int, n: int = 64) -> tuple[np.ndarray, np.ndarray]:
    x = np.random.default_rng(seed).normal(size=(n, 4)).astype(np.float32)
    return x, x @ TRUE_W + TRUE_B


# ---- between-graph replication: one client process per worker ------------------------------------
# The seed shows worker 0's client; worker 1's is the same with task:1 (the slides' second snippet).
BETWEEN_GRAPH_SNIPPET = """
with tf.device("/job:ps/task:0/cpu:0"):
    W = tf.Variable(tf.zeros([4, 1]), name="W")
    b = tf.Variable(tf.zeros([1]), name="b")
with tf.device("/job:worker/task:0/gpu:0"):
    output = tf.matmul(input, W) + b
    loss = f(output)
"""

BETWEEN_GRAPH_CLIENT = """
import json, sys, time
import numpy as np
import dtf_notebook.compat.v1 as tf

target, task = sys.argv[1], int(sys.argv[2])
x_data, y_data = (np.array(json.loads(a), np.float32) for a in sys.argv[3:5])
input = tf.placeholder(tf.float32, [None, 4], name="input")
labels = tf.placeholder(tf.float32, [None, 1], name="labels")
f = lambda output: tf.reduce_mean(tf.square(output - labels))
%s
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
feed = {input: x_data, labels: y_data}
with tf.Session(target) as sess:
    if task == 0:
        sess.run([W.initializer, b.initializer])
    else:  # the other client waits for worker 0's client to initialise the shared W and b
        uninitialized = tf.report_uninitialized_variables()
        while sess.run(uninitialized).size:
            time.sleep(0.05)
    meta = tf.RunMetadata()
    first = sess.run(loss, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    ran_on = {s.node_name: dev.device for dev in meta.step_stats.dev_stats for s in dev.node_stats}
    for _ in range(60):
        sess.run(train_op, feed)
    print(json.dumps({"first": float(first), "last": float(sess.run(loss, feed)), "ran_on": ran_on}))
"""


def _between_graph_client(task: int) -> str:
    snippet = BETWEEN_GRAPH_SNIPPET.replace("/job:worker/task:0/", f"/job:worker/task:{task}/")
    return BETWEEN_GRAPH_CLIENT % snippet


def test_between_graph_replication_one_client_per_worker(two_workers):
    clients = []
    for task in (0, 1):
        x, y = _data(seed=task)
        args = [two_workers.target("worker", task), str(task), json.dumps(x.tolist()), json.dumps(y.tolist())]
        clients.append(
            subprocess.Popen(
                [sys.executable, "-c", _between_graph_client(task), *args],
                env=task_env(),  # a LocalCluster's clients find its key in its cluster file, as a user's would
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    reports = []
    try:
        for proc in clients:
            out, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err[-3000:]
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in clients:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for task, report in enumerate(reports):
        ran_on = report["ran_on"]
        # W and b live on the ps CPU; each client's model and loss run on its own worker's GPU.
        assert ran_on["W"] == ran_on["b"] == "/job:ps/replica:0/task:0/device:CPU:0"
        gpu = f"/job:worker/replica:0/task:{task}/device:GPU:0"
        assert ran_on["MatMul"] == ran_on["add"] == ran_on["Mean"] == gpu, ran_on
        assert report["last"] < 0.05 * report["first"], report
    tf.Session.reset(two_workers.target("worker", 0))


# ---- in-graph replication: one client, a tower per worker ----------------------------------------
def test_in_graph_replication_one_client_towers_on_each_worker(two_workers):
    num_workers = 2
    x_data, y_data = _data(seed=5)
    input = tf.placeholder(tf.float32, [None, 4], name="input")  # noqa: A001 - the seed's name
    labels = tf.placeholder(tf.float32, [None, 1], name="labels")

    def f(outputs):
        return tf.reduce_mean(tf.square(tf.concat(outputs, 0) - labels))

    # The seed's snippet (TF1's split argument order, towers on inputs[i]; see the module docstring).
    with tf.device("/job:ps/task:0/cpu:0"):
        W = tf.Variable(tf.zeros([4, 1]), name="W")
        b = tf.Variable(tf.zeros([1]), name="b")
    inputs = tf.split(input, num_workers, 0)
    outputs = []
    for i in range(num_workers):
        with tf.device("/job:worker/task:%d/gpu:0" % i):  # noqa: UP031 - the seed's code
            outputs.append(tf.matmul(inputs[i], W) + b)
    loss = f(outputs)

    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    feed = {input: x_data, labels: y_data}
    with tf.Session(two_workers.target("worker", 0)) as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, feed)
        expected = np.mean(np.square(y_data))  # W and b start at zero
        ran_on = _ran_on(sess, train_op, feed)
        for _ in range(60):
            sess.run(train_op, feed)
        last = sess.run(loss, feed)
    np.testing.assert_allclose(first, expected, rtol=1e-5)
    assert [op.name for op in (outputs[0].op.inputs[0].op, outputs[1].op.inputs[0].op)] == ["MatMul", "MatMul_1"]
    for i, tower in enumerate(["MatMul", "MatMul_1"]):
        assert ran_on[tower] == f"/job:worker/replica:0/task:{i}/device:GPU:0"
    assert ran_on["W"] == ran_on["b"] == "/job:ps/replica:0/task:0/device:CPU:0"
    assert last < 0.05 * first
    tf.Session.reset(two_workers.target("worker", 0))


# ---- variable placement on three ps tasks -------------------------------------------------------
def _train_network(cluster, weights_1, biases_1, weights_2, biases_2) -> list[float]:
    """The seeds' 784-100-10 network on worker 0's GPU over the placed variables: losses of a few steps."""
    rng = np.random.default_rng(3)
    x_data = rng.random((32, 784), dtype=np.float32)
    y_data = rng.integers(0, 10, 32)
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.placeholder(tf.int64, [None])
    with tf.device("/job:worker/task:0/gpu:0"):
        hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
        logits = tf.matmul(hidden, weights_2) + biases_2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    # Outside the GPU block: the update groups follow the variables to the ps tasks, which have no GPU (in TF
    # too, a group built inside the block would ask for /job:ps/task:N/device:GPU:0).
    train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    feed = {x: x_data, y: y_data}
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for _ in range(5):
            losses.append(float(sess.run(loss, feed)))
            sess.run(train_op, feed)
    return losses


def _placed(cluster, names: list[str]) -> dict[str, int]:
    held = _holders(cluster)
    assert all(len(held[n]) == 1 and held[n][0][1]["initialized"] for n in names), held
    return {n: held[n][0][0] for n in names}


NAMES = ["weights_1", "biases_1", "weights_2", "biases_2"]


def test_round_robin_variables(three_ps):
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100])
        weights_2 = tf.get_variable("weights_2", [100, 10])
        biases_2 = tf.get_variable("biases_2", [10])
    losses = _train_network(three_ps, weights_1, biases_1, weights_2, biases_2)
    assert losses[-1] < losses[0]
    assert _placed(three_ps, NAMES) == {"weights_1": 0, "biases_1": 1, "weights_2": 2, "biases_2": 0}


def test_greedy_load_balancing_variables(three_ps):
    greedy = tf.contrib.training.GreedyLoadBalancingStrategy(3, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=greedy)):
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100])
        weights_2 = tf.get_variable("weights_2", [100, 10])
        biases_2 = tf.get_variable("biases_2", [10])
    losses = _train_network(three_ps, weights_1, biases_1, weights_2, biases_2)
    assert losses[-1] < losses[0]
    # Each weight matrix on a ps task of its own; the small biases share the least loaded one.
    assert _placed(three_ps, NAMES) == {"weights_1": 0, "biases_1": 1, "weights_2": 2, "biases_2": 1}


def test_partitioned_embedding_is_declared_one_part_per_ps(three_ps):
    greedy = tf.contrib.training.GreedyLoadBalancingStrategy(3, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=greedy)):
        embedding = tf.get_variable("embedding", [1000000000, 20], partitioner=tf.fixed_size_partitioner(3))
    # 80 GB in all: the cluster declares the parts (each on its own ps) without allocating them.
    with tf.Session(three_ps.target("worker", 0)) as sess:
        uninitialized = sess.run(tf.report_uninitialized_variables())
        placement = {n["name"]: n["device"] for n in sess.placement(list(embedding))["nodes"]}
    assert sorted(uninitialized.tolist()) == [f"embedding/part_{i}".encode() for i in range(3)]
    held = _holders(three_ps)
    rows = [333333334, 333333333, 333333333]
    for i in range(3):
        ((task, row),) = held[f"embedding/part_{i}"]
        assert task == i and row["shape"] == [rows[i], 20] and not row["initialized"]
        assert placement[f"embedding/part_{i}"] == f"/job:ps/replica:0/task:{i}/device:CPU:0"


# ---- MonitoredTrainingSession(server.target, is_chief): each worker its own server and client -------
MONITORED_CLIENT = """
import json, sys
import numpy as np
import dtf_notebook.compat.v1 as tf

cluster, task_index, batches = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
true_w = np.array(json.loads(sys.argv[4]), np.float32)
x_data = np.random.default_rng(10 + task_index).normal(size=(batches, 8, 4)).astype(np.float32)
y_data = x_data @ true_w + 0.25

# Distributed code.
server = tf.train.Server(cluster, job_name="worker", task_index=task_index, config=tf.ConfigProto(virtual_gpus=1))
is_chief = task_index == 0

with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:%d" % task_index)):
    W = tf.get_variable("W", [4, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    global_step = tf.train.get_or_create_global_step()
    # This worker's batches, queued when its session starts; the dequeue after the last one raises
    # OutOfRangeError, which ends the seed's loop (as the end of an input pipeline does).
    queue = tf.FIFOQueue(len(x_data), [tf.float32, tf.float32], shapes=[[8, 4], [8, 1]])
    fill = queue.enqueue_many([x_data, y_data])
    with tf.control_dependencies([fill]):
        tf.add_to_collection(tf.GraphKeys.LOCAL_INIT_OP, queue.close())
    x, y = queue.dequeue()
    with tf.device("/gpu:0"):  # queues have CPU kernels only; the model runs on this worker's GPU
        loss = tf.reduce_mean(tf.square(tf.matmul(x, W) + b - y))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)

with tf.train.MonitoredTrainingSession(server.target, is_chief) as sess:
    while not sess.should_stop():
        sess.run(train_op)

# Like a worker's server.join(), this server stays up until the test has read every worker's result: a session
# needs every task of the cluster to answer when it is created.
print("trained", flush=True)
sys.stdin.readline()
with tf.Session(server.target) as sess:
    print(json.dumps({"step": int(sess.run(global_step)), "W": sess.run(W).ravel().tolist()}), flush=True)
sys.stdin.readline()
"""


def _tell(procs: list[subprocess.Popen], expect: str | None) -> list[str]:
    """Writes a line to every client, then reads one line from each (checked to start with ``expect``)."""
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    return [_read_line(proc, expect) for proc in procs] if expect is not None else []


def _read_line(proc: subprocess.Popen, expect: str) -> str:
    line = proc.stdout.readline()
    if not line.startswith(expect):
        proc.kill()
        raise AssertionError(f"client {proc.args[-3]} said {line!r}, not {expect!r}:\n{proc.stderr.read()[-3000:]}")
    return line


def test_monitored_training_session_with_only_target_and_is_chief():
    batches = 40
    cluster = LocalCluster(jobs={"ps": 1, "worker": 2})
    procs = []
    try:
        cluster.start(serve=["ps"])  # the workers' servers are started by the clients themselves
        for task_index in (1, 0):  # the non-chief first: it waits until the chief has initialised the model
            args = [json.dumps(cluster.spec), str(task_index), str(batches), json.dumps(TRUE_W.tolist())]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", MONITORED_CLIENT, *args],
                    env=cluster.client_env(),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for proc in procs:
            _read_line(proc, "trained")  # each ran its loop to the end of its input
        reports = [json.loads(line) for line in _tell(procs, "{")]
        _tell(procs, None)
        for proc in procs:
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err[-3000:]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        cluster.stop()
    # Both workers stepped the one global step on the ps, each through all of its batches; W learned TRUE_W.
    assert reports[0] == reports[1]
    assert batches < reports[0]["step"] <= 2 * batches
    np.testing.assert_allclose(reports[0]["W"], TRUE_W.ravel(), atol=0.05)
