"""``Tensor.__getitem__`` against numpy indexing: values, gradients, static shapes and bad indices."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.array.support import X234, run
from tests.ops.op_check import check_forward, check_gradient, rand

X3456 = rand(3, 4, 5, 6, seed=3)
INDEX_EXPRESSIONS = [
    (1,),
    (-1,),
    (slice(None),),
    (slice(1, 3),),
    (slice(None, None, -1),),
    (slice(None, None, 2),),
    (slice(3, 0, -2),),
    (slice(-2, None),),
    (slice(-10, 10),),
    (slice(10, 20),),
    (Ellipsis,),
    (Ellipsis, 0),
    (0, Ellipsis, -1),
    (None,),
    (None, 1, None),
    (slice(None), None, 2),
    (Ellipsis, None),
    (1, slice(None, None, -1), Ellipsis, slice(1, 5, 3)),
    (slice(None, None, -3), 2, None, slice(4, 0, -1)),
    (-1, -2, -3, -4),
    (slice(2, 1),),
    (slice(0, 3), slice(None), slice(4, None, -2), None),
    (None, Ellipsis, None),
    (slice(1, None, -1),),
    (2, slice(-1, -5, -1)),
]


@pytest.mark.parametrize("spec", INDEX_EXPRESSIONS, ids=[repr(s) for s in INDEX_EXPRESSIONS])
def test_getitem_matches_numpy(spec):
    check_forward(lambda x: x[spec], lambda x: x[spec], [X3456])


@pytest.mark.parametrize("spec", INDEX_EXPRESSIONS[:12] + INDEX_EXPRESSIONS[-6:], ids=repr)
def test_getitem_gradient(spec):
    check_gradient(lambda x: x[spec], [rand(3, 4, 3, 4, seed=5)])


def test_getitem_tensor_indices_and_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 5])
        i = tf.placeholder(tf.int32, [])
        j = tf.constant(1, dtype=tf.int64)
        assert x[0].shape.as_list() == [4, 5]
        assert x[:, 1:3].shape.as_list() == [None, 2, 5]
        assert x[..., None, ::-2].shape.as_list() == [None, 4, 1, 3]
        assert x[i].shape.as_list() == [4, 5]
        assert x[:, i:].shape.as_list() == [None, None, 5]
        assert x[1:, j].shape.as_list() == [None, 5]
        assert x[0].op.type == "StridedSlice" and x[0].op.name.startswith("strided_slice")
        assert tf.placeholder(tf.float32)[0].shape.ndims is None
        feed = {x: rand(2, 4, 5), i: 1}
        with tf.Session() as sess:
            got = sess.run([x[i], x[:, i:], x[1:, j]], feed)
        np.testing.assert_array_equal(got[0], feed[x][1])
        np.testing.assert_array_equal(got[1], feed[x][:, 1:])
        np.testing.assert_array_equal(got[2], feed[x][1:, 1])


def test_getitem_numpy_and_dimension_indices():
    with tf.Graph().as_default():
        x = tf.constant(X234)
        got = run([x[np.int64(1)], x[:, x.shape[1] - 1], x[np.int32(0), : np.int64(2)]])
    np.testing.assert_array_equal(got[0], X234[1])
    np.testing.assert_array_equal(got[1], X234[:, 2])
    np.testing.assert_array_equal(got[2], X234[0, :2])


def test_getitem_on_variable_and_iteration():
    with tf.Graph().as_default():
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
        rows = list(tf.constant([[1, 2], [3, 4]]))
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(v[1, ::-1]).tolist() == [4.0, 3.0]
            assert [r.tolist() for r in sess.run(rows)] == [[1, 2], [3, 4]]


@pytest.mark.parametrize("bad", [1.5, "a", (Ellipsis, Ellipsis)], ids=repr)
def test_getitem_bad_index(bad):
    with tf.Graph().as_default():
        x = tf.zeros([3, 4])
        if bad == (Ellipsis, Ellipsis):
            with pytest.raises(ValueError, match="Multiple ellipses"):
                x[bad]
        else:
            with pytest.raises(TypeError, match="Only integers, slices"):
                x[bad]
        with pytest.raises(TypeError, match="Only integers, slices"):
            x[tf.constant([0, 1])]
        with pytest.raises(TypeError, match="Only integers, slices"):
            x[tf.constant(0.5)]


@pytest.mark.tf_oracle
def test_static_slice_shapes_match_tensorflow():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    shapes = [[None, 4, 5], [3, None, 5], [None, None, None]]
    specs = [
        (0,),
        (slice(1, None),),
        (Ellipsis, slice(None, None, -2)),
        (None, 1, slice(3, 0, -1)),
        (slice(None), None, -1),
        (slice(-2, None), 0, slice(None, None, 2)),
    ]
    for shape in shapes:
        for spec in specs:
            with tf1.Graph().as_default():
                expected = tf1.placeholder(tf1.float32, shape)[spec].shape.as_list()
            with tf.Graph().as_default():
                got = tf.placeholder(tf.float32, shape)[spec].shape.as_list()
            assert got == expected, (shape, spec)
