"""TF1's learning-rate schedules of ``tf.train``: tensors recomputed from the global step on every run.

Each function builds the graph TF builds for it (its Keras ``LearningRateSchedule`` called on the step), in
the dtype of ``learning_rate``: ``exponential_decay``, ``natural_exp_decay``, ``inverse_time_decay``,
``piecewise_constant`` (a ``tf.case``), ``polynomial_decay`` (optionally cycling), ``cosine_decay``,
``cosine_decay_restarts`` (SGDR), ``linear_cosine_decay`` and ``noisy_linear_cosine_decay``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.Variable(20, trainable=False, name="step")
    ...     lr = tf.train.exponential_decay(0.1, step, decay_steps=10, decay_rate=0.5)
    ...     with tf.Session() as sess:
    ...         sess.run(step.initializer)
    ...         print(round(float(sess.run(lr)), 6))
    0.025
"""

from __future__ import annotations

import math
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops, random_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.control_flow.cond import case, cond
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.math.trig import cos

__all__ = [
    "exponential_decay",
    "natural_exp_decay",
    "inverse_time_decay",
    "piecewise_constant",
    "piecewise_constant_decay",
    "polynomial_decay",
    "cosine_decay",
    "cosine_decay_restarts",
    "linear_cosine_decay",
    "noisy_linear_cosine_decay",
]


def _require_step(global_step: Any, fn: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {fn}.")


def exponential_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)`` (integer division when ``staircase``).

    Args:
        learning_rate: The initial learning rate (a float or scalar tensor).
        global_step: The step counter (an integer variable or tensor); required.
        decay_steps: Steps over which the rate is multiplied by ``decay_rate``; must be positive.
        decay_rate: The decay factor.
        staircase: Decay in discrete intervals (``floor`` of the exponent).
        name: Name scope of the ops (default ``ExponentialDecay``).

    Returns:
        A scalar tensor of ``learning_rate``'s dtype, recomputed from ``global_step`` on every run.

    Raises:
        ValueError: ``global_step`` is None.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     lr = tf.train.exponential_decay(1.0, tf.constant(15), 10, 0.5, staircase=True)
        ...     with tf.Session() as sess:
        ...         print(sess.run(lr))
        0.5
    """
    _require_step(global_step, "exponential_decay")
    return _exponential(learning_rate, global_step, decay_steps, decay_rate, staircase, name)


def _exponential(learning_rate: Any, step: Any, decay_steps: Any, decay_rate: Any, staircase: bool, name: Any):
    with name_scope(name, "ExponentialDecay", [learning_rate, step, decay_steps, decay_rate]) as scope:
        initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial_learning_rate.dtype
        decay_steps_t = math_ops.cast(decay_steps, dtype)
        decay_rate_t = math_ops.cast(decay_rate, dtype)
        p = math_ops.cast(step, dtype) / decay_steps_t
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(initial_learning_rate, math_ops.pow(decay_rate_t, p), name=scope)


def natural_exp_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)`` (floored exponent when ``staircase``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.train.natural_exp_decay(1.0, 10, 10, 1.0))), 5))
        0.36788
    """
    _require_step(global_step, "natural_exp_decay")
    natural_exp_rate = math_ops.exp(math_ops.negative(decay_rate))
    return _exponential(learning_rate, global_step, decay_steps, natural_exp_rate, staircase, name)


