"""Control-flow contexts: how ops built inside a ``cond`` branch or a ``while_loop`` body are wired in.

While a branch or loop body is being built, the graph's control-flow context is set (the
:class:`~dtf_notebook.framework.graph.Graph` calls :meth:`ControlFlowContext.add_op` for each new op).
As in TF1:

- a :class:`CondContext` brings each value from outside the branch in through a ``Switch`` on the
  predicate (so the op is dead when its branch is not taken), and gives an op with no inputs a control
  edge from the branch's *pivot* (so ``tf.constant`` or an assign of a constant inside a branch runs
  only when the branch is taken);
- a :class:`WhileContext` brings each value from outside the loop in through a constant ``Enter``
  (available to every iteration), gives ops with no inputs (or only loop-invariant inputs) a control edge
  from the loop's pivot so they run once per iteration, and turns control inputs from outside the loop
  into data that enters the loop.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant(2.0)
    ...     y = tf.cond(tf.constant(True), lambda: x * 3.0, lambda: x)
    >>> sorted({op.type for op in y.graph.get_operations()} & {"Switch", "Merge"})
    ['Merge', 'Switch']
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from dtf_notebook.framework.graph import control_dependencies, get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.control_flow import primitives

_EXITS = frozenset({"Exit", "RefExit"})
_ENTERS = frozenset({"Enter", "RefEnter"})


def is_loop_exit(op: Operation) -> bool:
    return op.type in _EXITS


def is_loop_constant_enter(op: Operation) -> bool:
    return op.type in _ENTERS and bool(op.get_attr("is_constant"))


def output_context(op: Operation) -> ControlFlowContext | None:
    """The context an op's outputs live in: its own, or the enclosing one for a loop ``Exit``."""
    context = op._control_flow_context
    if context is not None and is_loop_exit(op):
        context = context.outer_context
    return context


def while_context_of(op: Operation) -> WhileContext | None:
    """The innermost loop an op was built in (None outside loops)."""
    context = op._control_flow_context
    return None if context is None else context.get_while_context()


