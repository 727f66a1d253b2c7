"""``dynamic_partition`` / ``dynamic_stitch``: values, static shapes, gradients, errors, and TF as an oracle."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.ops.array.partition_stitch import parallel_dynamic_stitch
from tests.ops.array.support import run, unknown
from tests.ops.op_check import check_forward, check_gradient, rand


def partition_ref(data: np.ndarray, partitions: np.ndarray, n: int) -> list[np.ndarray]:
    rows = data.reshape((partitions.size,) + data.shape[partitions.ndim :])
    flat = partitions.reshape(-1)
    return [rows[flat == p] for p in range(n)]


def stitch_ref(indices: list[np.ndarray], data: list[np.ndarray]) -> np.ndarray:
    rest = data[0].shape[indices[0].ndim :]
    size = max((int(i.max()) for i in indices if i.size), default=-1) + 1
    out = np.zeros((size,) + rest, data[0].dtype)
    for idx, d in zip(indices, data):
        out[idx.reshape(-1)] = d.reshape((-1,) + rest)
    return out


P1 = np.array([2, 0, 2, 1, 0, 2], np.int32)
P2 = np.array([[1, 0, 1], [0, 0, 1]], np.int32)


# ---- values ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data, partitions, n",
    [
        (rand(6, 3), P1, 3),
        (rand(6), P1, 4),  # partition 3 stays empty
        (rand(2, 3, 2), P2, 2),
        (rand(2, 3), P2, 3),
        (np.arange(6, dtype=np.int64), P1, 3),
    ],
)
def test_dynamic_partition_matches_numpy(data, partitions, n):
    check_forward(lambda d, p: tf.dynamic_partition(d, p, n), lambda d, p: partition_ref(d, p, n), [data, partitions])


@pytest.mark.parametrize(
    "indices, data",
    [
        ([np.array([0, 4], np.int32), np.array([2], np.int32)], [rand(2, 3), rand(1, 3, seed=1)]),
        ([np.array([[1, 0]], np.int32), np.array([2, 5, 3], np.int32)], [rand(1, 2), rand(3, seed=2)]),
        # A repeated index: the last writer (in order of the lists) wins.
        ([np.array([0, 1], np.int32), np.array([1], np.int32)], [rand(2, 2), rand(1, 2, seed=3)]),
    ],
)
def test_dynamic_stitch_matches_numpy(indices, data):
    k = len(indices)

    def build(*t):
        return tf.dynamic_stitch(list(t[:k]), list(t[k:]))

    check_forward(build, lambda *a: stitch_ref(list(a[:k]), list(a[k:])), [*indices, *data])
    check_forward(
        lambda *t: parallel_dynamic_stitch(list(t[:k]), list(t[k:])),
        lambda *a: stitch_ref(list(a[:k]), list(a[k:])),
        [*indices, *data],
    )


def test_partition_then_stitch_is_the_identity_and_works_on_strings():
    with tf.Graph().as_default():
        words = tf.constant([b"a", b"bb", b"c", b"dd"])
        parts = tf.dynamic_partition(words, [1, 0, 1, 1], 2)
        where = tf.dynamic_partition(tf.range(4), [1, 0, 1, 1], 2)
        back = tf.dynamic_stitch(where, parts)
        got_parts, got_back = run([parts, back])
    assert [p.tolist() for p in got_parts] == [[b"bb"], [b"a", b"c", b"dd"]]
    assert got_back.tolist() == [b"a", b"bb", b"c", b"dd"]


def test_empty_inputs():
    with tf.Graph().as_default():
        parts = tf.dynamic_partition(tf.zeros([0, 2]), tf.zeros([0], tf.int32), 2)
        merged = tf.dynamic_stitch([tf.zeros([0], tf.int32)], [tf.zeros([0, 2])])
        got_parts, got_merged = run([parts, merged])
    assert [p.shape for p in got_parts] == [(0, 2), (0, 2)] and got_merged.shape == (0, 2)


# ---- static shapes and attrs ----------------------------------------------------------------------
def test_static_shapes():
    with tf.Graph().as_default():
        parts = tf.dynamic_partition(tf.placeholder(tf.float32, [None, 5, 3]), tf.placeholder(tf.int32, [None, 5]), 2)
        assert [p.shape.as_list() for p in parts] == [[None, 3], [None, 3]]
        assert parts[0].op.type == "DynamicPartition" and parts[0].op.get_attr("num_partitions") == 2
        unknown_rank = tf.dynamic_partition(tf.zeros([4, 2]), tf.placeholder(tf.int32), 3)
        assert all(p.shape.ndims is None for p in unknown_rank)

        known = tf.dynamic_stitch([[0, 4], [2]], [tf.zeros([2, 7]), tf.zeros([1, 7])])
        assert known.shape.as_list() == [5, 7] and known.op.get_attr("N") == 2
        fed = tf.dynamic_stitch([tf.placeholder(tf.int32, [None]), [1]], [tf.placeholder(tf.float32), tf.zeros([1, 7])])
        assert fed.shape.as_list() == [None, 7]


# ---- gradients ------------------------------------------------------------------------------------
def test_dynamic_partition_gradient():
    check_gradient(lambda d: tf.dynamic_partition(d, P1, 3), [rand(6, 2)])
    check_gradient(lambda d: tf.dynamic_partition(d, P2, 2), [rand(2, 3, 2)])


def test_dynamic_partition_gradient_of_an_unused_partition_is_zero():
    with tf.Graph().as_default():
        x = tf.constant(rand(6, 2))
        parts = tf.dynamic_partition(x, P1, 3)
        (grad,) = tf.gradients(tf.reduce_sum(parts[2]), x)
        got = run(grad)
    np.testing.assert_array_equal(got, np.repeat((P1 == 2)[:, None], 2, axis=1).astype(np.float32))


def test_dynamic_stitch_gradient_dense_and_from_indexed_slices():
    idx = [np.array([0, 3], np.int32), np.array([2, 1], np.int32)]
    check_gradient(lambda a, b: tf.dynamic_stitch(idx, [a, b]), [rand(2, 3), rand(2, 3, seed=5)])
    # A gather after the stitch hands it an IndexedSlices gradient.
    check_gradient(lambda a, b: tf.gather(tf.dynamic_stitch(idx, [a, b]), [3, 3, 0]), [rand(2, 3), rand(2, 3, seed=6)])


# ---- errors ---------------------------------------------------------------------------------------
BUILD_ERRORS = [
    (lambda: tf.dynamic_partition(tf.zeros([3]), [0, 1], 2), ValueError, "Dimensions must be equal, but are 3 and 2"),
    (lambda: tf.dynamic_partition(tf.zeros([3]), [[0, 1, 1]], 2), ValueError, "at least rank 2 but is rank 1"),
    (lambda: tf.dynamic_partition(tf.zeros([3]), [0, 1, 1], 0), ValueError, "passed 0 less than minimum 1"),
    (
        lambda: tf.dynamic_partition(tf.zeros([3]), tf.constant([0, 1, 1], tf.int64), 2),
        TypeError,
        "has type int64 that does not match expected type of int32",
    ),
    (lambda: tf.dynamic_stitch([[0, 1]], [tf.zeros([3])]), ValueError, "Dimensions must be equal, but are 3 and 2"),
    (
        lambda: tf.dynamic_stitch([[0, 1], [2]], [tf.zeros([2, 1]), tf.zeros([1, 2])]),
        ValueError,
        "Dimension 0 in both shapes must be equal, but are 1 and 2",
    ),
    (
        lambda: tf.dynamic_stitch([tf.constant([0], tf.int64)], [tf.zeros([1])]),
        TypeError,
        r"passed to 'indices' of 'DynamicStitch' Op have types \[int64\]",
    ),
    (lambda: tf.dynamic_stitch([[0]], []), ValueError, "as many indices as data tensors"),
]


@pytest.mark.parametrize("build, error, message", BUILD_ERRORS)
def test_build_errors(build, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=message):
        build()


def test_run_time_errors_name_the_node():
    with tf.Graph().as_default():
        bad_partition = tf.dynamic_partition(
            tf.constant([[1.0, 2.0], [3.0, 4.0]]), unknown([[0, 5], [1, -1]], tf.int32), 2, name="split_ids"
        )
        negative = tf.dynamic_stitch([unknown([0, -1], tf.int32)], [tf.constant([1.0, 2.0])], name="merge")
        short = tf.dynamic_stitch([unknown([0, 1], tf.int32)], [unknown([1.0, 2.0, 3.0])], name="short")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[0,1\] = 5 is not in \[0, 2\)") as e:
                sess.run(bad_partition)
            assert e.value.op.name == "split_ids"
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] is out of range") as e:
                sess.run(negative)
            assert e.value.op.name == "merge"
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"data\[0\].shape = \[3\] does not start with"):
                sess.run(short)


# ---- TensorFlow as the oracle ---------------------------------------------------------------------
def _partition_and_stitch(tf_mod, data, partitions, n):
    """Partitions ``data``, scales each part differently, stitches back; returns values and d(sum)/d(data)."""
    with tf_mod.Graph().as_default():
        x = tf_mod.constant(data)
        parts = tf_mod.dynamic_partition(x, partitions, n)
        where = tf_mod.dynamic_partition(tf_mod.range(partitions.size), partitions.reshape(-1), n)
        scaled = [p * float(k + 1) for k, p in enumerate(parts)]
        flat = [tf_mod.reshape(s, [-1, data.shape[-1]]) for s in scaled]
        merged = tf_mod.dynamic_stitch(where, flat)
        (grad,) = tf_mod.gradients(tf_mod.reduce_sum(merged * merged), x)
        with tf_mod.Session() as sess:
            return sess.run([parts, merged, grad])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("n", [1, 3, 4])
def test_against_tensorflow(n):
    tf_real = pytest.importorskip("tensorflow").compat.v1
    rng = np.random.default_rng(n)
    data = rng.normal(size=(8, 3)).astype(np.float32)
    partitions = rng.integers(0, n, size=8).astype(np.int32)
    expected = _partition_and_stitch(tf_real, data, partitions, n)
    got = _partition_and_stitch(tf, data, partitions, n)
    for e, g in zip(expected[0], got[0]):
        np.testing.assert_allclose(g, e)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-6)


@pytest.mark.tf_oracle
def test_stitch_with_repeats_and_gaps_against_tensorflow():
    tf_real = pytest.importorskip("tensorflow").compat.v1
    indices = [np.array([[0, 6]], np.int32), np.array([3, 0, 6], np.int32)]
    data = [rand(1, 2, 2), rand(3, 2, seed=9)]

    def build(tf_mod):
        with tf_mod.Graph().as_default():
            values = [tf_mod.constant(d) for d in data]
            merged = tf_mod.dynamic_stitch(indices, values)
            grads = tf_mod.gradients(tf_mod.reduce_sum(merged * 3.0), values)
            with tf_mod.Session() as sess:
                return sess.run([merged, grads])

    expected, got = build(tf_real), build(tf)
    np.testing.assert_array_equal(got[0], expected[0])
    for g, e in zip(got[1], expected[1]):
        np.testing.assert_array_equal(g, e)
