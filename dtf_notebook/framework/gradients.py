"""Symbolic differentiation: ``tf.gradients`` builds gradient ops into the graph.

Each op type's registry entry has a gradient function ``grad(op, *output_grads)``
returning one gradient (a Tensor, ``IndexedSlices`` or None) per input. The
builder walks the ops between ``xs`` and ``ys`` in reverse topological order,
sums gradients reaching a tensor along several paths (``AddN``, or a
concatenation when they are all ``IndexedSlices``), and fills zeros for
outputs of an op that received no gradient when other outputs did. As in TF1,
only floating-point tensors carry gradients, and default ``grad_ys`` read only
the shapes of ``ys``.

Through while loops (TF1's control flow v1), the builder is loop-aware when the
control-flow ops registered their state (:func:`register_control_flow_state`):
the gradient of each loop is built in a gradient loop context entered around
each op's gradient, a loop ``Switch`` is visited twice (from its ``Exit``, then
from the body, closing the gradient loop's back edge), and the exits of a loop
are held back until all of them are known, the unused ones getting zeros.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant(3.0)
    ...     y = x * x + 2.0 * x
    ...     (dx,) = tf.gradients(y, [x])
    ...     with tf.Session() as sess:
    ...         print(sess.run(dx))
    8.0
"""

from __future__ import annotations

import contextlib
from collections import defaultdict, deque
from typing import Any

from dtf_notebook.framework import gradient_registry, op_registry
from dtf_notebook.framework.aggregation_method import AggregationMethod
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.op_registry import builders
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor

#: Builds the while-loop state of one ``gradients`` call (registered by ``ops.control_flow.grad_state``):
#: ``factory(between_list, between_set, colocate) -> state or None``.
_control_flow_state_factory: Any = None


def register_control_flow_state(factory: Any) -> None:
    """Installs what makes ``gradients`` loop-aware (the control-flow ops register it when imported).

    Example:
        >>> import dtf_notebook as tf                      # registers it
        >>> _control_flow_state_factory is not None
        True
    """
    global _control_flow_state_factory
    _control_flow_state_factory = factory


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def _differentiable(t: Tensor) -> bool:
    return t.dtype.is_floating or t.dtype.is_complex


def _reached_ops(from_ops: list[Operation]) -> set[Operation]:
    """Ops reachable from ``from_ops`` through tensors a gradient can flow through (floating point)."""
    seen: set[Operation] = set()
    queue = deque(from_ops)
    while queue:
        op = queue.popleft()
        if op not in seen:
            seen.add(op)
            queue.extend(c for out in op._outputs if _differentiable(out) for c in out._consumers)
    return seen


def _between_ops(to_ops: list[Operation], reached: set[Operation]) -> list[Operation]:
    """The reached ops some ``to_ops`` depend on (data edges), nearest to ``to_ops`` first."""
    between: list[Operation] = []
    seen: set[Operation] = set()
    queue = deque(to_ops)
    while queue:
        op = queue.popleft()
        if op in reached and op not in seen:
            seen.add(op)
            between.append(op)
            queue.extend(t.op for t in op._inputs)
    return between


def _is_loop_switch(op: Operation) -> bool:
    return op._type in ("Switch", "RefSwitch") and op._inputs[1].op._type == "LoopCond"


def _is_loop_exit(op: Operation) -> bool:
    return op._type in ("Exit", "RefExit")


def _no_grad_through_initial_value(op: Operation, from_ops: list[Operation]) -> ValueError:
    """The error for a gradient taken inside a loop body through a loop variable's initial value."""
    target = None
    queue, seen = deque([op]), set()
    while queue:
        current = queue.popleft()
        if current in seen:
            continue
        seen.add(current)
        if current in from_ops:
            target = current
            break
        queue.extend(t.op for t in current._inputs)
    name = target.name if target is not None else op.name
    return ValueError(
        f"Cannot compute gradient inside while loop with respect to op '{name}'. We do not support taking the "
        "gradient wrt or through the initial value of a loop variable. Gradients can be computed through loop "
        "invariants or wrt the input parameters to the loop body."
    )


