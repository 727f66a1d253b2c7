"""Tests of ``tf.train`` optimizers and the fused update ops: updates against numpy versions of TF's formulas.

Dense updates are fed random gradients through ``apply_gradients``; sparse ones get ``IndexedSlices``
(built by hand, or from a ``tf.gather`` loss) with repeated indices. The references below restate the
float32 formulas of TF's kernels (``training_ops.cc``) and Python optimizers (TF1's ``adam.py`` etc.).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.ops import training_ops
from tests.ops.op_check import rand

F32 = np.float32
SHAPE = (5, 3)
STEPS = 4


# ---- numpy references: state is a dict of float32 arrays, updated in place ----------------------------
def _dense_ref(kind: str, **hyper: float) -> tuple[Callable[[dict, np.ndarray], None], dict[str, Any]]:
    """(step(state, grad), initial slot values) of a dense optimizer update in float32."""
    lr = F32(hyper.get("lr", 0.1))
    if kind == "gd":
        return (lambda s, g: s.__setitem__("var", s["var"] - lr * g)), {}
    if kind in ("momentum", "nesterov"):
        mu = F32(hyper["momentum"])

        def momentum(s: dict, g: np.ndarray) -> None:
            s["momentum"] = s["momentum"] * mu + g
            if kind == "nesterov":
                s["var"] = s["var"] - (g * lr + s["momentum"] * mu * lr)
            else:
                s["var"] = s["var"] - s["momentum"] * lr

        return momentum, {"momentum": 0.0}
    if kind == "adagrad":

        def adagrad(s: dict, g: np.ndarray) -> None:
            s["accumulator"] = s["accumulator"] + g * g
            s["var"] = s["var"] - g * lr / np.sqrt(s["accumulator"])

        return adagrad, {"accumulator": hyper.get("initial_accumulator_value", 0.1)}
    if kind in ("rmsprop", "centered"):
        rho, mu, eps = F32(hyper["decay"]), F32(hyper["momentum"]), F32(hyper["epsilon"])

        def rmsprop(s: dict, g: np.ndarray) -> None:
            s["rms"] = s["rms"] + (g * g - s["rms"]) * (F32(1) - rho)
            denom = s["rms"] + eps
            if kind == "centered":
                s["mg"] = s["mg"] + (g - s["mg"]) * (F32(1) - rho)
                denom = s["rms"] - s["mg"] * s["mg"] + eps
            s["momentum"] = s["momentum"] * mu + g * lr / np.sqrt(denom)
            s["var"] = s["var"] - s["momentum"]

        slots = {"rms": 1.0, "momentum": 0.0}
        if kind == "centered":
            slots["mg"] = 0.0
        return rmsprop, slots
    if kind == "adam":
        b1, b2, eps = F32(hyper["beta1"]), F32(hyper["beta2"]), F32(hyper["epsilon"])

        def adam(s: dict, g: np.ndarray) -> None:
            s["t"] += 1
            alpha = lr * np.sqrt(F32(1) - b2 ** s["t"]) / (F32(1) - b1 ** s["t"])
            s["m"] = s["m"] + (g - s["m"]) * (F32(1) - b1)
            s["v"] = s["v"] + (g * g - s["v"]) * (F32(1) - b2)
            s["var"] = s["var"] - s["m"] * alpha / (np.sqrt(s["v"]) + eps)

        return adam, {"m": 0.0, "v": 0.0, "t": 0}
    raise AssertionError(kind)


def _sparse_ref(kind: str, **hyper: float) -> tuple[Callable[[dict, np.ndarray, np.ndarray], None], dict[str, Any]]:
    """(step(state, values, indices), initial slots) of the sparse update, after TF1's summing of duplicates."""
    dense_step, slots = _dense_ref(kind, **hyper)
    lr = F32(hyper.get("lr", 0.1))

    def summed(values: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        unique, positions = np.unique(indices, return_inverse=True)
        total = np.zeros((len(unique),) + values.shape[1:], F32)
        np.add.at(total, positions, values)
        return total, unique

    if kind == "gd":

        def gd(s: dict, values: np.ndarray, indices: np.ndarray) -> None:
            np.subtract.at(s["var"], indices, values * lr)

        return gd, slots
    if kind == "adam":
        # TF1's sparse Adam decays m and v everywhere: the dense update with zero rows elsewhere.
        def adam(s: dict, values: np.ndarray, indices: np.ndarray) -> None:
            dense = np.zeros_like(s["var"])
            np.add.at(dense, indices, values)
            dense_step(s, dense)

        return adam, slots
    if kind in ("rmsprop", "centered"):
        rho, mu, eps = F32(hyper["decay"]), F32(hyper["momentum"]), F32(hyper["epsilon"])

        def rmsprop(s: dict, values: np.ndarray, indices: np.ndarray) -> None:
            g, rows = summed(values, indices)
            s["rms"][rows] = s["rms"][rows] * rho + g * g * (F32(1) - rho)
            denom = s["rms"][rows] + eps
            if kind == "centered":
                s["mg"][rows] = s["mg"][rows] * rho + g * (F32(1) - rho)
                denom = denom - s["mg"][rows] * s["mg"][rows]
            s["momentum"][rows] = s["momentum"][rows] * mu + lr * g / np.sqrt(denom)
            s["var"][rows] -= s["momentum"][rows]

        return rmsprop, slots

    def rows_only(s: dict, values: np.ndarray, indices: np.ndarray) -> None:
        g, rows = summed(values, indices)
        sub = {k: (v[rows] if isinstance(v, np.ndarray) else v) for k, v in s.items()}
        dense_step(sub, g)
        for k, v in sub.items():
            if isinstance(v, np.ndarray):
                s[k][rows] = v

    return rows_only, slots


OPTIMIZERS: dict[str, tuple[Callable[[], Any], str, dict[str, float]]] = {
    "gd": (lambda: tf.train.GradientDescentOptimizer(0.1), "gd", {}),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), "momentum", {"momentum": 0.9}),
    "nesterov": (lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True), "nesterov", {"momentum": 0.9}),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.1), "adagrad", {}),
    "adagrad_init": (
        lambda: tf.train.AdagradOptimizer(0.1, initial_accumulator_value=2.0),
        "adagrad",
        {"initial_accumulator_value": 2.0},
    ),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.1), "rmsprop", {"decay": 0.9, "momentum": 0.0, "epsilon": 1e-10}),
    "rmsprop_momentum": (
        lambda: tf.train.RMSPropOptimizer(0.1, decay=0.8, momentum=0.5, epsilon=1e-6),
        "rmsprop",
        {"decay": 0.8, "momentum": 0.5, "epsilon": 1e-6},
    ),
    "rmsprop_centered": (
        lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True, epsilon=1e-6),
        "centered",
        {"decay": 0.9, "momentum": 0.5, "epsilon": 1e-6},
    ),
    "adam": (lambda: tf.train.AdamOptimizer(0.1), "adam", {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}),
}


