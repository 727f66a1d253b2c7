"""Learning-rate schedules of ``tf.train`` that depend on the global step.

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

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops

__all__ = ["exponential_decay"]


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
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    with name_scope(name, "ExponentialDecay", [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        initial_learning_rate = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = initial_learning_rate.dtype
        decay_steps_t = math_ops.cast(decay_steps, dtype)
        decay_rate_t = math_ops.cast(decay_rate, dtype)
        global_step_recomp = math_ops.cast(global_step, dtype)
        p = global_step_recomp / decay_steps_t
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(initial_learning_rate, math_ops.pow(decay_rate_t, p), name=scope)
