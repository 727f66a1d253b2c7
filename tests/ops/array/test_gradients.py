"""Array ops' gradients against finite differences, with static and unknown shapes."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.array.support import run
from tests.ops.op_check import check_gradient, rand

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
        lambda x: tf.gradients(tf.reduce_sum(tf.pad(x, [[1, 1]], "REFLECT") ** 2.0), x)[0],
        [rand(3)],
    ),
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
                w = tf.constant(rand(*run(tf.shape(y), {x: x_val}), dtype=np.float64, seed=4))
                (g,) = tf.gradients(tf.reduce_sum(y * w), [x])
                grads.append(run(tf.convert_to_tensor(g), {x: x_val}))
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
            results.append(run([y, tf.convert_to_tensor(g)], feed))
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
        value = run(g, {params: rand(5, 3)})
        assert value.indices.tolist() == [0, 4, 4, 1]
        assert value.dense_shape.tolist() == [5, 3]
        np.testing.assert_array_equal(value.values, np.ones((4, 3), np.float32))
