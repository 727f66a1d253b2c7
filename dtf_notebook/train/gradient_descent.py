"""``tf.train.GradientDescentOptimizer``: ``var -= learning_rate * grad``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, -1.0], name="w")
    ...     train_op = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(w * w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w))
    [ 0.8 -0.8]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, cast_like

__all__ = ["GradientDescentOptimizer"]


class GradientDescentOptimizer(Optimizer):
    """Plain gradient descent (TF's ``ApplyGradientDescent``; sparse gradients use ``ScatterSub``).

    Args:
        learning_rate: A float, a scalar tensor (e.g. a decayed schedule) or a callable returning one.
        use_locking: Hold the variable's lock while updating it.
        name: Name of the optimizer's op scope.

    Example:
        >>> import dtf_notebook as tf
        >>> opt = tf.train.GradientDescentOptimizer(learning_rate=0.5)
        >>> opt.get_name()
        'GradientDescent'
    """

    def __init__(self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor: Tensor | None = None

    def _prepare(self) -> None:
        learning_rate = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = convert_to_tensor(learning_rate, name="learning_rate")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        lr = cast_like(self._learning_rate_tensor, var.dtype)
        return training_ops.apply_gradient_descent(var, lr, grad, use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Variable) -> Any:
        # Scatter-subtracting adds up repeated indices by itself: no deduplication needed.
        delta = IndexedSlices(
            grad.values * cast_like(self._learning_rate_tensor, var.dtype), grad.indices, grad.dense_shape
        )
        return var.scatter_sub(delta, use_locking=self._use_locking)
