"""Statistics and normalizations of ``tf.nn`` beyond ``moments``: ``weighted_moments``,
``sufficient_statistics``/``normalize_moments``, ``batch_norm_with_global_normalization`` (TF's composites)
and local response normalization (the ``LRN``/``LRNGrad`` ops).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.ones([1, 2, 2, 8])
    ...     y = local_response_normalization(x, depth_radius=2)
    ...     y.op.type, tf.gradients(y, x)[0].op.type
    ('LRN', 'LRNGrad')
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.nn.batch_norm import batch_normalization
from dtf_notebook.ops.nn.common import with_rank
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = [
    "weighted_moments",
    "sufficient_statistics",
    "normalize_moments",
    "batch_norm_with_global_normalization",
    "lrn",
    "local_response_normalization",
]

_LRN_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)


def _keep_dims(keep_dims: bool | None, keepdims: bool | None) -> bool:
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    return bool(keepdims if keepdims is not None else keep_dims)


def weighted_moments(
    x: Any,
    axes: Any,
    frequency_weights: Any,
    name: str | None = None,
    keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``x`` over ``axes``, each element counted ``frequency_weights`` times (broadcast).

    A zero total weight gives a zero mean and variance (``div_no_nan``), as in TF.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     mean, var = tf.nn.weighted_moments(tf.constant([1.0, 3.0]), [0], tf.constant([3.0, 1.0]))
        ...     print(sess.run([mean, var]))
        [np.float32(1.5), np.float32(0.75)]
    """
    keep = _keep_dims(keep_dims, keepdims)
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        frequency_weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        needs_cast = x.dtype == dtypes.float16
        if needs_cast:
            x = math_ops.cast(x, dtypes.float32)
        if frequency_weights.dtype != x.dtype:
            frequency_weights = math_ops.cast(frequency_weights, x.dtype)
        weighted_input_sum = math_ops.reduce_sum(frequency_weights * x, axes, name="weighted_input_sum", keepdims=True)
        broadcasted_weights = frequency_weights + array_ops.zeros_like(x)
        sum_of_weights = math_ops.reduce_sum(broadcasted_weights, axes, name="sum_of_weights", keepdims=True)
        weighted_mean = div_no_nan(weighted_input_sum, sum_of_weights)
        weighted_distsq = math_ops.reduce_sum(
            frequency_weights * math_ops.squared_difference(x, weighted_mean),
            axes,
            name="weighted_distsq",
            keepdims=True,
        )
        weighted_variance = div_no_nan(weighted_distsq, sum_of_weights)
        if not keep:
            weighted_mean = array_ops.squeeze(weighted_mean, axis=axes)
            weighted_variance = array_ops.squeeze(weighted_variance, axis=axes)
        if needs_cast:
            weighted_mean = math_ops.cast(weighted_mean, dtypes.float16)
            weighted_variance = math_ops.cast(weighted_variance, dtypes.float16)
        return weighted_mean, weighted_variance


