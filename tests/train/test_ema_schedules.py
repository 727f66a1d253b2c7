"""``tf.train.ExponentialMovingAverage`` and the learning-rate schedules of ``tf.train`` against real TensorFlow.

Each scenario is written once against the TF1 API and run with ``tensorflow.compat.v1`` and with
``dtf_notebook.compat.v1``: the values over several steps, the names of the variables an average creates,
and the collections it fills must be TF's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf

STEPS = [0, 1, 3, 5, 10, 17, 25, 40, 100]


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    real.compat.v1.disable_control_flow_v2()  # TF1's cond (an average's initial value is a cond on a ref variable)
    return real.compat.v1


# ---- learning-rate schedules ----------------------------------------------------------------------------
SCHEDULES: dict[str, Callable[[Any, Any], Any]] = {
    "exponential": lambda tf, s: tf.train.exponential_decay(0.1, s, 7, 0.8),
    "exponential_staircase": lambda tf, s: tf.train.exponential_decay(0.1, s, 7, 0.8, staircase=True),
    "natural_exp": lambda tf, s: tf.train.natural_exp_decay(0.1, s, 5, 0.3),
    "natural_exp_staircase": lambda tf, s: tf.train.natural_exp_decay(0.1, s, 5, 0.3, staircase=True),
    "inverse_time": lambda tf, s: tf.train.inverse_time_decay(0.1, s, 6, 0.5),
    "inverse_time_staircase": lambda tf, s: tf.train.inverse_time_decay(0.1, s, 6, 0.5, staircase=True),
    "piecewise": lambda tf, s: tf.train.piecewise_constant(s, [5, 17, 30], [1.0, 0.5, 0.25, 0.125]),
    "piecewise_one_boundary": lambda tf, s: tf.train.piecewise_constant_decay(s, [10], [0.3, 0.1]),
    "polynomial": lambda tf, s: tf.train.polynomial_decay(0.1, s, 30, end_learning_rate=0.01, power=0.5),
    "polynomial_cycle": lambda tf, s: tf.train.polynomial_decay(0.1, s, 12, 0.001, power=2.0, cycle=True),
    "cosine": lambda tf, s: tf.train.cosine_decay(0.1, s, 30),
    "cosine_alpha": lambda tf, s: tf.train.cosine_decay(0.1, s, 30, alpha=0.2),
    "cosine_restarts": lambda tf, s: tf.train.cosine_decay_restarts(0.1, s, 4),
    "cosine_restarts_t1_m": lambda tf, s: tf.train.cosine_decay_restarts(0.1, s, 6, t_mul=1.0, m_mul=0.7, alpha=0.1),
    "cosine_restarts_t3": lambda tf, s: tf.train.cosine_decay_restarts(0.1, s, 3, t_mul=3.0, m_mul=0.5),
    "linear_cosine": lambda tf, s: tf.train.linear_cosine_decay(0.1, s, 30),
    "linear_cosine_periods": lambda tf, s: tf.train.linear_cosine_decay(0.1, s, 30, 2.0, alpha=0.1, beta=0.01),
    "noisy_linear_cosine_no_noise": lambda tf, s: tf.train.noisy_linear_cosine_decay(
        0.1, s, 30, initial_variance=0.0, num_periods=1.5
    ),
}


def _schedule_values(tf: Any, build: Callable[[Any, Any], Any], step_dtype: Any) -> list[float]:
    with tf.Graph().as_default():
        step = tf.placeholder(step_dtype, [])
        lr = build(tf, step)
        with tf.Session() as sess:
            return [sess.run(lr, {step: s}) for s in STEPS]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_schedules_match_tensorflow(tf1, kind):
    for step_dtype in ("int64", "int32"):
        want = _schedule_values(tf1, SCHEDULES[kind], getattr(tf1, step_dtype))
        got = _schedule_values(dtf, SCHEDULES[kind], getattr(dtf, step_dtype))
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-9, err_msg=kind)
        assert [np.asarray(g).dtype for g in got] == [np.asarray(w).dtype for w in want]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("kind", ["exponential", "inverse_time", "polynomial", "natural_exp"])
def test_float64_learning_rates_match_tensorflow(tf1, kind):
    def build(tf: Any, s: Any) -> Any:
        return SCHEDULES[kind](_Float64(tf), s)

    want = _schedule_values(tf1, build, tf1.int64)
    got = _schedule_values(dtf, build, dtf.int64)
    assert np.asarray(got[0]).dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13)


class _Float64:
    """The module ``tf`` with ``tf.train``'s schedules given a float64 initial learning rate."""

    def __init__(self, tf: Any) -> None:
        self._tf = tf

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tf, name)

    @property
    def train(self) -> Any:
        tf = self._tf

        class Train:
            def __getattr__(self, name: str) -> Any:
                fn = getattr(tf.train, name)
                if name == "piecewise_constant":
                    return fn
                return lambda lr, *a, **k: fn(tf.constant(lr, tf.float64), *a, **k)

        return Train()


def test_noisy_linear_cosine_decay_is_noisy_around_its_mean():
    with dtf.Graph().as_default():
        step = dtf.placeholder(dtf.int64, [])
        noisy = dtf.train.noisy_linear_cosine_decay(1.0, step, 100, initial_variance=0.01, variance_decay=0.0)
        clean = dtf.train.linear_cosine_decay(1.0, step, 100)
        with dtf.Session() as sess:
            values = np.array([sess.run(noisy, {step: 20}) for _ in range(400)])
            mean = sess.run(clean, {step: 20})
    # noise of standard deviation 0.1 on the linear part, scaled by the cosine part
    cosine = 0.5 * (1 + np.cos(np.pi * 0.2))
    assert values.std() == pytest.approx(0.1 * cosine, rel=0.2)
    assert values.mean() == pytest.approx(mean, abs=0.03)


