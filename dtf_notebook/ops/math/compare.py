"""Comparisons (``Equal`` ... ``GreaterEqual``) and logical ops (``LogicalAnd``, ``LogicalOr``, ``LogicalNot``).

All give bool tensors, broadcast as in TF, and have no gradient. ``equal`` and
``not_equal`` also compare strings; the logical ops take bool operands only.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1, 5, 3])
    ...     print(sess.run(logical_xor(less(x, 4), equal(x, 3))))
    [ True False False]
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
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import (
    ANY,
    COMPLEX,
    REAL,
    binary_op,
    is_tensor_like,
    operand_dtype_error,
    table_builder,
)
from dtf_notebook.ops.op_helpers import broadcast_compare, broadcasting_kernel, make_op, same_as_input


def _compare_kernel(torch_name: str, numpy_fn: Callable[..., Any] | None = None):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        if numpy_fn is not None and op.inputs[0].dtype.is_string:
            return lambda a, b: torch.from_numpy(np.asarray(numpy_fn(a, b), dtype=np.bool_))
        return getattr(torch, torch_name)  # looked up when a plan is built: torch loads then

    return factory


for _type, _infer, _kernel in (
    ("Equal", broadcast_compare, _compare_kernel("eq", np.equal)),
    ("NotEqual", broadcast_compare, _compare_kernel("ne", np.not_equal)),
    ("Less", broadcast_compare, _compare_kernel("lt")),
    ("LessEqual", broadcast_compare, _compare_kernel("le")),
    ("Greater", broadcast_compare, _compare_kernel("gt")),
    ("GreaterEqual", broadcast_compare, _compare_kernel("ge")),
    ("LogicalAnd", broadcast_compare, lambda op, ctx: torch.logical_and),
    ("LogicalOr", broadcast_compare, lambda op, ctx: torch.logical_or),
    ("LogicalNot", same_as_input, lambda op, ctx: torch.logical_not),
):
    _kernel = broadcasting_kernel(_kernel) if _infer is broadcast_compare else _kernel
    op_registry.register_op(_type, infer=_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


def _comparison(fn_name: str, op_type: str, allowed: Sequence[dtypes.DType], summary: str, prints: str):
    def compare(x: Any, y: Any, name: str | None = None) -> Tensor:
        return binary_op(op_type, x, y, name, allowed)

    return table_builder(compare, fn_name, summary, "[1, 2, 3], 2", prints, [operand_dtype_error(allowed)])


# Builders: name, op type, dtypes accepted, summary, and what the example (``[1, 2, 3]`` against 2) prints.
_EQ = ANY + COMPLEX
equal = _comparison("equal", "Equal", _EQ, "``x == y`` elementwise (any dtype, strings too).", "[False  True False]")
not_equal = _comparison("not_equal", "NotEqual", _EQ, "``x != y`` elementwise (any dtype).", "[ True False  True]")
less = _comparison("less", "Less", REAL, "``x < y`` elementwise.", "[ True False False]")
less_equal = _comparison("less_equal", "LessEqual", REAL, "``x <= y`` elementwise.", "[ True  True False]")
greater = _comparison("greater", "Greater", REAL, "``x > y`` elementwise.", "[False False  True]")
greater_equal = _comparison("greater_equal", "GreaterEqual", REAL, "``x >= y`` elementwise.", "[False  True  True]")


def bool_operand(value: Any, op_type: str, arg: str) -> Tensor:
    """``value`` as a bool tensor; a tensor of another dtype is a TypeError naming ``arg`` of ``op_type``.

    Example:
        >>> import dtf_notebook as tf
        >>> g = tf.Graph()
        >>> with g.as_default():
        ...     print(bool_operand([True, False], "LogicalAnd", "x").dtype)
        <dtype: 'bool'>
        >>> with g.as_default():
        ...     bool_operand(tf.constant(1), "LogicalAnd", "y")
        Traceback (most recent call last):
            ...
        TypeError: Input 'y' of 'LogicalAnd' Op has type int32 that does not match expected type of bool.
    """
    if is_tensor_like(value):
        t = convert_to_tensor(value)
        if t.dtype is not dtypes.bool:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {t.dtype.name} that does not match expected type of bool."
            )
        return t
    return convert_to_tensor(value, dtype=dtypes.bool, name=arg)


def _logical(op_type: str, operands: Sequence[Any], name: str | None) -> Tensor:
    with name_scope(name, op_type, list(operands)) as scope:
        tensors = [bool_operand(v, op_type, arg) for v, arg in zip(operands, ("x", "y"))]
        return make_op(op_type, tensors, name=scope).outputs[0]


def _logical_binary(fn_name: str, op_type: str, summary: str, prints: str) -> Callable[..., Tensor]:
    def logical(x: Any, y: Any, name: str | None = None) -> Tensor:
        return _logical(op_type, (x, y), name)

    example = "[True, True, False], [True, False, False]"
    return table_builder(logical, fn_name, summary, example, prints, ["TypeError: an operand is not bool."])


logical_and = _logical_binary("logical_and", "LogicalAnd", "``x AND y`` elementwise on bools.", "[ True False False]")
logical_or = _logical_binary("logical_or", "LogicalOr", "``x OR y`` elementwise on bools.", "[ True  True False]")


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
        x, y = bool_operand(x, "LogicalXor", "x"), bool_operand(y, "LogicalXor", "y")
        return _logical("LogicalAnd", (logical_or(x, y), logical_not(logical_and(x, y))), scope)
