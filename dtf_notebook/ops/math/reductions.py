"""TF's Python-level math functions, built from other ops as TF builds them: ``reduce_logsumexp``,
``count_nonzero``, ``reduce_variance``/``reduce_std``, ``l2_normalize``, ``zero_fraction``, ``polyval``,
``accumulate_n``, ``log_sigmoid``, ``reciprocal_no_nan``, the real-valued forms of ``real``/``imag``/``conj``/``angle``,
TF1's ``arg_max``/``arg_min``; and ``reduce_euclidean_norm``, the one op here (``EuclideanNorm``, a reduction like
``Sum``).

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

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity, stop_gradient
from dtf_notebook.ops.math._common import REAL, array_ops, dense, deprecated_arg, is_complex
from dtf_notebook.ops.math.arg_reduce import argmax, argmin
from dtf_notebook.ops.math.binary import add, maximum, multiply, realdiv, subtract, truediv
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import less, not_equal
from dtf_notebook.ops.math.reduce import (
    _kept_dims_grad,  # the reductions' shared gradient reshaping, for EuclideanNorm's gradient
    _reduce,
    _reduction_infer,
    _reduction_kernel,
    reduce_max,
    reduce_mean,
    reduce_sum,
)
from dtf_notebook.ops.math.select_v2 import where_v2
from dtf_notebook.ops.math.special import is_finite
from dtf_notebook.ops.math.sums import add_n
from dtf_notebook.ops.math.unary import exp, log, negative, rsqrt, sqrt, square

__all__ = [
    "reduce_logsumexp",
    "count_nonzero",
    "log_sigmoid",
    "accumulate_n",
    "real",
    "imag",
    "conj",
    "angle",
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


# ---- complex parts (complex tensors: ops/complex_ops.py) -------------------------------------------------------------
def _complex_ops() -> Any:
    from dtf_notebook.ops import complex_ops  # imports the math ops itself

    return complex_ops


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
    if is_complex(input):
        return _complex_ops().real_part(input, name)
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
    if is_complex(input):
        return _complex_ops().imag_part(input, name)
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
    if is_complex(x):
        return _complex_ops().conjugate(x, name)
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

    if is_complex(input):
        return _complex_ops().angle_of(input, name)
    ao = array_ops()
    with name_scope(name, "Angle", [input]):
        x = _numeric(input, "input")
        return where(less(x, 0), multiply(np.pi, ao.ones_like(x)), ao.zeros_like(x))


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
