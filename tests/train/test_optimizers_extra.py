"""The TF1 optimizers beyond the classic five (Adadelta, Ftrl, ProximalAdagrad, ProximalGradientDescent, AdagradDA),
and the classic ones again on sparse gradients, against real TensorFlow.

One script (``_train``) is written against the TF1 API and run with ``tensorflow.compat.v1`` and with
``dtf_notebook.compat.v1``: a dense matrix (``ApplyX`` ops), an embedding matrix and a vector read through
``tf.gather`` with repeated ids (``IndexedSlices`` gradients, summed by the optimizer before ``SparseApplyX``,
whose kernels TF writes twice: for matrices and for vectors). After a few steps every variable, slots included,
must have TF's name and TF's value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook import errors
from dtf_notebook.ops import training_ops
from tests.ops.op_check import rand

STEPS = 5
IDS = [1, 4, 1, 0, 5]


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    return real.compat.v1


def _train(tf: Any, make_optimizer: Callable[[Any, Any], Any], dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """Runs ``STEPS`` training steps; returns every global variable's value by name."""
    x_value = rand(3, 4, seed=1).astype(dtype)
    with tf.Graph().as_default():
        w = tf.Variable(rand(4, 2, seed=2, low=-1, high=1).astype(dtype), name="w", use_resource=False)
        emb = tf.Variable(rand(6, 2, seed=3, low=-1, high=1).astype(dtype), name="emb", use_resource=False)
        vec = tf.Variable(rand(6, seed=4, low=-1, high=1).astype(dtype), name="vec", use_resource=False)
        ids = tf.constant(IDS)
        target = tf.constant(rand(3, 2, seed=5).astype(dtype))
        dense_loss = tf.reduce_sum(tf.square(tf.matmul(tf.constant(x_value), w) - target))
        rows = tf.gather(emb, ids)
        sparse_loss = tf.reduce_sum(tf.square(rows - 0.5)) + tf.reduce_sum(rows * tf.constant([[0.3, -0.7]], dtype))
        vector_loss = tf.reduce_sum(tf.square(tf.gather(vec, ids) + 0.25))
        loss = dense_loss * 0.1 + sparse_loss + vector_loss
        global_step = tf.train.get_or_create_global_step()
        train_op = make_optimizer(tf, global_step).minimize(loss, global_step=global_step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(STEPS):
                sess.run(train_op)
            variables = tf.global_variables()
            return dict(zip([v.op.name for v in variables], sess.run(variables)))


OPTIMIZERS: dict[str, Callable[[Any, Any], Any]] = {
    "adadelta": lambda tf, gs: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
    "adadelta_default": lambda tf, gs: tf.train.AdadeltaOptimizer(),
    "ftrl": lambda tf, gs: tf.train.FtrlOptimizer(0.3),
    "ftrl_l1_l2": lambda tf, gs: tf.train.FtrlOptimizer(
        0.3, l1_regularization_strength=0.05, l2_regularization_strength=0.02
    ),
    "ftrl_power": lambda tf, gs: tf.train.FtrlOptimizer(
        0.2, learning_rate_power=-0.3, initial_accumulator_value=0.5, l1_regularization_strength=0.01
    ),
    "ftrl_fixed_rate": lambda tf, gs: tf.train.FtrlOptimizer(0.1, learning_rate_power=0.0),
    "ftrl_shrinkage": lambda tf, gs: tf.train.FtrlOptimizer(
        0.3, l1_regularization_strength=0.01, l2_shrinkage_regularization_strength=0.1, beta=0.2
    ),
    "ftrl_names": lambda tf, gs: tf.train.FtrlOptimizer(0.3, accum_name="Acc", linear_name="Lin", name="F"),
    "proximal_adagrad": lambda tf, gs: tf.train.ProximalAdagradOptimizer(0.2),
    "proximal_adagrad_l1_l2": lambda tf, gs: tf.train.ProximalAdagradOptimizer(
        0.2, initial_accumulator_value=0.3, l1_regularization_strength=0.05, l2_regularization_strength=0.1
    ),
    "proximal_gd": lambda tf, gs: tf.train.ProximalGradientDescentOptimizer(0.05),
    "proximal_gd_l1_l2": lambda tf, gs: tf.train.ProximalGradientDescentOptimizer(
        0.05, l1_regularization_strength=0.05, l2_regularization_strength=0.2
    ),
    "adagrad_da": lambda tf, gs: tf.train.AdagradDAOptimizer(0.3, gs),
    "adagrad_da_l1_l2": lambda tf, gs: tf.train.AdagradDAOptimizer(
        0.3,
        gs,
        initial_gradient_squared_accumulator_value=0.2,
        l1_regularization_strength=0.05,
        l2_regularization_strength=0.1,
    ),
    # The classic optimizers, whose dense paths the MLP oracle test covers, on the same sparse gradients.
    "gradient_descent": lambda tf, gs: tf.train.GradientDescentOptimizer(0.05),
    "momentum": lambda tf, gs: tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "adagrad": lambda tf, gs: tf.train.AdagradOptimizer(0.2),
    "rmsprop": lambda tf, gs: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "adam": lambda tf, gs: tf.train.AdamOptimizer(0.05),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_matches_tensorflow_dense_and_sparse(tf1, kind):
    expected = _train(tf1, OPTIMIZERS[kind])
    got = _train(dtf, OPTIMIZERS[kind])
    assert sorted(got) == sorted(expected)  # slot names and non-slot variables as TF names them
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=2e-5, atol=2e-6, err_msg=name)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", ["ftrl_shrinkage", "ftrl_power", "adagrad_da_l1_l2", "adadelta"])
def test_matches_tensorflow_float64(tf1, kind):
    # (TF1's proximal optimizers do not cast their hyper-parameters: TF cannot build them for float64 variables.)
    expected = _train(tf1, OPTIMIZERS[kind], dtype=np.float64)
    got = _train(dtf, OPTIMIZERS[kind], dtype=np.float64)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-14, err_msg=name)