def inverse_time_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)`` (floored quotient when ``staircase``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.train.inverse_time_decay(1.0, 10, 5, 0.5)))
        0.5
    """
    _require_step(global_step, "inverse_time_decay")
    with name_scope(name, "InverseTimeDecay", [learning_rate, global_step, decay_rate]) as scope:
        initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial_learning_rate.dtype
        decay_steps_t = math_ops.cast(decay_steps, dtype)
        decay_rate_t = math_ops.cast(decay_rate, dtype)
        p = math_ops.cast(global_step, dtype) / decay_steps_t
        if staircase:
            p = math_ops.floor(p)
        const = math_ops.cast(constant(1), dtype)
        denom = math_ops.add(const, math_ops.multiply(decay_rate_t, p))
        return math_ops.divide(initial_learning_rate, denom, name=scope)


def piecewise_constant(x: Any, boundaries: Any, values: Any, name: str | None = None) -> Tensor:
    """``values[0]`` while ``x <= boundaries[0]``, ``values[i]`` while ``boundaries[i-1] < x <= boundaries[i]``,
    ``values[-1]`` after the last boundary.

    Args:
        x: The step (a scalar tensor).
        boundaries: Increasing boundaries, of ``x``'s dtype (int32 boundaries are cast for an int64 ``x``).
        values: One more value than boundaries, all of one dtype.
        name: Name scope (default ``PiecewiseConstant``).

    Raises:
        ValueError: the lengths or dtypes do not fit.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     rates = [tf.train.piecewise_constant(s, [10, 20], [1.0, 0.5, 0.25]) for s in (10, 11, 21)]
        ...     print([float(r) for r in sess.run(rates)])
        [1.0, 0.5, 0.25]
    """
    boundaries = [convert_to_tensor(b) for b in _flatten(boundaries)]
    values = [convert_to_tensor(v) for v in _flatten(values)]
    x_recomp = convert_to_tensor(x)
    for i, b in enumerate(boundaries):
        if b.dtype.base_dtype is not x_recomp.dtype.base_dtype:
            if b.dtype.base_dtype is dtypes.int32 and x_recomp.dtype.base_dtype is dtypes.int64:
                boundaries[i] = math_ops.cast(b, x_recomp.dtype.base_dtype)
            else:
                raise ValueError(
                    f"Boundaries ({b.dtype.base_dtype}) must have the same dtype as x ({x_recomp.dtype.base_dtype})."
                )
    for v in values[1:]:
        if v.dtype.base_dtype is not values[0].dtype.base_dtype:
            raise ValueError(
                "Values must have elements all with the same dtype "
                f"({values[0].dtype.base_dtype} vs {v.dtype.base_dtype})."
            )
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with name_scope(name, "PiecewiseConstant", [x, *boundaries, *values]):
        pred_fn_pairs = [
            (x_recomp <= boundaries[0], lambda: values[0]),
            (x_recomp > boundaries[-1], lambda: values[-1]),
        ]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            pred = math_ops.logical_and(x_recomp > low, x_recomp <= high)
            pred_fn_pairs.append((pred, lambda v=v: v))
        return case(pred_fn_pairs, lambda: values[0], exclusive=True)


#: TF1's second name of :func:`piecewise_constant`.
piecewise_constant_decay = piecewise_constant


def _flatten(items: Any) -> list[Any]:
    if isinstance(items, list | tuple):
        return [leaf for item in items for leaf in _flatten(item)]
    return [items]


def polynomial_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    end_learning_rate: Any = 0.0001,
    power: Any = 1.0,
    cycle: bool = False,
    name: str | None = None,
) -> Tensor:
    """``(learning_rate - end) * (1 - step / decay_steps) ** power + end``, with the step capped at ``decay_steps``.

    With ``cycle`` the step is not capped: ``decay_steps`` is multiplied by ``ceil(step / decay_steps)``
    (1 at step 0), so the rate restarts from ``learning_rate`` at each multiple.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.train.polynomial_decay(1.0, 5, 10, end_learning_rate=0.0))), 6))
        0.5
    """
    _require_step(global_step, "polynomial_decay")
    with name_scope(name, "PolynomialDecay", [learning_rate, global_step, decay_steps, end_learning_rate, power]) as s:
        initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial_learning_rate.dtype
        end = math_ops.cast(end_learning_rate, dtype)
        power_t = math_ops.cast(power, dtype)
        step = math_ops.cast(global_step, dtype)
        decay_steps_t = math_ops.cast(decay_steps, dtype)
        if cycle:
            multiplier = where(
                math_ops.equal(step, 0), constant(1.0, dtype), math_ops.ceil(step / math_ops.cast(decay_steps, dtype))
            )
            decay_steps_t = math_ops.multiply(decay_steps_t, multiplier)
        else:
            step = math_ops.minimum(step, decay_steps_t)
        p = math_ops.divide(step, decay_steps_t)
        return math_ops.add(math_ops.multiply(initial_learning_rate - end, math_ops.pow(1 - p, power_t)), end, name=s)


def _cosine(fraction: Tensor) -> Tensor:
    """``0.5 * (1 + cos(pi * fraction))``, with TF's float32 ``pi`` constant."""
    return 0.5 * (1.0 + cos(math_ops.cast(constant(math.pi), fraction.dtype) * fraction))


def cosine_decay(
    learning_rate: Any, global_step: Any, decay_steps: Any, alpha: float = 0.0, name: str | None = None
) -> Tensor:
    """``learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.train.cosine_decay(2.0, 5, 10))), 6))
        1.0
    """
    _require_step(global_step, "cosine_decay")
    with name_scope(name, "CosineDecay", [learning_rate, global_step]):
        initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial_learning_rate.dtype
        decay_steps_t = math_ops.cast(decay_steps, dtype)
        step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps_t)
        completed_fraction = step / decay_steps_t
        decayed = (1 - alpha) * _cosine(completed_fraction) + alpha
        return math_ops.multiply(initial_learning_rate, decayed)


