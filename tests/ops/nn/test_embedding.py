"""Tests of ``tf.nn.embedding_lookup``: one table, max_norm, placement, partitioned tables."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework.indexed_slices import IndexedSlices
from tests.ops.op_check import check_forward, check_gradient, rand


# ---- embedding_lookup ------------------------------------------------------------------------------
def test_embedding_lookup_values_and_gradient():
    table = rand(5, 3, seed=40)
    ids = np.array([[4, 0], [2, 4]], dtype=np.int64)
    check_forward(lambda p, i: tf.nn.embedding_lookup(p, i), lambda p, i: p[i], [table, ids])
    check_forward(lambda p, i: tf.nn.embedding_lookup([p], i), lambda p, i: p[i], [table, ids.astype(np.int32)])
    check_gradient(lambda p, i: tf.nn.embedding_lookup(p, i), [table, ids])


def test_embedding_lookup_max_norm():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]], np.float32)
    ids = np.array([0, 1, 2], np.int32)

    def reference(p, i):
        rows = p[i]
        norms = np.linalg.norm(rows, axis=-1, keepdims=True)
        return (rows * 1.0 / np.maximum(norms, 1.0)).astype(np.float32)

    check_forward(lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=1.0), reference, [table, ids])
    check_gradient(lambda p, i: tf.nn.embedding_lookup(p, i, max_norm=1.0), [table + 0.1, ids])


def test_embedding_lookup_on_a_variable_is_colocated_and_sparse():
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            table = tf.Variable(rand(6, 2, seed=41), name="table")
        with tf.device("/job:worker/task:0"):
            rows = tf.nn.embedding_lookup(table, tf.constant([1, 5, 1]))
        gather = rows.op.inputs[0].op
        assert gather.name == "embedding_lookup"
        assert gather.device == "/job:ps/task:0"
        assert gather.get_attr("_class") == ["loc:@table"]
        assert rows.op.type == "Identity" and rows.device == "/job:worker/task:0"
    with tf.Graph().as_default():
        table = tf.Variable(rand(6, 2, seed=41), name="table")
        rows = tf.nn.embedding_lookup([table], tf.constant([1, 5, 1]))
        (grad,) = tf.gradients(tf.reduce_sum(rows), table)
        assert isinstance(grad, IndexedSlices)
        with tf.Session() as sess:
            sess.run(table.initializer)
            dense = sess.run(tf.convert_to_tensor(grad))
    expected = np.zeros((6, 2), np.float32)
    expected[1], expected[5] = 2.0, 1.0
    np.testing.assert_array_equal(dense, expected)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_partitioned(strategy):
    full = rand(10, 3, seed=42)
    if strategy == "mod":
        parts = [full[k::3] for k in range(3)]  # id i is row i // 3 of partition i % 3
    else:
        parts = [full[:4], full[4:7], full[7:]]  # 10 ids over 3 partitions: 4, 3, 3 consecutive ids
    ids = np.array([[9, 0, 4], [3, 3, 7]], dtype=np.int64)
    build = lambda a, b, c, i: tf.nn.embedding_lookup([a, b, c], i, partition_strategy=strategy)  # noqa: E731
    check_forward(build, lambda a, b, c, i: full[i], [*parts, ids])
    check_gradient(build, [*parts, ids])
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            first = tf.Variable(parts[0], name="first")
        with tf.device("/job:ps/task:1"):
            second = tf.Variable(np.concatenate(parts[1:]) if strategy == "div" else parts[1], name="second")
        rows = tf.nn.embedding_lookup([first, second], tf.constant([1, 2]), partition_strategy=strategy)
        grads = tf.gradients(tf.reduce_sum(rows), [first, second])
        assert all(isinstance(g, IndexedSlices) for g in grads)
        assert {g.values.op.inputs[0].op.device for g in grads} <= {"/job:ps/task:0", "/job:ps/task:1", ""}
        ops = tf.get_default_graph().get_operations()
        gathers = [op for op in ops if op.type == "GatherV2" and not op.name.startswith("gradients/")]
        assert sorted(op.device for op in gathers) == ["/job:ps/task:0", "/job:ps/task:1"]


def test_embedding_lookup_errors():
    with tf.Graph().as_default():
        table = tf.zeros([4, 2])
        with pytest.raises(ValueError, match="Unrecognized partition strategy"):
            tf.nn.embedding_lookup(table, [0], partition_strategy="hash")
        with pytest.raises(ValueError, match="Need at least one param"):
            tf.nn.embedding_lookup([], [0])
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.nn.embedding_lookup(table, [0.0])
        with pytest.raises(ValueError, match="'div' strategy needs at least 3 rows"):
            tf.nn.embedding_lookup([tf.zeros([1, 2]), tf.zeros([1, 2]), tf.zeros([0, 2])], [0], "div")
