"""Data-flow ops: queues and conditional accumulators, resources that steps (and replicas) share.

- ``common``: the handle op's kernel, colocating ops with the handle they use
- ``queue_ops``: ``FIFOQueueV2`` and the ``Queue*V2`` ops; ``QueueBase``, ``FIFOQueue``
- ``queue_kinds``: ``RandomShuffleQueueV2``, ``PriorityQueueV2``; ``RandomShuffleQueue``, ``PriorityQueue``
- ``accumulator_ops``: ``ConditionalAccumulator`` and the ``Accumulator*`` ops; the accumulator classes

The public classes are re-exported by :mod:`dtf_notebook.ops.data_flow_ops`.
"""

from dtf_notebook.ops.data_flow import accumulator_ops, common, queue_kinds, queue_ops  # noqa: F401 - registrations
