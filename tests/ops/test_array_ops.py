"""Array ops: forward values against numpy, gradients against finite differences, static shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.op_check import check_forward, check_gradient, rand

X234 = rand(2, 3, 4)
X34 = rand(3, 4, seed=1)
STRINGS = np.array([[b"a", b"bb", b"c"], [b"dd", b"e", b"ff"]], dtype=object)


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def _np_mirror(x, paddings, mode):
    return np.pad(x, paddings, mode.lower())


def _np_one_hot(idx, depth, axis=-1, on=1.0, off=0.0, dtype=np.float32):
    out = np.where(idx[..., None] == np.arange(depth), on, off).astype(dtype)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


# ---- forward values ---------------------------------------------------------------------------------------------
FORWARD = {
    "reshape": (lambda x: tf.reshape(x, [4, -1]), lambda x: x.reshape(4, -1), [X234]),
    "reshape_scalar": (lambda x: tf.reshape(x, []), lambda x: x.reshape(()), [rand(1, 1)]),
    "reshape_shape_tensor": (lambda x, s: tf.reshape(x, s), lambda x, s: x.reshape(s),
                             [X234, np.array([6, 4], np.int64)]),
    "transpose_default": (lambda x: tf.transpose(x), lambda x: x.T, [X234]),
    "transpose_perm": (lambda x: tf.transpose(x, [1, 0, 2]), lambda x: x.transpose(1, 0, 2), [X234]),
    "transpose_perm_tensor": (lambda x, p: tf.transpose(x, p), lambda x, p: x.transpose(p),
                              [X234, np.array([2, 0, 1], np.int32)]),
    "invert_permutation": (tf.invert_permutation, lambda p: np.argsort(p).astype(np.int32),
                           [np.array([3, 4, 0, 2, 1], np.int32)]),
    "concat_axis1": (lambda x, y: tf.concat([x, y], 1), lambda x, y: np.concatenate([x, y], 1),
                     [X234, rand(2, 5, 4)]),
    "concat_neg_axis": (lambda x: tf.concat([x, x, x], -1), lambda x: np.concatenate([x, x, x], -1), [X234]),
    "concat_one": (lambda x: tf.concat([x], 0), lambda x: x, [X34]),
    "concat_int": (lambda x: tf.concat([x, x], 0), lambda x: np.concatenate([x, x]),
                   [rand(2, 3, dtype=np.int32, low=-5, high=5)]),
    "stack": (lambda x, y: tf.stack([x, y]), lambda x, y: np.stack([x, y]), [X34, X34 * 2]),
    "stack_neg_axis": (lambda x, y: tf.stack([x, y], axis=-1), lambda x, y: np.stack([x, y], -1), [X34, X34 * 2]),
    "stack_mixed_python": (lambda x: tf.stack([x, 2.0]), lambda x: np.stack([x, np.float32(2.0)]),
                           [np.array(1.5, np.float32)]),
    "unstack": (lambda x: tf.unstack(x), lambda x: list(x), [X234]),
    "unstack_axis": (lambda x: tf.unstack(x, axis=-1), lambda x: [x[..., i] for i in range(4)], [X234]),
    "unstack_one": (lambda x: tf.unstack(x, axis=0), lambda x: [x[0]], [rand(1, 3)]),
    "split_num": (lambda x: tf.split(x, 2, axis=2), lambda x: np.split(x, 2, 2), [X234]),
    "split_one": (lambda x: tf.split(x, 1), lambda x: [x], [X34]),
    "split_sizes": (lambda x: tf.split(x, [1, -1, 2], axis=-1), lambda x: np.split(x, [1, 2], -1), [X234]),
    "split_sizes_tensor": (lambda x, s: tf.split(x, s, axis=1, num=2), lambda x, s: np.split(x, [2], 1),
                           [X234, np.array([2, 1], np.int32)]),
    "slice": (lambda x: tf.slice(x, [1, 0, 1], [1, -1, 2]), lambda x: x[1:2, :, 1:3], [X234]),
    "slice_tensors": (lambda x, b, s: tf.slice(x, b, s), lambda x, b, s: x[1:, 2:4], [X34, np.array([1, 2], np.int32),
                                                                                      np.array([-1, 2], np.int32)]),
    "strided_slice_masks": (
        lambda x: tf.strided_slice(x, [0, -1, 0], [0, 0, 3], [1, -1, 2], begin_mask=1, end_mask=3),
        lambda x: x[:, ::-1, 0:3:2], [X234]),
    "strided_slice_shrink_newaxis": (
        lambda x: tf.strided_slice(x, [1, 0, 0], [2, 0, 2], [1, 1, 1], new_axis_mask=2, shrink_axis_mask=1,
                                   end_mask=0),
        lambda x: x[1, None, 0:2], [X234]),
    "strided_slice_ellipsis": (
        lambda x: tf.strided_slice(x, [0, 1], [0, 2], [1, 1], ellipsis_mask=1, shrink_axis_mask=2),
        lambda x: x[..., 1], [X234]),
    "gather": (lambda p: tf.gather(p, [2, 0, 2]), lambda p: p[[2, 0, 2]], [X34]),
    "gather_2d_indices": (lambda p: tf.gather(p, [[0, 1], [2, 2]]), lambda p: p[[[0, 1], [2, 2]]], [X34]),
    "gather_scalar_index": (lambda p: tf.gather(p, 1), lambda p: p[1], [X34]),
    "gather_axis": (lambda p, i: tf.gather(p, i, axis=2), lambda p, i: np.take(p, i, axis=2),
                    [X234, np.array([[3, 0], [1, 1]], np.int64)]),
    "gather_neg_axis": (lambda p: tf.gather(p, [1, 0], axis=-2), lambda p: np.take(p, [1, 0], axis=-2), [X234]),
    "gather_batch_dims": (lambda p, i: tf.gather(p, i, axis=1, batch_dims=1),
                          lambda p, i: np.stack([p[b][i[b]] for b in range(2)]),
                          [X234, np.array([[2, 0], [1, 1]], np.int32)]),
    "gather_batch_dims_axis2": (lambda p, i: tf.gather(p, i, axis=2, batch_dims=1),
                                lambda p, i: np.stack([np.take(p[b], i[b], axis=1) for b in range(2)]),
                                [X234, np.array([[3], [0]], np.int32)]),
    "expand_dims": (lambda x: tf.expand_dims(x, 1), lambda x: x[:, None], [X34]),
    "expand_dims_neg": (lambda x: tf.expand_dims(x, -1), lambda x: x[..., None], [X34]),
    "expand_dims_dim_arg": (lambda x: tf.expand_dims(x, dim=0), lambda x: x[None], [X34]),
    "squeeze_all": (tf.squeeze, np.squeeze, [rand(1, 3, 1, 2)]),
    "squeeze_axis": (lambda x: tf.squeeze(x, [-2]), lambda x: x.squeeze(2), [rand(1, 3, 1, 2)]),
    "squeeze_dims_arg": (lambda x: tf.squeeze(x, squeeze_dims=0), lambda x: x[0], [rand(1, 3, 1, 2)]),
    "tile": (lambda x: tf.tile(x, [2, 1, 3]), lambda x: np.tile(x, [2, 1, 3]), [X234]),
    "tile_bool": (lambda x: tf.tile(x, [3]), lambda x: np.tile(x, 3), [np.array([True, False])]),
    "pad": (lambda x: tf.pad(x, [[1, 0], [0, 2]]), lambda x: np.pad(x, [[1, 0], [0, 2]]), [X34]),
    "pad_value": (lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=-3.0),
                  lambda x: np.pad(x, [[1, 0], [0, 2]], constant_values=-3.0), [X34]),
    "pad_reflect": (lambda x: tf.pad(x, [[2, 1], [3, 3]], "REFLECT"),
                    lambda x: _np_mirror(x, [[2, 1], [3, 3]], "REFLECT"), [X34]),
    "pad_symmetric": (lambda x: tf.pad(x, [[3, 0], [1, 4]], "symmetric"),
                      lambda x: _np_mirror(x, [[3, 0], [1, 4]], "SYMMETRIC"), [X34]),
    "pad_paddings_tensor": (lambda x, p: tf.pad(x, p), lambda x, p: np.pad(x, p), [X34, np.array([[0, 1], [2, 0]],
                                                                                                  np.int32)]),
    "shape": (tf.shape, lambda x: np.array(x.shape, np.int32), [X234]),
    "shape_int64": (lambda x: tf.shape(x, out_type=tf.int64), lambda x: np.array(x.shape, np.int64), [X234]),
    "size": (tf.size, lambda x: np.int32(x.size), [X234]),
    "rank": (tf.rank, lambda x: np.int32(x.ndim), [X234]),
    "zeros_like": (tf.zeros_like, np.zeros_like, [X234]),
    "zeros_like_bool": (tf.zeros_like, np.zeros_like, [np.array([True, False])]),
    "ones_like": (tf.ones_like, np.ones_like, [rand(2, 3, dtype=np.int64)]),
    "ones_like_dtype": (lambda x: tf.ones_like(x, dtype=tf.int32), lambda x: np.ones(x.shape, np.int32), [X34]),
    "zeros_like_dtype": (lambda x: tf.zeros_like(x, dtype=tf.float64), lambda x: np.zeros(x.shape), [X34]),
    "zeros": (lambda: tf.zeros([2, 3]), lambda: np.zeros((2, 3), np.float32), []),
    "zeros_large": (lambda: tf.zeros([40, 30], tf.int64), lambda: np.zeros((40, 30), np.int64), []),
    "zeros_shape_tensor": (lambda s: tf.zeros(s, tf.bool), lambda s: np.zeros(s, bool), [np.array([2, 2], np.int32)]),
    "ones": (lambda: tf.ones((3,), tf.int32), lambda: np.ones(3, np.int32), []),
    "ones_shape_tensor": (lambda s: tf.ones(s), lambda s: np.ones(s, np.float32), [np.array([1, 2], np.int32)]),
    "fill": (lambda v: tf.fill([2, 3], v), lambda v: np.full((2, 3), v), [np.array(1.5, np.float32)]),
    "fill_dims_tensor": (lambda d: tf.fill(d, 7), lambda d: np.full(d, 7, np.int32), [np.array([3, 1], np.int32)]),
    "one_hot": (lambda i: tf.one_hot(i, 4), lambda i: _np_one_hot(i, 4), [np.array([0, 3, -1, 5], np.int32)]),
    "one_hot_axis0": (lambda i: tf.one_hot(i, 3, axis=0), lambda i: _np_one_hot(i, 3, axis=0),
                      [np.array([[0, 2], [1, 1]], np.int64)]),
    "one_hot_values": (lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1),
                       lambda i: _np_one_hot(i, 3, on=5, off=-1, dtype=np.int32), [np.array([2, 0], np.int32)]),
    "one_hot_dtype": (lambda i: tf.one_hot(i, 2, dtype=tf.bool), lambda i: _np_one_hot(i, 2, dtype=bool),
                      [np.array([1, 0], np.uint8)]),
    "boolean_mask": (lambda x, m: tf.boolean_mask(x, m), lambda x, m: x[m], [X34, np.array([True, False, True])]),
    "boolean_mask_2d": (lambda x, m: tf.boolean_mask(x, m), lambda x, m: x[m],
                        [X234, rand(2, 3, dtype=np.bool_)]),
    "boolean_mask_axis": (lambda x, m: tf.boolean_mask(x, m, axis=1), lambda x, m: x[:, m],
                          [X234, np.array([False, True, True])]),
    "boolean_mask_getitem": (lambda x, m: x[m], lambda x, m: x[m], [X34, np.array([True, True, False])]),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [2, 3, 4]), lambda x: np.broadcast_to(x, (2, 3, 4)),
                     [rand(3, 1)]),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward(name):
    build, reference, inputs = FORWARD[name]
    check_forward(build, reference, inputs)


STRING_FORWARD = {
    "shape": (tf.shape, lambda s: np.array(s.shape, np.int32)),
    "size": (tf.size, lambda s: np.int32(s.size)),
    "rank": (tf.rank, lambda s: np.int32(s.ndim)),
    "reshape": (lambda s: tf.reshape(s, [-1]), lambda s: s.reshape(-1)),
    "stack": (lambda s: tf.stack([s, s], axis=1), lambda s: np.stack([s, s], 1)),
    "unstack": (lambda s: tf.unstack(s), list),
    "concat": (lambda s: tf.concat([s, s], 1), lambda s: np.concatenate([s, s], 1)),
    "gather": (lambda s: tf.gather(s, [2, 0], axis=1), lambda s: s[:, [2, 0]]),
    "gather_batch": (lambda s: tf.gather(s, [[1], [2]], axis=1, batch_dims=1), lambda s: s[[[0], [1]], [[1], [2]]]),
    "boolean_mask": (lambda s: tf.boolean_mask(s, [[True, False, True], [False, True, True]]),
                     lambda s: s[np.array([[True, False, True], [False, True, True]])]),
    "expand_dims": (lambda s: tf.expand_dims(s, 0), lambda s: s[None]),
    "squeeze": (lambda s: tf.squeeze(tf.expand_dims(s, 0)), lambda s: s),
    "transpose": (tf.transpose, lambda s: s.T),
    "getitem": (lambda s: s[::-1, 1:], lambda s: s[::-1, 1:]),
    "slice": (lambda s: tf.slice(s, [0, 1], [1, 2]), lambda s: s[0:1, 1:3]),
    "split": (lambda s: tf.split(s, [1, 2], axis=1), lambda s: np.split(s, [1], 1)),
    "tile": (lambda s: tf.tile(s, [1, 2]), lambda s: np.tile(s, [1, 2])),
    "pad": (lambda s: tf.pad(s, [[1, 0], [0, 0]]), lambda s: np.concatenate([np.full((1, 3), b"", object), s])),
    "pad_reflect": (lambda s: tf.pad(s, [[0, 0], [1, 1]], "REFLECT"), lambda s: np.pad(s, [[0, 0], [1, 1]], "reflect")),
    "zeros_like": (tf.zeros_like, lambda s: np.full(s.shape, b"", object)),
    "fill": (lambda s: tf.fill([2], s[0, 1]), lambda s: np.full(2, s[0, 1], object)),
    "broadcast_to": (lambda s: tf.broadcast_to(s[0], [2, 3]), lambda s: np.broadcast_to(s[0], (2, 3))),
}


@pytest.mark.parametrize("name", sorted(STRING_FORWARD))
def test_string_forward(name):
    build, reference = STRING_FORWARD[name]
    check_forward(build, reference, [STRINGS])


def _np_unique(x):
    seen = {}
    idx = [seen.setdefault(v, len(seen)) for v in x.tolist()]
    return np.array(list(seen), dtype=x.dtype), np.array(idx, np.int32)


@pytest.mark.parametrize("values", [np.array([3, 1, 3, 2, 1, 3], np.int32), np.array([2.5, -1.0, 2.5], np.float32),
                                    np.array([7], np.int64), np.array([], np.int32),
                                    np.array([b"x", b"y\x00", b"x", b"y"], dtype=object)], ids=str)
def test_unique(values):
    check_forward(lambda x: list(tf.unique(x)), lambda x: list(_np_unique(x)), [values])


def test_unique_out_idx_and_errors():
    with tf.Graph().as_default():
        y, idx = tf.unique(tf.constant([4, 4, 1], tf.int64), out_idx=tf.int64)
        assert (y.shape.as_list(), idx.shape.as_list(), idx.dtype) == ([None], [3], tf.int64)
        assert _run(idx).tolist() == [0, 0, 1]
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.unique(tf.zeros([2, 2]))
        with pytest.raises(errors.InvalidArgumentError, match="unique expects a 1D vector"):
            _run(tf.unique(_unknown(np.zeros([2, 2])))[0])


def test_string_zeros_and_report_uninitialized():
    with tf.Graph().as_default():
        assert _run(tf.zeros([2], tf.string)).tolist() == [b"", b""]
        a = tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")
        with tf.Session() as sess:
            sess.run(a.initializer)
            assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"b"]


# ---- Python indexing (Tensor.__getitem__) against numpy ---------------------------------------------------------
X3456 = rand(3, 4, 5, 6, seed=3)
INDEX_EXPRESSIONS = [
    (1,), (-1,), (slice(None),), (slice(1, 3),), (slice(None, None, -1),), (slice(None, None, 2),),
    (slice(3, 0, -2),), (slice(-2, None),), (slice(-10, 10),), (slice(10, 20),), (Ellipsis,), (Ellipsis, 0),
    (0, Ellipsis, -1), (None,), (None, 1, None), (slice(None), None, 2), (Ellipsis, None),
    (1, slice(None, None, -1), Ellipsis, slice(1, 5, 3)), (slice(None, None, -3), 2, None, slice(4, 0, -1)),
    (-1, -2, -3, -4), (slice(2, 1),), (slice(0, 3), slice(None), slice(4, None, -2), None),
    (None, Ellipsis, None), (slice(1, None, -1),), (2, slice(-1, -5, -1)),
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
        got = _run([x[np.int64(1)], x[:, x.shape[1] - 1], x[np.int32(0), : np.int64(2)]])
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


# ---- gradients ----------------------------------------------------------------------------------------------------
GRADIENTS = {
    "reshape": (lambda x: tf.reshape(x, [-1, 2]), [rand(2, 3)]),
    "transpose": (lambda x: tf.transpose(x, [2, 0, 1]), [rand(2, 3, 2)]),
    "transpose_default": (tf.transpose, [rand(2, 3)]),
    "concat": (lambda x, y: tf.concat([x, y, x], axis=-1), [rand(2, 2), rand(2, 3)]),
    "stack": (lambda x, y: tf.stack([x, y], axis=1), [rand(2, 3), rand(2, 3, seed=2)]),
    "unstack": (lambda x: tf.unstack(x, axis=1), [rand(2, 3)]),
    "unstack_partial_use": (lambda x: tf.unstack(x)[1] * 2.0, [rand(3, 2)]),
    "split": (lambda x: tf.split(x, 2, axis=1), [rand(2, 4)]),
    "split_v": (lambda x: tf.split(x, [1, -1], axis=0), [rand(3, 2)]),
    "slice": (lambda x: tf.slice(x, [1, 0], [1, -1]), [rand(3, 2)]),
    "strided_slice": (lambda x: tf.strided_slice(x, [2, 0], [0, 3], [-1, 2], end_mask=1), [rand(3, 4)]),
    "gather_axis0": (lambda p: tf.gather(p, [2, 0, 2]), [rand(3, 2)]),
    "gather_axis0_2d_indices": (lambda p: tf.gather(p, [[0, 1], [1, 1]]), [rand(3, 2)]),
    "gather_axis1": (lambda p: tf.gather(p, [[1, 0], [1, 1]], axis=1), [rand(2, 3, 2)]),
    "gather_batch_dims": (lambda p: tf.gather(p, [[1, 1, 0], [2, 0, 0]], axis=1, batch_dims=1), [rand(2, 3, 2)]),
    "expand_dims": (lambda x: tf.expand_dims(x, 1), [rand(2, 3)]),
    "squeeze": (lambda x: tf.squeeze(x), [rand(2, 1, 3)]),
    "tile": (lambda x: tf.tile(x, [2, 3]), [rand(2, 2)]),
    "pad": (lambda x: tf.pad(x, [[1, 2], [0, 1]]), [rand(2, 3)]),
    "pad_v2": (lambda x: tf.pad(x, [[1, 0], [2, 1]], constant_values=2.0), [rand(2, 3)]),
    "pad_reflect": (lambda x: tf.pad(x, [[2, 1], [1, 2]], "REFLECT"), [rand(3, 3)]),
    "pad_symmetric": (lambda x: tf.pad(x, [[3, 1], [0, 2]], "SYMMETRIC"), [rand(3, 2)]),
    "fill": (lambda v: tf.fill([2, 3], v), [np.array(0.5)]),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [2, 3, 2]), [rand(3, 1)]),
    "boolean_mask": (lambda x: tf.boolean_mask(x, [True, False, True]), [rand(3, 2)]),
    "indexed_slices_through_reshape": (lambda x: tf.gather(tf.reshape(x, [3, 2]), [2, 2, 0]), [rand(2, 3)]),
    "gather_twice": (lambda p: tf.gather(p, [0, 2]) * tf.gather(p, [1, 1]), [rand(3, 2)]),
    "strided_slice_grad_grad": (lambda x: tf.gradients(tf.reduce_sum(x[::-1, 1] * x[::-1, 1]), x)[0], [rand(3, 2)]),
    "mirror_pad_grad_grad": (
        lambda x: tf.gradients(tf.reduce_sum(tf.pad(x, [[1, 1]], "REFLECT") ** 2.0), x)[0], [rand(3)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradient(name):
    build, inputs = GRADIENTS[name]
    check_gradient(build, inputs)


def test_gradients_with_unknown_shapes():
    """The dynamic-shape gradient paths (no static shapes to fold) give the same values."""
    x_val = rand(3, 4, seed=9)
    builders = [
        lambda x: tf.reshape(x, [-1]),
        lambda x: tf.concat([x, x[:, :2]], 1),
        lambda x: tf.slice(x, [1, 1], [2, -1]),
        lambda x: tf.gather(x, [1, 1, 0], axis=1),
        lambda x: tf.tile(x, [1, 2]),
        lambda x: tf.squeeze(tf.expand_dims(x, 0)),
        lambda x: tf.pad(x, [[1, 0], [0, 2]]),
        lambda x: x[::-1, 1:],
    ]
    for build in builders:
        grads = []
        for shape in ([3, 4], [None, None]):
            with tf.Graph().as_default():
                x = tf.placeholder(tf.float64, shape)
                y = build(x)
                w = tf.constant(rand(*_run(tf.shape(y), {x: x_val}), dtype=np.float64, seed=4))
                (g,) = tf.gradients(tf.reduce_sum(y * w), [x])
                grads.append(_run(tf.convert_to_tensor(g), {x: x_val}))
        np.testing.assert_allclose(grads[0], grads[1])


DYNAMIC_CASES = {
    "transpose": lambda x, ax: tf.transpose(x),
    "concat": lambda x, ax: tf.concat([x, x * 2.0], ax),
    "concat_neg_axis": lambda x, ax: tf.concat([x, x * 2.0], ax - 3),
    "gather": lambda x, ax: tf.gather(x, [[2, 0], [1, 1]], axis=ax),
    "gather_batch_dims": lambda x, ax: tf.gather(x, [[2, 0], [1, 1], [0, 0]], axis=ax, batch_dims=1),
    "split": lambda x, ax: tf.split(x, 2, axis=ax)[1],
    "split_v": lambda x, ax: tf.split(x, [3, 1], axis=ax)[0],
    "expand_dims": lambda x, ax: tf.expand_dims(x, ax),
    "tile": lambda x, ax: tf.tile(x, tf.stack([ax, 2])),
    "slice": lambda x, ax: tf.slice(x, tf.stack([ax, 0]), [-1, 2]),
    "pad": lambda x, ax: tf.pad(x, tf.stack([tf.stack([ax, 0]), [0, 2]])),
    "pad_reflect": lambda x, ax: tf.pad(x, [[1, ax], [0, 2]], "REFLECT"),
    "getitem": lambda x, ax: x[ax:, ::-1],
    "broadcast_to": lambda x, ax: tf.broadcast_to(x[:, :1], tf.stack([3, ax + 2])),
    "boolean_mask": lambda x, ax: tf.boolean_mask(x, [True, False, True, True], axis=ax),
    "reshape": lambda x, ax: tf.reshape(x, tf.stack([ax + 1, -1])),
}


@pytest.mark.parametrize("name", sorted(DYNAMIC_CASES))
def test_dynamic_axes_and_unknown_rank_match_static(name):
    """Axis/shape arguments known only at run time, on inputs of unknown rank, give the static results."""
    build = DYNAMIC_CASES[name]
    x_val = rand(3, 4, seed=2).astype(np.float64)
    results = []
    for dynamic in (False, True):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float64, None if dynamic else [3, 4])
            ax = tf.placeholder(tf.int32, []) if dynamic else 1
            y = build(x, ax)
            (g,) = tf.gradients(tf.reduce_sum(y * y), [x])
            feed = {x: x_val, ax: 1} if dynamic else {x: x_val}
            results.append(_run([y, tf.convert_to_tensor(g)], feed))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected)


def test_gather_gradient_is_indexed_slices():
    with tf.Graph().as_default():
        params = tf.placeholder(tf.float32, [5, 3])
        indices = tf.constant([[0, 4], [4, 1]])
        (g,) = tf.gradients(tf.reduce_sum(tf.gather(params, indices)), [params])
        assert isinstance(g, tf.IndexedSlices)
        assert g.values.shape.as_list() == [4, 3]
        assert g.indices.shape.as_list() == [4]
        value = _run(g, {params: rand(5, 3)})
        assert value.indices.tolist() == [0, 4, 4, 1]
        assert value.dense_shape.tolist() == [5, 3]
        np.testing.assert_array_equal(value.values, np.ones((4, 3), np.float32))


# ---- static shape inference --------------------------------------------------------------------------------------
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
            (tf.reshape(x, [3, 2]), "Reshape", "Reshape"), (tf.transpose(x), "Transpose", "transpose"),
            (tf.concat([x, x], 0), "ConcatV2", "concat"), (tf.stack([x, x]), "Pack", "stack"),
            (tf.unstack(x)[0], "Unpack", "unstack"), (tf.split(x, 3, 1)[0], "Split", "split"),
            (tf.split(x, [1, 2], 1)[0], "SplitV", "split_1"), (tf.slice(x, [0, 0], [1, 1]), "Slice", "Slice"),
            (x[0], "StridedSlice", "strided_slice"), (tf.gather(x, [0]), "GatherV2", "GatherV2"),
            (tf.expand_dims(x, 0), "ExpandDims", "ExpandDims"), (tf.squeeze(x), "Squeeze", "Squeeze"),
            (tf.tile(x, [1, 1]), "Tile", "Tile"), (tf.pad(x, [[0, 0], [1, 1]]), "Pad", "Pad"),
            (tf.pad(x, [[0, 0], [1, 1]], constant_values=1.0), "PadV2", "PadV2"),
            (tf.pad(x, [[0, 0], [1, 1]], "REFLECT"), "MirrorPad", "MirrorPad"),
            (tf.zeros_like(x), "ZerosLike", "zeros_like"), (tf.ones_like(x), "OnesLike", "ones_like"),
            (tf.zeros([2]), "Const", "zeros"), (tf.ones([100, 100]), "Fill", "ones"),
            (tf.fill([2], 1.0), "Fill", "Fill"), (tf.one_hot([1], 2), "OneHot", "one_hot"),
            (tf.broadcast_to(x, [2, 2, 3]), "BroadcastTo", "BroadcastTo"),
            (tf.stack([1, 2]), "Const", "stack_1"),
        ]
        for t, op_type, name in cases:
            assert (t.op.type, t.op.name) == (op_type, name)
        assert tf.reshape(x, [6]).op.inputs[1].op.name == "Reshape_1/shape"
        assert tf.reshape(x, [6], name="flat").name == "flat:0"
        assert tf.concat([x], 0).op.type == "Identity"


# ---- errors ---------------------------------------------------------------------------------------------------------
BUILD_ERRORS = [
    (lambda: tf.reshape(tf.zeros([6]), [4]), ValueError, r"Cannot reshape a tensor with 6 elements to shape \[4\]"),
    (lambda: tf.reshape(tf.zeros([6]), [4, -1]), ValueError, "evenly divisible by 4 but is 6"),
    (lambda: tf.reshape(tf.zeros([6]), [-1, -1]), ValueError, "Only one input size may be -1, not both 0 and 1"),
    (lambda: tf.reshape(tf.zeros([6]), [-2, 3]), ValueError, "Invalid value in tensor used for shape: -2"),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0]), ValueError, "Dimension must be 2 but is 1"),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0, 0]), ValueError, r"1 is missing from \{0,0\}"),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0, 2]), ValueError, "perm dim 2 is out of range of input rank 2"),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0), ValueError,
     "Dimension 1 in both shapes must be equal, but are 3 and 4"),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2])], 0), ValueError, "Shape must be rank 2 but is rank 1"),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 3])], 2), ValueError, "Shape must be at least rank 3"),
    (lambda: tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], 0), TypeError, r"have types \[float32, int32\]"),
    (lambda: tf.stack([tf.zeros([2, 3]), tf.zeros([2, 4])]), ValueError, "but are 3 and 4"),
    (lambda: tf.stack([tf.zeros([2, 3]), tf.zeros([2, 3])], axis=3), ValueError, r"`axis` = 3 not in range \[-3, 3\)"),
    (lambda: tf.unstack(tf.placeholder(tf.float32, [None, 3])), ValueError, r"Cannot infer argument `num`"),
    (lambda: tf.unstack(tf.zeros([2, 3]), num=3), ValueError, "Dimension must be 3 but is 2"),
    (lambda: tf.split(tf.zeros([4, 3]), 3), ValueError, "evenly divisible by 3 but is 4"),
    (lambda: tf.split(tf.zeros([4, 3]), [1, 5]), ValueError, r"can't split axis of size 4 into pieces of size \[1,5\]"),
    (lambda: tf.split(tf.zeros([4, 3]), [1, -1, -1]), ValueError, "size_splits can only have one -1"),
    (lambda: tf.split(tf.zeros([4, 3]), 2, axis=2), ValueError, r"given by scalar input 2 must be in range \[-2, 2\)"),
    (lambda: tf.split(tf.zeros([4]), tf.placeholder(tf.int32, [None])), ValueError, "Cannot infer argument `num`"),
    (lambda: tf.slice(tf.zeros([4, 3]), [5, 0], [-1, 1]), ValueError, r"Expected begin\[0\] in \[0, 4\], but got 5"),
    (lambda: tf.slice(tf.zeros([4, 3]), [1, 0], [4, 1]), ValueError, r"Expected size\[0\] in \[0, 3\], but got 4"),
    (lambda: tf.slice(tf.zeros([4, 3]), [1], [1]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.zeros([3, 4])[5], ValueError, "slice index 5 of dimension 0 out of bounds"),
    (lambda: tf.zeros([3, 4])[-4], ValueError, "slice index -1 of dimension 0 out of bounds"),
    (lambda: tf.zeros([3, 4])[1, 2, 3], ValueError, "Index out of range using input dim 2; input has only 2 dims"),
    (lambda: tf.zeros([3, 4])[::0], ValueError, r"strides\[0\] must be non-zero"),
    (lambda: tf.gather(tf.zeros([3, 4]), [0, 1], axis=2), ValueError, "Shape must be at least rank 3"),
    (lambda: tf.gather(tf.zeros([3, 4]), [0.5]), TypeError, "parameter 'indices' has DataType float32"),
    (lambda: tf.expand_dims(tf.zeros([3, 4]), 3), ValueError, r"dim 3 not in the interval \[-3, 2\]"),
    (lambda: tf.expand_dims(tf.zeros([3]), 0, dim=0), ValueError, "Cannot specify both 'axis' and 'dim'"),
    (lambda: tf.squeeze(tf.zeros([3, 1]), [0]), ValueError, r"Can not squeeze dim\[0\], expected a dimension of 1"),
    (lambda: tf.squeeze(tf.zeros([3, 1]), [2]), ValueError, r"squeeze_dims\[0\] not in \[-2,2\)"),
    (lambda: tf.tile(tf.zeros([3, 1]), [2]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.tile(tf.zeros([3, 1]), [2, -1]), ValueError, r"Expected multiples\[1\] >= 0, but got -1"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[1, 1], [-1, 0]]), ValueError, "Paddings must be non-negative"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[3, 1], [0, 0]], "REFLECT"), ValueError,
     "paddings must be less than the dimension size: 3, 1 not less than 3"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[4, 1], [0, 0]], "SYMMETRIC"), ValueError,
     "paddings must be no greater than the dimension size: 4, 1 greater than 3"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[1, 1], [0, 0]], "FOO"), ValueError, "Received `mode` = FOO"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[1, 1]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.fill([2, 3], [1.0]), ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: tf.fill([2, -3], 1.0), ValueError, "Invalid value in tensor used for shape: -3"),
    (lambda: tf.one_hot([1, 2], 3, on_value=1.0, off_value=0), TypeError, "of on_value does not match"),
    (lambda: tf.one_hot([1.0, 2.0], 3), TypeError, "parameter 'indices' has DataType float32"),
    (lambda: tf.one_hot([1, 2], -1), ValueError, "must be non-negative but is -1"),
    (lambda: tf.one_hot([1, 2], 3, axis=3), ValueError, "Expected axis to be -1 or between"),
    (lambda: tf.boolean_mask(tf.zeros([3]), True), ValueError, "mask cannot be scalar"),
    (lambda: tf.boolean_mask(tf.zeros([3]), [True, False]), ValueError, "are incompatible"),
    (lambda: tf.boolean_mask(tf.zeros([3]), tf.placeholder(tf.bool)), ValueError, "Number of mask dimensions"),
    (lambda: tf.broadcast_to(tf.zeros([3]), [2, 4]), ValueError, "Dimensions must be equal, but are 3 and 4"),
    (lambda: tf.broadcast_to(tf.zeros([3, 2]), [3]), ValueError, "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.ones_like(tf.constant(["a"])), TypeError, "string"),
    (lambda: tf.reshape(tf.zeros([2]), [1.5]), TypeError, "parameter 'shape' has DataType float"),
    (lambda: tf.zeros([None, 2]), ValueError, "needs every dimension"),
]


@pytest.mark.parametrize("case", range(len(BUILD_ERRORS)))
def test_build_time_errors(case):
    build, exc, pattern = BUILD_ERRORS[case]
    with tf.Graph().as_default():
        with pytest.raises(exc, match=pattern):
            build()


def _unknown(value, dtype=tf.float32):
    return tf.placeholder_with_default(np.asarray(value, dtype=dtype.as_numpy_dtype), None)


RUNTIME_ERRORS = [
    (lambda: tf.reshape(_unknown(np.zeros(6)), [4]), "Input to reshape is a tensor with 6 values, but the requested "
                                                     "shape has 4"),
    (lambda: tf.reshape(_unknown(np.zeros(6)), [4, -1]), "requested shape requires a multiple of 4"),
    (lambda: tf.reshape(tf.zeros([6]), _unknown([-1, -1], tf.int32)), "Only one input size may be -1, not both 0 "
                                                                      "and 1"),
    (lambda: tf.transpose(_unknown(np.zeros([2, 3])), _unknown([0, 0], tf.int32)), r"1 is missing from \{0,0\}"),
    (lambda: tf.concat([_unknown(np.zeros([2, 3])), tf.zeros([2, 4])], 0),
     r"Dimension 1 in both shapes must be equal: shape\[0\] = \[2,3\] vs. shape\[1\] = \[2,4\]"),
    (lambda: tf.stack([_unknown(np.zeros([2])), tf.zeros([3])]), "Shapes of all inputs must match"),
    (lambda: tf.unstack(_unknown(np.zeros([2, 3])), num=3), r"Input shape axis 0 must equal 3, got shape \[2,3\]"),
    (lambda: tf.split(_unknown(np.zeros([4, 3])), 3), "should evenly divide the split dimension, but got split_dim 0 "
                                                      r"\(size = 4\) and num_split 3"),
    (lambda: tf.split(_unknown(np.zeros([4, 3])), [1, 5]), "Determined shape must either match input shape"),
    (lambda: tf.slice(_unknown(np.zeros([4, 3])), [1, 0], [4, 1]), r"Expected size\[0\] in \[0, 3\], but got 4"),
    (lambda: tf.slice(_unknown(np.zeros([4, 3])), [5, 0], [-1, 1]), r"Expected begin\[0\] in \[0, 4\], but got 5"),
    (lambda: _unknown(np.zeros([2, 2]))[5], "slice index 5 of dimension 0 out of bounds"),
    (lambda: _unknown(np.zeros([2, 2]))[0, 0, 0], "Index out of range using input dim 2"),
    (lambda: tf.gather(tf.zeros([3, 4]), [0, 5]), r"indices\[1\] = 5 is not in \[0, 3\)"),
    (lambda: tf.gather(tf.zeros([3, 4]), [[0, 1], [-1, 0]]), r"indices\[1,0\] = -1 is not in \[0, 3\)"),
    (lambda: tf.gather(tf.zeros([3, 4]), [7], axis=1), r"indices\[0\] = 7 is not in \[0, 4\)"),
    (lambda: tf.expand_dims(_unknown(np.zeros([3, 4])), 3), "Tried to expand dim index 3 for tensor with 2 dimensions"),
    (lambda: tf.squeeze(_unknown(np.zeros([3, 1])), [0]), r"Can not squeeze dim\[0\], expected a dimension of 1, "
                                                           "got 3"),
    (lambda: tf.tile(tf.zeros([3, 1]), _unknown([2, -1], tf.int32)), r"Expected multiples\[1\] >= 0, but got -1"),
    (lambda: tf.pad(_unknown(np.zeros([3, 1])), [[3, 1], [0, 0]], "REFLECT"),
     "paddings must be less than the dimension size: 3, 1 not less than 3"),
    (lambda: tf.pad(tf.zeros([3, 1]), _unknown([[1, 1], [-1, 0]], tf.int32)), "Paddings must be non-negative: -1 0"),
    (lambda: tf.fill(_unknown([2, -3], tf.int32), 1.0), "Dimension -3 must be >= 0"),
    (lambda: tf.broadcast_to(_unknown(np.zeros([3])), [2, 4]), r"Incompatible shapes: \[3\] vs. \[2,4\]"),
    (lambda: tf.invert_permutation(_unknown([0, 0], tf.int32)), "0 is duplicated in the input"),
]


@pytest.mark.parametrize("case", range(len(RUNTIME_ERRORS)))
def test_runtime_errors(case):
    build, pattern = RUNTIME_ERRORS[case]
    with tf.Graph().as_default():
        t = build()
        with pytest.raises(errors.InvalidArgumentError, match=pattern):
            _run(t)


# ---- against real TensorFlow ------------------------------------------------------------------------------------
@pytest.mark.tf_oracle
def test_static_slice_shapes_match_tensorflow():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    shapes = [[None, 4, 5], [3, None, 5], [None, None, None]]
    specs = [
        (0,), (slice(1, None),), (Ellipsis, slice(None, None, -2)), (None, 1, slice(3, 0, -1)),
        (slice(None), None, -1), (slice(-2, None), 0, slice(None, None, 2)),
    ]
    for shape in shapes:
        for spec in specs:
            with tf1.Graph().as_default():
                expected = tf1.placeholder(tf1.float32, shape)[spec].shape.as_list()
            with tf.Graph().as_default():
                got = tf.placeholder(tf.float32, shape)[spec].shape.as_list()
            assert got == expected, (shape, spec)
