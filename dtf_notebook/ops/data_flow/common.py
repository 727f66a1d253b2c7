"""What queue and accumulator ops share: the handle op's kernel and the rules for ops that use a handle.

A handle op (``FIFOQueueV2``, ``ConditionalAccumulator``, ...) outputs a string *reference* of shape
``[2]`` (container, name), like TF1's ref handles: its value at run time is the resource itself, found
in the task's resource containers by container and shared name, so every session and every graph naming
it shares it. Without a ``shared_name`` it is private to the session, as in TF1 (on a task that serves
several sessions, its name is the op's name marked with the session's). Ops that use the handle take it
by reference and are built colocated with it, so they run where the resource lives.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops.data_flow_ops import FIFOQueue
    >>> with tf.Graph().as_default():
    ...     q = FIFOQueue(2, tf.float32, name="q")
    ...     q.size().op.colocation_groups()
    ['loc:@q']
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape

__all__ = [
    "HANDLE_SPEC",
    "handle_kernel",
    "expect_resource",
    "using_handle",
    "handle_attr",
    "register_handle_op",
    "register_handle_user",
]

#: Output spec of every handle op: a string reference. Its static shape is a scalar, as TF's V2 handle ops
#: (``FIFOQueueV2``, ``HashTableV2``, ...) declare theirs, so TF imports the ``_output_shapes`` written here.
HANDLE_SPEC = (dtypes.string, TensorShape([]))


def handle_kernel(
    make: Callable[[Any, str, str, Any, str], Any], verify: Callable[[Any, Any], None]
) -> Callable[[Any, Any], Callable[[], Any]]:
    """A kernel factory for a handle op.

    Args:
        make: ``make(op, container, name, mgr, device)`` creates the resource on first use.
        verify: ``verify(op, resource)`` raises when an existing shared resource does not match the op.

    Example:
        >>> from dtf_notebook.framework import op_registry
        >>> op_registry.get("FIFOQueueV2").kernel is not None
        True
    """

    def factory(op: Any, ctx: Any) -> Callable[[], Any]:
        container = op.get_attr("container")
        name = op.get_attr("shared_name")
        if not name:
            # Private to the session (TF1: per kernel instance); a local session has its containers to itself.
            name = f"{op.name}@{ctx.state.session}" if ctx.state.session else op.name
        mgr, device = ctx.resources, ctx.device_name
        verified: list[Any] = [None]  # the resource last checked, so a step does not re-check it

        def run() -> Any:
            resource = mgr.lookup_or_create(container, name, lambda: make(op, container, name, mgr, device))
            if resource is not verified[0]:
                verify(op, resource)
                verified[0] = resource
            return resource

        return run

    return factory


def register_handle_op(op_type: str, infer: Callable[[Any], list], kernel: Callable[[Any, Any], Any]) -> None:
    """Registers a handle op: stateful, CPU only, not differentiable, its output 0 a reference.

    Args:
        op_type: The op type, e.g. ``"FIFOQueueV2"``.
        infer: Checks the op's attrs and returns ``[HANDLE_SPEC]``.
        kernel: The kernel factory, made by :func:`handle_kernel`.

    Example:
        >>> from dtf_notebook.ops.data_flow_ops import FIFOQueue   # registers the queue ops
        >>> definition = op_registry.get("FIFOQueueV2")
        >>> sorted(definition.ref_outputs), definition.stateful, definition.cpu_only
        ([0], True, True)
    """
    op_registry.register_op(
        op_type,
        infer=infer,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_outputs=(0,),
        stateful=True,
        cpu_only=True,
    )


def register_handle_user(
    op_type: str, infer: Callable[[Any], list], run: Callable[[Any], Callable[..., Any]], needs_step: bool = False
) -> None:
    """Registers an op using a handle: its input 0 is the handle, taken by reference; stateful, CPU only.

    Args:
        op_type: The op type, e.g. ``"QueueSizeV2"``.
        infer: ``infer(op)``: the outputs' ``(dtype, shape)`` list.
        run: ``run(op)`` gives the function run at every step; its arguments are the step context (with
            ``needs_step``), then the resource, then the other inputs' values.
        needs_step: The op may block (it needs the step's deadline and cancellation).

    Example:
        >>> from dtf_notebook.ops.data_flow_ops import FIFOQueue   # registers the queue ops
        >>> definition = op_registry.get("QueueDequeueV2")
        >>> sorted(definition.ref_inputs), definition.needs_step, op_registry.get("QueueSizeV2").needs_step
        ([0], True, False)
    """
    op_registry.register_op(
        op_type,
        infer=infer,
        kernel=lambda op, ctx: run(op),
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=(0,),
        stateful=True,
        cpu_only=True,
        needs_step=needs_step,
    )


def expect_resource(resource: Any, kind: type, op: Any) -> Any:
    """``resource`` when it is a ``kind``; else an InvalidArgumentError naming the node and what it got.

    Example:
        >>> from dtf_notebook.runtime.queues import FIFOQueueResource
        >>> q = FIFOQueueResource("q", [dtypes.float32], [], 1)
        >>> expect_resource(q, FIFOQueueResource, None) is q
        True
    """
    if not isinstance(resource, kind):
        raise errors.InvalidArgumentError(
            None, op, f"{op.type} '{op.name}' needs a {kind.kind} handle, but its input is {resource!r}"
        )
    return resource


@contextlib.contextmanager
def using_handle(handle: Tensor, name: str | None, default: str) -> Iterator[str]:
    """A name scope for an op using ``handle`` (its converted inputs live inside), colocated with the handle.

    Yields the scope name ending in ``/``: pass it as the op's name so the op takes the scope's name.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.data_flow_ops import FIFOQueue
        >>> with tf.Graph().as_default():
        ...     q = FIFOQueue(1, tf.float32, name="q")
        ...     with using_handle(q.queue_ref, None, "q_peek") as scope:
        ...         print(scope)
        q_peek/
    """
    graph: Graph = handle.graph
    with graph.as_default(), graph.colocate_with(handle.op), graph.name_scope(name or default) as scope:
        yield scope


def handle_attr(handle: Tensor, op_types: tuple[str, ...], attr: str) -> Any:
    """Attr ``attr`` of the op that made ``handle`` when it is one of ``op_types`` (for shape inference), else None.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.ops.data_flow_ops import FIFOQueue
        >>> with tf.Graph().as_default():
        ...     q = FIFOQueue(1, tf.float32, shapes=[[3]])
        ...     handle_attr(q.queue_ref, ("FIFOQueueV2",), "shapes")
        [(3,)]
    """
    op = handle.op
    if op.type in op_types and attr in op.attrs:
        return op.get_attr(attr)
    return None
