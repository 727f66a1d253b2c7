"""``tf.train.MomentumOptimizer``: ``accum = accum * momentum + grad; var -= lr * accum`` (optionally Nesterov).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0], name="w")
    ...     train_op = tf.train.MomentumOptimizer(0.1, momentum=0.9).minimize(tf.reduce_sum(w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         for _ in range(2):
    ...             sess.run(train_op)
    ...         print(sess.run(w).round(4))
    [0.71]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer

__all__ = ["MomentumOptimizer"]


class MomentumOptimizer(Optimizer):
    """Momentum (heavy ball) or Nesterov momentum, with one ``momentum`` slot per variable.

    Args:
        learning_rate: A float, a scalar tensor or a callable returning one.
        momentum: A float, a scalar tensor or a callable returning one.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots (``<var>/Momentum``).
        use_nesterov: Use Nesterov momentum.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True).get_name()
        'Momentum'
    """

    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ) -> None:
        super().__init__(use_locking, name)
        self._set_hyper(learning_rate=learning_rate, momentum=momentum)
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        mom = self.get_slot(var, "momentum")
        lr, momentum = self._hyper_like(var, "learning_rate", "momentum")
        return training_ops.apply_momentum(
            var, mom, lr, grad, momentum, use_locking=self._use_locking, use_nesterov=self._use_nesterov
        ).op

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        mom = self.get_slot(var, "momentum")
        lr, momentum = self._hyper_like(var, "learning_rate", "momentum")
        return training_ops.sparse_apply_momentum(
            var,
            mom,
            lr,
            grad.values,
            grad.indices,
            momentum,
            use_locking=self._use_locking,
            use_nesterov=self._use_nesterov,
        ).op
