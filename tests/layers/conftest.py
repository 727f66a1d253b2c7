"""Fixtures of the layer tests: real TF1 and its (Keras-based) ``tf.layers`` as the oracle."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf


@pytest.fixture(scope="session")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    real.compat.v1.disable_control_flow_v2()
    return real.compat.v1


@pytest.fixture(scope="session")
def tf_layers(tf1):
    """TF1's ``tf.layers`` (TF ships them as ``legacy_tf_layers``; ``tf.compat.v1.layers`` needs Keras 2)."""
    warnings.filterwarnings("ignore", message=".*is deprecated.*")
    from tensorflow.python.keras.legacy_tf_layers import convolutional, core, pooling

    class Namespace:
        pass

    ns = Namespace()
    for module in (core, convolutional, pooling):
        for name in dir(module):
            if not name.startswith("_"):
                setattr(ns, name, getattr(module, name))
    return ns


def run_both(tf1, tf_layers, build, feeds, grads_of=None):
    """Builds ``build(m, layers, *placeholders)`` with TF and here, copies TF's initial variable values into ours,
    and returns both runs' (variable names, collections, outputs, gradients w.r.t. inputs and variables)."""
    results = []
    tf_values = None
    for m, layers in ((tf1, tf_layers), (tf, tf.layers)):
        with m.Graph().as_default():
            m.set_random_seed(1)
            phs = [m.placeholder(m.as_dtype(x.dtype), x.shape) for x in feeds]
            out = build(m, layers, *phs)
            outs = out if isinstance(out, list | tuple) else [out]
            variables = m.global_variables()
            loss = m.add_n([m.reduce_sum(o * o) for o in outs if o.dtype.is_floating])
            targets = phs + m.trainable_variables()
            grads = m.gradients(loss, targets)
            info = {
                "global": [v.name for v in variables],
                "trainable": [v.name for v in m.trainable_variables()],
                "shapes": [v.shape.as_list() for v in variables],
                "regularization": [t.name for t in m.get_collection(m.GraphKeys.REGULARIZATION_LOSSES)],
                "updates": [op.name for op in m.get_collection(m.GraphKeys.UPDATE_OPS)],
                "out_shapes": [o.shape.as_list() for o in outs],
                "out_names": [o.name for o in outs],
            }
            with m.Session() as sess:
                sess.run(m.global_variables_initializer())
                if tf_values is None:
                    tf_values = sess.run(variables)
                else:
                    for v, value in zip(variables, tf_values):
                        v.load(value, sess)
                feed = dict(zip(phs, feeds))
                reg = m.get_collection(m.GraphKeys.REGULARIZATION_LOSSES)
                info["values"] = sess.run(outs, feed)
                info["grads"] = sess.run([g for g in grads if g is not None], feed)
                info["reg_values"] = sess.run(reg, feed)
            results.append(info)
    return results


def assert_same(expected, got, rtol=1e-5, atol=1e-5, names=True):
    keys = ["global", "trainable", "shapes", "regularization", "updates", "out_shapes"]
    if names:
        keys.append("out_names")
    for key in keys:
        assert got[key] == expected[key], key
    for key in ("values", "grads", "reg_values"):
        assert len(got[key]) == len(expected[key]), key
        for a, b in zip(got[key], expected[key]):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=key)
