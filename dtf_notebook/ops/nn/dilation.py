"""Grayscale morphology of ``tf.nn``: ``dilation2d`` (the ``Dilation2D`` op and its two backprop ops) and TF's
composite ``erosion2d``.

``output[b, y, x, c] = max over (dy, dx) of input[b, y * stride + dy * rate, x * stride + dx * rate, c] +
filter[dy, dx, c]`` with TF's ``SAME``/``VALID`` padding of the dilated filter (padding never wins); each
gradient goes to the element that won the max, the first in row-major order on ties, as in TF's kernels.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.reshape(tf.range(9.0), [1, 3, 3, 1])
    ...     y = tf.nn.dilation2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
    ...     print(sess.run(y)[0, :, :, 0])
    [[4. 5.]
     [7. 8.]]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.reverse_roll import reverse
from dtf_notebook.ops.nn.common import REALS, with_rank
from dtf_notebook.ops.nn.conv_window import get_sequence, out_size
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = ["dilation2d", "erosion2d"]

_ATTRS = ("strides", "rates", "padding")


def _attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _pads(size: int, k: int, stride: int, rate: int, same: bool) -> tuple[int, int, int]:
    """(output size, padding before, padding after) of one axis for a filter of ``k`` taps ``rate`` apart."""
    eff = (k - 1) * rate + 1
    if same:
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2, total - total // 2
    return -(-(size - eff + 1) // stride), 0, 0


class _Dilation:
    """A node's strides, rates and padding, bound once: the windows of each output and who won them."""

    __slots__ = ("sh", "sw", "rh", "rw", "same")

    def __init__(self, op: Any) -> None:
        strides, rates = op.get_attr("strides"), op.get_attr("rates")
        self.sh, self.sw, self.rh, self.rw = strides[1], strides[2], rates[1], rates[2]
        self.same = op.get_attr("padding") == "SAME"

    def windows(self, x: torch.Tensor, f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, Any]:
        """(input + filter over each window ``[n, oh, ow, c, kh * kw]`` with padding never winning, validity,
        the geometry ``(oh, ow, top, left)``)."""
        n, h, w, c = x.shape
        kh, kw = f.shape[0], f.shape[1]
        oh, top, bottom = _pads(h, kh, self.sh, self.rh, self.same)
        ow, left, right = _pads(w, kw, self.sw, self.rw, self.same)
        ys = torch.arange(oh, device=x.device)[:, None] * self.sh - top + torch.arange(kh, device=x.device) * self.rh
        xs = torch.arange(ow, device=x.device)[:, None] * self.sw - left + torch.arange(kw, device=x.device) * self.rw
        valid = ((ys >= 0) & (ys < h))[:, None, :, None] & ((xs >= 0) & (xs < w))[None, :, None, :]  # [oh, ow, kh, kw]
        picked = x[:, ys.clamp(0, h - 1)][:, :, :, xs.clamp(0, w - 1)]  # [n, oh, kh, ow, kw, c]
        sums = picked.permute(0, 1, 3, 5, 2, 4) + f.permute(2, 0, 1)[None, None, None]  # [n, oh, ow, c, kh, kw]
        lowest = float("-inf") if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
        valid = valid[None, :, :, None]
        sums = torch.where(valid, sums, torch.full((), lowest, dtype=sums.dtype, device=sums.device))
        return sums.reshape(n, oh, ow, c, kh * kw), valid, (oh, ow, top, left, ys, xs)

    def argmax(self, x: torch.Tensor, f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, Any]:
        sums, _, geometry = self.windows(x, f)
        values, pos = sums.max(dim=-1)  # the first maximum in row-major window order
        return values, pos, geometry


def _dilation_kernel(op: Any, ctx: Any):
    core = _Dilation(op)
    return lambda x, f: core.argmax(x, f)[0].contiguous()


