"""Partitioners and partitioned variables: TF's partition counts, uneven parts, placement, lazy allocation."""

from __future__ import annotations

import resource

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.partitioned_variables import PartitionedVariable

# (partitioner factory name, its arguments, variable shape, dtype)
CASES = [
    ("fixed_size_partitioner", {"num_shards": 3}, [10, 4], "float32"),
    ("fixed_size_partitioner", {"num_shards": 5}, [3, 4], "float32"),
    ("fixed_size_partitioner", {"num_shards": 4, "axis": 1}, [2, 10], "float32"),
    ("fixed_size_partitioner", {"num_shards": 3}, [1000000000, 20], "float32"),
    ("min_max_variable_partitioner", {}, [1024, 1024], "float32"),
    ("min_max_variable_partitioner", {"max_partitions": 32}, [1024, 1024], "float32"),
    ("min_max_variable_partitioner", {"max_partitions": 32}, [1000, 7], "float64"),
    ("min_max_variable_partitioner", {"max_partitions": 100, "min_slice_size": 1000}, [30, 10], "float32"),
    ("min_max_variable_partitioner", {"max_partitions": 8, "axis": 1, "min_slice_size": 64}, [4, 6], "int64"),
    ("min_max_variable_partitioner", {"max_partitions": 9, "min_slice_size": 100}, [50], "string"),
    (
        "min_max_variable_partitioner",
        {"max_partitions": 9, "min_slice_size": 100, "bytes_per_string_element": 2},
        [50],
        "string",
    ),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 4096}, [100, 32], "float32"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 4096, "max_shards": 2}, [100, 32], "float32"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 10}, [7, 32], "float32"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": (64 << 20) - 1}, [5000000, 64], "float32"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 100, "axis": 1}, [3, 40], "float16"),
    ("variable_axis_size_partitioner", {"max_shard_bytes": 64}, [12, 3], "string"),
]


def _partition(tf_mod, factory, kwargs, shape, dtype):
    part = getattr(tf_mod, factory)(**kwargs)
    return list(part(shape=tf_mod.TensorShape(shape), dtype=tf_mod.as_dtype(dtype)))


@pytest.mark.parametrize("factory, kwargs, shape, dtype", CASES)
def test_partitions_known_values(factory, kwargs, shape, dtype):
    got = _partition(tf, factory, kwargs, shape, dtype)
    assert len(got) == len(shape) and sum(p > 1 for p in got) <= 1
    assert all(1 <= p <= d for p, d in zip(got, shape))


def test_partitions_hand_computed():
    assert _partition(tf, "fixed_size_partitioner", {"num_shards": 3}, [10, 4], "float32") == [3, 1]
    assert _partition(tf, "fixed_size_partitioner", {"num_shards": 5}, [3, 4], "float32") == [3, 1]
    # 4 MiB of float32 in slices of at least 256 KiB: 16 parts, unless capped.
    assert _partition(tf, "min_max_variable_partitioner", {"max_partitions": 32}, [1024, 1024], "float32") == [16, 1]
    assert _partition(tf, "min_max_variable_partitioner", {}, [1024, 1024], "float32") == [1, 1]
    # 128 bytes per row, 4096 bytes per part: 32 rows per part, 4 parts for 100 rows.
    assert _partition(tf, "variable_axis_size_partitioner", {"max_shard_bytes": 4096}, [100, 32], "float32") == [4, 1]
    # A row larger than max_shard_bytes: one row per part.
    assert _partition(tf, "variable_axis_size_partitioner", {"max_shard_bytes": 10}, [7, 32], "float32") == [7, 1]
    # Strings count bytes_per_string_element (16 by default) per element.
    assert _partition(tf, "variable_axis_size_partitioner", {"max_shard_bytes": 64}, [12, 3], "string") == [12, 1]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("factory, kwargs, shape, dtype", CASES)
def test_partitions_match_tensorflow(factory, kwargs, shape, dtype):
    tf_real = pytest.importorskip("tensorflow").compat.v1
    assert _partition(tf, factory, kwargs, shape, dtype) == _partition(tf_real, factory, kwargs, shape, dtype)


def test_partitioner_errors():
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(10, bytes_per_string_element=0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=-1)
    with pytest.raises(ValueError, match="not fully defined"):
        tf.variable_axis_size_partitioner(10)(TensorShape([None, 3]), tf.float32)
    with pytest.raises(ValueError, match="Cannot partition variable along axis 2"):
        tf.min_max_variable_partitioner(4, axis=2)(TensorShape([10, 3]), tf.float32)


# ---- partitioned variables ------------------------------------------------------------------------
def test_get_variable_with_a_partitioner_gives_uneven_parts_first_ones_larger():
    v = tf.get_variable("emb", [11, 2], partitioner=tf.fixed_size_partitioner(4))
    assert isinstance(v, PartitionedVariable)
    assert [p.op.name for p in v] == [f"emb/part_{i}" for i in range(4)]
    assert [p.shape.as_list() for p in v] == [[3, 2], [3, 2], [3, 2], [2, 2]]
    assert [p._save_slice_info.var_offset for p in v] == [[0, 0], [3, 0], [6, 0], [9, 0]]
    assert v.get_shape().as_list() == [11, 2]
    assert all(p in tf.trainable_variables() for p in v)


def test_parts_of_a_value_initializer_hold_their_slices():
    full = np.arange(22, dtype=np.float32).reshape(11, 2)
    v = tf.get_variable("emb", initializer=tf.constant(full), partitioner=tf.fixed_size_partitioner(3))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        parts = sess.run(list(v))
        whole = sess.run(tf.convert_to_tensor(v))
    np.testing.assert_array_equal(np.concatenate(parts), full)
    np.testing.assert_array_equal(whole, full)
    assert [p.shape for p in parts] == [(4, 2), (4, 2), (3, 2)]


def test_parts_are_separate_variable_ops_placed_round_robin():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        a = tf.get_variable("a", [5, 3], partitioner=tf.fixed_size_partitioner(3))
        b = tf.get_variable("b", [4])
    assert [p.op.type for p in a] == ["VariableV2"] * 3
    assert [p.device for p in a] + [b.device] == [
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0",
        "/job:ps/task:1",
    ]
    # Each part's initializer runs where the part lives.
    assert [p.initializer.device for p in a] == [p.device for p in a]


def test_seed_003_huge_embedding_is_declared_without_allocating():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    greedy = tf.contrib.training.GreedyLoadBalancingStrategy(3, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=greedy)):
        embedding = tf.get_variable("embedding", [1000000000, 20], partitioner=tf.fixed_size_partitioner(3))
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert [p.shape.as_list() for p in embedding] == [[333333334, 20], [333333333, 20], [333333333, 20]]
    assert [p.device for p in embedding] == [f"/job:ps/task:{i}" for i in range(3)]
    # 80 GB of float32 in all: declaring it holds no values, only shapes (no constant is large).
    consts = [op for op in tf.get_default_graph().get_operations() if op.type == "Const"]
    assert all(np.asarray(op.get_attr("value")).nbytes < 1024 for op in consts)
    assert grown_kib < 200 * 1024
