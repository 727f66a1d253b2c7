"""``tf.queue``: TF1's queue classes under their ``tf.queue.*`` names (the same classes as ``tf.FIFOQueue`` & co.).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     q = tf.queue.FIFOQueue(2, tf.float32)
    ...     with tf.Session() as sess:
    ...         sess.run(q.enqueue(1.5))
    ...         print(sess.run(q.dequeue()))
    1.5
"""

from dtf_notebook.ops.data_flow.queue_kinds import PriorityQueue, RandomShuffleQueue
from dtf_notebook.ops.data_flow.queue_ops import FIFOQueue, PaddingFIFOQueue, QueueBase

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]
