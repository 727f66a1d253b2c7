"""A 5M x 64 embedding split over 3 ps processes, trained from a worker session with sparse updates.

Each part lives on its own ps task (checked through the tasks' ``ListVariables`` service); a training step
moves only the looked-up rows; rows that were looked up change and the others stay as they were.
"""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.transport import Client
from tests.distributed.cluster_util import LocalCluster

pytestmark = pytest.mark.cluster

ROWS, DIM, BATCH, STEPS = 5_000_000, 64, 1024, 3
PART_ROWS = [1666667, 1666667, 1666666]  # 5M rows in 3 parts: the first ones take the extra rows


def _step_ops(fetches: list) -> set:
    """Every op a run of ``fetches`` executes: their data and control inputs, transitively."""
    seen: set = set()
    stack = [f.op if isinstance(f, tf.Tensor) else f for f in fetches]
    while stack:
        op = stack.pop()
        if op not in seen:
            seen.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    return seen


def _build(cluster_spec: tf.train.ClusterSpec):
    with tf.device(tf.train.replica_device_setter(cluster=cluster_spec)):
        embedding = tf.get_variable(
            "embedding", [ROWS, DIM], partitioner=tf.fixed_size_partitioner(3), initializer=tf.zeros_initializer()
        )
        ids = tf.placeholder(tf.int64, [None], name="ids")
        rows = tf.nn.embedding_lookup(embedding, ids)
        # Pulls every looked-up row towards all-ones: with this learning rate each step halves the distance.
        loss = tf.reduce_mean(tf.reduce_sum(tf.square(rows - 1.0), axis=1))
        train = tf.train.GradientDescentOptimizer(0.25 * BATCH).minimize(loss)
    return embedding, ids, rows, loss, train


def test_the_dense_table_is_never_built_or_moved():
    """What a training step runs, read from the graph: the parts' values never leave their ps."""
    spec = tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]})
    with tf.Graph().as_default():
        embedding, _, _, loss, train = _build(spec)
        step = _step_ops([train, loss])
    parts = list(embedding)
    assert [p.shape.as_list() for p in parts] == [[n, DIM] for n in PART_ROWS]
    assert [p.device for p in parts] == [f"/job:ps/task:{i}" for i in range(3)]
    # No op of the step has the full table's shape (nothing concatenates the parts).
    assert not any(t.shape.ndims == 2 and t.shape.as_list()[0] == ROWS for op in step for t in op.outputs)
    for part in parts:
        # The ops of the step that take a part (its reference, or its value through the `read` snapshot) run
        # on the part's ps, and either gather the looked-up rows or update the part in place.
        value = part.value()
        readers = [op for op in step if any(t is value or t.op is part.op for t in op.inputs) and op is not value.op]
        assert sorted(op.type for op in readers) == ["GatherV2", "ScatterSub"]
        assert all(op.device == part.device for op in readers)
        gather = next(op for op in readers if op.type == "GatherV2")
        assert gather.outputs[0].shape.as_list() == [None, DIM]
    # Whatever crosses between tasks is never as long as a part: ids, looked-up rows, their gradients, shapes.
    crossing = [t for op in step for t in op.inputs if t.op.device != op.device]
    assert crossing
    for t in crossing:
        assert t.shape.ndims is not None, t
        assert t.shape.ndims == 0 or t.shape[0].value is None or t.shape.num_elements() < BATCH, t


@pytest.mark.slow  # about 20-30 s on a busy machine, most of it starting four task processes
def test_partitioned_embedding_trains_on_three_ps_tasks():
    rng = np.random.default_rng(7)
    batch = rng.choice(ROWS, BATCH, replace=False).astype(np.int64)
    batch[:2] = [0, ROWS - 1]  # both ends of the id range
    untouched = np.setdiff1d(np.array([1, 2, 3, 2_500_000, ROWS - 2, ROWS - 3], np.int64), batch)
    with LocalCluster(jobs={"ps": 3, "worker": 1}) as cluster, tf.Graph().as_default():
        spec = tf.train.ClusterSpec(cluster.spec)
        embedding, ids, rows, loss, train = _build(spec)
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for _ in range(STEPS):
                losses.append(sess.run(loss, {ids: batch}))
                sess.run(train, {ids: batch})
            losses.append(sess.run(loss, {ids: batch}))
            touched_rows = sess.run(rows, {ids: batch[:8]})
            untouched_rows = sess.run(rows, {ids: untouched})
        client = Client(cluster.cluster_key)
        try:
            listed = [client.call(cluster.spec["ps"][i], "ListVariables", {}, timeout=30)[0] for i in range(3)]
            worker_vars = client.call(cluster.spec["worker"][0], "ListVariables", {}, timeout=30)[0]["variables"]
        finally:
            client.close()

    # Each step halves every looked-up row's distance to all-ones: the loss falls by 4x per step.
    np.testing.assert_allclose(losses, [DIM * 0.25**k for k in range(STEPS + 1)], rtol=1e-5)
    np.testing.assert_allclose(touched_rows, np.full((8, DIM), 1 - 0.5**STEPS), rtol=1e-6)
    np.testing.assert_array_equal(untouched_rows, np.zeros((len(untouched), DIM), np.float32))
    # Part i lives on ps task i, with its own rows; the worker holds none of the table.
    for i, reply in enumerate(listed):
        mine = {row["name"]: row for row in reply["variables"] if row["name"].startswith("embedding/")}
        assert set(mine) == {f"embedding/part_{i}"}, reply["task"]
        part = mine[f"embedding/part_{i}"]
        assert part["shape"] == [PART_ROWS[i], DIM] and part["initialized"]
        assert part["min"] == 0.0 and part["max"] == pytest.approx(1 - 0.5**STEPS)
    assert not [row for row in worker_vars if row["name"].startswith("embedding/")]
