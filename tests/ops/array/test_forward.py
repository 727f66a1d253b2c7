"""Array ops' forward values against numpy, on numeric and string tensors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.array.support import STRINGS, X34, X234, run, unknown
from tests.ops.op_check import check_forward, rand


def _np_mirror(x, paddings, mode):
    return np.pad(x, paddings, mode.lower())


def _np_one_hot(idx, depth, axis=-1, on=1.0, off=0.0, dtype=np.float32):
    out = np.where(idx[..., None] == np.arange(depth), on, off).astype(dtype)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


FORWARD = {
    "reshape": (lambda x: tf.reshape(x, [4, -1]), lambda x: x.reshape(4, -1), [X234]),
    "reshape_scalar": (lambda x: tf.reshape(x, []), lambda x: x.reshape(()), [rand(1, 1)]),
    "reshape_shape_tensor": (
        lambda x, s: tf.reshape(x, s),
        lambda x, s: x.reshape(s),
        [X234, np.array([6, 4], np.int64)],
    ),
    "transpose_default": (lambda x: tf.transpose(x), lambda x: x.T, [X234]),
    "transpose_perm": (lambda x: tf.transpose(x, [1, 0, 2]), lambda x: x.transpose(1, 0, 2), [X234]),
    "transpose_perm_tensor": (
        lambda x, p: tf.transpose(x, p),
        lambda x, p: x.transpose(p),
        [X234, np.array([2, 0, 1], np.int32)],
    ),
    "invert_permutation": (
        tf.invert_permutation,
        lambda p: np.argsort(p).astype(np.int32),
        [np.array([3, 4, 0, 2, 1], np.int32)],
    ),
    "concat_axis1": (lambda x, y: tf.concat([x, y], 1), lambda x, y: np.concatenate([x, y], 1), [X234, rand(2, 5, 4)]),
    "concat_neg_axis": (lambda x: tf.concat([x, x, x], -1), lambda x: np.concatenate([x, x, x], -1), [X234]),
    "concat_one": (lambda x: tf.concat([x], 0), lambda x: x, [X34]),
    "concat_int": (
        lambda x: tf.concat([x, x], 0),
        lambda x: np.concatenate([x, x]),
        [rand(2, 3, dtype=np.int32, low=-5, high=5)],
    ),
    "stack": (lambda x, y: tf.stack([x, y]), lambda x, y: np.stack([x, y]), [X34, X34 * 2]),
    "stack_neg_axis": (lambda x, y: tf.stack([x, y], axis=-1), lambda x, y: np.stack([x, y], -1), [X34, X34 * 2]),
    "stack_mixed_python": (
        lambda x: tf.stack([x, 2.0]),
        lambda x: np.stack([x, np.float32(2.0)]),
        [np.array(1.5, np.float32)],
    ),
    "unstack": (lambda x: tf.unstack(x), lambda x: list(x), [X234]),
    "unstack_axis": (lambda x: tf.unstack(x, axis=-1), lambda x: [x[..., i] for i in range(4)], [X234]),
    "unstack_one": (lambda x: tf.unstack(x, axis=0), lambda x: [x[0]], [rand(1, 3)]),
    "split_num": (lambda x: tf.split(x, 2, axis=2), lambda x: np.split(x, 2, 2), [X234]),
    "split_one": (lambda x: tf.split(x, 1), lambda x: [x], [X34]),
    "split_sizes": (lambda x: tf.split(x, [1, -1, 2], axis=-1), lambda x: np.split(x, [1, 2], -1), [X234]),
    "split_sizes_tensor": (
        lambda x, s: tf.split(x, s, axis=1, num=2),
        lambda x, s: np.split(x, [2], 1),
        [X234, np.array([2, 1], np.int32)],
    ),
    "slice": (lambda x: tf.slice(x, [1, 0, 1], [1, -1, 2]), lambda x: x[1:2, :, 1:3], [X234]),
    "slice_tensors": (
        lambda x, b, s: tf.slice(x, b, s),
        lambda x, b, s: x[1:, 2:4],
        [X34, np.array([1, 2], np.int32), np.array([-1, 2], np.int32)],
    ),
    "strided_slice_masks": (
        lambda x: tf.strided_slice(x, [0, -1, 0], [0, 0, 3], [1, -1, 2], begin_mask=1, end_mask=3),
        lambda x: x[:, ::-1, 0:3:2],
        [X234],
    ),
    "strided_slice_shrink_newaxis": (
        lambda x: tf.strided_slice(x, [1, 0, 0], [2, 0, 2], [1, 1, 1], new_axis_mask=2, shrink_axis_mask=1, end_mask=0),
        lambda x: x[1, None, 0:2],
        [X234],
    ),
    "strided_slice_ellipsis": (
        lambda x: tf.strided_slice(x, [0, 1], [0, 2], [1, 1], ellipsis_mask=1, shrink_axis_mask=2),
        lambda x: x[..., 1],
        [X234],
    ),
    "gather": (lambda p: tf.gather(p, [2, 0, 2]), lambda p: p[[2, 0, 2]], [X34]),
    "gather_2d_indices": (lambda p: tf.gather(p, [[0, 1], [2, 2]]), lambda p: p[[[0, 1], [2, 2]]], [X34]),
    "gather_scalar_index": (lambda p: tf.gather(p, 1), lambda p: p[1], [X34]),
    "gather_axis": (
        lambda p, i: tf.gather(p, i, axis=2),
        lambda p, i: np.take(p, i, axis=2),
        [X234, np.array([[3, 0], [1, 1]], np.int64)],
    ),
    "gather_neg_axis": (lambda p: tf.gather(p, [1, 0], axis=-2), lambda p: np.take(p, [1, 0], axis=-2), [X234]),
    "gather_batch_dims": (
        lambda p, i: tf.gather(p, i, axis=1, batch_dims=1),
        lambda p, i: np.stack([p[b][i[b]] for b in range(2)]),
        [X234, np.array([[2, 0], [1, 1]], np.int32)],
    ),
    "gather_batch_dims_axis2": (
        lambda p, i: tf.gather(p, i, axis=2, batch_dims=1),
        lambda p, i: np.stack([np.take(p[b], i[b], axis=1) for b in range(2)]),
        [X234, np.array([[3], [0]], np.int32)],
    ),
    "expand_dims": (lambda x: tf.expand_dims(x, 1), lambda x: x[:, None], [X34]),
    "expand_dims_neg": (lambda x: tf.expand_dims(x, -1), lambda x: x[..., None], [X34]),
    "expand_dims_dim_arg": (lambda x: tf.expand_dims(x, dim=0), lambda x: x[None], [X34]),
    "squeeze_all": (tf.squeeze, np.squeeze, [rand(1, 3, 1, 2)]),
    "squeeze_axis": (lambda x: tf.squeeze(x, [-2]), lambda x: x.squeeze(2), [rand(1, 3, 1, 2)]),
    "squeeze_dims_arg": (lambda x: tf.squeeze(x, squeeze_dims=0), lambda x: x[0], [rand(1, 3, 1, 2)]),
    "tile": (lambda x: tf.tile(x, [2, 1, 3]), lambda x: np.tile(x, [2, 1, 3]), [X234]),
    "tile_bool": (lambda x: tf.tile(x, [3]), lambda x: np.tile(x, 3), [np.array([True, False])]),
    "pad": (lambda x: tf.pad(x, [[1, 0], [0, 2]]), lambda x: np.pad(x, [[1, 0], [0, 2]]), [X34]),
    "pad_value": (
        lambda x: tf.pad(x, [[1, 0], [0, 2]], constant_values=-3.0),
        lambda x: np.pad(x, [[1, 0], [0, 2]], constant_values=-3.0),
        [X34],
    ),
    "pad_reflect": (
        lambda x: tf.pad(x, [[2, 1], [3, 3]], "REFLECT"),
        lambda x: _np_mirror(x, [[2, 1], [3, 3]], "REFLECT"),
        [X34],
    ),
    "pad_symmetric": (
        lambda x: tf.pad(x, [[3, 0], [1, 4]], "symmetric"),
        lambda x: _np_mirror(x, [[3, 0], [1, 4]], "SYMMETRIC"),
        [X34],
    ),
    "pad_paddings_tensor": (
        lambda x, p: tf.pad(x, p),
        lambda x, p: np.pad(x, p),
        [X34, np.array([[0, 1], [2, 0]], np.int32)],
    ),
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
    "one_hot_axis0": (
        lambda i: tf.one_hot(i, 3, axis=0),
        lambda i: _np_one_hot(i, 3, axis=0),
        [np.array([[0, 2], [1, 1]], np.int64)],
    ),
    "one_hot_values": (
        lambda i: tf.one_hot(i, 3, on_value=5, off_value=-1),
        lambda i: _np_one_hot(i, 3, on=5, off=-1, dtype=np.int32),
        [np.array([2, 0], np.int32)],
    ),
    "one_hot_dtype": (
        lambda i: tf.one_hot(i, 2, dtype=tf.bool),
        lambda i: _np_one_hot(i, 2, dtype=bool),
        [np.array([1, 0], np.uint8)],
    ),
    "boolean_mask": (lambda x, m: tf.boolean_mask(x, m), lambda x, m: x[m], [X34, np.array([True, False, True])]),
    "boolean_mask_2d": (lambda x, m: tf.boolean_mask(x, m), lambda x, m: x[m], [X234, rand(2, 3, dtype=np.bool_)]),
    "boolean_mask_axis": (
        lambda x, m: tf.boolean_mask(x, m, axis=1),
        lambda x, m: x[:, m],
        [X234, np.array([False, True, True])],
    ),
    "boolean_mask_getitem": (lambda x, m: x[m], lambda x, m: x[m], [X34, np.array([True, True, False])]),
    "broadcast_to": (lambda x: tf.broadcast_to(x, [2, 3, 4]), lambda x: np.broadcast_to(x, (2, 3, 4)), [rand(3, 1)]),
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
    "boolean_mask": (
        lambda s: tf.boolean_mask(s, [[True, False, True], [False, True, True]]),
        lambda s: s[np.array([[True, False, True], [False, True, True]])],
    ),
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


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, 1, 3, 2, 1, 3], np.int32),
        np.array([2.5, -1.0, 2.5], np.float32),
        np.array([7], np.int64),
        np.array([], np.int32),
        np.array([b"x", b"y\x00", b"x", b"y"], dtype=object),
    ],
    ids=str,
)
def test_unique(values):
    check_forward(lambda x: list(tf.unique(x)), lambda x: list(_np_unique(x)), [values])


def test_unique_out_idx_and_errors():
    with tf.Graph().as_default():
        y, idx = tf.unique(tf.constant([4, 4, 1], tf.int64), out_idx=tf.int64)
        assert (y.shape.as_list(), idx.shape.as_list(), idx.dtype) == ([None], [3], tf.int64)
        assert run(idx).tolist() == [0, 0, 1]
        with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
            tf.unique(tf.zeros([2, 2]))
        with pytest.raises(errors.InvalidArgumentError, match="unique expects a 1D vector"):
            run(tf.unique(unknown(np.zeros([2, 2])))[0])


def test_string_zeros_and_report_uninitialized():
    with tf.Graph().as_default():
        assert run(tf.zeros([2], tf.string)).tolist() == [b"", b""]
        a = tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")
        with tf.Session() as sess:
            sess.run(a.initializer)
            assert sess.run(tf.report_uninitialized_variables()).tolist() == [b"b"]
