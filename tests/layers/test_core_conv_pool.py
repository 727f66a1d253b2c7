"""``tf.layers`` dense/conv/pool/dropout/flatten against TF1's own layers: variable names, shapes and
collections, output names and static shapes, values and gradients (our variables get TF's initial values)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.layers.conftest import assert_same, run_both

pytestmark = pytest.mark.tf_oracle


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def test_dense_stack_names_reuse_regularizers(tf1, tf_layers):
    def build(m, layers, x, x3):
        reg = lambda w: m.reduce_sum(m.abs(w)) * 0.01  # noqa: E731
        a = layers.dense(x, 5, activation=m.nn.relu, kernel_regularizer=reg, bias_regularizer=reg)
        shared = layers.Dense(3, name="shared")
        b, c = shared(a), shared(a * 2.0)
        d = layers.dense(x, 3, name="fc", use_bias=False)
        e = layers.dense(x, 3, name="fc", use_bias=False, reuse=True)
        with m.variable_scope("outer"):
            f = layers.dense(x, 2, trainable=False, kernel_initializer=m.constant_initializer(0.5))
        g = layers.dense(x3, 2, activation=m.nn.tanh)
        return [b, c, d, e, f, g]

    expected, got = run_both(tf1, tf_layers, build, [_rand(4, 6, seed=1), _rand(4, 3, 6, seed=2)])
    assert_same(expected, got, names=False)
    # TF's tensordot names differ inside a rank-3 dense; every other output is named as TF names it.
    assert got["out_names"][:5] == expected["out_names"][:5]


def test_layer_objects_name_and_weights(tf1, tf_layers):
    for m, layers in ((tf1, tf_layers), (tf, tf.layers)):
        with m.Graph().as_default():
            a, b = layers.Dense(2), layers.Dense(2)
            x = m.zeros([1, 3])
            b(x), a(x)
            names = (a.name, b.name, a.scope_name, b.scope_name, [w.name for w in a.weights])
            if m is tf1:
                expected = names
    assert names == expected


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
def test_conv_and_pool_layers(tf1, tf_layers, padding, data_format):
    if data_format == "channels_first":
        pytest.importorskip("tensorflow")
    x1, x2, x3 = _rand(2, 9, 3, seed=3), _rand(2, 8, 7, 3, seed=4), _rand(2, 6, 5, 4, 2, seed=5)
    first = data_format == "channels_first"
    if first:
        x1, x2, x3 = x1.transpose(0, 2, 1).copy(), x2.transpose(0, 3, 1, 2).copy(), x3.transpose(0, 4, 1, 2, 3).copy()

    def build(m, layers, a, b, c):
        kw = {"padding": padding, "data_format": data_format}
        outs = [
            layers.conv1d(a, 4, 3, strides=2, activation=m.nn.relu, **kw),
            layers.max_pooling1d(a, 2, 2, **kw),
            layers.average_pooling1d(a, 3, 1, **kw),
            layers.conv2d(b, 4, (3, 2), strides=(2, 1), kernel_regularizer=lambda w: m.nn.l2_loss(w), **kw),
            layers.max_pooling2d(b, 3, 2, **kw),
            layers.average_pooling2d(b, 2, 2, **kw),
            layers.conv3d(c, 3, 2, **kw),
            layers.max_pooling3d(c, 2, 2, **kw),
            layers.average_pooling3d(c, 2, 1, **kw),
        ]
        if not first:
            # TF's CPU kernels support these only channels-last.
            outs += [
                layers.conv2d(b, 2, 3, dilation_rate=2, **kw),
                layers.separable_conv2d(b, 5, 3, depth_multiplier=2, **kw),
                layers.separable_conv1d(a, 4, 2, strides=2, depth_multiplier=3, activation=m.nn.relu, **kw),
                layers.conv2d_transpose(b, 3, 3, strides=2, **kw),
                layers.conv3d_transpose(c, 2, 2, strides=(1, 2, 2), **kw),
            ]
        return outs

    expected, got = run_both(tf1, tf_layers, build, [x1, x2, x3])
    assert_same(expected, got, rtol=1e-4, atol=1e-4)


def test_causal_conv1d(tf1, tf_layers):
    def build(m, layers, a):
        return [
            layers.conv1d(a, 2, 3, padding="causal", dilation_rate=2),
            layers.separable_conv1d(a, 2, 3, padding="causal", dilation_rate=2, name="sep"),
            layers.SeparableConv1D(3, 2, use_bias=False)(a),
        ]

    expected, got = run_both(tf1, tf_layers, build, [_rand(2, 9, 3, seed=6)])
    assert_same(expected, got, rtol=1e-4, atol=1e-4)


def test_flatten_and_dropout_without_training(tf1, tf_layers):
    def build(m, layers, a):
        return [layers.flatten(a), layers.dropout(a, 0.4), layers.Dropout(0.4)(a, training=False)]

    expected, got = run_both(tf1, tf_layers, build, [_rand(3, 2, 5, seed=7)])
    assert_same(expected, got)


def test_dropout_with_training_tensor():
    x = np.ones((200, 50), np.float32)
    with tf.Graph().as_default():
        training = tf.placeholder(tf.bool, [])
        y = tf.layers.dropout(x, rate=0.25, training=training, seed=3)
        assert y.op.type == "Merge" and y.op.name == "dropout/cond/Merge"
        with tf.Session() as sess:
            off = sess.run(y, {training: False})
            on = sess.run(y, {training: True})
    np.testing.assert_array_equal(off, x)
    assert set(np.unique(on).tolist()) <= {0.0, float(np.float32(1.0 / 0.75))}
    assert 0.2 < (on == 0).mean() < 0.3


def test_dense_input_spec_errors():
    with tf.Graph().as_default():
        layer = tf.layers.Dense(2)
        layer(tf.zeros([1, 3]))
        with pytest.raises(ValueError, match="expected axis -1 of input shape to have value 3"):
            layer(tf.zeros([1, 4]))
        with pytest.raises(ValueError, match="last dimension of the inputs to `Dense` should be defined"):
            tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
        with pytest.raises(ValueError, match="already exists"):
            tf.layers.dense(tf.zeros([1, 3]), 2, name="a", reuse=False)
            with tf.variable_scope(""):
                tf.get_variable("a/kernel", [3, 2])


def test_layers_train_with_an_optimizer():
    rng = np.random.RandomState(0)
    x, t = rng.randn(64, 4).astype(np.float32), rng.randn(64, 1).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        h = tf.layers.dense(x, 8, activation=tf.nn.tanh)
        y = tf.layers.dense(h, 1)
        loss = tf.reduce_mean(tf.square(y - t))
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss)
            for _ in range(50):
                sess.run(step)
            assert sess.run(loss) < first
