"""The same TF1 training script run on real TensorFlow and on dtf_notebook: the losses must agree at every step.

``train_losses(tf, ...)`` is written once against the TF1 API and called with ``tensorflow.compat.v1`` and
with ``dtf_notebook.compat.v1``: a 784-100-10 ReLU MLP on a fixed batch of the digits data, mean sparse
softmax cross-entropy, initial weights given as numpy arrays, 20 ``minimize`` steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf

pytestmark = pytest.mark.tf_oracle

STEPS = 20
BATCH = 100


def _data() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    from dtf_notebook.datasets import load_digits_784

    x_train, y_train, _, _ = load_digits_784(seed=0)
    x, y = np.ascontiguousarray(x_train[:BATCH]), np.ascontiguousarray(y_train[:BATCH])
    rng = np.random.default_rng(1234)

    def glorot(fan_in: int, fan_out: int) -> np.ndarray:
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, (fan_in, fan_out)).astype(np.float32)

    params = [
        glorot(784, 100),
        rng.uniform(-0.1, 0.1, 100).astype(np.float32),
        glorot(100, 10),
        rng.uniform(-0.1, 0.1, 10).astype(np.float32),
    ]
    return x, y, params


def train_losses(tf: Any, make_optimizer: Callable[[Any], Any], steps: int = STEPS) -> np.ndarray:
    """The TF1 script: returns the loss before each of ``steps`` training steps, and checks the step counter."""
    x_value, y_value, params = _data()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        weights_1 = tf.Variable(params[0], name="weights_1", use_resource=False)
        biases_1 = tf.Variable(params[1], name="biases_1", use_resource=False)
        weights_2 = tf.Variable(params[2], name="weights_2", use_resource=False)
        biases_2 = tf.Variable(params[3], name="biases_2", use_resource=False)
        hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
        logits = tf.matmul(hidden, weights_2) + biases_2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        global_step = tf.Variable(0, trainable=False, dtype=tf.int64, name="global_step", use_resource=False)
        train_op = make_optimizer(tf).minimize(loss, global_step=global_step)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {x: x_value, y: y_value}
            for _ in range(steps):
                losses.append(sess.run(loss, feed))
                sess.run(train_op, feed)
            assert sess.run(global_step) == steps
    return np.array(losses, dtype=np.float64)


OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "gradient_descent": lambda tf: tf.train.GradientDescentOptimizer(0.5),
    "momentum": lambda tf: tf.train.MomentumOptimizer(0.1, momentum=0.9),
    "nesterov": lambda tf: tf.train.MomentumOptimizer(0.1, momentum=0.9, use_nesterov=True),
    "adagrad": lambda tf: tf.train.AdagradOptimizer(0.1),
    "rmsprop": lambda tf: tf.train.RMSPropOptimizer(0.001, momentum=0.9),
    "rmsprop_centered": lambda tf: tf.train.RMSPropOptimizer(0.001, momentum=0.9, centered=True),
    "adam": lambda tf: tf.train.AdamOptimizer(0.01),
}


@pytest.fixture(scope="module")
def tf1() -> Any:
    tf = pytest.importorskip("tensorflow")
    return tf.compat.v1


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_losses_match_tensorflow_at_every_step(tf1: Any, key: str) -> None:
    expected = train_losses(tf1, OPTIMIZERS[key])
    got = train_losses(dtf, OPTIMIZERS[key])
    assert expected[-1] < expected[0]  # the script really trains
    # Forward and backward ops differ from TF's only by float32 rounding (different but equally exact
    # matmul/reduction orders; torch's vectorised sqrt and TF's fast-math rsqrt differ by an ulp). Those
    # differences compound through the updates, so later steps get a few times more room than the first.
    np.testing.assert_allclose(got[:5], expected[:5], rtol=1e-6, err_msg=key)
    np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=key)


# ---- the fused update ops against TF's kernels (tf.raw_ops on reference variables) -----------------------------
_ROWS, _COLS = 6, 5
_UNIQUE, _REPEATED = [4, 0, 2], [3, 1, 3, 3]
_RMS = {"lr": 0.01, "rho": 0.9, "momentum": 0.5, "epsilon": 1e-7}
_ADAM = {"beta1_power": 0.9**3, "beta2_power": 0.999**3, "lr": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}

# op -> (ref args with their kind of initial value, scalar args, attrs, indices or None)
KERNELS: dict[str, tuple[dict[str, str], dict[str, float], dict[str, bool], list[int] | None]] = {
    "ApplyGradientDescent": ({"var": "any"}, {"alpha": 0.1}, {}, None),
    "ApplyMomentum": ({"var": "any", "accum": "any"}, {"lr": 0.1, "momentum": 0.9}, {}, None),
    "ApplyMomentum-nesterov": (
        {"var": "any", "accum": "any"},
        {"lr": 0.1, "momentum": 0.9},
        {"use_nesterov": True},
        None,
    ),
    "ApplyAdagrad": ({"var": "any", "accum": "positive"}, {"lr": 0.1}, {}, None),
    "ApplyRMSProp": ({"var": "any", "ms": "positive", "mom": "any"}, _RMS, {}, None),
    "ApplyCenteredRMSProp": ({"var": "any", "mg": "small", "ms": "positive", "mom": "any"}, _RMS, {}, None),
    "ApplyAdam": ({"var": "any", "m": "any", "v": "positive"}, _ADAM, {}, None),
    "ApplyAdam-nesterov": ({"var": "any", "m": "any", "v": "positive"}, _ADAM, {"use_nesterov": True}, None),
    "SparseApplyMomentum": ({"var": "any", "accum": "any"}, {"lr": 0.1, "momentum": 0.9}, {}, _REPEATED),
    "SparseApplyMomentum-nesterov": (
        {"var": "any", "accum": "any"},
        {"lr": 0.1, "momentum": 0.9},
        {"use_nesterov": True},
        _UNIQUE,
    ),
    "SparseApplyAdagrad": ({"var": "any", "accum": "positive"}, {"lr": 0.1}, {}, _UNIQUE),
    "SparseApplyRMSProp": ({"var": "any", "ms": "positive", "mom": "any"}, _RMS, {}, _REPEATED),
    "SparseApplyCenteredRMSProp": ({"var": "any", "mg": "small", "ms": "positive", "mom": "any"}, _RMS, {}, _UNIQUE),
}

_BUILDERS = {
    "ApplyGradientDescent": "apply_gradient_descent",
    "ApplyMomentum": "apply_momentum",
    "ApplyAdagrad": "apply_adagrad",
    "ApplyRMSProp": "apply_rms_prop",
    "ApplyCenteredRMSProp": "apply_centered_rms_prop",
    "ApplyAdam": "apply_adam",
    "SparseApplyMomentum": "sparse_apply_momentum",
    "SparseApplyAdagrad": "sparse_apply_adagrad",
    "SparseApplyRMSProp": "sparse_apply_rms_prop",
    "SparseApplyCenteredRMSProp": "sparse_apply_centered_rms_prop",
}


def _kernel_run(
    tf: Any,
    apply: Callable[..., Any],
    refs: dict[str, str],
    scalars: dict[str, float],
    attrs: dict[str, bool],
    indices: list[int] | None,
) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    ranges = {"any": (-1.0, 1.0), "positive": (0.5, 2.0), "small": (-0.1, 0.1)}
    initial = {k: rng.uniform(*ranges[kind], (_ROWS, _COLS)).astype(np.float32) for k, kind in refs.items()}
    grad_rows = _ROWS if indices is None else len(indices)
    grads = [rng.uniform(-1.0, 1.0, (grad_rows, _COLS)).astype(np.float32) for _ in range(3)]
    with tf.Graph().as_default():
        variables = {k: tf.Variable(v, name=k, use_resource=False) for k, v in initial.items()}
        grad = tf.placeholder(tf.float32, [grad_rows, _COLS])
        kwargs: dict[str, Any] = {**variables, **{k: np.float32(v) for k, v in scalars.items()}, **attrs}
        kwargs["delta" if "alpha" in scalars else "grad"] = grad
        if indices is not None:
            kwargs["indices"] = np.array(indices, np.int32)
        op = apply(**kwargs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for g in grads:
                sess.run(op, {grad: g})
            return sess.run(list(variables.values()))


@pytest.mark.parametrize("key", sorted(KERNELS))
def test_fused_ops_match_tensorflow_kernels(tf1: Any, key: str) -> None:
    from dtf_notebook.ops import training_ops

    op_type = key.split("-")[0]
    builder = getattr(training_ops, _BUILDERS[op_type])
    expected = _kernel_run(tf1, getattr(tf1.raw_ops, op_type), *KERNELS[key])
    got = _kernel_run(dtf, builder, *KERNELS[key])
    for e, g in zip(expected, got):
        # Same formulas in the same order; only sqrt/rsqrt (and GD's fused multiply-add) round differently.
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=key)


def embedding_losses(tf: Any, make_optimizer: Callable[[Any], Any], steps: int = 10) -> np.ndarray:
    """A TF1 script whose gradient is IndexedSlices with repeated rows: a linear model over looked-up embeddings."""
    rng = np.random.default_rng(99)
    table = rng.uniform(-1.0, 1.0, (20, 8)).astype(np.float32)
    ids = np.array([3, 7, 3, 0, 19, 7, 3, 12], np.int32)
    weights = rng.uniform(-1.0, 1.0, (8, 1)).astype(np.float32)
    targets = rng.uniform(-1.0, 1.0, (8, 1)).astype(np.float32)
    with tf.Graph().as_default():
        embedding = tf.Variable(table, name="embedding", use_resource=False)
        dense = tf.Variable(weights, name="dense", use_resource=False)
        prediction = tf.matmul(tf.gather(embedding, ids), dense)
        loss = tf.reduce_mean(tf.square(prediction - targets))
        train_op = make_optimizer(tf).minimize(loss)
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                losses.append(sess.run(loss))
                sess.run(train_op)
            losses.append(sess.run(loss))
    return np.array(losses, dtype=np.float64)


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_sparse_gradient_losses_match_tensorflow(tf1: Any, key: str) -> None:
    expected = embedding_losses(tf1, OPTIMIZERS[key])
    got = embedding_losses(dtf, OPTIMIZERS[key])
    assert expected[-1] < expected[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, err_msg=key)
