"""Fractional pooling of ``tf.nn`` (Graham 2014): ``FractionalMaxPool``/``FractionalAvgPool`` and their gradient ops.

Each op pools a 4-D NHWC tensor over a grid of rows and columns whose boundaries (the "pooling sequences",
also outputs of the op) are drawn at random as TF draws them: cell sizes of ``floor(ratio)`` or
``ceil(ratio)``, either shuffled (``pseudo_random=False``) or from ``ceil(ratio * (i + u))`` for one random
``u`` (``pseudo_random=True``); with ``overlapping`` a cell also takes the boundary row/column of the next one.
A ratio that divides the size gives the regular grid. The random stream is torch's, not TF's; the gradient
ops take the sequences as inputs, so they match TF's for the same sequences. The sequences' static shape is
their run-time length ``output + 1`` (TF's shape function says ``output``).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.reshape(tf.range(16.0), [1, 4, 4, 1])
    ...     out, rows, cols = tf.nn.fractional_max_pool(x, [1.0, 2.0, 2.0, 1.0])
    ...     print(sess.run(out)[0, :, :, 0], sess.run(rows))
    [[ 5.  7.]
     [13. 15.]] [0 2 4]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.nn.common import with_rank
from dtf_notebook.ops.op_helpers import check_dtype, make_op, shape_from_tensor

__all__ = ["fractional_max_pool", "fractional_avg_pool"]

_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)


# ---- pooling sequences ---------------------------------------------------------------------------------------------
def _pseudo_random_diff(input_length: int, output_length: int, gen: torch.Generator) -> list[int]:
    alpha = input_length / output_length
    k = input_length // output_length
    max_u = min((k + 2) / alpha - 1, (input_length + 1 - k) / alpha - (output_length - 1))
    u = float(torch.rand((), generator=gen, dtype=torch.float64)) * max_u
    cum = [1] + [int(math.ceil(alpha * (i + u))) for i in range(1, output_length)] + [input_length + 1]
    return [cum[i + 1] - cum[i] for i in range(output_length)]


def _random_diff(input_length: int, output_length: int, gen: torch.Generator) -> list[int]:
    k = input_length // output_length
    diff = [k + 1 if i < input_length % output_length else k for i in range(output_length)]
    return [diff[i] for i in torch.randperm(output_length, generator=gen).tolist()]


def pooling_sequence(input_length: int, output_length: int, gen: torch.Generator, pseudo_random: bool) -> list[int]:
    """TF's cumulative pooling sequence: ``output_length + 1`` boundaries from 0 to ``input_length``.

    Example:
        >>> pooling_sequence(8, 4, torch.Generator(), pseudo_random=True)
        [0, 2, 4, 6, 8]
    """
    if input_length % output_length == 0:
        diff = [input_length // output_length] * output_length
    elif pseudo_random:
        diff = _pseudo_random_diff(input_length, output_length, gen)
    else:
        diff = _random_diff(input_length, output_length, gen)
    return [0, *np.cumsum(diff).tolist()]


def _cells(seq: torch.Tensor, size: int, overlapping: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(start, last index) of each cell of a pooling sequence, clipped to the input as TF clips it."""
    seq = seq.long().cpu()
    start = seq[:-1]
    last = torch.clamp(seq[1:] - (0 if overlapping else 1), max=size - 1)
    return start, last


def _membership(seq: torch.Tensor, size: int, overlapping: bool, dtype: torch.dtype, device: Any) -> torch.Tensor:
    """``[cells, size]``: 1 where an input row/column belongs to a cell."""
    start, last = _cells(seq, size, overlapping)
    positions = torch.arange(size)
    member = (positions[None, :] >= start[:, None]) & (positions[None, :] <= last[:, None])
    return member.to(dtype=dtype, device=device)