def test_schedules_need_a_global_step():
    with pytest.raises(ValueError, match="global_step is required for cosine_decay"):
        dtf.train.cosine_decay(0.1, None, 10)


@pytest.mark.tf_oracle
def test_piecewise_constant_errors_match_tensorflow(tf1):
    cases = [
        lambda tf: tf.train.piecewise_constant(tf.constant(1, tf.int64), [1.5], [1.0, 2.0]),
        lambda tf: tf.train.piecewise_constant(tf.constant(1), [1], [1.0, 2]),
        lambda tf: tf.train.piecewise_constant(tf.constant(1), [1, 2], [1.0, 2.0]),
    ]
    for case in cases:
        with tf1.Graph().as_default(), pytest.raises(ValueError) as want:
            case(tf1)
        with dtf.Graph().as_default(), pytest.raises(ValueError) as got:
            case(dtf)
        assert str(got.value) == str(want.value)


# ---- ExponentialMovingAverage ---------------------------------------------------------------------------
def _ema_run(tf: Any, zero_debias: bool, dtype: Any = np.float32) -> dict[str, Any]:
    """Two variables and a tensor averaged with num_updates tied to the step, over six steps.

    The tensor is fed (``2 * x``): a tensor computed from the variables would race with the training step in
    TF, whose ref reads alias the variables' buffers.
    """
    with tf.Graph().as_default() as g:
        w = tf.Variable(np.array([1.0, -2.0], dtype), name="w", use_resource=False)
        with tf.variable_scope("layer"):
            b = tf.Variable(np.array(0.5, dtype), name="b", use_resource=False)
        step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step", use_resource=False)
        loss = tf.reduce_sum(w * w) + b
        x = tf.placeholder(dtype, [], name="x")
        fed = tf.multiply(x, 2.0, name="fed")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step, zero_debias=zero_debias)
        with tf.control_dependencies([train]):
            update = ema.apply([w, b, fed])
        again = ema.apply([w])  # the same averages again
        history = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(6):
                sess.run(update, {x: 1.5 * i - 2.0})
                history.append(sess.run([ema.average(w), ema.average(b), ema.average(fed)]))
            sess.run(again)
            history.append(sess.run(ema.average(w)))
        return {
            "history": history,
            "globals": sorted(v.op.name for v in tf.global_variables()),
            "trainable": sorted(v.op.name for v in tf.trainable_variables()),
            "moving": [v.op.name for v in tf.moving_average_variables()],
            "names": [ema.average_name(v) for v in (w, b, fed)],
            "restore": sorted(ema.variables_to_restore()),
            "update_name": update.name,
            # TF2's compat.v1 makes the slots of tensors resource variables: compare the kinds of update.
            "ops": sorted({op.type.removesuffix("VariableOp") for op in g.get_operations() if "Assign" in op.type}),
        }


@pytest.mark.tf_oracle
@pytest.mark.parametrize("zero_debias", [False, True])
def test_exponential_moving_average_matches_tensorflow(tf1, zero_debias):
    want = _ema_run(tf1, zero_debias)
    got = _ema_run(dtf, zero_debias)
    for key in ("globals", "trainable", "moving", "names", "restore", "update_name", "ops"):
        assert got[key] == want[key], key
    for g_step, w_step in zip(got["history"], want["history"]):
        for g_value, w_value in zip(g_step, w_step):
            np.testing.assert_allclose(g_value, w_value, rtol=1e-6)


@pytest.mark.tf_oracle
def test_exponential_moving_average_float64_matches_tensorflow(tf1):
    want = _ema_run(tf1, True, np.float64)
    got = _ema_run(dtf, True, np.float64)
    for g_step, w_step in zip(got["history"], want["history"]):
        for g_value, w_value in zip(g_step, w_step):
            np.testing.assert_allclose(g_value, w_value, rtol=1e-7)


@pytest.mark.tf_oracle
def test_average_name_before_apply_and_restore_map_match_tensorflow(tf1):
    def names(tf: Any) -> tuple[str, dict[str, str]]:
        with tf.Graph().as_default():
            w = tf.Variable(1.0, name="w", use_resource=False)
            tf.Variable(0, trainable=False, name="counter", use_resource=False)
            ema = tf.train.ExponentialMovingAverage(0.99, name="Avg")
            before = ema.average_name(w)
            return before, {k: v.op.name for k, v in ema.variables_to_restore().items()}

    assert names(dtf) == names(tf1)


@pytest.mark.tf_oracle
def test_apply_rejects_integer_variables_as_tensorflow(tf1):
    def error(tf: Any) -> str:
        with tf.Graph().as_default():
            v = tf.Variable(1, name="count", use_resource=False)
            with pytest.raises(TypeError) as info:
                tf.train.ExponentialMovingAverage(0.9).apply([v])
            return str(info.value)

    assert error(dtf) == error(tf1)


def test_apply_defaults_to_trainable_variables_and_starts_at_their_values():
    with dtf.Graph().as_default():
        w = dtf.Variable([3.0, 4.0], name="w")
        dtf.Variable(7.0, trainable=False, name="frozen")
        ema = dtf.train.ExponentialMovingAverage(0.5)
        update = ema.apply()
        with dtf.Session() as sess:
            sess.run(dtf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(ema.average(w)), [3.0, 4.0])
            sess.run(w.assign([5.0, 6.0]))
            sess.run(update)
            np.testing.assert_array_equal(sess.run(ema.average(w)), [4.0, 5.0])
        assert [v.op.name for v in dtf.moving_average_variables()] == ["w"]
