"""TF's fused optimizer update ops (``ApplyGradientDescent``, ``ApplyAdam``, ``ApplyFtrl``, ``SparseApplyMomentum``...).

Each op takes the variable (and the optimizer's slot variables) by reference
and updates it in place, returning the reference to the variable. Kernels
evaluate the same float operations in the same order as TensorFlow's CPU
kernels (``training_ops.cc``), so a model trained here follows TF's
trajectory to float32 precision. Results are not bit-identical everywhere:
TF's Eigen kernels use fast-math ``rsqrt``, torch's vectorised ``sqrt`` is
not always correctly rounded, and ``ApplyGradientDescent`` with a constant
learning rate uses torch's fused ``var - lr * delta`` (the training hot path);
each differs from TF by at most an ulp per element and step.

Scalar hyper-parameters (``lr``, ``beta1``, ...) that are ``Const`` ops are
read once when the step is compiled, together with the quantities derived
from them (``1 - beta1`` ...), computed in the variable's dtype exactly as TF
does; the per-step path then only checks that the constant was not fed.

The sparse ops (used for ``IndexedSlices`` gradients) update only the rows
named by ``indices``. Repeated indices are applied one after the other, as
TF's CPU kernels do; TF1's optimizers sum duplicates before calling them.

The ops live in :mod:`dtf_notebook.ops.training` (``dense`` and ``sparse``, on
shared building and kernel helpers); this module gathers their builders
(importing it registers every update op).

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops import training_ops
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0])
    ...     step = training_ops.apply_gradient_descent(w, 0.5, [2.0, 2.0])
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(sess.run(step))
    [0. 1.]
"""

from __future__ import annotations

from dtf_notebook.ops.training.adadelta import apply_adadelta, sparse_apply_adadelta
from dtf_notebook.ops.training.adagrad_da import apply_adagrad_da, sparse_apply_adagrad_da
from dtf_notebook.ops.training.dense import (
    apply_adagrad,
    apply_adam,
    apply_centered_rms_prop,
    apply_gradient_descent,
    apply_momentum,
    apply_rms_prop,
)
from dtf_notebook.ops.training.ftrl import apply_ftrl, apply_ftrl_v2, sparse_apply_ftrl, sparse_apply_ftrl_v2
from dtf_notebook.ops.training.proximal import (
    apply_proximal_adagrad,
    apply_proximal_gradient_descent,
    sparse_apply_proximal_adagrad,
    sparse_apply_proximal_gradient_descent,
)
from dtf_notebook.ops.training.sparse import (
    sparse_apply_adagrad,
    sparse_apply_centered_rms_prop,
    sparse_apply_momentum,
    sparse_apply_rms_prop,
)

__all__ = [
    "apply_gradient_descent",
    "apply_momentum",
    "apply_adagrad",
    "apply_rms_prop",
    "apply_centered_rms_prop",
    "apply_adam",
    "sparse_apply_momentum",
    "sparse_apply_adagrad",
    "sparse_apply_rms_prop",
    "sparse_apply_centered_rms_prop",
    "apply_adadelta",
    "sparse_apply_adadelta",
    "apply_adagrad_da",
    "sparse_apply_adagrad_da",
    "apply_ftrl",
    "apply_ftrl_v2",
    "sparse_apply_ftrl",
    "sparse_apply_ftrl_v2",
    "apply_proximal_adagrad",
    "sparse_apply_proximal_adagrad",
    "apply_proximal_gradient_descent",
    "sparse_apply_proximal_gradient_descent",
]
