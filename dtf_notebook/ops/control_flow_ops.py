"""TF1's control flow (``control_flow_ops``): ``tf.cond``, ``tf.case``, ``tf.switch_case``, ``tf.while_loop``.

Graphs are built from ``Switch``, ``Merge``, ``Enter``, ``Exit``, ``NextIteration`` and ``LoopCond``
exactly as TF1 builds them; the executor runs them with frames and dead tensors. The implementation
lives in :mod:`dtf_notebook.ops.control_flow`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     n = tf.placeholder(tf.int32, [])
    ...     _, fact = tf.while_loop(lambda i, f: i <= n, lambda i, f: (i + 1, f * i), [1, 1])
    ...     with tf.Session() as sess:
    ...         print(sess.run(fact, {n: 5}))
    120
"""

from __future__ import annotations

from dtf_notebook.ops.control_flow.cond import case, cond, switch_case
from dtf_notebook.ops.control_flow.while_loop import while_loop

__all__ = ["cond", "case", "switch_case", "while_loop"]
