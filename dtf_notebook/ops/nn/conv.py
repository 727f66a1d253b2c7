"""2-D convolution of ``tf.nn``: ``Conv2D`` and its two gradient ops, and ``conv2d_transpose``.

The three ops (``Conv2D``, ``Conv2DBackpropInput``, ``Conv2DBackpropFilter``) share TF's attrs
(``strides``, ``padding``, ``explicit_paddings``, ``data_format``, ``dilations``,
``use_cudnn_on_gpu``), and each one's gradient is built from the other two. Filters are
``[height, width, in_channels, out_channels]``; an input with a multiple of ``in_channels``
channels is a grouped convolution.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x, w = tf.ones([1, 4, 4, 2]), tf.ones([3, 3, 2, 5])
    ...     y = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    ...     [g.op.type for g in tf.gradients(y, [x, w])], y.shape.as_list()
    (['Conv2DBackpropInput', 'Conv2DBackpropFilter'], [1, 2, 2, 5])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops.nn.common import FLOATS, check_data_format, with_rank
from dtf_notebook.ops.nn.conv_family import backprop_filter, backprop_infers, backprop_input, family_grads
from dtf_notebook.ops.nn.conv_family import groups as _groups
from dtf_notebook.ops.nn.conv_window import Window, crop, out_size, pad, padded_size, sizes_value, spatial, window_attrs
from dtf_notebook.ops.op_helpers import check_dtype, make_op

_ATTRS = ("strides", "padding", "explicit_paddings", "data_format", "dilations", "use_cudnn_on_gpu")


# ---- attrs and shapes -------------------------------------------------------------------------------
def _conv_attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _make_conv_attrs(
    strides: Any, padding: Any, data_format: Any, dilations: Any, use_cudnn_on_gpu: bool, op_type: str
) -> dict[str, Any]:
    window = window_attrs(op_type, data_format, ("strides", strides), ("dilations", dilations), padding, pool=False)
    fmt, strides_, dilations_, mode, explicit = window
    values = (strides_, mode, explicit, fmt, dilations_, bool(use_cudnn_on_gpu))
    return dict(zip(_ATTRS, values))


def _explicit_pairs(attrs: dict[str, Any], nchw: bool) -> tuple[list[int], list[int]]:
    if attrs["padding"] != "EXPLICIT":
        return [0, 0], [0, 0]
    p = attrs["explicit_paddings"]
    h, w = (2, 3) if nchw else (1, 2)
    return p[2 * h : 2 * h + 2], p[2 * w : 2 * w + 2]


def _conv_output_shape(attrs: dict[str, Any], input_shape: TensorShape, filter_shape: TensorShape) -> TensorShape:
    """Static NHWC/NCHW output shape of a Conv2D (checks the depths of input and filter agree)."""
    nchw = attrs["data_format"] == "NCHW"
    xs = with_rank(input_shape, 4).as_list()
    kh, kw, fin, fout = with_rank(filter_shape, 4).as_list()
    n, h, w, c = (xs[0], xs[2], xs[3], xs[1]) if nchw else xs
    if c is not None and fin is not None and (fin == 0 or c % fin):
        raise ValueError(f"Depth of input ({c}) is not a multiple of input depth of filter ({fin})")
    sh, sw = spatial(attrs["strides"], nchw)
    dh, dw = spatial(attrs["dilations"], nchw)
    ph, pw = _explicit_pairs(attrs, nchw)
    oh = out_size(h, kh, sh, dh, attrs["padding"], ph)
    ow = out_size(w, kw, sw, dw, attrs["padding"], pw)
    return TensorShape([n, fout, oh, ow] if nchw else [n, oh, ow, fout])


_conv2d_grad, _backprop_input_grad, _backprop_filter_grad = family_grads(
    "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", _ATTRS
)
_backprop_input_infer, _backprop_filter_infer = backprop_infers(4)


# ---- Conv2D -----------------------------------------------------------------------------------------
def _conv2d_infer(op: Any) -> list:
    x, f = op.inputs
    return [(x.dtype, _conv_output_shape(op.attrs, x.shape, f.shape))]


def _conv2d_kernel(op: Any, ctx: Any):
    win = Window(op)
    stride, dilation = win.stride, win.dilation
    conv = F.conv2d

    def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(x)
        weight = w.permute(3, 2, 0, 1)
        groups = _groups(x.shape[1], weight.shape[1])
        implicit, explicit = win.split(x.shape[2], x.shape[3], weight.shape[2], weight.shape[3])
        y = conv(pad(x, explicit), weight, None, stride, implicit, dilation, groups)
        return win.from_nchw(y)

    return run


op_registry.register_op("Conv2D", infer=_conv2d_infer, kernel=_conv2d_kernel, grad=_conv2d_grad)


# ---- Conv2DBackpropInput ----------------------------------------------------------------------------
def _backprop_input_kernel(op: Any, ctx: Any):
    win = Window(op)
    stride, dilation = win.stride, win.dilation
    static_sizes = sizes_value(op, 0)
    conv_input = torch.nn.grad.conv2d_input

    def run(sizes: Any, w: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        n, ch, h, wd = win.input_dims(static_sizes, sizes)
        dy = win.to_nchw(dy)
        weight = w.permute(3, 2, 0, 1)
        groups = _groups(ch, weight.shape[1])
        implicit, explicit = win.split(h, wd, weight.shape[2], weight.shape[3])
        # With explicit pads: the gradient of the padded input, cropped back to the real one.
        size = padded_size(n, ch, h, wd, explicit)
        dx = conv_input(size, weight, dy, stride, implicit, dilation, groups)
        return win.from_nchw(crop(dx, explicit, h, wd))

    return run


op_registry.register_op(
    "Conv2DBackpropInput", infer=_backprop_input_infer, kernel=_backprop_input_kernel, grad=_backprop_input_grad
)


# ---- Conv2DBackpropFilter ---------------------------------------------------------------------------
def _backprop_filter_kernel(op: Any, ctx: Any):
    win = Window(op)
    stride, dilation = win.stride, win.dilation
    static_sizes = sizes_value(op, 1)
    conv_weight = torch.nn.grad.conv2d_weight

    def run(x: torch.Tensor, sizes: Any, dy: torch.Tensor) -> torch.Tensor:
        kh, kw, fin, fout = static_sizes if static_sizes is not None else sizes.tolist()
        x = win.to_nchw(x)
        dy = win.to_nchw(dy)
        groups = _groups(x.shape[1], fin)
        implicit, explicit = win.split(x.shape[2], x.shape[3], kh, kw)
        dw = conv_weight(pad(x, explicit), (fout, fin, kh, kw), dy, stride, implicit, dilation, groups)
        return dw.permute(2, 3, 1, 0).contiguous()

    return run


op_registry.register_op(
    "Conv2DBackpropFilter", infer=_backprop_filter_infer, kernel=_backprop_filter_kernel, grad=_backprop_filter_grad
)


# ---- builders ---------------------------------------------------------------------------------------
def _one_filter(filter: Any, filters: Any) -> Any:  # noqa: A002 - TF's names
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    return filters if filter is None else filter


def conv2d(
    input: Any,  # noqa: A002 - TF's names
    filter: Any = None,  # noqa: A002
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
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
    filter = _one_filter(filter, filters)
    if filter is None or strides is None or padding is None:
        raise ValueError("conv2d needs `filter`, `strides` and `padding`.")
    x = convert_to_tensor(input, name="input")
    check_dtype(x, FLOATS, "Conv2D", "input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    attrs = _make_conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu, "Conv2D")
    return make_op("Conv2D", [x, f], attrs, name=name or "Conv2D").outputs[0]


def conv2d_backprop_input(
    input_sizes: Any,
    filter: Any = None,  # noqa: A002 - TF's name
    out_backprop: Any = None,
    strides: Any = None,
    padding: Any = None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
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
    filter = _one_filter(filter, filters)
    op_type = "Conv2DBackpropInput"

    def attrs() -> dict[str, Any]:
        return _make_conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu, op_type)

    return backprop_input(op_type, input_sizes, filter, out_backprop, attrs, name, sizes_name="input_sizes")


def conv2d_backprop_filter(
    input: Any,  # noqa: A002 - TF's name
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations: Any = (1, 1, 1, 1),
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
    op_type = "Conv2DBackpropFilter"

    def attrs() -> dict[str, Any]:
        return _make_conv_attrs(strides, padding, data_format, dilations, use_cudnn_on_gpu, op_type)

    return backprop_filter(op_type, input, filter_sizes, out_backprop, attrs, name, sizes_name="filter_sizes")


def conv2d_transpose(
    value: Any = None,
    filter: Any = None,  # noqa: A002 - TF's names
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NHWC",
    name: str | None = None,
    input: Any = None,  # noqa: A002
    filters: Any = None,
    dilations: Any = None,
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
        fmt = check_data_format(data_format)
        channels = value.shape[1 if fmt == "NCHW" else 3] if value.shape.ndims == 4 else Dimension(None)
        if f.shape.ndims == 4 and channels.value is not None and f.shape[3].value not in (None, channels.value):
            raise ValueError(
                f"input channels does not match filter's input channels, {channels.value} != {f.shape[3].value}"
            )
        return conv2d_backprop_input(
            output_shape,
            f,
            value,
            strides,
            padding,
            data_format=fmt,
            dilations=(1, 1, 1, 1) if dilations is None else dilations,
            name=scope,
        )
