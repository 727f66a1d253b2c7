"""Math ops: elementwise arithmetic, comparisons, casts, matmul, reductions, and the Tensor operators.

Each op is one registry entry (output inference, torch kernel, gradient) next to
its TF1 builder function. Binary ops follow TF's broadcasting; their gradients
sum the incoming gradient back to each input's shape, statically when the
shapes tell which axes were broadcast, else with a ``BroadcastGradientArgs``
op on the runtime shapes. Importing this module also installs the arithmetic
operators (``+ - * / // % ** @``, unary ``-``, ``abs``, comparisons, ``& | ^ ~``)
on :class:`Tensor`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     print(sess.run(tf.reduce_sum(x * 2.0 + 1.0, axis=1)))
    [ 8. 16.]
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes, unknown_shape
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.op_helpers import (
    binary_operands,
    broadcast_binary,
    broadcast_compare,
    check_dtype,
    constant_value,
    make_op,
    same_as_input,
)
from dtf_notebook.runtime.values import torch_dtype

__all__ = [
    "add", "subtract", "multiply", "scalar_mul", "divide", "truediv", "realdiv", "div", "floordiv", "floormod",
    "mod", "pow", "negative", "abs", "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "reciprocal",
    "sigmoid", "tanh", "floor", "ceil", "round", "maximum", "minimum", "squared_difference",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
    "cast", "to_float", "to_double", "to_int32", "to_int64", "saturate_cast",
    "matmul", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
    "argmax", "argmin", "add_n", "clip_by_value", "where", "unsorted_segment_sum", "range",
]

# This module defines TF's `abs`, `pow`, `range` and `round`; internal code uses the builtins under these names.
_py_range = builtins.range
_py_abs = builtins.abs

_FLOAT = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_SIGNED_INT = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
_INT = _SIGNED_INT + (dtypes.uint8,)
_REAL = _FLOAT + _INT
_SIGNED = _FLOAT + _SIGNED_INT
_ANY = _REAL + (dtypes.bool, dtypes.string)
_INDEX = (dtypes.int32, dtypes.int64)
_MATMUL = _FLOAT + (dtypes.int32, dtypes.int64)


# ---- small helpers -------------------------------------------------------------------------------------
def _array_ops() -> Any:
    # array_ops imports this module's builders lazily too; importing it at module level would be circular.
    from dtf_notebook.ops import array_ops

    return array_ops


def _fmt(shape: TensorShape) -> str:
    """A shape the way TF's error messages print it: ``[2,?]``, or ``?`` for unknown rank."""
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _dense(grad: Any) -> Any:
    """An incoming gradient as a dense tensor (IndexedSlices from gathers are summed into rows)."""
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def _deprecated_arg(new_name: str, new_value: Any, old_name: str, old_value: Any) -> Any:
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new_value if new_value is not None else old_value


def _is_tensor_like(value: Any) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def _shape_of(x: Tensor) -> Any:
    """``x``'s shape: a Python list when static (becomes a Const), else a ``Shape`` op."""
    if x.shape.is_fully_defined():
        return x.shape.as_list()
    return _array_ops().shape(x)


def _int_division(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Wraps an integer division kernel so that a zero divisor gives TF's error."""

    def run(a: Any, b: Any) -> Any:
        try:
            return fn(a, b)
        except RuntimeError as e:
            if "ZeroDivisionError" in str(e):
                raise errors.InvalidArgumentError(None, None, "Integer division by zero") from None
            raise

    return run


# ---- gradients of broadcasting ops ---------------------------------------------------------------------
def broadcast_gradient_args(s0: Any, s1: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The axes to sum a gradient over to undo broadcasting shape ``s0`` with ``s1`` (TF's op).

    Returns:
        ``(r0, r1)``: 1-D int tensors of axes of the broadcast shape to reduce for each input.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.math_ops import broadcast_gradient_args
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     r0, r1 = broadcast_gradient_args([2, 3], [3])
        ...     print(sess.run([r0, r1]))
        [array([], dtype=int32), array([0], dtype=int32)]
    """
    with name_scope(name, "BroadcastGradientArgs", [s0, s1]) as scope:
        s0 = convert_to_tensor(s0, dtype=dtypes.int32 if not _is_tensor_like(s0) else None, name="s0")
        s1 = convert_to_tensor(s1, dtype=s0.dtype if not _is_tensor_like(s1) else None, name="s1")
        return tuple(make_op("BroadcastGradientArgs", [s0, s1], name=scope).outputs)


def _bcast_args_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    dtype = op.inputs[0].dtype
    return [(dtype, TensorShape([None])), (dtype, TensorShape([None]))]


def _bcast_args_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = torch_dtype(op.inputs[0].dtype)

    def run(s0: torch.Tensor, s1: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = s0.tolist(), s1.tolist()
        n = max(len(a), len(b))
        pa, pb = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        r0, r1 = [], []
        for i, (da, db) in enumerate(zip(pa, pb)):
            if da == db:
                if da == 1:
                    r0.append(i)
                    r1.append(i)
            elif da == 1:
                r0.append(i)
            elif db == 1:
                r1.append(i)
            else:
                raise errors.InvalidArgumentError(None, None, f"Incompatible shapes: {a} vs. {b}")
        return torch.tensor(r0, dtype=dtype), torch.tensor(r1, dtype=dtype)

    return run


op_registry.register_op(
    "BroadcastGradientArgs",
    infer=_bcast_args_infer,
    kernel=_bcast_args_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def _broadcast_axes(shape: TensorShape, other: TensorShape) -> tuple[list[int], list[int]] | None:
    """Which axes of ``broadcast(shape, other)`` a gradient must be summed over to get back ``shape``.

    Returns ``(leading, size_one)``: the axes ``shape`` lacks, and its size-1 axes the other side may
    stretch (summing a size-1 axis that was not stretched is harmless). None when only the runtime
    sizes can tell, i.e. an unknown size of ``shape`` meets a size of ``other`` that may exceed 1.
    """
    if shape.ndims is None or other.ndims is None:
        return None
    dims, odims = shape.as_list(), other.as_list()
    n = max(len(dims), len(odims))
    lead = n - len(dims)
    padded = [1] * (n - len(odims)) + odims
    ones = []
    for i, d in enumerate(dims):
        o = padded[lead + i]
        if d == 1:
            if o != 1:
                ones.append(lead + i)
        elif d is None and o != 1:
            return None
    return list(_py_range(lead)), ones


def _unbroadcast(grad: Any, x: Tensor, other: TensorShape) -> Any:
    """Sums ``grad`` (shaped like the broadcast of ``x`` with ``other``) down to ``x``'s shape."""
    if grad is None:
        return None
    if x.shape.is_fully_defined() and grad.shape == x.shape:
        return grad
    axes = _broadcast_axes(x.shape, other)
    if axes is not None:
        lead, ones = axes
        if ones:
            grad = reduce_sum(grad, ones, keepdims=True)
        if lead:
            grad = reduce_sum(grad, lead)
        return grad
    ao = _array_ops()
    sx = ao.shape(x)
    rx, _ = broadcast_gradient_args(sx, ao.shape(grad))
    return ao.reshape(reduce_sum(grad, rx), sx)


def _unbroadcast_pair(op: Operation, gx: Any, gy: Any) -> list[Any]:
    x, y = op.inputs[0], op.inputs[1]
    return [_unbroadcast(gx, x, y.shape), _unbroadcast(gy, y, x.shape)]


# ---- binary elementwise ops ----------------------------------------------------------------------------
def _binary(op_type: str, x: Any, y: Any, name: str | None, allowed: Sequence[dtypes.DType],
            default_name: str | None = None) -> Tensor:
    with name_scope(name, default_name or op_type, [x, y]) as scope:
        x, y = binary_operands(x, y, op_type)
        check_dtype(x, allowed, op_type)
        return make_op(op_type, [x, y], name=scope).outputs[0]


def _string_concat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=object)
    out[...] = np.frompyfunc(lambda u, v: u + v, 2, 1)(a, b)
    return out


def _add_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    return _string_concat if op.inputs[0].dtype.is_string else torch.add


def _pow_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    if not op.inputs[0].dtype.is_integer:
        return torch.pow

    def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # torch quietly returns 0 for these; TF refuses them.
        if bool((b < 0).any()):
            raise errors.InvalidArgumentError(None, None, "Integers to negative integer powers are not allowed")
        return torch.pow(a, b)

    return run


def _floordiv_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    fn = lambda a, b: torch.div(a, b, rounding_mode="floor")
    return _int_division(fn) if op.inputs[0].dtype.is_integer else fn


def _floormod_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    # torch.remainder is TF's FloorMod: the result takes the divisor's sign, for floats too.
    return _int_division(torch.remainder) if op.inputs[0].dtype.is_integer else torch.remainder


def _add_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    return _unbroadcast_pair(op, grad, grad)


def _sub_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    return _unbroadcast_pair(op, grad, negative(grad))


def _mul_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, y = op.inputs
    return _unbroadcast_pair(op, multiply(grad, y), multiply(x, grad))


def _realdiv_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, y = op.inputs
    return _unbroadcast_pair(op, realdiv(grad, y), multiply(grad, realdiv(realdiv(negative(x), y), y)))


def _floormod_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, y = op.inputs
    return _unbroadcast_pair(op, grad, multiply(grad, negative(floordiv(x, y))))


def _pow_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, y = op.inputs
    z = op.outputs[0]
    gx = multiply(multiply(grad, y), pow(x, subtract(y, 1)))
    # d(x**y)/dy = z*log(x) is taken as 0 where x <= 0, as TF does.
    ao = _array_ops()
    positive = greater(x, 0)
    safe_x = where(positive, x, ao.ones_like(x))
    log_x = where(positive, log(safe_x), ao.zeros_like(x))
    return _unbroadcast_pair(op, gx, multiply(multiply(grad, z), log_x))


def _maximum_minimum_grad(x_selected: Callable[[Tensor, Tensor], Tensor]):
    def grad_fn(op: Operation, grad: Any) -> list[Any]:
        grad = _dense(grad)
        x, y = op.inputs
        mask = x_selected(x, y)
        zeros = _array_ops().zeros_like(grad)
        return _unbroadcast_pair(op, where(mask, grad, zeros), where(mask, zeros, grad))

    return grad_fn


def _squared_difference_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, y = op.inputs
    gx = multiply(multiply(grad, 2), subtract(x, y))
    return _unbroadcast_pair(op, gx, negative(gx))


def _register_binary(op_type: str, kernel: Callable[..., Any], grad: Any, infer: Any = broadcast_binary) -> None:
    op_registry.register_op(op_type, infer=infer, kernel=kernel, grad=grad)


_register_binary("Add", _add_kernel, _add_grad)
_register_binary("Sub", lambda op, ctx: torch.sub, _sub_grad)
_register_binary("Mul", lambda op, ctx: torch.mul, _mul_grad)
_register_binary("RealDiv", lambda op, ctx: torch.div, _realdiv_grad)
_register_binary("FloorDiv", _floordiv_kernel, op_registry.NOT_DIFFERENTIABLE)
_register_binary("FloorMod", _floormod_kernel, _floormod_grad)
_register_binary("Pow", _pow_kernel, _pow_grad)
_register_binary("Maximum", lambda op, ctx: torch.maximum, _maximum_minimum_grad(lambda x, y: greater_equal(x, y)))
_register_binary("Minimum", lambda op, ctx: torch.minimum, _maximum_minimum_grad(lambda x, y: less_equal(x, y)))
_register_binary(
    "SquaredDifference", lambda op, ctx: (lambda a, b: torch.square(torch.sub(a, b))), _squared_difference_grad
)


def add(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x + y`` elementwise with broadcasting (strings are concatenated).

    Raises:
        TypeError: ``x`` and ``y`` have different dtypes, or a dtype Add does not support (bool).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.add([[1, 2], [3, 4]], [10, 20])))
        [[11 22]
         [13 24]]
    """
    return _binary("Add", x, y, name, _REAL + (dtypes.string,))


def subtract(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x - y`` elementwise with broadcasting.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.subtract([5.0, 7.0], 2.0)))
        [3. 5.]
    """
    return _binary("Sub", x, y, name, _REAL)


def multiply(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x * y`` elementwise with broadcasting.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.multiply([1, 2, 3], 3)))
        [3 6 9]
    """
    return _binary("Mul", x, y, name, _REAL)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Tensor:
    """Multiplies the tensor ``x`` by the scalar ``scalar``.

    Raises:
        ValueError: ``scalar`` is not a scalar.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.scalar_mul(2.0, tf.constant([1.0, 2.0]))))
        [2. 4.]
    """
    x = convert_to_tensor(x)
    with name_scope(name, "scalar_mul", [scalar, x]) as scope:
        s = convert_to_tensor(scalar, dtype=x.dtype, name="scalar")
        if s.shape.ndims != 0:
            raise ValueError(f"Only scalar multiply works, got shape {s.shape}")
        return multiply(s, x, name=scope)


# TF's true division turns integers into the float type that holds them exactly.
_TRUEDIV_TABLE = {
    dtypes.int8: dtypes.float32, dtypes.int16: dtypes.float32, dtypes.uint8: dtypes.float32,
    dtypes.int32: dtypes.float64, dtypes.int64: dtypes.float64,
    **{d: None for d in _FLOAT},
}


def truediv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` as Python 3 division: integers are cast to float first (int32/int64 to float64).

    Raises:
        TypeError: the dtypes differ, or are not numeric.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.truediv(tf.constant([1, 3]), 2)))
        [0.5 1.5]
    """
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = binary_operands(x, y, "RealDiv")
        if x.dtype not in _TRUEDIV_TABLE:
            raise TypeError(f"Invalid dtype {x.dtype!r} in __truediv__")
        target = _TRUEDIV_TABLE[x.dtype]
        if target is not None:
            x, y = cast(x, target), cast(y, target)
        return make_op("RealDiv", [x, y], name=scope).outputs[0]


