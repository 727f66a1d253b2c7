"""``tf.nn.max_pool_with_argmax``: the ``MaxPoolWithArgmax`` op and its gradients ``MaxPoolGradWithArgmax`` and
``MaxPoolGradGradWithArgmax``.

The argmax of an output is the flattened NHWC index ``(y * width + x) * channels + c`` of the input element
that won its window (plus ``batch * height * width * channels`` with ``include_batch_in_index``); ties go to
the first element in the window's row-major order, and ``SAME`` padding never wins, as in TF.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[[[1.0], [3.0]], [[4.0], [2.0]]]])
    ...     out, argmax = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    ...     print(sess.run([out, argmax]))
    [array([[[[4.]]]], dtype=float32), array([[[[2]]]])]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.nn.common import INDEX, REALS, with_rank
from dtf_notebook.ops.nn.conv_window import out_size, window_attrs
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.runtime.values import torch_dtype

__all__ = ["max_pool_with_argmax"]

_ATTRS = ("ksize", "strides", "padding", "include_batch_in_index")


def _attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in _ATTRS}


def _output_shape(op: Any, shape: TensorShape) -> TensorShape:
    n, h, w, c = with_rank(shape, 4).as_list()
    ksize, strides, mode = op.get_attr("ksize"), op.get_attr("strides"), op.get_attr("padding")
    return TensorShape(
        [n, out_size(h, ksize[1], strides[1], 1, mode, (0, 0)), out_size(w, ksize[2], strides[2], 1, mode, (0, 0)), c]
    )


def _same_pads(size: int, k: int, stride: int) -> tuple[int, int]:
    total = max((-(-size // stride) - 1) * stride + k - size, 0)
    return total // 2, total - total // 2


class _ArgmaxPool:
    """A node's window, bound once: pooled values and TF's flattened argmax of NHWC tensors."""

    __slots__ = ("kh", "kw", "sh", "sw", "same", "with_batch")

    def __init__(self, op: Any) -> None:
        ksize, strides = op.get_attr("ksize"), op.get_attr("strides")
        self.kh, self.kw, self.sh, self.sw = ksize[1], ksize[2], strides[1], strides[2]
        self.same = op.get_attr("padding") == "SAME"
        self.with_batch = bool(op.get_attr("include_batch_in_index"))

    def pool(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(max, argmax)`` of an NHWC input; argmax as TF flattens it (int64)."""
        n, h, w, c = x.shape
        pt, pb = _same_pads(h, self.kh, self.sh) if self.same else (0, 0)
        pl, pr = _same_pads(w, self.kw, self.sw) if self.same else (0, 0)
        lowest = float("-inf") if x.dtype.is_floating_point else torch.iinfo(x.dtype).min
        xp = (
            F.pad(x.permute(0, 3, 1, 2), (pl, pr, pt, pb), value=lowest)
            if (pt or pb or pl or pr)
            else x.permute(0, 3, 1, 2)
        )
        windows = xp.unfold(2, self.kh, self.sh).unfold(3, self.kw, self.sw)  # [n, c, oh, ow, kh, kw], a view
        oh, ow = windows.shape[2], windows.shape[3]
        values, pos = windows.reshape(n, c, oh, ow, self.kh * self.kw).max(dim=-1)
        dev = x.device
        ys = (
            torch.arange(oh, device=dev).view(1, 1, oh, 1) * self.sh
            - pt
            + torch.div(pos, self.kw, rounding_mode="floor")
        )
        xs = torch.arange(ow, device=dev).view(1, 1, 1, ow) * self.sw - pl + pos % self.kw
        index = (ys * w + xs) * c + torch.arange(c, device=dev).view(1, c, 1, 1)
        if self.with_batch:
            index = index + torch.arange(n, device=dev).view(n, 1, 1, 1) * (h * w * c)
        return values.permute(0, 2, 3, 1), index.permute(0, 2, 3, 1)

    def flat_index(self, argmax: torch.Tensor, per_batch: int) -> torch.Tensor:
        """``argmax`` as indices into the whole flattened input (adding the batch offset when it is not in them)."""
        index = argmax.long()
        if not self.with_batch:
            n = index.shape[0]
            index = index + torch.arange(n, device=index.device).view(n, 1, 1, 1) * per_batch
        return index.reshape(-1)


def _max_pool_with_argmax_kernel(op: Any, ctx: Any):
    core = _ArgmaxPool(op)
    index_dtype = torch_dtype(op.get_attr("Targmax"))

    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, index = core.pool(x)
        return values.contiguous(), index.to(index_dtype).contiguous()

    return run


def _grad_with_argmax_kernel(op: Any, ctx: Any):
    core = _ArgmaxPool(op)

    def run(x: torch.Tensor, grad: torch.Tensor, argmax: torch.Tensor) -> torch.Tensor:
        per_batch = x[0].numel() if x.shape[0] else 0
        out = torch.zeros(x.numel(), dtype=grad.dtype, device=grad.device)
        out.index_add_(0, core.flat_index(argmax, per_batch), grad.reshape(-1))
        return out.view(x.shape)

    return run


