"""The dense update ops: ``ApplyGradientDescent``, ``ApplyMomentum``, ``ApplyAdagrad``, ``ApplyRMSProp``,
``ApplyCenteredRMSProp`` and ``ApplyAdam``.

Each kernel updates the whole variable (and its slots) in place with the float operations of
TF's CPU kernel, in the same order.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0])
    ...     apply_gradient_descent(w, 0.5, [1.0, 1.0], use_locking=True).op.get_attr("use_locking")
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.training.kernel_support import Scalars, check_same, dense_kernel, locking, rmsprop_scalars
from dtf_notebook.ops.training.op_specs import build, register


# ---- ApplyGradientDescent ---------------------------------------------------------------------
def apply_gradient_descent(
    var: Any, alpha: Any, delta: Any, use_locking: bool = False, name: str | None = None
) -> Tensor:
    """``var -= alpha * delta`` in place; returns the variable's reference.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 2.0])
        ...     step = apply_gradient_descent(w, 0.1, [1.0, 10.0])
        ...     with tf.Session() as sess:
        ...         sess.run(w.initializer)
        ...         print(sess.run(step))
        [0.9 1. ]
    """
    return build("ApplyGradientDescent", [var, alpha, delta], {"use_locking": bool(use_locking)}, name)


def _gd_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    scalars = Scalars(op, ["alpha"], lambda alpha: (alpha,))
    use_locking = op.get_attr("use_locking")

    def run(var_ref: Any, alpha: Any, delta: Any) -> Any:
        var = var_ref.read()
        if delta.shape != var.shape:
            check_same(op, var, delta, "delta")
        (lr,) = scalars(alpha)
        if type(lr) is float:
            # One fused kernel (var - lr*delta, possibly with an FMA): this is the benchmarked hot path.
            var.sub_(delta, alpha=lr)
        else:
            var.sub_(delta * lr)
        return var_ref

    return locking(run, 1) if use_locking else run


register("ApplyGradientDescent", "var alpha delta", 1, "alpha", _gd_kernel)


# ---- ApplyMomentum ----------------------------------------------------------------------------
def apply_momentum(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    momentum: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Tensor:
    """``accum = accum * momentum + grad; var -= accum * lr`` (Nesterov: ``var -= grad * lr + accum * momentum * lr``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); acc = tf.Variable([1.0])
        ...     step = apply_momentum(w, acc, 0.5, [1.0], 0.5)
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step), sess.run(acc))
        [0.25] [1.5]
    """
    attrs = {"use_locking": bool(use_locking), "use_nesterov": bool(use_nesterov)}
    return build("ApplyMomentum", [var, accum, lr, grad, momentum], attrs, name)


def _momentum_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = Scalars(op, ["lr", "momentum"], lambda lr, m: (lr, m))
    nesterov = op.get_attr("use_nesterov")

    def update(var: torch.Tensor, accum: torch.Tensor, lr: Any, grad: torch.Tensor, momentum: Any) -> None:
        lr, momentum = scalars(lr, momentum)
        accum.mul_(momentum).add_(grad)
        if nesterov:
            var.sub_(grad * lr + accum * momentum * lr)
        else:
            var.sub_(accum * lr)

    return update


register("ApplyMomentum", "var accum lr grad momentum", 2, "lr momentum", dense_kernel(_momentum_kernel))


# ---- ApplyAdagrad -----------------------------------------------------------------------------
def apply_adagrad(
    var: Any,
    accum: Any,
    lr: Any,
    grad: Any,
    use_locking: bool = False,
    update_slots: bool = True,
    name: str | None = None,
) -> Tensor:
    """``accum += grad * grad; var -= grad * lr * rsqrt(accum)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); acc = tf.Variable([0.0])
        ...     step = apply_adagrad(w, acc, 0.5, [2.0])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([w.initializer, acc.initializer])
        ...         print(sess.run(step), sess.run(acc))
        [0.5] [4.]
    """
    attrs = {"use_locking": bool(use_locking), "update_slots": bool(update_slots)}
    return build("ApplyAdagrad", [var, accum, lr, grad], attrs, name)


def _adagrad_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = Scalars(op, ["lr"], lambda lr: (lr,))
    update_slots = op.get_attr("update_slots")

    def update(var: torch.Tensor, accum: torch.Tensor, lr: Any, grad: torch.Tensor) -> None:
        (lr,) = scalars(lr)
        if update_slots:
            accum.add_(grad * grad)
        var.sub_(grad * lr * torch.rsqrt(accum))

    return update


register("ApplyAdagrad", "var accum lr grad", 2, "lr", dense_kernel(_adagrad_kernel))


# ---- ApplyRMSProp / ApplyCenteredRMSProp ------------------------------------------------------
def apply_rms_prop(
    var: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """RMSProp: ``ms += (grad² - ms) * (1 - rho); mom = mom * momentum + grad * lr / sqrt(ms + epsilon); var -= mom``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0]); ms = tf.Variable([1.0]); mom = tf.Variable([0.0])
        ...     step = apply_rms_prop(w, ms, mom, 0.5, 0.0, 0.0, 0.0, [2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [0.5]
    """
    values = [var, ms, mom, lr, rho, momentum, epsilon, grad]
    return build("ApplyRMSProp", values, {"use_locking": bool(use_locking)}, name)


def apply_centered_rms_prop(
    var: Any,
    mg: Any,
    ms: Any,
    mom: Any,
    lr: Any,
    rho: Any,
    momentum: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """Centered RMSProp: like :func:`apply_rms_prop` with ``ms - mg²`` (``mg``: mean gradient) in the denominator.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, mg, ms, mom = (tf.Variable([v]) for v in (1.0, 0.0, 6.0, 0.0))
        ...     step = apply_centered_rms_prop(w, mg, ms, mom, 0.5, 0.5, 0.0, 0.0, [2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [0.5]
    """
    values = [var, mg, ms, mom, lr, rho, momentum, epsilon, grad]
    return build("ApplyCenteredRMSProp", values, {"use_locking": bool(use_locking)}, name)


def _rms_step(op: Any) -> Callable[..., None]:
    """The RMSProp step of both ops: ``step(var, mg, ms, mom, (lr, rho, momentum, epsilon), grad)``.

    ``mg``, the mean gradient, is None unless the op is centered.
    """
    scalars = Scalars(op, ["lr", "rho", "momentum", "epsilon"], rmsprop_scalars)

    def step(var: torch.Tensor, mg: Any, ms: torch.Tensor, mom: torch.Tensor, hyper: tuple, grad: torch.Tensor):
        lr, _, one_minus_rho, momentum, epsilon = scalars(*hyper)
        ms.add_((grad * grad - ms) * one_minus_rho)
        if mg is None:
            denom = ms + epsilon
        else:
            mg.add_((grad - mg) * one_minus_rho)
            denom = (ms - mg * mg) + epsilon
        mom.mul_(momentum).add_(grad * lr / torch.sqrt(denom))
        var.sub_(mom)

    return step


def _rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    step = _rms_step(op)

    def update(var: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any) -> None:
        step(var, None, ms, mom, (lr, rho, momentum, epsilon), grad)

    return update


def _centered_rmsprop_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    step = _rms_step(op)

    def update(var: Any, mg: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any) -> None:
        step(var, mg, ms, mom, (lr, rho, momentum, epsilon), grad)

    return update


_RMS_SCALARS = "lr rho momentum epsilon"
register("ApplyRMSProp", "var ms mom lr rho momentum epsilon grad", 3, _RMS_SCALARS, dense_kernel(_rmsprop_kernel))
register(
    "ApplyCenteredRMSProp",
    "var mg ms mom lr rho momentum epsilon grad",
    4,
    _RMS_SCALARS,
    dense_kernel(_centered_rmsprop_kernel),
)


# ---- ApplyAdam --------------------------------------------------------------------------------
def apply_adam(
    var: Any,
    m: Any,
    v: Any,
    beta1_power: Any,
    beta2_power: Any,
    lr: Any,
    beta1: Any,
    beta2: Any,
    epsilon: Any,
    grad: Any,
    use_locking: bool = False,
    use_nesterov: bool = False,
    name: str | None = None,
) -> Tensor:
    """Adam: ``m += (g - m)(1 - β1); v += (g² - v)(1 - β2); var -= m·lr_t / (√v + ε)``, ``lr_t = lr·√(1-β2ᵗ)/(1-β1ᵗ)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, m, v = tf.Variable([1.0]), tf.Variable([0.0]), tf.Variable([0.0])
        ...     step = apply_adam(w, m, v, 0.9, 0.999, 0.1, 0.9, 0.999, 1e-8, [3.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step).round(4))
        [0.9]
    """
    values = [var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad]
    attrs = {"use_locking": bool(use_locking), "use_nesterov": bool(use_nesterov)}
    return build("ApplyAdam", values, attrs, name)


def _adam_kernel(op: Any, ctx: Any) -> Callable[..., None]:
    step_size = Scalars(
        op, ["lr", "beta1_power", "beta2_power"], lambda lr, b1p, b2p: (lr * torch.sqrt(1 - b2p) / (1 - b1p),)
    )
    betas = Scalars(op, ["beta1", "beta2", "epsilon"], lambda b1, b2, eps: (b1, 1 - b1, 1 - b2, eps))
    nesterov = op.get_attr("use_nesterov")

    def update(
        var: torch.Tensor,
        m: torch.Tensor,
        v: torch.Tensor,
        beta1_power: Any,
        beta2_power: Any,
        lr: Any,
        beta1: Any,
        beta2: Any,
        epsilon: Any,
        grad: torch.Tensor,
    ) -> None:
        (alpha,) = step_size(lr, beta1_power, beta2_power)
        b1, one_minus_b1, one_minus_b2, eps = betas(beta1, beta2, epsilon)
        m.add_((grad - m) * one_minus_b1)
        v.add_((grad * grad - v) * one_minus_b2)
        if nesterov:
            var.sub_((grad * one_minus_b1 + b1 * m) * alpha / (torch.sqrt(v) + eps))
        else:
            var.sub_(m * alpha / (torch.sqrt(v) + eps))

    return update


register(
    "ApplyAdam",
    "var m v beta1_power beta2_power lr beta1 beta2 epsilon grad",
    3,
    "beta1_power beta2_power lr beta1 beta2 epsilon",
    dense_kernel(_adam_kernel),
)