def divide(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x / y`` (same as :func:`truediv`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.divide([3.0, 4.0], 2.0)))
        [1.5 2. ]
    """
    return truediv(x, y, name=name or "truediv")


def realdiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """Floating-point ``x / y`` (the "RealDiv" op; no integer casting).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.realdiv([1.0, 3.0], 2.0)))
        [0.5 1.5]
    """
    return _binary("RealDiv", x, y, name, _FLOAT)


def div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.div``: Python 2 division, i.e. floor division for integers and real division for floats.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run([tf.div(-7, 2), tf.div(-7.0, 2.0)]))
        [np.int32(-4), np.float32(-3.5)]
    """
    with name_scope(name, "div", [x, y]) as scope:
        x, y = binary_operands(x, y, "FloorDiv")
        check_dtype(x, _REAL, "div")
        op_type = "RealDiv" if x.dtype.is_floating else "FloorDiv"
        return make_op(op_type, [x, y], name=scope).outputs[0]


def floordiv(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``floor(x / y)`` elementwise (integers stay integers).

    Raises:
        InvalidArgumentError: (at run time) an integer division by zero.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.floordiv([7, -7], 2)))
        [ 3 -4]
    """
    return _binary("FloorDiv", x, y, name, _REAL, default_name="floordiv")


def floormod(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x - floor(x / y) * y``: the remainder takes the sign of ``y`` (Python's ``%``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.floormod([7, -7], 3)))
        [1 2]
    """
    return _binary("FloorMod", x, y, name, _REAL)


mod = floormod


def pow(x: Any, y: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """``x ** y`` elementwise.

    Raises:
        InvalidArgumentError: (at run time) an integer raised to a negative integer power.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.pow([2.0, 3.0], 2.0)))
        [4. 9.]
    """
    return _binary("Pow", x, y, name, _REAL)


def maximum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The elementwise maximum, with broadcasting.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.maximum([1, 5, 3], 2)))
        [2 5 3]
    """
    return _binary("Maximum", x, y, name, _REAL)


def minimum(x: Any, y: Any, name: str | None = None) -> Tensor:
    """The elementwise minimum, with broadcasting.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.minimum([1, 5, 3], 2)))
        [1 2 2]
    """
    return _binary("Minimum", x, y, name, _REAL)


def squared_difference(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``(x - y) ** 2`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.squared_difference([1, 5], [3, 2])))
        [4 9]
    """
    return _binary("SquaredDifference", x, y, name, _REAL)


# ---- unary elementwise ops -----------------------------------------------------------------------------
def _unary(op_type: str, x: Any, name: str | None, allowed: Sequence[dtypes.DType]) -> Tensor:
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        check_dtype(x, allowed, op_type)
        return make_op(op_type, [x], name=scope).outputs[0]


def _fused_grad(op_type: str, y: Tensor, dy: Any) -> Tensor:
    """TF's fused gradient ops (SigmoidGrad, TanhGrad, ...): ``f(y, dy)`` from the op's output ``y``."""
    return make_op(op_type, [y, convert_to_tensor(_dense(dy), dtype=y.dtype)], name=op_type).outputs[0]


def _register_unary(op_type: str, fn: Callable[[torch.Tensor], torch.Tensor], grad: Any) -> None:
    op_registry.register_op(op_type, infer=same_as_input, kernel=lambda op, ctx: fn, grad=grad)


