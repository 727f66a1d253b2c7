"""Neural-network ops: ``tf.nn`` (activations, softmax and cross-entropies, convolution, pooling, dropout, ...).

Every op follows TF1's op type and attr names (``Relu``/``ReluGrad``, the fused
two-output ``SoftmaxCrossEntropyWithLogits``, ``Conv2D`` with ``strides``,
``padding``, ``dilations`` and ``data_format``, ``MaxPool``/``MaxPoolGrad``, ...).
Kernels run torch directly: NHWC tensors are handed to torch's NCHW functions
as permuted views (which torch treats as channels-last memory, so no copy is
made), and TF's ``SAME`` padding, which may put one more row or column after
than before, is applied explicitly only when it is asymmetric.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     logits = tf.constant([[2.0, 0.0, -1.0]])
    ...     loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=logits)
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.nn.relu(logits)), sess.run(loss).round(4))
    [[2. 0. 0.]] [0.1698]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry, random_seed
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape, broadcast_shapes
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.identity_ops import identity, stop_gradient
from dtf_notebook.ops.math_ops import sigmoid, tanh
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op, same_as_input, shape_from_tensor

__all__ = [
    "relu",
    "relu6",
    "elu",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "softplus",
    "softsign",
    "softmax",
    "log_softmax",
    "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits",
    "log_poisson_loss",
    "l2_loss",
    "bias_add",
    "xw_plus_b",
    "moments",
    "dropout",
    "conv2d",
    "conv2d_backprop_input",
    "conv2d_backprop_filter",
    "conv2d_transpose",
    "max_pool",
    "max_pool2d",
    "avg_pool",
    "avg_pool2d",
    "embedding_lookup",
]

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
_REALS = _FLOATS + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)
_INDEX = (dtypes.int32, dtypes.int64)
_FORMATS = ("NHWC", "NCHW")


# ---- small shared helpers -------------------------------------------------------------------------
def _with_rank(shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape if shape.ndims is not None else TensorShape([None] * rank)


def _with_rank_at_least(shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def _merge_dim(a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _sentinel_check(sentinel: Any, fn_name: str) -> None:
    # TF1's loss functions take a leading `_sentinel` so that positional (labels, logits) mix-ups fail loudly.
    if sentinel is not None:
        raise ValueError(f"Only call `{fn_name}` with named arguments (labels=..., logits=..., ...)")


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


def _static_int(value: Any) -> int | None:
    if isinstance(value, Tensor):
        v = constant_value(value)
        return None if v is None else int(v)
    return None if value is None else int(value)


# ---- activations ----------------------------------------------------------------------------------
def _unary(op_type: str, features: Any, name: str | None, allowed: Sequence[dtypes.DType]) -> Tensor:
    x = convert_to_tensor(features, name="features")
    check_dtype(x, allowed, op_type, "features")
    return make_op(op_type, [x], name=name or op_type).outputs[0]


def _grad_pair_infer(op: Any) -> list:
    g, f = op.inputs[0], op.inputs[1]
    return [(g.dtype, g.shape.merge_with(f.shape))]


def relu(features: Any, name: str | None = None) -> Tensor:
    """Rectified linear unit: ``max(features, 0)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.relu([-1.0, 0.5, 2.0])))
        [0.  0.5 2. ]
    """
    return _unary("Relu", features, name, _REALS)


def _relu_grad_kernel(op: Any, ctx: Any):
    threshold_backward = torch.ops.aten.threshold_backward
    return lambda grad, outputs: threshold_backward(grad, outputs, 0)


op_registry.register_op(
    "Relu", infer=same_as_input, kernel=lambda op, ctx: torch.relu,
    grad=lambda op, grad: [make_op("ReluGrad", [grad, op.outputs[0]]).outputs[0]],
)
op_registry.register_op(
    "ReluGrad", infer=_grad_pair_infer, kernel=_relu_grad_kernel,
    grad=lambda op, grad: [make_op("ReluGrad", [grad, op.inputs[1]]).outputs[0], None],
)


def relu6(features: Any, name: str | None = None) -> Tensor:
    """Rectified linear 6: ``min(max(features, 0), 6)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.relu6([-1.0, 3.0, 8.0])))
        [0. 3. 6.]
    """
    return _unary("Relu6", features, name, _REALS)


def _relu6_kernel(op: Any, ctx: Any):
    return lambda x: torch.clamp(x, 0, 6)


def _relu6_grad_kernel(op: Any, ctx: Any):
    # Gradient passes where 0 < features < 6 (TF feeds the op's outputs as `features`: the same mask);
    # hardtanh's backward is exactly that, in one kernel.
    hardtanh_backward = torch.ops.aten.hardtanh_backward
    return lambda grad, features: hardtanh_backward(grad, features, 0.0, 6.0)


op_registry.register_op(
    "Relu6", infer=same_as_input, kernel=_relu6_kernel,
    grad=lambda op, grad: [make_op("Relu6Grad", [grad, op.outputs[0]]).outputs[0]],
)
op_registry.register_op(
    "Relu6Grad", infer=_grad_pair_infer, kernel=_relu6_grad_kernel,
    grad=lambda op, grad: [make_op("Relu6Grad", [grad, op.inputs[1]]).outputs[0], None],
)


def elu(features: Any, name: str | None = None) -> Tensor:
    """Exponential linear unit: ``features`` if positive, else ``exp(features) - 1``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.elu([-1.0, 2.0])).round(4))
        [-0.6321  2.    ]
    """
    return _unary("Elu", features, name, _FLOATS)


def _elu_grad_kernel(op: Any, ctx: Any):
    # d elu / dx = elu(x) + 1 where x < 0, which is why TF feeds the op's outputs (torch's is_result form).
    elu_backward = torch.ops.aten.elu_backward
    return lambda grad, outputs: elu_backward(grad, 1.0, 1.0, 1.0, True, outputs)


def _elu_grad_grad(op: Any, grad: Tensor) -> list:
    outputs = op.inputs[1]
    d_grads = make_op("EluGrad", [grad, outputs]).outputs[0]
    negative = math_ops.less(outputs, array_ops.zeros_like(outputs))
    d_outputs = math_ops.where(negative, math_ops.multiply(grad, op.inputs[0]), array_ops.zeros_like(outputs))
    return [d_grads, d_outputs]


op_registry.register_op(
    "Elu", infer=same_as_input, kernel=lambda op, ctx: F.elu,
    grad=lambda op, grad: [make_op("EluGrad", [grad, op.outputs[0]]).outputs[0]],
)
op_registry.register_op("EluGrad", infer=_grad_pair_infer, kernel=_elu_grad_kernel, grad=_elu_grad_grad)


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """Leaky ReLU: ``features`` if positive, else ``alpha * features`` (integers are computed in float32).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.leaky_relu([-1.0, 2.0])))
        [-0.2  2. ]
    """
    x = convert_to_tensor(features, name="features")
    if x.dtype.is_integer:
        x = math_ops.cast(x, dtypes.float32)
    check_dtype(x, _FLOATS, "LeakyRelu", "features")
    return make_op("LeakyRelu", [x], {"alpha": float(alpha)}, name=name or "LeakyRelu").outputs[0]


def _leaky_relu_kernel(op: Any, ctx: Any):
    alpha = op.get_attr("alpha")
    leaky = F.leaky_relu
    return lambda x: leaky(x, alpha)


def _leaky_relu_grad_kernel(op: Any, ctx: Any):
    alpha = op.get_attr("alpha")
    leaky_backward = torch.ops.aten.leaky_relu_backward
    return lambda grad, features: leaky_backward(grad, features, alpha, False)


def _leaky_relu_grad_op(grad: Tensor, features: Tensor, alpha: float) -> Tensor:
    return make_op("LeakyReluGrad", [grad, features], {"alpha": alpha}).outputs[0]


op_registry.register_op(
    "LeakyRelu", infer=same_as_input, kernel=_leaky_relu_kernel,
    grad=lambda op, grad: [_leaky_relu_grad_op(grad, op.inputs[0], op.get_attr("alpha"))],
)
op_registry.register_op(
    "LeakyReluGrad", infer=_grad_pair_infer, kernel=_leaky_relu_grad_kernel,
    grad=lambda op, grad: [_leaky_relu_grad_op(grad, op.inputs[1], op.get_attr("alpha")), None],
)


def softplus(features: Any, name: str | None = None) -> Tensor:
    """Softplus: ``log(exp(features) + 1)``, computed without overflow.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.softplus([0.0, 100.0])).round(4))
        [  0.6931 100.    ]
    """
    return _unary("Softplus", features, name, _FLOATS)


op_registry.register_op(
    "Softplus", infer=same_as_input, kernel=lambda op, ctx: F.softplus,
    grad=lambda op, grad: [math_ops.multiply(grad, math_ops.sigmoid(op.inputs[0]))],
)


def softsign(features: Any, name: str | None = None) -> Tensor:
    """Softsign: ``features / (abs(features) + 1)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.softsign([-3.0, 1.0])))
        [-0.75  0.5 ]
    """
    return _unary("Softsign", features, name, _FLOATS)


def _softsign_grad(op: Any, grad: Tensor) -> list:
    denom = math_ops.add(math_ops.abs(op.inputs[0]), 1.0)
    return [math_ops.divide(grad, math_ops.square(denom))]


op_registry.register_op("Softsign", infer=same_as_input, kernel=lambda op, ctx: F.softsign, grad=_softsign_grad)


# ---- softmax ---------------------------------------------------------------------------------------
def _softmax_infer(op: Any) -> list:
    x = op.inputs[0]
    _with_rank_at_least(x.shape, 1)
    return [(x.dtype, x.shape)]


def _softmax_grad(op: Any, grad: Tensor) -> list:
    s = op.outputs[0]
    dot = math_ops.reduce_sum(math_ops.multiply(grad, s), -1, keepdims=True)
    return [math_ops.multiply(math_ops.subtract(grad, dot), s)]


def _log_softmax_grad(op: Any, grad: Tensor) -> list:
    softmax_ = math_ops.exp(op.outputs[0])
    return [math_ops.subtract(grad, math_ops.multiply(math_ops.reduce_sum(grad, -1, keepdims=True), softmax_))]


op_registry.register_op(
    "Softmax", infer=_softmax_infer, kernel=lambda op, ctx: (lambda x: torch.softmax(x, -1)), grad=_softmax_grad
)
op_registry.register_op(
    "LogSoftmax", infer=_softmax_infer, kernel=lambda op, ctx: (lambda x: torch.log_softmax(x, -1)),
    grad=_log_softmax_grad,
)


def _axis_arg(axis: Any, dim: Any) -> Any:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    return -1 if axis is None and dim is None else (axis if axis is not None else dim)


def _swap_axis_perm(rank: int, axis: int) -> list[int]:
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm


def _on_last_axis(op_type: str, logits: Any, axis: Any, name: str | None) -> Tensor:
    """Runs a last-axis op along ``axis`` by swapping that axis with the last one (TF's approach)."""
    x = convert_to_tensor(logits, name="logits")
    check_dtype(x, _FLOATS, op_type, "logits")
    axis_value = _static_int(axis)
    rank = x.shape.ndims
    if axis_value is None:
        raise ValueError(f"`axis` must be a Python integer or a constant tensor, got {axis!r}")
    if axis_value == -1 or (rank is not None and axis_value == rank - 1):
        return make_op(op_type, [x], name=name or op_type).outputs[0]
    if rank is None:
        raise ValueError(f"{op_type} along axis {axis_value} needs the rank of `logits` to be known")
    if not -rank <= axis_value < rank:
        raise errors.InvalidArgumentError(
            None, None,
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of dimensions in the input. "
            f"Received: dim={axis_value}",
        )
    perm = _swap_axis_perm(rank, axis_value % rank)
    swapped = make_op(op_type, [array_ops.transpose(x, perm)]).outputs[0]
    return array_ops.transpose(swapped, perm, name=name)


def softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """Softmax along ``axis`` (default: the last): ``exp(logits) / reduce_sum(exp(logits), axis)``.

    ``dim`` is TF1's deprecated alias of ``axis``.

    Raises:
        ValueError: both ``axis`` and ``dim`` are given.
        InvalidArgumentError: ``axis`` is outside the rank of ``logits``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.softmax([[0.0, 0.0], [1.0, 1.0]], axis=0)))
        [[0.26894143 0.26894143]
         [0.7310586  0.7310586 ]]
    """
    return _on_last_axis("Softmax", logits, _axis_arg(axis, dim), name)


def log_softmax(logits: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:
    """Log-softmax along ``axis`` (default: the last): ``logits - log(reduce_sum(exp(logits), axis))``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.log_softmax([0.0, 0.0])))
        [-0.6931472 -0.6931472]
    """
    return _on_last_axis("LogSoftmax", logits, _axis_arg(axis, dim), name)


# ---- cross-entropies -------------------------------------------------------------------------------
def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Element-wise logistic loss ``-labels*log(sigmoid(logits)) - (1-labels)*log(1-sigmoid(logits))``.

    Computed in TF's stable form ``max(x, 0) - x * z + log(1 + exp(-abs(x)))``.

    Raises:
        ValueError: positional arguments, or ``labels`` and ``logits`` of different shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, 100.0])
        ...     with tf.Session() as sess:
        ...         print(sess.run(loss).round(4))
        [  0.6931 100.    ]
    """
    _sentinel_check(_sentinel, "sigmoid_cross_entropy_with_logits")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
        zeros = array_ops.zeros_like(logits)
        cond = math_ops.greater_equal(logits, zeros)
        relu_logits = math_ops.where(cond, logits, zeros)
        neg_abs_logits = math_ops.where(cond, math_ops.negative(logits), logits)
        return math_ops.add(
            math_ops.subtract(relu_logits, math_ops.multiply(logits, labels)),
            math_ops.log1p(math_ops.exp(neg_abs_logits)),
            name=scope,
        )


def _xent_infer(op: Any) -> list:
    logits, labels = op.inputs
    _with_rank_at_least(logits.shape, 1)
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


def _broadcast_mul(vec: Tensor, mat: Tensor) -> Tensor:
    return math_ops.multiply(array_ops.expand_dims(vec, -1), mat)


def _softmax_second_order(logits: Tensor, grad_grad: Tensor) -> Tensor:
    s = make_op("Softmax", [logits]).outputs[0]
    dot = math_ops.reduce_sum(math_ops.multiply(grad_grad, s), -1, keepdims=True)
    return math_ops.multiply(math_ops.subtract(grad_grad, dot), s)


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


def _softmax_xent(labels: Any, logits: Any, axis: Any, name: str | None, stop_labels: bool) -> Tensor:
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        check_dtype(logits, _FLOATS, "SoftmaxCrossEntropyWithLogits", "features")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if stop_labels:
            labels = stop_gradient(labels, name="labels_stop_gradient")
        rank = logits.shape.ndims
        axis_value = _static_int(axis)
        if axis_value is None:
            raise ValueError(f"`axis` must be a Python integer or a constant tensor, got {axis!r}")
        if axis_value != -1 and not (rank is not None and axis_value == rank - 1):
            if rank is None:
                raise ValueError("softmax_cross_entropy_with_logits along a non-last axis needs the rank of logits")
            perm = _swap_axis_perm(rank, axis_value % rank)
            logits = array_ops.transpose(logits, perm)
            labels = array_ops.transpose(labels, perm)
        if logits.shape.ndims == 0:
            raise ValueError("Shape must be at least rank 1 but is rank 0 for `logits`")
        if not logits.shape.is_compatible_with(labels.shape):
            logits, labels = _broadcast_pair(logits, labels)
        op = make_op("SoftmaxCrossEntropyWithLogits", [logits, labels], name=scope)
        return op.outputs[0]


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
    return _softmax_xent(labels, logits, _axis_arg(axis, dim), name, stop_labels=False)


def softmax_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, dim: int = -1, name: str | None = None,
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
    _sentinel_check(_sentinel, "softmax_cross_entropy_with_logits")
    return _softmax_xent(labels, logits, _axis_arg(axis, None if dim == -1 else dim), name, stop_labels=True)


def _sparse_xent_infer(op: Any) -> list:
    logits, labels = op.inputs
    shape = _with_rank_at_least(logits.shape, 1)
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
        None, None,
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
    "SparseSoftmaxCrossEntropyWithLogits", infer=_sparse_xent_infer, kernel=_sparse_xent_kernel,
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
    _sentinel_check(_sentinel, "sparse_softmax_cross_entropy_with_logits")
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]):
        labels = convert_to_tensor(labels, name="labels")
        logits = convert_to_tensor(logits, name="logits")
        check_dtype(logits, _FLOATS, "SparseSoftmaxCrossEntropyWithLogits", "features")
        check_dtype(labels, _INDEX, "SparseSoftmaxCrossEntropyWithLogits", "labels")
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


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None) -> Tensor:
    """Poisson negative log-likelihood ``exp(log_input) - log_input * targets`` (+ Stirling's term if full).

    Raises:
        ValueError: ``targets`` and ``log_input`` have different shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.log_poisson_loss([2.0], [0.0])))
        [1.]
    """
    with name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, dtype=log_input.dtype, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(
                f"log_input and targets must have the same shape ({log_input.shape} vs {targets.shape})"
            )
        result = math_ops.subtract(math_ops.exp(log_input), math_ops.multiply(log_input, targets))
        if not compute_full_loss:
            return result
        # Stirling's approximation of log(targets!), used only where targets > 1 (as TF does).
        stirling = math_ops.add(
            math_ops.subtract(math_ops.multiply(targets, math_ops.log(targets)), targets),
            math_ops.multiply(0.5, math_ops.log(math_ops.multiply(2 * math.pi, targets))),
        )
        zeros = array_ops.zeros_like(targets)
        ones = array_ops.ones_like(targets)
        small = math_ops.logical_and(math_ops.greater_equal(targets, zeros), math_ops.less_equal(targets, ones))
        return math_ops.add(result, math_ops.where(small, zeros, stirling), name=scope)


# ---- l2_loss, bias_add, xw_plus_b, moments ----------------------------------------------------------
def l2_loss(t: Any, name: str | None = None) -> Tensor:
    """Half the squared L2 norm: ``sum(t ** 2) / 2`` (a scalar).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.l2_loss([1.0, 2.0, 3.0])))
        7.0
    """
    x = convert_to_tensor(t, name="t")
    check_dtype(x, _FLOATS, "L2Loss", "t")
    return make_op("L2Loss", [x], name=name or "L2Loss").outputs[0]


op_registry.register_op(
    "L2Loss", infer=lambda op: [(op.inputs[0].dtype, TensorShape([]))],
    kernel=lambda op, ctx: (lambda x: torch.sum(x * x) * 0.5),
    grad=lambda op, grad: [math_ops.multiply(op.inputs[0], grad)],
)


def _data_format(data_format: Any, allowed: Sequence[str] = _FORMATS) -> str:
    fmt = "NHWC" if data_format is None else str(data_format)
    if fmt not in allowed:
        raise ValueError(f"Unknown data format: {data_format!r}; expected one of {', '.join(allowed)}")
    return fmt


def bias_add(value: Any, bias: Any, data_format: str | None = None, name: str | None = None) -> Tensor:
    """Adds the 1-D ``bias`` along the channel dimension of ``value`` (last for NHWC, dimension 1 for NCHW).

    Raises:
        ValueError: ``bias`` is not 1-D, its size is not the channel size, or ``value``'s rank is too small.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.bias_add([[1.0, 2.0]], [10.0, 20.0])))
        [[11. 22.]]
    """
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype, name="bias")
        check_dtype(value, _REALS, "BiasAdd", "value")
        fmt = _data_format(data_format)
        return make_op("BiasAdd", [value, bias], {"data_format": fmt}, name=scope).outputs[0]


def _bias_add_infer(op: Any) -> list:
    value, bias = op.inputs
    nchw = op.get_attr("data_format") == "NCHW"
    shape = _with_rank_at_least(value.shape, 3 if nchw else 2)
    bias_shape = _with_rank(bias.shape, 1)
    if shape.ndims is None:
        return [(value.dtype, shape)]
    dims = shape.as_list()
    c = 1 if nchw else len(dims) - 1
    dims[c] = _merge_dim(dims[c], bias_shape[0].value)
    return [(value.dtype, TensorShape(dims))]


def _bias_add_kernel(op: Any, ctx: Any):
    if op.get_attr("data_format") == "NHWC":
        return torch.add

    def run(value: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return value + bias.view((-1,) + (1,) * (value.dim() - 2))

    return run


def _bias_add_grad_op(grad: Tensor, data_format: str) -> Tensor:
    return make_op("BiasAddGrad", [grad], {"data_format": data_format}).outputs[0]


op_registry.register_op(
    "BiasAdd", infer=_bias_add_infer, kernel=_bias_add_kernel,
    grad=lambda op, grad: [grad, _bias_add_grad_op(grad, op.get_attr("data_format"))],
)


def _bias_add_grad_infer(op: Any) -> list:
    g = op.inputs[0]
    nchw = op.get_attr("data_format") == "NCHW"
    shape = _with_rank_at_least(g.shape, 3 if nchw else 2)
    channels = None if shape.ndims is None else (shape[1] if nchw else shape[-1]).value
    return [(g.dtype, TensorShape([channels]))]


def _bias_add_grad_kernel(op: Any, ctx: Any):
    nchw = op.get_attr("data_format") == "NCHW"

    def run(grad: torch.Tensor) -> torch.Tensor:
        n = grad.dim()
        dims = (0,) + tuple(range(2, n)) if nchw else tuple(range(n - 1))
        return torch.sum(grad, dims, dtype=grad.dtype)

    return run


def _bias_add_grad_grad(op: Any, grad: Tensor) -> list:
    # BiasAddGrad sums over all but the channel dimension; its adjoint broadcasts back along them.
    out_backprop = op.inputs[0]
    fmt = op.get_attr("data_format")
    return [make_op("BiasAdd", [array_ops.zeros_like(out_backprop), grad], {"data_format": fmt}).outputs[0]]


op_registry.register_op(
    "BiasAddGrad", infer=_bias_add_grad_infer, kernel=_bias_add_grad_kernel, grad=_bias_add_grad_grad
)


def xw_plus_b(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``matmul(x, weights) + biases`` (a ``MatMul`` followed by a ``BiasAdd``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.xw_plus_b([[1.0, 2.0]], [[1.0], [1.0]], [0.5])
        ...     with tf.Session() as sess:
        ...         print(sess.run(y))
        [[3.5]]
    """
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, dtype=x.dtype, name="weights")
        biases = convert_to_tensor(biases, dtype=x.dtype, name="biases")
        return bias_add(math_ops.matmul(x, weights), biases, name=scope)


