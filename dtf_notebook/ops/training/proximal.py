"""The proximal (FOBOS) update ops: ``ApplyProximalGradientDescent``, ``ApplyProximalAdagrad`` and their
``SparseApply*`` forms.

A gradient step ``prox = var - lr_t * grad`` is followed by the proximal step of the L1 and L2 penalties:
``var = sign(prox) * max(|prox| - lr_t * l1, 0) / (1 + lr_t * l2)``, with ``lr_t = lr`` (gradient descent)
or ``lr / sqrt(accum)`` after ``accum += grad²`` (Adagrad). The float operations follow TF's CPU kernels in
order; for a one-dimensional variable TF's sparse kernels divide by ``1.0 + l2 * lr_t`` in double precision,
and so do these.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, -1.0])
    ...     step = apply_proximal_gradient_descent(w, 0.5, 0.2, 0.0, [1.0, 1.0])
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(sess.run(step))
    [ 0.4 -1.4]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.training.kernel_support import Scalars, check_same, dense_kernel, locking, sparse_kernel
from dtf_notebook.ops.training.op_specs import build, register


def _shrink(prox: torch.Tensor, lr_l1: Any, l1: Any, denom: Any) -> torch.Tensor:
    """``sign(prox) * max(|prox| - lr*l1, 0) / denom`` when ``l1 > 0``, else ``prox / denom`` (TF's FOBOS step)."""
    if l1 > 0:
        return torch.sign(prox) * torch.clamp(prox.abs() - lr_l1, min=0) / denom
    return prox / denom


def _shrink_double(prox: torch.Tensor, lr_l1: Any, l1: Any, l2_lr: Any) -> torch.Tensor:
    """:func:`_shrink` for TF's scalar-row loops: the numerator in the variable's dtype, ``1.0 + l2*lr`` in double."""
    num = torch.sign(prox) * torch.clamp(prox.abs() - lr_l1, min=0) if l1 > 0 else prox
    return (num.double() / (1.0 + torch.as_tensor(l2_lr).double())).to(prox.dtype)


def _check_nonnegative(op: Any, lr: Any, l1: Any, l2: Any) -> None:
    """TF's CPU checks of the proximal and FTRL ops: a positive ``lr`` and non-negative ``l1``, ``l2``."""
    if not lr > 0:
        raise errors.InvalidArgumentError(None, op, "lr is not a positive scalar: []")
    if not l1 >= 0:
        raise errors.InvalidArgumentError(None, op, "l1 regularization strength is not a non-negative scalar: []")
    if not l2 >= 0:
        raise errors.InvalidArgumentError(None, op, "l2 regularization strength is not a non-negative scalar: []")


# ---- ApplyProximalGradientDescent -------------------------------------------------------------
def apply_proximal_gradient_descent(
    var: Any, alpha: Any, l1: Any, l2: Any, delta: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """``prox = var - alpha * delta; var = sign(prox) * max(|prox| - alpha*l1, 0) / (1 + alpha*l2)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([2.0])
        ...     step = apply_proximal_gradient_descent(w, 0.5, 0.0, 1.0, [1.0])
        ...     with tf.Session() as sess:
        ...         sess.run(w.initializer)
        ...         print(sess.run(step))
        [1.]
    """
    values = [var, alpha, l1, l2, delta]
    return build("ApplyProximalGradientDescent", values, {"use_locking": bool(use_locking)}, name)


def _pgd_scalars(op: Any) -> Scalars:
    # (lr, l1, lr*l1, 1 + l2*lr, l2*lr), each rounded in the variable's dtype as TF computes it.
    return Scalars(op, ["alpha", "l1", "l2"], lambda lr, l1, l2: (lr, l1, lr * l1, 1 + l2 * lr, l2 * lr))


def _pgd_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    scalars = _pgd_scalars(op)
    use_locking = op.get_attr("use_locking")

    def run(var_ref: Any, alpha: Any, l1: Any, l2: Any, delta: Any) -> Any:
        var = var_ref.read()
        check_same(op, var, delta, "delta")
        lr, l1_, lr_l1, denom, _ = scalars(alpha, l1, l2)
        var.copy_(_shrink(var - delta * lr, lr_l1, l1_, denom))
        return var_ref

    return locking(run, 1) if use_locking else run


register("ApplyProximalGradientDescent", "var alpha l1 l2 delta", 1, "alpha l1 l2", _pgd_kernel)


def sparse_apply_proximal_gradient_descent(
    var: Any,
    alpha: Any,
    l1: Any,
    l2: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """The proximal gradient-descent step of the rows ``indices`` of ``var`` (``grad`` has one row per index).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([2.0, 2.0])
        ...     step = sparse_apply_proximal_gradient_descent(w, 0.5, 0.0, 1.0, [1.0], [1])
        ...     with tf.Session() as sess:
        ...         sess.run(w.initializer)
        ...         print(sess.run(step))
        [2. 1.]
    """
    values = [var, alpha, l1, l2, grad, indices]
    return build("SparseApplyProximalGradientDescent", values, {"use_locking": bool(use_locking)}, name)


def _sparse_pgd_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _pgd_scalars(op)

    def rows(var: torch.Tensor, alpha: Any, l1: Any, l2: Any, grad: torch.Tensor, idx: torch.Tensor) -> None:
        lr, l1_, lr_l1, denom, l2_lr = scalars(alpha, l1, l2)
        prox = var.index_select(0, idx) - grad * lr
        if var.dim() == 1:
            var.index_copy_(0, idx, _shrink_double(prox, lr_l1, l1_, l2_lr))
        else:
            var.index_copy_(0, idx, _shrink(prox, lr_l1, l1_, denom))

    return rows


register(
    "SparseApplyProximalGradientDescent",
    "var alpha l1 l2 grad indices",
    1,
    "alpha l1 l2",
    sparse_kernel(_sparse_pgd_kernel),
)


# ---- ApplyProximalAdagrad ---------------------------------------------------------------------
def apply_proximal_adagrad(
    var: Any, accum: Any, lr: Any, l1: Any, l2: Any, grad: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """``accum += grad²; lr_t = lr / sqrt(accum)``, then the proximal step with ``lr_t``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); acc = tf.Variable([0.0])
        ...     step = apply_proximal_adagrad(w, acc, 0.5, 0.0, 0.0, [2.0])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step), sess.run(acc))
        [0.5] [4.]
    """
    values = [var, accum, lr, l1, l2, grad]
    return build("ApplyProximalAdagrad", values, {"use_locking": bool(use_locking)}, name)


def _pa_scalars(op: Any) -> Scalars:
    return Scalars(op, ["lr", "l1", "l2"], lambda lr, l1, l2: (lr, l1, l2))


def _proximal_adagrad_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _pa_scalars(op)

    def update(var: torch.Tensor, accum: torch.Tensor, lr: Any, l1: Any, l2: Any, grad: torch.Tensor) -> None:
        lr, l1, l2 = scalars(lr, l1, l2)
        _check_nonnegative(op, lr, l1, l2)
        accum.add_(grad * grad)
        learning_rate = torch.rsqrt(accum) * lr
        prox = var - grad * learning_rate
        var.copy_(_shrink(prox, learning_rate * l1, l1, 1 + l2 * learning_rate))

    return update


register("ApplyProximalAdagrad", "var accum lr l1 l2 grad", 2, "lr l1 l2", dense_kernel(_proximal_adagrad_kernel))


def sparse_apply_proximal_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    grad: Any,
    indices: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """The proximal Adagrad step of the rows ``indices`` of ``var`` and ``accum``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 1.0]); acc = tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_proximal_adagrad(w, acc, 0.5, 0.0, 0.0, [2.0], [0])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step))
        [0.5 1. ]
    """
    values = [var, accum, lr, l1, l2, grad, indices]
    return build("SparseApplyProximalAdagrad", values, {"use_locking": bool(use_locking)}, name)


def _sparse_proximal_adagrad_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _pa_scalars(op)

    def rows(
        var: torch.Tensor, accum: torch.Tensor, lr: Any, l1: Any, l2: Any, grad: torch.Tensor, idx: torch.Tensor
    ) -> None:
        lr, l1, l2 = scalars(lr, l1, l2)
        _check_nonnegative(op, lr, l1, l2)
        a = accum.index_select(0, idx).add_(grad * grad)
        accum.index_copy_(0, idx, a)
        if var.dim() == 1:
            # TF's scalar loop: lr / sqrt(a), and 1.0 + l2 * lr_t in double.
            learning_rate = lr / torch.sqrt(a)
            prox = var.index_select(0, idx) - learning_rate * grad
            new = _shrink_double(prox, learning_rate * l1, l1, l2 * learning_rate)
        else:
            learning_rate = torch.rsqrt(a) * lr
            prox = var.index_select(0, idx) - grad * learning_rate
            new = _shrink(prox, learning_rate * l1, l1, 1 + l2 * learning_rate)
        var.index_copy_(0, idx, new)

    return rows


register(
    "SparseApplyProximalAdagrad",
    "var accum lr l1 l2 grad indices",
    2,
    "lr l1 l2",
    sparse_kernel(_sparse_proximal_adagrad_kernel),
)