_register_unary("Neg", torch.neg, lambda op, g: [negative(_dense(g))])
_register_unary("Abs", torch.abs, lambda op, g: [multiply(_dense(g), sign(op.inputs[0]))])
_register_unary("Sign", torch.sign, lambda op, g: [_array_ops().zeros_like(op.inputs[0])])
_register_unary("Exp", torch.exp, lambda op, g: [multiply(_dense(g), op.outputs[0])])
_register_unary("Log", torch.log, lambda op, g: [multiply(_dense(g), reciprocal(op.inputs[0]))])
_register_unary("Log1p", torch.log1p, lambda op, g: [multiply(_dense(g), reciprocal(add(1, op.inputs[0])))])
_register_unary("Square", torch.square, lambda op, g: [multiply(_dense(g), multiply(2, op.inputs[0]))])
_register_unary("Sqrt", torch.sqrt, lambda op, g: [_fused_grad("SqrtGrad", op.outputs[0], g)])
_register_unary("Rsqrt", torch.rsqrt, lambda op, g: [_fused_grad("RsqrtGrad", op.outputs[0], g)])
_register_unary("Reciprocal", torch.reciprocal, lambda op, g: [_fused_grad("ReciprocalGrad", op.outputs[0], g)])
_register_unary("Sigmoid", torch.sigmoid, lambda op, g: [_fused_grad("SigmoidGrad", op.outputs[0], g)])
_register_unary("Tanh", torch.tanh, lambda op, g: [_fused_grad("TanhGrad", op.outputs[0], g)])
# Piecewise constant: TF defines their gradient as None.
_register_unary("Floor", torch.floor, op_registry.NOT_DIFFERENTIABLE)
_register_unary("Ceil", torch.ceil, op_registry.NOT_DIFFERENTIABLE)
_register_unary("Round", torch.round, op_registry.NOT_DIFFERENTIABLE)


def _sigmoid_grad_grad(op: Operation, grad: Any) -> list[Any]:
    y, dy = op.inputs
    g_dy = multiply(_dense(grad), dy)
    return [subtract(g_dy, multiply(multiply(2, g_dy), y)), _fused_grad("SigmoidGrad", y, grad)]


def _tanh_grad_grad(op: Operation, grad: Any) -> list[Any]:
    y, dy = op.inputs
    return [multiply(multiply(-2, _dense(grad)), multiply(dy, y)), _fused_grad("TanhGrad", y, grad)]


def _sqrt_grad_grad(op: Operation, grad: Any) -> list[Any]:
    y = op.inputs[0]
    # The op computes 0.5 * dy / y, so its derivative in y is -output / y.
    return [negative(realdiv(multiply(_dense(grad), op.outputs[0]), y)), _fused_grad("SqrtGrad", y, grad)]


def _rsqrt_grad_grad(op: Operation, grad: Any) -> list[Any]:
    y, dy = op.inputs
    return [multiply(multiply(-1.5, _dense(grad)), multiply(dy, square(y))), _fused_grad("RsqrtGrad", y, grad)]


def _reciprocal_grad_grad(op: Operation, grad: Any) -> list[Any]:
    y, dy = op.inputs
    return [multiply(multiply(-2, _dense(grad)), multiply(dy, y)), _fused_grad("ReciprocalGrad", y, grad)]


for _type, _fn, _grad in (
    ("SigmoidGrad", lambda y, dy: dy * (y * (1 - y)), _sigmoid_grad_grad),
    ("TanhGrad", lambda y, dy: dy * (1 - y * y), _tanh_grad_grad),
    ("SqrtGrad", lambda y, dy: dy * 0.5 / y, _sqrt_grad_grad),
    ("RsqrtGrad", lambda y, dy: dy * (y * y * y) * -0.5, _rsqrt_grad_grad),
    ("ReciprocalGrad", lambda y, dy: -dy * (y * y), _reciprocal_grad_grad),
):
    op_registry.register_op(_type, infer=same_as_input, kernel=lambda op, ctx, fn=_fn: fn, grad=_grad)


def negative(x: Any, name: str | None = None) -> Tensor:
    """``-x`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.negative([1, -2])))
        [-1  2]
    """
    return _unary("Neg", x, name, _SIGNED)


def abs(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """``|x|`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.abs([-1.5, 2.0])))
        [1.5 2. ]
    """
    return _unary("Abs", x, name, _SIGNED)


def sign(x: Any, name: str | None = None) -> Tensor:
    """-1, 0 or 1 elementwise, by the sign of ``x``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sign([-3, 0, 2])))
        [-1  0  1]
    """
    return _unary("Sign", x, name, _SIGNED)


def exp(x: Any, name: str | None = None) -> Tensor:
    """``e ** x`` elementwise (floating types).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.exp([0.0, 1.0])))
        [1.        2.7182817]
    """
    return _unary("Exp", x, name, _FLOAT)


def log(x: Any, name: str | None = None) -> Tensor:
    """Natural logarithm elementwise (floating types).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.log([1.0, 100.0])))
        [0.        4.6051702]
    """
    return _unary("Log", x, name, _FLOAT)


def log1p(x: Any, name: str | None = None) -> Tensor:
    """``log(1 + x)`` elementwise, accurate for small ``x``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.log1p([0.0, 1e-8])))
        [0.e+00 1.e-08]
    """
    return _unary("Log1p", x, name, _FLOAT)


def sqrt(x: Any, name: str | None = None) -> Tensor:
    """Square root elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sqrt([4.0, 9.0])))
        [2. 3.]
    """
    return _unary("Sqrt", x, name, _FLOAT)


def rsqrt(x: Any, name: str | None = None) -> Tensor:
    """``1 / sqrt(x)`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.rsqrt([4.0, 16.0])))
        [0.5  0.25]
    """
    return _unary("Rsqrt", x, name, _FLOAT)


def square(x: Any, name: str | None = None) -> Tensor:
    """``x * x`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.square([-3, 2])))
        [9 4]
    """
    return _unary("Square", x, name, _REAL)


def reciprocal(x: Any, name: str | None = None) -> Tensor:
    """``1 / x`` elementwise (floating types).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reciprocal([2.0, 4.0])))
        [0.5  0.25]
    """
    return _unary("Reciprocal", x, name, _FLOAT)


def sigmoid(x: Any, name: str | None = None) -> Tensor:
    """``1 / (1 + exp(-x))`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sigmoid([0.0])))
        [0.5]
    """
    return _unary("Sigmoid", x, name, _FLOAT)


def tanh(x: Any, name: str | None = None) -> Tensor:
    """Hyperbolic tangent elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.tanh([0.0])))
        [0.]
    """
    return _unary("Tanh", x, name, _FLOAT)


def floor(x: Any, name: str | None = None) -> Tensor:
    """The largest integer not greater than ``x``, elementwise (floating types).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.floor([-1.5, 1.5])))
        [-2.  1.]
    """
    return _unary("Floor", x, name, _FLOAT)


def ceil(x: Any, name: str | None = None) -> Tensor:
    """The smallest integer not less than ``x``, elementwise (floating types).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.ceil([-1.5, 1.5])))
        [-1.  2.]
    """
    return _unary("Ceil", x, name, _FLOAT)


def round(x: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Rounds to the nearest integer, halves to even (banker's rounding); integers are returned as they are.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.round([0.5, 1.5, 2.5, -0.5])))
        [ 0.  2.  2. -0.]
    """
    x = convert_to_tensor(x, name="x")
    if x.dtype.is_integer:
        return x
    return _unary("Round", x, name, _FLOAT)


# ---- comparisons and logical ops -----------------------------------------------------------------------
def _string_compare(fn: Callable[[Any, Any], Any]) -> Callable[[np.ndarray, np.ndarray], torch.Tensor]:
    return lambda a, b: torch.from_numpy(np.asarray(fn(a, b), dtype=np.bool_))


def _compare_kernel(torch_fn: Callable[..., Any], numpy_fn: Callable[..., Any] | None = None):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        if numpy_fn is not None and op.inputs[0].dtype.is_string:
            return _string_compare(numpy_fn)
        return torch_fn

    return factory


for _type, _torch_fn, _np_fn in (
    ("Equal", torch.eq, np.equal),
    ("NotEqual", torch.ne, np.not_equal),
    ("Less", torch.lt, None),
    ("LessEqual", torch.le, None),
    ("Greater", torch.gt, None),
    ("GreaterEqual", torch.ge, None),
):
    op_registry.register_op(
        _type, infer=broadcast_compare, kernel=_compare_kernel(_torch_fn, _np_fn), grad=op_registry.NOT_DIFFERENTIABLE
    )


def equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x == y`` elementwise, as a bool tensor (any dtype, strings included).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.equal([1, 2, 3], 2)))
        [False  True False]
    """
    return _binary("Equal", x, y, name, _ANY)


def not_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x != y`` elementwise, as a bool tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.not_equal([1, 2, 3], 2)))
        [ True False  True]
    """
    return _binary("NotEqual", x, y, name, _ANY)


def less(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x < y`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.less([1, 2, 3], 2)))
        [ True False False]
    """
    return _binary("Less", x, y, name, _REAL)


def less_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x <= y`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.less_equal([1, 2, 3], 2)))
        [ True  True False]
    """
    return _binary("LessEqual", x, y, name, _REAL)


def greater(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x > y`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.greater([1, 2, 3], 2)))
        [False False  True]
    """
    return _binary("Greater", x, y, name, _REAL)


def greater_equal(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x >= y`` elementwise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.greater_equal([1, 2, 3], 2)))
        [False  True  True]
    """
    return _binary("GreaterEqual", x, y, name, _REAL)


