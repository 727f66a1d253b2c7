"""``tf.contrib.layers``' initializers and regularizers, as TF 1.x's contrib wrote them.

Initializers: ``xavier_initializer`` (= ``variance_scaling_initializer(1.0, "FAN_AVG", uniform)``),
``xavier_initializer_conv2d`` and ``variance_scaling_initializer`` (a truncated normal with
``stddev = sqrt(1.3 * factor / n)``, or uniform with ``limit = sqrt(3 * factor / n)``). Regularizers:
``l1_regularizer``, ``l2_regularizer`` (``scale * l2_loss``), ``l1_l2_regularizer``, ``sum_regularizer`` and
``apply_regularization``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.get_variable("w", [2], initializer=tf.constant_initializer(3.0),
    ...                         regularizer=tf.contrib.layers.l2_regularizer(0.1))
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(sess.run(tf.losses.get_regularization_loss()).round(4))
    0.9
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_collection, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops, nn_ops, random_ops
from dtf_notebook.ops.constant_op import constant

__all__ = [
    "xavier_initializer",
    "xavier_initializer_conv2d",
    "variance_scaling_initializer",
    "l1_regularizer",
    "l2_regularizer",
    "l1_l2_regularizer",
    "sum_regularizer",
    "apply_regularization",
]


def variance_scaling_initializer(
    factor: float = 2.0,
    mode: str = "FAN_IN",
    uniform: bool = False,
    seed: int | None = None,
    dtype: Any = dtypes.float32,
) -> Callable[..., Tensor]:
    """Contrib's variance scaling: ``n`` is fan-in, fan-out or their average (``FAN_IN``/``FAN_OUT``/``FAN_AVG``).

    Raises:
        TypeError: a non-float dtype or an unknown mode.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     init = tf.contrib.layers.variance_scaling_initializer(uniform=True)
        ...     init([4, 3]).op.type
        'Add'
    """
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")

    def _initializer(shape: Any, dtype: Any = dtype, partition_info: Any = None) -> Tensor:
        dtype = dtypes.as_dtype(dtype)
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        dims = [int(d) for d in (partition_info.full_shape if partition_info is not None else shape)]
        if dims:
            fan_in = float(dims[-2]) if len(dims) > 1 else float(dims[-1])
            fan_out = float(dims[-1])
        else:
            fan_in = fan_out = 1.0
        for dim in dims[:-2]:
            fan_in *= float(dim)
            fan_out *= float(dim)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_ops.random_uniform(shape, -limit, limit, dtype, seed=seed)
        return random_ops.truncated_normal(shape, 0.0, math.sqrt(1.3 * factor / n), dtype, seed=seed)

    return _initializer


def xavier_initializer(uniform: bool = True, seed: int | None = None, dtype: Any = dtypes.float32) -> Callable:
    """Glorot's initializer: ``variance_scaling_initializer(1.0, "FAN_AVG", uniform)``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.get_variable("w", [3, 3], initializer=tf.contrib.layers.xavier_initializer()).shape.as_list()
        [3, 3]
    """
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


def _check_scale(scale: Any) -> bool:
    """Raises for a bad scale; True when the scale turns the regularizer off."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")
        return scale == 0.0
    return False


def l1_regularizer(scale: Any, scope: str | None = None) -> Callable[[Any], Any]:
    """``scale * sum(|weights|)``.

    Raises:
        ValueError: an integer or negative scale.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.contrib.layers.l1_regularizer(0.5)(tf.constant([1.0, -3.0]))))
        2.0
    """
    if _check_scale(scale):
        return lambda _: None

    def l1(weights: Any, name: str | None = None) -> Tensor:
        with name_scope(scope, "l1_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, math_ops.reduce_sum(math_ops.abs(weights)), name=name)

    return l1


def l2_regularizer(scale: Any, scope: str | None = None) -> Callable[[Any], Any]:
    """``scale * l2_loss(weights)`` (``l2_loss`` is half the sum of squares).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.contrib.layers.l2_regularizer(0.5)(tf.constant([1.0, -3.0]))))
        2.5
    """
    if _check_scale(scale):
        return lambda _: None

    def l2(weights: Any) -> Tensor:
        with name_scope(scope, "l2_regularizer", [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return math_ops.multiply(my_scale, nn_ops.l2_loss(weights), name=name)

    return l2


def sum_regularizer(regularizer_list: list[Any], scope: str | None = None) -> Callable[[Any], Any] | None:
    """The sum of several regularizers (None when the list holds none).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> reg = tf.contrib.layers.sum_regularizer([tf.contrib.layers.l1_regularizer(1.0), None])
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(reg(tf.constant([1.0, -3.0]))))
        4.0
    """
    regularizers = [reg for reg in regularizer_list if reg is not None]
    if not regularizers:
        return None

    def sum_reg(weights: Any) -> Tensor | None:
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            tensors = [t for t in (reg(weights) for reg in regularizers) if t is not None]
            return math_ops.add_n(tensors, name=name) if tensors else None

    return sum_reg


def l1_l2_regularizer(scale_l1: Any = 1.0, scale_l2: Any = 1.0, scope: str | None = None) -> Callable[[Any], Any]:
    """``l1_regularizer(scale_l1) + l2_regularizer(scale_l2)``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.contrib.layers.l1_l2_regularizer(1.0, 1.0)(tf.constant([1.0, -3.0]))))
        9.0
    """
    if isinstance(scale_l1, numbers.Integral):
        raise ValueError(f"scale_l1 cannot be an integer: {scale_l1}")
    if isinstance(scale_l2, numbers.Integral):
        raise ValueError(f"scale_l2 cannot be an integer: {scale_l2}")
    scope = scope or "l1_l2_regularizer"
    if scale_l1 == 0.0:
        return l2_regularizer(scale_l2, scope)
    if scale_l2 == 0.0:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def apply_regularization(regularizer: Callable[[Any], Any], weights_list: Any = None) -> Tensor:
    """Adds ``sum(regularizer(w))`` over ``weights_list`` (default: the ``WEIGHTS`` collection) to
    ``REGULARIZATION_LOSSES`` and returns it.

    Raises:
        ValueError: no weights, or a regularizer that does not return a scalar.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     penalty = tf.contrib.layers.apply_regularization(tf.contrib.layers.l1_regularizer(1.0),
        ...                                                      [tf.constant([1.0]), tf.constant([-2.0])])
        ...     print(sess.run(penalty), penalty.op.name)
        3.0 get_regularization_penalty
    """
    if not weights_list:
        weights_list = get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError(
                    f"regularizer must return a scalar Tensor instead of a Tensor with rank {p.shape.ndims}."
                )
        summed = math_ops.add_n(penalties, name=scope)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed
