"""``tf.RandomShuffleQueue`` and ``tf.PriorityQueue``: their handle ops (``RandomShuffleQueueV2``,
``PriorityQueueV2``) and classes; every ``Queue*V2`` op of :mod:`.queue_ops` takes their handles.

A random shuffle queue is what ``tf.train.shuffle_batch`` batches through: dequeues take random elements
and, until the queue is closed, leave at least ``min_after_dequeue`` behind. A priority queue's elements
start with an int64 scalar priority (added in front of the given types); the smallest leaves first.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     q = PriorityQueue(5, [tf.string], shapes=[[]])
    ...     fill = q.enqueue_many(([3, 1, 2], ["c", "a", "b"]))
    ...     with tf.Session() as sess:
    ...         sess.run(fill)
    ...         print(sess.run(q.dequeue_many(3)))
    [array([1, 2, 3]), array([b'a', b'b', b'c'], dtype=object)]
"""

from __future__ import annotations

import hashlib
from typing import Any

from dtf_notebook.framework import dtypes, random_seed
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.data_flow.common import expect_resource
from dtf_notebook.ops.data_flow.queue_ops import (
    QueueBase,
    _as_shape_list,
    _as_type_list,
    _new_queue,
    register_queue_kind,
)
from dtf_notebook.runtime.queue_kinds import PriorityQueueResource, RandomShuffleQueueResource

__all__ = ["RandomShuffleQueue", "PriorityQueue"]


# ---- handle ops ------------------------------------------------------------------------------------
def _make_shuffle_queue(op: Operation, container: str, name: str, mgr: Any, device: str) -> Any:
    return RandomShuffleQueueResource(
        name,
        op.get_attr("component_types"),
        op.get_attr("shapes"),
        op.get_attr("capacity"),
        op.get_attr("min_after_dequeue"),
        op.get_attr("seed"),
        op.get_attr("seed2"),
        container,
        mgr,
        device,
    )


def _verify_shuffle_queue(op: Operation, resource: Any) -> None:
    expect_resource(resource, RandomShuffleQueueResource, op).verify(
        op.get_attr("component_types"), op.get_attr("shapes"), op.get_attr("capacity"), op.get_attr("min_after_dequeue")
    )


def _priority_element(op: Operation) -> tuple[list, list]:
    shapes = op.get_attr("shapes")
    return [dtypes.int64, *op.get_attr("component_types")], ([(), *shapes] if shapes else [])


def _make_priority_queue(op: Operation, container: str, name: str, mgr: Any, device: str) -> Any:
    types, shapes = _priority_element(op)
    return PriorityQueueResource(name, types, shapes, op.get_attr("capacity"), container, mgr, device)


def _verify_priority_queue(op: Operation, resource: Any) -> None:
    types, shapes = _priority_element(op)
    expect_resource(resource, PriorityQueueResource, op).verify(types, shapes, op.get_attr("capacity"))


register_queue_kind("RandomShuffleQueueV2", RandomShuffleQueueResource, _make_shuffle_queue, _verify_shuffle_queue)
register_queue_kind(
    "PriorityQueueV2", PriorityQueueResource, _make_priority_queue, _verify_priority_queue, _priority_element
)


# ---- Python API ------------------------------------------------------------------------------------
class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in random order (TF1's ``tf.RandomShuffleQueue``).

    While the queue is open, a dequeue waits until more than ``min_after_dequeue`` elements are held and
    leaves at least that many behind, so consecutive batches mix elements from a pool of that size. Once
    it is closed, dequeues drain it and then fail with ``OutOfRangeError``.

    Args:
        capacity: Most elements held at once.
        min_after_dequeue: Elements kept back by dequeues while the queue is open (must be below ``capacity``).
        dtypes: DType of each component.
        shapes: Fully defined shape of each component (needed by ``dequeue_many``), or None.
        names: Name of each component: elements are then dicts.
        seed: Op seed; with the graph seed it fixes the order (TF's ``get_seed`` rules).
        shared_name: Name under which the queue is shared across sessions.
        name: Name of the queue op.

    Raises:
        ValueError: a shape is not fully defined, or shapes/names do not match dtypes in length.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     q = RandomShuffleQueue(10, 2, tf.int32, shapes=[[]])
        ...     fill, take, rest = q.enqueue_many([[1, 2, 3, 4, 5]]), q.dequeue_many(3), q.dequeue_up_to(5)
        ...     with tf.Session() as sess:
        ...         sess.run(fill)
        ...         first = sess.run(take).tolist()
        ...         print(len(first), sess.run(q.size()))  # two kept back while the queue is open
        ...         sess.run(q.close())
        ...         print(sorted(first + sess.run(rest).tolist()))
        3 2
        [1, 2, 3, 4, 5]
    """

    def __init__(
        self,
        capacity: int,
        min_after_dequeue: int,
        dtypes: Any,
        shapes: Any = None,
        names: Any = None,
        seed: int | None = None,
        shared_name: str | None = None,
        name: str = "random_shuffle_queue",
    ) -> None:
        types = _as_type_list(dtypes)
        shape_list = _as_shape_list(shapes)
        seed1, seed2 = random_seed.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # TF: with only a graph seed, a shared queue's seed2 depends on the graph seed and its name, not on
            # how many ops the graph had, so every graph naming the queue asks for the same one.
            seed2 = int(hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()[:8], 16) & 0x7FFFFFFF
        attrs = {"min_after_dequeue": int(min_after_dequeue), "seed": int(seed1 or 0), "seed2": int(seed2 or 0)}
        super().__init__(
            *_new_queue("RandomShuffleQueueV2", capacity, types, shape_list, names, shared_name, name, attrs)
        )


class PriorityQueue(QueueBase):
    """A queue that dequeues the element of smallest priority first (TF1's ``tf.PriorityQueue``).

    Each element is ``(priority, *components)``: an int64 scalar priority in front of the ``types`` given, so
    ``dtypes`` of the queue is ``[tf.int64] + types`` and ``enqueue`` takes the priority first.

    Args:
        capacity: Most elements held at once.
        types: DType of each component after the priority.
        shapes: Fully defined shape of each of those components, or None.
        names: Name of each component, the priority's included.
        shared_name: Name under which the queue is shared across sessions.
        name: Name of the queue op.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     q = PriorityQueue(3, [tf.float32], shapes=[[]])
        ...     q.dtypes, [s.as_list() for s in q.shapes]
        ([tf.int64, tf.float32], [[], []])
    """

    def __init__(
        self,
        capacity: int,
        types: Any,
        shapes: Any = None,
        names: Any = None,
        shared_name: str | None = None,
        name: str = "priority_queue",
    ) -> None:
        type_list = _as_type_list(types)
        shape_list = _as_shape_list(shapes)
        _, _, _, queue_ref = _new_queue("PriorityQueueV2", capacity, type_list, shape_list, None, shared_name, name)
        shapes_out = [TensorShape([]), *shape_list] if shape_list else None
        if names is not None and not isinstance(names, list | tuple):
            names = [names]
        super().__init__([dtypes.int64, *type_list], shapes_out, names, queue_ref)
