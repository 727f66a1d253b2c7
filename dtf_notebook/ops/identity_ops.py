"""Identity-like ops: ``identity``, ``stop_gradient``, ``no_op``, ``group``, ``tuple``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.constant(1.0)
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.identity(a)))
    1.0
"""

from __future__ import annotations

import builtins
from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.op_helpers import make_op, no_outputs, same_as_input

__all__ = ["identity", "stop_gradient", "no_op", "group", "tuple"]


def identity(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Returns a tensor with the same value as ``input`` (reads a variable's current value).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.identity(tf.constant([1, 2]), name="same").name
        'same:0'
    """
    return make_op("Identity", [convert_to_tensor(input)], name=name or "Identity").outputs[0]


op_registry.register_op(
    "Identity", infer=same_as_input, kernel=lambda op, ctx: lambda x: x, grad=lambda op, grad: [grad]
)


def stop_gradient(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Returns ``input``; gradients do not flow through it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant(2.0)
        ...     tf.gradients(tf.stop_gradient(x) * x, x)[0].op.type in ("Mul", "Identity", "AddN")
        True
    """
    return make_op("StopGradient", [convert_to_tensor(input)], name=name or "StopGradient").outputs[0]


op_registry.register_op(
    "StopGradient", infer=same_as_input, kernel=lambda op, ctx: lambda x: x, grad=op_registry.NOT_DIFFERENTIABLE
)


def no_op(name: str | None = None) -> Operation:
    """An op that does nothing; useful as a control-dependency anchor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.no_op(name="noop").type
        'NoOp'
    """
    return get_default_graph().create_op("NoOp", [], name=name or "NoOp")


op_registry.register_op(
    "NoOp", infer=no_outputs, kernel=lambda op, ctx: lambda: None, grad=op_registry.NOT_DIFFERENTIABLE
)


def _as_op(x: Any) -> Operation:
    x = getattr(x, "_as_graph_element", lambda: x)()
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, Operation):
        return x
    raise TypeError(f"Expected an Operation or Tensor, got {x!r}")


def group(*inputs: Any, name: str | None = None) -> Operation:
    """An op that runs all ``inputs`` (as control dependencies) and outputs nothing.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     g = tf.group(tf.no_op(name="a"), tf.no_op(name="b"), name="both")
        >>> sorted(c.name for c in g.control_inputs)
        ['a', 'b']
    """
    ops = []
    for x in inputs:
        for item in x if isinstance(x, list | builtins.tuple | set) else [x]:
            op = _as_op(item)
            if op not in ops:
                ops.append(op)
    graph = ops[0].graph if ops else get_default_graph()
    with graph.as_default(), graph.control_dependencies(ops):
        return graph.create_op("NoOp", [], name=name or "group_deps")


def tuple(tensors: Any, name: str | None = None, control_inputs: Any = None) -> list[Any]:  # noqa: A001
    """Groups tensors: each returned tensor is available only after all of ``tensors`` are computed.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.tuple([tf.constant(1.0), tf.constant(2.0)])
        >>> a.op.type
        'Identity'
    """
    items = [None if t is None else convert_to_tensor(t) for t in tensors]
    real = [t for t in items if t is not None]
    graph = real[0].graph if real else get_default_graph()
    with graph.as_default(), name_scope(name, "tuple", real):
        gate = group(*real, *(control_inputs or []))
        with control_dependencies([gate]):
            return [None if t is None else identity(t) for t in items]
