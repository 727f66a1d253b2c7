"""Stacks of one step: ``StackV2``, ``StackPushV2``, ``StackPopV2`` (TF1's, used by while-loop gradients).

A while loop's gradient needs, in its own loop, the values the forward loop computed in each
iteration, last one first. As in TF1, the forward loop pushes each such value onto a stack and the
gradient loop pops them. A stack lives for one step only: each run of ``StackV2`` makes a new, empty
stack and outputs it as its ``resource`` handle (the handle's value at run time is the stack itself,
as for a ``TensorArray``), so no value survives into the next ``sess.run``, concurrent runs never
share one, and the stack is dropped with the step's other values.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     handle = stack_v2(-1, tf.float32, stack_name="s")
    ...     push = stack_push_v2(handle, tf.constant(2.0))
    ...     with tf.control_dependencies([push]):
    ...         top = stack_pop_v2(handle, tf.float32)
    ...     with tf.Session() as sess:
    ...         print(sess.run(top))
    2.0
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["stack_v2", "stack_push_v2", "stack_pop_v2"]


class _Stack:
    """The elements of one stack, pushed and popped within one step."""

    __slots__ = ("name", "max_size", "elements")

    def __init__(self, name: str, max_size: int) -> None:
        self.name = name
        self.max_size = max_size
        self.elements: list[Any] = []

    def __repr__(self) -> str:
        return f"<stack {self.name}>"


def _checked(handle: Any, op: Operation) -> _Stack:
    if not isinstance(handle, _Stack):
        raise errors.InvalidArgumentError(None, op, f"{op.type} '{op.name}' needs a stack handle, got {handle!r}")
    return handle


def _stack_kernel(op: Operation, ctx: Any) -> Any:
    name = op.get_attr("stack_name") or op.name

    def run(max_size: Any) -> _Stack:
        return _Stack(name, int(max_size))

    return run


def _push_kernel(op: Operation, ctx: Any) -> Any:
    def run(handle: Any, elem: Any) -> Any:
        stack = _checked(handle, op)
        if 0 <= stack.max_size <= len(stack.elements):
            raise errors.InvalidArgumentError(
                None, op, f"Stack[{stack.name}] overflowed its max_size ({stack.max_size})"
            )
        stack.elements.append(elem)  # runtime values are never changed in place: no copy needed
        return elem

    return run


def _pop_kernel(op: Operation, ctx: Any) -> Any:
    def run(handle: Any) -> Any:
        stack = _checked(handle, op)
        if not stack.elements:
            raise errors.InvalidArgumentError(None, op, f"Stack[{stack.name}] is empty.")
        return stack.elements.pop()

    return run


def _stack_infer(op: Operation) -> list:
    op.inputs[0].shape.assert_is_compatible_with(TensorShape([]))
    return [(dtypes.resource, TensorShape([]))]


def _push_infer(op: Operation) -> list:
    elem = op.inputs[1]
    return [(elem.dtype, elem.shape)]


def _pop_infer(op: Operation) -> list:
    return [(op.get_attr("elem_type"), unknown_shape())]


for _type, _infer, _kernel in (
    ("StackV2", _stack_infer, _stack_kernel),
    ("StackPushV2", _push_infer, _push_kernel),
    ("StackPopV2", _pop_infer, _pop_kernel),
):
    op_registry.register_op(_type, infer=_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE, stateful=True)


def stack_v2(max_size: Any, elem_type: Any, stack_name: str = "", name: str | None = None) -> Tensor:
    """A new stack of ``elem_type`` values for this step; returns its handle.

    Args:
        max_size: Most elements it may hold (-1: no limit).
        elem_type: The dtype of its elements.
        stack_name: The name errors give it (default: the op's name).
        name: The op's name.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     stack_v2(-1, tf.float32, name="acc").dtype.name
        'resource'
    """
    max_size = convert_to_tensor(max_size, dtype=dtypes.int32)
    attrs = {"elem_type": dtypes.as_dtype(elem_type), "stack_name": stack_name}
    return make_op("StackV2", [max_size], attrs, name=name or "Stack").outputs[0]


def stack_push_v2(handle: Tensor, elem: Any, swap_memory: bool = False, name: str | None = None) -> Tensor:
    """Pushes ``elem`` onto the stack ``handle``; outputs ``elem``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     stack_push_v2(stack_v2(-1, tf.float32), tf.constant([1.0])).shape
        TensorShape([1])
    """
    elem = convert_to_tensor(elem)
    attrs = {"T": elem.dtype, "swap_memory": bool(swap_memory)}
    return make_op("StackPushV2", [handle, elem], attrs, name=name or "StackPush").outputs[0]


def stack_pop_v2(handle: Tensor, elem_type: Any, name: str | None = None) -> Tensor:
    """Pops the top element of the stack ``handle`` (an error when it is empty).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     stack_pop_v2(stack_v2(-1, tf.int32), tf.int32).dtype
        tf.int32
    """
    return make_op("StackPopV2", [handle], {"elem_type": dtypes.as_dtype(elem_type)}, name=name or "StackPop").outputs[
        0
    ]
