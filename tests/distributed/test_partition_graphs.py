"""``RunOptions(output_partition_graphs=True)`` on a cluster: ``RunMetadata.partition_graphs`` holds each task's
partition as it ran, as TF's master returns them (one ``GraphDef`` per task, its ``_Send``/``_Recv`` pairs)."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf
from tests.distributed.cluster_util import LocalCluster, free_port

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def servers():
    spec = {job: [f"127.0.0.1:{free_port()}"] for job in ("ps", "worker")}
    made = {job: tf.train.Server(spec, job_name=job, task_index=0) for job in spec}
    yield made
    for server in made.values():
        server.stop()


def _task(device: str) -> str:
    return device.split("/device:")[0]


@pytest.mark.parametrize("traced", [False, True])
def test_each_task_s_partition_comes_back_with_its_sends_and_receives(servers, traced):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable([1.0, 2.0], name="v")
            grown = tf.assign_add(v, [1.0, 1.0], name="grown")
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(grown * 2.0, name="total")
        with tf.Session(servers["worker"].target) as sess:
            sess.run(v.initializer)
            plain, asked = tf.RunMetadata(), tf.RunMetadata()
            sess.run(total, run_metadata=plain)
            level = tf.RunOptions.FULL_TRACE if traced else tf.RunOptions.NO_TRACE
            options = tf.RunOptions(output_partition_graphs=not traced, trace_level=level)
            assert sess.run(total, options=options, run_metadata=asked) == 14.0
            placed = {row["name"]: row["device"] for row in sess.placement(total)["nodes"]}
            again = tf.RunMetadata()
            sess.run(total, options=tf.RunOptions(output_partition_graphs=True), run_metadata=again)
    assert len(plain.partition_graphs) == 0
    assert len(asked.partition_graphs) == 2
    by_task = {}
    for graph in asked.partition_graphs:
        (task,) = {_task(n.device) for n in graph.node}  # one task per partition
        by_task[task] = {n.name: n for n in graph.node}
    assert sorted(by_task) == ["/job:ps/replica:0/task:0", "/job:worker/replica:0/task:0"]
    ps, worker = by_task["/job:ps/replica:0/task:0"], by_task["/job:worker/replica:0/task:0"]
    assert {"v", "grown"} <= set(ps) and {"total", "mul"} <= set(worker)
    for nodes in (ps, worker):  # the user's nodes where the placement put them
        assert all(n.device == placed[name] for name, n in nodes.items() if name in placed)
    sends = [n for n in ps.values() if n.op == "_Send"]
    receives = [n for n in worker.values() if n.op == "_Recv"]
    assert len(sends) == 1 and len(receives) == 1
    assert any(name.startswith(receives[0].name) for name in worker["mul"].input)  # the product reads the receive
    # Asked again, the compiled signature answers again.
    assert len(again.partition_graphs) == 2


def test_a_step_a_client_runs_directly_on_its_task_still_reports_its_partition():
    """From a client process of its own, a signature of one partition on another task runs without the master once
    the client learned its route; a step asking for partition graphs goes through the master, which has them."""
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            counter = tf.Variable(0.0, name="counter")
            bump = tf.assign_add(counter, 1.0, name="bump")
        with tf.Session(cluster.target("worker", 0)) as sess:
            assert sess._backend._routes is not None  # (a remote session: it keeps routes)
            sess.run(counter.initializer)
            for _ in range(3):
                sess.run(bump)
            assert [r for r in sess._backend._routes.values() if r is not None]  # the next plain step goes direct
            metadata = tf.RunMetadata()
            assert sess.run(bump, options=tf.RunOptions(output_partition_graphs=True), run_metadata=metadata) == 4.0
    (graph,) = metadata.partition_graphs
    assert {"counter", "bump"} <= {n.name for n in graph.node}
    assert {_task(n.device) for n in graph.node} == {"/job:ps/replica:0/task:0"}
