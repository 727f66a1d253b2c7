"""Gradients of the TensorArray ops, as TF1's ``tensor_array_grad``.

The gradient of an array is another array (``TensorArrayGradV3``, one per ``tf.gradients`` call, named by
the call's scope): the gradient of a read writes the incoming gradient into it, the gradient of a write reads
it back, gather and scatter, concat and split pair up the same way. Gradients travel between these ops
along the flow tensors, which also order each gradient read after the gradient writes it needs.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops.tensor_array_ops import TensorArray
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([1.0, 2.0, 3.0])
    ...     y = TensorArray(tf.float32, size=3).unstack(x).read(1) * 5.0
    ...     (dx,) = tf.gradients(y, [x])
    ...     with tf.Session() as sess:
    ...         print(sess.run(dx))
    [0. 5. 0.]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.graph import control_dependencies
from dtf_notebook.framework.operation import Operation
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.tensor_array.array import TensorArray

__all__ = ["grad_source"]


def grad_source(op_or_tensor: Any) -> str:
    """Which ``tf.gradients`` call made ``op_or_tensor``: its name up to the last ``gradients*`` scope.

    Two gradient computations over one forward graph then accumulate into different gradient arrays.

    Raises:
        ValueError: the name has no scope starting with ``gradients``.

    Example:
        >>> class T:
        ...     name = "outer/gradients_1/TensorArrayReadV3_grad/mul:0"
        >>> grad_source(T())
        'outer/gradients_1'
    """
    tokens = op_or_tensor.name.split("/")
    positions = [i for i, token in enumerate(tokens) if token.startswith("gradients")]
    if not positions:
        raise ValueError(
            "Expected op/tensor name to start with gradients (excluding scope), got: "
            f"{op_or_tensor.name}. This means that a tf.gradients op with this op in its dependency path has a "
            "custom name that does not start with 'gradients'. Please make sure all calls to tf.gradients that "
            "have non-empty `name` arguments use names that start with 'gradients'."
        )
    return "/".join(tokens[: positions[-1] + 1])


def _grad_array(op: Operation, dtype: Any, flow: Any, source: str) -> TensorArray:
    forward = TensorArray(dtype, handle=op.inputs[0], flow=flow, colocate_with_first_write_call=False)
    return forward.grad(source=source, flow=flow)


def _barrier(op: Operation, flow: Any) -> Any:
    """``flow`` once the forward write is done: the gradient array must not be read before it."""
    flow_out = identity(op.outputs[0], name="flow_out")
    with control_dependencies([flow_out.op]):
        return identity(flow, name="write_barrier")


def _read_grad(op: Operation, grad: Any) -> list[Any]:
    flow = op.inputs[2]
    g = _grad_array(op, op.get_attr("dtype"), flow, grad_source(grad))
    return [None, None, g.write(op.inputs[1], grad).flow]


def _write_grad(op: Operation, flow: Any) -> list[Any]:
    source = grad_source(flow)
    flow = _barrier(op, flow)
    g = _grad_array(op, op.get_attr("T"), flow, source)
    return [None, None, g.read(op.inputs[1]), flow]


def _gather_grad(op: Operation, grad: Any) -> list[Any]:
    flow = op.inputs[2]
    g = _grad_array(op, op.get_attr("dtype"), flow, grad_source(grad))
    return [None, None, g.scatter(op.inputs[1], grad).flow]


def _scatter_grad(op: Operation, flow: Any) -> list[Any]:
    source = grad_source(flow)
    flow = _barrier(op, flow)
    g = _grad_array(op, op.get_attr("T"), flow, source)
    return [None, None, g.gather(op.inputs[1]), flow]


def _concat_grad(op: Operation, grad: Any, _lengths_grad: Any = None) -> list[Any]:
    flow = op.inputs[1]
    g = _grad_array(op, op.get_attr("dtype"), flow, grad_source(grad))
    return [None, g.split(grad, lengths=op.outputs[1]).flow]


def _split_grad(op: Operation, flow: Any) -> list[Any]:
    source = grad_source(flow)
    flow = _barrier(op, flow)
    g = _grad_array(op, op.get_attr("T"), flow, source)
    return [None, g.concat(), None, flow]


for _type, _fn in (
    ("TensorArrayReadV3", _read_grad),
    ("TensorArrayWriteV3", _write_grad),
    ("TensorArrayGatherV3", _gather_grad),
    ("TensorArrayScatterV3", _scatter_grad),
    ("TensorArrayConcatV3", _concat_grad),
    ("TensorArraySplitV3", _split_grad),
):
    op_registry.register_gradient(_type)(_fn)
