"""``tf.train.ProximalAdagradOptimizer``: Adagrad's per-coordinate step, then the proximal step of L1 and L2.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0], name="w")
    ...     opt = tf.train.ProximalAdagradOptimizer(0.5, initial_accumulator_value=3.0)
    ...     train_op = opt.minimize(tf.reduce_sum(w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w), opt.get_slot_names())
    [0.75] ['accumulator']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, cast_like, filled_like

__all__ = ["ProximalAdagradOptimizer"]


class ProximalAdagradOptimizer(Optimizer):
    """Proximal Adagrad, with one ``accumulator`` slot (``<var>/ProximalAdagrad``) per variable.

    Args:
        learning_rate: A float or a scalar tensor; must be positive when the update runs.
        initial_accumulator_value: Positive starting value of the accumulators.
        l1_regularization_strength: Non-negative L1 penalty.
        l2_regularization_strength: Non-negative L2 penalty.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots.

    Raises:
        ValueError: ``initial_accumulator_value`` is not positive.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.ProximalAdagradOptimizer(0.1, initial_accumulator_value=-1.0)
        Traceback (most recent call last):
        ...
        ValueError: initial_accumulator_value must be positive: -1.0
    """

    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._tensors: list[Tensor] = []

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, lambda v=v: filled_like(v, self._initial_accumulator_value, "Const"), "accumulator", self._name
            )

    def _prepare(self) -> None:
        self._tensors = [
            convert_to_tensor(self._call_if_callable(self._learning_rate), name="learning_rate"),
            convert_to_tensor(self._l1, name="l1_regularization_strength"),
            convert_to_tensor(self._l2, name="l2_regularization_strength"),
        ]

    def _hyper_of(self, var: Variable) -> list[Tensor]:
        return [cast_like(t, var.dtype) for t in self._tensors]

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        acc = self.get_slot(var, "accumulator")
        return training_ops.apply_proximal_adagrad(var, acc, *self._hyper_of(var), grad, use_locking=self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        acc = self.get_slot(var, "accumulator")
        return training_ops.sparse_apply_proximal_adagrad(
            var, acc, *self._hyper_of(var), grad.values, grad.indices, use_locking=self._use_locking
        )
