"""Moving spatial blocks into depth or batch and back: ``SpaceToDepth``/``DepthToSpace`` (NHWC and NCHW) and
``SpaceToBatchND``/``BatchToSpaceND`` (TF1's ``space_to_batch``/``batch_to_space`` are their 2-D forms), each the
other's gradient; ``required_space_to_batch_paddings`` is TF's helper computing the paddings that make the spatial
sizes divisible.

The kernels are one reshape, one permutation and one reshape (plus a pad or a crop for the batch ops).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.reshape(tf.range(16), [1, 4, 4, 1])
    ...     print(sess.run(space_to_depth(x, 2))[0, 0, 0])
    [0 1 4 5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import dense, op_scope
from dtf_notebook.ops.array.conversions import int_tensor
from dtf_notebook.ops.array.diagnostics import invalid
from dtf_notebook.ops.array.static_values import const_ints
from dtf_notebook.ops.op_helpers import make_op

__all__ = [
    "space_to_depth",
    "depth_to_space",
    "space_to_batch",
    "space_to_batch_nd",
    "batch_to_space",
    "batch_to_space_nd",
    "required_space_to_batch_paddings",
]


# ---- SpaceToDepth / DepthToSpace ----------------------------------------------------------------------------------
def _depth_infer(to_depth: bool) -> Callable[[Operation], list[tuple[dtypes.DType, TensorShape]]]:
    def infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
        x = op.inputs[0]
        bs = op.get_attr("block_size")
        nchw = op.get_attr("data_format") == "NCHW"
        if x.shape.ndims is None:
            return [(x.dtype, unknown_shape(4))]
        if x.shape.ndims != 4:
            raise ValueError(f"Shape must be rank 4 but is rank {x.shape.ndims} for {op.type} '{op.name}'")
        b, h, w, c = (x.shape.as_list()[i] for i in ((0, 2, 3, 1) if nchw else (0, 1, 2, 3)))

        def scaled(d: int | None, factor: int, divide: bool) -> int | None:
            if d is None:
                return None
            if divide:
                if d % factor:
                    raise ValueError(
                        f"Dimension size must be evenly divisible by {factor} but is {d} for {op.type} '{op.name}'"
                    )
                return d // factor
            return d * factor

        if to_depth:
            h, w, c = scaled(h, bs, True), scaled(w, bs, True), scaled(c, bs * bs, False)
        else:
            h, w, c = scaled(h, bs, False), scaled(w, bs, False), scaled(c, bs * bs, True)
        return [(x.dtype, TensorShape([b, c, h, w] if nchw else [b, h, w, c]))]

    return infer


def _depth_kernel(to_depth: bool) -> Callable[[Operation, Any], Callable[..., Any]]:
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        bs = op.get_attr("block_size")
        nchw = op.get_attr("data_format") == "NCHW"

        def run(x: torch.Tensor) -> torch.Tensor:
            if x.dim() != 4:
                raise invalid(op, f"input rank should be 4 instead of {x.dim()}")
            # Work in NHWC; an NCHW input is viewed as NHWC and the result viewed back.
            t = x.permute(0, 2, 3, 1) if nchw else x
            b, h, w, c = t.shape
            if to_depth:
                if h % bs or w % bs:
                    raise invalid(op, f"Image width {w} and height {h} should be divisible by block_size: {bs}")
                out = t.reshape(b, h // bs, bs, w // bs, bs, c).permute(0, 1, 3, 2, 4, 5)
                out = out.reshape(b, h // bs, w // bs, bs * bs * c)
            else:
                if c % (bs * bs):
                    raise invalid(op, f"Input depth dimension {c} should be divisible by: {bs * bs}")
                out = t.reshape(b, h, w, bs, bs, c // (bs * bs)).permute(0, 1, 3, 2, 4, 5)
                out = out.reshape(b, h * bs, w * bs, c // (bs * bs))
            return out.permute(0, 3, 1, 2).contiguous() if nchw else out

        return run

    return factory


op_registry.register_op(
    "SpaceToDepth",
    infer=_depth_infer(True),
    kernel=_depth_kernel(True),
    grad=lambda op, grad: [
        depth_to_space(dense(grad), op.get_attr("block_size"), data_format=op.get_attr("data_format"))
    ],
)
op_registry.register_op(
    "DepthToSpace",
    infer=_depth_infer(False),
    kernel=_depth_kernel(False),
    grad=lambda op, grad: [
        space_to_depth(dense(grad), op.get_attr("block_size"), data_format=op.get_attr("data_format"))
    ],
)


def _depth_op(op_type: str, x: Any, block_size: int, name: str | None, data_format: str) -> Tensor:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be NHWC or NCHW, got {data_format!r}")
    if int(block_size) < 2:
        raise ValueError(f"Value for attr 'block_size' of {block_size} must be at least minimum 2")
    with op_scope(name, op_type, [x]) as scope:
        t = convert_to_tensor(x, name="input")
        attrs = {"block_size": int(block_size), "data_format": data_format}
        return make_op(op_type, [t], attrs, name=scope).outputs[0]


def space_to_depth(input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """Moves each ``block_size x block_size`` spatial block into the depth axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.space_to_depth(tf.zeros([1, 4, 6, 3]), 2)).shape)
        (1, 2, 3, 12)
    """
    return _depth_op("SpaceToDepth", input, block_size, name, data_format)


def depth_to_space(input: Any, block_size: int, name: str | None = None, data_format: str = "NHWC") -> Tensor:  # noqa: A002
    """Moves depth into ``block_size x block_size`` spatial blocks (the inverse of :func:`space_to_depth`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.depth_to_space([[[[1, 2, 3, 4]]]], 2))[0, :, :, 0])
        [[1 2]
         [3 4]]
    """
    return _depth_op("DepthToSpace", input, block_size, name, data_format)


# ---- SpaceToBatchND / BatchToSpaceND ------------------------------------------------------------------------------
def _batch_infer(to_batch: bool) -> Callable[[Operation], list[tuple[dtypes.DType, TensorShape]]]:
    def infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
        x, block, pads = op.inputs
        block_v, pads_v = const_ints(block), const_ints(pads)
        if x.shape.ndims is None or block_v is None:
            return [(x.dtype, unknown_shape(x.shape.ndims))]
        m = len(block_v)
        if x.shape.ndims < m + 1:
            raise ValueError(f"input rank should be >= {m + 1} instead of {x.shape.ndims} for {op.type} '{op.name}'")
        dims = x.shape.as_list()
        prod = int(np.prod(block_v, dtype=np.int64))
        pairs = [pads_v[2 * i : 2 * i + 2] for i in range(m)] if pads_v is not None else [None] * m
        out = list(dims)
        if to_batch:
            out[0] = dims[0] * prod if dims[0] is not None else None
            for i, (b, p) in enumerate(zip(block_v, pairs)):
                d = dims[1 + i]
                if d is None or p is None:
                    out[1 + i] = None
                    continue
                padded = d + p[0] + p[1]
                if padded % b:
                    raise ValueError(f"padded_shape[{i}]={padded} is not divisible by block_shape[{i}]={b}")
                out[1 + i] = padded // b
        else:
            if dims[0] is not None and dims[0] % prod:
                raise ValueError(f"Dimension size must be evenly divisible by {prod} but is {dims[0]} for {op.name}")
            out[0] = dims[0] // prod if dims[0] is not None else None
            for i, (b, p) in enumerate(zip(block_v, pairs)):
                d = dims[1 + i]
                out[1 + i] = d * b - p[0] - p[1] if d is not None and p is not None else None
        return [(x.dtype, TensorShape(out))]

    return infer


def _read(block: Any, pads: Any) -> tuple[list[int], list[tuple[int, int]]]:
    b = [int(v) for v in np.reshape(np.asarray(block.tolist()), -1)]
    p = [int(v) for v in np.reshape(np.asarray(pads.tolist()), -1)]
    return b, [(p[2 * i], p[2 * i + 1]) for i in range(len(b))]


def _space_to_batch_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(x: torch.Tensor, block: Any, pads: Any) -> torch.Tensor:
        blocks, paddings = _read(block, pads)
        m = len(blocks)
        if any(b < 1 for b in blocks) or any(p < 0 for pair in paddings for p in pair):
            raise invalid(op, f"block_shape must be positive and paddings non-negative, got {blocks} and {paddings}")
        pad_arg: list[int] = []
        for lo, hi in reversed(paddings):  # torch pads the last axes first
            pad_arg += [lo, hi]
        rest = x.dim() - 1 - m
        padded = torch.nn.functional.pad(x, [0, 0] * rest + pad_arg) if any(pad_arg) else x
        sizes = padded.shape[1 : 1 + m]
        for i, (s, b) in enumerate(zip(sizes, blocks)):
            if s % b:
                raise invalid(op, f"padded_shape[{i}]={s} is not divisible by block_shape[{i}]={b}")
        batch = padded.shape[0]
        split = [batch]
        for s, b in zip(sizes, blocks):
            split += [s // b, b]
        tail = list(padded.shape[1 + m :])
        t = padded.reshape(split + tail)
        perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, t.dim()))
        t = t.permute(perm)
        return t.reshape(
            [batch * int(np.prod(blocks, dtype=np.int64))] + [s // b for s, b in zip(sizes, blocks)] + tail
        )

    return run


def _batch_to_space_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(x: torch.Tensor, block: Any, crops: Any) -> torch.Tensor:
        blocks, cropping = _read(block, crops)
        m = len(blocks)
        prod = int(np.prod(blocks, dtype=np.int64))
        if x.shape[0] % prod:
            raise invalid(
                op, f"Input batch dimension ({x.shape[0]}) is not divisible by product of block sizes ({prod})"
            )
        batch = x.shape[0] // prod
        sizes = list(x.shape[1 : 1 + m])
        tail = list(x.shape[1 + m :])
        t = x.reshape(blocks + [batch] + sizes + tail)
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(1 + 2 * m, t.dim()))
        t = t.permute(perm).reshape([batch] + [s * b for s, b in zip(sizes, blocks)] + tail)
        for i, (lo, hi) in enumerate(cropping):
            full = t.shape[1 + i]
            if lo < 0 or hi < 0 or lo + hi > full:
                raise invalid(op, f"Crops must be non-negative and fit the block-expanded size {full}, got {lo}, {hi}")
            t = t.narrow(1 + i, lo, full - lo - hi)
        return t.contiguous()

    return run


op_registry.register_op(
    "SpaceToBatchND",
    infer=_batch_infer(True),
    kernel=_space_to_batch_kernel,
    grad=lambda op, grad: [batch_to_space_nd(dense(grad), op.inputs[1], op.inputs[2]), None, None],
)
op_registry.register_op(
    "BatchToSpaceND",
    infer=_batch_infer(False),
    kernel=_batch_to_space_kernel,
    grad=lambda op, grad: [space_to_batch_nd(dense(grad), op.inputs[1], op.inputs[2]), None, None],
)


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Pads the ``M`` spatial axes after the batch axis by ``paddings`` and moves ``block_shape`` blocks of them into
    the batch axis.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.space_to_batch_nd(tf.zeros([1, 4, 4, 3]), [2, 2], [[0, 0], [0, 2]])).shape)
        (4, 2, 3, 3)
    """
    with op_scope(name, "SpaceToBatchND", [input, block_shape, paddings]) as scope:
        x = convert_to_tensor(input, name="input")
        inputs = [x, int_tensor(block_shape, name="block_shape"), int_tensor(paddings, name="paddings")]
        return make_op("SpaceToBatchND", inputs, name=scope).outputs[0]


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Moves ``block_shape`` blocks of the batch axis back into the spatial axes and crops them by ``crops`` (the
    inverse of :func:`space_to_batch_nd`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.batch_to_space_nd(tf.zeros([4, 2, 3, 3]), [2, 2], [[0, 0], [0, 2]])).shape)
        (1, 4, 4, 3)
    """
    with op_scope(name, "BatchToSpaceND", [input, block_shape, crops]) as scope:
        x = convert_to_tensor(input, name="input")
        inputs = [x, int_tensor(block_shape, name="block_shape"), int_tensor(crops, name="crops")]
        return make_op("BatchToSpaceND", inputs, name=scope).outputs[0]


def _block(block_size: Any, block_shape: Any) -> Any:
    if block_size is not None and block_shape is not None:
        raise ValueError("Cannot specify both 'block_size' and 'block_shape'")
    value = block_size if block_size is not None else block_shape
    if value is None:
        raise TypeError("block_size is required")
    return [value, value] if isinstance(value, int | np.integer) else value


def space_to_batch(
    input: Any,  # noqa: A002 - TF's name
    paddings: Any,
    block_size: Any = None,
    name: str | None = None,
    block_shape: Any = None,
) -> Tensor:
    """TF1's 2-D form: :func:`space_to_batch_nd` with square ``block_size`` blocks over the two spatial axes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.space_to_batch(tf.zeros([1, 4, 4, 1]), [[0, 0], [0, 0]], 2)).shape)
        (4, 2, 2, 1)
    """
    return space_to_batch_nd(input, _block(block_size, block_shape), paddings, name=name)


def batch_to_space(
    input: Any,  # noqa: A002 - TF's name
    crops: Any,
    block_size: Any,
    name: str | None = None,
    block_shape: Any = None,
) -> Tensor:
    """TF1's 2-D form: :func:`batch_to_space_nd` with square ``block_size`` blocks.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.batch_to_space(tf.zeros([4, 2, 2, 1]), [[0, 0], [0, 0]], 2)).shape)
        (1, 4, 4, 1)
    """
    return batch_to_space_nd(input, _block(block_size, block_shape), crops, name=name)


def required_space_to_batch_paddings(
    input_shape: Any, block_shape: Any, base_paddings: Any = None, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """The paddings (``base_paddings`` plus what makes each size divisible by the block) and matching crops for
    :func:`space_to_batch_nd` / :func:`batch_to_space_nd`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     paddings, crops = tf.required_space_to_batch_paddings([5, 6], [2, 4])
        ...     print(sess.run(paddings).tolist(), sess.run(crops).tolist())
        [[0, 1], [0, 2]] [[0, 1], [0, 2]]
    """
    from dtf_notebook.ops.array.fill import zeros
    from dtf_notebook.ops.array.pack import stack
    from dtf_notebook.ops.op_helpers import constant_value

    with op_scope(name, "required_space_to_batch_paddings", [input_shape, block_shape]):
        input_shape = convert_to_tensor(input_shape, dtype=dtypes.int32, name="input_shape")
        block_shape = convert_to_tensor(block_shape, dtype=dtypes.int32, name="block_shape")
        if not block_shape.shape.is_fully_defined() or block_shape.shape.ndims != 1:
            raise ValueError(f"block_shape must be a vector of known length, got shape {block_shape.shape}")
        n = block_shape.shape[0].value
        if n == 0:
            return zeros([0, 2], dtypes.int32), zeros([0, 2], dtypes.int32)
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=dtypes.int32, name="base_paddings")
        else:
            base_paddings = zeros([n, 2], dtypes.int32)
        consts = [constant_value(t) for t in (block_shape, input_shape, base_paddings)]
        if all(c is not None for c in consts):
            # Known values: the same arithmetic on numpy arrays, giving constants.
            block_shape, input_shape, base_paddings = (np.asarray(c) for c in consts)
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = (block_shape - full_input_shape % block_shape) % block_shape
        pad_end = orig_pad_end + pad_end_extra
        result_paddings = stack([[pad_start[i], pad_end[i]] for i in range(n)], name="paddings")
        result_crops = stack([[0, pad_end_extra[i]] for i in range(n)], name="crops")
        return result_paddings, result_crops
