"""Gradients of the control-flow primitives (TF1's ``control_flow_grad``).

Through a ``cond``: the gradient of a ``Merge`` is a ``Switch`` of the incoming gradient on the
predicate (it flows back into the branch that was taken; the other branch's gradient ops see a dead
value and are skipped), and the gradient of a ``Switch`` is a ``Merge`` of the gradients of its two
outputs (the live one wins).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [])
    ...     y = tf.cond(x > 0.0, lambda: x * x, lambda: 3.0 * x)
    ...     (dx,) = tf.gradients(y, [x])
    ...     with tf.Session() as sess:
    ...         print(sess.run(dx, {x: 2.0}), sess.run(dx, {x: -1.0}))
    4.0 3.0
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.operation import Operation
from dtf_notebook.ops.control_flow import primitives
from dtf_notebook.ops.control_flow.contexts import CondContext


def _switch_grad(op: Operation, *grads: Any) -> list[Any]:
    context = op._control_flow_context
    if isinstance(context, CondContext):
        # A Switch bringing a value into one branch: the taken output's gradient, zeros on the other (dead
        # unless that branch ran), merged.
        if grads[1 - context.branch] is None or grads[context.branch] is None:
            return [None, None]
        return [primitives.merge(list(grads), name="cond_grad")[0], None]
    while_grad = _WHILE_GRADS.get("Switch")
    if while_grad is not None and context is not None and context.get_while_context() is not None:
        return while_grad(op, *grads)
    false_grad = primitives.switch(grads[0], op.inputs[1])[0]
    true_grad = primitives.switch(grads[1], op.inputs[1])[1]
    return [primitives.merge([false_grad, true_grad])[0], None]


def _merge_grad(op: Operation, grad: Any, _index_grad: Any = None) -> list[Any]:
    context = op._control_flow_context
    while_grad = _WHILE_GRADS.get("Merge")
    if while_grad is not None and _is_loop_merge(op):
        return while_grad(op, grad, _index_grad)
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


def _not_differentiable_in_cond(name: str) -> Any:
    def grad(op: Operation, grad: Any) -> list[Any]:
        handler = _WHILE_GRADS.get(name)
        if handler is None:
            raise LookupError(
                f"Gradients through {op.type} ({op.name}) need the while-loop gradient machinery, which is not "
                "registered"
            )
        return handler(op, grad)

    return grad


#: Gradients for the loop primitives, filled in by the while-loop gradient module: op type → fn.
_WHILE_GRADS: dict[str, Any] = {}


def register_while_grad(op_type: str, fn: Any) -> None:
    """Installs the gradient of a loop primitive (``Enter``, ``Exit``, ``NextIteration``, or the loop
    cases of ``Switch`` and ``Merge``).

    Example:
        >>> register_while_grad("NextIteration", lambda op, grad: [grad])  # doctest: +SKIP
    """
    _WHILE_GRADS[op_type] = fn


def _set(op_type: str, fn: Any) -> None:
    op_registry.register_gradient(op_type)(fn)


_set("Switch", _switch_grad)
_set("RefSwitch", _switch_grad)
_set("Merge", _merge_grad)
_set("RefMerge", _merge_grad)
for _type in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"):
    _set(_type, _not_differentiable_in_cond(_type.removeprefix("Ref")))
