"""``tf.train.AdamOptimizer`` (Kingma & Ba), with TF1's bias-corrected step size and ``beta1_power``/``beta2_power``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0], name="w")
    ...     train_op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w).round(4))
    [0.9]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import identity_ops, math_ops, state_ops, training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, cast_like

__all__ = ["AdamOptimizer"]


class AdamOptimizer(Optimizer):
    """Adam: per-variable slots ``m`` and ``v`` (``<var>/Adam``, ``<var>/Adam_1``) and two non-slot variables.

    ``beta1_power`` and ``beta2_power`` (β₁ᵗ and β₂ᵗ) live next to the first variable by name and are
    multiplied by β₁, β₂ after every step. As in TF1, the sparse update (IndexedSlices gradients)
    still decays ``m`` and ``v`` of all rows, so it equals the dense update.

    Args:
        learning_rate: A float, a scalar tensor or a callable returning one.
        beta1: Decay of the first-moment estimate.
        beta2: Decay of the second-moment estimate.
        epsilon: Added to ``sqrt(v)`` (TF's "epsilon hat").
        use_locking: Hold the variables' locks while updating.
        name: Name of the op scope and of the slots.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.AdamOptimizer(learning_rate=1e-3, epsilon=1e-7).get_name()
        'Adam'
    """

    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-08,
        use_locking: bool = False,
        name: str = "Adam",
    ) -> None:
        super().__init__(use_locking, name)
        self._set_hyper(learning_rate=learning_rate, beta1=beta1, beta2=beta2, epsilon=epsilon)

    def _get_beta_accumulators(self) -> tuple[Variable, Variable]:
        graph = get_default_graph()
        return self._get_non_slot_variable("beta1_power", graph), self._get_non_slot_variable("beta2_power", graph)

    def _create_slots(self, var_list: list[Variable]) -> None:
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(self._hyper["beta1"], "beta1_power", first_var)
        self._create_non_slot_variable(self._hyper["beta2"], "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        beta1_power, beta2_power = self._get_beta_accumulators()
        dtype = var.dtype
        powers = cast_like(beta1_power.value(), dtype), cast_like(beta2_power.value(), dtype)
        hyper = self._hyper_like(var, "learning_rate", "beta1", "beta2", "epsilon")
        return training_ops.apply_adam(var, m, v, *powers, *hyper, grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        # TF1's formulation with graph ops: decay all of m and v, scatter-add the new rows, update all of var.
        beta1_power, beta2_power = self._get_beta_accumulators()
        dtype = var.dtype
        beta1_power = cast_like(beta1_power.value(), dtype)
        beta2_power = cast_like(beta2_power.value(), dtype)
        lr_t, beta1_t, beta2_t, epsilon_t = self._hyper_like(var, "learning_rate", "beta1", "beta2", "epsilon")
        lr = lr_t * math_ops.sqrt(1 - beta2_power) / (1 - beta1_power)
        graph = get_default_graph()
        m = self.get_slot(var, "m")
        m_scaled_g_values = grad.values * (1 - beta1_t)
        m_t = state_ops.assign(m, m * beta1_t, use_locking=self._use_locking)
        with graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, grad.indices, m_scaled_g_values, use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_scaled_g_values = (grad.values * grad.values) * (1 - beta2_t)
        v_t = state_ops.assign(v, v * beta2_t, use_locking=self._use_locking)
        with graph.control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, grad.indices, v_scaled_g_values, use_locking=self._use_locking)
        v_sqrt = math_ops.sqrt(v_t)
        var_update = state_ops.assign_sub(var, lr * m_t / (v_sqrt + epsilon_t), use_locking=self._use_locking)
        return identity_ops.group(var_update, m_t, v_t)

    def _finish(self, update_ops: list[Any], name_scope: str) -> Operation:
        graph = get_default_graph()
        with graph.control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with graph.colocate_with(beta1_power):
                beta1_t, beta2_t = self._hyper_tensors["beta1"], self._hyper_tensors["beta2"]
                update_beta1 = beta1_power.assign(beta1_power * beta1_t, use_locking=self._use_locking)
                update_beta2 = beta2_power.assign(beta2_power * beta2_t, use_locking=self._use_locking)
        return identity_ops.group(*update_ops, update_beta1, update_beta2, name=name_scope)
