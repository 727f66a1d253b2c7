"""The Adagrad dual-averaging update ops: ``ApplyAdagradDA`` and ``SparseApplyAdagradDA``.

Both accumulate the gradient (``g``) and its square (``gg``), then set the variable in closed form from the
accumulators and the step ``t`` (an int64 scalar): ``var = -sign(g) * lr * max(|g| - t*l1, 0) /
(t*lr*l2 + sqrt(gg))`` (``-lr * g / (...)`` without L1). TF's sparse kernels compute the same quantity
in other ways (dividing by ``t`` for matrices, in double precision for vectors); each is followed here.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w, g, gg = tf.Variable([0.0]), tf.Variable([0.0]), tf.Variable([0.0])
    ...     step = apply_adagrad_da(w, g, gg, [2.0], 0.5, 0.0, 0.0, tf.constant(1, tf.int64))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(step))
    [-0.5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.training.kernel_support import Scalars, dense_kernel, sparse_kernel
from dtf_notebook.ops.training.op_specs import build, register


def apply_adagrad_da(
    var: Any,
    gradient_accumulator: Any,
    gradient_squared_accumulator: Any,
    grad: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    global_step: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """AdagradDA: accumulates ``grad`` and ``grad²``, then sets ``var`` from them and ``global_step``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, g, gg = tf.Variable([0.0]), tf.Variable([0.0]), tf.Variable([0.0])
        ...     apply_adagrad_da(w, g, gg, [1.0], 0.1, 0.0, 0.0, tf.constant(3, tf.int64)).op.type
        'ApplyAdagradDA'
    """
    values = [var, gradient_accumulator, gradient_squared_accumulator, grad, lr, l1, l2, global_step]
    return build("ApplyAdagradDA", values, {"use_locking": bool(use_locking)}, name)


def sparse_apply_adagrad_da(
    var: Any,
    gradient_accumulator: Any,
    gradient_squared_accumulator: Any,
    grad: Any,
    indices: Any,
    lr: Any,
    l1: Any,
    l2: Any,
    global_step: Any,
    use_locking: bool = False,
    name: str | None = None,
) -> Tensor:
    """The AdagradDA update of the rows ``indices`` of ``var`` and its accumulators.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, g, gg = tf.Variable([0.0, 0.0]), tf.Variable([0.0, 0.0]), tf.Variable([0.0, 0.0])
        ...     step = sparse_apply_adagrad_da(w, g, gg, [2.0], [1], 0.5, 0.0, 0.0, tf.constant(1, tf.int64))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(step))
        [ 0.  -0.5]
    """
    values = [var, gradient_accumulator, gradient_squared_accumulator, grad, indices, lr, l1, l2, global_step]
    return build("SparseApplyAdagradDA", values, {"use_locking": bool(use_locking)}, name)


def _step_of(op: Any, global_step: torch.Tensor) -> int:
    if global_step.dim() != 0:
        raise errors.InvalidArgumentError(None, op, f"global_step is not a scalar: {list(global_step.shape)}")
    return int(global_step)


def _scalars(op: Any) -> Scalars:
    return Scalars(op, ["lr", "l1", "l2"], lambda lr, l1, l2: (lr, l1, l2))


def _dense(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _scalars(op)

    def update(var: Any, ga: Any, gga: Any, grad: Any, lr: Any, l1: Any, l2: Any, global_step: Any) -> None:
        lr, l1, l2 = scalars(lr, l1, l2)
        step = _step_of(op, global_step)
        ga.add_(grad)
        gga.add_(grad * grad)
        # TF: float(step) * lr and float(step) * l1, rounded in the variable's dtype.
        t = torch.tensor(float(step), dtype=var.dtype)
        denom = l2 * (t * lr) + torch.sqrt(gga)
        if l1 > 0:
            var.copy_(-lr * torch.sign(ga) * torch.clamp(ga.abs() - t * l1, min=0) / denom)
        else:
            var.copy_(lr * ga * -1.0 / denom)

    return update


def _sparse(op: Any, ctx: Any) -> Callable[..., None]:
    scalars = _scalars(op)

    def rows(var: Any, ga: Any, gga: Any, lr: Any, l1: Any, l2: Any, global_step: Any, grad: Any, idx: Any) -> None:
        lr, l1, l2 = scalars(lr, l1, l2)
        step = _step_of(op, global_step)
        g_rows = ga.index_select(0, idx)
        gg_rows = gga.index_select(0, idx)
        if var.dim() == 1:
            # TF's scalar loop works in double and rounds each stored value to the variable's dtype.
            g64 = grad.double()
            g_rows = (g_rows.double() + g64).to(var.dtype)
            gg_rows = (gg_rows.double() + g64 * g64).to(var.dtype)
            lr64, l1_64, l2_64 = float(lr), float(l1), float(l2)
            denom = step * l2_64 * lr64 + torch.sqrt(gg_rows).double()  # std::sqrt of a float: float
            if l1_64 > 0:
                ga64 = g_rows.double()
                num = torch.sign(-ga64) * lr64 * torch.clamp(ga64.abs() - step * l1_64, min=0.0)
            else:
                num = -g_rows.double() * lr64
            new = (num / denom).to(var.dtype)
        else:
            g_rows.add_(grad)
            gg_rows.add_(grad * grad)
            t = torch.tensor(float(step), dtype=var.dtype)
            gs_lr = float(t * lr)  # TF keeps global_step * lr in a double, then makes it a constant of T
            denom = l2 + torch.sqrt(gg_rows) / torch.tensor(gs_lr, dtype=var.dtype)
            if l1 > 0:
                new = -1.0 * torch.sign(g_rows) * torch.clamp(g_rows.abs() / t - l1, min=0) / denom
            else:
                new = -1.0 * (g_rows / t) / denom
        ga.index_copy_(0, idx, g_rows)
        gga.index_copy_(0, idx, gg_rows)
        var.index_copy_(0, idx, new)

    return rows


register(
    "ApplyAdagradDA",
    "var gradient_accumulator gradient_squared_accumulator grad lr l1 l2 global_step",
    3,
    "lr l1 l2 global_step",
    dense_kernel(_dense),
)
register(
    "SparseApplyAdagradDA",
    "var gradient_accumulator gradient_squared_accumulator grad indices lr l1 l2 global_step",
    3,
    "lr l1 l2 global_step",
    sparse_kernel(_sparse),
)
