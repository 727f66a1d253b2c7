"""3-D convolution of ``tf.nn``: ``Conv3D``, ``Conv3DBackpropInputV2``, ``Conv3DBackpropFilterV2``.

The ops keep TF's attrs (``strides``, ``padding``, ``data_format`` ``NDHWC``/``NCDHW``, ``dilations``);
filters are ``[depth, height, width, in_channels, out_channels]``. Each op's gradient is built from the
other two, as in TF. Kernels hand torch NCDHW permuted views and pad explicitly (TF's ``SAME`` may put one
more element after than before).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x, w = tf.ones([1, 4, 4, 4, 2]), tf.ones([3, 3, 3, 2, 5])
    ...     y = tf.nn.conv3d(x, w, strides=[1, 2, 2, 2, 1], padding="SAME")
    ...     [g.op.type for g in tf.gradients(y, [x, w])], y.shape.as_list()
    (['Conv3DBackpropInputV2', 'Conv3DBackpropFilterV2'], [1, 2, 2, 2, 5])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops.nn.common import FLOATS, with_rank
from dtf_notebook.ops.nn.conv_family import backprop_filter, backprop_infers, backprop_input, family_grads
from dtf_notebook.ops.nn.conv_family import groups as _groups
from dtf_notebook.ops.nn.conv_window import get_sequence, out_size, sizes_value
from dtf_notebook.ops.op_helpers import check_dtype, make_op

_ATTRS = ("strides", "padding", "data_format", "dilations")
_FORMATS = ("NDHWC", "NCDHW")


# ---- window arithmetic ------------------------------------------------------------------------------
def make_attrs(strides: Any, padding: Any, data_format: Any, dilations: Any, op_type: str) -> dict[str, Any]:
    """Validated attrs of a 3-D convolution (5 strides and dilations in ``data_format`` order).

    Example:
        >>> make_attrs(2, "same", None, None, "Conv3D")["strides"]
        [1, 2, 2, 2, 1]
    """
    fmt = "NDHWC" if data_format is None else str(data_format)
    if fmt not in _FORMATS:
        raise ValueError(f"{op_type}: unknown data format {data_format!r}; expected NDHWC or NCDHW")
    channel = 1 if fmt == "NCDHW" else 4
    strides_ = get_sequence(strides, 3, channel, "strides")
    dilations_ = get_sequence(dilations, 3, channel, "dilations")
    for what, seq in (("strides", strides_), ("dilations", dilations_)):
        if seq[0] != 1 or seq[channel] != 1:
            raise ValueError(f"{op_type}: {what} in the batch and depth dimensions must be 1, got {seq}")
        if min(seq) < 1:
            raise ValueError(f"{op_type}: {what} must be positive, got {seq}")
    mode = padding.decode() if isinstance(padding, bytes) else str(padding)
    if mode.upper() not in ("SAME", "VALID"):
        raise ValueError(f"{op_type}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return {"strides": strides_, "padding": mode.upper(), "data_format": fmt, "dilations": dilations_}


def spatial3(values: Any, channels_first: bool) -> tuple[int, int, int]:
    """The (depth, height, width) entries of a 5-element attr.

    Example:
        >>> spatial3([1, 2, 3, 4, 1], False), spatial3([1, 1, 2, 3, 4], True)
        ((2, 3, 4), (2, 3, 4))
    """
    return tuple(values[2:5]) if channels_first else tuple(values[1:4])


class Window3:
    """A 3-D conv/pool node's spatial attrs, bound once; ``pads`` gives TF's (before, after) per axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.conv3d(tf.zeros([1, 5, 5, 5, 1]), tf.zeros([2, 2, 2, 1, 1]), [1, 2, 2, 2, 1], "SAME")
        ...     Window3(y.op).pads((5, 5, 5), (2, 2, 2))
        (0, 1, 0, 1, 0, 1)
    """

    __slots__ = ("cf", "stride", "dilation", "same")

    def __init__(self, op: Any) -> None:
        self.cf = op.get_attr("data_format") == "NCDHW"
        self.stride = spatial3(op.get_attr("strides"), self.cf)
        self.dilation = spatial3(op.attrs.get("dilations") or [1] * 5, self.cf)
        self.same = op.get_attr("padding") == "SAME"

    def pads(self, sizes: Any, ksize: Any) -> tuple[int, ...]:
        """TF's padding as torch's ``F.pad`` wants it: (before, after) pairs from the last axis to the first."""
        out: list[int] = []
        for size, k, s, d in reversed(list(zip(sizes, ksize, self.stride, self.dilation))):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0) if self.same else 0
            out += [total // 2, total - total // 2]
        return tuple(out)

    def to_cf(self, x: torch.Tensor) -> torch.Tensor:
        return x if self.cf else x.permute(0, 4, 1, 2, 3)

    def from_cf(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.cf else y.permute(0, 2, 3, 4, 1).contiguous()

    def input_dims(self, sizes: list[int]) -> tuple[int, int, tuple[int, int, int]]:
        """(batch, channels, spatial sizes) of a 5-element shape in ``data_format`` order."""
        if self.cf:
            return sizes[0], sizes[1], tuple(sizes[2:5])
        return sizes[0], sizes[4], tuple(sizes[1:4])


def output_shape3(attrs: dict[str, Any], shape: TensorShape, ksize: Any, out_channels: Any) -> TensorShape:
    """Static output shape of a 3-D window op (``out_channels`` None keeps the input's channels).

    Example:
        >>> output_shape3(make_attrs(2, "VALID", None, None, "Conv3D"), TensorShape([1, 5, 5, 5, 3]), (3, 3, 3), 7)
        TensorShape([1, 2, 2, 2, 7])
    """
    cf = attrs["data_format"] == "NCDHW"
    dims = with_rank(shape, 5).as_list()
    n, c, sizes = (dims[0], dims[1], dims[2:5]) if cf else (dims[0], dims[4], dims[1:4])
    stride = spatial3(attrs["strides"], cf)
    dilation = spatial3(attrs.get("dilations") or [1] * 5, cf)
    out = [out_size(sz, k, s, d, attrs["padding"], (0, 0)) for sz, k, s, d in zip(sizes, ksize, stride, dilation)]
    c = c if out_channels is None else out_channels
    return TensorShape([n, c, *out] if cf else [n, *out, c])


def _attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _weight(w: torch.Tensor) -> torch.Tensor:
    # TF's [d, h, w, in, out] filter as torch's [out, in, d, h, w].
    return w.permute(4, 3, 0, 1, 2)


_conv3d_grad, _backprop_input_grad, _backprop_filter_grad = family_grads(
    "Conv3D", "Conv3DBackpropInputV2", "Conv3DBackpropFilterV2", _ATTRS
)
_backprop_input_infer, _backprop_filter_infer = backprop_infers(5)


# ---- Conv3D -----------------------------------------------------------------------------------------
def _conv3d_infer(op: Any) -> list:
    x, f = op.inputs
    fs = with_rank(f.shape, 5).as_list()
    attrs = _attrs(op)
    c = x.shape[1 if attrs["data_format"] == "NCDHW" else 4].value if x.shape.ndims == 5 else None
    if c is not None and fs[3] is not None and c % fs[3]:
        raise ValueError(f"Depth of input ({c}) is not a multiple of input depth of filter ({fs[3]})")
    return [(x.dtype, output_shape3(attrs, x.shape, fs[:3], fs[4]))]


def _conv3d_kernel(op: Any, ctx: Any):
    win = Window3(op)

    def run(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        x = win.to_cf(x)
        weight = _weight(w)
        pads = win.pads(x.shape[2:], weight.shape[2:])
        y = F.conv3d(F.pad(x, pads), weight, None, win.stride, 0, win.dilation, _groups(x.shape[1], weight.shape[1]))
        return win.from_cf(y)

    return run


op_registry.register_op("Conv3D", infer=_conv3d_infer, kernel=_conv3d_kernel, grad=_conv3d_grad)


# ---- Conv3DBackpropInputV2 --------------------------------------------------------------------------
def _backprop_input_kernel(op: Any, ctx: Any):
    win = Window3(op)
    static_sizes = sizes_value(op, 0)

    def run(sizes: Any, w: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
        n, c, space = win.input_dims(static_sizes if static_sizes is not None else sizes.tolist())
        weight = _weight(w)
        pads = win.pads(space, weight.shape[2:])
        padded = [s + pads[4 - 2 * i] + pads[5 - 2 * i] for i, s in enumerate(space)]
        groups = _groups(c, weight.shape[1])
        dx = torch.nn.grad.conv3d_input((n, c, *padded), weight, win.to_cf(dy), win.stride, 0, win.dilation, groups)
        d0, h0, w0 = pads[4], pads[2], pads[0]
        dx = dx[:, :, d0 : d0 + space[0], h0 : h0 + space[1], w0 : w0 + space[2]]
        return win.from_cf(dx.contiguous())

    return run


op_registry.register_op(
    "Conv3DBackpropInputV2", infer=_backprop_input_infer, kernel=_backprop_input_kernel, grad=_backprop_input_grad
)


# ---- Conv3DBackpropFilterV2 -------------------------------------------------------------------------
def _backprop_filter_kernel(op: Any, ctx: Any):
    win = Window3(op)
    static_sizes = sizes_value(op, 1)

    def run(x: torch.Tensor, sizes: Any, dy: torch.Tensor) -> torch.Tensor:
        kd, kh, kw, fin, fout = static_sizes if static_sizes is not None else sizes.tolist()
        x = win.to_cf(x)
        xp = F.pad(x, win.pads(x.shape[2:], (kd, kh, kw)))
        groups = _groups(x.shape[1], fin)
        dw = torch.nn.grad.conv3d_weight(
            xp, (fout, fin, kd, kh, kw), win.to_cf(dy), win.stride, 0, win.dilation, groups
        )
        return dw.permute(2, 3, 4, 1, 0).contiguous()

    return run


op_registry.register_op(
    "Conv3DBackpropFilterV2", infer=_backprop_filter_infer, kernel=_backprop_filter_kernel, grad=_backprop_filter_grad
)


# ---- builders ---------------------------------------------------------------------------------------
def conv3d(
    input: Any,  # noqa: A002 - TF's names
    filter: Any = None,  # noqa: A002
    strides: Any = None,
    padding: Any = None,
    data_format: str = "NDHWC",
    dilations: Any = (1, 1, 1, 1, 1),
    name: str | None = None,
    filters: Any = None,
) -> Tensor:
    """3-D convolution (cross-correlation) of a 5-D ``input`` with a ``[d, h, w, in, out]`` filter.

    Args:
        input: ``[batch, depth, height, width, channels]`` (NDHWC) or NCDHW.
        filter: ``[filter_depth, filter_height, filter_width, in_channels, out_channels]``.
        strides: 5 ints in ``data_format`` order (batch and channel strides 1), or 1 or 3 ints.
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: ``"NDHWC"`` or ``"NCDHW"``.
        dilations: Like ``strides``: the spacing of the filter taps.
        name: Op name.
        filters: TF2's name for ``filter``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.conv3d(tf.ones([1, 2, 2, 2, 1]), tf.ones([2, 2, 2, 1, 1]), [1, 1, 1, 1, 1], "VALID")
        ...     print(sess.run(y).reshape(-1))
        [8.]
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    filter = filters if filter is None else filter
    if filter is None or strides is None or padding is None:
        raise ValueError("conv3d needs `filter`, `strides` and `padding`.")
    x = convert_to_tensor(input, name="input")
    check_dtype(x, FLOATS, "Conv3D", "input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    attrs = make_attrs(strides, padding, data_format, dilations, "Conv3D")
    return make_op("Conv3D", [x, f], attrs, name=name or "Conv3D").outputs[0]


def conv3d_backprop_input_v2(
    input_sizes: Any,
    filter: Any,  # noqa: A002 - TF's name
    out_backprop: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NDHWC",
    dilations: Any = (1, 1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input, given the input's shape ``input_sizes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     dx = tf.nn.conv3d_backprop_input_v2([1, 2, 2, 2, 1], tf.ones([2, 2, 2, 1, 1]),
        ...                                         tf.ones([1, 1, 1, 1, 1]), [1, 1, 1, 1, 1], "VALID")
        ...     print(sess.run(dx).sum())
        8.0
    """
    op_type = "Conv3DBackpropInputV2"

    def attrs() -> dict[str, Any]:
        return make_attrs(strides, padding, data_format, dilations, op_type)

    return backprop_input(op_type, input_sizes, filter, out_backprop, attrs, name)


def conv3d_backprop_filter_v2(
    input: Any,  # noqa: A002 - TF's name
    filter_sizes: Any,
    out_backprop: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NDHWC",
    dilations: Any = (1, 1, 1, 1, 1),
    name: str | None = None,
) -> Tensor:
    """The gradient of ``conv3d`` with respect to its filter, given the filter's shape ``filter_sizes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     dw = tf.nn.conv3d_backprop_filter_v2(tf.ones([1, 2, 2, 2, 1]), [2, 2, 2, 1, 1],
        ...                                          tf.ones([1, 1, 1, 1, 1]), [1, 1, 1, 1, 1], "VALID")
        ...     print(sess.run(dw).sum())
        8.0
    """
    op_type = "Conv3DBackpropFilterV2"

    def attrs() -> dict[str, Any]:
        return make_attrs(strides, padding, data_format, dilations, op_type)

    return backprop_filter(op_type, input, filter_sizes, out_backprop, attrs, name)


conv3d_backprop_filter = conv3d_backprop_filter_v2


def conv3d_transpose(
    value: Any,
    filter: Any = None,  # noqa: A002 - TF's names
    output_shape: Any = None,
    strides: Any = None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    name: str | None = None,
    input: Any = None,  # noqa: A002 - TF's names
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """The transpose of ``conv3d``: ``Conv3DBackpropInputV2`` of ``value`` into ``output_shape``.

    ``filter`` is ``[depth, height, width, output_channels, in_channels]``; ``input`` and ``filters`` are TF's
    newer names of ``value`` and ``filter``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.conv3d_transpose(tf.ones([1, 2, 2, 2, 3]), tf.ones([3, 3, 3, 4, 3]), [1, 4, 4, 4, 4],
        ...                                strides=[1, 2, 2, 2, 1])
        ...     y.shape.as_list()
        [1, 4, 4, 4, 4]
    """
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        filter = filters if filter is None else filter
        value = input if value is None else value
        value = convert_to_tensor(value, name="value")
        f = convert_to_tensor(filter, dtype=value.dtype, name="filter")
        return conv3d_backprop_input_v2(
            output_shape,
            f,
            value,
            strides,
            padding,
            data_format=data_format,
            dilations=(1, 1, 1, 1, 1) if dilations is None else dilations,
            name=scope,
        )