def _initial_state(slots: dict[str, Any], init: np.ndarray) -> dict[str, Any]:
    state: dict[str, Any] = {"var": init.copy()}
    for name, value in slots.items():
        state[name] = value if name == "t" else np.full(init.shape, value, F32)
    return state


def _assert_slots(opt: Any, var: Any, sess: Any, state: dict[str, Any]) -> None:
    np.testing.assert_allclose(sess.run(var), state["var"], rtol=1e-5, atol=1e-6)
    for name, expected in state.items():
        if name not in ("var", "t"):
            np.testing.assert_allclose(sess.run(opt.get_slot(var, name)), expected, rtol=1e-5, atol=1e-6, err_msg=name)


# ---- dense and sparse updates ---------------------------------------------------------------------------
@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_dense_updates_follow_tf_formulas(key: str) -> None:
    make, kind, hyper = OPTIMIZERS[key]
    step, slots = _dense_ref(kind, **hyper)
    init = rand(*SHAPE, seed=1)
    state = _initial_state(slots, init)
    with tf.Graph().as_default():
        var = tf.Variable(init, name="w")
        grad = tf.placeholder(tf.float32, SHAPE)
        opt = make()
        train_op = opt.apply_gradients([(grad, var)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(STEPS):
                g = rand(*SHAPE, seed=10 + i)
                sess.run(train_op, {grad: g})
                step(state, g)
                _assert_slots(opt, var, sess, state)


@pytest.mark.parametrize("key", sorted(OPTIMIZERS))
def test_sparse_updates_sum_duplicate_indices(key: str) -> None:
    make, kind, hyper = OPTIMIZERS[key]
    step, slots = _sparse_ref(kind, **hyper)
    init = rand(*SHAPE, seed=2)
    state = _initial_state(slots, init)
    with tf.Graph().as_default():
        var = tf.Variable(init, name="table")
        values = tf.placeholder(tf.float32, [None, SHAPE[1]])
        indices = tf.placeholder(tf.int32, [None])
        opt = make()
        train_op = opt.apply_gradients([(IndexedSlices(values, indices, tf.constant(SHAPE)), var)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i, idx in enumerate([[0, 3, 3], [4, 1], [3, 3, 3, 0], [2]]):
                idx = np.array(idx, np.int32)
                v = rand(len(idx), SHAPE[1], seed=20 + i)
                sess.run(train_op, {values: v, indices: idx})
                step(state, v, idx)
                _assert_slots(opt, var, sess, state)


@pytest.mark.parametrize("key", ["gd", "momentum", "adagrad", "rmsprop_centered", "adam"])
def test_gather_loss_gives_sparse_gradient_and_update(key: str) -> None:
    make, kind, hyper = OPTIMIZERS[key]
    step, slots = _sparse_ref(kind, **hyper)
    init = rand(*SHAPE, seed=3)
    weights = rand(4, SHAPE[1], seed=4)
    ids = np.array([1, 4, 1, 0], np.int32)
    state = _initial_state(slots, init)
    with tf.Graph().as_default():
        emb = tf.Variable(init, name="embedding")
        loss = tf.reduce_sum(tf.gather(emb, tf.constant(ids)) * weights)
        opt = make()
        grads_and_vars = opt.compute_gradients(loss)
        assert isinstance(grads_and_vars[0][0], IndexedSlices)
        train_op = opt.apply_gradients(grads_and_vars)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op)
                step(state, weights, ids)
            _assert_slots(opt, emb, sess, state)


def test_minimize_on_a_quadratic_matches_reference_and_counts_steps() -> None:
    target = rand(3, seed=5)
    step, slots = _dense_ref("adam", beta1=0.9, beta2=0.999, epsilon=1e-8, lr=0.05)
    state = _initial_state(slots, np.zeros(3, F32))
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros(3, F32), name="w")
        global_step = tf.Variable(0, trainable=False, dtype=tf.int64, name="global_step")
        loss = tf.reduce_sum(tf.square(w - target))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=global_step)
        assert train_op.type == "AssignAdd" and train_op.name == "Adam"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run(train_op)
                step(state, (2 * (state["var"] - target)).astype(F32))
            np.testing.assert_allclose(sess.run(w), state["var"], rtol=1e-5, atol=1e-6)
            assert sess.run(global_step) == 5


# ---- graph structure: names, slots, colocation ---------------------------------------------------------
def test_slot_names_shapes_dtypes_and_colocation() -> None:
    with tf.Graph().as_default() as g:
        with tf.device("/job:ps/task:1"):
            w = tf.Variable(np.ones((4, 2), np.float64), name="weights_1")
        with tf.device("/job:ps/task:0"):
            b = tf.Variable(np.ones(2, np.float64), name="biases_1")
        loss = tf.reduce_sum(w * w) + tf.reduce_sum(b)
        opt = tf.train.AdamOptimizer()
        opt.minimize(loss)
        assert opt.get_slot_names() == ["m", "v"]
        for var, slot_name, op_name in [
            (w, "m", "weights_1/Adam"),
            (w, "v", "weights_1/Adam_1"),
            (b, "m", "biases_1/Adam"),
            (b, "v", "biases_1/Adam_1"),
        ]:
            slot = opt.get_slot(var, slot_name)
            assert slot.op.name == op_name
            assert slot.shape == var.shape and slot.dtype == var.dtype
            assert slot.device == var.device
            assert slot.op.get_attr("_class") == [f"loc:@{var.op.name}"]
            assert not slot.trainable
            assert slot in tf.global_variables() and slot not in tf.trainable_variables()
        # beta powers live with the first variable by name (biases_1 < weights_1).
        beta1_power, beta2_power = opt._get_beta_accumulators()
        assert (beta1_power.op.name, beta2_power.op.name) == ("beta1_power", "beta2_power")
        assert beta1_power.device == b.device == "/job:ps/task:0"
        assert beta1_power.op.get_attr("_class") == ["loc:@biases_1"]
        assert beta1_power.dtype == tf.float32
        assert [v.op.name for v in opt.variables()] == [
            "beta1_power",
            "beta2_power",
            "biases_1/Adam",
            "biases_1/Adam_1",
            "weights_1/Adam",
            "weights_1/Adam_1",
        ]
        assert opt.get_slot(w, "nope") is None
        update = g.get_operation_by_name("Adam/update_weights_1/ApplyAdam")
        assert update.device == w.device
        assert g.get_operation_by_name("Adam/update_biases_1/ApplyAdam").get_attr("_class") == ["loc:@biases_1"]


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: tf.train.MomentumOptimizer(0.1, 0.9), {"momentum": ("w/Momentum", 0.0)}),
        (lambda: tf.train.AdagradOptimizer(0.1), {"accumulator": ("w/Adagrad", 0.1)}),
        (lambda: tf.train.RMSPropOptimizer(0.1), {"rms": ("w/RMSProp", 1.0), "momentum": ("w/RMSProp_1", 0.0)}),
        (
            lambda: tf.train.RMSPropOptimizer(0.1, centered=True),
            {"rms": ("w/RMSProp", 1.0), "mg": ("w/RMSProp_1", 0.0), "momentum": ("w/RMSProp_2", 0.0)},
        ),
        (lambda: tf.train.GradientDescentOptimizer(0.1), {}),
    ],
)
def test_slot_names_and_initial_values(make: Callable[[], Any], expected: dict[str, tuple[str, float]]) -> None:
    with tf.Graph().as_default():
        w = tf.Variable(np.ones((2, 3), np.float32), name="w")
        opt = make()
        opt.minimize(tf.reduce_sum(w * w))
        assert opt.get_slot_names() == sorted(expected)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for slot_name, (op_name, value) in expected.items():
                slot = opt.get_slot(w, slot_name)
                assert slot.op.name == op_name
                np.testing.assert_array_equal(sess.run(slot), np.full((2, 3), value, np.float32))


