"""The sparse update ops: ``SparseApplyMomentum``, ``SparseApplyAdagrad``, ``SparseApplyRMSProp`` and
``SparseApplyCenteredRMSProp``.

Each kernel updates only the rows named by ``indices`` (one ``grad`` row per index), with the float
operations of TF's CPU kernel; repeated indices are applied one after the other, as TF does
(TF1's optimizers sum duplicates before calling these ops).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([[1.0], [1.0]]); acc = tf.Variable([[0.0], [0.0]])
    ...     sparse_apply_adagrad(w, acc, 0.5, [[2.0]], [1]).shape.as_list()
    [2, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.state_ops import subtract_rows
from dtf_notebook.ops.training.kernel_support import Scalars, rmsprop_scalars, sparse_kernel
from dtf_notebook.ops.training.op_specs import build, register


# ---- SparseApplyMomentum ----------------------------------------------------------------------
def sparse_apply_momentum(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    indices: Any,
    momentum: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Tensor:
    """Momentum update of the rows ``indices`` of ``var`` and ``accum`` (``grad`` has one row per index).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); acc = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_momentum(w, acc, 0.5, [2.0], [1], 0.9)
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step))
        [1. 0.]
    """
    attrs = {"use_locking": bool(use_locking), "use_nesterov": bool(use_nesterov)}
    return build("SparseApplyMomentum", [var, accum, lr, grad, indices, momentum], attrs, name)


def _sparse_momentum_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    # TF's sparse kernel scales by (lr * momentum), computed once, where the dense one scales twice.
    scalars = Scalars(op, ["lr", "momentum"], lambda lr, m: (lr, m, lr * m))
    nesterov = op.get_attr("use_nesterov")

    def rows(
        var: torch.Tensor, accum: torch.Tensor, lr: Any, momentum: Any, grad: torch.Tensor, idx: torch.Tensor
    ) -> None:
        lr, momentum, lr_momentum = scalars(lr, momentum)
        a = accum.index_select(0, idx).mul_(momentum).add_(grad)
        accum.index_copy_(0, idx, a)
        if nesterov:
            delta = grad * lr + a * lr_momentum
        else:
            delta = a * lr
        subtract_rows(var, idx, delta)

    return rows


register(
    "SparseApplyMomentum",
    "var accum lr grad indices momentum",
    2,
    "lr momentum",
    sparse_kernel(_sparse_momentum_kernel),
)


# ---- SparseApplyAdagrad -----------------------------------------------------------------------
def sparse_apply_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    update_slots: bool = True,
    name: str | None = None,
) -> Tensor:
    """Adagrad update of the rows ``indices`` of ``var`` and ``accum``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); acc = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_adagrad(w, acc, 0.5, [2.0], [0])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step))
        [0.5 1. ]
    """
    attrs = {"use_locking": bool(use_locking), "update_slots": bool(update_slots)}
    return build("SparseApplyAdagrad", [var, accum, lr, grad, indices], attrs, name)


def _sparse_adagrad_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = Scalars(op, ["lr"], lambda lr: (lr,))
    update_slots = op.get_attr("update_slots")

    def rows(var: torch.Tensor, accum: torch.Tensor, lr: Any, grad: torch.Tensor, idx: torch.Tensor) -> None:
        (lr,) = scalars(lr)
        a = accum.index_select(0, idx)
        if update_slots:
            a.add_(grad * grad)
            accum.index_copy_(0, idx, a)
        if var[0].numel() > 1:
            delta = grad * lr * torch.rsqrt(a)
        else:
            # TF's scalar-row loop divides by sqrt instead of multiplying by rsqrt.
            delta = grad * lr / torch.sqrt(a)
        subtract_rows(var, idx, delta)

    return rows


register("SparseApplyAdagrad", "var accum lr grad indices", 2, "lr", sparse_kernel(_sparse_adagrad_kernel))


# ---- SparseApplyRMSProp / SparseApplyCenteredRMSProp --------------------------------------------
def sparse_apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """RMSProp update of the rows ``indices`` (TF's sparse formula: ``ms = ms * rho + grad² * (1 - rho)``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); ms = tf.Variable([1.0, 1.0]); mom = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_rms_prop(w, ms, mom, 0.5, 0.0, 0.0, 0.0, [2.0], [1])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [1.  0.5]
    """
    values = [var, ms, mom, lr, rho, momentum, epsilon, grad, indices]
    return build("SparseApplyRMSProp", values, {"use_locking": bool(use_locking)}, name)


def sparse_apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """Centered RMSProp update of the rows ``indices`` of ``var`` and its slots.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, mg, ms, mom = (tf.Variable([v, v]) for v in (1.0, 0.0, 6.0, 0.0))
        ...     step = sparse_apply_centered_rms_prop(w, mg, ms, mom, 0.5, 0.5, 0.0, 0.0, [2.0], [0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [0.5 1. ]
    """
    values = [var, mg, ms, mom, lr, rho, momentum, epsilon, grad, indices]
    return build("SparseApplyCenteredRMSProp", values, {"use_locking": bool(use_locking)}, name)


def _rms_rows(op: Any) -> Callable[..., None]:
    """The sparse RMSProp step of both ops: ``rows(var, mg, ms, mom, (lr, rho, momentum, epsilon), grad, idx)``.

    ``mg``, the mean gradient, is None unless the op is centered.
    """
    scalars = Scalars(op, ["lr", "rho", "momentum", "epsilon"], rmsprop_scalars)

    def rows(var: Any, mg: Any, ms: Any, mom: Any, hyper: tuple, grad: torch.Tensor, idx: torch.Tensor) -> None:
        lr, rho, one_minus_rho, momentum, epsilon = scalars(*hyper)
        ms_rows = ms.index_select(0, idx).mul_(rho).add_(grad * grad * one_minus_rho)
        ms.index_copy_(0, idx, ms_rows)
        denom = ms_rows + epsilon
        if mg is not None:
            mg_rows = mg.index_select(0, idx).mul_(rho).add_(grad * one_minus_rho)
            mg.index_copy_(0, idx, mg_rows)
            denom = denom - mg_rows * mg_rows
        mom_rows = mom.index_select(0, idx).mul_(momentum).add_(torch.rsqrt(denom) * lr * grad)
        mom.index_copy_(0, idx, mom_rows)
        subtract_rows(var, idx, mom_rows)

    return rows


def _sparse_rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    step = _rms_rows(op)

    def rows(var: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any, idx: Any):
        step(var, None, ms, mom, (lr, rho, momentum, epsilon), grad, idx)

    return rows


def _sparse_centered_rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    step = _rms_rows(op)

    def rows(
        var: Any, mg: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any, idx: Any
    ) -> None:
        step(var, mg, ms, mom, (lr, rho, momentum, epsilon), grad, idx)

    return rows


_RMS_SCALARS = "lr rho momentum epsilon"
register(
    "SparseApplyRMSProp",
    "var ms mom lr rho momentum epsilon grad indices",
    3,
    _RMS_SCALARS,
    sparse_kernel(_sparse_rmsprop_kernel),
)
register(
    "SparseApplyCenteredRMSProp",
    "var mg ms mom lr rho momentum epsilon grad indices",
    4,
    _RMS_SCALARS,
    sparse_kernel(_sparse_centered_rmsprop_kernel),
)
