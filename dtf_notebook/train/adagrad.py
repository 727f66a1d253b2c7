"""``tf.train.AdagradOptimizer``: ``accum += grad²; var -= lr * grad / sqrt(accum)``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0], name="w")
    ...     opt = tf.train.AdagradOptimizer(0.1, initial_accumulator_value=3.0)
    ...     train_op = opt.minimize(tf.reduce_sum(w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w).round(4))
    [0.95]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, filled_like

__all__ = ["AdagradOptimizer"]


class AdagradOptimizer(Optimizer):
    """Adagrad, with one ``accumulator`` slot per variable starting at ``initial_accumulator_value``.

    Args:
        learning_rate: A float, a scalar tensor or a callable returning one.
        initial_accumulator_value: Positive starting value of the accumulators.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots (``<var>/Adagrad``).

    Raises:
        ValueError: ``initial_accumulator_value`` is not positive.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
        Traceback (most recent call last):
        ...
        ValueError: initial_accumulator_value must be positive: 0.0
    """

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._set_hyper(learning_rate=learning_rate)
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, lambda v=v: filled_like(v, self._initial_accumulator_value, "Const"), "accumulator", self._name
            )

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        acc = self.get_slot(var, "accumulator")
        (lr,) = self._hyper_like(var, "learning_rate")
        return training_ops.apply_adagrad(var, acc, lr, grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        acc = self.get_slot(var, "accumulator")
        (lr,) = self._hyper_like(var, "learning_rate")
        return training_ops.sparse_apply_adagrad(var, acc, lr, grad.values, grad.indices, use_locking=self._use_locking)