def test_slots_ignore_the_name_scope_and_are_made_once() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        opt = tf.train.MomentumOptimizer(0.1, 0.9)
        with tf.name_scope("training"):
            first = opt.minimize(tf.reduce_sum(w * w))
            second = opt.minimize(tf.reduce_sum(w), name="again")
        assert opt.get_slot(w, "momentum").op.name == "w/Momentum"
        assert len(opt.variables()) == 1
        assert first.name == "training/Momentum" and second.name == "training/again"
        assert tf.get_collection(tf.GraphKeys.TRAIN_OP) == [first, second]


def test_update_ops_are_named_and_scoped_like_tf() -> None:
    with tf.Graph().as_default() as g:
        with tf.variable_scope("layer"):
            w = tf.Variable([1.0], name="w")
        v = tf.Variable([2.0], name="v")
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(w * v), name="train")
        names = {op.name for op in g.get_operations()}
        assert {
            "train/update_layer/w/ApplyGradientDescent",
            "train/update_v/ApplyGradientDescent",
            "train/learning_rate",
            "train",
        } <= names
        assert train_op.type == "NoOp"
        assert {c.name for c in train_op.control_inputs} == {
            "train/update_layer/w/ApplyGradientDescent",
            "train/update_v/ApplyGradientDescent",
        }


