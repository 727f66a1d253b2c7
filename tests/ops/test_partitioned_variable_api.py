"""``PartitionedVariable.assign`` (and ``assign_add``/``assign_sub``) and ``tf.create_partitioned_variables``,
checked against TF1's semantics and, where TensorFlow is installed, against TensorFlow itself."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _run(tf_mod, fetches, init=True):
    with tf_mod.Session() as sess:
        if init:
            sess.run(tf_mod.global_variables_initializer())
        return sess.run(fetches)


# ---- PartitionedVariable.assign ------------------------------------------------------------------
def test_assign_splits_the_full_value_unevenly_over_the_parts():
    v = tf.get_variable("v", [5, 2], partitioner=tf.fixed_size_partitioner(3))
    full = np.arange(10, dtype=np.float32).reshape(5, 2)
    parts = v.assign(full)
    assert len(parts) == 3 and all(isinstance(p, tf.Tensor) for p in parts)
    got = _run(tf, [parts, tf.convert_to_tensor(v)])
    assert [p.shape for p in got[0]] == [(2, 2), (2, 2), (1, 2)]
    np.testing.assert_array_equal(got[1], full)


def test_assign_along_axis_1_and_from_a_tensor():
    v = tf.get_variable("v", [2, 5], partitioner=tf.fixed_size_partitioner(2, axis=1))
    value = tf.reshape(tf.range(10.0), [2, 5])
    with tf.Session() as sess:
        sess.run(v.assign(value))
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(v)), np.arange(10.0).reshape(2, 5))


def test_assign_add_sub_and_read_value_false():
    v = tf.get_variable("v", [4], initializer=tf.ones_initializer(), partitioner=tf.fixed_size_partitioner(2))
    add = v.assign_add(tf.constant([1.0, 2.0, 3.0, 4.0]))
    sub = v.assign_sub(tf.constant([1.0, 1.0, 1.0, 1.0]), read_value=False)
    assert [op.type for op in sub] == ["AssignSub", "AssignSub"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [p.tolist() for p in sess.run(add)] == [[2.0, 3.0], [4.0, 5.0]]
        sess.run(sub)
        assert sess.run(tf.convert_to_tensor(v)).tolist() == [1.0, 2.0, 3.0, 4.0]


def test_assign_takes_a_list_per_part_or_another_partitioned_variable():
    v = tf.get_variable("v", [3], partitioner=tf.fixed_size_partitioner(2))
    w = tf.get_variable("w", [3], initializer=tf.constant_initializer(7.0), partitioner=tf.fixed_size_partitioner(2))
    per_part = v.assign([[1.0, 2.0], [3.0]])
    from_w = v.assign(w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(per_part)
        assert sess.run(tf.convert_to_tensor(v)).tolist() == [1.0, 2.0, 3.0]
        sess.run(from_w)
        assert sess.run(tf.convert_to_tensor(v)).tolist() == [7.0, 7.0, 7.0]
    with pytest.raises(ValueError, match=r"one value per part \(2\), got a list of 3"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        v.assign(tf.constant([1.0, 2.0]))  # does not split into parts of 2 and 1 rows


def test_each_part_is_assigned_on_its_parts_device():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v = tf.get_variable("v", [4, 3], partitioner=tf.fixed_size_partitioner(2))
        parts = v.assign(tf.zeros([4, 3]))
    assert [p.device for p in parts] == ["/job:ps/task:0", "/job:ps/task:1"]


# ---- create_partitioned_variables ---------------------------------------------------------------
def test_create_partitioned_variables_names_slices_and_offsets():
    def init(shape, dtype=None, partition_info=None):
        return tf.ones(shape) * float(partition_info.var_offset[1])

    parts = tf.create_partitioned_variables([4, 6], [1, 3], init, trainable=False, collections=["c"])
    assert [p.op.name for p in parts] == [f"PartitionedVariable/part_{i}" for i in range(3)]
    assert [p._save_slice_info.spec for p in parts] == ["4 6 0,4:0,2", "4 6 0,4:2,2", "4 6 0,4:4,2"]
    assert tf.get_collection("c") == parts and not tf.trainable_variables()
    with tf.Session() as sess:
        sess.run(tf.variables_initializer(parts))
        assert [float(p[0, 0]) for p in sess.run(parts)] == [0.0, 2.0, 4.0]
    again = tf.create_partitioned_variables([2], [2], tf.zeros_initializer())
    assert again[0].op.name == "PartitionedVariable_1/part_0"


def test_create_partitioned_variables_reuse_and_errors():
    parts = tf.create_partitioned_variables([4], [2], np.arange(4.0, dtype=np.float32), name="emb")
    assert tf.create_partitioned_variables([4], [2], tf.zeros_initializer(), name="emb", reuse=True) == parts
    with pytest.raises(ValueError, match="already exists"):
        tf.create_partitioned_variables([4], [2], tf.zeros_initializer(), name="emb")
    with pytest.raises(ValueError, match=r"must have the length: shape: \[4\], slicing: \[2, 1\]"):
        tf.create_partitioned_variables([4], [2, 1], tf.zeros_initializer())
    with pytest.raises(ValueError, match="rank at least 1"):
        tf.create_partitioned_variables([], [], tf.zeros_initializer())
    with pytest.raises(ValueError, match="one dimension"):
        tf.create_partitioned_variables([4, 4], [2, 2], tf.zeros_initializer())
    with tf.variable_scope("s", custom_getter=lambda getter, *a, **k: getter(*a, **k)):
        with pytest.raises(ValueError, match="custom getter"):
            tf.create_partitioned_variables([4], [2], tf.zeros_initializer())
    assert _run(tf, parts)[1].tolist() == [2.0, 3.0]


# ---- TF as the oracle ----------------------------------------------------------------------------
def _build_and_run(tf_mod):
    v = tf_mod.get_variable("v", [5, 3], partitioner=tf_mod.fixed_size_partitioner(3), use_resource=False)
    full = np.arange(15, dtype=np.float32).reshape(5, 3)
    assigned = v.assign(full)
    parts = tf_mod.create_partitioned_variables(
        [7, 2], [3, 1], np.arange(14, dtype=np.float32).reshape(7, 2), name="legacy"
    )
    names = [(p.op.name, p.shape.as_list(), p._save_slice_info.spec) for p in parts]
    with tf_mod.Session() as sess:
        sess.run(tf_mod.global_variables_initializer())
        got = sess.run(assigned)
        sess.run(v.assign_add(full))
        doubled = sess.run(tf_mod.convert_to_tensor(v))
        legacy = sess.run(parts)
    return names, got, doubled, legacy


@pytest.mark.tf_oracle
def test_matches_tensorflow():
    tf_real = pytest.importorskip("tensorflow").compat.v1
    with tf_real.Graph().as_default():
        want = _build_and_run(tf_real)
    got = _build_and_run(tf)
    assert got[0] == want[0]
    for g, w in zip(got[1] + [got[2]] + got[3], want[1] + [want[2]] + want[3]):
        np.testing.assert_array_equal(g, w)
