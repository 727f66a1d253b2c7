"""``tf.train.AdagradDAOptimizer``: Adagrad dual averaging, for sparse linear models (Duchi et al., 2011).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([0.0], name="w")
    ...     step = tf.train.get_or_create_global_step()
    ...     opt = tf.train.AdagradDAOptimizer(0.5, step, initial_gradient_squared_accumulator_value=3.0)
    ...     train_op = opt.minimize(tf.reduce_sum(w), global_step=step)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w), opt.get_slot_names())
    [-0.25] ['gradient_accumulator', 'gradient_squared_accumulator']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import identity_ops, training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, cast_like, filled_like

__all__ = ["AdagradDAOptimizer"]


class AdagradDAOptimizer(Optimizer):
    """AdagradDA: slots ``gradient_accumulator`` (zeros) and ``gradient_squared_accumulator`` per variable.

    The variable is recomputed in closed form from its accumulators and ``global_step + 1`` (the step
    being taken), so features absent from a mini-batch are regularised as if updated every step.

    Args:
        learning_rate: A float or a scalar tensor.
        global_step: The int64 step counter (a variable or tensor), read at each update.
        initial_gradient_squared_accumulator_value: Positive starting value of the squared accumulator.
        l1_regularization_strength: Non-negative L1 penalty.
        l2_regularization_strength: Non-negative L2 penalty.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots.

    Raises:
        ValueError: ``initial_gradient_squared_accumulator_value`` is not positive.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.train.AdagradDAOptimizer(0.1, tf.train.get_or_create_global_step()).get_name()
        'AdagradDA'
    """

    def __init__(
        self,
        learning_rate: Any,
        global_step: Any,
        initial_gradient_squared_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "AdagradDA",
    ) -> None:
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_value = initial_gradient_squared_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._global_step = global_step
        self._learning_rate_tensor: Tensor | None = None
        self._global_step_on_worker: Tensor | None = None

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v, lambda v=v: filled_like(v, 0.0, "Const"), "gradient_accumulator", self._name
            )
            self._get_or_make_slot_with_initializer(
                v, lambda v=v: filled_like(v, self._initial_value, "Const"), "gradient_squared_accumulator", self._name
            )

    def _prepare(self) -> None:
        self._learning_rate_tensor = convert_to_tensor(self._learning_rate, name="learning_rate")
        with get_default_graph().colocate_with(self._learning_rate_tensor):
            self._global_step_on_worker = identity_ops.identity(self._global_step) + 1

    def _arguments(self, var: Variable) -> tuple[list[Any], list[Any]]:
        """(slots, [lr, l1, l2, global_step]) of the update of ``var``."""
        with get_default_graph().device(var.device):
            global_step = identity_ops.identity(self._global_step_on_worker)
        hyper = [
            cast_like(self._learning_rate_tensor, var.dtype),
            cast_like(convert_to_tensor(self._l1), var.dtype),
            cast_like(convert_to_tensor(self._l2), var.dtype),
            global_step,
        ]
        slots = [self.get_slot(var, "gradient_accumulator"), self.get_slot(var, "gradient_squared_accumulator")]
        return slots, hyper

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        slots, hyper = self._arguments(var)
        return training_ops.apply_adagrad_da(var, *slots, grad, *hyper, use_locking=self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        slots, hyper = self._arguments(var)
        return training_ops.sparse_apply_adagrad_da(
            var, *slots, grad.values, grad.indices, *hyper, use_locking=self._use_locking
        )