# ---- semantics ------------------------------------------------------------------------------------------
def test_every_gradient_is_computed_before_any_update() -> None:
    # grad(a) reads b and grad(b) reads a: both must see the values from before the step.
    with tf.Graph().as_default():
        a = tf.Variable(2.0, name="a")
        b = tf.Variable(3.0, name="b")
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(a * b)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            assert sess.run([a, b]) == [0.5, 2.0]


def test_a_loss_fetched_with_the_train_op_is_the_loss_before_the_step() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 1.0], name="w")
        loss = tf.reduce_sum(w)  # its gradient does not need its value, so nothing else orders it first
        train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([train_op, loss])[1] == 2.0
            assert sess.run([train_op, loss])[1] == 1.0


def test_fed_gradients_of_several_variables() -> None:
    with tf.Graph().as_default():
        a = tf.Variable([1.0], name="a")
        b = tf.Variable([2.0], name="b")
        ga, gb = tf.placeholder(tf.float32, [1]), tf.placeholder(tf.float32, [1])
        train_op = tf.train.MomentumOptimizer(1.0, 0.5).apply_gradients([(ga, a), (gb, b)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, {ga: [1.0], gb: [-1.0]})
            assert sess.run([a, b]) == [[0.0], [3.0]]


def test_slots_of_a_variable_of_unknown_shape_take_its_runtime_shape() -> None:
    with tf.Graph().as_default():
        w = tf.Variable(tf.constant([1.0, 2.0, 3.0]), validate_shape=False, name="w")
        opt = tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.5)
        train_op = opt.minimize(tf.reduce_sum(w * w))
        slot = opt.get_slot(w, "accumulator")
        assert slot.shape.ndims is None
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            np.testing.assert_allclose(sess.run(slot), [4.5, 16.5, 36.5])