def moments(
    x: Any, axes: Any, shift: Any = None, name: str | None = None, keep_dims: bool | None = None,
    keepdims: bool | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``x`` over ``axes`` (float16 inputs are accumulated in float32).

    ``shift`` is accepted for compatibility and unused, as in TF1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     mean, var = tf.nn.moments(tf.constant([[1.0, 3.0], [5.0, 7.0]]), axes=[0])
        ...     with tf.Session() as sess:
        ...         print(sess.run([mean, var]))
        [array([3., 5.], dtype=float32), array([4., 4.], dtype=float32)]
    """
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'.")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        y = math_ops.cast(x, dtypes.float32) if x.dtype is dtypes.float16 else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        # The mean is a constant for the variance's gradient, exactly as in TF.
        variance = math_ops.reduce_mean(
            math_ops.squared_difference(y, stop_gradient(mean)), axes, keepdims=True, name="variance"
        )
        if not keep:
            mean = array_ops.squeeze(mean, axes)
            variance = array_ops.squeeze(variance, axes)
        if x.dtype is dtypes.float16:
            return math_ops.cast(mean, dtypes.float16), math_ops.cast(variance, dtypes.float16)
        return mean, variance


# ---- dropout ---------------------------------------------------------------------------------------
def _noise_shape(x: Tensor, noise_shape: Any) -> Any:
    if noise_shape is None:
        return array_ops.shape(x)
    if isinstance(noise_shape, Tensor) or x.shape.ndims is None:
        return noise_shape
    dims = list(TensorShape(noise_shape).as_list())
    if len(dims) == x.shape.ndims:
        # TF fills unknown noise dimensions from x's static shape.
        dims = [x.shape[i].value if d is None else d for i, d in enumerate(dims)]
    if any(d is None for d in dims):
        return noise_shape
    return dims


def dropout(
    x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: int | None = None, name: str | None = None,
    rate: Any = None,
) -> Tensor:
    """Zeroes each element with probability ``rate`` (= ``1 - keep_prob``) and scales the rest by ``1 / (1 - rate)``.

    Args:
        x: A floating point tensor.
        keep_prob: TF1's probability of keeping an element (a float in ``(0, 1]`` or a scalar tensor).
        noise_shape: Shape of the random keep/drop mask, broadcast against ``x`` (default: ``x``'s shape).
        seed: Op seed (combined with the graph seed, see ``tf.set_random_seed``).
        name: Name scope.
        rate: Probability of dropping an element; give either ``rate`` or ``keep_prob``.

    Raises:
        ValueError: both or neither of ``rate``/``keep_prob``, a rate outside ``[0, 1)``, or integer ``x``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.dropout(tf.ones([1000]), keep_prob=0.5, seed=1)
        ...     with tf.Session() as sess:
        ...         values = sess.run(y)
        >>> sorted(set(values.tolist())), 400 < int((values > 0).sum()) < 600
        ([0.0, 2.0], True)
    """
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
    if keep_prob is None and rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(
                f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: x_dtype={x.dtype}"
            )
        if keep_prob is not None:
            if isinstance(keep_prob, numbers.Real):
                if not 0 < keep_prob <= 1:
                    raise ValueError(
                        f"`keep_prob` must be a float in the range (0, 1]. Received: keep_prob={keep_prob}"
                    )
                rate = 1 - float(keep_prob)
            else:
                keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
                rate = math_ops.subtract(1.0, keep_prob, name="rate")
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError(
                    f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}"
                )
            if rate == 0:
                # Consume the op seed all the same, so later random ops draw what they would with rate > 0.
                random_seed.get_seed(seed)
                return x
            scale: Any = 1.0 / (1.0 - float(rate))
        else:
            rate = convert_to_tensor(rate, dtype=x.dtype, name="rate")
            if rate.shape.ndims not in (None, 0):
                raise ValueError(f"`rate` must be a scalar tensor, got shape {rate.shape}")
            scale = math_ops.divide(1.0, math_ops.subtract(1.0, rate))
        from dtf_notebook.ops import random_ops

        shape = _noise_shape(x, noise_shape)
        random_tensor = random_ops.random_uniform(shape, seed=seed, dtype=x.dtype)
        keep_mask = math_ops.greater_equal(random_tensor, rate)
        ret = math_ops.multiply(math_ops.multiply(x, scale), math_ops.cast(keep_mask, x.dtype), name=scope)
        if noise_shape is None:
            ret.set_shape(x.shape)
        return ret


# ---- convolution and pooling: shared window arithmetic ----------------------------------------------
def _get_sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """TF's normalisation of ``strides``/``ksize``/``dilations``: an int, n values or n + 2 values."""
    if value is None:
        value = [1]
    elif isinstance(value, Tensor):
        v = constant_value(value)
        if v is None:
            raise ValueError(f"{name} must be known while building the graph, got {value!r}")
        value = v.tolist()
    elif isinstance(value, numbers.Integral):
        value = [value]
    value = [int(v) for v in value]
    if len(value) == n + 2:
        return value
    if len(value) == 1:
        value = value * n
    elif len(value) != n:
        raise ValueError(
            f"{name} should be of length 1, {n} or {n + 2}. Received: {name}={value} of length {len(value)}"
        )
    return [1, 1] + value if channel_index == 1 else [1] + value + [1]


def _padding_attrs(padding: Any, data_format: str) -> tuple[str, list[int]]:
    """(padding mode, explicit_paddings): a list of [before, after] pairs per dimension means EXPLICIT."""
    if isinstance(padding, str | bytes):
        mode = padding.decode() if isinstance(padding, bytes) else padding
        mode = mode.upper()
        if mode not in ("SAME", "VALID"):
            raise ValueError(f"Attr 'padding' passed string '{padding}' not in: \"SAME\", \"VALID\", \"EXPLICIT\".")
        return mode, []
    try:
        pairs = [[int(a), int(b)] for a, b in padding]
    except (TypeError, ValueError):
        raise ValueError(
            f"padding must be 'SAME', 'VALID' or a list of [before, after] pairs, got {padding!r}"
        ) from None
    if len(pairs) != 4:
        raise ValueError(f"When padding is explicit, it must be a list of 4 [before, after] pairs, got {padding!r}")
    batch, channel = (0, 1) if data_format == "NCHW" else (0, 3)
    if pairs[batch] != [0, 0] or pairs[channel] != [0, 0]:
        raise ValueError(f"Explicit padding of the batch and channel dimensions must be zero, got {padding!r}")
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError(f"Explicit paddings must be nonnegative, got {padding!r}")
    return "EXPLICIT", [v for pair in pairs for v in pair]


def _spatial(values: Sequence[int], nchw: bool) -> tuple[int, int]:
    return (values[2], values[3]) if nchw else (values[1], values[2])


def _check_unit_outer(values: Sequence[int], nchw: bool, what: str, op_type: str) -> None:
    outer = (values[0], values[1]) if nchw else (values[0], values[3])
    if outer != (1, 1):
        if what == "strides":
            raise ValueError(
                f"{op_type}: Current implementation does not yet support strides in the batch and depth dimensions."
            )
        raise ValueError(f"{op_type}: {what} in the batch and depth dimensions must be 1, got {list(values)}")


def _out_size(
    size: int | None, k: int | None, stride: int, dilation: int, mode: str, pads: Sequence[int]
) -> int | None:
    if size is None:
        return None
    if mode == "SAME":
        return -(-size // stride)
    if k is None:
        return None
    eff = (k - 1) * dilation + 1
    total = size + (pads[0] + pads[1] if mode == "EXPLICIT" else 0)
    out = (total - eff) // stride + 1
    if out < 0 or total < eff:
        raise ValueError(
            f"Computed output size would be negative: {(total - eff) // stride + 1} [input_size: {size}, "
            f"effective_filter_size: {eff}, stride: {stride}]"
        )
    return out


class _Window:
    """A conv/pool node's spatial attrs, bound once; ``pads`` caches TF's padding per input size.

    ``pads(h, w, kh, kw)`` gives ``(top, bottom, left, right)``: for SAME, the total padding that makes
    the output ``ceil(size / stride)``, with the odd element after (TF's rule).
    """

    __slots__ = ("nchw", "stride", "dilation", "mode", "explicit", "_cache")

    def __init__(self, op: Any) -> None:
        self.nchw = op.get_attr("data_format") == "NCHW"
        self.stride = _spatial(op.get_attr("strides"), self.nchw)
        dilations = op.attrs.get("dilations") or [1, 1, 1, 1]
        self.dilation = _spatial(dilations, self.nchw)
        self.mode = op.get_attr("padding")
        explicit = op.attrs.get("explicit_paddings") or []
        if self.mode == "EXPLICIT":
            h, w = (2, 3) if self.nchw else (1, 2)
            self.explicit = (explicit[2 * h], explicit[2 * h + 1], explicit[2 * w], explicit[2 * w + 1])
        else:
            self.explicit = (0, 0, 0, 0)
        self._cache: dict[tuple[int, int, int, int], tuple[int, int, int, int]] = {}

    def pads(self, h: int, w: int, kh: int, kw: int) -> tuple[int, int, int, int]:
        key = (h, w, kh, kw)
        cached = self._cache.get(key)
        if cached is None:
            if self.mode == "SAME":
                cached = self._same(h, kh, 0) + self._same(w, kw, 1)
            else:
                cached = self.explicit
            self._cache[key] = cached
        return cached

    def _same(self, size: int, k: int, axis: int) -> tuple[int, int]:
        stride, eff = self.stride[axis], (k - 1) * self.dilation[axis] + 1
        total = max((-(-size // stride) - 1) * stride + eff - size, 0)
        return total // 2, total - total // 2

    def to_nchw(self, x: torch.Tensor) -> torch.Tensor:
        # A permuted view: an NHWC buffer is exactly torch's channels-last layout, so torch reads it in place.
        return x if self.nchw else x.permute(0, 3, 1, 2)

    def from_nchw(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.nchw else y.permute(0, 2, 3, 1).contiguous()


def _sizes_value(op: Any, index: int) -> list[int] | None:
    """A sizes input's value when it is known while building (bound once instead of read every step)."""
    value = constant_value(op.inputs[index])
    return None if value is None else [int(v) for v in value.reshape(-1)]


# ---- conv2d ----------------------------------------------------------------------------------------
def _conv_attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in ("strides", "padding", "explicit_paddings", "data_format", "dilations",
                                         "use_cudnn_on_gpu")}


def _make_conv_attrs(strides: Any, padding: Any, data_format: Any, dilations: Any, use_cudnn_on_gpu: bool,
                     op_type: str) -> dict[str, Any]:
    fmt = _data_format(data_format)
    channel_index = 1 if fmt == "NCHW" else 3
    strides_ = _get_sequence(strides, 2, channel_index, "strides")
    dilations_ = _get_sequence(dilations, 2, channel_index, "dilations")
    nchw = fmt == "NCHW"
    _check_unit_outer(strides_, nchw, "strides", op_type)
    _check_unit_outer(dilations_, nchw, "dilations", op_type)
    if min(strides_) < 1 or min(dilations_) < 1:
        raise ValueError(f"{op_type}: strides and dilations must be positive, got {strides_} and {dilations_}")
    mode, explicit = _padding_attrs(padding, fmt)
    return {"strides": strides_, "padding": mode, "explicit_paddings": explicit, "data_format": fmt,
            "dilations": dilations_, "use_cudnn_on_gpu": bool(use_cudnn_on_gpu)}


def _explicit_pairs(attrs: dict[str, Any], nchw: bool) -> tuple[list[int], list[int]]:
    if attrs["padding"] != "EXPLICIT":
        return [0, 0], [0, 0]
    p = attrs["explicit_paddings"]
    h, w = (2, 3) if nchw else (1, 2)
    return p[2 * h: 2 * h + 2], p[2 * w: 2 * w + 2]


def _conv_output_shape(attrs: dict[str, Any], input_shape: TensorShape, filter_shape: TensorShape) -> TensorShape:
    """Static NHWC/NCHW output shape of a Conv2D (checks the depths of input and filter agree)."""
    nchw = attrs["data_format"] == "NCHW"
    xs = _with_rank(input_shape, 4).as_list()
    kh, kw, fin, fout = _with_rank(filter_shape, 4).as_list()
    n, h, w, c = (xs[0], xs[2], xs[3], xs[1]) if nchw else xs
    if c is not None and fin is not None and (fin == 0 or c % fin):
        raise ValueError(f"Depth of input ({c}) is not a multiple of input depth of filter ({fin})")
    sh, sw = _spatial(attrs["strides"], nchw)
    dh, dw = _spatial(attrs["dilations"], nchw)
    ph, pw = _explicit_pairs(attrs, nchw)
    oh = _out_size(h, kh, sh, dh, attrs["padding"], ph)
    ow = _out_size(w, kw, sw, dw, attrs["padding"], pw)
    return TensorShape([n, fout, oh, ow] if nchw else [n, oh, ow, fout])


def _conv2d_infer(op: Any) -> list:
    x, f = op.inputs
    return [(x.dtype, _conv_output_shape(op.attrs, x.shape, f.shape))]


def _groups(channels: int, filter_in: int) -> int:
    if filter_in <= 0 or channels % filter_in:
        raise errors.InvalidArgumentError(
            None, None, f"Depth of input ({channels}) is not a multiple of input depth of filter ({filter_in})"
        )
    return channels // filter_in


def _conv2d_kernel(op: Any, ctx: Any):
    win = _Window(op)
    stride, dilation = win.stride, win.dilation
    conv = F.conv2d

    def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(x)
        weight = w.permute(3, 2, 0, 1)
        groups = _groups(x.shape[1], weight.shape[1])
        pt, pb, pl, pr = win.pads(x.shape[2], x.shape[3], weight.shape[2], weight.shape[3])
        if pt == pb and pl == pr:
            y = conv(x, weight, None, stride, (pt, pl), dilation, groups)
        else:
            y = conv(F.pad(x, (pl, pr, pt, pb)), weight, None, stride, 0, dilation, groups)
        return win.from_nchw(y)

    return run


def _conv2d_grad(op: Any, grad: Tensor) -> list:
    x, w = op.inputs
    attrs = _conv_attrs(op)
    return [
        make_op("Conv2DBackpropInput", [array_ops.shape(x), w, grad], attrs).outputs[0],
        make_op("Conv2DBackpropFilter", [x, array_ops.shape(w), grad], attrs).outputs[0],
    ]


op_registry.register_op("Conv2D", infer=_conv2d_infer, kernel=_conv2d_kernel, grad=_conv2d_grad)


def conv2d(
    input: Any, filter: Any = None, strides: Any = None, padding: Any = None,  # noqa: A002 - TF's names
    use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
    name: str | None = None, filters: Any = None,
) -> Tensor:
    """2-D convolution (cross-correlation, as in TF) of a 4-D ``input`` with a ``[h, w, in, out]`` filter.

    Args:
        input: ``[batch, height, width, channels]`` (NHWC) or ``[batch, channels, height, width]`` (NCHW).
        filter: ``[filter_height, filter_width, in_channels, out_channels]``; ``in_channels`` may divide the
            input's channels (grouped convolution).
        strides: An int, 2 ints or 4 ints (in ``data_format`` order, batch and channel strides 1).
        padding: ``"SAME"`` (output size ``ceil(size / stride)``), ``"VALID"``, or explicit
            ``[[0, 0], [top, bottom], [left, right], [0, 0]]`` pairs in ``data_format`` order.
        use_cudnn_on_gpu: Accepted for compatibility.
        data_format: ``"NHWC"`` or ``"NCHW"``.
        dilations: An int, 2 ints or 4 ints: the spacing of the filter taps.
        name: Op name.
        filters: TF2's name for ``filter``.

    Raises:
        ValueError: bad ranks, depths, strides or padding.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.ones([1, 3, 3, 1])
        ...     y = tf.nn.conv2d(x, tf.ones([2, 2, 1, 1]), strides=[1, 1, 1, 1], padding="SAME")
        ...     with tf.Session() as sess:
        ...         print(sess.run(y)[0, :, :, 0])
        [[4. 4. 2.]
         [4. 4. 2.]
         [2. 2. 1.]]
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    filter = filters if filter is None else filter
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs `filter`, `strides` and `padding`.")
    x = convert_to_tensor(input, name="input")
    check_dtype(x, _FLOATS, "Conv2D", "input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    attrs = _make_conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu, "Conv2D")
    return make_op("Conv2D", [x, f], attrs, name=name or "Conv2D").outputs[0]


def _backprop_input_infer(op: Any) -> list:
    sizes, f, dy = op.inputs
    shape = _with_rank(shape_from_tensor(sizes), 4)
    _with_rank(f.shape, 4)
    _with_rank(dy.shape, 4)
    return [(dy.dtype, shape)]


def _backprop_input_kernel(op: Any, ctx: Any):
    win = _Window(op)
    stride, dilation, nchw = win.stride, win.dilation, win.nchw
    static_sizes = _sizes_value(op, 0)
    conv_input = torch.nn.grad.conv2d_input

    def run(sizes: Any, w: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        n, a, b, c = static_sizes if static_sizes is not None else sizes.tolist()
        n, ch, h, wd = (n, a, b, c) if nchw else (n, c, a, b)
        dy = win.to_nchw(dy)
        weight = w.permute(3, 2, 0, 1)
        groups = _groups(ch, weight.shape[1])
        pt, pb, pl, pr = win.pads(h, wd, weight.shape[2], weight.shape[3])
        if pt == pb and pl == pr:
            dx = conv_input((n, ch, h, wd), weight, dy, stride, (pt, pl), dilation, groups)
        else:
            # The gradient of the explicitly padded input, cropped back to the real one.
            dx = conv_input((n, ch, h + pt + pb, wd + pl + pr), weight, dy, stride, 0, dilation, groups)
            dx = dx[:, :, pt: pt + h, pl: pl + wd]
        return win.from_nchw(dx)

    return run


def _backprop_input_grad(op: Any, grad: Tensor) -> list:
    _, f, dy = op.inputs
    attrs = _conv_attrs(op)
    return [
        None,
        make_op("Conv2DBackpropFilter", [grad, array_ops.shape(f), dy], attrs).outputs[0],
        make_op("Conv2D", [grad, f], attrs).outputs[0],
    ]


op_registry.register_op(
    "Conv2DBackpropInput", infer=_backprop_input_infer, kernel=_backprop_input_kernel, grad=_backprop_input_grad
)


def _backprop_filter_infer(op: Any) -> list:
    x, sizes, dy = op.inputs
    _with_rank(x.shape, 4)
    _with_rank(dy.shape, 4)
    return [(x.dtype, _with_rank(shape_from_tensor(sizes), 4))]


def _backprop_filter_kernel(op: Any, ctx: Any):
    win = _Window(op)
    stride, dilation = win.stride, win.dilation
    static_sizes = _sizes_value(op, 1)
    conv_weight = torch.nn.grad.conv2d_weight

    def run(x: torch.Tensor, sizes: Any, dy: torch.Tensor) -> torch.Tensor:
        kh, kw, fin, fout = static_sizes if static_sizes is not None else sizes.tolist()
        x = win.to_nchw(x)
        dy = win.to_nchw(dy)
        groups = _groups(x.shape[1], fin)
        pt, pb, pl, pr = win.pads(x.shape[2], x.shape[3], kh, kw)
        if pt == pb and pl == pr:
            dw = conv_weight(x, (fout, fin, kh, kw), dy, stride, (pt, pl), dilation, groups)
        else:
            dw = conv_weight(F.pad(x, (pl, pr, pt, pb)), (fout, fin, kh, kw), dy, stride, 0, dilation, groups)
        return dw.permute(2, 3, 1, 0).contiguous()

    return run


def _backprop_filter_grad(op: Any, grad: Tensor) -> list:
    x, _, dy = op.inputs
    attrs = _conv_attrs(op)
    return [
        make_op("Conv2DBackpropInput", [array_ops.shape(x), grad, dy], attrs).outputs[0],
        None,
        make_op("Conv2D", [x, grad], attrs).outputs[0],
    ]


op_registry.register_op(
    "Conv2DBackpropFilter", infer=_backprop_filter_infer, kernel=_backprop_filter_kernel, grad=_backprop_filter_grad
)


def _sizes_tensor(sizes: Any, name: str) -> Tensor:
    t = sizes if isinstance(sizes, Tensor) else convert_to_tensor(sizes, dtype=dtypes.int32, name=name)
    check_dtype(t, _INDEX, "Conv2DBackprop", name)
    return t


def conv2d_backprop_input(
    input_sizes: Any, filter: Any = None, out_backprop: Any = None, strides: Any = None,  # noqa: A002
    padding: Any = None, use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
    name: str | None = None, filters: Any = None,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input, given the input's shape ``input_sizes``.

    Arguments are those of :func:`conv2d`; ``out_backprop`` has the convolution's output shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     dx = tf.nn.conv2d_backprop_input([1, 2, 2, 1], tf.ones([2, 2, 1, 1]), tf.ones([1, 1, 1, 1]),
        ...                                      strides=[1, 1, 1, 1], padding="VALID")
        ...     with tf.Session() as sess:
        ...         print(sess.run(dx)[0, :, :, 0])
        [[1. 1.]
         [1. 1.]]
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    filter = filters if filter is None else filter
    dy = convert_to_tensor(out_backprop, name="out_backprop")
    check_dtype(dy, _FLOATS, "Conv2DBackpropInput", "out_backprop")
    f = convert_to_tensor(filter, dtype=dy.dtype, name="filter")
    sizes = _sizes_tensor(input_sizes, "input_sizes")
    attrs = _make_conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu, "Conv2DBackpropInput")
    return make_op("Conv2DBackpropInput", [sizes, f, dy], attrs, name=name or "Conv2DBackpropInput").outputs[0]


def conv2d_backprop_filter(
    input: Any, filter_sizes: Any, out_backprop: Any, strides: Any, padding: Any,  # noqa: A002 - TF's name
    use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv2d`` with respect to its filter, given the filter's shape ``filter_sizes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     dw = tf.nn.conv2d_backprop_filter(tf.ones([1, 2, 2, 1]), [2, 2, 1, 1], tf.ones([1, 1, 1, 1]),
        ...                                       strides=[1, 1, 1, 1], padding="VALID")
        ...     with tf.Session() as sess:
        ...         print(sess.run(dw)[:, :, 0, 0])
        [[1. 1.]
         [1. 1.]]
    """
    x = convert_to_tensor(input, name="input")
    check_dtype(x, _FLOATS, "Conv2DBackpropFilter", "input")
    dy = convert_to_tensor(out_backprop, dtype=x.dtype, name="out_backprop")
    sizes = _sizes_tensor(filter_sizes, "filter_sizes")
    attrs = _make_conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu, "Conv2DBackpropFilter")
    return make_op("Conv2DBackpropFilter", [x, sizes, dy], attrs, name=name or "Conv2DBackpropFilter").outputs[0]


def conv2d_transpose(
    value: Any = None, filter: Any = None, output_shape: Any = None, strides: Any = None,  # noqa: A002
    padding: str = "SAME", data_format: str = "NHWC", name: str | None = None, input: Any = None,  # noqa: A002
    filters: Any = None, dilations: Any = None,
) -> Tensor:
    """The transpose of ``conv2d`` ("deconvolution"): ``conv2d_backprop_input`` of ``value`` into ``output_shape``.

    ``filter`` is ``[height, width, output_channels, in_channels]``.

    Raises:
        ValueError: ``value``'s channels differ from the filter's ``in_channels``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.conv2d_transpose(tf.ones([1, 1, 1, 1]), tf.ones([2, 2, 1, 1]), [1, 2, 2, 1],
        ...                                strides=[1, 1, 1, 1], padding="VALID")
        ...     with tf.Session() as sess:
        ...         print(sess.run(y).shape)
        (1, 2, 2, 1)
    """
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        value = input if value is None else value
        filter = filters if filter is None else filter
        value = convert_to_tensor(value, name="value")
        f = convert_to_tensor(filter, dtype=value.dtype, name="filter")
        fmt = _data_format(data_format)
        channels = value.shape[1 if fmt == "NCHW" else 3] if value.shape.ndims == 4 else Dimension(None)
        if f.shape.ndims == 4 and channels.value is not None and f.shape[3].value not in (None, channels.value):
            raise ValueError(
                f"input channels does not match filter's input channels, {channels.value} != {f.shape[3].value}"
            )
        return conv2d_backprop_input(
            output_shape, f, value, strides, padding, data_format=fmt,
            dilations=(1, 1, 1, 1) if dilations is None else dilations, name=scope,
        )


# ---- pooling ---------------------------------------------------------------------------------------
def _make_pool_attrs(ksize: Any, strides: Any, padding: Any, data_format: Any, op_type: str) -> dict[str, Any]:
    fmt = _data_format(data_format)
    channel_index = 1 if fmt == "NCHW" else 3
    ksize_ = _get_sequence(ksize, 2, channel_index, "ksize")
    strides_ = _get_sequence(strides, 2, channel_index, "strides")
    nchw = fmt == "NCHW"
    if ksize_[0] != 1 or strides_[0] != 1:
        raise ValueError(f"{op_type}: Pooling is not yet supported on the batch dimension.")
    _check_unit_outer(ksize_, nchw, "ksize", op_type)
    _check_unit_outer(strides_, nchw, "strides", op_type)
    if min(ksize_) < 1 or min(strides_) < 1:
        raise ValueError(f"{op_type}: ksize and strides must be positive, got {ksize_} and {strides_}")
    mode, _ = _padding_attrs(padding, fmt)
    if mode == "EXPLICIT":
        raise ValueError(f"{op_type}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return {"ksize": ksize_, "strides": strides_, "padding": mode, "data_format": fmt}


def _pool_output_shape(op: Any, shape: TensorShape) -> TensorShape:
    nchw = op.get_attr("data_format") == "NCHW"
    dims = _with_rank(shape, 4).as_list()
    kh, kw = _spatial(op.get_attr("ksize"), nchw)
    sh, sw = _spatial(op.get_attr("strides"), nchw)
    mode = op.get_attr("padding")
    h_i, w_i = (2, 3) if nchw else (1, 2)
    dims[h_i] = _out_size(dims[h_i], kh, sh, 1, mode, (0, 0))
    dims[w_i] = _out_size(dims[w_i], kw, sw, 1, mode, (0, 0))
    return TensorShape(dims)


def _pool_attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in ("ksize", "strides", "padding", "data_format")}


def _pool_infer(op: Any) -> list:
    x = op.inputs[0]
    return [(x.dtype, _pool_output_shape(op, x.shape))]


def _pool_setup(op: Any) -> tuple[_Window, tuple[int, int]]:
    win = _Window(op)
    return win, _spatial(op.get_attr("ksize"), win.nchw)


def _lowest(dtype: torch.dtype) -> float:
    return float("-inf") if dtype.is_floating_point else torch.iinfo(dtype).min


class _MaxPoolCore:
    """Bound max-pool arithmetic on NCHW tensors, shared by MaxPool, MaxPoolGrad and MaxPoolGradGrad.

    Symmetric SAME padding within half the window uses torch's implicit -inf padding; otherwise the input
    is padded explicitly (then argmax indices refer to the padded input).
    """

    __slots__ = ("win", "ksize")

    def __init__(self, op: Any) -> None:
        self.win, self.ksize = _pool_setup(op)

    def layout(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int], tuple[int, int, int, int] | None]:
        """(input ready to pool, implicit padding, explicit pads or None) for an NCHW input."""
        kh, kw = self.ksize
        pt, pb, pl, pr = self.win.pads(x.shape[2], x.shape[3], kh, kw)
        if pt == pb and pl == pr and 2 * pt <= kh and 2 * pl <= kw:
            return x, (pt, pl), None
        return F.pad(x, (pl, pr, pt, pb), value=_lowest(x.dtype)), (0, 0), (pt, pb, pl, pr)

    def with_indices(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, Any, Any]:
        xp, implicit, explicit = self.layout(x)
        y, idx = F.max_pool2d(xp, self.ksize, self.win.stride, implicit, return_indices=True)
        return xp, y, idx, (implicit, explicit)


def _max_pool_kernel(op: Any, ctx: Any):
    core = _MaxPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.win.stride

    def run(x: torch.Tensor) -> torch.Tensor:
        xp, implicit, _ = core.layout(win.to_nchw(x))
        return win.from_nchw(F.max_pool2d(xp, ksize, stride, implicit))

    return run


def _max_pool_grad_kernel(op: Any, ctx: Any):
    core = _MaxPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.win.stride
    backward = torch.ops.aten.max_pool2d_with_indices_backward

    def run(orig_input: torch.Tensor, orig_output: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(orig_input)
        xp, _, idx, (implicit, explicit) = core.with_indices(x)
        dx = backward(win.to_nchw(grad), xp, ksize, stride, implicit, (1, 1), False, idx)
        if explicit is not None:
            pt, _, pl, _ = explicit
            dx = dx[:, :, pt: pt + x.shape[2], pl: pl + x.shape[3]]
        return win.from_nchw(dx)

    return run


def _max_pool_grad_grad_kernel(op: Any, ctx: Any):
    core = _MaxPoolCore(op)
    win = core.win

    def run(orig_input: torch.Tensor, orig_output: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        _, y, idx, (_, explicit) = core.with_indices(win.to_nchw(orig_input))
        g = win.to_nchw(grad)
        if explicit is not None:
            pt, pb, pl, pr = explicit
            g = F.pad(g, (pl, pr, pt, pb))
        # Each output takes the incoming gradient at its window's argmax.
        picked = g.reshape(g.shape[0], g.shape[1], -1).gather(2, idx.reshape(idx.shape[0], idx.shape[1], -1))
        return win.from_nchw(picked.view_as(y))

    return run


def _max_pool_grad_infer(op: Any) -> list:
    x, y, g = op.inputs
    _with_rank(x.shape, 4)
    return [(x.dtype, x.shape)]


def _max_pool_grad_grad_infer(op: Any) -> list:
    x, y, g = op.inputs
    return [(x.dtype, y.shape.merge_with(_pool_output_shape(op, x.shape)))]


op_registry.register_op(
    "MaxPool", infer=_pool_infer, kernel=_max_pool_kernel,
    grad=lambda op, grad: [make_op("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _pool_attrs(op)).outputs[0]],
)
op_registry.register_op(
    "MaxPoolGrad", infer=_max_pool_grad_infer, kernel=_max_pool_grad_kernel,
    grad=lambda op, grad: [None, None, make_op("MaxPoolGradGrad", [op.inputs[0], op.inputs[1], grad],
                                               _pool_attrs(op)).outputs[0]],
)
op_registry.register_op(
    "MaxPoolGradGrad", infer=_max_pool_grad_grad_infer, kernel=_max_pool_grad_grad_kernel,
    grad=lambda op, grad: [None, None, make_op("MaxPoolGrad", [op.inputs[0], op.inputs[1], grad],
                                               _pool_attrs(op)).outputs[0]],
)


def max_pool(
    value: Any = None, ksize: Any = None, strides: Any = None, padding: Any = None, data_format: str = "NHWC",
    name: str | None = None, input: Any = None,  # noqa: A002 - TF's name
) -> Tensor:
    """Max pooling over ``ksize`` windows of a 4-D tensor; ``SAME`` padding never wins the max.

    Args:
        value: ``[batch, height, width, channels]`` (NHWC) or NCHW tensor (``input`` is an alias).
        ksize: Window size: an int, 2 ints or 4 ints in ``data_format`` order.
        strides: Window stride, same forms as ``ksize``.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NHWC"`` or ``"NCHW"``.
        name: Op name.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
        ...     y = tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        ...     with tf.Session() as sess:
        ...         print(sess.run(y)[0, :, :, 0])
        [[4. 5.]
         [7. 8.]]
    """
    if value is not None and input is not None:
        raise ValueError("Cannot specify both 'value' and 'input'.")
    x = convert_to_tensor(input if value is None else value, name="input")
    check_dtype(x, _REALS, "MaxPool", "input")
    attrs = _make_pool_attrs(ksize, strides, padding, data_format, "MaxPool")
    return make_op("MaxPool", [x], attrs, name=name or "MaxPool").outputs[0]


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: str | None = None) -> Tensor:
    """:func:`max_pool` with ``input`` as the first argument's name.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.max_pool2d(tf.ones([1, 4, 4, 3]), 2, 2, "VALID").shape.as_list()
        [1, 2, 2, 3]
    """
    return max_pool(input, ksize, strides, padding, data_format, name)


class _AvgPoolCore:
    """Bound average-pool arithmetic on NCHW tensors, dividing by the number of real (unpadded) elements.

    VALID and symmetric SAME padding within half the window map onto torch's ``avg_pool2d`` with
    ``count_include_pad=False``; asymmetric SAME padding pads explicitly and divides by a per-size
    count map computed once.
    """

    __slots__ = ("win", "ksize", "_scales")

    def __init__(self, op: Any) -> None:
        self.win, self.ksize = _pool_setup(op)
        self._scales: dict[tuple, torch.Tensor] = {}

    def plan(self, h: int, w: int) -> tuple[tuple[int, int], tuple[int, int, int, int] | None]:
        kh, kw = self.ksize
        pt, pb, pl, pr = self.win.pads(h, w, kh, kw)
        if pt == pb and pl == pr and 2 * pt <= kh and 2 * pl <= kw:
            return (pt, pl), None
        return (0, 0), (pt, pb, pl, pr)

    def scale(self, h: int, w: int, pads: tuple[int, int, int, int], like: torch.Tensor) -> torch.Tensor:
        """``window area / real elements`` per output position (a [1, 1, oh, ow] tensor)."""
        key = (h, w, like.dtype, like.device)
        scale = self._scales.get(key)
        if scale is None:
            pt, pb, pl, pr = pads
            ones = F.pad(torch.ones((1, 1, h, w), dtype=like.dtype, device=like.device), (pl, pr, pt, pb))
            scale = F.avg_pool2d(ones, self.ksize, self.win.stride).reciprocal_()
            self._scales[key] = scale
        return scale


def _avg_pool_kernel(op: Any, ctx: Any):
    core = _AvgPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.win.stride

    def run(x: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(x)
        h, w = x.shape[2], x.shape[3]
        implicit, explicit = core.plan(h, w)
        if explicit is None:
            y = F.avg_pool2d(x, ksize, stride, implicit, False, False)
        else:
            pt, pb, pl, pr = explicit
            y = F.avg_pool2d(F.pad(x, (pl, pr, pt, pb)), ksize, stride) * core.scale(h, w, explicit, x)
        return win.from_nchw(y)

    return run


def _avg_pool_grad_kernel(op: Any, ctx: Any):
    core = _AvgPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.win.stride
    static_sizes = _sizes_value(op, 0)
    backward = torch.ops.aten.avg_pool2d_backward

    def run(sizes: Any, grad: torch.Tensor) -> torch.Tensor:
        n, a, b, c = static_sizes if static_sizes is not None else sizes.tolist()
        n, ch, h, w = (n, a, b, c) if win.nchw else (n, c, a, b)
        g = win.to_nchw(grad)
        implicit, explicit = core.plan(h, w)
        if explicit is None:
            like = g.new_empty(1).expand(n, ch, h, w)
            dx = backward(g, like, ksize, stride, implicit, False, False, None)
        else:
            pt, pb, pl, pr = explicit
            like = g.new_empty(1).expand(n, ch, h + pt + pb, w + pl + pr)
            dx = backward(g * core.scale(h, w, explicit, g), like, ksize, stride, (0, 0), False, True, None)
            dx = dx[:, :, pt: pt + h, pl: pl + w]
        return win.from_nchw(dx)

    return run


def _avg_pool_grad_infer(op: Any) -> list:
    sizes, g = op.inputs
    return [(g.dtype, _with_rank(shape_from_tensor(sizes), 4))]


op_registry.register_op(
    "AvgPool", infer=_pool_infer, kernel=_avg_pool_kernel,
    grad=lambda op, grad: [
        make_op("AvgPoolGrad", [array_ops.shape(op.inputs[0]), grad], _pool_attrs(op)).outputs[0]
    ],
)
op_registry.register_op(
    "AvgPoolGrad", infer=_avg_pool_grad_infer, kernel=_avg_pool_grad_kernel,
    grad=lambda op, grad: [None, make_op("AvgPool", [grad], _pool_attrs(op)).outputs[0]],
)


def avg_pool(
    value: Any = None, ksize: Any = None, strides: Any = None, padding: Any = None, data_format: str = "NHWC",
    name: str | None = None, input: Any = None,  # noqa: A002 - TF's name
) -> Tensor:
    """Average pooling over ``ksize`` windows; with ``SAME`` padding each average counts only real elements.

    Arguments are those of :func:`max_pool`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
        ...     y = tf.nn.avg_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")
        ...     with tf.Session() as sess:
        ...         print(sess.run(y)[0, :, :, 0])
        [[2.  3.5]
         [6.5 8. ]]
    """
    if value is not None and input is not None:
        raise ValueError("Cannot specify both 'value' and 'input'.")
    x = convert_to_tensor(input if value is None else value, name="input")
    check_dtype(x, _FLOATS, "AvgPool", "value")
    attrs = _make_pool_attrs(ksize, strides, padding, data_format, "AvgPool")
    return make_op("AvgPool", [x], attrs, name=name or "AvgPool").outputs[0]


def avg_pool2d(value: Any = None, ksize: Any = None, strides: Any = None, padding: Any = None,
               data_format: str = "NHWC", name: str | None = None, input: Any = None) -> Tensor:  # noqa: A002
    """Another name of :func:`avg_pool`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.avg_pool2d(tf.ones([1, 5, 5, 2]), 2, 2, "SAME").shape.as_list()
        [1, 3, 3, 2]
    """
    return avg_pool(value, ksize, strides, padding, data_format, name, input)


# ---- embedding_lookup -------------------------------------------------------------------------------
def _clip_rows(values: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Rescales each looked-up embedding whose L2 norm exceeds ``max_norm`` (TF's ``clip_by_norm``, safe at 0)."""
    if max_norm is None:
        return values
    ids_rank, values_rank = ids.shape.ndims, values.shape.ndims
    if ids_rank is None or values_rank is None:
        axes: Any = math_ops.range(array_ops.rank(ids), array_ops.rank(values))
    else:
        axes = list(range(ids_rank, values_rank))
    l2sum = math_ops.reduce_sum(math_ops.multiply(values, values), axes, keepdims=True)
    positive = math_ops.greater(l2sum, 0.0)
    # sqrt is taken of 1 where the sum is 0, so its gradient stays finite (TF's trick).
    l2sum_safe = math_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
    l2norm = math_ops.where(positive, math_ops.sqrt(l2sum_safe), l2sum)
    clip = convert_to_tensor(max_norm, dtype=values.dtype, name="max_norm")
    return math_ops.divide(math_ops.multiply(values, clip), math_ops.maximum(l2norm, clip))


def _partitioned_rows(tables: list[Any], ids: Tensor, partition_strategy: str) -> Tensor:
    """Looks ``ids`` up in a table split row-wise into ``tables`` (TF's "mod" or "div" assignment of ids).

    Each partition is gathered on its own device at the row each id would have there (clipped into range),
    and the partition that owns each id is selected, so only ``len(ids)`` rows leave every partition and
    each partition's gradient stays an ``IndexedSlices``.
    """
    n = len(tables)
    sizes, ranks = [], []
    for t in tables:
        shape = t.get_shape()
        sizes.append(shape[0].value if shape.ndims else None)
        ranks.append(shape.ndims)
    if any(size is None for size in sizes) or len(set(ranks)) != 1:
        raise ValueError(
            "A partitioned embedding_lookup needs partitions of one known rank with known numbers of rows, got "
            f"shapes {[str(t.get_shape()) for t in tables]}"
        )
    if partition_strategy == "mod":
        part, row = math_ops.floormod(ids, n), math_ops.floordiv(ids, n)
    else:
        per, extras = divmod(sum(sizes), n)
        if per == 0:
            raise ValueError(f"The 'div' strategy needs at least {n} rows in all, got {sum(sizes)}")
        # The first `extras` partitions hold per + 1 consecutive ids, the others per.
        shifted = math_ops.subtract(ids, extras)
        part = math_ops.maximum(math_ops.floordiv(ids, per + 1), math_ops.floordiv(shifted, per))
        row = math_ops.where(
            math_ops.less(part, extras), math_ops.floormod(ids, per + 1), math_ops.floormod(shifted, per)
        )
    result = None
    for k, table in enumerate(tables):
        with colocate_with(table):
            rows = array_ops.gather(table, math_ops.clip_by_value(row, 0, sizes[k] - 1))
        if result is None:
            result = rows
            continue
        owned = math_ops.equal(part, k)
        for _ in range(ranks[0] - 1):
            owned = array_ops.expand_dims(owned, -1)
        result = math_ops.where(array_ops.broadcast_to(owned, array_ops.shape(rows)), rows, result)
    return result


def embedding_lookup(
    params: Any, ids: Any, partition_strategy: str = "mod", name: str | None = None,
    validate_indices: bool = True, max_norm: Any = None,
) -> Tensor:
    """Rows of the embedding table ``params`` for each id in ``ids`` (a gather placed with ``params``).

    Args:
        params: One embedding table (a Variable or tensor), a list holding one, or a list of several
            tables that together hold the rows (a partitioned table, e.g. one per parameter server).
        ids: int32/int64 tensor of row indices, any shape.
        partition_strategy: How ids map to partitions: ``"mod"`` (id ``i`` is row ``i // n`` of
            partition ``i % n``) or ``"div"`` (consecutive ids per partition). Unused with one table.
        name: Name scope.
        validate_indices: Accepted for compatibility (ids are checked when a single table is gathered).
        max_norm: If set, rows whose L2 norm is larger are scaled down to this norm.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``. Its gradient for each table is an
        ``IndexedSlices``, so training updates only the looked-up rows.

    Raises:
        ValueError: no params, partitions of unknown sizes, or an unknown partition strategy.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     table = tf.constant([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
        ...     rows = tf.nn.embedding_lookup(table, [[2, 0]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(rows))
        [[[2. 2.]
          [0. 0.]]]
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    tables = list(params) if isinstance(params, list | tuple) else [params]
    if not tables or any(t is None for t in tables):
        raise ValueError("Need at least one param")
    tables = [t if isinstance(t, Tensor) or hasattr(t, "_as_graph_element") else convert_to_tensor(t, name="params")
              for t in tables]
    with name_scope(name, "embedding_lookup", tables + [ids]) as scope:
        ids_t = convert_to_tensor(ids, name="ids")
        check_dtype(ids_t, _INDEX, "embedding_lookup", "ids")
        if len(tables) > 1:
            return identity(_clip_rows(_partitioned_rows(tables, ids_t, partition_strategy), ids_t, max_norm),
                            name=scope)
        with colocate_with(tables[0]):
            result = _clip_rows(array_ops.gather(tables[0], ids_t, name=scope), ids_t, max_norm)
        # The result itself is not pinned to the table's device (as in TF).
        return identity(result)
