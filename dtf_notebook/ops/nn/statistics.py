"""Reductions and noise of ``tf.nn``: ``l2_loss`` (the ``L2Loss`` op), ``moments`` and ``dropout``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     mean, variance = tf.nn.moments(tf.zeros([4, 3]), axes=[0])
    ...     mean.shape.as_list(), tf.nn.l2_loss(tf.ones([3])).op.type
    ([3], 'L2Loss')
"""

from __future__ import annotations

import numbers
from typing import Any

from dtf_notebook.framework import dtypes, op_registry, random_seed
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops, random_ops
from dtf_notebook.ops.identity_ops import stop_gradient
from dtf_notebook.ops.nn.common import FLOATS
from dtf_notebook.ops.op_helpers import check_dtype, make_op


def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """Half the squared L2 norm: ``sum(t ** 2) / 2`` (a scalar).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.l2_loss([1.0, 2.0, 3.0])))
        7.0
    """
    x = convert_to_tensor(t, name="t")
    check_dtype(x, FLOATS, "L2Loss", "t")
    return make_op("L2Loss", [x], name=name or "L2Loss").outputs[0]


op_registry.register_op(
    "L2Loss",
    infer=lambda op: [(op.inputs[0].dtype, TensorShape([]))],
    kernel=lambda op, ctx: lambda x: torch.sum(x * x) * 0.5,
    grad=lambda op, grad: [math_ops.multiply(op.inputs[0], grad)],
)


def moments(
    x: Any,
    axes: Any,
    shift: Any = None,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``x`` over ``axes`` (float16 inputs are accumulated in float32).

    ``shift`` is accepted for compatibility and unused, as in TF1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     mean, var = tf.nn.moments(tf.constant([[1.0, 3.0], [5.0, 7.0]]), axes=[0])
        ...     with tf.Session() as sess:
        ...         print(sess.run([mean, var]))
        [array([3., 5.], dtype=float32), array([4., 4.], dtype=float32)]
    """
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, dtypes.float32) if x.dtype is dtypes.float16 else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The mean is a constant for the variance's gradient, exactly as in TF.
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, stop_gradient(mean)), axes, keepdims=True, name="variance"
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype is dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


# ---- dropout ---------------------------------------------------------------------------------------
def _noise_shape(x: Tensor, noise_shape: Any) -> Any:
    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, Tensor) or x.shape.ndims is None:
        return noise_shape
    dims = list(TensorShape(noise_shape).as_list())
    if len(dims) == x.shape.ndims:
        # TF fills unknown noise dimensions from x's static shape.
        dims = [x.shape[i].value if d is None else d for i, d in enumerate(dims)]
    if any(d is None for d in dims):
        return noise_shape
    return dims


def dropout(
    x: Any,
    keep_prob: Any = None,
    noise_shape: Any = None,
    seed: int | None = None,
    name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zeroes each element with probability ``rate`` (= ``1 - keep_prob``) and scales the rest by ``1 / (1 - rate)``.

    Args:
        x: A floating point tensor.
        keep_prob: TF1's probability of keeping an element (a float in ``(0, 1]`` or a scalar tensor).
        noise_shape: Shape of the random keep/drop mask, broadcast against ``x`` (default: ``x``'s shape).
        seed: Op seed (combined with the graph seed, see ``tf.set_random_seed``).
        name: Name scope.
        rate: Probability of dropping an element; give either ``rate`` or ``keep_prob``.

    Raises:
        ValueError: both or neither of ``rate``/``keep_prob``, a rate outside ``[0, 1)``, or integer ``x``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.dropout(tf.ones([1000]), keep_prob=0.5, seed=1)
        ...     with tf.Session() as sess:
        ...         values = sess.run(y)
        >>> sorted(set(values.tolist())), 400 < int((values > 0).sum()) < 600
        ([0.0, 2.0], True)
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
    if keep_prob is None and rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(
                f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: x_dtype={x.dtype}"
            )
        if keep_prob is not None:
            if isinstance(keep_prob, numbers.Real):
                if not 0 < keep_prob <= 1:
                    raise ValueError(
                        f"`keep_prob` must be a float in the range (0, 1]. Received: keep_prob={keep_prob}"
                    )
                rate = 1 - float(keep_prob)
            else:
                keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
                rate = math_ops.subtract(1.0, keep_prob, name="rate")
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError(
                    f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}"
                )
            if rate == 0:
                # Consume the op seed all the same, so later random ops draw what they would with rate > 0.
                random_seed.get_seed(seed)
                return x
            scale: Any = 1.0 / (1.0 - float(rate))
        else:
            rate = convert_to_tensor(rate, dtype=x.dtype, name="rate")
            if rate.shape.ndims not in (None, 0):
                raise ValueError(f"`rate` must be a scalar tensor, got shape {rate.shape}")
            scale = math_ops.divide(1.0, math_ops.subtract(1.0, rate))
        shape = _noise_shape(x, noise_shape)
        random_tensor = random_ops.random_uniform(shape, seed=seed, dtype=x.dtype)
        keep_mask = math_ops.greater_equal(random_tensor, rate)
        ret = math_ops.multiply(math_ops.multiply(x, scale), math_ops.cast(keep_mask, x.dtype), name=scope)
        if noise_shape is None:
            ret.set_shape(x.shape)
        return ret
