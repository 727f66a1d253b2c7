"""Pooling of ``tf.nn``: ``MaxPool``/``MaxPoolGrad``/``MaxPoolGradGrad`` and ``AvgPool``/``AvgPoolGrad``.

``SAME`` padding never wins a max, and an average counts only the real (unpadded) elements, as in
TF. Kernels use torch's implicit padding when TF's is symmetric and within half the window, and pad
explicitly otherwise (:meth:`Window.split <dtf_notebook.ops.nn.conv_window.Window.split>`).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.ones([1, 5, 5, 2])
    ...     y = tf.nn.max_pool(x, ksize=3, strides=2, padding="SAME")
    ...     y.shape.as_list(), tf.gradients(y, x)[0].op.type
    ([1, 3, 3, 2], 'MaxPoolGrad')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.nn.common import FLOATS, REALS, with_rank
from dtf_notebook.ops.nn.conv_window import (
    Pads,
    Window,
    crop,
    out_size,
    pad,
    padded_size,
    sizes_value,
    spatial,
    window_attrs,
)
from dtf_notebook.ops.op_helpers import check_dtype, make_op, shape_from_tensor

_ATTRS = ("ksize", "strides", "padding", "data_format")


# ---- attrs and shapes -------------------------------------------------------------------------------
def _make_pool_attrs(ksize: Any, strides: Any, padding: Any, data_format: Any, op_type: str) -> dict[str, Any]:
    window = window_attrs(op_type, data_format, ("ksize", ksize), ("strides", strides), padding, pool=True)
    fmt, ksize_, strides_, mode, _ = window
    if mode == "EXPLICIT":
        raise ValueError(f"{op_type}: padding must be 'SAME' or 'VALID', got {padding!r}")
    return {"ksize": ksize_, "strides": strides_, "padding": mode, "data_format": fmt}


def _pool_attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _pool_output_shape(op: Any, shape: TensorShape) -> TensorShape:
    nchw = op.get_attr("data_format") == "NCHW"
    dims = with_rank(shape, 4).as_list()
    kh, kw = spatial(op.get_attr("ksize"), nchw)
    sh, sw = spatial(op.get_attr("strides"), nchw)
    mode = op.get_attr("padding")
    h_i, w_i = (2, 3) if nchw else (1, 2)
    dims[h_i] = out_size(dims[h_i], kh, sh, 1, mode, (0, 0))
    dims[w_i] = out_size(dims[w_i], kw, sw, 1, mode, (0, 0))
    return TensorShape(dims)


def _pool_infer(op: Any) -> list:
    x = op.inputs[0]
    return [(x.dtype, _pool_output_shape(op, x.shape))]


class _PoolCore:
    """A pool node's window and ``ksize`` (height, width), bound once for its kernel."""

    __slots__ = ("win", "ksize", "stride")

    def __init__(self, op: Any) -> None:
        self.win = Window(op)
        self.ksize = spatial(op.get_attr("ksize"), self.win.nchw)
        self.stride = self.win.stride

    def plan(self, h: int, w: int) -> tuple[tuple[int, int], Pads]:
        """(implicit padding, explicit pads or None) for an ``h`` x ``w`` input."""
        return self.win.split(h, w, self.ksize[0], self.ksize[1], pool=True)


# ---- MaxPool, MaxPoolGrad, MaxPoolGradGrad ----------------------------------------------------------
def _lowest(dtype: torch.dtype) -> float:
    return float("-inf") if dtype.is_floating_point else torch.iinfo(dtype).min


class _MaxPoolCore(_PoolCore):
    """Bound max-pool arithmetic on NCHW tensors, shared by MaxPool, MaxPoolGrad and MaxPoolGradGrad.

    Explicit padding is filled with the dtype's lowest value; argmax indices then refer to the padded input.
    """

    __slots__ = ()

    def layout(self, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, int], Pads]:
        """(input ready to pool, implicit padding, explicit pads or None) for an NCHW input."""
        implicit, explicit = self.plan(x.shape[2], x.shape[3])
        return pad(x, explicit, _lowest(x.dtype)), implicit, explicit

    def with_indices(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, Any]:
        xp, implicit, explicit = self.layout(x)
        y, idx = F.max_pool2d(xp, self.ksize, self.stride, implicit, return_indices=True)
        return xp, y, idx, (implicit, explicit)


