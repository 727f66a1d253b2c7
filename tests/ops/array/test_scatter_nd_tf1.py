"""gather_nd, scatter_nd, tensor_scatter_nd_* and batch_gather against real TensorFlow: values, static shapes,
gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

P = rand(3, 4, 2, seed=1).astype(np.float64)


@pytest.mark.parametrize(
    "indices",
    [
        np.array([[1, 2, 0], [0, 0, 1]], np.int32),
        np.array([[2], [0], [2]], np.int64),
        np.array([[[1, 3], [2, 0]]], np.int32),
        np.zeros((2, 0), np.int32),
    ],
    ids=["full", "rows", "pairs", "empty-k"],
)
def test_gather_nd(indices):
    # TF's own gradient fails for indices with an empty last axis ("empty output shape").
    compare(lambda m, p: m.gather_nd(p, indices), [P], grad=indices.shape[-1] > 0)


def test_gather_nd_batch_dims():
    idx = np.array([[[1], [3]], [[0], [0]], [[2], [1]]], np.int32)
    compare(lambda m, p: m.gather_nd(p, idx, batch_dims=1), [P])


def test_gather_nd_strings_and_errors():
    words = np.array([[b"a", b"b"], [b"c", b"d"]], dtype=object)
    compare(lambda m: m.gather_nd(words, [[1, 0], [0, 1]]), [])
    assert compare_error(lambda m, p: m.gather_nd(p, [[3, 0, 0]]), [P]) == "InvalidArgumentError"
    assert compare_error(lambda m, p: m.gather_nd(p, [[0, 0, 0, 0]]), [P]) == "ValueError"


def test_scatter_nd():
    updates = rand(3, 2, seed=4).astype(np.float64)
    idx = np.array([[1, 0], [3, 3], [1, 0]], np.int32)
    compare(lambda m, u: m.scatter_nd(idx, u, [4, 5, 2]), [updates])
    compare(lambda m, u: m.scatter_nd(np.array([[0], [2]], np.int64), u[:2], [3, 2]), [updates])
    assert compare_error(lambda m, u: m.scatter_nd(idx, u, [4, 6]), [updates]) == "ValueError"
    assert compare_error(lambda m, u: m.scatter_nd([[4, 0]], u[:1], [4, 5, 2]), [updates]) == "InvalidArgumentError"


@pytest.mark.parametrize("kind", ["update", "add", "sub", "max", "min"])
def test_tensor_scatter(kind):
    base = rand(4, 3, seed=5).astype(np.float64)
    updates = rand(2, 3, seed=6).astype(np.float64)
    idx = np.array([[2], [0]], np.int32)
    compare(lambda m, b, u: getattr(m, f"tensor_scatter_nd_{kind}")(b, idx, u), [base, updates])


def test_tensor_scatter_ties_split_the_gradient():
    base = np.array([1.0, 2.0, 3.0])
    updates = np.array([1.0, 5.0])
    idx = np.array([[0], [2]], np.int32)
    compare(lambda m, b, u: m.tensor_scatter_nd_max(b, idx, u), [base, updates])
    compare(lambda m, b, u: m.tensor_scatter_nd_min(b, idx, u), [base, updates])


def test_tensor_scatter_old_names_and_integers():
    base = np.arange(6, dtype=np.int32).reshape(2, 3)
    compare(lambda m, b: m.tensor_scatter_update(b, [[1, 1]], [50]), [base])
    compare(lambda m, b: m.tensor_scatter_add(b, [[0]], [[1, 1, 1]]), [base])
    compare(lambda m, b: m.tensor_scatter_sub(b, [[0, 2], [0, 2]], [1, 1]), [base])


def test_batch_gather():
    idx = np.array([[[1, 0], [3, 3], [2, 2]]], np.int32).reshape(3, 2)
    compare(lambda m, p: m.batch_gather(p, idx), [P])


def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None, 4, 2])
        i = tf.placeholder(tf.int32, [None, 5, 2])
        assert tf.gather_nd(p, i).shape.as_list() == [None, 5, 2]
        n = tf.placeholder(tf.int32, [])
        assert tf.scatter_nd(i, tf.zeros([7, 5, 3]), tf.stack([n, 4, 3])).shape.as_list() == [None, 4, 3]
