"""``tf.layers.batch_normalization`` (TF ships no Keras-2 BatchNormalization to compare with, so the reference is
TF1's arithmetic written out: real TF's ``fused_batch_norm``/``moments`` for outputs and gradients, numpy for the
moving averages over several steps), plus the variable names and ``UPDATE_OPS`` TF1 gives the layer."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

MOMENTUM, EPS = 0.9, 1e-3


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _names(fused):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4, 4, 3] if fused else [None, 3])
        training = tf.placeholder(tf.bool, [])
        tf.layers.batch_normalization(x, training=training)
        tf.layers.batch_normalization(x, training=True, name="bn", center=False)
        return (
            [v.name for v in tf.global_variables()],
            [v.name for v in tf.trainable_variables()],
            [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)],
            tf.moving_average_variables(),
        )


def test_variables_and_update_ops_as_tf1_names_them():
    global_vars, trainable, updates, moving = _names(fused=True)
    assert global_vars == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
        "bn/gamma:0",
        "bn/moving_mean:0",
        "bn/moving_variance:0",
    ]
    assert trainable == ["batch_normalization/gamma:0", "batch_normalization/beta:0", "bn/gamma:0"]
    assert updates == [
        "batch_normalization/AssignMovingAvg",
        "batch_normalization/AssignMovingAvg_1",
        "bn/AssignMovingAvg",
        "bn/AssignMovingAvg_1",
    ]
    assert moving == []  # TF1's tf.layers never add to MOVING_AVERAGE_VARIABLES (ExponentialMovingAverage does)
    _, _, updates, _ = _names(fused=False)
    # The composite path wraps each update in a cond when `training` is a tensor.
    assert updates == [
        "batch_normalization/cond_2/Merge",
        "batch_normalization/cond_3/Merge",
        "bn/AssignMovingAvg",
        "bn/AssignMovingAvg_1",
    ]


def _reference_outputs(tf1, x, gamma, beta, axes, fused, training, mean, var, dy):
    """Output and gradients (x, gamma, beta) of TF1's arithmetic for one step."""
    with tf1.Graph().as_default():
        xs, g, b = tf1.constant(x), tf1.constant(gamma), tf1.constant(beta)
        if fused:
            fmt = "NCHW" if axes == [1] else "NHWC"
            if training:
                y, bm, bv = tf1.nn.fused_batch_norm(xs, g, b, epsilon=EPS, data_format=fmt)
            else:
                y, bm, bv = tf1.nn.fused_batch_norm(xs, g, b, mean, var, EPS, fmt, is_training=False)
        else:
            reduce = [i for i in range(x.ndim) if i not in axes]
            shape = [x.shape[i] if i in axes else 1 for i in range(x.ndim)]
            bm, bv = tf1.nn.moments(xs, reduce) if training else (tf1.constant(mean), tf1.constant(var))
            r = lambda v: tf1.reshape(v, shape)  # noqa: E731
            y = tf1.nn.batch_normalization(xs, r(bm), r(bv), r(b), r(g), EPS)
        grads = tf1.gradients(y, [xs, g, b], grad_ys=tf1.constant(dy))
        with tf1.Session() as sess:
            return sess.run([y, bm, bv, *grads])


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    ("shape", "axis", "fused"),
    [
        ((6, 4, 5, 3), -1, None),  # fused NHWC
        ((6, 3, 4, 5), 1, None),  # fused NCHW
        ((6, 4, 5, 3), -1, False),  # composite over a 4-D input
        ((8, 3), -1, None),  # composite (not 4-D)
        ((4, 3, 2, 2, 5), 1, None),  # composite, channels first 5-D (broadcast parameters)
    ],
)
def test_steps_match_tf1_arithmetic(shape, axis, fused):
    real = pytest.importorskip("tensorflow")
    tf1 = real.compat.v1
    tf1.disable_eager_execution()
    ndim = len(shape)
    axes = [axis % ndim]
    channels = shape[axes[0]]
    is_fused = fused is None and ndim == 4
    gamma, beta = np.abs(_rand(channels, seed=1)) + 0.5, _rand(channels, seed=2)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape)
        training = tf.placeholder(tf.bool, [])
        layer = tf.layers.BatchNormalization(axis=axis, momentum=MOMENTUM, epsilon=EPS, fused=fused)
        y = layer(x, training=training)
        assert layer.fused is is_fused
        dy = tf.placeholder(tf.float32, shape)
        grads = tf.gradients(y, [x, layer.gamma, layer.beta], grad_ys=dy)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            layer.gamma.load(gamma, sess)
            layer.beta.load(beta, sess)
            moving_mean, moving_var = np.zeros(channels, np.float32), np.ones(channels, np.float32)
            for step, is_training in enumerate([True, True, False, True]):
                xv, dyv = _rand(*shape, seed=10 + step) * 2 + 1, _rand(*shape, seed=20 + step)
                got = sess.run([y, *grads, *updates], {x: xv, training: is_training, dy: dyv})
                expected = _reference_outputs(
                    tf1, xv, gamma, beta, axes, is_fused, is_training, moving_mean, moving_var, dyv
                )
                np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4)
                for g, e in zip(got[1:4], expected[3:6]):
                    np.testing.assert_allclose(g, e, rtol=1e-3, atol=1e-3)
                if is_training:
                    # fused: batch variance Bessel-corrected (TF's kernel); composite: biased (moments).
                    moving_mean = moving_mean - (moving_mean - expected[1]) * (1 - MOMENTUM)
                    moving_var = moving_var - (moving_var - expected[2]) * (1 - MOMENTUM)
                mm, mv = sess.run([layer.moving_mean, layer.moving_variance])
                np.testing.assert_allclose(mm, moving_mean.reshape(mm.shape), rtol=1e-5, atol=1e-5)
                np.testing.assert_allclose(mv, moving_var.reshape(mv.shape), rtol=1e-5, atol=1e-5)


def test_python_bool_training_and_reuse():
    x = _rand(5, 4, seed=3)
    with tf.Graph().as_default():
        train_out = tf.layers.batch_normalization(x, training=True, name="bn")
        infer_out = tf.layers.batch_normalization(x, training=False, name="bn", reuse=True)
        assert len(tf.global_variables()) == 4
        assert [op.name for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)] == [
            "bn/AssignMovingAvg",
            "bn/AssignMovingAvg_1",
        ]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([train_out, infer_out])
    np.testing.assert_allclose(a, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b, x / np.sqrt(1 + 1e-3), rtol=1e-5)


def test_renorm_is_refused():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="renorm"):
        tf.layers.batch_normalization(tf.zeros([2, 3]), renorm=True)
