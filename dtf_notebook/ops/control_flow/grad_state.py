"""What ``tf.gradients`` keeps while it differentiates through while loops (TF1's ``ControlFlowState``).

For each forward loop on the path, a :class:`GradLoopState` pairs it with a *gradient loop*:

- a counter added to the forward loop counts its iterations; the gradient loop runs that many times,
  backwards (nested loops: one count per run of the inner loop, saved on the outer loop's stack);
- a forward value a gradient op needs is pushed onto a stack in each forward iteration
  (``StackPushV2``) and popped in the matching gradient iteration (``StackPopV2``); loop invariants
  and constants need no stack. Pushes inside a ``cond`` happen only when the branch is taken, and
  their pops are guarded by the same predicate, itself saved per iteration;
- the gradients of the loop primitives (see :mod:`.grads`) build the gradient loop itself: an ``Exit``
  becomes an ``Enter``, a loop ``Switch`` a ``Merge`` with a back edge, and so on.

:func:`maybe_create_control_flow_state` is registered with the gradient builder
(:func:`dtf_notebook.framework.gradients.register_control_flow_state`), which calls it when the ops
between ``ys`` and ``xs`` hold a loop exit.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [])
    ...     y = tf.while_loop(lambda v: v < 100.0, lambda v: v * v, [x])
    ...     (dx,) = tf.gradients(y, [x])
    ...     with tf.Session() as sess:
    ...         print(sess.run([y, dx], {x: 2.0}))      # y = x^8 after 3 iterations: dy/dx = 8 x^7
    [np.float32(256.0), np.float32(1024.0)]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import gradients as gradients_module
from dtf_notebook.framework.graph import control_dependencies, get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.control_flow import primitives, stack_ops
from dtf_notebook.ops.control_flow.contexts import (
    CondContext,
    WhileContext,
    is_loop_constant_enter,
    is_loop_exit,
    output_context,
    while_context_of,
)
from dtf_notebook.ops.control_flow.grad_loops import (
    add_backprop_loop_counter,
    add_forward_loop_counter,
    cond_chain,
    in_context,
    sync_through_conds,
    with_value,
)

__all__ = ["GradLoopState", "ControlFlowState", "maybe_create_control_flow_state", "is_loop_switch"]

_SWITCHES = frozenset({"Switch", "RefSwitch"})
_PASS_THROUGH = frozenset({"Switch", "RefSwitch", "Identity", "RefIdentity"})


def is_loop_switch(op: Operation) -> bool:
    """Whether ``op`` is a loop's ``Switch`` (on its ``LoopCond``), not a ``cond``'s.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, [tf.constant(0.0)])
        >>> [is_loop_switch(op) for op in g.get_operations() if op.type == "Switch"]
        [True]
    """
    return op.type in _SWITCHES and op.inputs[1].op.type == "LoopCond"


def _loop_constant_enter(value: Tensor) -> Operation | None:
    """The constant ``Enter`` ``value`` passes through unchanged (a loop invariant), if any."""
    op = value.op
    while op.type in _PASS_THROUGH:
        op = op.inputs[0].op
    return op if is_loop_constant_enter(op) else None


class GradLoopState:
    """One forward loop, its gradient loop, and the forward values saved for the gradient.

    Args:
        forward: The forward loop's context.
        outer_grad_state: The state of the enclosing loop, for a nested loop (else None).
        call_context: The context ``tf.gradients`` was called in (where the stacks are made).

    Attributes:
        forward_index: The forward counter's ``NextIteration``: it waits for each iteration's pushes.
        grad_context: The gradient loop's context (its ``grad_state`` is this object).
        grad_index: The gradient counter's ``NextIteration``: it waits for each iteration's pops.
        history_map: Forward tensor name -> the tensor standing for its value in the gradient loop.
        switch_map: Forward loop ``Switch`` -> the gradient loop's ``Merge`` of its gradient.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     x = tf.constant(2.0)
        ...     _ = tf.gradients(tf.while_loop(lambda v: v < 10.0, lambda v: v * v, [x]), [x])
        >>> pop = next(op for op in g.get_operations() if op.type == "StackPopV2")
        >>> state = pop._control_flow_context.grad_state           # the gradient loop's state
        >>> state.forward_context.name, state.grad_context.name, sorted(state.history_map)
        ('while/while_context', 'gradients/while/while_context', ['while/Identity:0'])
    """

    def __init__(self, forward: WhileContext, outer_grad_state: GradLoopState | None, call_context: Any) -> None:
        self.outer_grad_state = outer_grad_state
        self.forward_context = forward
        self.call_context = call_context
        self.history_map: dict[str, Tensor] = {}
        self.switch_map: dict[Operation, Tensor] = {}
        self.unused_exits: list[Tensor] = []
        self.deferred_exits: list[Tensor] = []
        self.forward_loop_exits = list(forward.loop_exits)  # before the counter adds its exit
        self.pending_exits_count = len(self.forward_loop_exits)
        outer_forward = outer_grad_state.forward_context if outer_grad_state else forward.outer_context
        with in_context(outer_forward):
            count, self.forward_index = add_forward_loop_counter(forward, outer_grad_state)
        if outer_grad_state is not None:
            # A nested loop: the count of each run of it goes onto the outer loop's stack.
            outer_forward.add_name(count.name)
            with in_context(call_context):
                history_count = outer_grad_state.add_forward_accumulator(count)
            with in_context(outer_grad_state.grad_context):
                self.grad_context = self._new_grad_context(forward)
                count = outer_grad_state.add_backprop_accumulated_value(history_count, count)
                self.grad_index = add_backprop_loop_counter(self.grad_context, count, outer_grad_state)
        else:
            with in_context(outer_forward):
                self.grad_context = self._new_grad_context(forward)
                self.grad_index = add_backprop_loop_counter(self.grad_context, count, None)

    def _new_grad_context(self, forward: WhileContext) -> WhileContext:
        context = WhileContext(
            parallel_iterations=forward.parallel_iterations,
            back_prop=forward.back_prop,
            swap_memory=forward.swap_memory,
            maximum_iterations=forward.maximum_iterations,
            name=forward.name,
        )
        context.grad_state = self
        return context

    # ---- saving forward values ----------------------------------------------------------------
    def add_forward_accumulator(self, value: Tensor, dead_branch: bool = False) -> Tensor:
        """A stack holding ``value`` of every forward iteration; returns its handle.

        Called in the context ``tf.gradients`` was called in. ``dead_branch``: ``value`` is live when its cond's
        branch is *not* taken (the shape of a ``Switch`` output of the other branch).
        """
        with control_dependencies(None), with_value(value):
            with in_context(self.call_context):
                acc = stack_ops.stack_v2(-1, value.dtype.base_dtype, name="f_acc")
                enter_acc = self.forward_context.add_value(acc)
            value_context = output_context(value.op)
            if value_context is self.forward_context:
                with in_context(self.forward_context):
                    push = stack_ops.stack_push_v2(enter_acc, value, swap_memory=self.forward_context.swap_memory)
                guards: list[tuple[CondContext, int]] = []
            else:
                if not isinstance(value_context, CondContext):
                    raise TypeError(
                        f"Cannot save '{value.name}' for the gradient of loop '{self.forward_context.name}': it is "
                        "neither in the loop nor in a cond inside it"
                    )
                if dead_branch:
                    with in_context(value_context.outer_context):
                        push = stack_ops.stack_push_v2(enter_acc, value)
                    push.op._control_flow_context = value_context
                else:
                    with in_context(value_context):
                        push = stack_ops.stack_push_v2(enter_acc, value)
                chain = cond_chain(value_context, self.forward_context)
                guards = [(c, (1 - c.branch) if dead_branch and i == 0 else c.branch) for i, c in enumerate(chain)]
        # Each iteration's push comes after the counter's step of that iteration and before the next one.
        push.op._add_control_input(self.forward_index.op.inputs[0].op)
        last = sync_through_conds(push.op, guards, lambda c: c.pred, lambda c: c.outer_context)
        self.forward_index.op._add_control_input(last)
        return acc

    def add_backprop_accumulated_value(self, history: Tensor, value: Tensor, dead_branch: bool = False) -> Tensor:
        """The value of ``value`` in the current gradient iteration: a pop of ``history`` in the gradient loop,
        guarded by the predicate of the cond ``value`` lives in (if any)."""
        history_context = history.op._control_flow_context
        cond: CondContext | None = None
        context = value.op._control_flow_context
        while context is not None and context is not history_context:
            if isinstance(context, CondContext):
                cond = context
                break
            context = context.outer_context
        guards: list[tuple[CondContext, int]] = []
        with control_dependencies(None), with_value(value), in_context(self.grad_context):
            if cond is not None:
                pred = self.real_pred(cond)
                branch = (1 - cond.branch) if dead_branch else cond.branch
                history = primitives.switch(history, pred)[branch]
                chain = cond_chain(cond, self.forward_context)
                guards = [(c, branch if i == 0 else c.branch) for i, c in enumerate(chain)]
            pop = stack_ops.stack_pop_v2(history, value.dtype.base_dtype)
            pop.set_shape(value.shape)
        if self.grad_context.parallel_iterations > 1:
            self.order_pop(pop.op, guards)
        return pop

    def order_pop(self, op: Operation, guards: list[tuple[CondContext, int]]) -> None:
        """Makes the next gradient iteration wait for ``op`` (a pop, or the end of an inner gradient loop)."""
        last = sync_through_conds(op, guards, self.real_pred, lambda c: self.grad_context)
        self.grad_index.op._add_control_input(last)

    def real_pred(self, cond: CondContext) -> Tensor:
        """The predicate of ``cond`` (a forward cond) as saved for the gradient loop, or ``cond.pred`` itself
        (which the gradient loop then brings in through its history)."""
        state: GradLoopState | None = self
        while state is not None:
            pred = state.history_map.get(cond.pred.name)
            if pred is not None:
                return pred
            state = state.outer_grad_state
        return cond.pred

    def get_real_value(self, value: Tensor) -> Tensor:
        """What stands for the forward tensor ``value`` in the gradient loop (called in the gradient loop).

        A loop invariant enters the gradient loop as is, a constant is rebuilt there, anything else is saved
        on a stack in the forward loop (the innermost loop that computes it) and popped here.
        """
        real = self.history_map.get(value.name)
        if real is not None:
            return real
        current, state = value, self
        history = None
        while True:
            enter = _loop_constant_enter(current)
            if enter is not None:
                current = enter.inputs[0]
                state = state.outer_grad_state
                if state is None:
                    real = self.grad_context.add_value(current)  # invariant of every loop being differentiated
                    break
            elif current.op.type == "Const":
                from dtf_notebook.ops.constant_op import constant

                real = constant(current.op.get_attr("value"), dtype=current.dtype)
                break
            else:
                with in_context(self.call_context):
                    history = state.add_forward_accumulator(current)
                break
        if real is None:
            real = state.add_backprop_accumulated_value(history, current)
            if state is not self:
                real = self.grad_context.add_value(real)
        self.history_map[value.name] = real
        return real


class ControlFlowState:
    """The :class:`GradLoopState` of every forward loop one ``tf.gradients`` call differentiates through.

    Example:
        >>> ControlFlowState(None).get_grad_state(None, before=False) is None
        True
    """

    def __init__(self, call_context: Any) -> None:
        self.call_context = call_context
        self._map: dict[WhileContext, GradLoopState] = {}

    def get_grad_state(self, op: Operation | None, before: bool) -> GradLoopState | None:
        """The state of the loop ``op`` is in (``before``: for an ``Exit``, the loop its output is in)."""
        if op is None:
            return None
        if before and is_loop_exit(op):
            outer = op._control_flow_context.outer_context
            forward = outer.get_while_context() if outer is not None else None
        else:
            forward = while_context_of(op)
        return self._map.get(forward) if forward is not None else None

    def grad_context(self, op: Operation, before: bool) -> Any:
        """A block building in the gradient loop of ``op``'s loop (no change outside loops)."""
        state = self.get_grad_state(op, before)
        return in_context(state.grad_context if state is not None else get_default_graph()._get_control_flow_context())

    def add_while_context(self, op: Operation, between_list: list[Operation], between: set[Operation]) -> None:
        """Creates the state of the loop of the ``Exit`` ``op`` (and of the loops around it on the path);
        every exit of the loop joins the ops to differentiate."""
        forward = while_context_of(op)
        if forward is None or forward in self._map:
            return
        outer = forward.outer_context
        outer_forward = outer.get_while_context() if outer is not None else None
        outer_state = self._map.get(outer_forward) if outer_forward is not None else None
        if outer_state is None and outer_forward is not None:
            exits = [e.op for e in outer_forward.loop_exits if e.op in between]
            if exits:  # the enclosing loop is differentiated too: its state comes first
                self.add_while_context(exits[0], between_list, between)
                outer_state = self._map.get(outer_forward)
        state = GradLoopState(forward, outer_state, self.call_context)
        self._map[forward] = state
        for loop_exit in state.forward_loop_exits:
            if loop_exit.op not in between:
                between.add(loop_exit.op)
                between_list.append(loop_exit.op)

    def process_unused_loop_exits(self, pending: dict[Operation, int], to_ops: set[Operation]) -> list[Tensor]:
        """Exits no gradient will reach: when every exit of a loop is accounted for, the unused ones get zeros
        (returned) so that the loop's gradient sees all its variables."""
        loop_exits = []
        for state in self._map.values():
            for y in state.forward_loop_exits:
                if pending[y.op] == 0:
                    state.pending_exits_count -= 1
                    if y.op not in to_ops:
                        state.unused_exits.append(y)
                    if state.pending_exits_count == 0:
                        loop_exits.extend(state.unused_exits)
            for y in state.forward_context.loop_enters:
                if pending[y.op] == 0:
                    pending[y.op] = 1  # so that a variable's Enter gets its gradient (an Exit of the gradient loop)
        return loop_exits

    def zeros_like_for_exit(self, value: Tensor) -> Tensor:
        """Zeros as the gradient of the unused loop exit ``value`` (called where ``tf.gradients`` was called)."""
        from dtf_notebook.ops import array_ops

        forward = value.op._control_flow_context
        outer = forward.outer_context
        outer_forward = outer.get_while_context() if outer is not None else None
        outer_state = self._map.get(outer_forward) if outer_forward is not None else None
        shape = value.shape
        if outer_state is None:
            if shape.is_fully_defined():
                return array_ops.zeros(shape.as_list(), value.dtype)
            return array_ops.zeros_like(value)
        if shape.is_fully_defined():
            with in_context(outer_state.grad_context):
                return array_ops.zeros(shape.as_list(), value.dtype)
        with in_context(forward.outer_context):
            dynamic = array_ops.shape(value)
        history = outer_state.add_forward_accumulator(dynamic)
        with in_context(outer_state.grad_context):
            real_shape = outer_state.add_backprop_accumulated_value(history, dynamic)
            return array_ops.zeros(real_shape, value.dtype)

    def zeros_like(self, op: Operation, index: int) -> Tensor | None:
        """Zeros for output ``index`` of ``op`` that no gradient reached (called in the gradient loop of ``op``).

        None for a loop ``Switch`` (its gradient loop ``Merge`` handles a missing gradient). For the untaken side
        of a cond's ``Switch`` in a loop, zeros that are live only when that side was not taken.
        """
        from dtf_notebook.ops import array_ops
        from dtf_notebook.ops.constant_op import constant

        if is_loop_switch(op):
            return None
        value = op.outputs[index]
        state = self._map.get(while_context_of(op))
        if state is None:
            return array_ops.zeros_like(value)
        dead_branch = op.type in _SWITCHES
        op_context = op._control_flow_context
        if value.shape.is_fully_defined():
            result = constant(0, dtype=value.dtype, shape=value.shape.as_list())
            if dead_branch:
                result = primitives.switch(result, state.real_pred(op_context))[1 - op_context.branch]
            return result
        if dead_branch:
            with in_context(op_context.outer_context):
                value = primitives.switch(op.inputs[0], op_context.pred)[1 - op_context.branch]
                dynamic = array_ops.shape(value)
            value.op._control_flow_context = op_context
            dynamic.op._control_flow_context = op_context
        else:
            with in_context(op_context):
                dynamic = array_ops.shape(value)
        with in_context(self.call_context):
            history = state.add_forward_accumulator(dynamic, dead_branch=dead_branch)
        real_shape = state.add_backprop_accumulated_value(history, dynamic, dead_branch)
        return array_ops.zeros(real_shape, value.dtype)

    def post_processing(self) -> None:
        """A loop variable whose next value does not depend on its current one: its gradient loop ``Merge`` got
        no back edge, so zeros go round instead."""
        from dtf_notebook.ops import array_ops
        from dtf_notebook.ops.constant_op import constant

        for state in self._map.values():
            for merge in state.switch_map.values():
                if merge.op.inputs[0] is not merge.op.inputs[1]:
                    continue
                dtype, shape = merge.op.inputs[0].dtype, merge.op.inputs[0].shape
                if shape.is_fully_defined():
                    with in_context(state.grad_context):
                        zeros = constant(0, dtype=dtype, shape=shape.as_list())
                        next_zeros = primitives.next_iteration(zeros)
                else:
                    with in_context(state.grad_context.outer_context):
                        entering = merge.op.inputs[0].op.inputs[0]
                        zeros = array_ops.zeros(array_ops.shape(entering), dtype)
                    with in_context(state.grad_context):
                        next_zeros = primitives.next_iteration(zeros)
                merge.op._update_input(1, next_zeros)


def maybe_create_control_flow_state(
    between_list: list[Operation], between: set[Operation], colocate: bool
) -> ControlFlowState | None:
    """The loop state of one ``tf.gradients`` call, when loop exits are among the ops it differentiates.

    Adds the exits of those loops to ``between_list`` and ``between``.

    Example:
        >>> maybe_create_control_flow_state([], set(), False) is None
        True
    """
    state = None
    for op in between_list:  # grows with the exits of each loop found, as in TF
        if is_loop_exit(op):
            if state is None:
                state = ControlFlowState(get_default_graph()._get_control_flow_context())
            if colocate:
                with op.graph.colocate_with(op):
                    state.add_while_context(op, between_list, between)
            else:
                state.add_while_context(op, between_list, between)
    return state


gradients_module.register_control_flow_state(maybe_create_control_flow_state)