def _gather_index(seq: torch.Tensor, size: int, overlapping: bool, device: Any) -> tuple[torch.Tensor, int]:
    """``[cells, longest]`` input indices of each cell, the shorter cells padded with their last index."""
    start, last = _cells(seq, size, overlapping)
    longest = int((last - start).max()) + 1 if len(start) else 1
    index = torch.minimum(start[:, None] + torch.arange(longest)[None, :], last[:, None])
    return index.to(device), longest


# ---- kernels -------------------------------------------------------------------------------------------------------
class _Sequences:
    """A node's first pooling sequences, kept (per session, like TF's kernel) when ``deterministic``."""

    def __init__(self) -> None:
        self.value: tuple[list[int], list[int]] | None = None


class _FractionalPool:
    """A node's attrs, random generator and (for ``deterministic``) the sequences of its first run."""

    def __init__(self, op: Any, ctx: Any) -> None:
        self.ratio = list(op.get_attr("pooling_ratio"))
        self.pseudo_random = op.get_attr("pseudo_random")
        self.overlapping = op.get_attr("overlapping")
        self.deterministic = op.get_attr("deterministic")
        self.gen = ctx.generator(op.get_attr("seed"), op.get_attr("seed2"))
        self.cache = ctx.resources.lookup_or_create("", f"{op.name}/pooling_sequences", _Sequences)
        self.op = op

    def sequences(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if x.dim() != 4:
            raise errors.InvalidArgumentError(None, self.op, "tensor_in must be 4-dimensional")
        out = [int(math.floor(x.shape[i] / self.ratio[i])) for i in range(4)]
        if min(out) <= 0:
            raise errors.InvalidArgumentError(
                None, self.op, f"Input of shape {list(x.shape)} is too small for pooling ratio {self.ratio}"
            )
        if self.deterministic and self.cache.value is not None:
            rows, cols = self.cache.value
        else:
            rows = pooling_sequence(x.shape[1], out[1], self.gen, self.pseudo_random)
            cols = pooling_sequence(x.shape[2], out[2], self.gen, self.pseudo_random)
            if self.deterministic:
                self.cache.value = (rows, cols)
        return torch.tensor(rows, dtype=torch.int64), torch.tensor(cols, dtype=torch.int64)


def _max_pool(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, overlapping: bool) -> torch.Tensor:
    # The max over a rectangle is the max over its rows of the max over its columns: two gathers.
    r_index, r_len = _gather_index(rows, x.shape[1], overlapping, x.device)
    c_index, c_len = _gather_index(cols, x.shape[2], overlapping, x.device)
    n, _, w, c = x.shape
    by_rows = x[:, r_index.reshape(-1)].reshape(n, -1, r_len, w, c).amax(dim=2)
    return by_rows[:, :, c_index.reshape(-1)].reshape(n, by_rows.shape[1], -1, c_len, c).amax(dim=3)


def _avg_pool(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor, overlapping: bool) -> torch.Tensor:
    work = torch.float64 if x.dtype == torch.float64 else (torch.float32 if x.is_floating_point() else torch.int64)
    rm = _membership(rows, x.shape[1], overlapping, work, x.device)
    cm = _membership(cols, x.shape[2], overlapping, work, x.device)
    sums = torch.einsum("ih,nhwc,kw->nikc", rm, x.to(work), cm)
    counts = (rm.sum(1)[:, None] * cm.sum(1)[None, :])[None, :, :, None]
    if x.is_floating_point():
        return (sums / counts).to(x.dtype)
    return torch.div(sums, counts, rounding_mode="trunc").to(x.dtype)


def _fractional_kernel(pool_fn: Any):
    def kernel(op: Any, ctx: Any):
        state = _FractionalPool(op, ctx)

        def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            rows, cols = state.sequences(x)
            return pool_fn(x, rows, cols, state.overlapping), rows.to(x.device), cols.to(x.device)

        return run

    return kernel


def _max_pool_grad_kernel(op: Any, ctx: Any):
    overlapping = op.get_attr("overlapping")

    def run(
        x: torch.Tensor, out: torch.Tensor, grad: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor
    ) -> torch.Tensor:
        n, h, w, c = x.shape
        r_index, r_len = _gather_index(rows, h, overlapping, x.device)
        c_index, c_len = _gather_index(cols, w, overlapping, x.device)
        oh, ow = r_index.shape[0], c_index.shape[0]
        # Each cell's candidates in TF's scan order (rows, then columns), so the first maximum wins as in TF.
        flat_hw = (r_index[:, :, None, None] * w + c_index[None, None, :, :]).permute(0, 2, 1, 3).reshape(-1)
        candidates = x.reshape(n, h * w, c)[:, flat_hw].reshape(n, oh, ow, r_len * c_len, c)
        pos = candidates.argmax(dim=3)
        hw = flat_hw.reshape(oh, ow, r_len * c_len)
        chosen = torch.gather(hw[None, :, :, :, None].expand(n, -1, -1, -1, c), 3, pos.unsqueeze(3)).squeeze(3)
        index = (torch.arange(n, device=x.device).view(n, 1, 1, 1) * (h * w) + chosen) * c
        index = index + torch.arange(c, device=x.device).view(1, 1, 1, c)
        result = torch.zeros(x.numel(), dtype=grad.dtype, device=grad.device)
        result.index_add_(0, index.reshape(-1), grad.reshape(-1))
        return result.view(x.shape)

    return run


def _avg_pool_grad_kernel(op: Any, ctx: Any):
    overlapping = op.get_attr("overlapping")

    def run(shape: torch.Tensor, grad: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
        if shape.dim() != 1 or shape.numel() != 4:
            raise errors.InvalidArgumentError(
                None, op, "original input tensor shape must be1-dimensional and 4 elements"
            )
        _, h, w, _ = (int(v) for v in shape.tolist())
        # TF spreads each gradient over its cell in double precision, then casts.
        rm = _membership(rows, h, overlapping, torch.float64, grad.device)
        cm = _membership(cols, w, overlapping, torch.float64, grad.device)
        counts = (rm.sum(1)[:, None] * cm.sum(1)[None, :])[None, :, :, None]
        spread = torch.einsum("ih,nikc,kw->nhwc", rm, grad.to(torch.float64) / counts, cm)
        return spread.to(grad.dtype)

    return run


def _pool_infer(op: Any) -> list:
    x = op.inputs[0]
    dims = with_rank(x.shape, 4).as_list()
    ratio = op.get_attr("pooling_ratio")
    out = [None if d is None else int(math.floor(d / r)) for d, r in zip(dims, ratio)]
    seq = [TensorShape([None if o is None else o + 1]) for o in out[1:3]]
    return [(x.dtype, TensorShape(out)), (dtypes.int64, seq[0]), (dtypes.int64, seq[1])]


def _input_shape(x: Tensor) -> Tensor:
    if x.shape.is_fully_defined():
        return convert_to_tensor(x.shape.as_list(), dtype=dtypes.int64)
    return array_ops.shape(x, out_type=dtypes.int64)


op_registry.register_op(
    "FractionalMaxPool",
    infer=_pool_infer,
    kernel=_fractional_kernel(_max_pool),
    grad=lambda op, grad, _rows_grad, _cols_grad: [
        make_op(
            "FractionalMaxPoolGrad",
            [op.inputs[0], op.outputs[0], grad, op.outputs[1], op.outputs[2]],
            {"overlapping": op.get_attr("overlapping")},
        ).outputs[0]
    ],
    stateful=True,
)
op_registry.register_op(
    "FractionalAvgPool",
    infer=_pool_infer,
    kernel=_fractional_kernel(_avg_pool),
    grad=lambda op, grad, _rows_grad, _cols_grad: [
        make_op(
            "FractionalAvgPoolGrad",
            [_input_shape(op.inputs[0]), grad, op.outputs[1], op.outputs[2]],
            {"overlapping": op.get_attr("overlapping")},
        ).outputs[0]
    ],
    stateful=True,
)
op_registry.register_op(
    "FractionalMaxPoolGrad",
    infer=lambda op: [(op.inputs[0].dtype, with_rank(op.inputs[0].shape, 4))],
    kernel=_max_pool_grad_kernel,
)
op_registry.register_op(
    "FractionalAvgPoolGrad",
    infer=lambda op: [(op.inputs[1].dtype, with_rank(shape_from_tensor(op.inputs[0]), 4))],
    kernel=_avg_pool_grad_kernel,
)


# ---- builders ------------------------------------------------------------------------------------------------------
def _fractional_pool(
    op_type: str,
    value: Any,
    pooling_ratio: Sequence[float],
    pseudo_random: bool,
    overlapping: bool,
    deterministic: bool,
    seed: int,
    seed2: int,
    name: str | None,
) -> tuple[Tensor, Tensor, Tensor]:
    x = convert_to_tensor(value, name="value")
    check_dtype(x, _DTYPES, op_type, "value")
    ratio = [float(r) for r in pooling_ratio]
    if len(ratio) != 4:
        raise ValueError(f"{op_type}: pooling_ratio field must specify 4 dimensions, got {pooling_ratio!r}")
    if ratio[0] != 1 and ratio[3] != 1:
        raise ValueError(f"{op_type}: pooling is not yet supported on the batch nor channel dimension")
    if min(ratio) < 1.0:
        raise ValueError(f"{op_type}: pooling_ratio must be >= 1.0, got {pooling_ratio!r}")
    attrs = {
        "pooling_ratio": ratio,
        "pseudo_random": bool(pseudo_random),
        "overlapping": bool(overlapping),
        "deterministic": bool(deterministic),
        "seed": int(seed or 0),
        "seed2": int(seed2 or 0),
    }
    op = make_op(op_type, [x], attrs, name=name or op_type)
    return op.outputs[0], op.outputs[1], op.outputs[2]


def fractional_max_pool(
    value: Any,
    pooling_ratio: Sequence[float],
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Fractional max pooling of an NHWC tensor: output size ``floor(size / ratio)`` per dimension.

    Args:
        value: ``[batch, height, width, channels]`` (float32/64, int32/64).
        pooling_ratio: 4 floats >= 1 (batch and channel 1), e.g. ``[1.0, 1.44, 1.73, 1.0]``.
        pseudo_random: Pseudo-random pooling sequences (else random ones).
        overlapping: Cells share their boundary row/column with the next one.
        deterministic: Draw the sequences once and reuse them in every run.
        seed, seed2: Seeds of the sequences (0 and 0: unseeded).
        name: Op name.

    Returns:
        ``(output, row_pooling_sequence, col_pooling_sequence)``.

    Raises:
        ValueError: ``pooling_ratio`` not 4 values >= 1 with batch or channel ratio 1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     out, rows, cols = tf.nn.fractional_max_pool(tf.zeros([2, 10, 9, 3]), [1.0, 1.5, 1.5, 1.0])
        >>> out.shape.as_list(), rows.shape.as_list(), cols.shape.as_list()
        ([2, 6, 6, 3], [7], [7])
    """
    return _fractional_pool(
        "FractionalMaxPool", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
    )


def fractional_avg_pool(
    value: Any,
    pooling_ratio: Sequence[float],
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Fractional average pooling of an NHWC tensor (arguments as :func:`fractional_max_pool`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     out, _, _ = tf.nn.fractional_avg_pool(tf.reshape(tf.range(16.0), [1, 4, 4, 1]), [1.0, 2.0, 2.0, 1.0])
        ...     print(sess.run(out)[0, :, :, 0])
        [[ 2.5  4.5]
         [10.5 12.5]]
    """
    return _fractional_pool(
        "FractionalAvgPool", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
    )
