"""3-D pooling of ``tf.nn``: ``MaxPool3D``/``MaxPool3DGrad``/``MaxPool3DGradGrad`` and ``AvgPool3D``/``AvgPool3DGrad``,
and the 1-D pools TF builds from the 2-D ones (``max_pool1d``, ``avg_pool1d``).

As in 2-D, ``SAME`` padding never wins a max and an average counts only the real elements.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.ones([1, 5, 5, 5, 2])
    ...     y = tf.nn.max_pool3d(x, ksize=3, strides=2, padding="SAME")
    ...     y.shape.as_list(), tf.gradients(y, x)[0].op.type
    ([1, 3, 3, 3, 2], 'MaxPool3DGrad')
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.nn.common import FLOATS, with_rank
from dtf_notebook.ops.nn.conv3d import Window3, make_attrs, output_shape3, spatial3
from dtf_notebook.ops.nn.conv_window import get_sequence, sizes_value
from dtf_notebook.ops.nn.pooling import avg_pool, max_pool
from dtf_notebook.ops.op_helpers import check_dtype, make_op, shape_from_tensor

_ATTRS = ("ksize", "strides", "padding", "data_format")


def _pool_attrs(ksize: Any, strides: Any, padding: Any, data_format: Any, op_type: str) -> dict[str, Any]:
    attrs = make_attrs(strides, padding, data_format, None, op_type)
    channel = 1 if attrs["data_format"] == "NCDHW" else 4
    ksize_ = get_sequence(ksize, 3, channel, "ksize")
    if ksize_[0] != 1 or ksize_[channel] != 1:
        raise ValueError(f"{op_type}: ksize in the batch and depth dimensions must be 1, got {ksize_}")
    return {
        "ksize": ksize_,
        "strides": attrs["strides"],
        "padding": attrs["padding"],
        "data_format": attrs["data_format"],
    }


def _attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _pool_infer(op: Any) -> list:
    x = op.inputs[0]
    ksize = spatial3(op.get_attr("ksize"), op.get_attr("data_format") == "NCDHW")
    return [(x.dtype, output_shape3(_attrs(op), x.shape, ksize, None))]


class _Pool3:
    """A 3-D pool node's window, bound once: pads and runs torch's pools on NCDHW tensors."""

    __slots__ = ("win", "ksize")

    def __init__(self, op: Any) -> None:
        self.win = Window3(op)
        self.ksize = spatial3(op.get_attr("ksize"), self.win.cf)

    def max_with_indices(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        pads = self.win.pads(x.shape[2:], self.ksize)
        xp = F.pad(x, pads, value=float("-inf"))
        return F.max_pool3d(xp, self.ksize, self.win.stride, return_indices=True)

    def avg(self, x: torch.Tensor) -> torch.Tensor:
        pads = self.win.pads(x.shape[2:], self.ksize)
        total = F.avg_pool3d(F.pad(x, pads), self.ksize, self.win.stride)
        # Divide by the real elements of each window, not the window's volume.
        ones = F.pad(torch.ones((1, 1, *x.shape[2:]), dtype=x.dtype, device=x.device), pads)
        return total / F.avg_pool3d(ones, self.ksize, self.win.stride)


def _max_pool_kernel(op: Any, ctx: Any):
    pool = _Pool3(op)
    win = pool.win
    return lambda x: win.from_cf(pool.max_with_indices(win.to_cf(x))[0])


def _max_pool_grad_kernel(op: Any, ctx: Any):
    pool = _Pool3(op)
    win = pool.win

    def run(orig_input: torch.Tensor, orig_output: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        x = win.to_cf(orig_input)
        _, idx = pool.max_with_indices(x)
        # Indices refer to the padded input; a padded element never wins, so scatter there and crop.
        pads = win.pads(x.shape[2:], pool.ksize)
        padded = [s + pads[4 - 2 * i] + pads[5 - 2 * i] for i, s in enumerate(x.shape[2:])]
        g = win.to_cf(grad)
        dx = torch.zeros((*x.shape[:2], padded[0] * padded[1] * padded[2]), dtype=g.dtype, device=g.device)
        dx.scatter_add_(2, idx.flatten(2), g.flatten(2))
        dx = dx.view(*x.shape[:2], *padded)
        d0, h0, w0 = pads[4], pads[2], pads[0]
        dx = dx[:, :, d0 : d0 + x.shape[2], h0 : h0 + x.shape[3], w0 : w0 + x.shape[4]]
        return win.from_cf(dx.contiguous())

    return run


def _max_pool_grad_grad_kernel(op: Any, ctx: Any):
    pool = _Pool3(op)
    win = pool.win

    def run(orig_input: torch.Tensor, orig_output: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        x = win.to_cf(orig_input)
        y, idx = pool.max_with_indices(x)
        g = F.pad(win.to_cf(grad), win.pads(x.shape[2:], pool.ksize))
        # Each output takes the incoming gradient at its window's argmax.
        return win.from_cf(g.flatten(2).gather(2, idx.flatten(2)).view_as(y))

    return run


def _avg_pool_kernel(op: Any, ctx: Any):
    pool = _Pool3(op)
    win = pool.win
    return lambda x: win.from_cf(pool.avg(win.to_cf(x)))


def _avg_pool_grad_kernel(op: Any, ctx: Any):
    pool = _Pool3(op)
    win = pool.win
    static_sizes = sizes_value(op, 0)

    def run(sizes: Any, grad: torch.Tensor) -> torch.Tensor:
        n, c, space = win.input_dims(static_sizes if static_sizes is not None else sizes.tolist())
        x = torch.zeros((n, c, *space), dtype=grad.dtype, device=grad.device, requires_grad=True)
        with torch.enable_grad():
            (dx,) = torch.autograd.grad(pool.avg(x), x, win.to_cf(grad))
        return win.from_cf(dx)

    return run


def _grad_of(op_type: str):
    def grad(op: Any, g: Tensor) -> list:
        return [make_op(op_type, [op.inputs[0], op.outputs[0], g], _attrs(op)).outputs[0]]

    return grad


op_registry.register_op("MaxPool3D", infer=_pool_infer, kernel=_max_pool_kernel, grad=_grad_of("MaxPool3DGrad"))
op_registry.register_op(
    "MaxPool3DGrad",
    infer=lambda op: [(op.inputs[2].dtype, with_rank(op.inputs[0].shape, 5))],
    kernel=_max_pool_grad_kernel,
    grad=lambda op, g: [
        None,
        None,
        make_op("MaxPool3DGradGrad", [op.inputs[0], op.inputs[1], g], _attrs(op)).outputs[0],
    ],
)
op_registry.register_op(
    "MaxPool3DGradGrad",
    infer=lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)],
    kernel=_max_pool_grad_grad_kernel,
    grad=lambda op, g: [None, None, make_op("MaxPool3DGrad", [op.inputs[0], op.inputs[1], g], _attrs(op)).outputs[0]],
)
op_registry.register_op(
    "AvgPool3D",
    infer=_pool_infer,
    kernel=_avg_pool_kernel,
    grad=lambda op, g: [make_op("AvgPool3DGrad", [array_ops.shape(op.inputs[0]), g], _attrs(op)).outputs[0]],
)
op_registry.register_op(
    "AvgPool3DGrad",
    infer=lambda op: [(op.inputs[1].dtype, with_rank(shape_from_tensor(op.inputs[0]), 5))],
    kernel=_avg_pool_grad_kernel,
    grad=lambda op, g: [None, make_op("AvgPool3D", [g], _attrs(op)).outputs[0]],
)


# ---- builders ---------------------------------------------------------------------------------------
def _pool3d(op_type: str, x: Any, ksize: Any, strides: Any, padding: Any, data_format: Any, name: Any) -> Tensor:
    t = convert_to_tensor(x, name="input")
    check_dtype(t, FLOATS, op_type, "input")
    attrs = _pool_attrs(ksize, strides, padding, data_format, op_type)
    return make_op(op_type, [t], attrs, name=name or op_type).outputs[0]


def max_pool3d(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NDHWC",
    name: str | None = None,
) -> Tensor:
    """Max pooling over ``ksize`` windows of a 5-D tensor (NDHWC or NCDHW).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.max_pool3d(tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1]), 2, 2, "VALID")
        ...     print(sess.run(y).reshape(-1))
        [7.]
    """
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NDHWC",
    name: str | None = None,
) -> Tensor:
    """Average pooling over ``ksize`` windows of a 5-D tensor; ``SAME`` windows count only real elements.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.nn.avg_pool3d(tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1]), 2, 2, "VALID")
        ...     print(sess.run(y).reshape(-1))
        [3.5]
    """
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


def _pool1d(kind: str, x: Any, ksize: Any, strides: Any, padding: Any, data_format: Any, name: Any) -> Tensor:
    # TF pools a [batch, width, channels] tensor as a [batch, 1, width, channels] image.
    fmt = "NWC" if data_format is None else data_format
    if fmt not in ("NWC", "NCW", "NHWC", "NCHW"):
        raise ValueError(f"{kind}: unknown data format {data_format!r}")
    first = fmt in ("NCW", "NCHW")
    expand = 2 if first else 1
    with name_scope(name, kind, [x]) as scope:
        x = array_ops.expand_dims(convert_to_tensor(x, name="input"), expand)
        k = get_sequence(ksize, 1, 1 if first else 2, "ksize")[-1 if first else -2]
        s = get_sequence(strides, 1, 1 if first else 2, "strides")[-1 if first else -2]
        ksize, strides = ([1, 1, 1, k], [1, 1, 1, s]) if first else ([1, 1, k, 1], [1, 1, s, 1])
        pool = max_pool if kind == "MaxPool1d" else avg_pool
        y = pool(x, ksize, strides, padding, "NCHW" if first else "NHWC")
        return array_ops.squeeze(y, [expand], name=scope)


def max_pool1d(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NWC",
    name: str | None = None,
) -> Tensor:
    """Max pooling of a 3-D ``[batch, width, channels]`` tensor (a 2-D pool over a height of 1).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.max_pool1d(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, "VALID")).reshape(-1))
        [1. 3.]
    """
    return _pool1d("MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(
    input: Any,  # noqa: A002 - TF's name
    ksize: Any,
    strides: Any,
    padding: Any,
    data_format: str = "NWC",
    name: str | None = None,
) -> Tensor:
    """Average pooling of a 3-D ``[batch, width, channels]`` tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.avg_pool1d(tf.reshape(tf.range(4.0), [1, 4, 1]), 2, 2, "VALID")).reshape(-1))
        [0.5 2.5]
    """
    return _pool1d("AvgPool1D", input, ksize, strides, padding, data_format, name)
