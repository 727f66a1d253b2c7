"""Symbolic differentiation: ``tf.gradients`` builds gradient ops into the graph.

Each op type's registry entry has a gradient function ``grad(op, *output_grads)``
returning one gradient (a Tensor, ``IndexedSlices`` or None) per input. The
builder walks the ops between ``xs`` and ``ys`` in reverse topological order,
sums gradients reaching a tensor along several paths (``AddN``, or a
concatenation when they are all ``IndexedSlices``), and fills zeros for
outputs of an op that received no gradient when other outputs did.

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
from collections import deque
from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def _differentiable(t: Tensor) -> bool:
    return t.dtype.is_floating


def _reachable(start: Any, neighbours: Any, allowed: Any = None) -> set[Operation]:
    """Ops reachable from ``start`` through ``neighbours(op)``, staying inside ``allowed`` when given."""
    seen: set[Operation] = set()
    queue = deque(op for op in start if allowed is None or op in allowed)
    while queue:
        op = queue.popleft()
        if op not in seen:
            seen.add(op)
            queue.extend(n for n in neighbours(op) if allowed is None or n in allowed)
    return seen


def _between_ops(to_ops: list[Operation], from_ops: list[Operation]) -> set[Operation]:
    """Ops on some path from ``from_ops`` to ``to_ops`` (data edges only)."""
    forward = _reachable(from_ops, lambda op: [c for out in op._outputs for c in out._consumers])
    return _reachable(to_ops, lambda op: [t.op for t in op._inputs], allowed=forward)


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
    from dtf_notebook.ops import array_ops, math_ops

    if all(isinstance(g, IndexedSlices) for g in grads):
        values = array_ops.concat([g.values for g in grads], 0)
        indices = array_ops.concat([math_ops.cast(g.indices, "int64") for g in grads], 0)
        return IndexedSlices(values, indices, grads[0].dense_shape)
    dense = [convert_to_tensor(g) for g in grads]
    return math_ops.add_n(dense, name=name)


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
        gate_gradients, aggregation_method: Accepted for compatibility.
        stop_gradients: Tensors through which no gradient flows.
        unconnected_gradients: ``"none"`` (None for unconnected xs) or ``"zero"``.

    Returns:
        One entry per x: a Tensor, an ``IndexedSlices`` (from gathers), or None when ``ys`` do not depend on it.

    Raises:
        LookupError: an op on the path has no gradient function.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.constant(1.0); b = tf.constant(2.0)
        ...     tf.gradients(a * 2.0, [a, b])[1] is None
        True
    """
    from dtf_notebook.ops import array_ops

    ys = [convert_to_tensor(y) for y in _as_list(ys)]
    xs = [convert_to_tensor(x) for x in _as_list(xs)]
    graph = ys[0].graph if ys else get_default_graph()
    grad_ys_list = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys)
    if len(grad_ys_list) != len(ys):
        raise ValueError(f"Passed {len(grad_ys_list)} grad_ys for {len(ys)} ys")
    stop_ops = {convert_to_tensor(t).op for t in _as_list(stop_gradients)} if stop_gradients is not None else set()

    with graph.as_default(), graph.name_scope(name):
        between = _between_ops([y.op for y in ys], [x.op for x in xs])
        pending: dict[Operation, int] = {}
        for op in between:
            for t in op._inputs:
                if t.op in between:
                    pending[t.op] = pending.get(t.op, 0) + 1
        grads: dict[Tensor, list[Any]] = {}
        for i, (y, gy) in enumerate(zip(ys, grad_ys_list)):
            if gy is None:
                with graph.name_scope(f"grad_ys_{i}" if len(ys) > 1 else "grad_ys_0"):
                    gy = array_ops.ones_like(y)
            else:
                gy = convert_to_tensor(gy, dtype=y.dtype)
            grads.setdefault(y, []).append(gy)

        ready = deque(op for op in {y.op for y in ys} if op in between and pending.get(op, 0) == 0)
        done: set[Operation] = set()
        while ready:
            op = ready.popleft()
            if op in done:
                continue
            done.add(op)
            out_grads = [aggregate_gradients(grads.get(t, [])) for t in op._outputs]
            for t, g in zip(op._outputs, out_grads):
                if g is not None:
                    grads[t] = [g]
            has_grad = any(g is not None for g in out_grads)
            if has_grad and op not in stop_ops and any(t.op in between for t in op._inputs):
                in_grads = _call_grad_fn(op, out_grads, colocate_gradients_with_ops)
                for t, g in zip(op._inputs, in_grads):
                    if g is not None and _differentiable(t):
                        grads.setdefault(t, []).append(g)
            for t in op._inputs:
                src = t.op
                if src in between:
                    pending[src] -= 1
                    if pending[src] == 0:
                        ready.append(src)

        result = []
        for x in xs:
            g = aggregate_gradients(grads.get(x, []))
            if g is None and unconnected_gradients == "zero":
                g = array_ops.zeros_like(x)
            result.append(g)
    return result


def _call_grad_fn(op: Operation, out_grads: list[Any], colocate: bool) -> list[Any]:
    from dtf_notebook.ops import array_ops

    grad_fn = op.op_def.grad
    if grad_fn is op_registry.NOT_DIFFERENTIABLE:
        return [None] * len(op._inputs)
    if grad_fn is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type})")
    graph = op.graph
    colocation = graph.colocate_with(op) if colocate else contextlib.nullcontext()
    with colocation, graph.name_scope(op.name + "_grad"):
        filled = [
            g if g is not None or not _differentiable(t) else array_ops.zeros_like(t)
            for t, g in zip(op._outputs, out_grads)
        ]
        in_grads = grad_fn(op, *filled)
    in_grads = list(in_grads) if isinstance(in_grads, list | tuple) else [in_grads]
    if len(in_grads) != len(op._inputs):
        raise ValueError(
            f"Num gradients {len(in_grads)} generated for op {op.name} ({op.type}) do not match num inputs "
            f"{len(op._inputs)}"
        )
    return in_grads
