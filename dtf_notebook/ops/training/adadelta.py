"""The Adadelta update ops: ``ApplyAdadelta`` and ``SparseApplyAdadelta``.

``accum = accum*rho + grad²*(1-rho); update = sqrt(accum_update + ε) * rsqrt(accum + ε) * grad;
var -= update*lr; accum_update = accum_update*rho + update²*(1-rho)``, in the order of TF's CPU kernels.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w, acc, upd = tf.Variable([1.0]), tf.Variable([0.0]), tf.Variable([0.0])
    ...     step = apply_adadelta(w, acc, upd, 1.0, 0.0, 1.0, [3.0])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(step).round(4))
    [0.0513]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.state_ops import subtract_rows
from dtf_notebook.ops.training.kernel_support import Scalars, dense_kernel, sparse_kernel
from dtf_notebook.ops.training.op_specs import build, register


def apply_adadelta(
    var: Any,
    accum: Any,
    accum_update: Any,
    lr: Any,
    rho: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """Adadelta: scales ``grad`` by the ratio of the running RMS of updates to that of gradients.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, acc, upd = tf.Variable([1.0]), tf.Variable([0.0]), tf.Variable([0.0])
        ...     apply_adadelta(w, acc, upd, 1.0, 0.95, 1e-6, [3.0]).op.type
        'ApplyAdadelta'
    """
    values = [var, accum, accum_update, lr, rho, epsilon, grad]
    return build("ApplyAdadelta", values, {"use_locking": bool(use_locking)}, name)


def sparse_apply_adadelta(
    var: Any,
    accum: Any,
    accum_update: Any,
    lr: Any,
    rho: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """The Adadelta update of the rows ``indices`` of ``var`` and its two accumulators.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, acc, upd = tf.Variable([1.0, 1.0]), tf.Variable([0.0, 0.0]), tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_adadelta(w, acc, upd, 1.0, 0.0, 1.0, [3.0], [1])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step).round(4))
        [1.     0.0513]
    """
    values = [var, accum, accum_update, lr, rho, epsilon, grad, indices]
    return build("SparseApplyAdadelta", values, {"use_locking": bool(use_locking)}, name)


def _scalars(op: Any) -> Scalars:
    return Scalars(op, ["lr", "rho", "epsilon"], lambda lr, rho, eps: (lr, rho, 1 - rho, eps))


def _step(scalars: Scalars, accum: torch.Tensor, accum_update: torch.Tensor, hyper: tuple, grad: torch.Tensor):
    """Updates ``accum`` and ``accum_update`` in place; returns ``update * lr``, to subtract from ``var``."""
    lr, rho, one_minus_rho, eps = scalars(*hyper)
    accum.mul_(rho).add_(grad * grad * one_minus_rho)
    update = torch.sqrt(accum_update + eps) * torch.rsqrt(accum + eps) * grad
    accum_update.mul_(rho).add_(update * update * one_minus_rho)
    return update * lr


def _dense(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _scalars(op)

    def update(var: Any, accum: Any, accum_update: Any, lr: Any, rho: Any, epsilon: Any, grad: Any) -> None:
        var.sub_(_step(scalars, accum, accum_update, (lr, rho, epsilon), grad))

    return update


def _sparse(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _scalars(op)

    def rows(var: Any, accum: Any, accum_update: Any, lr: Any, rho: Any, epsilon: Any, grad: Any, idx: Any) -> None:
        a, u = accum.index_select(0, idx), accum_update.index_select(0, idx)
        delta = _step(scalars, a, u, (lr, rho, epsilon), grad)
        accum.index_copy_(0, idx, a)
        accum_update.index_copy_(0, idx, u)
        subtract_rows(var, idx, delta)

    return rows


_SCALARS = "lr rho epsilon"
register("ApplyAdadelta", "var accum accum_update lr rho epsilon grad", 3, _SCALARS, dense_kernel(_dense))
register(
    "SparseApplyAdadelta",
    "var accum accum_update lr rho epsilon grad indices",
    3,
    _SCALARS,
    sparse_kernel(_sparse),
)