class ControlFlowContext:
    """The base of cond and while contexts: the values known inside, and the enclosing context.

    Attributes:
        outer_context: The context this one was built in (None at the top level).
    """

    def __init__(self) -> None:
        self.outer_context: ControlFlowContext | None = get_default_graph()._get_control_flow_context()
        self._values: set[str] = set()  # tensors that may be used inside as they are
        self._external_values: dict[str, Tensor] = {}  # outside tensor name -> the tensor standing for it inside

    def enter(self) -> None:
        get_default_graph()._set_control_flow_context(self)

    def exit(self) -> None:
        get_default_graph()._set_control_flow_context(self.outer_context)

    def get_while_context(self) -> WhileContext | None:
        return self.outer_context.get_while_context() if self.outer_context is not None else None

    def get_control_pivot(self) -> Tensor | None:
        return None

    def add_name(self, name: str) -> None:
        self._values.add(name)

    def _mark_seen(self, names: list[str]) -> None:
        context: ControlFlowContext | None = self
        while context is not None:
            context._values.update(names)
            context = context.outer_context

    def exit_result(self, result: list[Tensor]) -> None:
        """Makes the results of this context known to the enclosing one."""
        if self.outer_context is not None:
            for t in result:
                self.outer_context.add_name(t.name)

    def _remove_external_control_edges(self, op: Operation) -> tuple[list[Operation], list[Operation]]:
        """Drops control inputs from outside the enclosing loop (they would cross frames); returns both lists."""
        while_context = self.get_while_context()
        if while_context is None:
            return list(op._control_inputs), []
        internal, external = [], []
        for c in op._control_inputs:
            context = output_context(c)
            if context is not None and context.get_while_context() is while_context:
                internal.append(c)
            else:
                external.append(c)
        if external:
            op._remove_all_control_inputs()
            op._add_control_inputs(internal)
        return internal, external

    def add_value(self, value: Tensor) -> Tensor:  # pragma: no cover - overridden
        raise NotImplementedError

    def add_op(self, op: Operation) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class CondContext(ControlFlowContext):
    """The context of one branch of a ``cond``.

    Args:
        pred: The predicate (a bool scalar tensor).
        pivot: The branch's pivot: an ``Identity`` of the predicate's ``Switch`` output of this branch.
        branch: 0 for the false branch, 1 for the true branch.
    """

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int) -> None:
        super().__init__()
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self._values.add(pred.name)
        self._values.add(pivot.name)
        self._external_values[pred.name] = pred

    def get_control_pivot(self) -> Tensor:
        return self.pivot

    def add_value(self, value: Tensor) -> Tensor:
        """The tensor standing for ``value`` inside the branch: ``value`` itself, or a ``Switch`` of it."""
        if value.name in self._values:
            found = self._external_values.get(value.name)
            return value if found is None else found
        self._values.add(value.name)
        result = value
        if self.outer_context is not None:
            result = self.outer_context.add_value(value)
            self._values.add(result.name)
            self._external_values[result.name] = result
        with control_dependencies(None), built_as_is():
            result = primitives.switch(result, self.pred)[self.branch]
        result.op._control_flow_context = self
        self._mark_seen([result.name])
        self._external_values[value.name] = result
        return result

    def add_op(self, op: Operation) -> None:
        if not op._inputs:
            self._remove_external_control_edges(op)
            if not any(_in_context(c, self) for c in op._control_inputs):
                op._add_control_input(self.pivot.op)
        else:
            with op.graph.name_scope(op.name + "/"):  # TF names the Switch of an input "<op>/Switch"
                for index, x in enumerate(list(op._inputs)):
                    if op.type in ("Merge", "RefMerge") and x.op.type in ("NextIteration", "RefNextIteration"):
                        continue  # a loop's back edge, built inside this branch
                    real = self.add_value(x)
                    if real is not x:
                        op._update_input(index, real)
            self._remove_external_control_edges(op)
        self._mark_seen([t.name for t in op._outputs])

    def build_branch(self, fn: Any) -> tuple[Any, list[Tensor]]:
        """Calls ``fn`` in this context; returns (its result, the flat tensors standing for it inside)."""
        from dtf_notebook.framework import nest
        from dtf_notebook.ops.identity_ops import identity

        original = fn()
        if original is None:
            raise ValueError("A cond branch must return a value (a tensor, an op, or a structure of them).")
        flat = []
        for leaf in nest.flatten(original):
            if hasattr(leaf, "_from_flow"):
                leaf = leaf.flow  # a TensorArray: its flow tensor goes through the merge
            if isinstance(leaf, Operation):
                with control_dependencies([leaf]):
                    flat.append(identity(self.pivot))
            else:
                flat.append(self._process_output(_as_tensor(leaf)))
        return original, flat

    def _process_output(self, value: Tensor) -> Tensor:
        if value.name not in self._values:  # lambda: x, with x from outside
            self._values.add(value.name)
            real = value
            if self.outer_context is not None:
                real = self.outer_context.add_value(value)
                self._values.add(real.name)
                self._external_values[real.name] = real
            with built_as_is():
                real = primitives.switch(real, self.pred)[self.branch]
            real.op._control_flow_context = self
            self._external_values[value.name] = real
            return real
        return self._external_values.get(value.name, value)


