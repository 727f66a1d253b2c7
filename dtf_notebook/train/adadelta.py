"""``tf.train.AdadeltaOptimizer`` (Zeiler, 2012): step sizes from running averages of squared gradients and updates.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0], name="w")
    ...     opt = tf.train.AdadeltaOptimizer(1.0, rho=0.0, epsilon=1.0)
    ...     train_op = opt.minimize(tf.reduce_sum(3.0 * w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w).round(4), opt.get_slot_names())
    [0.0513] ['accum', 'accum_update']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer

__all__ = ["AdadeltaOptimizer"]


class AdadeltaOptimizer(Optimizer):
    """Adadelta, with slots ``accum`` (``<var>/Adadelta``) and ``accum_update`` (``<var>/Adadelta_1``), both zeros.

    Args:
        learning_rate: A float, a scalar tensor or a callable returning one (1.0 is the paper's form).
        rho: Decay of the running averages.
        epsilon: Added inside both square roots.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.AdadeltaOptimizer().get_name()
        'Adadelta'
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: Any = 0.95,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ) -> None:
        super().__init__(use_locking, name)
        self._set_hyper(lr=learning_rate, rho=rho, epsilon=epsilon)

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _slots_and_hyper(self, var: Variable) -> list[Any]:
        return [self.get_slot(var, "accum"), self.get_slot(var, "accum_update")] + self._hyper_like(
            var, "lr", "rho", "epsilon"
        )

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        return training_ops.apply_adadelta(var, *self._slots_and_hyper(var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        return training_ops.sparse_apply_adadelta(
            var, *self._slots_and_hyper(var), grad.values, grad.indices, use_locking=self._use_locking
        )
