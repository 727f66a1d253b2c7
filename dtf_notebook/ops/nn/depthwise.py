"""Depthwise and separable convolution of ``tf.nn``, and ``conv1d``.

``DepthwiseConv2dNative`` (filter ``[h, w, in_channels, multiplier]``; output channel ``i * multiplier + m``)
and its two gradient ops keep TF's attrs; a kernel is torch's grouped convolution with one group per
input channel. ``separable_conv2d`` and ``conv1d`` are TF's composites: a depthwise op followed by a
1x1 ``Conv2D``, and a ``Conv2D`` over a height of 1.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.ones([1, 4, 4, 3])
    ...     y = tf.nn.separable_conv2d(x, tf.ones([3, 3, 3, 2]), tf.ones([1, 1, 6, 5]), [1, 1, 1, 1], "SAME")
    ...     y.shape.as_list(), [g.op.type for g in tf.gradients(y, x)]
    ([1, 4, 4, 5], ['DepthwiseConv2dNativeBackpropInput'])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.nn.common import FLOATS, with_rank
from dtf_notebook.ops.nn.conv import conv2d
from dtf_notebook.ops.nn.conv_window import (
    Window,
    crop,
    get_sequence,
    out_size,
    pad,
    padded_size,
    sizes_value,
    spatial,
    window_attrs,
)
from dtf_notebook.ops.op_helpers import check_dtype, make_op, shape_from_tensor

_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations")


def _attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _make_attrs(strides: Any, padding: Any, data_format: Any, dilations: Any, op_type: str) -> dict[str, Any]:
    fmt, strides_, dilations_, mode, explicit = window_attrs(
        op_type, data_format, ("strides", strides), ("dilations", dilations), padding, pool=False
    )
    return {
        "strides": strides_,
        "padding": mode,
        "explicit_paddings": explicit,
        "data_format": fmt,
        "dilations": dilations_,
    }


def _weight(w: torch.Tensor) -> torch.Tensor:
    # [h, w, in, mult] -> torch's grouped [in * mult, 1, h, w] (output channel i * mult + m).
    kh, kw, cin, mult = w.shape
    return w.permute(2, 3, 0, 1).reshape(cin * mult, 1, kh, kw)


def _infer(op: Any) -> list:
    x, f = op.inputs
    nchw = op.get_attr("data_format") == "NCHW"
    xs = with_rank(x.shape, 4).as_list()
    kh, kw, cin, mult = with_rank(f.shape, 4).as_list()
    n, h, w, c = (xs[0], xs[2], xs[3], xs[1]) if nchw else xs
    if c is not None and cin is not None and c != cin:
        raise ValueError(f"DepthwiseConv2dNative: input depth {c} does not match filter's in_channels {cin}")
    sh, sw = spatial(op.get_attr("strides"), nchw)
    dh, dw = spatial(op.get_attr("dilations"), nchw)
    pads = op.get_attr("explicit_paddings") or [0] * 8
    hi, wi = (2, 3) if nchw else (1, 2)
    oh = out_size(h, kh, sh, dh, op.get_attr("padding"), pads[2 * hi : 2 * hi + 2])
    ow = out_size(w, kw, sw, dw, op.get_attr("padding"), pads[2 * wi : 2 * wi + 2])
    c = c if c is not None else cin
    out_c = c * mult if c is not None and mult is not None else None
    return [(x.dtype, TensorShape([n, out_c, oh, ow] if nchw else [n, oh, ow, out_c]))]


def _kernel(op: Any, ctx: Any):
    win = Window(op)

    def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(x)
        weight = _weight(w)
        implicit, explicit = win.split(x.shape[2], x.shape[3], weight.shape[2], weight.shape[3])
        y = F.conv2d(pad(x, explicit), weight, None, win.stride, implicit, win.dilation, x.shape[1])
        return win.from_nchw(y)

    return run


def _grad(op: Any, grad: Tensor) -> list:
    x, w = op.inputs
    attrs = _attrs(op)
    return [
        make_op("DepthwiseConv2dNativeBackpropInput", [array_ops.shape(x), w, grad], attrs).outputs[0],
        make_op("DepthwiseConv2dNativeBackpropFilter", [x, array_ops.shape(w), grad], attrs).outputs[0],
    ]


op_registry.register_op("DepthwiseConv2dNative", infer=_infer, kernel=_kernel, grad=_grad)


def _backprop_input_kernel(op: Any, ctx: Any):
    win = Window(op)
    static_sizes = sizes_value(op, 0)

    def run(sizes: Any, w: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        n, ch, h, wd = win.input_dims(static_sizes, sizes)
        weight = _weight(w)
        implicit, explicit = win.split(h, wd, weight.shape[2], weight.shape[3])
        size = padded_size(n, ch, h, wd, explicit)
        dx = torch.nn.grad.conv2d_input(size, weight, win.to_nchw(dy), win.stride, implicit, win.dilation, ch)
        return win.from_nchw(crop(dx, explicit, h, wd))

    return run


def _backprop_filter_kernel(op: Any, ctx: Any):
    win = Window(op)
    static_sizes = sizes_value(op, 1)

    def run(x: torch.Tensor, sizes: Any, dy: torch.Tensor) -> torch.Tensor:
        kh, kw, cin, mult = static_sizes if static_sizes is not None else sizes.tolist()
        x = win.to_nchw(x)
        implicit, explicit = win.split(x.shape[2], x.shape[3], kh, kw)
        dw = torch.nn.grad.conv2d_weight(
            pad(x, explicit), (cin * mult, 1, kh, kw), win.to_nchw(dy), win.stride, implicit, win.dilation, cin
        )
        return dw.reshape(cin, mult, kh, kw).permute(2, 3, 0, 1).contiguous()

    return run


op_registry.register_op(
    "DepthwiseConv2dNativeBackpropInput",
    infer=lambda op: [(op.inputs[2].dtype, with_rank(shape_from_tensor(op.inputs[0]), 4))],
    kernel=_backprop_input_kernel,
    grad=lambda op, g: [
        None,
        make_op(
            "DepthwiseConv2dNativeBackpropFilter", [g, array_ops.shape(op.inputs[1]), op.inputs[2]], _attrs(op)
        ).outputs[0],
        make_op("DepthwiseConv2dNative", [g, op.inputs[1]], _attrs(op)).outputs[0],
    ],
)
op_registry.register_op(
    "DepthwiseConv2dNativeBackpropFilter",
    infer=lambda op: [(op.inputs[0].dtype, with_rank(shape_from_tensor(op.inputs[1]), 4))],
    kernel=_backprop_filter_kernel,
    grad=lambda op, g: [
        make_op(
            "DepthwiseConv2dNativeBackpropInput", [array_ops.shape(op.inputs[0]), g, op.inputs[2]], _attrs(op)
        ).outputs[0],
        None,
        make_op("DepthwiseConv2dNative", [op.inputs[0], g], _attrs(op)).outputs[0],
    ],
)


# ---- builders ---------------------------------------------------------------------------------------
def depthwise_conv2d_native(
    input: Any,  # noqa: A002 - TF's names
    filter: Any,  # noqa: A002
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """Depthwise 2-D convolution: each input channel convolved with its own ``multiplier`` filters.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.depthwise_conv2d_native(tf.ones([1, 3, 3, 2]), tf.ones([2, 2, 2, 3]), [1, 1, 1, 1],
        ...                                   "VALID").shape.as_list()
        [1, 2, 2, 6]
    """
    x = convert_to_tensor(input, name="input")
    check_dtype(x, FLOATS, "DepthwiseConv2dNative", "input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    attrs = _make_attrs(strides, padding, data_format, dilations, "DepthwiseConv2dNative")
    return make_op("DepthwiseConv2dNative", [x, f], attrs, name=name or "DepthwiseConv2dNative").outputs[0]


def depthwise_conv2d(
    input: Any,  # noqa: A002 - TF's names
    filter: Any,  # noqa: A002
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """TF1's ``tf.nn.depthwise_conv2d``: :func:`depthwise_conv2d_native` with ``rate`` as the dilation.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.depthwise_conv2d(tf.ones([1, 2, 2, 1]), tf.ones([2, 2, 1, 1]), [1, 1, 1, 1], "VALID")
        ...     print(sess.run(y).reshape(-1))
        [4.]
    """
    rate = dilations if rate is None else rate
    with name_scope(name, "depthwise", [input, filter]) as scope:
        return depthwise_conv2d_native(
            input, filter, strides, padding, data_format or "NHWC", _rate(rate, data_format), name=scope
        )


def _rate(rate: Any, data_format: Any) -> list[int]:
    return get_sequence(rate, 2, 1 if data_format == "NCHW" else 3, "rate")


def separable_conv2d(
    input: Any,  # noqa: A002 - TF's names
    depthwise_filter: Any,
    pointwise_filter: Any,
    strides: Any,
    padding: Any,
    rate: Any = None,
    name: str | None = None,
    data_format: str | None = None,
    dilations: Any = None,
) -> Tensor:
    """A depthwise convolution followed by a 1x1 ``Conv2D`` mixing channels (TF's composite).

    Args:
        input: 4-D ``[batch, height, width, in_channels]`` (NHWC) or NCHW.
        depthwise_filter: ``[h, w, in_channels, multiplier]``.
        pointwise_filter: ``[1, 1, in_channels * multiplier, out_channels]``.
        strides: 4 ints: the depthwise stride.
        padding: ``"SAME"`` or ``"VALID"``.
        rate: The depthwise dilation (``dilations`` is TF2's name).
        name: Name scope.
        data_format: ``"NHWC"`` or ``"NCHW"``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.separable_conv2d(tf.ones([1, 2, 2, 1]), tf.ones([2, 2, 1, 2]), tf.ones([1, 1, 2, 1]),
        ...                                [1, 1, 1, 1], "VALID")
        ...     print(sess.run(y).reshape(-1))
        [8.]
    """
    rate = dilations if rate is None else rate
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        x = convert_to_tensor(input, name="input")
        dw = convert_to_tensor(depthwise_filter, dtype=x.dtype, name="depthwise_filter")
        pw = convert_to_tensor(pointwise_filter, dtype=x.dtype, name="pointwise_filter")
        if pw.shape.ndims == 4 and pw.shape.as_list()[:2] not in ([1, 1], [None, None]):
            raise ValueError(f"Pointwise filter must be 1x1, got shape {pw.shape}")
        fmt = data_format or "NHWC"
        depthwise = depthwise_conv2d_native(x, dw, strides, padding, fmt, _rate(rate, fmt), name="depthwise")
        return conv2d(depthwise, pw, [1, 1, 1, 1], padding="VALID", data_format=fmt, name=scope)


def conv1d(
    value: Any = None,
    filters: Any = None,
    stride: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool | None = None,
    data_format: str | None = None,
    name: str | None = None,
    input: Any = None,  # noqa: A002 - TF's names
    dilations: Any = None,
) -> Tensor:
    """1-D convolution of ``[batch, width, channels]`` with ``[width, in, out]`` filters, as a ``Conv2D``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.conv1d(tf.ones([1, 4, 1]), tf.ones([2, 1, 1]), stride=1, padding="VALID")
        ...     print(sess.run(y).reshape(-1))
        [2. 2. 2.]
    """
    if value is not None and input is not None:
        raise ValueError("Cannot specify both 'value' and 'input'.")
    value = input if value is None else value
    with name_scope(name, "conv1d", [value, filters]) as scope:
        if data_format in (None, "NHWC", "NWC"):
            fmt, spatial_start, channel = "NHWC", -3, 2
        elif data_format in ("NCHW", "NCW"):
            fmt, spatial_start, channel = "NCHW", -2, 1
        else:
            raise ValueError(f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
        strides = [1] + get_sequence(stride, 1, channel, "stride")
        dilation = [1] + get_sequence(dilations, 1, channel, "dilations")
        x = array_ops.expand_dims(convert_to_tensor(value, name="value"), spatial_start)
        f = array_ops.expand_dims(convert_to_tensor(filters, dtype=x.dtype, name="filters"), 0)
        result = conv2d(x, f, strides, padding, use_cudnn_on_gpu is not False, fmt, dilation, name=scope)
        return array_ops.squeeze(result, [spatial_start])


__all__ = ["depthwise_conv2d_native", "depthwise_conv2d", "separable_conv2d", "conv1d"]
