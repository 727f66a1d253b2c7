"""Softmax cross-entropies of ``tf.nn``: TF's fused two-output ops and their builders.

``SoftmaxCrossEntropyWithLogits`` (probability labels) and ``SparseSoftmaxCrossEntropyWithLogits``
(class-index labels) each return the loss and its backprop ``softmax - labels``, so the gradient is
one multiplication; second-order gradients go through ``Softmax``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=[[1.0, 1.0]])
    ...     loss.op.type, len(loss.op.outputs)
    ('SparseSoftmaxCrossEntropyWithLogits', 2)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.identity_ops import stop_gradient
from dtf_notebook.ops.nn import softmax as _softmax_ops  # noqa: F401 - registers Softmax/LogSoftmax for the gradients
from dtf_notebook.ops.nn.common import (
    FLOATS,
    INDEX,
    axis_arg,
    sentinel_check,
    static_int,
    swap_axis_perm,
    with_rank_at_least,
)
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op


def _is_zeros(t: Any) -> bool:
    """True when ``t`` is known to be all zeros (the filler the gradient builder uses for unused outputs)."""
    if not isinstance(t, Tensor):
        return t is None
    op = t.op
    if op.type == "ZerosLike":
        return True
    if op.type == "Fill":
        value = constant_value(op.inputs[1])
        return value is not None and not np.any(value)
    value = constant_value(t)
    return value is not None and not np.any(value)


def _broadcast_mul(vec: Tensor, mat: Tensor) -> Tensor:
    return math_ops.multiply(array_ops.expand_dims(vec, -1), mat)


def _softmax_second_order(logits: Tensor, grad_grad: Tensor) -> Tensor:
    s = make_op("Softmax", [logits]).outputs[0]
    dot = math_ops.reduce_sum(math_ops.multiply(grad_grad, s), -1, keepdims=True)
    return math_ops.multiply(math_ops.subtract(grad_grad, dot), s)


# ---- SoftmaxCrossEntropyWithLogits ------------------------------------------------------------------
def _xent_infer(op: Any) -> list:
    logits, labels = op.inputs
    with_rank_at_least(logits.shape, 1)
    if not logits.shape.is_compatible_with(labels.shape):
        raise ValueError(f"logits and labels must be the same size: logits {logits.shape} vs labels {labels.shape}")
    shape = logits.shape.merge_with(labels.shape)
    return [(logits.dtype, shape[:-1]), (logits.dtype, shape)]


def _xent_kernel(op: Any, ctx: Any):
    def run(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        log_p = torch.log_softmax(logits, -1)
        loss = torch.sum(labels * log_p, -1).neg_()
        # TF's backprop is softmax - labels (it assumes each row of labels sums to one).
        return loss, log_p.exp_().sub_(labels)

    return run


def _xent_grad(op: Any, grad_loss: Tensor, grad_grad: Tensor) -> list:
    logits = op.inputs[0]
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    log_p = make_op("LogSoftmax", [logits]).outputs[0]
    labels_grad = _broadcast_mul(grad_loss, math_ops.negative(log_p))
    if not _is_zeros(grad_grad):
        grad = math_ops.add(grad, _softmax_second_order(logits, grad_grad))
        # backprop = softmax - labels, so its gradient reaches the labels negated (TF leaves this term out).
        labels_grad = math_ops.subtract(labels_grad, grad_grad)
    return [grad, labels_grad]


op_registry.register_op("SoftmaxCrossEntropyWithLogits", infer=_xent_infer, kernel=_xent_kernel, grad=_xent_grad)


def _broadcast_pair(logits: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
    """Broadcasts logits and labels to one shape, so the op (and its gradient) sees equal shapes.

    The ``BroadcastTo`` gradients then sum each input's gradient back to its own shape.
    """
    try:
        target = broadcast_shapes(logits.shape, labels.shape)
    except ValueError:
        raise ValueError(
            f"Dimensions must be equal, but are {logits.shape} and {labels.shape} for "
            "SoftmaxCrossEntropyWithLogits (logits and labels)"
        ) from None
    shape: Any = target.as_list() if target.is_fully_defined() else array_ops.shape(math_ops.add(logits, labels))
    return array_ops.broadcast_to(logits, shape), array_ops.broadcast_to(labels, shape)


def _softmax_xent(labels: Any, logits: Any, axis: Any, name: str | None, stop_labels: bool) -> Tensor:
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        check_dtype(logits, FLOATS, "SoftmaxCrossEntropyWithLogits", "features")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if stop_labels:
            labels = stop_gradient(labels, name="labels_stop_gradient")
        rank = logits.shape.ndims
        axis_value = static_int(axis)
        if axis_value is None:
            raise ValueError(f"`axis` must be a Python integer or a constant tensor, got {axis!r}")
        if axis_value != -1 and not (rank is not None and axis_value == rank - 1):
            if rank is None:
                raise ValueError("softmax_cross_entropy_with_logits along a non-last axis needs the rank of logits")
            perm = swap_axis_perm(rank, axis_value % rank)
            logits = array_ops.transpose(logits, perm)
            labels = array_ops.transpose(labels, perm)
        if logits.shape.ndims == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0 for `logits`")
        if not logits.shape.is_compatible_with(labels.shape):
            logits, labels = _broadcast_pair(logits, labels)
        op = make_op("SoftmaxCrossEntropyWithLogits", [logits, labels], name=scope)
        return op.outputs[0]


def softmax_cross_entropy_with_logits_v2(
    labels: Any, logits: Any, axis: Any = None, name: str | None = None, dim: Any = None
) -> Tensor:
    """Softmax cross-entropy between ``logits`` and a probability distribution ``labels`` along ``axis``.

    Each row of ``labels`` must be a valid probability distribution. The loss
    has the shape of ``logits`` without ``axis``; gradients flow into both
    ``logits`` and ``labels``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0]], logits=[[0.0, 0.0]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(loss))
        [0.6931472]
    """
    return _softmax_xent(labels, logits, axis_arg(axis, dim), name, stop_labels=False)


def softmax_cross_entropy_with_logits(
    _sentinel: Any = None,
    labels: Any = None,
    logits: Any = None,
    dim: int = -1,
    name: str | None = None,
    axis: Any = None,
) -> Tensor:
    """TF1's softmax cross-entropy: like ``softmax_cross_entropy_with_logits_v2`` but no gradient reaches ``labels``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     labels = tf.constant([[0.5, 0.5]])
        ...     loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=[[1.0, 1.0]])
        ...     tf.gradients(loss, labels)
        [None]
    """
    sentinel_check(_sentinel, "softmax_cross_entropy_with_logits")
    return _softmax_xent(labels, logits, axis_arg(axis, None if dim == -1 else dim), name, stop_labels=True)


# ---- SparseSoftmaxCrossEntropyWithLogits ------------------------------------------------------------
def _sparse_xent_infer(op: Any) -> list:
    logits, labels = op.inputs
    shape = with_rank_at_least(logits.shape, 1)
    if shape.ndims is not None:
        batch = shape[:-1].merge_with(labels.shape)
        shape = batch.concatenate(TensorShape([shape[-1].value]))
    else:
        batch = labels.shape
    return [(logits.dtype, batch), (logits.dtype, shape)]


def _label_error(labels: torch.Tensor, num_classes: int) -> errors.InvalidArgumentError:
    flat = labels.reshape(-1)
    low, high = int(flat.min()), int(flat.max())
    bad = low if low < 0 else high
    shown = " ".join(str(int(v)) for v in flat[:100].tolist()) + (" ..." if flat.numel() > 100 else "")
    return errors.InvalidArgumentError(
        None,
        None,
        f"Received a label value of {bad} which is outside the valid range of [0, {num_classes}).  "
        f"Label values: {shown}",
    )


def _sparse_xent_kernel(op: Any, ctx: Any):
    # On the CPU an out-of-range gather raises, so valid labels cost no extra check; on accelerators an
    # out-of-range index is a fatal device assert, so the labels are checked first.
    check_first = ctx.device.type != "cpu"

    def run(logits: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        num_classes = logits.shape[-1]
        if check_first and labels.numel() and bool(((labels < 0) | (labels >= num_classes)).any()):
            raise _label_error(labels, num_classes)
        index = labels.unsqueeze(-1)
        if index.dtype != torch.int64:
            index = index.long()
        log_p = torch.log_softmax(logits, -1)
        try:
            picked = log_p.gather(-1, index)
        except (RuntimeError, IndexError):
            raise _label_error(labels, num_classes) from None
        loss = picked.squeeze(-1).neg()
        backprop = log_p.exp_()
        backprop.scatter_(-1, index, picked.exp_().sub_(1))
        return loss, backprop

    return run


def _sparse_xent_grad(op: Any, grad_loss: Tensor, grad_grad: Tensor) -> list:
    grad = _broadcast_mul(grad_loss, op.outputs[1])
    if not _is_zeros(grad_grad):
        grad = math_ops.add(grad, _softmax_second_order(op.inputs[0], grad_grad))
    return [grad, None]


op_registry.register_op(
    "SparseSoftmaxCrossEntropyWithLogits",
    infer=_sparse_xent_infer,
    kernel=_sparse_xent_kernel,
    grad=_sparse_xent_grad,
)


def sparse_softmax_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Softmax cross-entropy between ``logits`` and integer class ``labels`` (one class per example).

    Args:
        labels: int32/int64 tensor of shape ``logits.shape[:-1]``, values in ``[0, num_classes)``.
        logits: Float tensor ``[..., num_classes]`` of unscaled log-probabilities.
        name: Name scope of the op.

    Returns:
        The loss per example, shaped like ``labels``, in ``logits``' dtype.

    Raises:
        ValueError: positional arguments, or ``labels``' shape is not ``logits``' shape without the last dimension.
        InvalidArgumentError: (when run) a label is outside ``[0, num_classes)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[1], logits=[[0.0, 0.0]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(loss))
        [0.6931472]
    """
    sentinel_check(_sentinel, "sparse_softmax_cross_entropy_with_logits")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels, name="labels")
        logits = convert_to_tensor(logits, name="logits")
        check_dtype(logits, FLOATS, "SparseSoftmaxCrossEntropyWithLogits", "features")
        check_dtype(labels, INDEX, "SparseSoftmaxCrossEntropyWithLogits", "labels")
        lrank, rank = labels.shape.ndims, logits.shape.ndims
        if rank == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {logits.shape}.")
        if lrank is not None and rank is not None and lrank != rank - 1:
            raise ValueError(
                "`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: "
                f"labels.shape={labels.shape} of rank {lrank} and logits.shape={logits.shape} of rank {rank}"
            )
        if rank is not None and not logits.shape[:-1].is_compatible_with(labels.shape):
            raise ValueError(
                "`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                f"labels.shape={labels.shape} and logits.shape={logits.shape}"
            )
        return make_op("SparseSoftmaxCrossEntropyWithLogits", [logits, labels], name=name).outputs[0]