def cosine_decay_restarts(
    learning_rate: Any,
    global_step: Any,
    first_decay_steps: Any,
    t_mul: float = 2.0,
    m_mul: float = 1.0,
    alpha: float = 0.0,
    name: str | None = None,
) -> Tensor:
    """Cosine decay with warm restarts (SGDR): period ``i`` lasts ``first_decay_steps * t_mul**i`` steps and
    starts from ``learning_rate * m_mul**i``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print([round(float(sess.run(tf.train.cosine_decay_restarts(1.0, s, 10))), 4) for s in (5, 10, 20)])
        [0.5, 1.0, 0.5]
    """
    _require_step(global_step, "cosine_decay_restarts")
    with name_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial_learning_rate.dtype
        first_decay_steps_t = math_ops.cast(first_decay_steps, dtype)
        alpha_t = math_ops.cast(alpha, dtype)
        t_mul_t = math_ops.cast(t_mul, dtype)
        m_mul_t = math_ops.cast(m_mul, dtype)
        completed_fraction = math_ops.cast(global_step, dtype) / first_decay_steps_t

        def compute_step(fraction: Tensor, geometric: bool) -> tuple[Tensor, Tensor]:
            if geometric:
                i_restart = math_ops.floor(math_ops.log(1.0 - fraction * (1.0 - t_mul_t)) / math_ops.log(t_mul_t))
                sum_r = (1.0 - t_mul_t**i_restart) / (1.0 - t_mul_t)
                return i_restart, (fraction - sum_r) / t_mul_t**i_restart
            i_restart = math_ops.floor(fraction)
            return i_restart, fraction - i_restart

        i_restart, completed_fraction = cond(
            math_ops.equal(t_mul_t, 1.0),
            lambda: compute_step(completed_fraction, geometric=False),
            lambda: compute_step(completed_fraction, geometric=True),
        )
        m_fac = m_mul_t**i_restart
        cosine_decayed = 0.5 * m_fac * (1.0 + cos(math_ops.cast(constant(math.pi), dtype) * completed_fraction))
        decayed = (1 - alpha_t) * cosine_decayed + alpha_t
        return math_ops.multiply(initial_learning_rate, decayed, name=scope)


def linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * ((alpha + linear) * cosine + beta)``: ``linear`` falls from 1 to 0 over ``decay_steps``,
    ``cosine = 0.5 * (1 + cos(2 pi num_periods * step / decay_steps))``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.train.linear_cosine_decay(1.0, 0, 10))), 6))
        1.001
    """
    _require_step(global_step, "linear_cosine_decay")
    with name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        initial_learning_rate, linear_decayed, cosine_decayed, alpha_t, beta_t = _linear_cosine_parts(
            learning_rate, global_step, decay_steps, num_periods, alpha, beta
        )
        linear_cosine_decayed = (alpha_t + linear_decayed) * cosine_decayed + beta_t
        return math_ops.multiply(initial_learning_rate, linear_cosine_decayed, name=scope)


def _linear_cosine_parts(
    learning_rate: Any, global_step: Any, decay_steps: Any, num_periods: Any, alpha: Any, beta: Any
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """(initial rate, linear part, cosine part, alpha, beta) of the linear cosine schedules, built as TF builds them."""
    initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
    dtype = initial_learning_rate.dtype
    decay_steps_t = math_ops.cast(decay_steps, dtype)
    num_periods_t = math_ops.cast(num_periods, dtype)
    alpha_t = math_ops.cast(alpha, dtype)
    beta_t = math_ops.cast(beta, dtype)
    step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps_t)
    linear_decayed = (decay_steps_t - step) / decay_steps_t
    completed_fraction = step / decay_steps_t
    fraction = 2.0 * num_periods_t * completed_fraction
    return initial_learning_rate, linear_decayed, _cosine(fraction), alpha_t, beta_t


def noisy_linear_cosine_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    initial_variance: float = 1.0,
    variance_decay: float = 0.55,
    num_periods: float = 0.5,
    alpha: float = 0.0,
    beta: float = 0.001,
    name: str | None = None,
) -> Tensor:
    """:func:`linear_cosine_decay` with Gaussian noise of variance ``initial_variance / (1 + step)**variance_decay``
    added to the linear part (drawn anew on every run).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     lr = tf.train.noisy_linear_cosine_decay(1.0, 0, 10, initial_variance=0.0)
        ...     print(round(float(sess.run(lr)), 6))
        1.001
    """
    _require_step(global_step, "noisy_linear_cosine_decay")
    with name_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]) as scope:
        initial_learning_rate = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial_learning_rate.dtype
        decay_steps_t = math_ops.cast(decay_steps, dtype)
        initial_variance_t = math_ops.cast(initial_variance, dtype)
        variance_decay_t = math_ops.cast(variance_decay, dtype)
        num_periods_t = math_ops.cast(num_periods, dtype)
        alpha_t = math_ops.cast(alpha, dtype)
        beta_t = math_ops.cast(beta, dtype)
        step = math_ops.minimum(math_ops.cast(global_step, dtype), decay_steps_t)
        linear_decayed = (decay_steps_t - step) / decay_steps_t
        variance = initial_variance_t / math_ops.pow(1.0 + step, variance_decay_t)
        std = math_ops.sqrt(variance)
        noisy_linear_decayed = linear_decayed + random_ops.random_normal(
            linear_decayed.shape.as_list(), stddev=std, dtype=dtype
        )
        completed_fraction = step / decay_steps_t
        fraction = 2.0 * num_periods_t * completed_fraction
        noisy_linear_cosine_decayed = (alpha_t + noisy_linear_decayed) * _cosine(fraction) + beta_t
        return math_ops.multiply(initial_learning_rate, noisy_linear_cosine_decayed, name=scope)
