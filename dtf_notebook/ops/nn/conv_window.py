"""Window arithmetic that convolution and pooling share: TF's attrs, output sizes and padding.

``strides``/``ksize``/``dilations`` are normalised as TF does, output sizes follow TF's
``SAME``/``VALID``/``EXPLICIT`` rules, and :class:`Window` binds a node's spatial attrs once for
its kernel. Kernels run torch's NCHW functions on NHWC tensors through permuted views, and TF's
``SAME`` padding, which may put one more row or column after than before, is applied explicitly
only when torch's symmetric padding cannot express it.

Example:
    >>> get_sequence([2, 3], 2, 3, "strides"), out_size(5, 2, 2, 1, "SAME", (0, 0))
    ([1, 2, 3, 1], 3)
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops.nn.common import check_data_format
from dtf_notebook.ops.op_helpers import constant_value

#: Explicit padding ``(top, bottom, left, right)``, or None when torch's implicit padding does it.
Pads = tuple[int, int, int, int] | None


def get_sequence(value: Any, n: int, channel_index: int, name: str) -> list[int]:
    """TF's normalisation of ``strides``/``ksize``/``dilations``: an int, n values or n + 2 values.

    Example:
        >>> get_sequence(2, 2, 3, "strides"), get_sequence([2, 3], 2, 1, "strides")
        ([1, 2, 2, 1], [1, 1, 2, 3])
    """
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


def padding_attrs(padding: Any, data_format: str) -> tuple[str, list[int]]:
    """(padding mode, explicit_paddings): a list of [before, after] pairs per dimension means EXPLICIT.

    Example:
        >>> padding_attrs("same", "NHWC")
        ('SAME', [])
        >>> padding_attrs([[0, 0], [1, 1], [2, 0], [0, 0]], "NHWC")
        ('EXPLICIT', [0, 0, 1, 1, 2, 0, 0, 0])
    """
    if isinstance(padding, str | bytes):
        mode = padding.decode() if isinstance(padding, bytes) else padding
        mode = mode.upper()
        if mode not in ("SAME", "VALID"):
            raise ValueError(f'Attr \'padding\' passed string \'{padding}\' not in: "SAME", "VALID", "EXPLICIT".')
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


def spatial(values: Sequence[int], nchw: bool) -> tuple[int, int]:
    """The (height, width) entries of a 4-element attr in NCHW or NHWC order.

    Example:
        >>> spatial([1, 2, 3, 1], nchw=False), spatial([1, 1, 2, 3], nchw=True)
        ((2, 3), (2, 3))
    """
    return (values[2], values[3]) if nchw else (values[1], values[2])


def check_unit_outer(values: Sequence[int], nchw: bool, what: str, op_type: str) -> None:
    """Requires the batch and channel entries of ``strides``/``ksize``/``dilations`` to be 1.

    Example:
        >>> check_unit_outer([1, 2, 2, 1], False, "strides", "Conv2D")  # NHWC, batch and channel 1: fine
        >>> check_unit_outer([2, 1, 1, 1], False, "ksize", "MaxPool")
        Traceback (most recent call last):
            ...
        ValueError: MaxPool: ksize in the batch and depth dimensions must be 1, got [2, 1, 1, 1]
    """
    outer = (values[0], values[1]) if nchw else (values[0], values[3])
    if outer != (1, 1):
        if what == "strides":
            raise ValueError(
                f"{op_type}: Current implementation does not yet support strides in the batch and depth dimensions."
            )
        raise ValueError(f"{op_type}: {what} in the batch and depth dimensions must be 1, got {list(values)}")


def window_attrs(
    op_type: str, data_format: Any, first: tuple[str, Any], second: tuple[str, Any], padding: Any, pool: bool
) -> tuple[str, list[int], list[int], str, list[int]]:
    """Validated window attrs of a conv (``strides``, ``dilations``) or pool (``ksize``, ``strides``) builder.

    ``first`` and ``second`` are ``(attr name, value)``; returns ``(data_format, first, second, padding mode,
    explicit_paddings)`` with both attrs as 4 values in ``data_format`` order.

    Example:
        >>> window_attrs("MaxPool", None, ("ksize", 2), ("strides", 2), "VALID", pool=True)
        ('NHWC', [1, 2, 2, 1], [1, 2, 2, 1], 'VALID', [])
    """
    fmt = check_data_format(data_format)
    nchw = fmt == "NCHW"
    (name1, value1), (name2, value2) = first, second
    seq1 = get_sequence(value1, 2, 1 if nchw else 3, name1)
    seq2 = get_sequence(value2, 2, 1 if nchw else 3, name2)
    if pool and (seq1[0] != 1 or seq2[0] != 1):
        raise ValueError(f"{op_type}: Pooling is not yet supported on the batch dimension.")
    check_unit_outer(seq1, nchw, name1, op_type)
    check_unit_outer(seq2, nchw, name2, op_type)
    if min(seq1) < 1 or min(seq2) < 1:
        raise ValueError(f"{op_type}: {name1} and {name2} must be positive, got {seq1} and {seq2}")
    mode, explicit = padding_attrs(padding, fmt)
    return fmt, seq1, seq2, mode, explicit


def out_size(size: int | None, k: int | None, stride: int, dilation: int, mode: str, pads: Sequence[int]) -> int | None:
    """TF's output size along one spatial axis (None when unknown); raises when it would be negative.

    Example:
        >>> out_size(7, 3, 2, 1, "VALID", (0, 0)), out_size(7, 3, 2, 1, "SAME", (0, 0))
        (3, 4)
    """
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


class Window:
    """A conv/pool node's spatial attrs, bound once; ``pads`` caches TF's padding per input size.

    ``pads(h, w, kh, kw)`` gives ``(top, bottom, left, right)``: for SAME, the total padding that makes
    the output ``ceil(size / stride)``, with the odd element after (TF's rule).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.nn.conv2d(tf.zeros([1, 5, 5, 1]), tf.zeros([2, 2, 1, 1]), strides=[1, 2, 2, 1], padding="SAME")
        ...     win = Window(y.op)
        >>> win.stride, win.pads(5, 5, 2, 2), win.split(5, 5, 2, 2)
        ((2, 2), (0, 1, 0, 1), ((0, 0), (0, 1, 0, 1)))
    """

    __slots__ = ("nchw", "stride", "dilation", "mode", "explicit", "_cache")

    def __init__(self, op: Any) -> None:
        self.nchw = op.get_attr("data_format") == "NCHW"
        self.stride = spatial(op.get_attr("strides"), self.nchw)
        dilations = op.attrs.get("dilations") or [1, 1, 1, 1]
        self.dilation = spatial(dilations, self.nchw)
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

    def split(self, h: int, w: int, kh: int, kw: int, pool: bool = False) -> tuple[tuple[int, int], Pads]:
        """(torch's implicit padding ``(top, left)``, explicit pads or None) for an ``h`` x ``w`` input.

        TF's padding is torch's implicit padding when it is symmetric (for pooling, also at most half the
        window, torch's limit); otherwise it is all explicit.
        """
        pt, pb, pl, pr = self.pads(h, w, kh, kw)
        if pt == pb and pl == pr and (not pool or (2 * pt <= kh and 2 * pl <= kw)):
            return (pt, pl), None
        return (0, 0), (pt, pb, pl, pr)

    def input_dims(self, static_sizes: list[int] | None, sizes: Any) -> tuple[int, int, int, int]:
        """``(n, channels, h, w)`` of an input given by a sizes input in ``data_format`` order."""
        n, a, b, c = static_sizes if static_sizes is not None else sizes.tolist()
        return (n, a, b, c) if self.nchw else (n, c, a, b)

    def to_nchw(self, x: torch.Tensor) -> torch.Tensor:
        # A permuted view: an NHWC buffer is exactly torch's channels-last layout, so torch reads it in place.
        return x if self.nchw else x.permute(0, 3, 1, 2)

    def from_nchw(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.nchw else y.permute(0, 2, 3, 1).contiguous()


def pad(x: torch.Tensor, explicit: Pads, value: float | None = None) -> torch.Tensor:
    """``x`` (NCHW) with the ``explicit`` pads applied (filled with ``value``, default 0).

    Example:
        >>> pad(torch.ones(1, 1, 1, 2), (0, 1, 1, 0))
        tensor([[[[0., 1., 1.],
                  [0., 0., 0.]]]])
    """
    if explicit is None:
        return x
    pt, pb, pl, pr = explicit
    return F.pad(x, (pl, pr, pt, pb), value=value)


def padded_size(n: int, c: int, h: int, w: int, explicit: Pads) -> tuple[int, int, int, int]:
    """The NCHW size of an ``h`` x ``w`` input once the ``explicit`` pads are applied.

    Example:
        >>> padded_size(1, 3, 4, 4, (0, 1, 0, 1)), padded_size(1, 3, 4, 4, None)
        ((1, 3, 5, 5), (1, 3, 4, 4))
    """
    if explicit is None:
        return n, c, h, w
    pt, pb, pl, pr = explicit
    return n, c, h + pt + pb, w + pl + pr


def crop(dx: torch.Tensor, explicit: Pads, h: int, w: int) -> torch.Tensor:
    """The gradient of an explicitly padded input (NCHW), cropped back to the real ``h`` x ``w`` input.

    Example:
        >>> crop(torch.arange(9.0).reshape(1, 1, 3, 3), (1, 0, 1, 0), 2, 2)
        tensor([[[[4., 5.],
                  [7., 8.]]]])
    """
    if explicit is None:
        return dx
    pt, _, pl, _ = explicit
    return dx[:, :, pt : pt + h, pl : pl + w]


def sizes_value(op: Any, index: int) -> list[int] | None:
    """A sizes input's value when it is known while building (bound once instead of read every step).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w, dy = tf.zeros([2, 2, 3, 3]), tf.zeros([1, 2, 2, 3])
        ...     dx = tf.nn.conv2d_backprop_input([1, 4, 4, 3], w, dy, [1, 2, 2, 1], "SAME")
        ...     sizes_value(dx.op, 0)
        [1, 4, 4, 3]
    """
    value = constant_value(op.inputs[index])
    return None if value is None else [int(v) for v in value.reshape(-1)]