def aggregate_gradients(grads: list[Any], name: str | None = None) -> Any:
    """Sums the gradients reaching one tensor (None when there are none).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     aggregate_gradients([tf.constant(1.0), tf.constant(2.0)]).op.type
        'AddN'
    """
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    if all(isinstance(g, IndexedSlices) for g in grads):
        values = builders.concat([g.values for g in grads], 0)
        indices = builders.concat([builders.cast(g.indices, "int64") for g in grads], 0)
        return IndexedSlices(values, indices, grads[0].dense_shape)
    dense = [convert_to_tensor(g) for g in grads]
    return builders.add_n(dense, name=name)


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
    stop_gradients: Any = None,
    unconnected_gradients: str = "none",
) -> list[Any]:
    """Symbolic derivatives of ``sum(ys)`` with respect to each of ``xs``.

    Args:
        ys: A tensor or list of tensors to differentiate.
        xs: A tensor/variable or list of them.
        grad_ys: Initial gradients for ``ys`` (default: ones).
        name: Name scope of the gradient ops.
        colocate_gradients_with_ops: Place each gradient op with the op it differentiates.
        gate_gradients: Accepted for compatibility.
        aggregation_method: One of :class:`AggregationMethod`'s values (every method sums the same way here).
        stop_gradients: Tensors through which no gradient flows.
        unconnected_gradients: ``"none"`` (None for unconnected xs) or ``"zero"``.

    Returns:
        One entry per x: a Tensor, an ``IndexedSlices`` (from gathers), or None when ``ys`` do not depend on it.

    Raises:
        LookupError: an op on the path has no gradient function.
        ValueError: an unknown ``aggregation_method``; inside a loop body, the path goes back through a loop
            variable's initial value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.constant(1.0); b = tf.constant(2.0)
        ...     tf.gradients(a * 2.0, [a, b])[1] is None
        True
    """
    if aggregation_method not in (None, *AggregationMethod.ALL):
        raise ValueError(f"Invalid aggregation_method specified {aggregation_method}.")
    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [convert_to_tensor(x) for x in _as_list(xs)]
    graph = ys[0].graph if ys else get_default_graph()
    grad_ys_list = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    if len(grad_ys_list) != len(ys):
        raise ValueError(f"Passed {len(grad_ys_list)} grad_ys for {len(ys)} ys")
    stop_ops = {convert_to_tensor(t).op for t in _as_list(stop_gradients)} if stop_gradients is not None else set()

    with graph.as_default(), graph.name_scope(name):
        to_ops = [y.op for y in ys]
        from_ops = [x.op for x in xs]
        reached = _reached_ops(from_ops)
        between_list = _between_ops(to_ops, reached)
        between = set(between_list)
        loop_state = None
        if _control_flow_state_factory is not None and any(_is_loop_exit(op) for op in between_list):
            # Adds the exits of each loop on the path, and the forward counters the gradient loops need.
            loop_state = _control_flow_state_factory(between_list, between, colocate_gradients_with_ops)
        pending: dict[Operation, int] = defaultdict(int)
        for op in between_list:
            for t in op._inputs:
                if t.op in between:
                    pending[t.op] += 1
        grads: dict[Tensor, list[Any]] = {}
        for i, (y, gy) in enumerate(zip(ys, grad_ys_list)):
            if gy is None:
                # Ones of y's shape, as TF's: they read only y's shape, so no gradient path runs through them.
                colocation = graph.colocate_with(y.op) if colocate_gradients_with_ops else contextlib.nullcontext()
                with colocation:
                    gy = builders.ones(builders.shape(y), dtype=y.dtype, name=f"grad_ys_{i}")
                if gy.shape.is_compatible_with(y.shape):
                    gy.set_shape(y.shape)
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype)
            grads.setdefault(y, []).append(gy)

        queue: deque[Operation] = deque()
        to_ops_set: set[Operation] = set()
        for op in to_ops:
            if pending[op] == 0 and op not in to_ops_set and op in reached:
                to_ops_set.add(op)
                queue.append(op)
        if loop_state is not None:
            for y in loop_state.process_unused_loop_exits(pending, to_ops_set):
                if _differentiable(y):
                    grads.setdefault(y, []).append(loop_state.zeros_like_for_exit(y))
                queue.append(y.op)
        # An x whose own inputs are not on the path: its gradient function is not needed.
        stop_ops = {op for op in from_ops if not any(pending[t.op] > 0 for t in op._inputs)} | stop_ops
        while queue:
            op = queue.popleft()
            entering = loop_state.grad_context(op, before=True) if loop_state else contextlib.nullcontext()
            with entering:
                out_grads = [aggregate_gradients(grads.get(t, [])) for t in op._outputs]
            for t, g in zip(op._outputs, out_grads):
                if g is not None:
                    grads[t] = [g]
            has_grad = any(g is not None for g in out_grads)
            inside = loop_state.grad_context(op, before=False) if loop_state else contextlib.nullcontext()
            with inside:
                if op._type in ("Switch", "RefSwitch") and _switch_in_current_loop(op, graph):
                    raise _no_grad_through_initial_value(op, from_ops)
                if has_grad and op not in stop_ops:
                    in_grads = _call_grad_fn(op, out_grads, colocate_gradients_with_ops, loop_state)
                    for t, g in zip(op._inputs, in_grads):
                        if g is not None and _differentiable(t):
                            if isinstance(g, Tensor) and not t.is_ref:
                                _set_static_shape(g, t, op)
                            grads.setdefault(t, []).append(g)
            _update_pending(op, queue, pending, grads, loop_state)
        if loop_state is not None:
            loop_state.post_processing()

        result = []
        for x in xs:
            g = aggregate_gradients(grads.get(x, []))
            if g is None and unconnected_gradients == "zero":
                g = builders.zeros_like(x)
            result.append(g)
    return result