@pytest.mark.tf_oracle
def test_slot_names_and_update_ops_match_tensorflow(tf1):
    def build(tf: Any) -> tuple[list[str], list[str]]:
        with tf.Graph().as_default() as g:
            w = tf.Variable([1.0, 2.0], name="w", use_resource=False)
            opt = tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.1)
            opt.minimize(tf.reduce_sum(w * w))
            ops = sorted(op.type for op in g.get_operations() if op.type.startswith(("Apply", "SparseApply")))
            return opt.get_slot_names(), ops

    assert build(dtf) == build(tf1) == (["accum", "linear"], ["ApplyFtrlV2"])


@pytest.mark.tf_oracle
def test_aggregation_methods_are_accepted(tf1):
    def grads(tf: Any, method: Any) -> list[np.ndarray]:
        with tf.Graph().as_default():
            x = tf.constant([1.0, 2.0])
            y = x * x + x * 3.0 + tf.reduce_sum(x) * x
            (g,) = tf.gradients(y, [x], aggregation_method=method)
            w = tf.Variable([1.0, -1.0], use_resource=False)
            train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(w * w + w), aggregation_method=method)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train)
                return sess.run([g, w])

    for name in ["ADD_N", "DEFAULT", "EXPERIMENTAL_TREE", "EXPERIMENTAL_ACCUMULATE_N"]:
        assert getattr(dtf.AggregationMethod, name) == getattr(tf1.AggregationMethod, name)
        for got, want in zip(
            grads(dtf, getattr(dtf.AggregationMethod, name)), grads(tf1, getattr(tf1.AggregationMethod, name))
        ):
            np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.tf_oracle
def test_constructor_errors_match_tensorflow(tf1):
    cases = [
        lambda tf: tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5),
        lambda tf: tf.train.FtrlOptimizer(0.1, initial_accumulator_value=-1.0),
        lambda tf: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=-1.0),
        lambda tf: tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=0.0),
        lambda tf: tf.train.AdagradDAOptimizer(0.1, None, initial_gradient_squared_accumulator_value=0.0),
    ]
    for case in cases:
        with pytest.raises(ValueError) as want:
            case(tf1)
        with pytest.raises(ValueError) as got:
            case(dtf)
        assert str(got.value) == str(want.value)


def test_sparse_ftrl_rejects_a_non_positive_learning_rate():
    with dtf.Graph().as_default():
        w, acc, lin = dtf.Variable([0.0, 0.0]), dtf.Variable([1.0, 1.0]), dtf.Variable([0.0, 0.0])
        step = training_ops.sparse_apply_ftrl(w, acc, lin, [1.0], [0], 0.0, 0.0, 0.0, -0.5)
        with dtf.Session() as sess:
            sess.run(dtf.global_variables_initializer())
            with pytest.raises(errors.InvalidArgumentError, match="lr is not a positive scalar"):
                sess.run(step)


def test_adagrad_da_needs_an_int64_step():
    with dtf.Graph().as_default():
        w, g, gg = dtf.Variable([0.0]), dtf.Variable([0.0]), dtf.Variable([1.0])
        step = training_ops.apply_adagrad_da(w, g, gg, [1.0], 0.5, 0.0, 0.0, 2)
        assert step.op.inputs[7].dtype == dtf.int64
        with pytest.raises(ValueError, match="rank 0"):
            training_ops.apply_adagrad_da(w, g, gg, [1.0], 0.5, 0.0, 0.0, [2, 3])