def _max_pool_kernel(op: Any, ctx: Any):
    core = _MaxPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.stride

    def run(x: torch.Tensor) -> torch.Tensor:
        xp, implicit, _ = core.layout(win.to_nchw(x))
        return win.from_nchw(F.max_pool2d(xp, ksize, stride, implicit))

    return run


def _max_pool_grad_kernel(op: Any, ctx: Any):
    core = _MaxPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.stride
    backward = torch.ops.aten.max_pool2d_with_indices_backward

    def run(orig_input: torch.Tensor, orig_output: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(orig_input)
        xp, _, idx, (implicit, explicit) = core.with_indices(x)
        dx = backward(win.to_nchw(grad), xp, ksize, stride, implicit, (1, 1), False, idx)
        return win.from_nchw(crop(dx, explicit, x.shape[2], x.shape[3]))

    return run


def _max_pool_grad_grad_kernel(op: Any, ctx: Any):
    core = _MaxPoolCore(op)
    win = core.win

    def run(orig_input: torch.Tensor, orig_output: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        _, y, idx, (_, explicit) = core.with_indices(win.to_nchw(orig_input))
        g = pad(win.to_nchw(grad), explicit)
        # Each output takes the incoming gradient at its window's argmax.
        picked = g.reshape(g.shape[0], g.shape[1], -1).gather(2, idx.reshape(idx.shape[0], idx.shape[1], -1))
        return win.from_nchw(picked.view_as(y))

    return run


def _max_pool_grad_infer(op: Any) -> list:
    x, y, g = op.inputs
    with_rank(x.shape, 4)
    return [(x.dtype, x.shape)]


def _max_pool_grad_grad_infer(op: Any) -> list:
    x, y, g = op.inputs
    return [(x.dtype, y.shape.merge_with(_pool_output_shape(op, x.shape)))]


def _pool_grad(op_type: str, op: Any, x: Tensor, y: Tensor, grad: Tensor) -> Tensor:
    return make_op(op_type, [x, y, grad], _pool_attrs(op)).outputs[0]


op_registry.register_op(
    "MaxPool",
    infer=_pool_infer,
    kernel=_max_pool_kernel,
    grad=lambda op, grad: [_pool_grad("MaxPoolGrad", op, op.inputs[0], op.outputs[0], grad)],
)
op_registry.register_op(
    "MaxPoolGrad",
    infer=_max_pool_grad_infer,
    kernel=_max_pool_grad_kernel,
    grad=lambda op, grad: [None, None, _pool_grad("MaxPoolGradGrad", op, op.inputs[0], op.inputs[1], grad)],
)
op_registry.register_op(
    "MaxPoolGradGrad",
    infer=_max_pool_grad_grad_infer,
    kernel=_max_pool_grad_grad_kernel,
    grad=lambda op, grad: [None, None, _pool_grad("MaxPoolGrad", op, op.inputs[0], op.inputs[1], grad)],
)


# ---- AvgPool, AvgPoolGrad ---------------------------------------------------------------------------
class _AvgPoolCore(_PoolCore):
    """Bound average-pool arithmetic on NCHW tensors, dividing by the number of real (unpadded) elements.

    VALID and symmetric SAME padding within half the window map onto torch's ``avg_pool2d`` with
    ``count_include_pad=False``; asymmetric SAME padding pads explicitly and divides by a per-size
    count map computed once.
    """

    __slots__ = ("_scales",)

    def __init__(self, op: Any) -> None:
        super().__init__(op)
        self._scales: dict[tuple, torch.Tensor] = {}

    def scale(self, h: int, w: int, pads: tuple[int, int, int, int], like: torch.Tensor) -> torch.Tensor:
        """``window area / real elements`` per output position (a [1, 1, oh, ow] tensor)."""
        key = (h, w, like.dtype, like.device)
        scale = self._scales.get(key)
        if scale is None:
            ones = pad(torch.ones((1, 1, h, w), dtype=like.dtype, device=like.device), pads)
            scale = F.avg_pool2d(ones, self.ksize, self.stride).reciprocal_()
            self._scales[key] = scale
        return scale


def _avg_pool_kernel(op: Any, ctx: Any):
    core = _AvgPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.stride

    def run(x: torch.Tensor) -> torch.Tensor:
        x = win.to_nchw(x)
        h, w = x.shape[2], x.shape[3]
        implicit, explicit = core.plan(h, w)
        if explicit is None:
            y = F.avg_pool2d(x, ksize, stride, implicit, False, False)
        else:
            y = F.avg_pool2d(pad(x, explicit), ksize, stride) * core.scale(h, w, explicit, x)
        return win.from_nchw(y)

    return run


def _avg_pool_grad_kernel(op: Any, ctx: Any):
    core = _AvgPoolCore(op)
    win, ksize, stride = core.win, core.ksize, core.stride
    static_sizes = sizes_value(op, 0)
    backward = torch.ops.aten.avg_pool2d_backward

    def run(sizes: Any, grad: torch.Tensor) -> torch.Tensor:
        n, ch, h, w = win.input_dims(static_sizes, sizes)
        g = win.to_nchw(grad)
        implicit, explicit = core.plan(h, w)
        like = g.new_empty(1).expand(*padded_size(n, ch, h, w, explicit))
        if explicit is None:
            dx = backward(g, like, ksize, stride, implicit, False, False, None)
        else:
            dx = backward(g * core.scale(h, w, explicit, g), like, ksize, stride, (0, 0), False, True, None)
        return win.from_nchw(crop(dx, explicit, h, w))

    return run


def _avg_pool_grad_infer(op: Any) -> list:
    sizes, g = op.inputs
    return [(g.dtype, with_rank(shape_from_tensor(sizes), 4))]


op_registry.register_op(
    "AvgPool",
    infer=_pool_infer,
    kernel=_avg_pool_kernel,
    grad=lambda op, grad: [make_op("AvgPoolGrad", [array_ops.shape(op.inputs[0]), grad], _pool_attrs(op)).outputs[0]],
)
op_registry.register_op(
    "AvgPoolGrad",
    infer=_avg_pool_grad_infer,
    kernel=_avg_pool_grad_kernel,
    grad=lambda op, grad: [None, make_op("AvgPool", [grad], _pool_attrs(op)).outputs[0]],
)


# ---- builders ---------------------------------------------------------------------------------------
def _pool_builder(fn_name: str, op_type: str, allowed: Sequence[dtypes.DType], arg: str, doc: str):
    """The builder ``fn_name`` of ``op_type``; ``arg`` names its input in dtype errors, ``doc`` is its docstring."""

    def pool(
        value: Any = None,
        ksize: Any = None,
        strides: Any = None,
        padding: Any = None,
        data_format: str = "NHWC",
        name: str | None = None,
        input: Any = None,  # noqa: A002 - TF's name
    ) -> Tensor:
        if value is not None and input is not None:
            raise ValueError("Cannot specify both 'value' and 'input'.")
        x = convert_to_tensor(input if value is None else value, name="input")
        check_dtype(x, allowed, op_type, arg)
        attrs = _make_pool_attrs(ksize, strides, padding, data_format, op_type)
        return make_op(op_type, [x], attrs, name=name or op_type).outputs[0]

    pool.__name__ = pool.__qualname__ = fn_name
    pool.__doc__ = doc
    return pool


max_pool = _pool_builder(
    "max_pool",
    "MaxPool",
    REALS,
    "input",
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
    """,
)
avg_pool = _pool_builder(
    "avg_pool",
    "AvgPool",
    FLOATS,
    "value",
    """Average pooling over ``ksize`` windows; with ``SAME`` padding each average counts only real elements.

    Arguments are those of :func:`max_pool`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.avg_pool(tf.reshape(tf.range(9.0), [1, 3, 3, 1]), 2, 2, "SAME"))[0, :, :, 0])
        [[2.  3.5]
         [6.5 8. ]]
    """,
)
avg_pool2d = _pool_builder(
    "avg_pool2d",
    "AvgPool",
    FLOATS,
    "value",
    """Another name of :func:`avg_pool`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.avg_pool2d(tf.ones([1, 5, 5, 2]), 2, 2, "SAME").shape.as_list()
        [1, 3, 3, 2]
    """,
)


def max_pool2d(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NHWC",
    name: str | None = None,
) -> Tensor:
    """:func:`max_pool` with ``input`` as the first argument's name.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.nn.max_pool2d(tf.ones([1, 4, 4, 3]), 2, 2, "VALID").shape.as_list()
        [1, 2, 2, 3]
    """
    return max_pool(input, ksize, strides, padding, data_format, name)
