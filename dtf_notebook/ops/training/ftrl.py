"""The FTRL-proximal update ops: ``ApplyFtrl``, ``ApplyFtrlV2`` (with L2 shrinkage) and their ``SparseApply*``
forms.

With ``p = -lr_power`` (``sqrt`` when ``lr_power`` is -0.5): ``linear += g - (new_accum^p - accum^p) / lr * var``
(``g`` is the gradient, plus ``2 * l2_shrinkage * var`` for the V2 ops), then ``var = (sign(linear)*l1 - linear)
/ (new_accum^p / lr + 2*l2)`` where ``|linear| > l1`` and 0 elsewhere, and ``accum = new_accum``.
``multiply_linear_by_lr`` keeps ``linear`` multiplied by ``lr``. The float operations follow TF's CPU kernels,
whose three code paths (dense, sparse rows, sparse scalars) associate the sums differently; each is followed.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w, acc, lin = tf.Variable([0.0]), tf.Variable([1.0]), tf.Variable([0.0])
    ...     step = apply_ftrl(w, acc, lin, [3.0], 1.0, 0.0, 0.0, -0.5)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(step).round(4), sess.run(acc))
    [-0.9487] [10.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.training.kernel_support import Scalars, dense_kernel, sparse_kernel
from dtf_notebook.ops.training.op_specs import build, register


def _attrs(use_locking: bool, multiply_linear_by_lr: bool) -> dict[str, Any]:
    return {"use_locking": bool(use_locking), "multiply_linear_by_lr": bool(multiply_linear_by_lr)}


def apply_ftrl(
    var: Any,
    accum: Any,
    linear: Any,
    grad: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    lr_power: Any,
    use_locking: bool = False,
    multiply_linear_by_lr: bool = False,
    name: str | None = None,
) -> Tensor:
    """The FTRL-proximal update of ``var`` and its ``accum`` (squared gradients) and ``linear`` slots.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, acc, lin = tf.Variable([0.0]), tf.Variable([1.0]), tf.Variable([0.0])
        ...     apply_ftrl(w, acc, lin, [1.0], 0.1, 0.0, 0.0, -0.5).op.get_attr("multiply_linear_by_lr")
        False
    """
    values = [var, accum, linear, grad, lr, l1, l2, lr_power]
    return build("ApplyFtrl", values, _attrs(use_locking, multiply_linear_by_lr), name)


def apply_ftrl_v2(
    var: Any,
    accum: Any,
    linear: Any,
    grad: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    l2_shrinkage: Any,
    lr_power: Any,
    use_locking: bool = False,
    multiply_linear_by_lr: bool = False,
    name: str | None = None,
) -> Tensor:
    """:func:`apply_ftrl` with the gradient shrunk by ``2 * l2_shrinkage * var`` in the ``linear`` update.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, acc, lin = tf.Variable([1.0]), tf.Variable([1.0]), tf.Variable([0.0])
        ...     step = apply_ftrl_v2(w, acc, lin, [0.0], 1.0, 0.0, 0.0, 0.5, -0.5)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step), sess.run(lin))
        [-1.] [1.]
    """
    values = [var, accum, linear, grad, lr, l1, l2, l2_shrinkage, lr_power]
    return build("ApplyFtrlV2", values, _attrs(use_locking, multiply_linear_by_lr), name)


def sparse_apply_ftrl(
    var: Any,
    accum: Any,
    linear: Any,
    grad: Any,
    indices: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    lr_power: Any,
    use_locking: bool = False,
    multiply_linear_by_lr: bool = False,
    name: str | None = None,
) -> Tensor:
    """The FTRL-proximal update of the rows ``indices`` (``grad`` has one row per index).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, acc, lin = tf.Variable([0.0, 0.0]), tf.Variable([1.0, 1.0]), tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_ftrl(w, acc, lin, [3.0], [1], 1.0, 0.0, 0.0, -0.5)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step).round(4))
        [ 0.     -0.9487]
    """
    values = [var, accum, linear, grad, indices, lr, l1, l2, lr_power]
    return build("SparseApplyFtrl", values, _attrs(use_locking, multiply_linear_by_lr), name)


def sparse_apply_ftrl_v2(
    var: Any,
    accum: Any,
    linear: Any,
    grad: Any,
    indices: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    l2_shrinkage: Any,
    lr_power: Any,
    use_locking: bool = False,
    multiply_linear_by_lr: bool = False,
    name: str | None = None,
) -> Tensor:
    """:func:`sparse_apply_ftrl` with L2 shrinkage of the gradient.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, acc, lin = tf.Variable([1.0, 1.0]), tf.Variable([1.0, 1.0]), tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_ftrl_v2(w, acc, lin, [0.0], [0], 1.0, 0.0, 0.0, 0.5, -0.5)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [-1.  1.]
    """
    values = [var, accum, linear, grad, indices, lr, l1, l2, l2_shrinkage, lr_power]
    return build("SparseApplyFtrlV2", values, _attrs(use_locking, multiply_linear_by_lr), name)


# ---- kernels ----------------------------------------------------------------------------------
def _scalars(op: Any, shrinkage: bool) -> Scalars:
    """``(lr, l1, l2, lr_power, 2*l2, 2*l2_shrinkage, l1*lr, 2*l2*lr)``, rounded in the variable's dtype."""
    args = ["lr", "l1", "l2"] + (["l2_shrinkage"] if shrinkage else []) + ["lr_power"]

    def derive(lr: Any, l1: Any, l2: Any, *rest: Any) -> tuple:
        l2s, lr_power = rest if shrinkage else (0 * l2, rest[0])
        return lr, l1, l2, lr_power, 2 * l2, 2 * l2s, l1 * lr, 2 * l2 * lr

    return Scalars(op, args, derive)


