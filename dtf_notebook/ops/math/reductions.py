"""TF's Python-level math functions, built from other ops as TF builds them: ``reduce_logsumexp``,
``count_nonzero``, ``reduce_variance``/``reduce_std``, ``l2_normalize``, ``zero_fraction``, ``polyval``,
``accumulate_n``, ``log_sigmoid``, ``reciprocal_no_nan``, ``is_non_decreasing``/``is_strictly_increasing``,
``confusion_matrix``, ``linspace``, the real-valued forms of ``real``/``imag``/``conj``/``angle``, TF1's ``arg_max``/
``arg_min``; and ``reduce_euclidean_norm``, the one op here (``EuclideanNorm``, a reduction like ``Sum``).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(reduce_logsumexp([[0.0, 0.0], [1.0, 1.0]], axis=1)).round(4))
    [0.6931 1.6931]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes, unknown_shape
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity, stop_gradient
from dtf_notebook.ops.math._common import REAL, array_ops, dense, deprecated_arg
from dtf_notebook.ops.math.arg_reduce import argmax, argmin
from dtf_notebook.ops.math.binary import add, maximum, multiply, realdiv, subtract, truediv
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import equal, greater, greater_equal, less, not_equal
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.reduce import (
    _kept_dims_grad,  # the reductions' shared gradient reshaping, for EuclideanNorm's gradient
    _reduce,
    _reduction_infer,
    _reduction_kernel,
    reduce_all,
    reduce_max,
    reduce_mean,
    reduce_sum,
)
from dtf_notebook.ops.math.select_v2 import where_v2
from dtf_notebook.ops.math.special import is_finite
from dtf_notebook.ops.math.sums import add_n
from dtf_notebook.ops.math.unary import exp, log, negative, rsqrt, sqrt, square
from dtf_notebook.ops.op_helpers import constant_value

__all__ = [
    "reduce_logsumexp",
    "count_nonzero",
    "log_sigmoid",
    "accumulate_n",
    "real",
    "imag",
    "conj",
    "angle",
    "is_non_decreasing",
    "is_strictly_increasing",
    "confusion_matrix",
    "linspace",
    "lin_space",
    "arg_max",
    "arg_min",
]


# ---- EuclideanNorm --------------------------------------------------------------------------------------------
def _euclidean_norm_fn(op: Operation) -> Callable[..., torch.Tensor]:
    if op.inputs[0].dtype.is_integer:
        out = op.inputs[0].dtype

        def run_int(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
            from dtf_notebook.runtime.values import torch_dtype

            return torch.sqrt(torch.sum(x.double() ** 2, dims, keep)).to(torch_dtype(out))

        return run_int
    return lambda x, dims, keep: torch.linalg.vector_norm(x, 2, dims, keep)


def _euclidean_norm_grad(op: Operation, grad: Any) -> list[Any]:
    output = _kept_dims_grad(op, op.outputs[0])
    grad = _kept_dims_grad(op, dense(grad))
    return [truediv(op.inputs[0], realdiv(output, grad)), None]


op_registry.register_op(
    "EuclideanNorm",
    infer=_reduction_infer,
    kernel=_reduction_kernel(_euclidean_norm_fn),
    grad=_euclidean_norm_grad,
)


def reduce_euclidean_norm(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """``sqrt(sum(x ** 2))`` over ``axis`` (op ``EuclideanNorm``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.reduce_euclidean_norm([[3.0, 4.0], [5.0, 12.0]], axis=1)))
        [ 5. 13.]
    """
    return _reduce("EuclideanNorm", input_tensor, axis, bool(keepdims), name, None, None, REAL)


# ---- reductions built from others -------------------------------------------------------------------------------
def reduce_logsumexp(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """``log(sum(exp(x)))`` over ``axis``, computed stably by subtracting the (finite) maximum first.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_logsumexp([0.0, 0.0])).round(4))
        0.6931
    """
    axis = deprecated_arg("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_arg("keepdims", keepdims, "keep_dims", keep_dims) or False)
    ao = array_ops()
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        raw_max = reduce_max(x, axis=axis, keepdims=True)
        my_max = stop_gradient(where_v2(is_finite(raw_max), raw_max, constant(0, dtype=raw_max.dtype)))
        result = log(reduce_sum(exp(subtract(x, my_max)), axis=axis, keepdims=keepdims))
        if not keepdims:
            my_max = ao.reshape(my_max, ao.shape(result))
        result = add(result, my_max, name=scope)
    if not result.shape.is_fully_defined() and not keepdims and axis is None:
        result.set_shape(())
    return result


def count_nonzero(
    input_tensor: Any = None,
    axis: Any = None,
    keepdims: bool | None = None,
    dtype: Any = dtypes.int64,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
    input: Any = None,  # noqa: A002 - TF's name
) -> Tensor:
    """The number of non-zero (or true) entries over ``axis``, as ``dtype``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1)))
        [2 1]
    """
    input_tensor = deprecated_arg("input", input, "input_tensor", input_tensor)
    axis = deprecated_arg("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(deprecated_arg("keepdims", keepdims, "keep_dims", keep_dims) or False)
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input")
        if x.dtype is dtypes.bool:
            predicate = x
        else:
            predicate = not_equal(x, array_ops().zeros([], dtype=x.dtype))
        counts = reduce_sum(cast(predicate, dtypes.int64), axis=axis, keepdims=keepdims)
        return cast(counts, dtype)


def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The variance ``mean((x - mean(x)) ** 2)`` over ``axis``.

    Raises:
        TypeError: the input is an integer tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.reduce_variance([[1.0, 3.0], [2.0, 2.0]], axis=1)))
        [1. 0.]
    """
    with name_scope(name or "reduce_variance"):
        x = convert_to_tensor(input_tensor)
        means = reduce_mean(x, axis=axis, keepdims=True)
        if means.dtype.is_integer:
            raise TypeError(f"Input must be either real or complex. Received integer type {means.dtype}.")
        return reduce_mean(square(subtract(x, means)), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None) -> Tensor:
    """The standard deviation: the square root of :func:`reduce_variance`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.reduce_std([1.0, 3.0])))
        1.0
    """
    with name_scope(name or "reduce_std"):
        x = convert_to_tensor(input_tensor)
        return sqrt(reduce_variance(x, axis=axis, keepdims=keepdims))


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: str | None = None, dim: Any = None) -> Tensor:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``: unit L2 norm along ``axis`` (all axes if None).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.l2_normalize([3.0, 4.0], 0)))
        [0.6 0.8]
    """
    axis = deprecated_arg("axis", axis, "dim", dim)
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduce_sum(square(x), axis, keepdims=True)
        x_inv_norm = rsqrt(maximum(square_sum, epsilon))
        return multiply(x, x_inv_norm, name=scope)


def zero_fraction(value: Any, name: str | None = None) -> Tensor:
    """The fraction of entries of ``value`` that are zero, as float32 (a sparsity summary).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.zero_fraction([[0.0, 1.0], [0.0, 0.0]])))
        0.75
    """
    ao = array_ops()
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        size = ao.size(value, out_type=dtypes.int64)
        with name_scope("count_nonzero"):
            zero = ao.zeros([], dtype=value.dtype)
            num_nonzero = reduce_sum(cast(not_equal(value, zero), dtypes.int64), name="nonzero_count")
        with name_scope("counts_to_fraction"):
            num_zero = subtract(size, num_nonzero)
            fraction = truediv(cast(num_zero, dtypes.float32), cast(size, dtypes.float32))
        return identity(fraction, "fraction")


def polyval(coeffs: Sequence[Any], x: Any, name: str | None = None) -> Tensor:
    """The polynomial ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` at ``x``, by Horner's rule.

    Raises:
        ValueError: ``coeffs`` is not a list.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.polyval([1.0, 0.0, -1.0], [2.0, 3.0])))
        [3. 8.]
    """
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    with name_scope(name, "polyval", [*coeffs, x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not coeffs:
            return array_ops().zeros_like(x, name=scope)
        parts = [convert_to_tensor(c, name=f"coeff_{i}") for i, c in enumerate(coeffs)]
        p = parts[0]
        for c in parts[1:]:
            p = add(c, multiply(p, x))
        return p


def accumulate_n(inputs: Sequence[Any], shape: Any = None, tensor_dtype: Any = None, name: str | None = None) -> Tensor:
    """The sum of ``inputs`` (tensors of one dtype and shape), as :func:`add_n` computes it.

    Raises:
        ValueError: ``inputs`` is empty or mixes dtypes; TypeError: ``tensor_dtype`` differs from theirs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.accumulate_n([[1, 2], [3, 4]])))
        [4 6]
    """
    if not inputs or not isinstance(inputs, list | tuple):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    tensors = [convert_to_tensor(t) for t in inputs]
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise ValueError("inputs must be a list of at least one Tensor with the same dtype and shape")
    merged = TensorShape(shape) if shape is not None else unknown_shape()
    for t in tensors:
        merged = merged.merge_with(t.shape)
    if tensor_dtype is not None and dtypes.as_dtype(tensor_dtype) is not tensors[0].dtype:
        raise TypeError(
            f"The `tensor_dtype` argument is {tensor_dtype}, but `input` is of type {tensors[0].dtype}. "
            "These must be equal. Try casting the input to the desired type."
        )
    if len(tensors) == 1:
        return tensors[0] if name is None else identity(tensors[0], name=name)
    return add_n(tensors, name=name)


def log_sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.log_sigmoid([0.0, -100.0])).round(4))
        [  -0.6931 -100.    ]
    """
    from dtf_notebook.ops.nn.activations import softplus

    with name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return negative(softplus(negative(x)), name=scope)


def reciprocal_no_nan(x: Any, name: str | None = None) -> Tensor:
    """``1 / x``, and 0 where ``x`` is 0.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.math.reciprocal_no_nan([2.0, 0.0])))
        [0.5 0. ]
    """
    from dtf_notebook.ops.math.safe_div import div_no_nan

    with name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return div_no_nan(constant(1, dtype=x.dtype), x, name=scope)


# ---- complex parts of real tensors (there are no complex dtypes here) -----------------------------------------------
def _numeric(x: Any, name: str) -> Tensor:
    t = convert_to_tensor(x, name=name)
    if t.dtype not in REAL:
        raise TypeError(f"input must be a numeric tensor, but got tensor with dtype {t.dtype.name}")
    return t


def real(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The real part: a real tensor itself.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.real([1.5, -2.0])))
        [ 1.5 -2. ]
    """
    with name_scope(name, "Real", [input]):
        return _numeric(input, "input")


def imag(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The imaginary part: zeros for a real tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.imag([1.5, -2.0])))
        [0. 0.]
    """
    with name_scope(name, "Imag", [input]):
        return array_ops().zeros_like(_numeric(input, "input"))


def conj(x: Any, name: str | None = None) -> Tensor:
    """The complex conjugate: a real tensor itself.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.conj([1, 2])))
        [1 2]
    """
    if isinstance(x, Tensor) and x.dtype in REAL:
        return x
    with name_scope(name, "Conj", [x]):
        return _numeric(x, "x")


def angle(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The argument: ``pi`` for negative real entries, else 0.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.angle([-1.0, 2.0])))
        [3.1415927 0.       ]
    """
    from dtf_notebook.ops.math.select import where

    ao = array_ops()
    with name_scope(name, "Angle", [input]):
        x = _numeric(input, "input")
        return where(less(x, 0), multiply(np.pi, ao.ones_like(x)), ao.zeros_like(x))


# ---- monotonicity ---------------------------------------------------------------------------------------------
def _monotonic(x: Any, name: str | None, default: str, compare: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    from dtf_notebook.ops.check_ops import is_numeric_tensor

    with name_scope(name, default, [x]):
        flat = array_ops().reshape(convert_to_tensor(x, name="x"), [-1])
        if not is_numeric_tensor(flat):
            raise TypeError(f"Expected x to be numeric, instead found: {flat}")
        # Fewer than two entries give two empty slices, and reduce_all([]) is True.
        return reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether ``x`` (flattened) never decreases; true for fewer than two entries.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run([tf.is_non_decreasing([1, 1, 2]), tf.is_strictly_increasing([1, 1, 2])]))
        [np.True_, np.False_]
    """
    return _monotonic(x, name, "is_non_decreasing", greater_equal)


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether ``x`` (flattened) always increases; true for fewer than two entries.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.is_strictly_increasing([[1, 2], [3, 9]])))
        True
    """
    return _monotonic(x, name, "is_strictly_increasing", greater)


# ---- confusion matrix -----------------------------------------------------------------------------------------
def _remove_squeezable_dimensions(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Drops a trailing size-1 axis of whichever input has one more axis than the other (static ranks)."""
    ao = array_ops()
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is not None and pr is not None:
        if pr - lr == 1 and predictions.shape[-1].is_compatible_with(1):
            predictions = ao.squeeze(predictions, [-1])
        elif pr - lr == -1 and labels.shape[-1].is_compatible_with(1):
            labels = ao.squeeze(labels, [-1])
    return labels, predictions


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
    weights: Any = None,
) -> Tensor:
    """The ``[num_classes, num_classes]`` matrix counting (or summing ``weights`` of) each (label, prediction) pair;
    rows are labels, columns predictions.

    Raises:
        InvalidArgumentError: (at run time) a label or prediction is negative or not below ``num_classes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2])))
        [[1 0 0]
         [0 1 1]
         [0 0 1]]
    """
    from dtf_notebook.ops import check_ops
    from dtf_notebook.ops.array.scatter_nd import scatter_nd

    ao = array_ops()
    with name_scope(name, "confusion_matrix", (predictions, labels, num_classes, weights)):
        labels, predictions = _remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"), convert_to_tensor(predictions, name="predictions")
        )
        predictions = cast(predictions, dtypes.int64)
        labels = cast(labels, dtypes.int64)
        labels = _with_check(check_ops.assert_non_negative(labels, message="`labels` contains negative values"), labels)
        predictions = _with_check(
            check_ops.assert_non_negative(predictions, message="`predictions` contains negative values"), predictions
        )
        if num_classes is None:
            num_classes = add(maximum(reduce_max(predictions), reduce_max(labels)), 1)
        else:
            n = cast(num_classes, dtypes.int64)
            labels = _with_check(check_ops.assert_less(labels, n, message="`labels` out of bound"), labels)
            predictions = _with_check(
                check_ops.assert_less(predictions, n, message="`predictions` out of bound"), predictions
            )
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = cast(weights, dtype)
        shape = ao.stack([num_classes, num_classes])
        indices = ao.stack([labels, predictions], axis=1)
        values = ao.ones_like(predictions, dtype) if weights is None else weights
        return scatter_nd(indices=indices, updates=values, shape=cast(shape, dtypes.int64))


def _with_check(check: Any, value: Tensor) -> Tensor:
    """``value`` through an identity that runs after ``check`` (TF's ``with_dependencies``)."""
    with name_scope(None, "control_dependency", [value]) as scope, control_dependencies([check]):
        return identity(value, name=scope)


# ---- linspace -------------------------------------------------------------------------------------------------
def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included) along a new axis ``axis``; ``start``
    and ``stop`` may be tensors that broadcast together.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linspace(0.0, 1.0, 5)))
        [0.   0.25 0.5  0.75 1.  ]
    """
    from dtf_notebook.ops.array.array_extras import broadcast_dynamic_shape

    ao = array_ops()
    with name_scope(name, "linspace", [start, stop]):
        start = convert_to_tensor(start, name="start")
        stop = convert_to_tensor(stop, name="stop", dtype=start.dtype)
        num_int = convert_to_tensor(num, name="num")
        if not num_int.dtype.is_integer:
            raise TypeError(f"num must be an integer, got {num_int.dtype.name}")
        shape_ = broadcast_dynamic_shape(ao.shape(start), ao.shape(stop))
        start = ao.broadcast_to(start, shape_)
        stop = ao.broadcast_to(stop, shape_)
        expanded_start = ao.expand_dims(start, axis=axis)
        expanded_stop = ao.expand_dims(stop, axis=axis)
        shape = ao.shape(expanded_start)
        ndims = ao.shape(shape)[0]
        axis_t = where_v2(axis >= 0, axis, add(ndims, axis))
        # Endpoints are added by concatenation and the result sliced to num, so that num = 0 and 1 work too.
        num_fill = maximum(subtract(num_int, 2), 0)
        n_steps = maximum(subtract(num_int, 1), 1)
        delta = truediv(subtract(expanded_stop, expanded_start), cast(n_steps, expanded_stop.dtype))
        expanded_start = cast(expanded_start, delta.dtype)
        expanded_stop = cast(expanded_stop, delta.dtype)
        range_end = where_v2(greater_equal(num_int, 0), n_steps, -1)
        desired_range = cast(math_range(1, cast(range_end, dtypes.int64), dtype=dtypes.int64), delta.dtype)
        mask = equal(axis_t, math_range(ndims))
        desired_range = ao.reshape(desired_range, where_v2(mask, num_fill, 1))
        res = add(expanded_start, multiply(delta, desired_range))
        concatenated = ao.concat([expanded_start, res, expanded_stop], axis=axis)
        begin = ao.zeros_like(shape)
        size = ao.concat([shape[0:axis_t], ao.reshape(cast(num_int, shape.dtype), [1]), shape[axis_t + 1 :]], axis=0)
        out = ao.slice(concatenated, begin, size)
        # TF knows the result's shape while building when num and the bounds' shapes are known; so do we.
        static_num = constant_value(num_int)
        bounds = broadcast_shapes(start.shape, stop.shape) if start.shape.ndims is not None else unknown_shape()
        if static_num is not None and bounds.ndims is not None:
            dims = bounds.as_list()
            at = axis if axis >= 0 else len(dims) + 1 + axis
            out.set_shape(dims[:at] + [max(int(static_num), 0)] + dims[at:])
        return out


lin_space = linspace


# ---- TF1's deprecated argmax/argmin names -----------------------------------------------------------------------
def arg_max(input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None) -> Tensor:  # noqa: A002
    """TF1's ``tf.arg_max``: :func:`argmax` along ``dimension``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.arg_max([[1, 5], [7, 2]], 1)))
        [1 0]
    """
    return argmax(input, dimension, name=name, output_type=output_type)


def arg_min(input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None) -> Tensor:  # noqa: A002
    """TF1's ``tf.arg_min``: :func:`argmin` along ``dimension``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.arg_min([[1, 5], [7, 2]], 1)))
        [0 1]
    """
    return argmin(input, dimension, name=name, output_type=output_type)
