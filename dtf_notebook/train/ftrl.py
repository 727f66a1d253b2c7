"""``tf.train.FtrlOptimizer``: FTRL-proximal (McMahan et al., 2013), with online L2 and L2-shrinkage penalties.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([0.0], name="w")
    ...     opt = tf.train.FtrlOptimizer(1.0, initial_accumulator_value=1.0)
    ...     train_op = opt.minimize(tf.reduce_sum(3.0 * w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w).round(4), opt.get_slot_names())
    [-0.9487] ['accum', 'linear']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops, training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, cast_like, filled_like

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(Optimizer):
    """FTRL-proximal with slots ``accum`` (``<var>/Ftrl``, starting at ``initial_accumulator_value``) and ``linear``.

    ``beta`` is folded into the L2 strength as TF1 does (``l2 + beta / (2 * learning_rate)``); with a positive
    ``l2_shrinkage_regularization_strength`` the updates use TF's V2 ops (``ApplyFtrlV2``).

    Args:
        learning_rate: A float or a scalar tensor.
        learning_rate_power: At most 0; -0.5 is Adagrad-like decay, 0 a fixed rate.
        initial_accumulator_value: Non-negative starting value of ``accum``.
        l1_regularization_strength: Non-negative L1 penalty.
        l2_regularization_strength: Non-negative (stabilising) L2 penalty.
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots.
        accum_name: Suffix of the ``accum`` slots (default: ``name``).
        linear_name: Suffix of the ``linear`` slots (default: ``name``, made unique: ``Ftrl_1``).
        l2_shrinkage_regularization_strength: Non-negative magnitude penalty added to the gradient.
        beta: The paper's beta (default 0).

    Raises:
        ValueError: a strength or the initial accumulator value is negative, or ``learning_rate_power`` positive.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
        Traceback (most recent call last):
        ...
        ValueError: learning_rate_power 0.500000 needs to be negative or zero
    """

    def __init__(
        self,
        learning_rate: Any,
        learning_rate_power: float = -0.5,
        initial_accumulator_value: float = 0.1,
        l1_regularization_strength: float = 0.0,
        l2_regularization_strength: float = 0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
        accum_name: str | None = None,
        linear_name: str | None = None,
        l2_shrinkage_regularization_strength: float = 0.0,
        beta: float | None = None,
    ) -> None:
        super().__init__(use_locking, name)
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power:f} needs to be negative or zero")
        strengths = {
            "initial_accumulator_value": initial_accumulator_value,
            "l1_regularization_strength": l1_regularization_strength,
            "l2_regularization_strength": l2_regularization_strength,
            "l2_shrinkage_regularization_strength": l2_shrinkage_regularization_strength,
        }
        for label, value in strengths.items():
            if value < 0.0:
                raise ValueError(f"{label} {value:f} needs to be positive or zero")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name
        self._tensors: dict[str, Tensor] = {}

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(
                v,
                lambda v=v: filled_like(v, self._initial_accumulator_value, "Const"),
                "accum",
                self._accum_name or self._name,
            )
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self) -> None:
        # The same tensors, names and order as TF1's FtrlOptimizer._prepare.
        lr = self._learning_rate
        self._tensors = {
            "lr": convert_to_tensor(lr, name="learning_rate"),
            "l1": convert_to_tensor(self._l1, name="l1_regularization_strength"),
            "l2": convert_to_tensor(
                self._l2 + self._beta / (2.0 * math_ops.maximum(lr, 1e-36)),
                name="adjusted_l2_regularization_strength",
            ),
            "beta": convert_to_tensor(self._beta, name="beta"),
            "l2_shrinkage": convert_to_tensor(self._l2_shrinkage, name="l2_shrinkage_regularization_strength"),
            "lr_power": convert_to_tensor(self._learning_rate_power, name="learning_rate_power"),
        }

    def _hyper_of(self, var: Variable) -> list[Tensor]:
        names = ["lr", "l1", "l2"] + (["l2_shrinkage"] if self._l2_shrinkage > 0.0 else []) + ["lr_power"]
        return [cast_like(self._tensors[n], var.dtype) for n in names]

    def _slot_pair(self, var: Variable) -> list[Variable]:
        return [self.get_slot(var, "accum"), self.get_slot(var, "linear")]

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        apply = training_ops.apply_ftrl_v2 if self._l2_shrinkage > 0.0 else training_ops.apply_ftrl
        return apply(var, *self._slot_pair(var), grad, *self._hyper_of(var), use_locking=self._use_locking)

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        apply = training_ops.sparse_apply_ftrl_v2 if self._l2_shrinkage > 0.0 else training_ops.sparse_apply_ftrl
        return apply(
            var, *self._slot_pair(var), grad.values, grad.indices, *self._hyper_of(var), use_locking=self._use_locking
        )
