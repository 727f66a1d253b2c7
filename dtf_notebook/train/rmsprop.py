"""``tf.train.RMSPropOptimizer``: divides the gradient by a running root mean square of recent gradients.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0], name="w")
    ...     opt = tf.train.RMSPropOptimizer(0.1, decay=0.5)
    ...     train_op = opt.minimize(tf.reduce_sum(w))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         sess.run(train_op)
    ...         print(sess.run(w).round(4), opt.get_slot_names())
    [0.9] ['momentum', 'rms']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import training_ops
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.optimizer import Optimizer, filled_like

__all__ = ["RMSPropOptimizer"]


class RMSPropOptimizer(Optimizer):
    """RMSProp with momentum; ``centered`` also tracks the mean gradient and divides by the estimated variance.

    Slots per variable: ``rms`` (starts at ones, as in TF1), ``momentum``, and ``mg`` when centered. The
    dense update decays the accumulators of every row; the sparse one (IndexedSlices gradients) only
    those of the rows it touches.

    Args:
        learning_rate: A float, a scalar tensor or a callable returning one.
        decay: Discounting factor of the squared-gradient average.
        momentum: Momentum factor.
        epsilon: Added to the mean square before the square root.
        use_locking: Hold the variables' locks while updating.
        centered: Normalise by the centered second moment.
        name: Name of the op scope and of the slots.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.train.RMSPropOptimizer(0.001, centered=True).get_name()
        'RMSProp'
    """

    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ) -> None:
        super().__init__(use_locking, name)
        self._set_hyper(learning_rate=learning_rate, decay=decay, momentum=momentum, epsilon=epsilon)
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, lambda v=v: filled_like(v, 1, "ones"), "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _hyper_of(self, var: Variable) -> list[Tensor]:
        return self._hyper_like(var, "learning_rate", "decay", "momentum", "epsilon")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Any:
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            mg = self.get_slot(var, "mg")
            return training_ops.apply_centered_rms_prop(
                var, mg, rms, mom, *self._hyper_of(var), grad, use_locking=self._use_locking
            ).op
        return training_ops.apply_rms_prop(var, rms, mom, *self._hyper_of(var), grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: IndexedSlices, var: Variable) -> Any:
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        if self._centered:
            mg = self.get_slot(var, "mg")
            return training_ops.sparse_apply_centered_rms_prop(
                var, mg, rms, mom, *self._hyper_of(var), grad.values, grad.indices, use_locking=self._use_locking
            )
        return training_ops.sparse_apply_rms_prop(
            var, rms, mom, *self._hyper_of(var), grad.values, grad.indices, use_locking=self._use_locking
        )