def test_minimize_with_var_list_updates_only_those_variables() -> None:
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(1.0, name="b")
        opt = tf.train.MomentumOptimizer(0.5, 0.9)
        train_op = opt.minimize(a * a + b * b, var_list=[b])
        assert opt.get_slot(a, "momentum") is None
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            assert sess.run([a, b]) == [1.0, 0.0]


def test_compute_gradients_pairs_and_gating() -> None:
    with tf.Graph().as_default():
        a = tf.Variable(3.0, name="a")
        b = tf.Variable(4.0, name="b")
        frozen = tf.Variable(5.0, name="frozen", trainable=False)
        opt = tf.train.GradientDescentOptimizer(0.1)
        pairs = opt.compute_gradients(a * a * frozen, gate_gradients=opt.GATE_GRAPH)
        assert [v for _, v in pairs] == [a, b] and pairs[1][0] is None
        pairs_loss = opt.compute_gradients(a * a, var_list=[a], grad_loss=tf.constant(2.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(pairs[0][0]) == 30.0
            assert sess.run(pairs_loss[0][0]) == 12.0


def test_learning_rate_can_be_a_fed_tensor_or_a_schedule() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 1.0], name="w")
        lr = tf.placeholder(tf.float32, [])
        train_op = tf.train.GradientDescentOptimizer(lr).minimize(tf.reduce_sum(w))
        step = tf.Variable(0, trainable=False, name="step")
        decayed = tf.train.exponential_decay(0.5, step, 1, 0.5, staircase=True)
        decay_op = tf.train.MomentumOptimizer(decayed, 0.0).minimize(tf.reduce_sum(w), global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op, {lr: 0.25})
            sess.run(train_op, {lr: 0.5})
            np.testing.assert_allclose(sess.run(w), [0.25, 0.25])
            sess.run(decay_op)  # lr 0.5
            sess.run(decay_op)  # lr 0.25
            np.testing.assert_allclose(sess.run(w), [-0.5, -0.5])
            assert sess.run(step) == 2