def _check_sparse(op: Any, lr: Any, l1: Any, l2: Any, lr_power: Any, two_l2s: Any) -> None:
    """TF's checks of the sparse FTRL kernels' hyper-parameters."""
    if not lr > 0:
        raise errors.InvalidArgumentError(None, op, "lr is not a positive scalar: []")
    if not l1 >= 0:
        raise errors.InvalidArgumentError(None, op, "l1 regularization strength is not a non-negative scalar: []")
    if not l2 >= 0:
        raise errors.InvalidArgumentError(None, op, "l2 regularization strength is not a non-negative scalar: []")
    if not lr_power <= 0:
        raise errors.InvalidArgumentError(None, op, "lr_power is not a non-positive scalar: []")
    if not two_l2s >= 0:
        raise errors.InvalidArgumentError(
            None, op, "l2 shrinkage regularization strength is not a non-negative scalar: []"
        )


def _powers(new_accum: torch.Tensor, accum: torch.Tensor, lr_power: Any) -> tuple[torch.Tensor, torch.Tensor]:
    if lr_power == -0.5:
        return torch.sqrt(new_accum), torch.sqrt(accum)
    return new_accum.pow(-lr_power), accum.pow(-lr_power)


def _dense(shrinkage: bool) -> Callable[[Any, Any], Callable[..., None]]:
    def body(op: Any, ctx: Any) -> Callable[..., None]:
        scalars = _scalars(op, shrinkage)
        by_lr = op.get_attr("multiply_linear_by_lr")

        def update(var: Any, accum: Any, linear: Any, grad: Any, *hyper: Any) -> None:
            lr, l1, _, lr_power, two_l2, two_l2s, l1_lr, two_l2_lr = scalars(*hyper)
            g = grad + two_l2s * var if shrinkage else grad
            new_accum = accum + grad * grad
            p_new, p_old = _powers(new_accum, accum, lr_power)
            if by_lr:
                linear.add_(g * lr - (p_new - p_old) * var)
                x, y, threshold = l1_lr * torch.sign(linear) - linear, p_new + two_l2_lr, l1_lr
            else:
                linear.add_(g - (p_new - p_old) / lr * var)
                x, y, threshold = l1 * torch.sign(linear) - linear, p_new / lr + two_l2, l1
            var.copy_(torch.where(linear.abs() > threshold, x / y, torch.zeros_like(var)))
            accum.add_(grad * grad)

        return update

    return body


def _sparse(shrinkage: bool) -> Callable[[Any, Any], Callable[..., None]]:
    def body(op: Any, ctx: Any) -> Callable[..., None]:
        scalars = _scalars(op, shrinkage)
        by_lr = op.get_attr("multiply_linear_by_lr")

        def rows(var: Any, accum: Any, linear: Any, *rest: Any) -> None:
            *hyper, grad, idx = rest
            lr, l1, l2, lr_power, two_l2, two_l2s, l1_lr, two_l2_lr = scalars(*hyper)
            _check_sparse(op, lr, l1, l2, lr_power, two_l2s)
            a, lin, v = accum.index_select(0, idx), linear.index_select(0, idx), var.index_select(0, idx)
            g = grad + two_l2s * v if shrinkage else grad
            new_a = a + grad * grad
            limit = l1_lr if by_lr else l1
            if var.dim() == 1:
                # TF's scalar loop: pow even for lr_power -0.5, and (l + g) - sigma * v.
                sigma = new_a.pow(-lr_power) - a.pow(-lr_power)
                if by_lr:
                    lin = lin + g * lr - sigma * v
                else:
                    lin = lin + g - (sigma / lr) * v
                quadratic = torch.sqrt(new_a) if lr_power == -0.5 else new_a.pow(-lr_power)
                quadratic = quadratic + two_l2_lr if by_lr else quadratic / lr + two_l2
            else:
                p_new, p_old = _powers(new_a, a, lr_power)
                if by_lr:
                    lin = lin + (g * lr - (p_new - p_old) * v)
                    quadratic = p_new + two_l2_lr
                else:
                    lin = lin + (g - (p_new - p_old) / lr * v)
                    quadratic = p_new / lr + two_l2
            new_v = (torch.clamp(lin, -limit, limit) - lin) / quadratic
            accum.index_copy_(0, idx, new_a)
            linear.index_copy_(0, idx, lin)
            var.index_copy_(0, idx, new_v)

        return rows

    return body


_REFS_AND_GRAD = "var accum linear grad"
register("ApplyFtrl", f"{_REFS_AND_GRAD} lr l1 l2 lr_power", 3, "lr l1 l2 lr_power", dense_kernel(_dense(False)))
register(
    "ApplyFtrlV2",
    f"{_REFS_AND_GRAD} lr l1 l2 l2_shrinkage lr_power",
    3,
    "lr l1 l2 l2_shrinkage lr_power",
    dense_kernel(_dense(True)),
)
register(
    "SparseApplyFtrl",
    f"{_REFS_AND_GRAD} indices lr l1 l2 lr_power",
    3,
    "lr l1 l2 lr_power",
    sparse_kernel(_sparse(False)),
)
register(
    "SparseApplyFtrlV2",
    f"{_REFS_AND_GRAD} indices lr l1 l2 l2_shrinkage lr_power",
    3,
    "lr l1 l2 l2_shrinkage lr_power",
    sparse_kernel(_sparse(True)),
)
