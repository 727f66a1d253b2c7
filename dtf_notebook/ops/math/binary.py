"""Binary arithmetic: ``Add``, ``Sub``, ``Mul``, ``RealDiv``, ``FloorDiv``, ``FloorMod``, ``Pow``, ``Maximum``,
``Minimum`` and ``SquaredDifference``, with TF's broadcasting.

Each op is one registry entry (kernel and gradient) and most builders are one table
row; ``truediv``, ``div`` and ``scalar_mul`` prepare their operands first. Gradients
are summed back to each input's shape by :func:`.broadcast.unbroadcast_pair`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(subtract(multiply([[1.0], [2.0]], [10.0, 20.0]), 1.0)))
    [[ 9. 19.]
     [19. 39.]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import (
    COMPLEX,
    FLOAT,
    REAL,
    array_ops,
    binary_op,
    dense,
    operand_dtype_error,
    table_builder,
)
from dtf_notebook.ops.math.broadcast import unbroadcast_pair
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import greater, greater_equal, less_equal
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.op_helpers import binary_operands, broadcast_binary, broadcasting_kernel, check_dtype, make_op


# ---- kernels -------------------------------------------------------------------------------------------
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


# ---- gradients (negative and log are unary ops, which sit above this module) ------------------------------
def _add_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    return unbroadcast_pair(op, grad, grad)


def _sub_grad(op: Operation, grad: Any) -> list[Any]:
    negative = op_registry.builders.negative

    grad = dense(grad)
    return unbroadcast_pair(op, grad, negative(grad))


def conj_if_complex(x: Tensor) -> Tensor:
    """The complex conjugate (a real tensor itself, no op), as TF's gradients of complex products take it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([1.0])
        ...     conj_if_complex(x) is x, conj_if_complex(tf.constant([1j], tf.complex64)).op.type
        (True, 'Conj')
    """
    if not x.dtype.is_complex:
        return x
    return op_registry.builders.conjugate(x)  # complex_ops builds on this module


def _mul_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    x, y = op.inputs
    return unbroadcast_pair(op, multiply(grad, conj_if_complex(y)), multiply(conj_if_complex(x), grad))


def _realdiv_grad(op: Operation, grad: Any) -> list[Any]:
    negative = op_registry.builders.negative

    grad = dense(grad)
    x, y = op.inputs
    return unbroadcast_pair(op, realdiv(grad, y), multiply(grad, realdiv(realdiv(negative(x), y), y)))


def _floormod_grad(op: Operation, grad: Any) -> list[Any]:
    negative = op_registry.builders.negative

    grad = dense(grad)
    x, y = op.inputs
    return unbroadcast_pair(op, grad, multiply(grad, negative(floordiv(x, y))))


def _pow_grad(op: Operation, grad: Any) -> list[Any]:
    log = op_registry.builders.log

    grad = dense(grad)
    x, y = op.inputs
    z = op.outputs[0]
    gx = multiply(multiply(grad, y), pow(x, subtract(y, 1)))
    # d(x**y)/dy = z*log(x) is taken as 0 where x <= 0, as TF does.
    ao = array_ops()
    positive = greater(x, 0)
    safe_x = where(positive, x, ao.ones_like(x))
    log_x = where(positive, log(safe_x), ao.zeros_like(x))
    return unbroadcast_pair(op, gx, multiply(multiply(grad, z), log_x))


def _maximum_minimum_grad(x_selected: Callable[[Tensor, Tensor], Tensor]):
    def grad_fn(op: Operation, grad: Any) -> list[Any]:
        grad = dense(grad)
        x, y = op.inputs
        mask = x_selected(x, y)
        zeros = array_ops().zeros_like(grad)
        return unbroadcast_pair(op, where(mask, grad, zeros), where(mask, zeros, grad))

    return grad_fn


def _squared_difference_grad(op: Operation, grad: Any) -> list[Any]:
    negative = op_registry.builders.negative

    grad = dense(grad)
    x, y = op.inputs
    gx = multiply(multiply(grad, 2), subtract(x, y))
    return unbroadcast_pair(op, gx, negative(gx))


for _type, _kernel, _grad in (
    ("Add", _add_kernel, _add_grad),
    # TF 2 writes ``x + y`` of numbers as AddV2 (Add without strings): graphs TF wrote import and run here.
    ("AddV2", _add_kernel, _add_grad),
    ("Sub", lambda op, ctx: torch.sub, _sub_grad),
    ("Mul", lambda op, ctx: torch.mul, _mul_grad),
    ("RealDiv", lambda op, ctx: torch.div, _realdiv_grad),
    ("FloorDiv", _floordiv_kernel, op_registry.NOT_DIFFERENTIABLE),
    ("FloorMod", _floormod_kernel, _floormod_grad),
    ("Pow", _pow_kernel, _pow_grad),
    ("Maximum", lambda op, ctx: torch.maximum, _maximum_minimum_grad(lambda x, y: greater_equal(x, y))),
    ("Minimum", lambda op, ctx: torch.minimum, _maximum_minimum_grad(lambda x, y: less_equal(x, y))),
    ("SquaredDifference", lambda op, ctx: lambda a, b: torch.square(torch.sub(a, b)), _squared_difference_grad),
):
    op_registry.register_op(_type, infer=broadcast_binary, kernel=broadcasting_kernel(_kernel), grad=_grad)


# ---- builders ------------------------------------------------------------------------------------------
def _arithmetic(
    fn_name: str,
    op_type: str,
    allowed: Sequence[dtypes.DType],
    summary: str,
    example: str,
    prints: str,
    run_time_error: str = "",
    default_name: str | None = None,
) -> Callable[..., Tensor]:
    def build(x: Any, y: Any, name: str | None = None) -> Tensor:
        return binary_op(op_type, x, y, name, allowed, default_name)

    raises = [operand_dtype_error(allowed)]
    if run_time_error:
        raises.append(f"InvalidArgumentError: (at run time) {run_time_error}.")
    return table_builder(build, fn_name, summary, example, prints, raises)


_ADDABLE = REAL + COMPLEX + (dtypes.string,)

# Builders: name, op type, dtypes accepted, summary, example arguments and what they print[, run-time error, scope].
add = _arithmetic(
    "add", "Add", _ADDABLE, "``x + y``; strings are concatenated.", "[[1], [2]], [10, 20]", "[[11 21]\n [12 22]]"
)
subtract = _arithmetic("subtract", "Sub", REAL + COMPLEX, "``x - y`` elementwise.", "[5.0, 7.0], 2.0", "[3. 5.]")
multiply = _arithmetic("multiply", "Mul", REAL + COMPLEX, "``x * y`` elementwise.", "[1, 2, 3], 3", "[3 6 9]")
realdiv = _arithmetic(
    "realdiv", "RealDiv", FLOAT, "``x / y`` for floats (no integer casting).", "[1.0, 3.0], 2.0", "[0.5 1.5]"
)
floordiv = _arithmetic(
    "floordiv", "FloorDiv", REAL, "``floor(x / y)``.", "[7, -7], 2", "[ 3 -4]", "integer division by zero", "floordiv"
)
floormod = _arithmetic("floormod", "FloorMod", REAL, "``x - floor(x / y) * y`` (sign of ``y``).", "[7, -7], 3", "[1 2]")
mod = floormod
pow = _arithmetic(
    "pow", "Pow", REAL, "``x ** y`` elementwise.", "[2.0, 3.0], 2.0", "[4. 9.]", "an integer to a negative power"
)
maximum = _arithmetic("maximum", "Maximum", REAL, "The elementwise maximum.", "[1, 5, 3], 2", "[2 5 3]")
minimum = _arithmetic("minimum", "Minimum", REAL, "The elementwise minimum.", "[1, 5, 3], 2", "[1 2 2]")
squared_difference = _arithmetic(
    "squared_difference", "SquaredDifference", REAL, "``(x - y) ** 2`` elementwise.", "[1, 5], [3, 2]", "[4 9]"
)


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
    dtypes.int8: dtypes.float32,
    dtypes.int16: dtypes.float32,
    dtypes.uint8: dtypes.float32,
    dtypes.int32: dtypes.float64,
    dtypes.int64: dtypes.float64,
    **{d: None for d in FLOAT},
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
        check_dtype(x, REAL, "div")
        op_type = "RealDiv" if x.dtype.is_floating else "FloorDiv"
        return make_op(op_type, [x, y], name=scope).outputs[0]