def sufficient_statistics(
    x: Any,
    axes: Any,
    shift: Any = None,
    keep_dims: bool | None = None,
    name: str | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor, Tensor, Any]:
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over ``axes``: what :func:`normalize_moments` needs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     count, m_ss, v_ss, _ = tf.nn.sufficient_statistics(tf.constant([[1.0, 2.0], [3.0, 4.0]]), [0])
        ...     print(sess.run([count, m_ss, v_ss]))
        [np.float32(2.0), array([4., 6.], dtype=float32), array([10., 20.], dtype=float32)]
    """
    axes = list(set(axes))
    keep = _keep_dims(keep_dims, keepdims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        x_shape = x.shape
        if x_shape.ndims is not None and all(x_shape[d].value is not None for d in axes):
            counts = 1
            for d in axes:
                counts *= x_shape[d].value
            counts = constant(counts, dtype=x.dtype)
        else:
            rank = array_ops.rank(x)
            positive_axes = [axis + rank if axis < 0 else axis for axis in axes]
            x_dims = array_ops.gather(math_ops.cast(array_ops.shape(x), x.dtype), positive_axes)
            counts = math_ops.reduce_prod(x_dims, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss = math_ops.subtract(x, shift)
            v_ss = math_ops.squared_difference(x, shift)
        else:
            m_ss = x
            v_ss = math_ops.square(x)
        m_ss = math_ops.reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = math_ops.reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(
    counts: Any, mean_ss: Any, variance_ss: Any, shift: Any, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """Mean and variance from :func:`sufficient_statistics`' outputs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     mean, var = tf.nn.normalize_moments(2.0, [4.0, 6.0], [10.0, 20.0], None)
        ...     print(sess.run([mean, var]))
        [array([2., 3.], dtype=float32), array([1., 1.], dtype=float32)]
    """
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
            mean = math_ops.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = math_ops.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = math_ops.subtract(
            math_ops.multiply(variance_ss, divisor), math_ops.square(shifted_mean), name="variance"
        )
    return mean, variance


def batch_norm_with_global_normalization(
    t: Any = None,
    m: Any = None,
    v: Any = None,
    beta: Any = None,
    gamma: Any = None,
    variance_epsilon: float | None = None,
    scale_after_normalization: bool | None = None,
    name: str | None = None,
    input: Any = None,  # noqa: A002 - TF's names
    mean: Any = None,
    variance: Any = None,
) -> Tensor:
    """TF1's batch normalization with given moments: ``batch_normalization(t, m, v, beta, gamma or None, eps)``.

    ``gamma`` is used only if ``scale_after_normalization``; ``input``/``mean``/``variance`` are TF2's names.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.batch_norm_with_global_normalization([[3.0]], [1.0], [4.0], [0.5], [2.0], 0.0, True)
        ...     print(sess.run(y))
        [[2.5]]
    """
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon, name)


# ---- LRN, LRNGrad -----------------------------------------------------------------------------------------------
def _window_sum(values: torch.Tensor, radius: int) -> torch.Tensor:
    """Sum over the last axis of each window ``[d - radius, d + radius]`` (clipped to the axis)."""
    shape = values.shape
    flat = values.reshape(-1, 1, shape[-1])
    width = 2 * radius + 1
    # avg_pool1d counting the zero padding, times the window width: a windowed sum in one kernel.
    summed = F.avg_pool1d(flat, width, stride=1, padding=radius, count_include_pad=True) * width
    return summed.reshape(shape)


def _lrn_attrs(op: Any) -> tuple[int, float, float, float]:
    return (op.get_attr("depth_radius"), op.get_attr("bias"), op.get_attr("alpha"), op.get_attr("beta"))


def _lrn_kernel(op: Any, ctx: Any):
    radius, bias, alpha, beta = _lrn_attrs(op)

    def run(x: torch.Tensor) -> torch.Tensor:
        work = x.float() if x.dtype != torch.float32 else x
        norm = _window_sum(work * work, radius).mul_(alpha).add_(bias)
        return (work * norm.pow_(-beta)).to(x.dtype)

    return run


def _lrn_grad_kernel(op: Any, ctx: Any):
    radius, bias, alpha, beta = _lrn_attrs(op)

    def run(grads: torch.Tensor, inputs: torch.Tensor, outputs: torch.Tensor) -> torch.Tensor:
        g = grads.float() if grads.dtype != torch.float32 else grads
        x = inputs.float() if inputs.dtype != torch.float32 else inputs
        norm = _window_sum(x * x, radius).mul_(alpha).add_(bias)
        scaled = norm.pow(-beta)
        # d out_i / d x_j = [i == j] N_i^-beta - 2 alpha beta x_i x_j N_i^(-beta-1), for j in i's window (and
        # i in j's: the windows are symmetric).
        cross = _window_sum(g * x * scaled / norm, radius)
        return (g * scaled - (2.0 * alpha * beta) * x * cross).to(grads.dtype)

    return run


def _lrn_infer(op: Any) -> list:
    x = op.inputs[0]
    return [(x.dtype, with_rank(x.shape, 4))]


def _lrn_grad_infer(op: Any) -> list:
    g, x, y = op.inputs
    return [(g.dtype, with_rank(g.shape.merge_with(x.shape).merge_with(y.shape), 4))]


def _lrn_grad(op: Any, grad: Tensor) -> list:
    attrs = {k: op.get_attr(k) for k in ("depth_radius", "bias", "alpha", "beta")}
    return [make_op("LRNGrad", [grad, op.inputs[0], op.outputs[0]], attrs).outputs[0]]


op_registry.register_op("LRN", infer=_lrn_infer, kernel=_lrn_kernel, grad=_lrn_grad)
op_registry.register_op("LRNGrad", infer=_lrn_grad_infer, kernel=_lrn_grad_kernel)


def local_response_normalization(
    input: Any,  # noqa: A002 - TF's name
    depth_radius: int = 5,
    bias: float = 1.0,
    alpha: float = 1.0,
    beta: float = 0.5,
    name: str | None = None,
) -> Tensor:
    """Local response normalization over the last axis of a 4-D tensor:
    ``input / (bias + alpha * sum(input[..., d - r : d + r + 1] ** 2)) ** beta``.

    Args:
        input: A 4-D float16/bfloat16/float32 tensor.
        depth_radius: ``r``, the half-width of the window.
        bias, alpha, beta: As in the formula (``alpha`` is not divided by the window size, unlike some papers).
        name: Op name.

    Raises:
        ValueError: ``input`` is not 4-D, or has another dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.lrn(tf.ones([1, 1, 1, 3]), depth_radius=1, alpha=1.0, beta=1.0)))
        [[[[0.33333334 0.25       0.33333334]]]]
    """
    x = convert_to_tensor(input, name="input")
    check_dtype(x, _LRN_DTYPES, "LRN", "input")
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha), "beta": float(beta)}
    return make_op("LRN", [x], attrs, name=name or "LRN").outputs[0]


lrn = local_response_normalization
