"""``tf.nn.embedding_lookup_sparse`` (and the ``SparseTensor`` it takes): combiners, weights, shards, max_norm,
gradients that stay sparse per shard, and TensorFlow as the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

TABLE = np.arange(40, dtype=np.float32).reshape(10, 4) / 10.0 - 1.5
# Batch of 4 rows: row 0 has ids 1, 3, 1 (a repeat); row 1 none; row 2 id 9; row 3 ids 0, 5.
INDICES = [[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]]
IDS = [1, 3, 1, 9, 0, 5]
WEIGHTS = [0.5, 2.0, 1.5, 3.0, -1.0, 0.25]
DENSE_SHAPE = [4, 3]


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _reference(ids_rows, weights, combiner, table=TABLE):
    """Row by row in numpy: the combined embedding of each batch row up to the last with ids."""
    last = max(r for r, _ in INDICES)
    out = np.zeros((last + 1, table.shape[1]), np.float64)
    for row in range(last + 1):
        entries = [(i, w) for (r, _), i, w in zip(INDICES, ids_rows, weights) if r == row]
        if not entries:
            continue
        total = sum(w * table[i] for i, w in entries)
        if combiner == "sum":
            out[row] = total
        elif combiner == "mean":
            out[row] = total / sum(w for _, w in entries)
        else:
            out[row] = total / np.sqrt(sum(w * w for _, w in entries))
    return out


def _sparse(tf_mod, values, dtype):
    return tf_mod.SparseTensor(INDICES, tf_mod.constant(values, dtype), DENSE_SHAPE)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_combiners_against_numpy(combiner, weighted):
    weights = WEIGHTS if weighted else [1.0] * len(IDS)
    sp_weights = _sparse(tf, WEIGHTS, tf.float32) if weighted else None
    out = tf.nn.embedding_lookup_sparse(tf.constant(TABLE), _sparse(tf, IDS, tf.int64), sp_weights, combiner=combiner)
    assert out.shape.as_list() == [None, 4] and out.op.name == "embedding_lookup_sparse"
    with tf.Session() as sess:
        got = sess.run(out)
    np.testing.assert_allclose(got, _reference(IDS, weights, combiner), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sharded_table_gives_the_same_result_and_sparse_gradients(strategy):
    emb = tf.get_variable("emb", initializer=tf.constant(TABLE), partitioner=lambda **_: [3, 1])
    out = tf.nn.embedding_lookup_sparse(
        emb, _sparse(tf, IDS, tf.int64), _sparse(tf, WEIGHTS, tf.float32), strategy, combiner="mean"
    )
    grads = tf.gradients(tf.reduce_sum(out), list(emb))
    assert all(isinstance(g, tf.IndexedSlices) for g in grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, shard_grads = sess.run([out, grads])
    # The table was initialised from TABLE row for row in its "div" order; "mod" permutes which id is which row.
    logical = np.concatenate([TABLE[0:4], TABLE[4:7], TABLE[7:10]])
    if strategy == "mod":
        parts = [TABLE[0:4], TABLE[4:7], TABLE[7:10]]
        logical = np.stack([parts[i % 3][i // 3] for i in range(10)])
    np.testing.assert_allclose(got, _reference(IDS, WEIGHTS, "mean", logical), rtol=1e-5, atol=1e-6)
    # Only looked-up rows appear in the shards' gradients.
    touched = sum(len(set(g.indices.tolist())) for g in shard_grads)
    assert touched == len(set(IDS))


def test_max_norm_empty_batch_and_float16():
    table = tf.constant(TABLE)
    clipped = tf.nn.embedding_lookup_sparse(table, _sparse(tf, IDS, tf.int64), None, combiner="sum", max_norm=0.5)
    empty_ids = tf.SparseTensor(tf.zeros([0, 2], tf.int64), tf.zeros([0], tf.int64), [2, 3])
    empty = tf.nn.embedding_lookup_sparse(table, empty_ids, None, combiner="mean")
    half = tf.nn.embedding_lookup_sparse(
        tf.constant(TABLE.astype(np.float16)), _sparse(tf, IDS, tf.int64), None, combiner="sqrtn"
    )
    with tf.Session() as sess:
        got_clipped, got_empty, got_half = sess.run([clipped, empty, half])
    norms = np.linalg.norm(TABLE, axis=1, keepdims=True)
    np.testing.assert_allclose(
        got_clipped, _reference(IDS, [1.0] * 6, "sum", TABLE * np.minimum(1.0, 0.5 / norms)), rtol=1e-5, atol=1e-6
    )
    assert got_empty.shape == (0, 4)
    assert half.dtype == tf.float16 and got_half.dtype == np.float16
    np.testing.assert_allclose(got_half, _reference(IDS, [1.0] * 6, "sqrtn"), rtol=1e-2, atol=1e-2)


def test_fed_through_a_sparse_placeholder():
    sp = tf.sparse_placeholder(tf.int64, name="ids")
    assert [t.op.name for t in (sp.values, sp.indices, sp.dense_shape)] == ["ids/values", "ids/indices", "ids/shape"]
    out = tf.nn.embedding_lookup_sparse(tf.constant(TABLE), sp, None, combiner="sum")
    with tf.Session() as sess:
        got = sess.run(out, {sp: tf.SparseTensorValue(INDICES, IDS, DENSE_SHAPE)})
        fetched = sess.run(sp, {sp: (INDICES, IDS, DENSE_SHAPE)})
    np.testing.assert_allclose(got, _reference(IDS, [1.0] * 6, "sum"), rtol=1e-5)
    assert isinstance(fetched, tf.SparseTensorValue) and fetched.values.tolist() == IDS
    assert tf.sparse_placeholder(tf.float32, [None, 7]).shape.as_list() == [None, 7]


def test_argument_errors():
    ids = _sparse(tf, IDS, tf.int64)
    with pytest.raises(ValueError, match="combiner must be one of 'mean', 'sqrtn' or 'sum', got 'max'"):
        tf.nn.embedding_lookup_sparse(TABLE, ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(TABLE, tf.constant(IDS), None)
    with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
        tf.nn.embedding_lookup_sparse(TABLE, ids, tf.constant(WEIGHTS))
    with pytest.raises(ValueError):
        tf.nn.embedding_lookup_sparse(TABLE, ids, tf.SparseTensor([[0, 0]], [1.0], [4, 3]))
    with pytest.raises(ValueError, match="SparseTensor parts do not fit"):
        tf.SparseTensor([[0, 0], [1, 1]], [1.0], [2, 2])


def test_default_combiner_is_mean_with_tfs_warning(caplog):
    out = tf.nn.embedding_lookup_sparse(tf.constant(TABLE), _sparse(tf, IDS, tf.int64), None)
    assert "combiner" in caplog.text
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out), _reference(IDS, [1.0] * 6, "mean"), rtol=1e-5, atol=1e-6)


# ---- TF as the oracle ----------------------------------------------------------------------------
def _build(tf_mod, combiner, weighted, strategy, max_norm):
    shards = [tf_mod.constant(s) for s in np.array_split(TABLE, 3)]
    sp_weights = _sparse(tf_mod, WEIGHTS, tf_mod.float32) if weighted else None
    out = tf_mod.nn.embedding_lookup_sparse(
        shards, _sparse(tf_mod, IDS, tf_mod.int64), sp_weights, strategy, combiner=combiner, max_norm=max_norm
    )
    grads = tf_mod.gradients(tf_mod.reduce_sum(out * out), shards)
    dense_grads = [tf_mod.convert_to_tensor(g) for g in grads]
    with tf_mod.Session() as sess:
        return sess.run([out] + dense_grads)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize(
    "weighted, strategy, max_norm", [(False, "mod", None), (True, "div", None), (True, "mod", 1.0)]
)
def test_against_tensorflow(combiner, weighted, strategy, max_norm):
    tf_real = pytest.importorskip("tensorflow").compat.v1
    tf_real.disable_eager_execution()
    with tf_real.Graph().as_default():
        want = _build(tf_real, combiner, weighted, strategy, max_norm)
    got = _build(tf, combiner, weighted, strategy, max_norm)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
