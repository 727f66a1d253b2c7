"""What the 2-D and 3-D convolution ops share: the grouped-channel count of their kernels, the shape functions of
their two gradient ops, and the gradients of all three (each op's gradient is built from the other two, as TF
builds them).

The builders of the gradient ops (``conv2d_backprop_input``, ``conv3d_backprop_filter_v2``, the depthwise ones)
convert and check their arguments the same way: :func:`backprop_input` and :func:`backprop_filter`.

Example:
    >>> conv_grad, input_grad, filter_grad = family_grads("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", [])
    >>> groups(6, 3)
    2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.nn.common import FLOATS, INDEX, with_rank
from dtf_notebook.ops.op_helpers import check_dtype, make_op, shape_from_tensor

Grad = Callable[[Any, Any], list]
Infer = Callable[[Any], list]


def groups(channels: int, filter_in: int) -> int:
    """How many groups a convolution of ``channels`` input channels with a filter of ``filter_in`` input channels
    has; a run-time InvalidArgumentError when they do not divide (TF's message).

    Example:
        >>> groups(4, 4), groups(4, 2)
        (1, 2)
    """
    if filter_in <= 0 or channels % filter_in:
        raise errors.InvalidArgumentError(
            None, None, f"Depth of input ({channels}) is not a multiple of input depth of filter ({filter_in})"
        )
    return channels // filter_in


def family_grads(conv: str, backprop_input: str, backprop_filter: str, attr_names: Sequence[str]) -> tuple:
    """The gradient functions of ``conv`` (inputs ``x, w``), ``backprop_input`` (``sizes, w, dy``) and
    ``backprop_filter`` (``x, sizes, dy``); the ops they build carry the differentiated op's ``attr_names``.

    Example:
        >>> import dtf_notebook as tf
        >>> conv_grad, _, _ = family_grads("Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", [])
        >>> callable(conv_grad)
        True
    """

    def attrs(op: Any) -> dict[str, Any]:
        return {k: op.get_attr(k) for k in attr_names}

    def conv_grad(op: Any, grad: Any) -> list:
        x, w = op.inputs
        a = attrs(op)
        return [
            make_op(backprop_input, [array_ops.shape(x), w, grad], a).outputs[0],
            make_op(backprop_filter, [x, array_ops.shape(w), grad], a).outputs[0],
        ]

    def input_grad(op: Any, grad: Any) -> list:
        _, f, dy = op.inputs
        a = attrs(op)
        return [
            None,
            make_op(backprop_filter, [grad, array_ops.shape(f), dy], a).outputs[0],
            make_op(conv, [grad, f], a).outputs[0],
        ]

    def filter_grad(op: Any, grad: Any) -> list:
        x, _, dy = op.inputs
        a = attrs(op)
        return [
            make_op(backprop_input, [array_ops.shape(x), grad, dy], a).outputs[0],
            None,
            make_op(conv, [x, grad], a).outputs[0],
        ]

    return conv_grad, input_grad, filter_grad


def backprop_infers(rank: int) -> tuple[Infer, Infer]:
    """The shape functions of a convolution's two gradient ops at ``rank`` (4 or 5): the input gradient has the
    shape ``sizes`` holds and ``dy``'s dtype, the filter gradient the shape ``sizes`` holds and ``x``'s dtype.

    Example:
        >>> input_infer, filter_infer = backprop_infers(4)
        >>> callable(input_infer), callable(filter_infer)
        (True, True)
    """

    def input_infer(op: Any) -> list:
        sizes, f, dy = op.inputs
        shape = with_rank(shape_from_tensor(sizes), rank)
        with_rank(f.shape, rank)
        with_rank(dy.shape, rank)
        return [(dy.dtype, shape)]

    def filter_infer(op: Any) -> list:
        x, sizes, dy = op.inputs
        with_rank(x.shape, rank)
        with_rank(dy.shape, rank)
        return [(x.dtype, with_rank(shape_from_tensor(sizes), rank))]

    return input_infer, filter_infer


def _sizes(value: Any, op_type: str, arg: str, const_name: str | None) -> Tensor:
    sizes = value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtypes.int32, name=const_name)
    check_dtype(sizes, INDEX, op_type, arg)
    return sizes


def backprop_input(
    op_type: str,
    input_sizes: Any,
    filter: Any,  # noqa: A002 - TF's name
    out_backprop: Any,
    attrs: Callable[[], dict[str, Any]],
    name: str | None,
    sizes_name: str | None = None,
) -> Tensor:
    """Builds ``op_type``, a convolution's input gradient, from the input's shape ``input_sizes`` (int32 or
    int64), the filter and ``out_backprop`` (a float tensor, whose dtype the filter takes); ``attrs()`` makes and
    checks its attrs; ``sizes_name`` names a constant made of ``input_sizes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     attrs = {"strides": [1, 1, 1, 1, 1], "padding": "VALID", "data_format": "NDHWC",
        ...              "dilations": [1, 1, 1, 1, 1]}
        ...     dx = backprop_input("Conv3DBackpropInputV2", [1, 2, 2, 2, 1], tf.ones([2, 2, 2, 1, 1]),
        ...                         tf.ones([1, 1, 1, 1, 1]), lambda: attrs, None)
        ...     dx.op.type, dx.shape.as_list()
        ('Conv3DBackpropInputV2', [1, 2, 2, 2, 1])
    """
    dy = convert_to_tensor(out_backprop, name="out_backprop")
    check_dtype(dy, FLOATS, op_type, "out_backprop")
    f = convert_to_tensor(filter, dtype=dy.dtype, name="filter")
    sizes = _sizes(input_sizes, op_type, "input_sizes", sizes_name)
    return make_op(op_type, [sizes, f, dy], attrs(), name=name or op_type).outputs[0]


def backprop_filter(
    op_type: str,
    input: Any,  # noqa: A002 - TF's name
    filter_sizes: Any,
    out_backprop: Any,
    attrs: Callable[[], dict[str, Any]],
    name: str | None,
    sizes_name: str | None = None,
) -> Tensor:
    """Builds ``op_type``, a convolution's filter gradient, from the input (a float tensor, whose dtype
    ``out_backprop`` takes), the filter's shape ``filter_sizes`` and ``out_backprop``; as :func:`backprop_input`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     attrs = {"strides": [1, 1, 1, 1, 1], "padding": "VALID", "data_format": "NDHWC",
        ...              "dilations": [1, 1, 1, 1, 1]}
        ...     dw = backprop_filter("Conv3DBackpropFilterV2", tf.ones([1, 2, 2, 2, 1]), [2, 2, 2, 1, 1],
        ...                          tf.ones([1, 1, 1, 1, 1]), lambda: attrs, None)
        ...     dw.op.type, dw.shape.as_list()
        ('Conv3DBackpropFilterV2', [2, 2, 2, 1, 1])
    """
    x = convert_to_tensor(input, name="input")
    check_dtype(x, FLOATS, op_type, "input")
    dy = convert_to_tensor(out_backprop, dtype=x.dtype, name="out_backprop")
    sizes = _sizes(filter_sizes, op_type, "filter_sizes", sizes_name)
    return make_op(op_type, [x, sizes, dy], attrs(), name=name or op_type).outputs[0]
