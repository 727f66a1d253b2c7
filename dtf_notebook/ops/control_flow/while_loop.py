"""``tf.while_loop``, built from ``Enter``, ``Merge``, ``LoopCond``, ``Switch``, ``NextIteration`` and ``Exit``.

The loop's ops form one *frame*: each loop variable enters it (``Enter``), meets its value from the
previous iteration (``Merge``), is switched on the condition (``LoopCond`` + ``Switch``) either into the
body or out of the loop (``Exit``), and the body's result goes round again (``NextIteration``), exactly
as in TF1, so the executor can run iterations of the body as soon as their inputs are ready.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     i, total = tf.while_loop(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), [0, 0])
    ...     with tf.Session() as sess:
    ...         print(sess.run([i, total]))
    [np.int32(5), np.int32(10)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, control_dependencies, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape
from dtf_notebook.ops.control_flow import primitives
from dtf_notebook.ops.control_flow.contexts import WhileContext, built_as_is, is_loop_constant_enter

__all__ = ["while_loop"]


def _to_flow(value: Any) -> Any:
    return value.flow if hasattr(value, "_from_flow") else value


def _restore(templates: list[Any], tensors: list[Tensor]) -> list[Any]:
    return [t._from_flow(x) if hasattr(t, "_from_flow") else x for t, x in zip(templates, tensors)]


def _check_invariant(name: str, entering: TensorShape, invariant: TensorShape) -> None:
    if not invariant.is_compatible_with(entering):
        raise ValueError(
            f"The shape invariant specified for {name} is not compatible with the initial shape of the loop "
            f"variable. It enters the loop with shape {entering}, but the specified shape invariant is {invariant}."
        )


def _enforce_invariant(merge_var: Tensor, next_var: Tensor, entering_name: str) -> None:
    expected = merge_var.shape
    got = next_var.shape
    if expected.ndims is None:
        return
    if got.ndims is None or not _more_specific_or_equal(got, expected):
        raise ValueError(
            f"Input tensor '{entering_name}' enters the loop with shape {expected}, but has shape {got} after one "
            "iteration. To allow the shape to vary across iterations, use the `shape_invariants` argument of "
            "tf.while_loop to specify a less-specific shape."
        )


def _more_specific_or_equal(shape: TensorShape, than: TensorShape) -> bool:
    if shape.ndims != than.ndims:
        return False
    return all(b is None or a == b for a, b in zip(shape.as_list(), than.as_list()))


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
    maximum_iterations: Any = None,
    return_same_structure: bool = False,
) -> Any:
    """Repeats ``body`` while ``cond`` is true; returns the loop variables' final values.

    Args:
        cond: ``cond(*loop_vars)`` → bool scalar tensor.
        body: ``body(*loop_vars)`` → loop variables of the same structure, dtypes and (unless
            ``shape_invariants`` says otherwise) shapes.
        loop_vars: A tensor, or a (nested) list/tuple/dict of tensors and TensorArrays.
        shape_invariants: Per loop variable, a less specific shape its value may take across iterations.
        parallel_iterations: How many iterations may run at once.
        back_prop, swap_memory: As in TF (``swap_memory`` is accepted; values stay on their device).
        name: Name scope of the loop's ops (default ``while``).
        maximum_iterations: Stop after this many iterations even if ``cond`` is still true.
        return_same_structure: Return a one-element ``loop_vars`` as a structure too.

    Raises:
        TypeError: ``cond`` or ``body`` is not callable, or ``parallel_iterations`` is not positive.
        ValueError: no loop variables, a shape changes without a shape invariant, or ``body`` returns a
            different structure.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.while_loop(lambda x: tf.reduce_sum(x) < 100.0, lambda x: x * 2.0, [tf.ones([3])],
        ...                       maximum_iterations=4)
        ...     with tf.Session() as sess:
        ...         print(sess.run(x))
        [16. 16. 16.]
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("'parallel_iterations' must be a positive integer.")
    if loop_vars is None or (nest.is_nested(loop_vars) and not nest.flatten(loop_vars)):
        raise ValueError("'loop_vars' must be provided.")
    with name_scope(name, "while", nest.flatten(loop_vars)):
        single = not isinstance(loop_vars, list | tuple | dict)
        if single:
            loop_vars = [loop_vars]  # a lone tensor: TF1 wants a list; take it as one
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if maximum_iterations.shape.ndims not in (None, 0):
                raise ValueError(f"'maximum_iterations' must be a scalar. Received shape: {maximum_iterations.shape}")
            from dtf_notebook.ops import math_ops
            from dtf_notebook.ops.constant_op import constant

            counter = constant(0, dtype=maximum_iterations.dtype, name="iteration_counter")
            user_cond, user_body, limit = cond, body, maximum_iterations
            if isinstance(loop_vars, list | tuple) and len(loop_vars) == 1 and not return_same_structure:
                loop_vars = (counter, loop_vars[0])
                cond = lambda i, lv: math_ops.logical_and(i < limit, user_cond(lv))  # noqa: E731
                body = lambda i, lv: (i + 1, user_body(lv))  # noqa: E731
            else:
                loop_vars = (counter, loop_vars)
                cond = lambda i, lv: math_ops.logical_and(i < limit, user_cond(*lv))  # noqa: E731
                body = lambda i, lv: (i + 1, user_body(*lv))  # noqa: E731
            if shape_invariants is not None:
                shape_invariants = (TensorShape([]), shape_invariants)
        context = WhileContext(parallel_iterations, back_prop, swap_memory, maximum_iterations)
        if context.outer_context is None:
            add_to_collection(GraphKeys.WHILE_CONTEXT, context)
        result = _build_loop(context, cond, body, loop_vars, shape_invariants, return_same_structure)
        return result[1] if maximum_iterations is not None else result


