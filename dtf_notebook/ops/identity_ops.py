"""Identity-like ops: ``identity``, ``identity_n``, ``stop_gradient``, ``no_op``, ``group``, ``tuple``.

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
import contextlib
from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.op_helpers import make_op, no_outputs, same_as_input

__all__ = ["identity", "identity_n", "stop_gradient", "no_op", "group", "tuple"]


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


def identity_n(input: Any, name: str | None = None) -> list[Tensor]:  # noqa: A002 - TF's name
    """Returns tensors with the same values as the list ``input``, all from one ``IdentityN`` op.

    Gradients pass through each output to its input.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.identity_n([tf.constant(1.0), tf.constant([1, 2])])
        >>> a.name, b.name, b.shape
        ('IdentityN:0', 'IdentityN:1', TensorShape([2]))
    """
    if isinstance(input, Tensor) or not isinstance(input, list | builtins.tuple):
        raise TypeError(f"Expected list for 'input' argument to 'IdentityN' Op, not {input!r}.")
    tensors = [convert_to_tensor(x) for x in input]
    op = make_op("IdentityN", tensors, {"T": [t.dtype for t in tensors]}, name=name or "IdentityN")
    return list(op.outputs)


op_registry.register_op(
    "IdentityN",
    infer=lambda op: [(t.dtype, t.shape) for t in op.inputs],
    kernel=lambda op, ctx: (lambda x: x) if len(op.inputs) == 1 else (lambda *xs: xs),
    grad=lambda op, *grads: list(grads),
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

    As in TF1, the grouping follows the inputs' devices: inputs all on one device are grouped by a NoOp on
    that device, and inputs on several devices by one NoOp per device plus the returned one. So grouping the
    updates of variables that live on a ps task costs no control message back and forth between tasks.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     g = tf.group(tf.no_op(name="a"), tf.no_op(name="b"), name="both")
        ...     with tf.device("/job:ps/task:0"):
        ...         on_ps = tf.no_op(name="c")
        >>> sorted(c.name for c in g.control_inputs)
        ['a', 'b']
        >>> with tf.Graph().as_default():
        ...     with tf.device("/job:ps/task:0"):
        ...         a = tf.no_op(name="a")
        ...     with tf.device("/job:worker"):
        ...         g = tf.group(a, name="update")
        >>> g.device
        '/job:ps/task:0'
    """
    ops = []
    for x in inputs:
        for item in x if isinstance(x, list | builtins.tuple | set) else [x]:
            op = _as_op(item)
            if op not in ops:
                ops.append(op)
    graph = ops[0].graph if ops else get_default_graph()
    with graph.as_default(), name_scope(name, "group_deps", ops) as scope:
        by_device: dict[str, list[Operation]] = {}
        for op in ops:
            by_device.setdefault(op.device, []).append(op)
        if len(by_device) <= 1:
            with graph.colocate_with(None, ignore_existing=True):
                return _group_on(graph, next(iter(by_device), ""), ops, scope)
        deps = [_group_on(graph, device, by_device[device], None) for device in sorted(by_device)]
        with graph.control_dependencies(deps):
            return graph.create_op("NoOp", [], name=scope)


def _group_on(graph: Any, device: str, ops: list[Operation], name: str | None) -> Operation:
    with graph.control_dependencies(ops), graph.device(device) if device else contextlib.nullcontext():
        return graph.create_op("NoOp", [], name=name or "NoOp")


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
