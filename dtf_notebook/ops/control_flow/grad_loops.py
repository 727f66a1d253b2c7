"""The loops a while loop's gradient adds to the graph (TF1's ``WhileContext.Add*`` helpers).

- :func:`add_forward_loop_counter`: a counter added to the *forward* loop, ``n = 0; while (pivot) n++``;
  its exit is how many iterations ran, and its ``NextIteration`` orders the stack pushes.
- :func:`add_backprop_loop_counter`: the gradient loop's own control, ``n = count; while (n >= 1) n--``:
  it runs exactly as many iterations as the forward loop did.
- :func:`add_backprop_accumulator` (and its ``IndexedSlices`` twin): the gradient of a loop invariant
  (a value entering every iteration) is the sum of its gradients over all iterations.
- :func:`sync_through_conds`: TF1 orders pushes and pops inside a ``cond`` through a ``ControlTrigger``,
  an op that runs even when its inputs are dead. Here the same order comes from a ``Merge`` of the
  guarded op (through an ``Identity`` of the predicate) and the other branch of the predicate: one of
  the two is always live, and it is the op's side only once the op ran.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.constant(3.0)
    ...     y = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * w), [0, tf.constant(2.0)])[1]
    ...     (dw,) = tf.gradients(y, [w])
    ...     with tf.Session() as sess:
    ...         print(sess.run(dw))      # d(2 w^3)/dw = 6 w^2
    54.0
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook.framework.graph import control_dependencies, get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.control_flow import primitives
from dtf_notebook.ops.control_flow.contexts import CondContext, ControlFlowContext, WhileContext, built_as_is

__all__ = [
    "in_context",
    "with_value",
    "enter_loop_variable",
    "add_forward_loop_counter",
    "add_backprop_loop_counter",
    "add_backprop_accumulator",
    "add_backprop_indexed_slices_accumulator",
    "cond_chain",
    "sync_through_conds",
]


@contextlib.contextmanager
def in_context(context: ControlFlowContext | None) -> Iterator[None]:
    """Ops built in the block belong to ``context``; the context in force before comes back after it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g, in_context(None):
        ...     g._get_control_flow_context() is None
        True
    """
    graph = get_default_graph()
    saved = graph._get_control_flow_context()
    graph._set_control_flow_context(context)
    try:
        yield
    finally:
        graph._set_control_flow_context(saved)


@contextlib.contextmanager
def with_value(value: Tensor) -> Iterator[None]:
    """Where the stack of ``value`` and its pushes and pops are built: with ``value``'s op, whatever
    colocation or device blocks ``tf.gradients`` runs in (a value on a GPU never leaves it to be saved).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant(1.0, name="x")
        ...     with tf.device("/gpu:0"), with_value(x):
        ...         tf.constant(2.0).op.colocation_groups()
        ['loc:@x']
    """
    with value.graph.colocate_with(value.op, ignore_existing=True):
        yield


def enter_loop_variable(value: Tensor, context: WhileContext, name: str, use_input_shape: bool = True) -> Tensor:
    """``value`` entering ``context`` as a new loop variable (built by hand, as the loop builder does).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     loop = WhileContext(name="loop")
        ...     enter_loop_variable(tf.constant(0), loop, "count").op.get_attr("is_constant")
        False
    """
    context.add_name(value.name)
    with control_dependencies(None), built_as_is():
        entered = primitives.enter(
            value,
            context.name,
            is_constant=False,
            parallel_iterations=context.parallel_iterations,
            use_input_shape=use_input_shape,
            name=name,
        )
    entered.op._control_flow_context = context
    context.add_name(entered.name)
    context.loop_enters.append(entered)
    return entered


def add_forward_loop_counter(forward: WhileContext, outer_grad_state: Any) -> tuple[Tensor, Tensor]:
    """Adds an iteration counter to the built loop ``forward``; returns (its exit, its ``NextIteration``).

    Called in the context enclosing ``forward``. In a nested loop, the counter of one run of the inner
    loop starts after the previous run's pushes (a control edge from the outer loop's counter).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.while_loop(lambda v: v < 5.0, lambda v: v + 1.0, [tf.constant(0.0)])
        ...     count, _ = add_forward_loop_counter(x.op._control_flow_context, None)
        ...     with tf.Session() as sess:
        ...         print(sess.run(count))
        5
    """
    from dtf_notebook.ops import math_ops
    from dtf_notebook.ops.constant_op import constant

    n = constant(0, name="f_count")
    if outer_grad_state is not None:
        n.op._add_control_input(outer_grad_state.forward_index.op.inputs[0].op)
    with in_context(forward):
        enter_n = enter_loop_variable(n, forward, "f_count")
        merge_n = primitives.merge([enter_n, enter_n])[0]
        switch_n = primitives.switch(merge_n, forward.pivot)
        index = math_ops.add(switch_n[1], 1)
        next_n = primitives.next_iteration(index)
        merge_n.op._update_input(1, next_n)
        total = primitives.exit(switch_n[0], name="f_count")
        forward.loop_exits.append(total)
        forward.exit_result([total])
    return total, next_n


def add_backprop_loop_counter(grad: WhileContext, count: Tensor, outer_grad_state: Any) -> Tensor:
    """Builds the control of the gradient loop ``grad``: ``count`` iterations; returns its ``NextIteration``.

    Called in the context enclosing ``grad``; sets ``grad``'s pivots.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     grad = WhileContext(name="backward")
        ...     index = add_backprop_loop_counter(grad, tf.constant(3), None)
        >>> grad.pivot.op.type, index.op.type
        ('LoopCond', 'NextIteration')
    """
    from dtf_notebook.ops import math_ops
    from dtf_notebook.ops.constant_op import constant

    one = constant(1, name="b_count")
    with in_context(grad):
        enter_count = enter_loop_variable(count, grad, "b_count")
        merge_count = primitives.merge([enter_count, enter_count])[0]
        grad.pivot_for_pred = merge_count
        grad.pivot = primitives.loop_cond(math_ops.greater_equal(merge_count, one), name="b_count")
        switch_count = primitives.switch(merge_count, grad.pivot)
        index = math_ops.subtract(switch_count[1], one)
        grad.pivot_for_body = index
        next_count = primitives.next_iteration(index)
        merge_count.op._update_input(1, next_count)
        final_zero = primitives.exit(switch_count[0], name="b_count")
        grad.loop_exits.append(final_zero)
        grad.exit_result([final_zero])
    if outer_grad_state is not None:
        # The pops of one run of the inner gradient loop come before those of the next run (the inner loop
        # runs only in iterations whose conds lead to it).
        inner = grad.grad_state.forward_context
        guards = [(c, c.branch) for c in cond_chain(inner.outer_context, outer_grad_state.forward_context)]
        outer_grad_state.order_pop(final_zero.op, guards)
    return next_count


def add_backprop_accumulator(grad: WhileContext, op: Operation | None, value: Tensor) -> Tensor:
    """The sum over the gradient loop's iterations of ``value``, the gradient of the loop invariant ``op``.

    Called in ``grad``; ``op`` is the constant ``Enter`` of the invariant. The sum starts at zeros of the
    invariant's shape (known statically, or read at run time) so that a loop of no iterations gives zeros.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     grad = WhileContext(name="backward")
        ...     _ = add_backprop_loop_counter(grad, tf.constant(3), None)
        ...     with in_context(grad):
        ...         total = add_backprop_accumulator(grad, None, tf.constant(2.0))   # 2.0 in each of 3 iterations
        ...     with tf.Session() as sess:
        ...         print(sess.run(total))
        6.0
    """
    from dtf_notebook.ops import math_ops
    from dtf_notebook.ops.constant_op import constant

    outer = grad.outer_context
    if value.shape.is_fully_defined():
        with in_context(outer):
            acc = constant(0, dtype=value.dtype, shape=value.shape.as_list(), name="b_acc")
    else:
        acc = _zeros_like_invariant(grad, op.inputs[0], value.dtype)
    with in_context(grad):
        enter_acc = enter_loop_variable(acc, grad, "b_acc")
        merge_acc = primitives.merge([enter_acc, enter_acc], name="b_acc")[0]
        switch_false, switch_true = primitives.switch(merge_acc, grad.pivot)
        next_acc = primitives.next_iteration(math_ops.add(switch_true, value))
        merge_acc.op._update_input(1, next_acc)
        result = primitives.exit(switch_false, name="b_acc")
        grad.loop_exits.append(result)
        grad.exit_result([result])
    return result


def _zeros_like_invariant(grad: WhileContext, invariant: Tensor, dtype: Any) -> Tensor:
    """Zeros shaped like ``invariant`` (the value entering the forward loop), in the context enclosing ``grad``."""
    from dtf_notebook.ops import array_ops

    outer = grad.outer_context
    state = grad.grad_state
    if isinstance(outer, WhileContext) and outer.grad_state is not None:
        # A nested loop: the invariant lives in the outer forward loop; its shape comes back through a stack.
        with in_context(state.forward_context.outer_context):
            shape = array_ops.shape(invariant)
        outer_state = state.outer_grad_state
        with in_context(state.call_context):
            history = outer_state.add_forward_accumulator(shape)
        with in_context(outer):
            real_shape = outer_state.add_backprop_accumulated_value(history, shape)
            return array_ops.zeros(real_shape, dtype)
    with in_context(outer):
        return array_ops.zeros(array_ops.shape(invariant), dtype)


def add_backprop_indexed_slices_accumulator(
    grad: WhileContext, op: Operation | None, value: IndexedSlices
) -> IndexedSlices:
    """:func:`add_backprop_accumulator` for an ``IndexedSlices`` gradient: the slices of every iteration,
    concatenated (starting from one row of zeros at index 0, as TF1 does).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     grad = WhileContext(name="backward")
        ...     _ = add_backprop_loop_counter(grad, tf.constant(2), None)
        ...     with in_context(grad):
        ...         rows = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
        ...         total = add_backprop_indexed_slices_accumulator(grad, None, rows)
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.convert_to_tensor(total)).tolist())
        [[0.0, 0.0], [2.0, 4.0], [0.0, 0.0]]
    """
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.constant_op import constant

    values, indices, dense_shape = value.values, value.indices, value.dense_shape
    with in_context(grad.outer_context):
        if values.shape.is_fully_defined():
            rows = TensorShape([1] + values.shape.as_list()[1:])
            values_acc = constant(0, dtype=values.dtype, shape=rows.as_list(), name="b_acc")
        else:
            row_shape = array_ops.concat([[1], array_ops.shape(op.inputs[0])[1:]], 0)
            values_acc = array_ops.zeros(row_shape, dtype=values.dtype)
        indices_acc = constant([0], dtype=indices.dtype)
        shape_acc = None
        if dense_shape is not None:
            if dense_shape.shape.is_fully_defined():
                shape_acc = constant(0, dtype=dense_shape.dtype, shape=dense_shape.shape.as_list())
            else:
                shape_acc = array_ops.zeros_like(array_ops.shape(op.inputs[0], out_type=dense_shape.dtype))
    initial = [indices_acc, values_acc] + ([shape_acc] if shape_acc is not None else [])
    with in_context(grad):
        # The sums grow each iteration: their Enters take no shape from the initial values.
        enters = [enter_loop_variable(x, grad, "b_acc", use_input_shape=False) for x in initial]
        enters[0].set_shape([None])
        if values_acc.shape.ndims is not None:
            enters[1].set_shape([None] + values_acc.shape.as_list()[1:])
        merges = [primitives.merge([x, x], name="b_acc")[0] for x in enters]
        switches = [primitives.switch(x, grad.pivot) for x in merges]
        grown = [array_ops.concat([s[1], x], 0) for s, x in zip(switches[:2], [indices, values])]
        if shape_acc is not None:
            grown.append(math_ops.maximum(dense_shape, switches[2][1]))
        for m, x in zip(merges, grown):
            m.op._update_input(1, primitives.next_iteration(x))
        exits = [primitives.exit(s[0], name="b_acc") for s in switches]
        grad.loop_exits.extend(exits)
        grad.exit_result(exits)
    return IndexedSlices(exits[1], exits[0], exits[2] if shape_acc is not None else None)


def cond_chain(context: ControlFlowContext | None, stop: ControlFlowContext | None) -> list[CondContext]:
    """The cond contexts from ``context`` outwards up to ``stop`` (excluded); [] when ``stop`` is not above it.

    Example:
        >>> cond_chain(None, None)
        []
    """
    chain: list[CondContext] = []
    while context is not None and context is not stop:
        if not isinstance(context, CondContext):
            return []  # another loop in between: not a cond inside ``stop``
        chain.append(context)
        context = context.outer_context
    return chain if context is stop else []


def sync_through_conds(
    op: Operation,
    guards: list[tuple[CondContext, int]],
    predicate: Callable[[CondContext], Tensor],
    context_of: Callable[[CondContext], ControlFlowContext | None],
) -> Operation:
    """An op that runs after ``op`` when ``op`` runs, and runs anyway when ``op`` is dead.

    ``op`` is live exactly when each guard's predicate takes its branch (``guards`` innermost first).
    For each guard, in ``context_of(guard)``: ``Merge(Identity(p) after op, Switch(p, p)[other branch])``
    with ``p = predicate(guard)``; the result is live whenever the guard's own context is.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sync_through_conds(tf.no_op(), [], None, None).type
        'NoOp'
    """
    from dtf_notebook.ops.identity_ops import identity

    current = op
    for cond, branch in guards:
        with in_context(context_of(cond)), control_dependencies(None):
            pred = predicate(cond)
            with control_dependencies([current]):
                after = identity(pred, name="sync")
            other = primitives.switch(pred, pred, name="sync")[1 - branch]
            current = primitives.merge([after, other], name="sync")[0].op
    return current