def _build_loop(
    context: WhileContext, cond: Any, body: Any, loop_vars: Any, shape_invariants: Any, same_structure: bool
) -> Any:
    """TF1's ``WhileContext._BuildLoop``: the frame's ops, the body, the back edges and the exits."""
    templates = nest.flatten(loop_vars)
    flat = [convert_to_tensor(_to_flow(v)) for v in templates]
    if shape_invariants is not None:
        invariants = [as_shape(s) for s in nest.flatten(shape_invariants)]
        if len(invariants) != len(flat):
            raise ValueError(
                f"shape_invariants has {len(invariants)} shapes for {len(flat)} loop variables; give one per variable"
            )
    else:
        invariants = None
    context.enter()
    try:
        for t in flat:
            context.add_name(t.name)
        real = [context.outer_context.add_value(t) if context.outer_context is not None else t for t in flat]
        with control_dependencies(None), built_as_is():
            enters = [
                primitives.enter(
                    x,
                    context.name,
                    is_constant=False,
                    parallel_iterations=context.parallel_iterations,
                    use_input_shape=invariants is None,
                )
                for x in real
            ]
        if invariants is not None:
            for x, e, inv in zip(real, enters, invariants):
                _check_invariant(x.name, x.shape, inv)
                e.set_shape(inv)
        pivot = _enclosing_pivot(context)
        if pivot is not None:
            for e in enters:
                if e.op._inputs and is_loop_constant_enter(e.op._inputs[0].op):
                    e.op._add_control_input(pivot.op)
        # As TF's _InitializeValues(enter_vars): the initial values are no longer known inside, so the body
        # reading one of them brings it in through a constant Enter instead of across frames.
        context._values.clear()
        for e in enters:
            e.op._control_flow_context = context
            context.add_name(e.name)
        context.loop_enters = enters
        merges = [primitives.merge([e, e])[0] for e in enters]
        context.pivot_for_pred = merges[0]
        packed = nest.pack_sequence_as(loop_vars, _restore(templates, merges))
        predicate = cond(*packed) if isinstance(loop_vars, list | tuple) else cond(**packed)
        predicate = convert_to_tensor(predicate)
        if predicate.dtype != dtypes.bool:
            raise TypeError(f"The loop condition must return a bool tensor, got {predicate.dtype.name}")
        context.pivot = primitives.loop_cond(predicate, name="LoopCond")
        switches = [primitives.switch(m, context.pivot) for m in merges]
        from dtf_notebook.ops.identity_ops import identity

        body_vars = [identity(s[1]) for s in switches]
        context.pivot_for_body = body_vars[0]
        packed_body = nest.pack_sequence_as(loop_vars, _restore(templates, body_vars))
        result = body(*packed_body) if isinstance(loop_vars, list | tuple) else body(**packed_body)
        if not nest.is_nested(result) or (
            isinstance(loop_vars, list | tuple)
            and len(loop_vars) == 1
            and not (isinstance(result, list | tuple) and len(result) == 1)
        ):
            result = [result]  # one loop variable: the body returns its new value
        try:
            expected = list(packed_body) if isinstance(packed_body, list | tuple) else packed_body
            nest.assert_same_structure(
                expected, list(result) if isinstance(result, tuple) else result, check_types=False
            )
        except ValueError as e:
            raise ValueError(f"The body of the while loop must return the loop variables' structure: {e}") from None
        result_flat = [convert_to_tensor(_to_flow(v)) for v in nest.flatten(result)]
        if len(result_flat) != len(merges):
            raise ValueError(
                f"Number of inputs and outputs of 'body' are different {len(merges)} and {len(result_flat)}."
            )
        for m, v, original in zip(merges, result_flat, flat):
            if v.dtype != m.dtype:
                raise TypeError(
                    f"Loop variable {original.name} enters the loop as {m.dtype.name} but the body returns "
                    f"{v.dtype.name}"
                )
            _enforce_invariant(m, v, original.name)
            next_value = primitives.next_iteration(v)
            m.op._update_input(1, next_value)
        exits = [primitives.exit(s[0]) for s in switches]
        context.loop_exits = exits
        context.exit_result(exits)
    finally:
        context.exit()
    packed_exits = nest.pack_sequence_as(result, _restore(nest.flatten(result), exits))
    return packed_exits[0] if len(exits) == 1 and not same_structure and not isinstance(result, dict) else packed_exits


def _enclosing_pivot(context: WhileContext) -> Tensor | None:
    outer = context.outer_context
    while outer is not None:
        pivot = outer.get_control_pivot()
        if pivot is not None:
            return pivot
        outer = outer.outer_context
    return None