def test_feeding_a_constant_learning_rate_overrides_it() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0], name="w")
        opt = tf.train.GradientDescentOptimizer(0.5)
        train_op = opt.minimize(tf.reduce_sum(w))
        lr = tf.get_default_graph().get_tensor_by_name("GradientDescent/learning_rate:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            sess.run(train_op, {lr: 0.125})
            sess.run(train_op)
            np.testing.assert_allclose(sess.run(w), [1.0 - 0.5 - 0.125 - 0.5])


def test_float64_variables_cast_the_hyper_parameters() -> None:
    with tf.Graph().as_default():
        w = tf.Variable(np.array([1.0, 2.0]), name="w")
        train_op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            assert sess.run(w).dtype == np.float64
            np.testing.assert_allclose(sess.run(w), [0.9, 1.9], rtol=1e-6)


def test_constraint_is_applied_after_a_dense_update() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, -1.0], name="w", constraint=lambda x: x * 0.5)
        train_op = tf.train.GradientDescentOptimizer(1.0).minimize(tf.reduce_sum(w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            np.testing.assert_allclose(sess.run(w), [0.0, -1.0])


def test_use_locking_updates_the_same_way() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        train_op = tf.train.RMSPropOptimizer(0.1, momentum=0.9, use_locking=True).minimize(tf.reduce_sum(w * w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train_op)
            assert np.all(sess.run(w) < [1.0, 2.0])


def test_concurrent_unlocked_adam_steps_never_blow_up_the_weights() -> None:
    """Hogwild Adam (``use_locking=False``) from several threads, on gradients that are exactly 0 in most rows
    (like the always-dark border pixels of digits): a step must never divide one step's first moment by a
    second moment that is still 0. Unlocked, weights reached 1e5 here; TF's own kernel stays below 1."""
    lr, threads, steps = 0.003, 4, 150
    with tf.Graph().as_default():
        w = tf.Variable(tf.zeros([400, 50]))
        grad = tf.placeholder(tf.float32, [400, 50])
        train_op = tf.train.AdamOptimizer(lr).apply_gradients([(grad, w)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())

            def train(seed: int) -> None:
                rng = np.random.default_rng(seed)
                for _ in range(steps):
                    g = np.zeros([400, 50], F32)
                    g[rng.choice(400, 10, replace=False)] = rng.normal(size=[10, 50])
                    sess.run(train_op, {grad: g})

            workers = [threading.Thread(target=train, args=(seed,)) for seed in range(threads)]
            for t in workers:
                t.start()
            for t in workers:
                t.join()
            # One Adam step moves a weight by at most about lr * (1 - beta1) / sqrt(1 - beta2) = 3.2 lr.
            assert np.abs(sess.run(w)).max() < threads * steps * 3.2 * lr


# ---- errors -----------------------------------------------------------------------------------------------
def test_optimizer_errors() -> None:
    with tf.Graph().as_default():
        w = tf.Variable(1.0, name="w")
        opt = tf.train.GradientDescentOptimizer(0.1)
        no_grads = r"No gradients provided for any variable, check your graph for ops that do not support gradients"
        with pytest.raises(ValueError, match=no_grads + r", between variables \[\"<tf.Variable 'w:0'"):
            opt.minimize(tf.constant(2.0) * 3.0)
        with pytest.raises(ValueError, match=r"^No variables provided\.$"):
            opt.apply_gradients([])
        with pytest.raises(ValueError, match=r"No gradients provided for any variable: \[\"<tf.Variable 'w:0'"):
            opt.apply_gradients([(None, w)])
        with pytest.raises(TypeError, match="Gradient must be convertible to a Tensor or IndexedSlices"):
            opt.apply_gradients([(object(), w)])
        with pytest.raises(ValueError, match="gate_gradients must be one of"):
            opt.compute_gradients(w * w, gate_gradients=7)
        with pytest.raises(TypeError, match="Trying to optimize unsupported type"):
            opt.compute_gradients(w * w, var_list=["w"])
        with pytest.raises(TypeError, match="Trying to update a Tensor"):
            opt.minimize(w * w, var_list=[w.value()])
        with pytest.raises(ValueError, match=r"Invalid type tf.int32 for count:0, expected: \[tf.bfloat16"):
            opt.compute_gradients(tf.constant(1, name="count"))
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"^No variables to optimize\.$"):
            tf.train.AdamOptimizer().minimize(tf.constant(1.0))
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        tf.train.GradientDescentOptimizer(0.1, name="")
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive: -1.0"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=-1.0)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="global_step is required for exponential_decay"):
        tf.train.exponential_decay(0.1, None, 10, 0.9)


def test_sparse_update_refuses_a_constraint() -> None:
    with tf.Graph().as_default():
        emb = tf.Variable(np.ones((3, 2), np.float32), name="emb", constraint=lambda x: x)
        loss = tf.reduce_sum(tf.gather(emb, [0, 2]))
        with pytest.raises(RuntimeError, match="Cannot use a constraint function on a sparse variable."):
            tf.train.AdagradOptimizer(0.1).minimize(loss)


# ---- the fused ops themselves -------------------------------------------------------------------------------
def _run_op(
    build: Callable[..., Any], initial: list[np.ndarray], feed_values: dict[str, Any] | None = None, steps: int = 1
) -> list[np.ndarray]:
    """Runs ``build(*variables, **placeholders)`` ``steps`` times; returns the variables' final values."""
    with tf.Graph().as_default():
        variables = [tf.Variable(v, name=f"v{i}") for i, v in enumerate(initial)]
        placeholders = {k: tf.placeholder(tf.as_dtype(np.asarray(v).dtype)) for k, v in (feed_values or {}).items()}
        op = build(*variables, **placeholders)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            feed = {placeholders[k]: v for k, v in (feed_values or {}).items()}
            for _ in range(steps):
                sess.run(op, feed)
            return sess.run(variables)


def test_sparse_ops_apply_repeated_indices_one_after_the_other() -> None:
    var, accum = rand(4, 2, seed=6), rand(4, 2, low=0.5, high=1.5, seed=7)
    grad = rand(3, 2, seed=8)
    idx = np.array([1, 1, 3], np.int32)
    got_var, got_acc = _run_op(lambda v, a: training_ops.sparse_apply_momentum(v, a, 0.1, grad, idx, 0.9), [var, accum])
    exp_var, exp_acc = var.copy(), accum.copy()
    for i, row in enumerate(idx):
        exp_acc[row] = exp_acc[row] * F32(0.9) + grad[i]
        exp_var[row] -= F32(0.1) * exp_acc[row]
    np.testing.assert_allclose(got_var, exp_var, rtol=1e-6)
    np.testing.assert_allclose(got_acc, exp_acc, rtol=1e-6)


@pytest.mark.parametrize(
    "build",
    [
        lambda v, a, b: training_ops.sparse_apply_adagrad(v, a, 0.1, [[1.0, 1.0]], [7]),
        lambda v, a, b: training_ops.sparse_apply_momentum(v, a, 0.1, [[1.0, 1.0], [1.0, 1.0]], [0, -1], 0.9),
        lambda v, a, b: training_ops.sparse_apply_rms_prop(v, a, b, 0.1, 0.9, 0.0, 1e-7, [[1.0, 1.0]], [4]),
    ],
)
def test_sparse_ops_reject_out_of_range_indices(build: Callable[..., Any]) -> None:
    with pytest.raises(errors.InvalidArgumentError, match=r"Index (7|-1|4) at offset (0|1) in indices is out of range"):
        _run_op(build, [np.ones((4, 2), F32)] * 3)


def test_sparse_op_checks_grad_rows_against_indices_at_run_time() -> None:
    with pytest.raises(
        errors.InvalidArgumentError, match=r"grad must be the same size as indices in the first dimension\."
    ):
        _run_op(
            lambda v, a, idx: training_ops.sparse_apply_adagrad(v, a, 0.1, [[1.0, 1.0]], idx),
            [np.ones((4, 2), F32)] * 2,
            {"idx": np.array([0, 1], np.int32)},
        )


def test_dense_op_checks_shapes_and_scalars_at_run_time() -> None:
    with pytest.raises(errors.InvalidArgumentError, match=r"var and delta do not have the same shape\[2\] \[3\]"):
        _run_op(lambda v, g: training_ops.apply_gradient_descent(v, 0.1, g), [np.ones(2, F32)], {"g": np.ones(3, F32)})
    with pytest.raises(errors.InvalidArgumentError, match=r"lr is not a scalar: \[2\]"):
        _run_op(
            lambda v, a, lr: training_ops.apply_momentum(v, a, lr, [1.0, 1.0], 0.9),
            [np.ones(2, F32)] * 2,
            {"lr": np.ones(2, F32)},
        )


def test_update_ops_build_time_errors() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        with pytest.raises(
            TypeError,
            match=r"'ApplyGradientDescent' Op requires that input 'var' be a mutable "
            r"tensor \(e.g.: a tf.Variable\)",
        ):
            training_ops.apply_gradient_descent(tf.constant([1.0, 2.0]), 0.1, [1.0, 1.0])
        with pytest.raises(
            ValueError,
            match=r"Shape must be rank 0 but is rank 1 for 'ApplyGradientDescent' "
            r"\(op: 'ApplyGradientDescent'\) with input shapes: \[2\], \[1\], \[2\]",
        ):
            training_ops.apply_gradient_descent(w, [0.1], [1.0, 1.0])
        with pytest.raises(
            ValueError,
            match=r"Dimension 0 in both shapes must be equal, but are 2 and 3. Shapes are "
            r"\[2\] and \[3\]. for .ApplyGradientDescent_1.",
        ):
            training_ops.apply_gradient_descent(w, 0.1, [1.0, 1.0, 1.0])
        with pytest.raises(
            TypeError,
            match=r"Input 'alpha' of 'ApplyGradientDescent' Op has type float64 that "
            r"does not match type float32 of argument 'var'",
        ):
            training_ops.apply_gradient_descent(w, tf.constant(0.1, tf.float64), [1.0, 1.0])
        with pytest.raises(TypeError, match="Value passed to parameter 'indices' has DataType float32"):
            training_ops.sparse_apply_adagrad(w, w, 0.1, [1.0], [0.0])
        with pytest.raises(ValueError, match=r"Shape must be rank 1 but is rank 2"):
            training_ops.sparse_apply_adagrad(w, w, 0.1, [1.0], [[0]])
        with pytest.raises(ValueError, match=r"Dimensions? .*equal"):
            training_ops.sparse_apply_adagrad(w, w, 0.1, [1.0, 2.0], [0])
        with pytest.raises(TypeError, match="has DataType int32 not in list of allowed values"):
            training_ops.apply_gradient_descent(tf.Variable([1, 2]), 1, [1, 1])


def test_update_of_an_uninitialized_slot_fails() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0], name="w")
        acc = tf.Variable([1.0], name="acc")
        op = training_ops.apply_adagrad(w, acc, 0.1, [1.0])
        with tf.Session() as sess:
            sess.run(w.initializer)
            with pytest.raises(errors.FailedPreconditionError, match="uninitialized value acc"):
                sess.run(op)


def test_fused_ops_return_the_variable_and_are_not_differentiable() -> None:
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        out = training_ops.apply_adam(
            w,
            tf.Variable([0.0, 0.0]),
            tf.Variable([0.0, 0.0]),
            0.9,
            0.999,
            0.1,
            0.9,
            0.999,
            1e-8,
            [1.0, 1.0],
            use_nesterov=True,
        )
        assert out.is_ref and out.dtype == tf.float32 and out.shape.as_list() == [2]
        assert out.op.type == "ApplyAdam" and out.op.get_attr("use_nesterov") is True
        assert tf.gradients(tf.identity(out), [w]) == [None]