class WhileContext(ControlFlowContext):
    """The context of a ``while_loop``'s condition and body: one frame, named after the loop.

    Args:
        parallel_iterations: How many iterations may run at once.
        back_prop: Whether gradients may flow through the loop.
        swap_memory: Accepted as in TF (values stay where they are).
        maximum_iterations: The iteration bound tensor, or None.
        name: The base of the frame name.
    """

    def __init__(
        self,
        parallel_iterations: int = 10,
        back_prop: bool = True,
        swap_memory: bool = False,
        maximum_iterations: Any = None,
        name: str = "while_context",
    ) -> None:
        super().__init__()
        graph = get_default_graph()
        self.name = graph.unique_name(name)
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.maximum_iterations = maximum_iterations
        self.pivot: Tensor | None = None  # the LoopCond
        self.pivot_for_pred: Tensor | None = None
        self.pivot_for_body: Tensor | None = None
        self.loop_enters: list[Tensor] = []
        self.loop_exits: list[Tensor] = []
        self.grad_state: Any = None  # set on a gradient loop: the forward loop's state

    def get_while_context(self) -> WhileContext:
        return self

    def get_control_pivot(self) -> Tensor | None:
        return self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred

    def add_value(self, value: Tensor) -> Tensor:
        """The tensor standing for ``value`` inside the loop: ``value`` itself, or a constant ``Enter`` of it."""
        if value.name in self._values or value.op._control_flow_context is self:
            found = self._external_values.get(value.name)
            return value if found is None else found
        self._values.add(value.name)
        graph = get_default_graph()
        grad_context = graph._get_control_flow_context()
        grad_context = None if grad_context is None else grad_context.get_while_context()
        if grad_context is not None and grad_context.grad_state is not None:
            forward = while_context_of(value.op)
            if is_loop_exit(value.op) and forward is not None:
                forward = forward.outer_context.get_while_context() if forward.outer_context else None
            if forward is grad_context.grad_state.forward_context:
                real = grad_context.grad_state.get_real_value(value)
                self._external_values[value.name] = real
                return real
        result = value
        if self.outer_context is not None:
            result = self.outer_context.add_value(value)
        with control_dependencies(None), built_as_is():
            entered = primitives.enter(
                result, self.name, is_constant=True, parallel_iterations=self.parallel_iterations
            )
        entered.op._control_flow_context = self
        self._values.add(entered.name)
        self._external_values[value.name] = entered
        return entered

    def add_op(self, op: Operation) -> None:
        external: list[Operation] = []
        if not op._inputs:
            internal, external = self._remove_external_control_edges(op)
            if not internal:
                pivot = self.get_control_pivot()
                if pivot is not None:
                    op._add_control_input(pivot.op)
        else:
            with op.graph.name_scope(op.name + "/"):  # TF names the Enter of an input "<op>/Enter"
                for index, x in enumerate(list(op._inputs)):
                    real = self.add_value(x)
                    if real is not x:
                        op._update_input(index, real)
            _, external = self._remove_external_control_edges(op)
            if not op._control_inputs and all(is_loop_constant_enter(x.op) for x in op._inputs):
                pivot = self.get_control_pivot()  # an op of loop invariants still runs once per iteration
                if pivot is not None:
                    op._add_control_input(pivot.op)
        for t in op._outputs:
            self._values.add(t.name)
        if external:
            # A control input from outside the loop becomes a value entering it, read once per iteration.
            from dtf_notebook.ops.identity_ops import identity

            proxies = []
            saved = get_default_graph()._get_control_flow_context()
            get_default_graph()._set_control_flow_context(self.outer_context)
            try:
                with control_dependencies(external):
                    token = _token()
            finally:
                get_default_graph()._set_control_flow_context(saved)
            with control_dependencies(None):
                proxies.append(identity(token).op)
            op._add_control_inputs(proxies)


@contextlib.contextmanager
def built_as_is() -> Iterator[None]:
    """Ops built in the block are wired by hand (a ``Switch`` or ``Enter`` bringing a value in): no context
    rewrites their inputs; the caller sets their context.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g, built_as_is():
        ...     g._get_control_flow_context() is None
        True
    """
    graph = get_default_graph()
    saved = graph._get_control_flow_context()
    graph._set_control_flow_context(None)
    try:
        yield
    finally:
        graph._set_control_flow_context(saved)


def _token() -> Tensor:
    from dtf_notebook.ops.constant_op import constant

    return constant(0, name="control_token")


def _in_context(op: Operation, context: ControlFlowContext) -> bool:
    current = op._control_flow_context
    while current is not None:
        if current is context:
            return True
        current = current.outer_context
    return False


def _as_tensor(value: Any) -> Tensor:
    from dtf_notebook.framework.convert import convert_to_tensor

    return value if isinstance(value, Tensor) else convert_to_tensor(value)