def _bool_operand(value: Any, op_type: str, arg: str) -> Tensor:
    if _is_tensor_like(value):
        t = convert_to_tensor(value)
        if t.dtype is not dtypes.bool:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {t.dtype.name} that does not match expected type of bool."
            )
        return t
    return convert_to_tensor(value, dtype=dtypes.bool, name=arg)


def _logical(op_type: str, operands: Sequence[Any], name: str | None) -> Tensor:
    with name_scope(name, op_type, list(operands)) as scope:
        tensors = [_bool_operand(v, op_type, arg) for v, arg in zip(operands, ("x", "y"))]
        return make_op(op_type, tensors, name=scope).outputs[0]


op_registry.register_op(
    "LogicalAnd", infer=broadcast_compare, kernel=lambda op, ctx: torch.logical_and,
    grad=op_registry.NOT_DIFFERENTIABLE,
)
op_registry.register_op(
    "LogicalOr", infer=broadcast_compare, kernel=lambda op, ctx: torch.logical_or, grad=op_registry.NOT_DIFFERENTIABLE
)
op_registry.register_op(
    "LogicalNot", infer=same_as_input, kernel=lambda op, ctx: torch.logical_not, grad=op_registry.NOT_DIFFERENTIABLE
)


def logical_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x AND y`` elementwise on bool tensors.

    Raises:
        TypeError: an operand is not bool.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.logical_and([True, True], [True, False])))
        [ True False]
    """
    return _logical("LogicalAnd", (x, y), name)


def logical_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x OR y`` elementwise on bool tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.logical_or([False, False], [True, False])))
        [ True False]
    """
    return _logical("LogicalOr", (x, y), name)


def logical_not(x: Any, name: str | None = None) -> Tensor:
    """``NOT x`` elementwise on a bool tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.logical_not([True, False])))
        [False  True]
    """
    return _logical("LogicalNot", (x,), name)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Tensor:
    """``x XOR y`` elementwise, built as TF does: ``(x OR y) AND NOT (x AND y)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.logical_xor([True, True, False], [True, False, False])))
        [False  True False]
    """
    with name_scope(name, "LogicalXor", [x, y]) as scope:
        x, y = _bool_operand(x, "LogicalXor", "x"), _bool_operand(y, "LogicalXor", "y")
        return _logical("LogicalAnd", (logical_or(x, y), logical_not(logical_and(x, y))), scope)


# ---- casts ---------------------------------------------------------------------------------------------
def _cast_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dst = torch_dtype(op.get_attr("DstT"))
    return lambda x: x.to(dst)


def _cast_grad(op: Operation, grad: Any) -> list[Any]:
    src, dst = op.inputs[0].dtype, op.outputs[0].dtype
    if not (src.is_floating and dst.is_floating):
        return [None]
    if isinstance(grad, IndexedSlices):
        return [IndexedSlices(cast(grad.values, src), grad.indices, grad.dense_shape)]
    return [cast(grad, src)]


op_registry.register_op(
    "Cast",
    infer=lambda op: [(op.get_attr("DstT"), op.inputs[0].shape)],
    kernel=_cast_kernel,
    grad=_cast_grad,
)


def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """Converts ``x`` to ``dtype`` (floats to ints truncate toward zero); returns ``x`` itself if it already is.

    ``IndexedSlices`` keep their indices and have their values cast.

    Raises:
        TypeError: a cast to or from ``string``, which TF does not support.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cast([1.7, -1.7], tf.int32)))
        [ 1 -1]
    """
    base = dtypes.as_dtype(dtype)
    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, base, name=name), x.indices, x.dense_shape)
    with name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype is base:
            return x
        if x.dtype.is_string or base.is_string:
            raise TypeError(f"Cast {x.dtype.name} to {base.name} is not supported")
        return make_op("Cast", [x], {"SrcT": x.dtype, "DstT": base, "Truncate": False}, name=scope).outputs[0]


