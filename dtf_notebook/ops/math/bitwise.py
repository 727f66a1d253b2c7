"""Bitwise ops on integers (``tf.bitwise``): ``BitwiseAnd``, ``BitwiseOr``, ``BitwiseXor``, ``LeftShift``,
``RightShift`` (broadcasting) and ``Invert``; TF1's ``floor_div`` (the ``FloorDiv`` op under its own name) and
``to_bfloat16``. None of the bitwise ops has a gradient (their values are integers).

Shifts follow TF's kernels, which clamp the shift amount into ``[0, bit width - 1]`` (C and torch leave shifts
outside that range undefined).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run([bitwise_xor([5, 3], 1), left_shift([1, 1], [2, 40])]))
    [array([4, 2], dtype=int32), array([          4, -2147483648], dtype=int32)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import INT, REAL, binary_op
from dtf_notebook.ops.math._elementwise import unary_op
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.op_helpers import broadcast_binary, broadcasting_kernel, same_as_input

__all__ = ["floor_div", "to_bfloat16"]


def _shift(left: bool) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        bits = op.inputs[0].dtype.size * 8

        def run(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            amount = torch.clamp(y, 0, bits - 1)
            return torch.bitwise_left_shift(x, amount) if left else torch.bitwise_right_shift(x, amount)

        return run

    return factory


for _type, _kernel in (
    ("BitwiseAnd", lambda op, ctx: torch.bitwise_and),
    ("BitwiseOr", lambda op, ctx: torch.bitwise_or),
    ("BitwiseXor", lambda op, ctx: torch.bitwise_xor),
    ("LeftShift", _shift(True)),
    ("RightShift", _shift(False)),
):
    op_registry.register_op(
        _type, infer=broadcast_binary, kernel=broadcasting_kernel(_kernel), grad=op_registry.NOT_DIFFERENTIABLE
    )
op_registry.register_op(
    "Invert", infer=same_as_input, kernel=lambda op, ctx: torch.bitwise_not, grad=op_registry.NOT_DIFFERENTIABLE
)


def bitwise_and(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x & y`` bit by bit (integers).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.bitwise_and([12, 10], 6)))
        [4 2]
    """
    return binary_op("BitwiseAnd", x, y, name, INT)


def bitwise_or(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x | y`` bit by bit (integers).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.bitwise_or([12, 10], 6)))
        [14 14]
    """
    return binary_op("BitwiseOr", x, y, name, INT)


def bitwise_xor(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x ^ y`` bit by bit (integers).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.bitwise_xor([12, 10], 6)))
        [10 12]
    """
    return binary_op("BitwiseXor", x, y, name, INT)


def left_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x << y``, the shift clamped into ``[0, bit width - 1]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.left_shift([1, 3], [4, 1])))
        [16  6]
    """
    return binary_op("LeftShift", x, y, name, INT)


def right_shift(x: Any, y: Any, name: str | None = None) -> Tensor:
    """``x >> y``, arithmetic for signed integers, the shift clamped into ``[0, bit width - 1]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.right_shift([16, -16], 2)))
        [ 4 -4]
    """
    return binary_op("RightShift", x, y, name, INT)


def invert(x: Any, name: str | None = None) -> Tensor:
    """``~x``: every bit flipped (integers).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitwise.invert([0, 5])))
        [-1 -6]
    """
    return unary_op("Invert", x, name, INT)


def floor_div(x: Any, y: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.floor_div``: the ``FloorDiv`` op, ``floor(x / y)`` (named ``FloorDiv``, unlike ``floordiv``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.floor_div([7, -7], 2)))
        [ 3 -4]
    """
    return binary_op("FloorDiv", x, y, name, REAL)


def to_bfloat16(x: Any, name: str = "ToBFloat16") -> Any:
    """Casts ``x`` to bfloat16.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.to_bfloat16([1.5])).astype("float32"))
        [1.5]
    """
    return cast(x, dtypes.bfloat16, name=name)
