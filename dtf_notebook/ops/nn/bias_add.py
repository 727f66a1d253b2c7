"""``tf.nn.bias_add`` (the ``BiasAdd`` and ``BiasAddGrad`` ops, NHWC or NCHW) and ``tf.nn.xw_plus_b``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.nn.bias_add(tf.zeros([2, 3, 4, 5]), tf.ones([3]), data_format="NCHW")
    ...     tf.gradients(y, y.op.inputs[1])[0].op.type
    'BiasAddGrad'
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.nn.common import REALS, check_data_format, with_rank, with_rank_at_least
from dtf_notebook.ops.op_helpers import check_dtype, make_op


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
        check_dtype(value, REALS, "BiasAdd", "value")
        fmt = check_data_format(data_format)
        return make_op("BiasAdd", [value, bias], {"data_format": fmt}, name=scope).outputs[0]


def _merge_dim(a: int | None, b: int | None) -> int | None:
    if a is not None and b is not None and a != b:
        raise ValueError(f"Dimensions must be equal, but are {a} and {b}")
    return a if a is not None else b


def _bias_add_infer(op: Any) -> list:
    value, bias = op.inputs
    nchw = op.get_attr("data_format") == "NCHW"
    shape = with_rank_at_least(value.shape, 3 if nchw else 2)
    bias_shape = with_rank(bias.shape, 1)
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
    "BiasAdd",
    infer=_bias_add_infer,
    kernel=_bias_add_kernel,
    grad=lambda op, grad: [grad, _bias_add_grad_op(grad, op.get_attr("data_format"))],
)


def _bias_add_grad_infer(op: Any) -> list:
    g = op.inputs[0]
    nchw = op.get_attr("data_format") == "NCHW"
    shape = with_rank_at_least(g.shape, 3 if nchw else 2)
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