def to_float(x: Any, name: str = "ToFloat") -> Any:
    """Casts ``x`` to float32.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.to_float(tf.constant([1, 2])).dtype
        tf.float32
    """
    return cast(x, dtypes.float32, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Any:
    """Casts ``x`` to float64.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.to_double(tf.constant([1, 2])).dtype
        tf.float64
    """
    return cast(x, dtypes.float64, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Any:
    """Casts ``x`` to int32.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.to_int32(tf.constant([1.5])).dtype
        tf.int32
    """
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Any:
    """Casts ``x`` to int64.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.to_int64(tf.constant([1])).dtype
        tf.int64
    """
    return cast(x, dtypes.int64, name=name)


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``value`` to ``dtype``, first clamping it into ``dtype``'s range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.saturate_cast([-1.7, 300.0], tf.uint8)))
        [  0 255]
    """
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        if value.dtype.is_bool or dtype.is_bool or value.dtype.is_string or dtype.is_string:
            return cast(value, dtype, name=scope)
        if value.dtype.min < dtype.min:
            value = maximum(value, constant(dtype.min, dtype=value.dtype))
        if value.dtype.max > dtype.max:
            value = minimum(value, constant(dtype.max, dtype=value.dtype), name="clamp")
        return cast(value, dtype, name=scope)


# ---- matrix multiplication -----------------------------------------------------------------------------
def _matmul_dims(shape: TensorShape, transposed: bool) -> tuple[int | None, int | None]:
    if shape.ndims is None:
        return None, None
    rows, cols = shape.as_list()[-2:]
    return (cols, rows) if transposed else (rows, cols)


def _check_inner(op: Operation, k1: int | None, k2: int | None) -> None:
    if k1 is not None and k2 is not None and k1 != k2:
        a, b = op.inputs
        raise ValueError(
            f"Dimensions must be equal, but are {k1} and {k2} for '{op.name}' (op: '{op.type}') "
            f"with input shapes: {_fmt(a.shape)}, {_fmt(b.shape)}."
        )


def _matmul_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    for s in (a.shape, b.shape):
        if s.ndims not in (None, 2):
            raise ValueError(
                f"Shape must be rank 2 but is rank {s.ndims} for '{op.name}' (op: 'MatMul') "
                f"with input shapes: {_fmt(a.shape)}, {_fmt(b.shape)}."
            )
    m, k1 = _matmul_dims(a.shape, op.get_attr("transpose_a"))
    k2, n = _matmul_dims(b.shape, op.get_attr("transpose_b"))
    _check_inner(op, k1, k2)
    return [(a.dtype, TensorShape([m, n]))]


def _batch_matmul_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    a, b = op.inputs
    for s in (a.shape, b.shape):
        if s.ndims is not None and s.ndims < 2:
            raise ValueError(
                f"Shape must be at least rank 2 but is rank {s.ndims} for '{op.name}' (op: 'BatchMatMulV2') "
                f"with input shapes: {_fmt(a.shape)}, {_fmt(b.shape)}."
            )
    m, k1 = _matmul_dims(a.shape, op.get_attr("adj_x"))
    k2, n = _matmul_dims(b.shape, op.get_attr("adj_y"))
    _check_inner(op, k1, k2)
    if a.shape.ndims is None or b.shape.ndims is None:
        return [(a.dtype, unknown_shape())]
    try:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(
            f"Batch dimensions of {_fmt(a.shape)} and {_fmt(b.shape)} are not broadcastable for '{op.name}'"
        ) from None
    return [(a.dtype, batch.concatenate([m, n]))]


def _int_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    # CUDA has no integer GEMM: multiply-and-sum stays exact and keeps the dtype.
    return (a.unsqueeze(-1) * b.unsqueeze(-3)).sum(-2, dtype=a.dtype)


def _matmul_kernel(transpose_attrs: tuple[str, str], product: Callable[..., torch.Tensor]):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        ta, tb = (op.get_attr(a) for a in transpose_attrs)
        mm = product
        if op.inputs[0].dtype.is_integer and ctx.device.type != "cpu":
            mm = _int_matmul
        if not ta and not tb:
            return mm
        if ta and not tb:
            return lambda a, b: mm(a.mT, b)
        if tb and not ta:
            return lambda a, b: mm(a, b.mT)
        return lambda a, b: mm(a.mT, b.mT)

    return factory


def _matmul_op(op_type: str, a: Tensor, b: Tensor, ta: bool, tb: bool, name: str | None = None) -> Tensor:
    attrs = {"transpose_a": ta, "transpose_b": tb} if op_type == "MatMul" else {"adj_x": ta, "adj_y": tb}
    return make_op(op_type, [a, b], attrs, name=name or op_type).outputs[0]


def _matmul_grads(op_type: str, x: Tensor, y: Tensor, grad: Tensor, tx: bool, ty: bool) -> tuple[Tensor, Tensor]:
    if not tx and not ty:
        return _matmul_op(op_type, grad, y, False, True), _matmul_op(op_type, x, grad, True, False)
    if not tx and ty:
        return _matmul_op(op_type, grad, y, False, False), _matmul_op(op_type, grad, x, True, False)
    if tx and not ty:
        return _matmul_op(op_type, y, grad, False, True), _matmul_op(op_type, x, grad, False, False)
    return _matmul_op(op_type, y, grad, True, True), _matmul_op(op_type, grad, x, True, True)


def _matmul_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    ga, gb = _matmul_grads("MatMul", x, y, _dense(grad), op.get_attr("transpose_a"), op.get_attr("transpose_b"))
    return [ga, gb]


def _batch_dims_with_matrix(shape: TensorShape) -> TensorShape:
    """``shape``'s batch dimensions followed by a 1x1 matrix (what broadcasting may stretch)."""
    return unknown_shape() if shape.ndims is None else TensorShape(shape.as_list()[:-2] + [1, 1])


def _batch_matmul_grad(op: Operation, grad: Any) -> list[Any]:
    x, y = op.inputs
    gx, gy = _matmul_grads("BatchMatMulV2", x, y, _dense(grad), op.get_attr("adj_x"), op.get_attr("adj_y"))
    return [
        _unbroadcast(gx, x, _batch_dims_with_matrix(y.shape)),
        _unbroadcast(gy, y, _batch_dims_with_matrix(x.shape)),
    ]


op_registry.register_op(
    "MatMul", infer=_matmul_infer, kernel=_matmul_kernel(("transpose_a", "transpose_b"), torch.mm), grad=_matmul_grad
)
op_registry.register_op(
    "BatchMatMulV2",
    infer=_batch_matmul_infer,
    kernel=_matmul_kernel(("adj_x", "adj_y"), torch.matmul),
    grad=_batch_matmul_grad,
)


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Tensor:
    """The matrix product ``a @ b`` (batched, with broadcast batch dimensions, when a rank exceeds 2).

    ``adjoint_*`` equals ``transpose_*`` for real types; the ``*_is_sparse`` hints are accepted and ignored.

    Raises:
        ValueError: the inner dimensions differ, or a rank is below 2 (names both shapes).
        TypeError: the dtypes differ or are not supported.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     a = tf.constant([[1.0, 2.0]])
        ...     print(sess.run(tf.matmul(a, a, transpose_b=True)))
        [[5.]]
    """
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with name_scope(name, "MatMul", [a, b]) as scope:
        a, b = binary_operands(a, b, "MatMul")
        check_dtype(a, _MATMUL, "MatMul", "a")
        ta, tb = transpose_a or adjoint_a, transpose_b or adjoint_b
        ranks = (a.shape.ndims, b.shape.ndims)
        batched = any(r is None or r > 2 for r in ranks)
        return _matmul_op("BatchMatMulV2" if batched else "MatMul", a, b, ta, tb, name=scope)


# ---- reductions ----------------------------------------------------------------------------------------
def _normalize_axes(axes: Sequence[int], rank: int, error: type[Exception] = ValueError) -> list[int]:
    seen: list[int] = []
    for a in axes:
        if not -rank <= a < rank:
            raise error(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        a %= rank
        if a in seen:
            raise error(f"Invalid reduction arguments: Axes contains duplicate dimension: {a}")
        seen.append(a)
    return seen


def _static_axes(op: Operation) -> list[int] | None:
    """The reduction's axes, normalized and sorted, when both they and the input rank are static."""
    value = constant_value(op.inputs[1])
    rank = op.inputs[0].shape.ndims
    if value is None or rank is None:
        return None
    return sorted(_normalize_axes([int(a) for a in np.reshape(value, -1)], rank))


def _reduction_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    keep = op.get_attr("keep_dims")
    rank = x.shape.ndims
    if rank is None or constant_value(op.inputs[1]) is None:
        return [(x.dtype, unknown_shape(rank) if keep else unknown_shape())]
    axes = _static_axes(op)
    dims = x.shape.as_list()
    if keep:
        return [(x.dtype, TensorShape([1 if i in axes else d for i, d in enumerate(dims)]))]
    return [(x.dtype, TensorShape([d for i, d in enumerate(dims) if i not in axes]))]


def _reduction_kernel(make_fn: Callable[[Operation], Callable[..., torch.Tensor]]):
    """A kernel factory for a reduction ``fn(x, dims, keepdim)``; Const axes are read once, here."""

    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        fn = make_fn(op)
        keep = op.get_attr("keep_dims")
        value = constant_value(op.inputs[1])
        if value is not None:
            dims = tuple(int(a) for a in np.reshape(value, -1))
            # torch reads an empty dim list as "all dims"; TF as "none".
            if not dims:
                return lambda x, axes: x
            return lambda x, axes: fn(x, dims, keep)

        def run(x: torch.Tensor, axes: torch.Tensor) -> torch.Tensor:
            dims = tuple(axes.reshape(-1).tolist())
            if not dims:
                return x
            _normalize_axes(dims, x.dim(), _invalid_argument)
            return fn(x, dims, keep)

        return run

    return factory


def _invalid_argument(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _sum_fn(op: Operation) -> Callable[..., torch.Tensor]:
    dtype = op.inputs[0].dtype
    if dtype.is_integer:
        # torch would widen integer sums to int64; TF keeps the input type.
        out = torch_dtype(dtype)
        return lambda x, dims, keep: torch.sum(x, dims, keep, dtype=out)
    return torch.sum


def _mean_fn(op: Operation) -> Callable[..., torch.Tensor]:
    dtype = op.inputs[0].dtype
    if not dtype.is_integer:
        return torch.mean
    out = torch_dtype(dtype)

    def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
        total = torch.sum(x, dims, keep, dtype=torch.int64)
        count = 1
        for d in dims:
            count *= x.shape[d]
        # Integer means truncate toward zero, as TF's do.
        return (torch.div(total, count, rounding_mode="trunc") if count else total).to(out)

    return run


def _extreme_fn(torch_fn: Callable[..., torch.Tensor], lowest: bool):
    def make(op: Operation) -> Callable[..., torch.Tensor]:
        dtype = op.inputs[0].dtype
        fill = (dtype.min if lowest else dtype.max) if dtype.is_integer else (-np.inf if lowest else np.inf)

        def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
            if x.numel():
                return torch_fn(x, dims, keep)
            # TF reduces an empty set to the identity of max/min; torch refuses.
            norm = {d % x.dim() for d in dims}
            shape = [1 if i in norm else s for i, s in enumerate(x.shape) if keep or i not in norm]
            return torch.full(shape, fill, dtype=x.dtype, device=x.device)

        return run

    return make


def _prod_fn(op: Operation) -> Callable[..., torch.Tensor]:
    out = torch_dtype(op.inputs[0].dtype)

    def run(x: torch.Tensor, dims: tuple[int, ...], keep: bool) -> torch.Tensor:
        # torch.prod takes one dim at a time; going from the last keeps the other indices valid.
        for d in sorted({d % x.dim() for d in dims}, reverse=True):
            x = torch.prod(x, d, keep, dtype=out)
        return x

    return run


def _kept_dims_grad(op: Operation, grad: Tensor) -> Tensor:
    """The reduction's output-shaped ``grad`` reshaped so that it broadcasts against the input."""
    if op.get_attr("keep_dims"):
        return grad
    x = op.inputs[0]
    axes = _static_axes(op)
    ao = _array_ops()
    if axes is not None:
        if axes == list(_py_range(len(axes))):
            return grad  # leading axes: numpy broadcasting already lines the rest up
        kept = [1 if i in axes else (-1 if d is None else d) for i, d in enumerate(x.shape.as_list())]
        if kept.count(-1) <= 1:
            return ao.reshape(grad, kept)
        for a in axes:
            grad = ao.expand_dims(grad, a)
        return grad
    # Unknown rank or axes: 1 where an axis is reduced, the input's size elsewhere.
    sx = ao.shape(x)
    rank = ao.size(sx)
    reduced = ao.reshape(floormod(cast(op.inputs[1], dtypes.int32), rank), [-1])
    is_reduced = reduce_any(equal(ao.expand_dims(range(0, rank), 1), ao.expand_dims(reduced, 0)), axis=1)
    return ao.reshape(grad, where(is_reduced, ao.ones_like(sx), sx))


def _sum_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x = op.inputs[0]
    if x.shape.is_fully_defined() and grad.shape == x.shape:
        return [grad, None]
    return [_array_ops().broadcast_to(_kept_dims_grad(op, grad), _shape_of(x)), None]


def _mean_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, y = op.inputs[0], op.outputs[0]
    axes = _static_axes(op)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    # A zero count only occurs when the input is empty, and then so is the broadcast gradient.
    if axes is not None and all(dims[a] is not None for a in axes):
        count = int(np.prod([dims[a] for a in axes], dtype=np.int64))
        scaled = realdiv(grad, constant(count, dtype=grad.dtype)) if count != 1 else grad
    else:
        ao = _array_ops()
        if axes is not None and len(axes) == len(dims):
            count_t = ao.size(x)
        else:
            count_t = floordiv(ao.size(x), maximum(ao.size(y), 1))
        scaled = realdiv(grad, cast(count_t, grad.dtype))
    return [_sum_grad(op, scaled)[0], None]


def _extreme_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x = op.inputs[0]
    y = _kept_dims_grad(op, op.outputs[0])
    # The gradient is split evenly between the entries that attain the extreme.
    indicators = cast(equal(y, x), grad.dtype)
    num_selected = reduce_sum(indicators, op.inputs[1], keepdims=True)
    return [multiply(realdiv(indicators, num_selected), _kept_dims_grad(op, grad)), None]


def _prod_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    x, axes = op.inputs[0], op.inputs[1]
    ao = _array_ops()
    dtype = x.dtype
    # d prod / d x_i is the product of the other entries: with no zero in the slice that is prod / x_i; with
    # one zero it is the product of the non-zeros at the zero and 0 elsewhere; with more zeros it is 0.
    is_zero = equal(x, 0)
    safe_x = where(is_zero, ao.ones_like(x), x)
    nonzero_prod = reduce_prod(safe_x, axes, keepdims=True)
    num_zeros = reduce_sum(cast(is_zero, dtype), axes, keepdims=True)
    zero_mask = cast(is_zero, dtype)
    at_zero = multiply(nonzero_prod, cast(equal(num_zeros, 1), dtype))
    elsewhere = realdiv(multiply(nonzero_prod, cast(equal(num_zeros, 0), dtype)), safe_x)
    local = add(multiply(zero_mask, at_zero), multiply(subtract(1, zero_mask), elsewhere))
    return [multiply(_kept_dims_grad(op, grad), local), None]


_REDUCTIONS = (
    ("Sum", _sum_fn, _sum_grad),
    ("Mean", _mean_fn, _mean_grad),
    ("Prod", _prod_fn, _prod_grad),
    ("Max", _extreme_fn(torch.amax, lowest=True), _extreme_grad),
    ("Min", _extreme_fn(torch.amin, lowest=False), _extreme_grad),
    ("Any", lambda op: torch.any, op_registry.NOT_DIFFERENTIABLE),
    ("All", lambda op: torch.all, op_registry.NOT_DIFFERENTIABLE),
)
for _type, _make_fn, _grad in _REDUCTIONS:
    op_registry.register_op(_type, infer=_reduction_infer, kernel=_reduction_kernel(_make_fn), grad=_grad)


def _reduction_axes_tensor(x: Tensor, axis: Any) -> Tensor:
    if axis is None:
        if x.shape.ndims is not None:
            return constant(np.arange(x.shape.ndims, dtype=np.int32), name="reduction_indices")
        return range(0, _array_ops().rank(x))
    if not _is_tensor_like(axis) and np.size(axis) == 0:
        axis = np.zeros(0, np.int32)  # an empty list would otherwise default to float32
    t = convert_to_tensor(axis, name="reduction_indices")
    check_dtype(t, _INDEX, "reduction", "reduction_indices")
    return t


def _reduce(
    op_type: str,
    input_tensor: Any,
    axis: Any,
    keepdims: Any,
    name: str | None,
    reduction_indices: Any,
    keep_dims: Any,
    allowed: Sequence[dtypes.DType],
) -> Tensor:
    axis = _deprecated_arg("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(_deprecated_arg("keepdims", keepdims, "keep_dims", keep_dims) or False)
    with name_scope(name, op_type, [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor, name="input_tensor")
        check_dtype(x, allowed, op_type, "input")
        axes = _reduction_axes_tensor(x, axis)
        out = make_op(op_type, [x, axes], {"keep_dims": keepdims}, name=scope).outputs[0]
    if axis is None and not keepdims and out.shape.ndims is None:
        out.set_shape([])  # reducing every axis gives a scalar even when the rank is unknown
    return out


def reduce_sum(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Sum over ``axis`` (an int, a list, a tensor, or None for all axes; negative axes count from the end).

    ``reduction_indices`` and ``keep_dims`` are TF1's older names of ``axis`` and ``keepdims``.
    Integer sums keep their dtype.

    Raises:
        ValueError: an axis is out of range or repeated (when known while building).
        TypeError: the input is bool or string.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.constant([[1, 2], [3, 4]])
        ...     print(sess.run([tf.reduce_sum(x), tf.reduce_sum(x, -1, keepdims=True)]))
        [np.int32(10), array([[3],
               [7]], dtype=int32)]
    """
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, _REAL)


def reduce_mean(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Mean over ``axis`` (see :func:`reduce_sum`); integer means truncate toward zero.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_mean([[1.0, 2.0], [3.0, 4.0]], axis=0)))
        [2. 3.]
    """
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, _REAL)


def reduce_max(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Maximum over ``axis`` (see :func:`reduce_sum`); an empty reduction gives the dtype's lowest value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_max([[1, 5], [7, 2]], axis=1)))
        [5 7]
    """
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, _REAL)


def reduce_min(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Minimum over ``axis`` (see :func:`reduce_sum`); an empty reduction gives the dtype's highest value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_min([[1, 5], [7, 2]], axis=1)))
        [1 2]
    """
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, _REAL)


def reduce_prod(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Product over ``axis`` (see :func:`reduce_sum`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_prod([[1, 2], [3, 4]], axis=0)))
        [3 8]
    """
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, _REAL)


def reduce_any(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Logical OR over ``axis`` of a bool tensor (see :func:`reduce_sum`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_any([[True, False], [False, False]], axis=1)))
        [ True False]
    """
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, (dtypes.bool,))


def reduce_all(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool | None = None,
    name: str | None = None,
    reduction_indices: Any = None,
    keep_dims: bool | None = None,
) -> Tensor:
    """Logical AND over ``axis`` of a bool tensor (see :func:`reduce_sum`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.reduce_all([[True, False], [True, True]], axis=1)))
        [False  True]
    """
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims, (dtypes.bool,))


# ---- argmax / argmin -----------------------------------------------------------------------------------
def _arg_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    out_type = op.get_attr("output_type")
    value = constant_value(op.inputs[1])
    rank = x.shape.ndims
    if rank is None:
        return [(out_type, unknown_shape())]
    if value is None:
        return [(out_type, unknown_shape(max(rank - 1, 0)))]
    axis = int(np.reshape(value, -1)[0])
    if not -rank <= axis < rank:
        raise ValueError(
            f"Dimension ({axis}) must be in the range [{-rank}, {rank}), where {rank} is the number of "
            "dimensions in the input."
        )
    axis %= rank
    return [(out_type, TensorShape([d for i, d in enumerate(x.shape.as_list()) if i != axis]))]


def _arg_kernel(torch_fn: Callable[..., torch.Tensor]):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        out = torch_dtype(op.get_attr("output_type"))
        value = constant_value(op.inputs[1])
        if value is not None:
            axis = int(np.reshape(value, -1)[0])
            if out is torch.int64:
                return lambda x, dim: torch_fn(x, axis)
            return lambda x, dim: torch_fn(x, axis).to(out)
        return lambda x, dim: torch_fn(x, int(dim)).to(out)

    return factory


op_registry.register_op(
    "ArgMax", infer=_arg_infer, kernel=_arg_kernel(torch.argmax), grad=op_registry.NOT_DIFFERENTIABLE
)
op_registry.register_op(
    "ArgMin", infer=_arg_infer, kernel=_arg_kernel(torch.argmin), grad=op_registry.NOT_DIFFERENTIABLE
)


def _arg(op_type: str, input: Any, axis: Any, name: str | None, dimension: Any, output_type: Any) -> Tensor:  # noqa: A002
    axis = _deprecated_arg("axis", axis, "dimension", dimension)
    output_type = dtypes.as_dtype(output_type)
    if output_type not in _INDEX:
        raise TypeError(f"output_type must be int32 or int64, got {output_type.name}")
    with name_scope(name, op_type, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype(x, _REAL, op_type, "input")
        if _is_tensor_like(axis):
            dim = convert_to_tensor(axis)
        else:
            dim = convert_to_tensor(0 if axis is None else axis, preferred_dtype=dtypes.int32, name="dimension")
        check_dtype(dim, _INDEX, op_type, "dimension")
        return make_op(op_type, [x, dim], {"output_type": output_type}, name=scope).outputs[0]


def argmax(
    input: Any,  # noqa: A002 - TF's name
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Index of the largest entry along ``axis`` (default 0; TF1's ``dimension`` is the old name); ties take the first.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.argmax([[1, 3], [4, 2]], axis=1)))
        [1 0]
    """
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input: Any,  # noqa: A002 - TF's name
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """Index of the smallest entry along ``axis`` (see :func:`argmax`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.argmin([[1, 3], [4, 2]], axis=1, output_type=tf.int32)))
        [0 1]
    """
    return _arg("ArgMin", input, axis, name, dimension, output_type)


# ---- add_n, clip_by_value ------------------------------------------------------------------------------
def _add_n_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    shape = unknown_shape()
    for t in op.inputs:
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            shapes = ", ".join(_fmt(i.shape) for i in op.inputs)
            raise ValueError(f"Shapes must all be equal for AddN, got input shapes: {shapes}.") from None
    return [(op.inputs[0].dtype, shape)]


def _add_n_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    if len(op.inputs) == 2:
        return torch.add

    def run(*values: torch.Tensor) -> torch.Tensor:
        total = torch.add(values[0], values[1])
        for v in values[2:]:
            total.add_(v)  # `total` is this kernel's own buffer, never an input
        return total

    return run


op_registry.register_op(
    "AddN", infer=_add_n_infer, kernel=_add_n_kernel, grad=lambda op, grad: [grad] * len(op.inputs)
)


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sums a list of tensors of one dtype and shape (IndexedSlices are made dense first).

    Raises:
        ValueError: ``inputs`` is empty, or shapes differ.
        TypeError: dtypes differ.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.add_n([[1, 2], [3, 4], [5, 6]])))
        [ 9 12]
    """
    if not isinstance(inputs, list | tuple) or not inputs:
        raise ValueError(
            "Inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype and shape."
        )
    tensors = [convert_to_tensor(t) for t in inputs]
    kinds = {t.dtype for t in tensors}
    if len(kinds) > 1:
        names = ", ".join(t.dtype.name for t in tensors)
        raise TypeError(f"Tensors in list passed to 'inputs' of 'AddN' Op have types [{names}] that don't all match.")
    if len(tensors) == 1:
        return identity(tensors[0], name=name) if name else tensors[0]
    check_dtype(tensors[0], _REAL, "AddN", "inputs")
    return make_op("AddN", tensors, {"N": len(tensors)}, name=name or "AddN").outputs[0]


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """Clamps ``t`` into ``[clip_value_min, clip_value_max]`` (bounds may be tensors that broadcast into ``t``).

    Raises:
        ValueError: the bounds would broadcast ``t`` to a larger shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.clip_by_value([1.0, 5.0, 10.0], 2.0, 8.0)))
        [2. 5. 8.]
    """
    if isinstance(t, IndexedSlices):
        return IndexedSlices(clip_by_value(t.values, clip_value_min, clip_value_max, name), t.indices, t.dense_shape)
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.merge_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.merge_with(t_max.shape)
        return t_max


# ---- where / select ------------------------------------------------------------------------------------
def _select_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    c, x, y = op.inputs
    try:
        shape = x.shape.merge_with(y.shape)
    except ValueError:
        raise ValueError(
            f"Shapes of x and y must be equal in Select, got {_fmt(x.shape)} and {_fmt(y.shape)}."
        ) from None
    cs = c.shape
    if cs.ndims is None or cs.ndims == 0 or shape.ndims is None:
        return [(x.dtype, shape)]
    if cs.ndims == 1 and shape.ndims > 1:
        # TF1 rule: a vector condition picks whole rows.
        rows, n = shape[0].value, cs[0].value
        if rows is not None and n is not None and rows != n:
            raise ValueError(
                f"Dimension 0 in both shapes must be equal, but are {n} and {rows}. "
                f"Shapes are {_fmt(cs)} and {_fmt(shape)}."
            )
        return [(x.dtype, shape)]
    try:
        return [(x.dtype, shape.merge_with(cs))]
    except ValueError:
        raise ValueError(
            f"Condition of shape {_fmt(cs)} must be a scalar, a vector matching the first dimension, or have the "
            f"shape of x and y ({_fmt(shape)}) in Select."
        ) from None


def _select_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    if op.inputs[1].dtype.is_string:
        def run_strings(c: torch.Tensor, x: np.ndarray, y: np.ndarray) -> np.ndarray:
            cond = c.cpu().numpy()
            if cond.ndim == 1 and x.ndim > 1:
                cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
            return np.where(cond, x, y)

        return run_strings

    def run(c: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if c.dim() == 1 and x.dim() > 1:
            c = c.view((-1,) + (1,) * (x.dim() - 1))
        return torch.where(c, x, y)

    return run


def _select_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    c = op.inputs[0]
    zeros = _array_ops().zeros_like(grad)
    return [None, where(c, grad, zeros), where(c, zeros, grad)]


def _where_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    rank = op.inputs[0].shape.ndims
    return [(dtypes.int64, TensorShape([None, rank]) if rank is not None else unknown_shape(2))]


op_registry.register_op("Select", infer=_select_infer, kernel=_select_kernel, grad=_select_grad)
op_registry.register_op(
    "Where", infer=_where_infer, kernel=lambda op, ctx: torch.nonzero, grad=op_registry.NOT_DIFFERENTIABLE
)


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF1's ``tf.where``: with ``x`` and ``y``, picks from ``x`` where ``condition`` holds, else from ``y``;
    without them, the int64 coordinates ``[N, rank]`` of the true entries of ``condition``.

    ``x`` and ``y`` must have the same shape; ``condition`` has that shape too, or is a scalar, or is a
    vector that selects whole rows (TF1's rule; no broadcasting).

    Raises:
        ValueError: only one of ``x``, ``y`` is given, or the shapes do not fit.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     c = tf.constant([True, False])
        ...     print(sess.run(tf.where(c, [[1, 2], [3, 4]], [[0, 0], [0, 0]])))
        ...     print(sess.run(tf.where(c)))
        [[1 2]
         [0 0]]
        [[0]]
    """
    if x is None and y is None:
        with name_scope(name, "Where", [condition]) as scope:
            c = convert_to_tensor(condition, preferred_dtype=dtypes.bool, name="input")
            check_dtype(c, _REAL + (dtypes.bool,), "Where", "input")
            return make_op("Where", [c], name=scope).outputs[0]
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with name_scope(name, "Select", [condition, x, y]) as scope:
        c = _bool_operand(condition, "Select", "condition")
        x, y = binary_operands(x, y, "Select")
        return make_op("Select", [c, x, y], name=scope).outputs[0]


# ---- unsorted_segment_sum ------------------------------------------------------------------------------
def _segment_sum_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    data, ids, num = op.inputs
    n = constant_value(num)
    first = int(n) if n is not None else None
    if data.shape.ndims is None or ids.shape.ndims is None:
        return [(data.dtype, unknown_shape())]
    k = ids.shape.ndims
    if not data.shape[:k].is_compatible_with(ids.shape):
        raise ValueError(f"data.shape = {_fmt(data.shape)} does not start with segment_ids.shape = {_fmt(ids.shape)}")
    return [(data.dtype, TensorShape([first] + data.shape.as_list()[k:]))]


def _segment_sum_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    fixed = constant_value(op.inputs[2])
    fixed = int(fixed) if fixed is not None else None

    def run(data: torch.Tensor, ids: torch.Tensor, num: torch.Tensor) -> torch.Tensor:
        n = fixed if fixed is not None else int(num)
        k = ids.dim()
        if tuple(data.shape[:k]) != tuple(ids.shape):
            raise errors.InvalidArgumentError(
                None, None,
                f"data.shape = {list(data.shape)} does not start with segment_ids.shape = {list(ids.shape)}",
            )
        inner = tuple(data.shape[k:])
        flat_ids = ids.reshape(-1).to(torch.int64)
        rows = data.reshape((flat_ids.numel(),) + inner)
        out = torch.zeros((n,) + inner, dtype=data.dtype, device=data.device)
        if flat_ids.numel():
            low, high = (int(v) for v in torch.aminmax(flat_ids))
            if high >= n:
                i = int(torch.nonzero(flat_ids >= n)[0, 0])
                raise errors.InvalidArgumentError(
                    None, None, f"segment_ids[{i}] = {int(flat_ids[i])} is out of range [0, {n})"
                )
            if low < 0:  # TF drops entries with a negative segment id
                keep = flat_ids >= 0
                flat_ids, rows = flat_ids[keep], rows[keep]
            out.index_add_(0, flat_ids, rows)
        return out

    return run


def _segment_sum_grad(op: Operation, grad: Any) -> list[Any]:
    grad = _dense(grad)
    ids = op.inputs[1]
    ao = _array_ops()
    static_ids = constant_value(ids)
    if static_ids is not None and (static_ids >= 0).all():
        return [ao.gather(grad, ids), None, None]
    # Rows whose segment id is negative were dropped, so their gradient is zero. A vector condition
    # selects whole rows, so the ids are flattened for the select and the result reshaped back.
    flat_ids = ids if ids.shape.ndims == 1 else ao.reshape(ids, [-1])
    gathered = ao.gather(grad, maximum(flat_ids, 0))
    picked = where(greater_equal(flat_ids, 0), gathered, ao.zeros_like(gathered))
    if ids.shape.ndims == 1:
        return [picked, None, None]
    return [ao.reshape(picked, ao.concat([ao.shape(ids), ao.shape(grad)[1:]], 0)), None, None]


op_registry.register_op(
    "UnsortedSegmentSum", infer=_segment_sum_infer, kernel=_segment_sum_kernel, grad=_segment_sum_grad
)


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` of the result is the sum of the rows of ``data`` whose ``segment_ids`` entry is ``i``.

    ``segment_ids`` has the shape of a prefix of ``data``'s shape; negative ids are dropped.

    Raises:
        InvalidArgumentError: (at run time) an id is ``>= num_segments``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 2, 0], 3)))
        [4. 0. 2.]
    """
    with name_scope(name, "UnsortedSegmentSum", [data, segment_ids, num_segments]) as scope:
        data = convert_to_tensor(data, name="data")
        check_dtype(data, _REAL, "UnsortedSegmentSum", "data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        check_dtype(ids, _INDEX, "UnsortedSegmentSum", "segment_ids")
        num = convert_to_tensor(num_segments, name="num_segments")
        check_dtype(num, _INDEX, "UnsortedSegmentSum", "num_segments")
        return make_op("UnsortedSegmentSum", [data, ids, num], name=scope).outputs[0]


# ---- range ---------------------------------------------------------------------------------------------
def _range_size(start: Any, limit: Any, delta: Any, dtype: dtypes.DType, error: Callable[[str], Exception]) -> int:
    if delta == 0:
        raise error("Requires delta != 0")
    if delta > 0 and start > limit:
        raise error(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise error(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if dtype.is_integer:
        return (_py_abs(int(limit) - int(start)) + _py_abs(int(delta)) - 1) // _py_abs(int(delta))
    # TF computes the length in the output's precision.
    t = dtype.np_dtype.type
    return int(np.ceil(np.abs((t(limit) - t(start)) / t(delta))))


def _range_values(start: Any, delta: Any, size: int, dtype: dtypes.DType, device: torch.device) -> torch.Tensor:
    out = torch_dtype(dtype)
    if dtype.is_integer:
        return torch.arange(size, dtype=torch.int64, device=device).mul_(int(delta)).add_(int(start)).to(out)
    steps = torch.arange(size, dtype=torch.float64, device=device)
    return steps.mul_(float(delta)).add_(float(start)).to(out)


def _range_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    dtype = op.get_attr("Tidx")
    args = [constant_value(t) for t in op.inputs]
    if any(a is None for a in args):
        return [(dtype, TensorShape([None]))]
    start, limit, delta = (a.item() for a in args)
    return [(dtype, TensorShape([_range_size(start, limit, delta, dtype, ValueError)]))]


def _range_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("Tidx")
    args = [constant_value(t) for t in op.inputs]
    if all(a is not None for a in args):
        start, limit, delta = (a.item() for a in args)
        result = _range_values(start, delta, _range_size(start, limit, delta, dtype, ValueError), dtype, ctx.device)
        return lambda *_: result

    def run(start: torch.Tensor, limit: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        s, lim, d = start.item(), limit.item(), delta.item()
        return _range_values(s, d, _range_size(s, lim, d, dtype, _invalid_argument), dtype, start.device)

    return run


op_registry.register_op("Range", infer=_range_infer, kernel=_range_kernel, grad=op_registry.NOT_DIFFERENTIABLE)

_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> Tensor:  # noqa: A001
    """The sequence ``start, start + delta, ...`` up to but excluding ``limit`` (``range(n)`` counts from 0).

    Without ``dtype`` the result takes the widest of the arguments' types (int32 < int64 < float32 < float64).

    Raises:
        ValueError: ``delta`` is 0 or points away from ``limit`` (when known while building).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.range(4)), sess.run(tf.range(5, 0, -2)), sess.run(tf.range(0.0, 1.0, 0.25)))
        [0 1 2 3] [5 3 1] [0.   0.25 0.5  0.75]
    """
    if limit is None:
        start, limit = 0, start
    with name_scope(name, "Range", [start, limit, delta]) as scope:
        values = [convert_to_tensor(v) if _is_tensor_like(v) else v for v in (start, limit, delta)]
        if dtype is None:
            kinds = [v.dtype if isinstance(v, Tensor) else dtypes.dtype_of_value(v) for v in values]
            for kind in kinds:
                if kind not in _RANGE_DTYPES:
                    raise TypeError(f"Range arguments must be int32, int64, float32 or float64, got {kind.name}")
            inferred = max(kinds, key=_RANGE_DTYPES.index)
        else:
            inferred = dtypes.as_dtype(dtype)
        # Python values become constants of the result type directly (not casts), so the length stays static.
        args = [
            cast(v, inferred) if isinstance(v, Tensor) else convert_to_tensor(v, dtype=inferred, name=arg)
            for v, arg in zip(values, ("start", "limit", "delta"))
        ]
        return make_op("Range", args, {"Tidx": inferred}, name=scope).outputs[0]


# ---- Tensor operators ----------------------------------------------------------------------------------
def _binary_operator(fn: Callable[..., Tensor], name: str):
    def forward(x: Any, y: Any) -> Tensor:
        return fn(x, y, name=name)

    def reflected(y: Any, x: Any) -> Tensor:
        return fn(x, y, name=name)

    return forward, reflected


for _names, _fn, _op_name in (
    (("__add__", "__radd__"), add, "add"),
    (("__sub__", "__rsub__"), subtract, "sub"),
    (("__mul__", "__rmul__"), multiply, "mul"),
    (("__truediv__", "__rtruediv__"), truediv, "truediv"),
    (("__div__", "__rdiv__"), div, "div"),
    (("__floordiv__", "__rfloordiv__"), floordiv, "floordiv"),
    (("__mod__", "__rmod__"), floormod, "mod"),
    (("__pow__", "__rpow__"), pow, "pow"),
    (("__matmul__", "__rmatmul__"), matmul, "matmul"),
    (("__and__", "__rand__"), logical_and, "and"),
    (("__or__", "__ror__"), logical_or, "or"),
    (("__xor__", "__rxor__"), logical_xor, "xor"),
):
    for _operator, _method in zip(_names, _binary_operator(_fn, _op_name)):
        Tensor._override_operator(_operator, _method)

Tensor._override_operator("__lt__", lambda x, y: less(x, y))
Tensor._override_operator("__le__", lambda x, y: less_equal(x, y))
Tensor._override_operator("__gt__", lambda x, y: greater(x, y))
Tensor._override_operator("__ge__", lambda x, y: greater_equal(x, y))
Tensor._override_operator("__neg__", lambda x: negative(x))
Tensor._override_operator("__abs__", lambda x: abs(x))
Tensor._override_operator("__invert__", lambda x: logical_not(x))
