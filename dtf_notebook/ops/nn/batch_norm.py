"""Batch normalization of ``tf.nn``: the fused ``FusedBatchNormV3`` op (and its gradient op) and TF's composite
``batch_normalization``.

``FusedBatchNormV3`` keeps TF's inputs, attrs and six outputs. In training it normalizes with the batch's
biased variance and returns the unbiased (Bessel-corrected) one as ``batch_variance``, blended into the running
values by ``exponential_avg_factor``; in inference it uses the given mean and variance. Reserve spaces 1 and 2
hold the batch mean and biased variance that ``FusedBatchNormGradV3`` reads.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.reshape(tf.range(8.0), [2, 2, 2, 1])
    ...     y, mean, var = tf.nn.fused_batch_norm(x, [1.0], [0.0])
    ...     with tf.Session() as sess:
    ...         print([v.round(4) for v in sess.run([mean, var])])
    [array([3.5], dtype=float32), array([6.], dtype=float32)]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.nn.common import with_rank
from dtf_notebook.ops.op_helpers import make_op

_FLOAT_INPUTS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _channel_axis(op: Any) -> int:
    return 1 if op.get_attr("data_format") in ("NCHW", "NCDHW") else -1


def _vector_shape(op: Any) -> TensorShape:
    x = op.inputs[0]
    if x.shape.ndims is None:
        return TensorShape([None])
    return TensorShape([x.shape[_channel_axis(op)].value])


def _fused_infer(op: Any) -> list:
    x, scale = op.inputs[0], op.inputs[1]
    vec = _vector_shape(op).merge_with(with_rank(scale.shape, 1))
    f = scale.dtype
    return [(x.dtype, x.shape), (f, vec), (f, vec), (f, vec), (f, vec), (f, TensorShape([None]))]


def _reduce_dims(x: torch.Tensor, axis: int) -> tuple[list[int], list[int]]:
    """(axes to reduce over, broadcast shape of a per-channel vector) for ``x``."""
    axis = axis % x.dim()
    view = [1] * x.dim()
    view[axis] = x.shape[axis]
    return [d for d in range(x.dim()) if d != axis], view


def _fused_kernel(op: Any, ctx: Any):
    eps = float(op.get_attr("epsilon"))
    factor = float(op.get_attr("exponential_avg_factor"))
    training = bool(op.get_attr("is_training"))
    axis = _channel_axis(op)

    def run(x, scale, offset, mean, variance):
        dims, view = _reduce_dims(x, axis)
        xf = x.to(scale.dtype)
        if training:
            batch_mean = xf.mean(dims)
            biased = xf.var(dims, unbiased=False)
            count = xf.numel() // max(xf.shape[axis % x.dim()], 1)
            unbiased = biased * (count / max(count - 1, 1))
            norm_mean, norm_var = batch_mean, biased
            if factor != 1.0:
                out_mean = (1 - factor) * mean + factor * batch_mean
                out_var = (1 - factor) * variance + factor * unbiased
            else:
                out_mean, out_var = batch_mean, unbiased
        else:
            norm_mean, norm_var = mean, variance
            out_mean, out_var = mean, variance
        inv = torch.rsqrt(norm_var + eps) * scale
        y = (xf - norm_mean.view(view)) * inv.view(view) + offset.view(view)
        empty = scale.new_empty(0)
        return y.to(x.dtype), out_mean, out_var, norm_mean, norm_var, empty

    return run


def _fused_grad(op: Any, dy: Tensor, *_: Any) -> list:
    x, scale = op.inputs[0], op.inputs[1]
    training = op.get_attr("is_training")
    saved = (op.outputs[3], op.outputs[4]) if training else (op.inputs[3], op.inputs[4])
    attrs = {k: op.get_attr(k) for k in ("epsilon", "data_format", "is_training")}
    grad = make_op("FusedBatchNormGradV3", [dy, x, scale, saved[0], saved[1], op.outputs[5]], attrs)
    dx, dscale, doffset = grad.outputs[:3]
    return [dx, dscale, doffset, None, None]


op_registry.register_op("FusedBatchNormV3", infer=_fused_infer, kernel=_fused_kernel, grad=_fused_grad)


def _grad_infer(op: Any) -> list:
    dy, x, scale = op.inputs[:3]
    vec = with_rank(scale.shape, 1)
    f = scale.dtype
    return [(x.dtype, x.shape.merge_with(dy.shape)), (f, vec), (f, vec), (f, TensorShape([0])), (f, TensorShape([0]))]


def _grad_kernel(op: Any, ctx: Any):
    eps = float(op.get_attr("epsilon"))
    training = bool(op.get_attr("is_training"))
    axis = _channel_axis(op)

    def run(dy, x, scale, mean, variance, _reserve):
        dims, view = _reduce_dims(x, axis)
        dyf, xf = dy.to(scale.dtype), x.to(scale.dtype)
        inv = torch.rsqrt(variance + eps)
        x_hat = (xf - mean.view(view)) * inv.view(view)
        doffset = dyf.sum(dims)
        dscale = (dyf * x_hat).sum(dims)
        if training:
            count = xf.numel() // max(xf.shape[axis % x.dim()], 1)
            centered = dyf - (doffset / count).view(view) - x_hat * (dscale / count).view(view)
            dx = centered * (scale * inv).view(view)
        else:
            dx = dyf * (scale * inv).view(view)
        empty = scale.new_zeros(0)
        return dx.to(x.dtype), dscale, doffset, empty, empty

    return run


op_registry.register_op("FusedBatchNormGradV3", infer=_grad_infer, kernel=_grad_kernel)


def fused_batch_norm(
    x: Any,
    scale: Any,
    offset: Any,
    mean: Any = None,
    variance: Any = None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: str | None = None,
    exponential_avg_factor: float = 1.0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Batch normalization of a 4-D (or 5-D) ``x`` in one op: ``(y, batch_mean, batch_variance)``.

    Args:
        x: Input, NHWC/NCHW (or NDHWC/NCDHW).
        scale, offset: Per-channel gamma and beta.
        mean, variance: Population statistics for inference, or the running values blended with the batch's
            when ``exponential_avg_factor`` is not 1.
        epsilon: Added to the variance (at least 1.001e-5, as TF clamps it).
        data_format: Where the channel axis is.
        is_training: Normalize with the batch's statistics (True) or with ``mean``/``variance``.
        name: Op name.
        exponential_avg_factor: Weight of the batch statistics in the returned running values.

    Raises:
        ValueError: ``mean``/``variance`` missing for inference or a running average.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y, _, _ = tf.nn.fused_batch_norm(tf.ones([1, 1, 1, 2]), [1.0, 1.0], [0.5, 0.5], [1.0, 1.0],
        ...                                      [1.0, 1.0], is_training=False)
        ...     print(sess.run(y).reshape(-1).round(3))
        [0.5 0.5]
    """
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(
            "Both `mean` and `variance` must be a 1D tensor when is_training is False or exponential_avg_factor "
            f"!= 1.0. Received: `mean` {mean!r} and `variance` {variance!r}"
        )
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    if x.dtype not in _FLOAT_INPUTS:
        raise TypeError(f"FusedBatchNormV3: x must be floating point, got {x.dtype.name}")
    mean = constant([]) if mean is None else convert_to_tensor(mean, name="mean")
    variance = constant([]) if variance is None else convert_to_tensor(variance, name="variance")
    attrs = {
        "epsilon": max(float(epsilon), 1.001e-5),
        "exponential_avg_factor": float(exponential_avg_factor),
        "data_format": data_format,
        "is_training": bool(is_training),
        "T": x.dtype,
        "U": scale.dtype,
    }
    op = make_op("FusedBatchNormV3", [x, scale, offset, mean, variance], attrs, name=name or "FusedBatchNormV3")
    return op.outputs[0], op.outputs[1], op.outputs[2]


def batch_normalization(
    x: Any,
    mean: Any,
    variance: Any,
    offset: Any,
    scale: Any,
    variance_epsilon: float,
    name: str | None = None,
) -> Tensor:
    """``(x - mean) / sqrt(variance + variance_epsilon) * scale + offset``, built as TF builds it.

    ``offset`` and ``scale`` may be None.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.batch_normalization(tf.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0)
        ...     print(sess.run(y))
        [-1.  1.]
    """
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        # Python operators, as TF writes it, so the ops are named add/mul/sub like TF's.
        inv = math_ops.rsqrt(convert_to_tensor(variance) + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        scaled = x * math_ops.cast(inv, x.dtype)
        shift = offset - mean * inv if offset is not None else -convert_to_tensor(mean) * inv
        return scaled + math_ops.cast(shift, x.dtype)


__all__ = ["fused_batch_norm", "batch_normalization"]
