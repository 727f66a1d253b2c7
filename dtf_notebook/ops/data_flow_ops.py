"""Queues and conditional accumulators (TF1's ``data_flow_ops``): ``tf.FIFOQueue``, ``tf.QueueBase``,
``tf.RandomShuffleQueue``, ``tf.PriorityQueue``, ``tf.ConditionalAccumulator``, ``tf.SparseConditionalAccumulator``.

Their state lives in the resource containers of the task their op is placed on, so every session on
the cluster that names one (by ``shared_name``, else by op name) shares it; ops that use one run where
it lives. Blocking ops wait no longer than their step's deadline and end when the step is aborted.
The ops live in :mod:`dtf_notebook.ops.data_flow`; importing this module registers them.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     q = FIFOQueue(10, tf.float32, shapes=[[]])
    ...     fill = q.enqueue_many([[1.0, 2.0, 3.0]])
    ...     with tf.Session() as sess:
    ...         sess.run(fill)
    ...         print(sess.run(q.dequeue_many(2)), sess.run(q.size()))
    [1. 2.] 1
"""

from __future__ import annotations

from dtf_notebook.ops.data_flow.accumulator_ops import (
    ConditionalAccumulator,
    ConditionalAccumulatorBase,
    SparseConditionalAccumulator,
)
from dtf_notebook.ops.data_flow.queue_kinds import PriorityQueue, RandomShuffleQueue
from dtf_notebook.ops.data_flow.queue_ops import FIFOQueue, PaddingFIFOQueue, QueueBase

__all__ = [
    "QueueBase",
    "FIFOQueue",
    "PaddingFIFOQueue",
    "RandomShuffleQueue",
    "PriorityQueue",
    "ConditionalAccumulatorBase",
    "ConditionalAccumulator",
    "SparseConditionalAccumulator",
]
