"""Queue ops and ``tf.FIFOQueue``: ``FIFOQueueV2`` and the ``Queue*V2`` ops that use its handle.

The queue itself is a :class:`~dtf_notebook.runtime.queues.FIFOQueueResource` in the resource
containers of the task the ``FIFOQueueV2`` op runs on; the ops that use it are colocated with it.
Enqueues and dequeues block (never longer than the step's deadline) and fail as in TF1: enqueueing
into a closed queue is ``CancelledError``, dequeueing from a closed queue that has too few elements is
``OutOfRangeError``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     q = FIFOQueue(3, [tf.int32, tf.string], shapes=[[], []])
    ...     enqueue = q.enqueue_many([[1, 2], ["a", "b"]])
    ...     number, text = q.dequeue()
    ...     with tf.Session() as sess:
    ...         sess.run(enqueue)
    ...         print(*sess.run([number, text]), sess.run(q.size()))  # ops of one run have no order: two runs
    1 b'a' 1
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.data_flow.common import (
    HANDLE_SPEC,
    expect_resource,
    handle_attr,
    handle_kernel,
    register_handle_op,
    register_handle_user,
    using_handle,
)
from dtf_notebook.ops.op_helpers import constant_value, make_op
from dtf_notebook.runtime.queues import FIFOQueueResource, PaddingFIFOQueueResource

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue"]

#: Queue handle op types, and the resource class each one makes (``register_queue_kind`` adds more).
_QUEUE_OPS: list[str] = ["FIFOQueueV2", "PaddingFIFOQueueV2"]
_RESOURCES: dict[str, type] = {"FIFOQueueV2": FIFOQueueResource, "PaddingFIFOQueueV2": PaddingFIFOQueueResource}
#: For queue kinds whose elements are not exactly their ``component_types``/``shapes`` attrs (a priority queue
#: prepends its int64 priority): op type -> ``element_spec(op) -> (types, shapes)``.
_ELEMENT_SPECS: dict[str, Callable[[Operation], tuple[list, list]]] = {}


# ---- the handle op ---------------------------------------------------------------------------------
def _queue_infer(op: Operation) -> list:
    types = op.get_attr("component_types")
    shapes = op.get_attr("shapes")
    if not isinstance(types, list | tuple) or not types or not all(isinstance(t, dtypes.DType) for t in types):
        raise ValueError(f"Queue '{op.name}' needs a non-empty list of component types, got {types!r}")
    if not isinstance(shapes, list | tuple) or (shapes and len(shapes) != len(types)):
        raise ValueError(f"Queue '{op.name}' has {len(types)} component types but shapes {shapes!r}")
    for shape in shapes:
        if op.type != "PaddingFIFOQueueV2" and not TensorShape(shape).is_fully_defined():
            raise ValueError(f"All shapes of queue '{op.name}' must be fully defined: {shapes!r}")
        if TensorShape(shape).ndims is None:
            raise ValueError(f"Every shape of padding queue '{op.name}' needs a known rank: {shapes!r}")
    if op.type == "PaddingFIFOQueueV2" and len(shapes) != len(types):
        raise ValueError(f"Padding queue '{op.name}' needs a shape for each of its {len(types)} components")
    if not isinstance(op.get_attr("capacity"), int):
        raise ValueError(f"Capacity of queue '{op.name}' must be an integer, got {op.get_attr('capacity')!r}")
    return [HANDLE_SPEC]


def _make_queue(op: Operation, container: str, name: str, mgr: Any, device: str) -> FIFOQueueResource:
    types, shapes, capacity = op.get_attr("component_types"), op.get_attr("shapes"), op.get_attr("capacity")
    return _RESOURCES[op.type](name, types, shapes, capacity, container, mgr, device)


def _verify_queue(op: Operation, resource: Any) -> None:
    expect_resource(resource, _RESOURCES[op.type], op).verify(
        op.get_attr("component_types"), op.get_attr("shapes"), op.get_attr("capacity")
    )


def register_queue_kind(
    op_type: str,
    resource: type,
    make: Callable[..., Any] = _make_queue,
    verify: Callable[[Operation, Any], None] = _verify_queue,
    element_spec: Callable[[Operation], tuple[list, list]] | None = None,
) -> None:
    """Registers a queue handle op whose handle the ``Queue*V2`` ops take (they then accept its queues).

    Args:
        op_type: The handle op, e.g. ``"RandomShuffleQueueV2"``.
        resource: The :class:`FIFOQueueResource` subclass it makes.
        make: ``make(op, container, name, mgr, device)`` creates the resource.
        verify: ``verify(op, resource)`` checks that a shared queue matches the op naming it.
        element_spec: ``element_spec(op) -> (types, shapes)`` of the queue's elements, when they are not its
            ``component_types`` and ``shapes`` attrs.

    Example:
        >>> from dtf_notebook.ops.data_flow import queue_kinds  # registers RandomShuffleQueueV2, PriorityQueueV2
        >>> "RandomShuffleQueueV2" in _QUEUE_OPS
        True
    """
    _QUEUE_OPS.append(op_type)
    _RESOURCES[op_type] = resource
    if element_spec is not None:
        _ELEMENT_SPECS[op_type] = element_spec
    register_handle_op(op_type, _queue_infer, handle_kernel(make, verify))


for _queue_op in ("FIFOQueueV2", "PaddingFIFOQueueV2"):
    register_handle_op(_queue_op, _queue_infer, handle_kernel(_make_queue, _verify_queue))


def _element_attr(handle: Tensor, attr: str) -> Any:
    """The element types (``component_types``) or shapes (``shapes``) of the queue behind ``handle``, if known."""
    spec = _ELEMENT_SPECS.get(handle.op.type)
    if spec is not None:
        types, shapes = spec(handle.op)
        return types if attr == "component_types" else shapes
    return handle_attr(handle, tuple(_QUEUE_OPS), attr)


# ---- ops using the handle --------------------------------------------------------------------------
def _component_specs(op: Operation, batch: Any = "none") -> list:
    """One (dtype, shape) per component; shapes from the queue op when known, with a batch dim if asked."""
    types = op.get_attr("component_types")
    shapes = _element_attr(op.inputs[0], "shapes") or []
    out = []
    for i, dtype in enumerate(types):
        shape = TensorShape(shapes[i]) if len(shapes) == len(types) else unknown_shape()
        if batch != "none":
            shape = TensorShape([batch]).concatenate(shape)
        out.append((dtype, shape))
    return out


def _enqueue_infer(op: Operation) -> list:
    """No outputs; the components' dtypes must be the queue's (checked again when a graph def is imported)."""
    types = _element_attr(op.inputs[0], "component_types")
    given = [t.dtype for t in op.inputs[1:]]
    if types is not None and list(types) != given:
        have, got = [t.name for t in types], [t.name for t in given]
        raise ValueError(f"Queue '{op.inputs[0].op.name}' holds {have}, but {op.name} gives {got}")
    return []


def _dequeue_infer(op: Operation, batch: Any = "none") -> list:
    types = _element_attr(op.inputs[0], "component_types")
    if types is not None and list(types) != list(op.get_attr("component_types")):
        raise ValueError(f"{op.name} asks for other component types than queue '{op.inputs[0].op.name}' holds")
    return _component_specs(op, batch)


def _batch_size(op: Operation) -> int | None:
    value = constant_value(op.inputs[1])
    return None if value is None else int(value)


def _enqueue_run(op: Operation):
    def run(step: Any, queue: Any, *components: Any) -> None:
        expect_resource(queue, FIFOQueueResource, op).enqueue(components, step)

    return run


def _enqueue_many_run(op: Operation):
    def run(step: Any, queue: Any, *components: Any) -> None:
        expect_resource(queue, FIFOQueueResource, op).enqueue_many(components, step)

    return run


def _dequeue_run(op: Operation):
    def run(step: Any, queue: Any) -> Any:
        element = expect_resource(queue, FIFOQueueResource, op).dequeue(step)
        return element[0] if len(element) == 1 else element

    return run


def _dequeue_many_run(allow_smaller: bool):
    def make(op: Operation):
        def run(step: Any, queue: Any, n: Any) -> Any:
            batch = expect_resource(queue, FIFOQueueResource, op).dequeue_many(int(n), step, allow_smaller)
            return batch[0] if len(batch) == 1 else batch

        return run

    return make


def _close_run(op: Operation):
    cancel = bool(op.get_attr("cancel_pending_enqueues"))
    return lambda queue: expect_resource(queue, FIFOQueueResource, op).close(cancel)


def _size_run(op: Operation):
    return lambda queue: torch.tensor(expect_resource(queue, FIFOQueueResource, op).size(), dtype=torch.int32)


def _is_closed_run(op: Operation):
    return lambda queue: torch.tensor(expect_resource(queue, FIFOQueueResource, op).is_closed)


register_handle_user("QueueEnqueueV2", _enqueue_infer, _enqueue_run, needs_step=True)
register_handle_user("QueueEnqueueManyV2", _enqueue_infer, _enqueue_many_run, needs_step=True)
register_handle_user("QueueDequeueV2", _dequeue_infer, _dequeue_run, needs_step=True)
register_handle_user(
    "QueueDequeueManyV2", lambda op: _dequeue_infer(op, _batch_size(op)), _dequeue_many_run(False), needs_step=True
)
register_handle_user(
    "QueueDequeueUpToV2", lambda op: _dequeue_infer(op, None), _dequeue_many_run(True), needs_step=True
)
register_handle_user("QueueCloseV2", lambda op: [], _close_run, needs_step=False)
register_handle_user("QueueSizeV2", lambda op: [(dtypes.int32, scalar())], _size_run, needs_step=False)
register_handle_user("QueueIsClosedV2", lambda op: [(dtypes.bool, scalar())], _is_closed_run, needs_step=False)


# ---- Python API ------------------------------------------------------------------------------------
def _as_type_list(types: Any) -> list[dtypes.DType]:
    if isinstance(types, list | tuple):
        return [dtypes.as_dtype(t) for t in types]
    return [dtypes.as_dtype(types)]


def _as_shape_list(shapes: Any, unknown_dims: bool = False) -> list[TensorShape] | None:
    """TF's ``_as_shape_list``: None, one shape, or a list of shapes; every shape fully defined unless
    ``unknown_dims`` (then every shape needs a known rank)."""
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, list | tuple):
        raise TypeError(f"Shapes must be a TensorShape or a list or tuple of TensorShapes, got {type(shapes)} instead.")
    if all(s is None or isinstance(s, int) for s in shapes):
        shapes = [shapes]  # a single shape given as a list of dims
    shapes = [TensorShape(s) for s in shapes]
    if unknown_dims:
        if any(s.ndims is None for s in shapes):
            raise ValueError(f"All shapes must have a defined rank: {shapes}")
    elif any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    return shapes


class QueueBase:
    """Base class of queues (TF1's ``tf.QueueBase``): enqueue and dequeue tuples of tensors.

    Args:
        dtypes: DType of each component.
        shapes: TensorShape of each component, or None (unknown).
        names: Name of each component (then elements are dicts), or None.
        queue_ref: The queue's handle tensor.

    Raises:
        ValueError: ``shapes`` or ``names`` has another length than ``dtypes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     q = FIFOQueue(1, tf.float32, name="q")
        >>> isinstance(q, QueueBase), q.name, q.dtypes
        (True, 'q', [tf.float32])
    """

    def __init__(self, dtypes: Sequence[Any], shapes: Any, names: Any, queue_ref: Tensor) -> None:
        self._dtypes = list(dtypes)
        if shapes is not None:
            if len(shapes) != len(self._dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [TensorShape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in self._dtypes]
        if names is not None:
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
            self._names = list(names)
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @property
    def queue_ref(self) -> Tensor:
        """The queue's handle (a string reference; fetching it gives ``[container, name]``)."""
        return self._queue_ref

    @property
    def name(self) -> str:
        """The name of the queue op, without its scope."""
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list[dtypes.DType]:
        return self._dtypes

    @property
    def shapes(self) -> list[TensorShape]:
        return self._shapes

    @property
    def names(self) -> list[str] | None:
        return self._names

    # ---- building ---------------------------------------------------------------------------------
    def _check_enqueue_dtypes(self, vals: Any) -> list[Tensor]:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(
                    "Keys in dictionary to enqueue do not match names of Queue.  Dictionary: "
                    f"({sorted(vals.keys())}), Queue: ({sorted(self._names)})"
                )
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, list | tuple):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Queue '{self.name}' has {len(self._dtypes)} components, got {len(vals)} values")
        return [
            convert_to_tensor(v, dtype=d, name=f"component_{i}") for i, (v, d) in enumerate(zip(vals, self._dtypes))
        ]

    def _dequeue_return_value(self, tensors: list[Tensor]) -> Any:
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def _use(self, op_type: str, attrs: dict[str, Any], name: str | None, default: str, *args: Any) -> Operation:
        """Creates an op using the handle, colocated with it; ``args`` become int32 inputs inside its scope."""
        with using_handle(self._queue_ref, name, default) as scope:
            inputs = [convert_to_tensor(a, dtype=dtypes.int32, name="n") for a in args]
            return make_op(op_type, [self._queue_ref, *inputs], attrs, name=scope)

    def enqueue(self, vals: Any, name: str | None = None) -> Operation:
        """An op adding one element: a tensor, a tuple/list of tensors, or a dict (named queues).

        The op waits while the queue is full; it fails with CancelledError once the queue is closed.

        Raises:
            ValueError: wrong number of components, dict keys that are not the queue's names, or a
                component whose shape does not match the queue's.
            TypeError: a value that does not convert to its component's dtype.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(2, [tf.float32, tf.int32], name="pairs")
            ...     q.enqueue((1.5, 2)).name
            'pairs_enqueue'
        """
        with using_handle(self._queue_ref, name, f"{self._name}_enqueue") as scope:
            tensors = self._check_enqueue_dtypes(vals)
            for t, shape in zip(tensors, self._shapes):
                t.shape.assert_is_compatible_with(shape)
            return make_op("QueueEnqueueV2", [self._queue_ref, *tensors], {"Tcomponents": self._dtypes}, name=scope)

    def enqueue_many(self, vals: Any, name: str | None = None) -> Operation:
        """An op adding the elements of a batch: each component is split along its dimension 0.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(5, tf.float32, shapes=[[2]], name="rows")
            ...     q.enqueue_many([[[1.0, 2.0], [3.0, 4.0]]]).name
            'rows_EnqueueMany'
        """
        with using_handle(self._queue_ref, name, f"{self._name}_EnqueueMany") as scope:
            tensors = self._check_enqueue_dtypes(vals)
            batch = None
            for t, shape in zip(tensors, self._shapes):
                dims = t.shape.with_rank_at_least(1)
                if dims.ndims is None:
                    continue
                first = dims[0].value
                if batch is not None and first is not None and first != batch:
                    raise ValueError(f"Components of an enqueue_many must have the same size in dimension 0: {vals}")
                batch = first if first is not None else batch
                TensorShape(dims.as_list()[1:]).assert_is_compatible_with(shape)
            return make_op("QueueEnqueueManyV2", [self._queue_ref, *tensors], {"Tcomponents": self._dtypes}, name=scope)

    def dequeue(self, name: str | None = None) -> Any:
        """Removes one element; waits while the queue is empty (OutOfRangeError once closed and empty).

        Returns:
            A tensor (one component), a list of tensors, or a dict (named queues).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(2, tf.float32, shapes=[[3]], name="vecs")
            ...     q.dequeue()
            <tf.Tensor 'vecs_Dequeue:0' shape=(3,) dtype=float32>
        """
        op = self._use("QueueDequeueV2", {"component_types": self._dtypes}, name, f"{self._name}_Dequeue")
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(shape)
        return self._dequeue_return_value(list(op.outputs))

    def dequeue_many(self, n: Any, name: str | None = None) -> Any:
        """Removes ``n`` elements, stacked per component (needs a queue with shapes).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(4, tf.int32, shapes=[[]], name="ints")
            ...     q.dequeue_many(3)
            <tf.Tensor 'ints_DequeueMany:0' shape=(3,) dtype=int32>
        """
        return self._dequeue_batch("QueueDequeueManyV2", n, name, f"{self._name}_DequeueMany")

    def dequeue_up_to(self, n: Any, name: str | None = None) -> Any:
        """Like :meth:`dequeue_many`, but a closed queue gives what it has left (at least one element).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(4, tf.int32, shapes=[[]], name="ints")
            ...     q.dequeue_up_to(3).shape.as_list()
            [None]
        """
        return self._dequeue_batch("QueueDequeueUpToV2", n, name, f"{self._name}_DequeueUpTo")

    def _dequeue_batch(self, op_type: str, n: Any, name: str | None, default: str) -> Any:
        op = self._use(op_type, {"component_types": self._dtypes}, name, default, n)
        batch = _batch_size(op) if op_type == "QueueDequeueManyV2" else None
        for t, shape in zip(op.outputs, self._shapes):
            t.set_shape(TensorShape([batch]).concatenate(shape))
        return self._dequeue_return_value(list(op.outputs))

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None) -> Operation:
        """An op closing the queue (CancelledError if it already is); see :meth:`FIFOQueueResource.close`.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(1, tf.float32, name="q")
            ...     q.close().name, q.close(cancel_pending_enqueues=True).name
            ('q_Close', 'q_Close_1')
        """
        attrs = {"cancel_pending_enqueues": bool(cancel_pending_enqueues)}
        return self._use("QueueCloseV2", attrs, name, f"{self._name}_Close")

    def is_closed(self, name: str | None = None) -> Tensor:
        """A bool scalar: is the queue closed?

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(1, tf.float32)
            ...     with tf.Session() as sess:
            ...         sess.run(q.close())
            ...         print(sess.run(q.is_closed()))
            True
        """
        return self._use("QueueIsClosedV2", {}, name, f"{self._name}_Is_Closed").outputs[0]

    def size(self, name: str | None = None) -> Tensor:
        """An int32 scalar: the number of elements in the queue.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     q = FIFOQueue(1, tf.float32, name="q")
            ...     q.size()
            <tf.Tensor 'q_Size:0' shape=() dtype=int32>
        """
        return self._use("QueueSizeV2", {}, name, f"{self._name}_Size").outputs[0]


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in the order they were enqueued (TF1's ``tf.FIFOQueue``).

    The queue lives in the resource containers of the task its op is placed on, under ``shared_name``
    (the op's name when empty): every session and graph naming it there shares it, so between-graph
    replicas can exchange tensors through a queue on a ps task.

    Args:
        capacity: Most elements held at once; enqueues wait while it is full (negative: unbounded).
        dtypes: DType of each component (one DType for single-component elements).
        shapes: Fully defined shape of each component (needed by ``dequeue_many``), or None.
        names: Name of each component: elements are then dicts.
        shared_name: Name under which the queue is shared (default: the op's name).
        name: Name of the queue op.

    Raises:
        ValueError: a shape is not fully defined, or shapes/names do not match dtypes in length.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     q = tf.FIFOQueue(2, [tf.float32], shapes=[[]], name="fifo")
        ...     push, pop = q.enqueue(3.0), q.dequeue()
        ...     with tf.Session() as sess:
        ...         sess.run(push)
        ...         print(sess.run(pop))
        3.0
    """

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "fifo_queue",
    ) -> None:
        types = _as_type_list(dtypes)
        shape_list = _as_shape_list(shapes)
        super().__init__(*_new_queue("FIFOQueueV2", capacity, types, shape_list, names, shared_name, name))


def _new_queue(
    op_type: str,
    capacity: int,
    types: list[dtypes.DType],
    shape_list: list[TensorShape] | None,
    names: Any,
    shared_name: str | None,
    name: str,
    extra_attrs: dict[str, Any] | None = None,
) -> tuple[list[dtypes.DType], list[TensorShape] | None, Any, Tensor]:
    """Creates a queue's handle op (with the attrs of its kind in ``extra_attrs``); returns ``QueueBase``'s
    arguments."""
    if names is not None and not isinstance(names, list | tuple):
        names = [names]
    if shape_list is not None and len(shape_list) != len(types):
        raise ValueError("Queue shapes must have the same length as dtypes")
    if names is not None and len(names) != len(types):
        raise ValueError("Queue names must have the same length as dtypes")
    graph = get_default_graph()
    attrs = {
        "component_types": types,
        "shapes": [s.as_tuple() for s in shape_list] if shape_list is not None else [],
        "capacity": int(capacity),
        "container": "",
        "shared_name": shared_name or "",
        **(extra_attrs or {}),
    }
    # Like TF's init_scope: the queue never depends on the control context it is created in.
    with graph.as_default(), graph.control_dependencies(None):
        queue_ref = make_op(op_type, [], attrs, name=name).outputs[0]
    return types, shape_list, names, queue_ref


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose shapes may leave dimensions unknown; ``dequeue_many`` pads (TF1's ``tf.PaddingFIFOQueue``).

    Each component needs a shape of known rank; ``None`` dimensions take any size. ``dequeue_many`` and
    ``dequeue_up_to`` pad every unknown dimension of a batch to its largest element, with zeros (empty
    strings for strings).

    Args:
        capacity: Most elements held at once; enqueues wait while it is full.
        dtypes: DType of each component.
        shapes: Shape of each component (required), e.g. ``[[None], [None, 3]]``.
        names: Name of each component: elements are then dicts.
        shared_name: Name under which the queue is shared (default: the op's name).
        name: Name of the queue op.

    Raises:
        ValueError: ``shapes`` is missing, has another length than ``dtypes``, or a shape has unknown rank.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     q = PaddingFIFOQueue(5, tf.int32, shapes=[[None]])
        ...     pushes = [q.enqueue([[1, 2, 3]]), q.enqueue([[4]])]
        ...     batch = q.dequeue_many(2)
        ...     with tf.Session() as sess:
        ...         _ = [sess.run(p) for p in pushes]
        ...         print(batch.shape.as_list(), sess.run(batch).tolist())
        [2, None] [[1, 2, 3], [4, 0, 0]]
    """

    def __init__(
        self,
        capacity: int,
        dtypes: Any,
        shapes: Any,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "padding_fifo_queue",
    ) -> None:
        types = _as_type_list(dtypes)
        shape_list = _as_shape_list(shapes, unknown_dims=True)
        if shape_list is None or len(shape_list) != len(types):
            got = 0 if shape_list is None else len(shape_list)
            raise ValueError(
                f"Shapes must be provided for all components, but received {len(types)} dtypes and {got} shapes."
            )
        super().__init__(*_new_queue("PaddingFIFOQueueV2", capacity, types, shape_list, names, shared_name, name))
