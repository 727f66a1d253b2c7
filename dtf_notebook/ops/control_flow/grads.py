"""Gradients of the control-flow primitives (TF1's ``control_flow_grad``).

Through a ``cond``: the gradient of a ``Merge`` is a ``Switch`` of the incoming gradient on the
predicate (it flows back into the branch that was taken; the other branch's gradient ops see a dead
value and are skipped), and the gradient of a ``Switch`` is a ``Merge`` of the gradients of its two
outputs (the live one wins).

Through a ``while_loop`` (built in the gradient loop of :mod:`.grad_state`): the gradient of an ``Exit``
is an ``Enter`` into the gradient loop; of a loop ``Switch``, a ``Merge`` whose back edge is the gradient
coming round from the body; of a loop ``Merge``, a ``Switch`` on the gradient loop's condition; of a
``NextIteration``, the gradient itself (it goes round); of an ``Enter``, an ``Exit`` of the gradient loop,
or for a loop invariant the sum of its gradients over all iterations.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [])
    ...     y = tf.cond(x > 0.0, lambda: x * x, lambda: 3.0 * x)
    ...     (dx,) = tf.gradients(y, [x])
    ...     with tf.Session() as sess:
    ...         print(sess.run(dx, {x: 2.0}), sess.run(dx, {x: -1.0}))
    4.0 3.0
    >>> with tf.Graph().as_default():
    ...     w = tf.constant(2.0)
    ...     _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * w), [0, tf.constant(1.0)])
    ...     (dw,) = tf.gradients(y, [w])
    ...     with tf.Session() as sess:
    ...         print(sess.run(dw))      # y = w^3
    12.0
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.control_flow import primitives
from dtf_notebook.ops.control_flow.contexts import CondContext, WhileContext, output_context
from dtf_notebook.ops.control_flow.grad_loops import (
    add_backprop_accumulator,
    add_backprop_indexed_slices_accumulator,
    enter_loop_variable,
    in_context,
)
from dtf_notebook.ops.control_flow.grad_state import is_loop_switch


def _switch_grad(op: Operation, *grads: Any) -> list[Any]:
    context = op._control_flow_context
    if isinstance(context, CondContext):
        # A Switch bringing a value into one branch: the taken output's gradient, zeros on the other (dead
        # unless that branch ran), merged.
        if grads[1 - context.branch] is None or grads[context.branch] is None:
            return [None, None]
        return [primitives.merge(list(grads), name="cond_grad")[0], None]
    if is_loop_switch(op):
        return _loop_switch_grad(op, *grads)
    false_grad = primitives.switch(grads[0], op.inputs[1])[0]
    true_grad = primitives.switch(grads[1], op.inputs[1])[1]
    return [primitives.merge([false_grad, true_grad])[0], None]


def _merge_grad(op: Operation, grad: Any, _index_grad: Any = None) -> list[Any]:
    context = op._control_flow_context
    if _is_loop_merge(op):
        return _loop_merge_grad(op, grad, _index_grad)
    pred = _cond_pred(op, context)
    if len(op.inputs) == 2:
        return list(primitives.switch(grad, pred, name="cond_grad"))
    # A merge of N inputs (built by hand): route the gradient by the index that was taken.
    from dtf_notebook.ops import math_ops

    index = op.outputs[1]
    results = []
    for i in range(len(op.inputs)):
        taken = math_ops.equal(index, i)
        results.append(primitives.switch(grad, taken)[1])
    return results


def _is_loop_merge(op: Operation) -> bool:
    return any(t.op.type in ("NextIteration", "RefNextIteration") for t in op.inputs)


def _cond_pred(op: Operation, context: Any) -> Any:
    """The predicate of the cond a Merge closes: the one its inputs' branches were switched on."""
    for t in op.inputs:
        inner = t.op._control_flow_context
        while inner is not None:
            if isinstance(inner, CondContext) and inner.outer_context is context:
                return inner.pred
            inner = inner.outer_context
    from dtf_notebook.ops import math_ops

    return math_ops.equal(op.outputs[1], 1)  # no cond context known (an imported graph): the index taken


def _grad_loop(op: Operation) -> WhileContext:
    """The gradient loop being built (the context ``tf.gradients`` entered for ``op``)."""
    context = get_default_graph()._get_control_flow_context()
    context = context.get_while_context() if context is not None else None
    if context is None or context.grad_state is None:
        raise LookupError(
            f"The gradient of {op.type} '{op.name}' is built only by tf.gradients, inside the gradient of its loop"
        )
    return context


def _loop_switch_grad(op: Operation, *grads: Any) -> list[Any]:
    grad_loop = _grad_loop(op)
    state = grad_loop.grad_state
    merge = state.switch_map.get(op)
    if merge is not None:
        # Second visit, from the body: the gradient coming round is the Merge's back edge.
        if grads[1] is not None:
            merge.op._update_input(1, primitives.next_iteration(convert_to_tensor(grads[1])))
        return [None, None]
    if grads[0] is not None:
        # First visit, from the Exit: its gradient for both inputs until the body's gradient replaces the second.
        merge = primitives.merge([grads[0], grads[0]], name="b_switch")[0]
        state.switch_map[op] = merge
        return [merge, None]
    return [None, None]  # the exit's value is not differentiable


def _loop_merge_grad(op: Operation, grad: Any, _index_grad: Any = None) -> list[Any]:
    grad_loop = _grad_loop(op)
    return list(primitives.switch(grad, grad_loop.pivot))


def _exit_grad(op: Operation, grad: Any) -> list[Any]:
    grad_loop = _grad_loop(op)
    if not grad_loop.back_prop:
        return [None]  # the loop was built with back_prop=False: no gradient flows through it
    if op._control_flow_context.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    if isinstance(grad, IndexedSlices):
        with in_context(output_context(grad.values.op)):
            grad = convert_to_tensor(grad)  # the gradient loop's variables are dense
    if not isinstance(grad, Tensor):
        raise TypeError(f"Type {type(grad).__name__} not supported as the gradient of loop exit '{op.name}'")
    return [enter_loop_variable(grad, grad_loop, "b_exit")]


def _enter_grad(op: Operation, grad: Any) -> list[Any]:
    context = get_default_graph()._get_control_flow_context()
    grad_loop = context.get_while_context() if context is not None else None
    if grad_loop is None or grad_loop.grad_state is None or not grad_loop.back_prop:
        return [grad]  # gradients taken inside the loop body: the gradient stays in this iteration
    if op.get_attr("is_constant"):
        if isinstance(grad, Tensor):
            return [add_backprop_accumulator(grad_loop, op, grad)]
        if isinstance(grad, IndexedSlices):
            return [add_backprop_indexed_slices_accumulator(grad_loop, op, grad)]
        raise TypeError(f"Type {type(grad).__name__} not supported as the gradient of loop invariant '{op.name}'")
    result = primitives.exit(grad)
    grad_loop.loop_exits.append(result)
    grad_loop.exit_result([result])
    return [result]


def _next_iteration_grad(op: Operation, grad: Any) -> list[Any]:
    return [grad]


def _set(op_type: str, fn: Any) -> None:
    op_registry.register_gradient(op_type)(fn)


_set("Switch", _switch_grad)
_set("RefSwitch", _switch_grad)
_set("Merge", _merge_grad)
_set("RefMerge", _merge_grad)
for _type, _fn in (("Enter", _enter_grad), ("Exit", _exit_grad), ("NextIteration", _next_iteration_grad)):
    _set(_type, _fn)
    _set("Ref" + _type, _fn)
