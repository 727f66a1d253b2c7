"""Which steps may wait on their queues serially, on the calling thread, instead of as a dataflow.

A kernel that waits on a queue (a dequeue or a reader wanting elements, an enqueue wanting room) needs the dataflow
executor only when something in the same step could end its wait: ``sess.run([q.dequeue(), q.enqueue(1.0)])`` must
run the enqueue while the dequeue waits. When nothing in the step fills, drains or closes a queue one of its kernels
waits on, every wait ends by other steps (queue runners, other clients) whatever the order, so the step can run as a
plain loop, which costs a fraction of the dataflow's scheduling per op: a training step reading a queue-runner
pipeline, and the queue runner's own read-parse-enqueue step.

:func:`serial_queue_waits` decides it from the ops alone and orders them: every op that neither waits nor depends on
a wait first, so another op's error still ends the step before a kernel waits (in TF a waiting kernel never holds
back the rest of its step). Steps that send or receive between tasks keep the dataflow: moving a send behind a wait
could stall another task's receive.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     q = tf.FIFOQueue(1, tf.float32); x = q.dequeue() + 1.0; c = tf.constant(2.0)
    ...     ops, serial = serial_queue_waits([q.queue_ref.op, x.op.inputs[0].op, x.op.inputs[1].op, x.op, c.op])
    ...     stays = serial_queue_waits([q.queue_ref.op, x.op.inputs[0].op, q.enqueue(3.0)])[1]
    >>> [op.type for op in ops], serial, stays
    (['FIFOQueueV2', 'Const', 'Const', 'QueueDequeueV2', 'Add'], True, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.runtime.dataflow import TRANSFER_TYPES

__all__ = ["QUEUE_WAITS", "serial_queue_waits"]

# Kernels that wait on a queue, by what they wait for, and the input that holds the queue.
_WANT_ELEMENTS = {"QueueDequeueV2": 0, "QueueDequeueManyV2": 0, "QueueDequeueUpToV2": 0}
_READS = {"ReaderReadV2": 1, "ReaderReadUpToV2": 1}  # a reader takes work units (file names) from its queue
_WANT_ROOM = {"QueueEnqueueV2": 0, "QueueEnqueueManyV2": 0}
_CLOSES = {"QueueCloseV2": 0}
#: Op types whose waits :func:`serial_queue_waits` may let run serially.
QUEUE_WAITS = frozenset({*_WANT_ELEMENTS, *_READS, *_WANT_ROOM})
_QUEUES = frozenset({"FIFOQueueV2", "RandomShuffleQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2"})


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


def _queue(op: Any, index: int) -> tuple[str, str] | None:
    """The queue an op works on: its container and resource name (the shared name, else the queue op's name, which
    may name the same resource), None if unknown."""
    handle = op._inputs[index].op
    if handle._type not in _QUEUES:
        return None
    return _text(handle._attrs.get("container")), _text(handle._attrs.get("shared_name")) or handle.name


def serial_queue_waits(ops: Sequence[Any]) -> tuple[list[Any], bool]:
    """``(ops in the order to run them, whether their queue waits may run serially)``; ``ops`` is a topological
    order, returned as it is when the answer is no or nothing waits."""
    ops = list(ops)
    filled: set[Any] = set()  # queues an op of the step adds elements to, or closes
    drained: set[Any] = set()  # queues an op of the step takes elements from, or closes
    want_elements: set[Any] = set()
    want_room: set[Any] = set()
    waits = False
    for op in ops:
        kind = op._type
        if kind in TRANSFER_TYPES:
            return ops, False
        for table, targets in (
            (_WANT_ELEMENTS, (want_elements, drained)),
            (_READS, (want_elements, drained)),
            (_WANT_ROOM, (want_room, filled)),
            (_CLOSES, (filled, drained)),
        ):
            if kind in table:
                queue = _queue(op, table[kind])
                if queue is None:
                    return ops, False
                for target in targets:
                    target.add(queue)
                waits = waits or kind in QUEUE_WAITS
                break
        else:
            if op.op_def.may_block:  # another kind of wait (accumulators, barriers, ...): the dataflow decides
                return ops, False
    if not waits or want_elements & filled or want_room & drained:
        return ops, False
    # The waits must form a chain, each depending on the one before, so that no two could wait at once: two
    # independent waits (a request queue and a response queue that another thread links) may each need the other to
    # end, where TF's executor waits on both together. ``level`` is the index of the latest wait an op depends on.
    level: dict[Any, int] = {}
    chain = 0
    for op in ops:
        deps = [t.op for t in op._inputs] + list(op._control_inputs)
        latest = max((level[d] + (d._type in QUEUE_WAITS) for d in deps if d in level), default=-1)
        if op._type in QUEUE_WAITS:
            if latest != chain - 1:
                return ops, False
            chain += 1
        level[op] = latest
    # Each op right after the wait it last depends on, each wait after every op its predecessor allows: an op that
    # can run before a wait does, so its error ends the step before the wait starts (a sort by (level, is a wait)
    # keeps inputs first: a wait's level is below that of the ops that read it).
    order = {op: i for i, op in enumerate(ops)}
    return sorted(ops, key=lambda op: (level[op], op._type in QUEUE_WAITS, order[op])), True
