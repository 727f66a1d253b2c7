"""Auto-packing: lists and tuples mixing tensors and numbers convert to one ``Pack`` tensor everywhere."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.array.support import run


def test_convert_to_tensor_packs_a_list_with_a_tensor():
    with tf.Graph().as_default():
        t = tf.convert_to_tensor([tf.constant(1), 2])
        assert (t.op.type, t.dtype, t.shape.as_list()) == ("Pack", tf.int32, [2])
        assert t.op.name == "packed"
        assert run(t).tolist() == [1, 2]


def test_reshape_with_a_dynamic_dimension():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2, 3])
        y = tf.reshape(x, [tf.shape(x)[0], -1])
        assert y.shape.as_list() == [None, None]
        value = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
        np.testing.assert_array_equal(run(y, {x: value}), value.reshape(4, 6))


def test_lists_without_tensors_stay_constants():
    with tf.Graph().as_default():
        t = tf.convert_to_tensor([[1.0, 2.0], (3.0, 4.0)])
        assert (t.op.type, t.dtype, t.shape.as_list()) == ("Const", tf.float32, [2, 2])


def test_nested_tuples_variables_and_math_op_arguments():
    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        nested = tf.convert_to_tensor(((tf.constant(1.0), 2.0), [v, 4.0]))
        total = tf.add([tf.constant(1.0), 2.0], 10.0)
        assert nested.shape.as_list() == [2, 2] and total.shape.as_list() == [2]
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(nested).tolist() == [[1.0, 2.0], [3.0, 4.0]]
            assert sess.run(total).tolist() == [11.0, 12.0]


def test_requested_dtype_casts_tensors_and_numbers():
    with tf.Graph().as_default():
        t = tf.convert_to_tensor([tf.constant(1), 2], dtype=tf.int64, name="dims")
        assert (t.dtype, t.op.name) == (tf.int64, "dims")
        assert run(t).tolist() == [1, 2]


def test_mismatched_tensor_dtypes_are_an_error():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=r"have types \[int32, float32\]"):
            tf.convert_to_tensor([tf.constant(1), tf.constant(2.0)])
