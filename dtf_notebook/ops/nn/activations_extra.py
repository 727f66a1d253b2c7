"""More activations of ``tf.nn``: ``selu`` (the ``Selu``/``SeluGrad`` ops), and TF's composites ``swish``
(``silu``), ``crelu`` and ``relu_layer``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([-1.0, 2.0])
    ...     tf.gradients(selu(x), x)[0].op.type, crelu(x).shape.as_list()
    ('SeluGrad', [4])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.nn.activations import relu
from dtf_notebook.ops.nn.bias_add import bias_add
from dtf_notebook.ops.nn.common import FLOATS
from dtf_notebook.ops.op_helpers import check_dtype, make_op, same_as_input

__all__ = ["selu", "swish", "silu", "crelu", "relu_layer"]

# SELU's constants (Klambauer et al. 2017), as TF's kernel writes them.
_SCALE = 1.0507009873554804934193349852946
_SCALE_ALPHA = 1.7580993408473768599402175208123


def selu(features: Any, name: str | None = None) -> Tensor:
    """Scaled ELU: ``scale * features`` if positive, else ``scale * alpha * (exp(features) - 1)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.selu([-1.0, 2.0])).round(4))
        [-1.1113  2.1014]
    """
    x = convert_to_tensor(features, name="features")
    check_dtype(x, FLOATS, "Selu", "features")
    return make_op("Selu", [x], name=name or "Selu").outputs[0]


def _selu_grad_kernel(op: Any, ctx: Any):
    def run(grad: torch.Tensor, outputs: torch.Tensor) -> torch.Tensor:
        # d selu / dx = selu(x) + scale * alpha where x < 0 (TF feeds the op's outputs), else scale.
        return torch.where(outputs < 0, grad * (outputs + _SCALE_ALPHA), grad * _SCALE)

    return run


def _selu_grad_grad(op: Any, grad: Tensor) -> list:
    outputs = op.inputs[1]
    negative = math_ops.less(outputs, array_ops.zeros_like(outputs))
    return [
        make_op("SeluGrad", [grad, outputs]).outputs[0],
        where(negative, math_ops.multiply(grad, op.inputs[0]), array_ops.zeros_like(outputs)),
    ]


op_registry.register_op(
    "Selu",
    infer=same_as_input,
    kernel=lambda op, ctx: F.selu,
    grad=lambda op, grad: [make_op("SeluGrad", [grad, op.outputs[0]]).outputs[0]],
)
op_registry.register_op(
    "SeluGrad",
    infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape.merge_with(op.inputs[1].shape))],
    kernel=_selu_grad_kernel,
    grad=_selu_grad_grad,
)


def swish(features: Any, beta: Any = 1.0, name: str | None = None) -> Tensor:
    """Swish (SiLU): ``features * sigmoid(beta * features)``; ``beta`` may be a tensor and gets a gradient.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.swish([-1.0, 0.0, 2.0])).round(4))
        [-0.2689  0.      1.7616]
    """
    with name_scope(name, "swish", [features]):
        x = convert_to_tensor(features, name="features")
        b = math_ops.cast(convert_to_tensor(beta, name="beta"), x.dtype)
        return math_ops.multiply(x, math_ops.sigmoid(math_ops.multiply(b, x)))


def silu(features: Any, beta: Any = 1.0, name: str | None = None) -> Tensor:
    """Another name of :func:`swish`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.silu([1.0], beta=2.0)).round(4))
        [0.8808]
    """
    return swish(features, beta, name)


def crelu(features: Any, name: str | None = None, axis: int = -1) -> Tensor:
    """Concatenated ReLU: ``relu(concat([features, -features], axis))`` (twice the depth along ``axis``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.crelu([[-1.0, 2.0]])))
        [[0. 2. 1. 0.]]
    """
    with name_scope(name, "CRelu", [features]) as scope:
        x = convert_to_tensor(features, name="features")
        c = array_ops.concat([x, math_ops.negative(x)], axis, name=scope)
        return relu(c)


def relu_layer(x: Any, weights: Any, biases: Any, name: str | None = None) -> Tensor:
    """``relu(matmul(x, weights) + biases)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.relu_layer([[1.0, 2.0]], [[1.0], [-1.0]], [0.5])))
        [[0.]]
    """
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(weights, name="weights")
        biases = convert_to_tensor(biases, name="biases")
        return relu(bias_add(math_ops.matmul(x, weights), biases), name=scope)
