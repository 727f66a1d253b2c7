"""``tf.losses`` against real TF1: values for every loss, weights shape and reduction, gradients, the names of
the ops and of the ``LOSSES`` collection, the total loss with regularization, and weight errors."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle

REDUCTIONS = [
    "none",
    "weighted_sum",
    "weighted_mean",
    "weighted_sum_over_batch_size",
    "weighted_sum_by_nonzero_weights",
]


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    real.compat.v1.disable_control_flow_v2()
    return real.compat.v1


def _rng(seed):
    return np.random.RandomState(seed)


def _data(seed=0, batch=4, n=3):
    r = _rng(seed)
    return {
        "pred": r.randn(batch, n).astype(np.float32),
        "prob": r.uniform(0.05, 0.95, (batch, n)).astype(np.float32),
        "binary": (r.rand(batch, n) > 0.5).astype(np.float32),
        "onehot": np.eye(n, dtype=np.float32)[r.randint(0, n, batch)],
        "sparse": r.randint(0, n, batch).astype(np.int32),
        "unit": (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(r.randn(batch, n)).astype(np.float32),
    }


# (name, builder(m, d, weights, reduction) -> (loss, tensor to differentiate against))
def _cases():
    def regression(fn, label_key="binary", pred_key="pred", **kw):
        def build(m, d, w, red):
            p = m.constant(d[pred_key])
            return getattr(m.losses, fn)(m.constant(d[label_key]), p, weights=w, reduction=red, **kw), p

        return build

    def xent(fn, label_key, **kw):
        def build(m, d, w, red):
            logits = m.constant(d["pred"])
            return getattr(m.losses, fn)(m.constant(d[label_key]), logits, weights=w, reduction=red, **kw), logits

        return build

    def cosine(m, d, w, red):
        p = m.constant(d["unit"])
        return m.losses.cosine_distance(m.constant(d["unit"][::-1].copy()), p, axis=1, weights=w, reduction=red), p

    return {
        "absolute_difference": regression("absolute_difference"),
        "mean_squared_error": regression("mean_squared_error"),
        "huber_loss": regression("huber_loss", delta=0.7),
        "log_loss": regression("log_loss", pred_key="prob"),
        "hinge_loss": regression("hinge_loss"),
        "sigmoid_cross_entropy": xent("sigmoid_cross_entropy", "binary"),
        "sigmoid_cross_entropy_smoothed": xent("sigmoid_cross_entropy", "binary", label_smoothing=0.2),
        "softmax_cross_entropy": xent("softmax_cross_entropy", "onehot"),
        "softmax_cross_entropy_smoothed": xent("softmax_cross_entropy", "onehot", label_smoothing=0.1),
        "sparse_softmax_cross_entropy": xent("sparse_softmax_cross_entropy", "sparse"),
        "cosine_distance": cosine,
    }


CASES = _cases()
PER_EXAMPLE = {"softmax_cross_entropy", "softmax_cross_entropy_smoothed", "sparse_softmax_cross_entropy"}


def _weights(kind, name, seed=5):
    r = _rng(seed)
    if kind == "scalar":
        return 0.7
    if name == "cosine_distance":
        shape = (4, 1)
    elif name in PER_EXAMPLE:
        shape = (4,)
    else:
        shape = (4, 1) if kind == "column" else (4, 3)
    w = r.uniform(0.1, 2.0, shape).astype(np.float32)
    if kind == "with_zeros":
        w.reshape(-1)[::2] = 0.0
    return w


def _evaluate(m, case, weights, reduction):
    with m.Graph().as_default():
        loss, x = CASES[case](m, _data(), weights, reduction)
        grad = m.gradients(loss, x)[0]
        names = [t.name for t in m.get_collection(m.GraphKeys.LOSSES)]
        with m.Session() as sess:
            value, g = sess.run([loss, grad])
        return value, g, names, loss.shape.as_list()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", ["scalar", "column", "full", "with_zeros"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_matches_tensorflow(tf1, case, weights, reduction):
    w = _weights(weights, case)
    expected = _evaluate(tf1, case, w, reduction)
    got = _evaluate(tf, case, w, reduction)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-6)
    assert got[2] == expected[2]
    assert got[3] == expected[3]


@pytest.mark.parametrize("weights", ["scalar", "column", "with_zeros"])
def test_mean_pairwise_squared_error(tf1, weights):
    w = 0.5 if weights == "scalar" else _weights("column", "x")
    if weights == "with_zeros":
        w[1] = 0.0
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            d = _data(seed=3)
            p = m.constant(d["pred"])
            loss = m.losses.mean_pairwise_squared_error(m.constant(d["prob"]), p, weights=w)
            grad = m.gradients(loss, p)[0]
            with m.Session() as sess:
                results.append((*sess.run([loss, grad]), loss.name))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)
    assert results[1][2] == results[0][2]


def test_unknown_shapes_check_weights_when_run(tf1):
    d = _data()
    for m in (tf1, tf):
        with m.Graph().as_default():
            labels = m.placeholder(m.float32, [None, None])
            preds = m.placeholder(m.float32, [None, None])
            weights = m.placeholder(m.float32, None)
            loss = m.losses.mean_squared_error(labels, preds, weights)
            with m.Session() as sess:
                feed = {labels: d["binary"], preds: d["pred"]}
                ok = sess.run(loss, {**feed, weights: np.ones((4, 1), np.float32)})
                with pytest.raises(Exception) as info:
                    sess.run(loss, {**feed, weights: np.ones((2, 3), np.float32)})
                if m is tf1:
                    expected, kind = ok, type(info.value).__name__
    np.testing.assert_allclose(ok, expected, rtol=1e-6)
    assert type(info.value).__name__ == kind == "InvalidArgumentError"


def test_static_weight_errors_and_bad_reduction(tf1):
    for m in (tf1, tf):
        with m.Graph().as_default():
            with pytest.raises(ValueError, match="weights can not be broadcast to values"):
                m.losses.mean_squared_error(m.zeros([4, 3]), m.zeros([4, 3]), weights=m.ones([2, 3]))
            with pytest.raises(ValueError, match="Invalid Reduction Key"):
                m.losses.mean_squared_error(m.zeros([4, 3]), m.zeros([4, 3]), reduction="mean")
            with pytest.raises(ValueError, match="must not be None"):
                m.losses.absolute_difference(None, m.zeros([2]))


def test_total_loss_collections_and_scopes(tf1):
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            with m.variable_scope("model"):
                w = m.get_variable("w", [3], initializer=m.constant_initializer(0.5), regularizer=m.nn.l2_loss)
            d = _data()
            m.losses.mean_squared_error(d["binary"], d["pred"] * w, scope="mse")
            m.losses.absolute_difference(d["binary"], d["pred"], loss_collection=None)
            m.losses.hinge_loss(d["binary"], d["pred"], loss_collection="mine")
            m.losses.add_loss(m.constant(1.5, name="extra"))
            total = m.losses.get_total_loss()
            no_reg = m.losses.get_total_loss(add_regularization_losses=False, name="plain")
            reg = m.losses.get_regularization_loss()
            info = (
                [t.name for t in m.losses.get_losses()],
                [t.name for t in m.losses.get_losses(loss_collection="mine")],
                [t.name for t in m.losses.get_regularization_losses()],
                [t.name for t in m.losses.get_losses(scope="mse")],
                total.name,
                no_reg.name,
                reg.name,
            )
            with m.Session() as sess:
                sess.run(m.global_variables_initializer())
                results.append((info, sess.run([total, no_reg, reg])))
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)