def _backprop_input_kernel(op: Any, ctx: Any):
    core = _Dilation(op)

    def run(x: torch.Tensor, f: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        n, h, w, c = x.shape
        kw = f.shape[1]
        _, pos, (oh, ow, _, _, ys, xs) = core.argmax(x, f)
        dy, dx = torch.div(pos, kw, rounding_mode="floor"), pos % kw
        rows = torch.gather(ys[None, :, None, None, :].expand(n, oh, ow, c, -1), 4, dy.unsqueeze(4)).squeeze(4)
        cols = torch.gather(xs[None, None, :, None, :].expand(n, oh, ow, c, -1), 4, dx.unsqueeze(4)).squeeze(4)
        index = ((torch.arange(n, device=x.device).view(n, 1, 1, 1) * h + rows) * w + cols) * c
        index = index + torch.arange(c, device=x.device).view(1, 1, 1, c)
        out = torch.zeros(x.numel(), dtype=grad.dtype, device=grad.device)
        out.index_add_(0, index.reshape(-1), grad.reshape(-1))
        return out.view(x.shape)

    return run


def _backprop_filter_kernel(op: Any, ctx: Any):
    core = _Dilation(op)

    def run(x: torch.Tensor, f: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        c = x.shape[3]
        _, pos, _ = core.argmax(x, f)
        index = pos * c + torch.arange(c, device=x.device).view(1, 1, 1, c)
        out = torch.zeros(f.numel(), dtype=grad.dtype, device=grad.device)
        out.index_add_(0, index.reshape(-1), grad.reshape(-1))
        return out.view(f.shape)

    return run


def _infer(op: Any) -> list:
    x, f = op.inputs
    n, h, w, c = with_rank(x.shape, 4).as_list()
    kh, kw, fc = with_rank(f.shape, 3).as_list()
    strides, rates, mode = op.get_attr("strides"), op.get_attr("rates"), op.get_attr("padding")
    eff_h = None if kh is None else (kh - 1) * rates[1] + 1
    eff_w = None if kw is None else (kw - 1) * rates[2] + 1
    oh = out_size(h, eff_h, strides[1], 1, mode, (0, 0))
    ow = out_size(w, eff_w, strides[2], 1, mode, (0, 0))
    return [(x.dtype, TensorShape([n, oh, ow, c if c is not None else fc]))]


def _grad(op: Any, grad: Tensor) -> list:
    x, f = op.inputs
    return [
        make_op("Dilation2DBackpropInput", [x, f, grad], _attrs(op)).outputs[0],
        make_op("Dilation2DBackpropFilter", [x, f, grad], _attrs(op)).outputs[0],
    ]


op_registry.register_op("Dilation2D", infer=_infer, kernel=_dilation_kernel, grad=_grad)
op_registry.register_op(
    "Dilation2DBackpropInput",
    infer=lambda op: [(op.inputs[0].dtype, with_rank(op.inputs[0].shape, 4))],
    kernel=_backprop_input_kernel,
)
op_registry.register_op(
    "Dilation2DBackpropFilter",
    infer=lambda op: [(op.inputs[1].dtype, with_rank(op.inputs[1].shape, 3))],
    kernel=_backprop_filter_kernel,
)


def _window(values: Any, what: str) -> list[int]:
    seq = get_sequence(values, 2, 3, what)
    if seq[0] != 1 or seq[3] != 1:
        raise ValueError(f"Dilation2D: {what} in the batch and depth dimensions must be 1, got {seq}")
    return seq


def dilation2d(
    input: Any,  # noqa: A002 - TF's names
    filter: Any = None,  # noqa: A002
    strides: Any = None,
    rates: Any = None,
    padding: str | None = None,
    name: str | None = None,
    filters: Any = None,
    dilations: Any = None,
) -> Tensor:
    """Grayscale dilation of a ``[batch, height, width, depth]`` tensor by a ``[height, width, depth]`` filter.

    ``filters`` and ``dilations`` are TF2's names of ``filter`` and ``rates``; strides and rates are 4 values
    (NHWC) or 2 (spatial).

    Raises:
        ValueError: both spellings of an argument, or bad strides, rates or padding.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.dilation2d(tf.zeros([1, 5, 5, 2]), tf.zeros([2, 2, 2]), [1, 2, 2, 1], [1, 1, 1, 1], "SAME")
        ...     y.shape.as_list()
        [1, 3, 3, 2]
    """
    if filter is not None and filters is not None:
        raise ValueError("Cannot specify both 'filter' and 'filters'.")
    if rates is not None and dilations is not None:
        raise ValueError("Cannot specify both 'rates' and 'dilations'.")
    filter = filters if filter is None else filter
    rates = dilations if rates is None else rates
    x = convert_to_tensor(input, name="input")
    check_dtype(x, REALS, "Dilation2D", "input")
    f = convert_to_tensor(filter, dtype=x.dtype, name="filter")
    mode = str(padding).upper() if padding is not None else None
    if mode not in ("SAME", "VALID"):
        raise ValueError(f"Dilation2D: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {"strides": _window(strides, "strides"), "rates": _window(rates, "rates"), "padding": mode}
    return make_op("Dilation2D", [x, f], attrs, name=name or "Dilation2D").outputs[0]


def erosion2d(value: Any, kernel: Any, strides: Any, rates: Any, padding: str, name: str | None = None) -> Tensor:
    """Grayscale erosion: ``-dilation2d(-value, reverse(kernel, [0, 1]))``, as TF composes it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.reshape(tf.range(1.0, 10.0), [1, 3, 3, 1])
        ...     y = tf.nn.erosion2d(x, tf.zeros([2, 2, 1]), [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
        ...     print(sess.run(y)[0, :, :, 0])
        [[1. 2.]
         [4. 5.]]
    """
    with name_scope(name, "erosion2d", [value, kernel]) as scope:
        return math_ops.negative(
            dilation2d(
                math_ops.negative(value),
                reverse(kernel, [0, 1]),
                strides=strides,
                rates=rates,
                padding=padding,
                name=scope,
            )
        )
