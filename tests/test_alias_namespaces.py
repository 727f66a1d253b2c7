"""TF1's alias namespaces (``tf.queue``, ``tf.version``, ``tf.lookup``, ``tf.train.queue_runner``,
``tf.random.experimental``, ``tf.math.special``, the ``tf.debugging`` predicates, ``tf.initializers.
tables_initializer``) hold the same objects as the names they alias, as in TF; ``convert_to_tensor`` takes TF's
``dtype_hint``."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

ALIASES = {
    "queue": ("", ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]),
    "version": ("", ["VERSION", "GIT_VERSION", "COMPILER_VERSION", "GRAPH_DEF_VERSION"]),
    "train.queue_runner": ("train", ["QueueRunner", "add_queue_runner", "start_queue_runners"]),
    "random.experimental": ("random", ["Algorithm", "Generator", "create_rng_state", "get_global_generator"]),
    "math.special": ("math", ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"]),
    "debugging": ("math", ["is_finite", "is_inf", "is_nan", "is_non_decreasing", "is_strictly_increasing"]),
    "lookup": ("contrib.lookup", ["KeyValueTensorInitializer", "TextFileIndex", "TextFileInitializer"]),
    "initializers": ("", ["tables_initializer"]),
}


def _module(root, dotted):
    for part in filter(None, dotted.split(".")):
        root = getattr(root, part)
    return root


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_alias_is_the_same_object(alias):
    home, names = ALIASES[alias]
    for name in names:
        assert getattr(_module(tf, alias), name) is getattr(_module(tf, home), name), f"tf.{alias}.{name}"


def test_stateless_fold_in_and_split_are_tf_random_names():
    assert tf.random.experimental.stateless_fold_in is tf.random.fold_in
    assert tf.random.experimental.stateless_split is tf.random.split


@pytest.mark.tf_oracle
def test_alias_names_exist_in_tf():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    for alias, (_, names) in ALIASES.items():
        for name in names:
            assert hasattr(_module(tf1, alias), name), f"tf.{alias}.{name}"


def test_tables_initializer_from_initializers_runs_the_tables():
    with tf.Graph().as_default():
        init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [7, 8], value_dtype=tf.int64)
        table = tf.contrib.lookup.HashTable(init, -1)
        with tf.Session() as sess:
            sess.run(tf.initializers.tables_initializer())
            np.testing.assert_array_equal(sess.run(table.lookup(tf.constant(["b", "z"]))), [8, -1])


def test_queue_namespace_queue_runs():
    with tf.Graph().as_default():
        q = tf.queue.PaddingFIFOQueue(3, [tf.int32], shapes=[[None]])
        with tf.Session() as sess:
            sess.run(q.enqueue([[1, 2]]))
            sess.run(q.enqueue([[3]]))
            np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [[1, 2], [3, 0]])


@pytest.mark.tf_oracle
def test_convert_to_tensor_dtype_hint_as_tf():
    tf1 = pytest.importorskip("tensorflow").compat.v1
    import inspect

    theirs = list(inspect.signature(tf1.convert_to_tensor).parameters)
    assert list(inspect.signature(tf.convert_to_tensor).parameters)[: len(theirs)] == theirs
    with tf.Graph().as_default():
        assert tf.convert_to_tensor(1, None, None, None, tf.float32).dtype == tf.float32
        assert tf.convert_to_tensor("a", dtype_hint=tf.float32).dtype == tf.string
        with pytest.raises(ValueError, match="Cannot specify both 'preferred_dtype' and 'dtype_hint'"):
            tf.convert_to_tensor(1, preferred_dtype=tf.float32, dtype_hint=tf.float32)
