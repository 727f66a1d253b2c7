"""``tf.TensorArray`` (TF1's ``tensor_array_ops``): arrays of tensors for loops, with gradients.

The ``TensorArray*V3`` ops, their kernels and gradients live in :mod:`dtf_notebook.ops.tensor_array`;
importing this module registers them. An array is made fresh by each run of its ``TensorArrayV3`` op, on
that op's device, and lives for the step.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     ta = TensorArray(tf.float32, size=0, dynamic_size=True)
    ...     _, ta = tf.while_loop(lambda i, ta: i < 4, lambda i, ta: (i + 1, ta.write(i, tf.cast(i * i, tf.float32))),
    ...                           [0, ta])
    ...     with tf.Session() as sess:
    ...         print(sess.run(ta.stack()))
    [0. 1. 4. 9.]
"""

from __future__ import annotations

from dtf_notebook.ops.tensor_array import grads  # noqa: F401 - registers the gradients
from dtf_notebook.ops.tensor_array.array import TensorArray

__all__ = ["TensorArray"]
