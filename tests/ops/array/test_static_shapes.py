"""Array ops' static shape inference, op types and default op names."""

from __future__ import annotations

import dtf_notebook.compat.v1 as tf


def test_static_shapes_with_unknown_dims():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 5])
        u = tf.placeholder(tf.float32)
        assert tf.reshape(x, [-1, 20]).shape.as_list() == [None, 20]
        assert tf.reshape(x, [2, 10, -1]).shape.as_list() == [2, 10, None]
        assert tf.reshape(x, [tf.shape(x)[0], -1]).shape.as_list() == [None, None]
        assert tf.reshape(x, tf.shape(x)).shape.as_list() == [None, 4, 5]
        assert tf.reshape(tf.zeros([6]), [3, -1]).shape.as_list() == [3, 2]
        assert tf.reshape(u, [3, 2]).shape.as_list() == [3, 2]
        assert tf.transpose(x).shape.as_list() == [5, 4, None]
        assert tf.transpose(u).shape.ndims is None
        assert tf.concat([x, x], 0).shape.as_list() == [None, 4, 5]
        assert tf.concat([x, x], 2).shape.as_list() == [None, 4, 10]
        assert tf.concat([x, u], 1).shape.as_list() == [None, None, 5]
        assert tf.stack([x, x], 1).shape.as_list() == [None, 2, 4, 5]
        assert [t.shape.as_list() for t in tf.unstack(x, axis=1)] == [[None, 5]] * 4
        assert tf.split(x, 5, axis=2)[0].shape.as_list() == [None, 4, 1]
        assert [t.shape.as_list() for t in tf.split(x, [1, -1], axis=1)] == [[None, 1, 5], [None, 3, 5]]
        assert tf.slice(x, [0, 1, 0], [-1, 2, -1]).shape.as_list() == [None, 2, 5]
        assert tf.gather(x, tf.placeholder(tf.int32, [None, 2]), axis=1).shape.as_list() == [None, None, 2, 5]
        assert tf.expand_dims(x, -1).shape.as_list() == [None, 4, 5, 1]
        assert tf.squeeze(tf.placeholder(tf.float32, [None, 1, 3]), [1]).shape.as_list() == [None, 3]
        assert tf.squeeze(tf.placeholder(tf.float32, [None, 1, 3])).shape.ndims is None
        assert tf.tile(x, [2, 2, 2]).shape.as_list() == [None, 8, 10]
        assert tf.pad(x, [[1, 1], [0, 0], [2, 3]]).shape.as_list() == [None, 4, 10]
        assert tf.shape(x).op.type == "Shape" and tf.shape(x).shape.as_list() == [3]
        assert tf.shape(tf.zeros([2, 3])).op.type == "Const"
        assert tf.size(x).op.type == "Size" and tf.rank(u).op.type == "Rank"
        assert tf.zeros_like(x).shape.as_list() == [None, 4, 5]
        assert tf.zeros(tf.shape(x)).shape.as_list() == [None, 4, 5]
        assert tf.fill([2, tf.shape(x)[0]], 1.0).shape.as_list() == [2, None]
        assert tf.one_hot(tf.placeholder(tf.int32, [None]), 7).shape.as_list() == [None, 7]
        assert tf.one_hot(tf.placeholder(tf.int32, [None]), 7, axis=0).shape.as_list() == [7, None]
        assert tf.boolean_mask(x, tf.placeholder(tf.bool, [None])).shape.as_list() == [None, 4, 5]
        assert tf.broadcast_to(tf.zeros([4, 1]), [3, 4, 6]).shape.as_list() == [3, 4, 6]


def test_op_types_and_default_names():
    with tf.Graph().as_default():
        x = tf.zeros([2, 3], name="x")
        cases = [
            (tf.reshape(x, [3, 2]), "Reshape", "Reshape"),
            (tf.transpose(x), "Transpose", "transpose"),
            (tf.concat([x, x], 0), "ConcatV2", "concat"),
            (tf.stack([x, x]), "Pack", "stack"),
            (tf.unstack(x)[0], "Unpack", "unstack"),
            (tf.split(x, 3, 1)[0], "Split", "split"),
            (tf.split(x, [1, 2], 1)[0], "SplitV", "split_1"),
            (tf.slice(x, [0, 0], [1, 1]), "Slice", "Slice"),
            (x[0], "StridedSlice", "strided_slice"),
            (tf.gather(x, [0]), "GatherV2", "GatherV2"),
            (tf.expand_dims(x, 0), "ExpandDims", "ExpandDims"),
            (tf.squeeze(x), "Squeeze", "Squeeze"),
            (tf.tile(x, [1, 1]), "Tile", "Tile"),
            (tf.pad(x, [[0, 0], [1, 1]]), "Pad", "Pad"),
            (tf.pad(x, [[0, 0], [1, 1]], constant_values=1.0), "PadV2", "PadV2"),
            (tf.pad(x, [[0, 0], [1, 1]], "REFLECT"), "MirrorPad", "MirrorPad"),
            (tf.zeros_like(x), "ZerosLike", "zeros_like"),
            (tf.ones_like(x), "OnesLike", "ones_like"),
            (tf.zeros([2]), "Const", "zeros"),
            (tf.ones([100, 100]), "Fill", "ones"),
            (tf.fill([2], 1.0), "Fill", "Fill"),
            (tf.one_hot([1], 2), "OneHot", "one_hot"),
            (tf.broadcast_to(x, [2, 2, 3]), "BroadcastTo", "BroadcastTo"),
            (tf.stack([1, 2]), "Const", "stack_1"),
        ]
        for t, op_type, name in cases:
            assert (t.op.type, t.op.name) == (op_type, name)
        assert tf.reshape(x, [6]).op.inputs[1].op.name == "Reshape_1/shape"
        assert tf.reshape(x, [6], name="flat").name == "flat:0"
        assert tf.concat([x], 0).op.type == "Identity"