def _switch_in_current_loop(op: Operation, graph: Any) -> bool:
    """A Switch of the loop ``gradients`` is being built in (a gradient through a loop variable's initial value)."""
    context = op._control_flow_context
    return (
        context is not None and context.get_while_context() is context and context is graph._get_control_flow_context()
    )


def _update_pending(
    op: Operation,
    queue: deque[Operation],
    pending: dict[Operation, int],
    grads: dict[Tensor, list[Any]],
    loop_state: Any,
) -> None:
    """Counts ``op`` done for each of its inputs' ops; queues those that are ready.

    A loop's ``Switch`` is ready at each visit (first from its ``Exit``, then from the body), since the body's
    gradient needs the gradient loop the first visit builds. A loop's ``Exit`` waits until every exit of its
    loop is ready: if one has a gradient, the others get zeros.
    """
    for t in op._inputs:
        src = t.op
        pending[src] -= 1
        ready = pending[src] == 0
        if loop_state is not None and not ready:
            ready = pending[src] > 0 and _is_loop_switch(src)
        if not ready:
            continue
        if loop_state is None or not _is_loop_exit(src):
            queue.append(src)
            continue
        state = loop_state.get_grad_state(src, before=False)
        state.deferred_exits.append(t)
        state.pending_exits_count -= 1
        if state.pending_exits_count != 0:
            continue
        with_grad = False
        for y in state.deferred_exits:
            if any(g is not None for g in grads.get(y, [])):
                with_grad = True
                queue.append(y.op)
            else:
                state.unused_exits.append(y)
        for y in state.unused_exits:
            if with_grad and _differentiable(y):
                grads.setdefault(y, []).append(loop_state.zeros_like_for_exit(y))
            queue.append(y.op)


def _call_grad_fn(op: Operation, out_grads: list[Any], colocate: bool, loop_state: Any = None) -> list[Any]:

    grad_fn = gradient_registry.gradient_function(op)
    if grad_fn is op_registry.NOT_DIFFERENTIABLE:
        return [None] * len(op._inputs)
    if grad_fn is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
    graph = op.graph
    colocation = graph.colocate_with(op) if colocate else contextlib.nullcontext()
    with colocation, graph.name_scope(op.name + "_grad"):
        filled = [
            g if g is not None or not _differentiable(t) else _zeros_for(op, i, loop_state)
            for i, (t, g) in enumerate(zip(op._outputs, out_grads))
        ]
        in_grads = grad_fn(op, *filled)
    in_grads = list(in_grads) if isinstance(in_grads, list | tuple) else [in_grads]
    if len(in_grads) != len(op._inputs):
        raise ValueError(
            f"Num gradients {len(in_grads)} generated for op {op.name} ({op.type}) do not match num inputs "
            f"{len(op._inputs)}"
        )
    return in_grads


def _zeros_for(op: Operation, index: int, loop_state: Any) -> Any:
    """The gradient of output ``index`` of ``op`` that received none: zeros (in a loop, as its gradient loop needs)."""
    if loop_state is None:
        return builders.zeros_like(op._outputs[index])
    return loop_state.zeros_like(op, index)


def _set_static_shape(grad: Tensor, t: Tensor, op: Operation) -> None:
    """A gradient has its input's static shape (TF: ``in_grad.set_shape(t_in.get_shape())``)."""
    try:
        grad.set_shape(t.shape)
    except ValueError:
        raise ValueError(
            f"Incompatible shapes between op input and calculated input gradient. Forward operation: {op.name}. "
            f"Input index: {op._inputs.index(t)}. Original input shape: {t.shape}. Calculated input gradient shape: "
            f"{grad.shape}"
        ) from None
