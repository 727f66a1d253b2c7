"""``tf.train.ProximalGradientDescentOptimizer``: a gradient step, then the proximal step of L1 and L2 penalties.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, -0.05], name="w")
    ...     opt = tf.train.ProximalGradientDescentOptimizer(0.5, l1_regularization_strength=0.2)
    ...     train_op = opt.minimize(tf.reduce_sum(0.0 * w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w))
    [ 0.9 -0. ]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, cast_like

__all__ = ["ProximalGradientDescentOptimizer"]


class ProximalGradientDescentOptimizer(Optimizer):
    """FOBOS with a constant step: ``var = shrink(var - lr*grad)``; no slots.

    Args:
        learning_rate: A float or a scalar tensor.
        l1_regularization_strength: Non-negative L1 penalty.
        l2_regularization_strength: Non-negative L2 penalty.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.ProximalGradientDescentOptimizer(0.1).get_name()
        'ProximalGradientDescent'
    """

    def __init__(
        self,
        learning_rate: Any,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._tensors: list[Tensor] = []

    def _prepare(self) -> None:
        self._tensors = [
            convert_to_tensor(self._call_if_callable(self._learning_rate), name="learning_rate"),
            convert_to_tensor(self._l1, name="l1_regularization_strength"),
            convert_to_tensor(self._l2, name="l2_regularization_strength"),
        ]

    def _hyper_of(self, var: Variable) -> list[Tensor]:
        return [cast_like(t, var.dtype) for t in self._tensors]

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        return training_ops.apply_proximal_gradient_descent(
            var, *self._hyper_of(var), grad, use_locking=self._use_locking
        ).op

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        return training_ops.sparse_apply_proximal_gradient_descent(
            var, *self._hyper_of(var), grad.values, grad.indices, use_locking=self._use_locking
        ).op
