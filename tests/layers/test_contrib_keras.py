"""``tf.contrib.layers`` initializers/regularizers and ``tf.keras.initializers`` (TF1's formulas; TF 2.21 ships
neither contrib nor Keras 2, so the reference is the arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf


def _run(t):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(t)


def test_regularizers_values_names_and_collections():
    w = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    layers = tf.contrib.layers
    with tf.Graph().as_default():
        x = tf.constant(w)
        l1, l2, both = (
            layers.l1_regularizer(0.1)(x),
            layers.l2_regularizer(0.2)(x),
            layers.l1_l2_regularizer(0.1, 0.2)(x),
        )
        assert (l1.op.name, l2.op.name, both.op.name) == ("l1_regularizer", "l2_regularizer", "l1_l2_regularizer")
        penalty = layers.apply_regularization(layers.l2_regularizer(1.0), [x, x])
        assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [penalty]
        got = _run([l1, l2, both, penalty])
    expected_l1, expected_l2 = 0.1 * np.abs(w).sum(), 0.2 * (w**2).sum() / 2
    np.testing.assert_allclose(got, [expected_l1, expected_l2, expected_l1 + expected_l2, (w**2).sum()], rtol=1e-6)
    assert layers.l2_regularizer(0.0)(None) is None
    with pytest.raises(ValueError, match="integer"):
        layers.l1_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        layers.l2_regularizer(-0.5)


def test_layers_take_contrib_regularizers_and_initializers():
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        tf.layers.dense(
            tf.zeros([2, 400]),
            300,
            kernel_initializer=tf.contrib.layers.xavier_initializer(),
            kernel_regularizer=tf.contrib.layers.l2_regularizer(0.01),
        )
        conv = tf.get_variable("c", [3, 3, 64, 64], initializer=tf.contrib.layers.variance_scaling_initializer())
        names = [t.name for t in tf.losses.get_regularization_losses()]
        kernel, c = _run([tf.global_variables()[0], conv])
    assert names == ["dense/kernel/Regularizer/l2_regularizer:0"]
    limit = np.sqrt(6.0 / (400 + 300))
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.95 * limit
    # Contrib's truncated normal: stddev sqrt(1.3 * 2 / fan_in) before truncation (~0.88 of it after).
    np.testing.assert_allclose(c.std(), np.sqrt(1.3 * 2.0 / (9 * 64)) * 0.88, rtol=0.05)


def test_keras_initializers():
    k = tf.keras.initializers
    with tf.Graph().as_default():
        u = _run(k.RandomUniform(seed=1)([2000]))
        n = _run(k.RandomNormal(seed=2)([4000]))
        g = _run(k.glorot_uniform(seed=3)([50, 70]))
        z = _run(k.get("zeros")([3]))
    assert u.min() >= -0.05 and u.max() < 0.05
    np.testing.assert_allclose(n.std(), 0.05, rtol=0.1)
    assert np.abs(g).max() <= np.sqrt(6.0 / 120)
    np.testing.assert_array_equal(z, np.zeros(3, np.float32))
    assert isinstance(k.get("he_normal"), k.VarianceScaling)
    with pytest.raises(ValueError, match="Could not interpret initializer"):
        k.get("nope")
