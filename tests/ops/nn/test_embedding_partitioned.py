"""``embedding_lookup`` over a sharded table: TF's partition/gather/stitch scheme, per-shard sparse gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework.indexed_slices import IndexedSlices
from tests.ops.op_check import rand

FULL = rand(11, 3, seed=50)  # 11 rows over 3 or 4 shards: uneven parts
IDS = np.array([[10, 0, 4], [3, 3, 7], [5, 9, 1]], dtype=np.int64)


def mod_rows(full: np.ndarray, n: int) -> np.ndarray:
    """The logical table a "mod" lookup sees when shard k holds the consecutive rows ``np.array_split(full, n)[k]``."""
    shards = np.array_split(full, n)
    out = []
    for i in range(sum(len(s) for s in shards)):
        k, r = i % n, i // n
        if r < len(shards[k]):
            out.append(shards[k][r])
    return np.array(out)


def lookup(tf_mod, n: int, strategy: str, ids: np.ndarray, max_norm=None):
    """Runs a lookup on a PartitionedVariable: returns rows, then each shard's gradient as (indices, values, dense)."""
    with tf_mod.Graph().as_default():
        emb = tf_mod.get_variable(
            "emb", initializer=tf_mod.constant(FULL), partitioner=tf_mod.fixed_size_partitioner(n), use_resource=False
        )
        rows = tf_mod.nn.embedding_lookup(emb, ids, partition_strategy=strategy, max_norm=max_norm)
        weights = tf_mod.constant(rand(*ids.shape, 3, seed=51))
        grads = tf_mod.gradients(tf_mod.reduce_sum(rows * weights), list(emb))
        assert all(isinstance(g, (IndexedSlices, tf_mod.IndexedSlices)) for g in grads)
        with tf_mod.Session() as sess:
            sess.run(tf_mod.global_variables_initializer())
            got_rows, got_grads = sess.run([rows, [(g.indices, g.values) for g in grads]])
    shards = np.array_split(FULL, n)
    dense = []
    for (indices, values), shard in zip(got_grads, shards):
        d = np.zeros_like(shard)
        np.add.at(d, indices, values)
        dense.append(d)
    return got_rows, got_grads, dense


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("n", [3, 4])
def test_values_and_sparse_per_shard_gradients(strategy, n):
    rows, grads, dense = lookup(tf, n, strategy, IDS)
    logical = mod_rows(FULL, n) if strategy == "mod" else FULL
    np.testing.assert_allclose(rows, logical[IDS], rtol=1e-6)
    # Each shard's gradient has exactly the rows of the ids it owns, nothing for the others.
    assert sum(len(indices) for indices, _ in grads) == IDS.size
    weights = rand(*IDS.shape, 3, seed=51)
    expected = np.zeros_like(logical)
    np.add.at(expected, IDS.reshape(-1), weights.reshape(-1, 3))
    if strategy == "mod":
        got = np.zeros_like(logical)
        for i in range(len(logical)):
            got[i] = dense[i % n][i // n]
    else:
        got = np.concatenate(dense)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("n, max_norm", [(3, None), (4, None), (3, 0.5)])
def test_against_tensorflow(strategy, n, max_norm):
    tf_real = pytest.importorskip("tensorflow").compat.v1
    tf_real.disable_eager_execution()
    expected = lookup(tf_real, n, strategy, IDS, max_norm)
    got = lookup(tf, n, strategy, IDS, max_norm)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    for g, e in zip(got[2], expected[2]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_shards_of_unknown_size(strategy):
    shards = np.array_split(FULL, 3)
    logical = mod_rows(FULL, 3) if strategy == "mod" else FULL
    with tf.Graph().as_default():
        tables = [tf.placeholder_with_default(s, [None, 3]) for s in shards]
        ids = tf.placeholder(tf.int32, [None])
        rows = tf.nn.embedding_lookup(tables, ids, partition_strategy=strategy)
        assert rows.shape.as_list() == [None, 3]
        with tf.Session() as sess:
            got = sess.run(rows, {ids: [10, 2, 7, 0]})
    np.testing.assert_allclose(got, logical[[10, 2, 7, 0]])


def test_element_shape_read_from_the_first_shard_when_unknown():
    with tf.Graph().as_default():
        tables = [tf.placeholder_with_default(np.ones((2, 4), np.float32) * k, None) for k in range(2)]
        rows = tf.nn.embedding_lookup(tables, [[3], [0]])
        assert rows.shape.ndims is None  # as in TF: nothing is known of the rows' shape
        with tf.Session() as sess:
            got = sess.run(rows)
    np.testing.assert_array_equal(got, [[[1.0] * 4], [[0.0] * 4]])


def test_graph_shape_each_shard_gathers_its_own_ids_where_it_lives():
    with tf.Graph().as_default() as g:
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            emb = tf.get_variable("emb", [10, 4], partitioner=tf.fixed_size_partitioner(3))
            ids = tf.placeholder(tf.int64, [None], name="ids")
            rows = tf.nn.embedding_lookup(emb, ids, name="lookup")
            loss = tf.reduce_sum(rows)
            grads = tf.gradients(loss, list(emb))
        ops = g.get_operations()
    by_type = {}
    for op in ops:
        by_type.setdefault(op.type, []).append(op)
    assert rows.shape.as_list() == [None, 4]
    assert [op.name for op in by_type["DynamicPartition"]] == ["lookup/DynamicPartition", "lookup/DynamicPartition_1"]
    assert by_type["ParallelDynamicStitch"][0].name == "lookup" and by_type["ParallelDynamicStitch"][0].device == (
        "/job:worker"
    )
    forward_gathers = [op for op in by_type["GatherV2"] if not op.name.startswith("gradients/")]
    assert [op.device for op in forward_gathers] == [p.device for p in emb]
    assert [op.get_attr("_class") for op in forward_gathers] == [[f"loc:@emb/part_{i}"] for i in range(3)]
    for grad, part in zip(grads, emb):
        assert isinstance(grad, IndexedSlices)
        assert grad.values.shape.as_list()[0] is None  # only the looked-up rows, however many
        assert grad.dense_shape.op.device == part.device
    # The table is never concatenated: no op joins the parts or has the full table's shape.
    assert "ConcatV2" not in {op.type for op in ops if any(t.op.type == "VariableV2" for t in op.inputs)}
    assert not any(t.shape.as_list() == [10, 4] for op in ops for t in op.outputs if t.shape.ndims == 2)


def test_training_updates_only_looked_up_rows():
    with tf.Graph().as_default() as g:
        emb = tf.get_variable(
            "emb", initializer=tf.constant(FULL), partitioner=tf.fixed_size_partitioner(3), use_resource=False
        )
        ids = tf.constant([1, 5, 5, 9], tf.int64)
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, ids, partition_strategy="div"))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        # One sparse update per shard, each taking its shard by reference.
        scatters = [op for op in g.get_operations() if op.type == "ScatterSub"]
        assert sorted(op.inputs[0].op.name for op in scatters) == [f"emb/part_{i}" for i in range(3)]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            after = sess.run(tf.convert_to_tensor(emb))
    expected = FULL.copy()
    expected[[1, 9]] -= 0.5
    expected[5] -= 1.0
    np.testing.assert_allclose(after, expected, rtol=1e-6)


def test_params_forms_and_errors():
    with tf.Graph().as_default():
        parts = [tf.constant(s) for s in np.array_split(FULL, 3)]
        listed = tf.nn.embedding_lookup(parts, [4, 0], partition_strategy="div")
        single = tf.nn.embedding_lookup([tf.constant(FULL)], [4, 0])
        with tf.Session() as sess:
            got_listed, got_single = sess.run([listed, single])
        with pytest.raises(ValueError, match="params must be specified"):
            tf.nn.embedding_lookup(None, [0])
        with pytest.raises(ValueError, match="'div' strategy needs at least 2 rows"):
            tf.nn.embedding_lookup([tf.zeros([1, 2]), tf.zeros([0, 2])], [0], partition_strategy="div")
    np.testing.assert_allclose(got_listed, FULL[[4, 0]])
    np.testing.assert_allclose(got_single, FULL[[4, 0]])