def _grad_grad_with_argmax_kernel(op: Any, ctx: Any):
    core = _ArgmaxPool(op)

    def run(x: torch.Tensor, grad: torch.Tensor, argmax: torch.Tensor) -> torch.Tensor:
        per_batch = x[0].numel() if x.shape[0] else 0
        return grad.reshape(-1)[core.flat_index(argmax, per_batch)].view(argmax.shape)

    return run


def _infer(op: Any) -> list:
    x = op.inputs[0]
    shape = _output_shape(op, x.shape)
    return [(x.dtype, shape), (op.get_attr("Targmax"), shape)]


def _with_argmax(op_type: str, op: Any, x: Tensor, grad: Tensor, argmax: Tensor) -> Tensor:
    attrs = {**_attrs(op), "Targmax": argmax.dtype}
    return make_op(op_type, [x, grad, argmax], attrs).outputs[0]


op_registry.register_op(
    "MaxPoolWithArgmax",
    infer=_infer,
    kernel=_max_pool_with_argmax_kernel,
    grad=lambda op, grad, _argmax_grad: [_with_argmax("MaxPoolGradWithArgmax", op, op.inputs[0], grad, op.outputs[1])],
)
op_registry.register_op(
    "MaxPoolGradWithArgmax",
    infer=lambda op: [(op.inputs[0].dtype, with_rank(op.inputs[0].shape, 4))],
    kernel=_grad_with_argmax_kernel,
    grad=lambda op, grad: [
        array_ops.zeros(array_ops.shape(op.inputs[0]), op.inputs[0].dtype),
        _with_argmax("MaxPoolGradGradWithArgmax", op, op.inputs[0], grad, op.inputs[2]),
        None,
    ],
)
op_registry.register_op(
    "MaxPoolGradGradWithArgmax",
    infer=lambda op: [(op.inputs[0].dtype, _output_shape(op, op.inputs[0].shape))],
    kernel=_grad_grad_with_argmax_kernel,
    grad=lambda op, grad: [
        array_ops.zeros(array_ops.shape(op.inputs[0]), op.inputs[0].dtype),
        _with_argmax("MaxPoolGradWithArgmax", op, op.inputs[0], grad, op.inputs[2]),
        None,
    ],
)


def max_pool_with_argmax(
    input: Any,  # noqa: A002 - TF's names
    ksize: Any,
    strides: Any,
    padding: str,
    data_format: str = "NHWC",
    Targmax: Any = None,  # noqa: N803
    name: str | None = None,
    output_dtype: Any = None,
    include_batch_in_index: bool = False,
) -> tuple[Tensor, Tensor]:
    """Max pooling of an NHWC tensor that also returns where each maximum came from.

    Args:
        input: ``[batch, height, width, channels]``.
        ksize, strides: An int, 2 ints or 4 ints (batch and channel entries 1).
        padding: ``"SAME"`` or ``"VALID"``.
        data_format: Only ``"NHWC"``.
        Targmax, output_dtype: The argmax dtype, int64 (default) or int32 (give at most one of the two).
        name: Op name.
        include_batch_in_index: Count the batch in the flattened argmax.

    Returns:
        ``(output, argmax)``.

    Raises:
        ValueError: another ``data_format``, both ``Targmax`` and ``output_dtype``, or bad window attrs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.reshape(tf.range(8.0), [2, 2, 2, 1])
        ...     _, argmax = tf.nn.max_pool_with_argmax(x, 2, 2, "VALID", include_batch_in_index=True)
        ...     print(sess.run(argmax).reshape(-1))
        [3 7]
    """
    if data_format != "NHWC":
        raise ValueError(
            f"`data_format` values other  than 'NHWC' are not supported. Received: data_format={data_format}"
        )
    if Targmax is not None and output_dtype is not None:
        raise ValueError("Cannot specify both 'Targmax' and 'output_dtype'.")
    index_dtype = dtypes.as_dtype(Targmax or output_dtype or dtypes.int64)
    if index_dtype not in INDEX:
        raise TypeError(f"Targmax must be int32 or int64, got {index_dtype.name}")
    x = convert_to_tensor(input, name="input")
    check_dtype(x, REALS, "MaxPoolWithArgmax", "input")
    _, ksize_, strides_, mode, _ = window_attrs(
        "MaxPoolWithArgmax", "NHWC", ("ksize", ksize), ("strides", strides), padding, pool=True
    )
    if mode == "EXPLICIT":
        raise ValueError(f"MaxPoolWithArgmax: padding must be 'SAME' or 'VALID', got {padding!r}")
    attrs = {
        "ksize": ksize_,
        "strides": strides_,
        "padding": mode,
        "include_batch_in_index": bool(include_batch_in_index),
        "Targmax": index_dtype,
    }
    op = make_op("MaxPoolWithArgmax", [x], attrs, name=name or "MaxPoolWithArgmax")
    return op.outputs[0], op.outputs[1]
