"""Smaller array functions of TF1: the ops ``BroadcastArgs`` (``broadcast_dynamic_shape``), ``UnravelIndex``,
``ShapeN``, ``EnsureShape``, ``ParallelConcat`` (``parallel_stack``) and ``HistogramFixedWidth``; and TF's
composites ``broadcast_static_shape``, ``sequence_mask``, ``meshgrid``, ``repeat``, ``matrix_transpose`` and
``histogram_fixed_width_bins``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(sequence_mask([1, 3], 4)))
    [[ True False False False]
     [ True  True  True False]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import op_scope
from dtf_notebook.ops.array.concat_split import concat
from dtf_notebook.ops.array.conversions import INDEX_DTYPES, int_tensor
from dtf_notebook.ops.array.diagnostics import fmt_dims, fmt_shape, invalid, require_rank
from dtf_notebook.ops.array.fill import ones
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.reshape import expand_dims, reshape
from dtf_notebook.ops.array.shape_ops import rank, shape, size
from dtf_notebook.ops.array.static_values import partial_shape
from dtf_notebook.ops.array.transpose import transpose
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = [
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "sequence_mask",
    "meshgrid",
    "unravel_index",
    "repeat",
    "parallel_stack",
    "shape_n",
    "ensure_shape",
    "matrix_transpose",
    "histogram_fixed_width",
    "histogram_fixed_width_bins",
]


# ---- BroadcastArgs --------------------------------------------------------------------------------------------
def _broadcast_args_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    s0, s1 = op.inputs
    require_rank(s0, 1)
    require_rank(s1, 1)
    a, b = partial_shape(s0), partial_shape(s1)
    n = max(a.ndims, b.ndims) if a.ndims is not None and b.ndims is not None else None
    return [(s0.dtype, TensorShape([n]))]


def _broadcast_args_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(s0: torch.Tensor, s1: torch.Tensor) -> torch.Tensor:
        a, b = [int(d) for d in s0.tolist()], [int(d) for d in s1.tolist()]
        try:
            out = np.broadcast_shapes(tuple(a), tuple(b))
        except ValueError:
            raise invalid(op, f"Incompatible shapes: {fmt_dims(a)} vs. {fmt_dims(b)}") from None
        return torch.tensor(out, dtype=s0.dtype)

    return run


# Shape arithmetic on the host, as TF keeps these in host memory.
op_registry.register_op(
    "BroadcastArgs",
    infer=_broadcast_args_infer,
    kernel=_broadcast_args_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any) -> Tensor:
    """The shape that 1-D shape tensors ``shape_x`` and ``shape_y`` broadcast to (op ``BroadcastArgs``).

    Raises:
        InvalidArgumentError: (at run time) the shapes do not broadcast.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.broadcast_dynamic_shape([2, 1, 3], [4, 1])))
        [2 4 3]
    """
    with op_scope(None, "BroadcastArgs", [shape_x, shape_y]) as scope:
        s0 = int_tensor(shape_x, name="s0")
        s1 = convert_to_tensor(shape_y, dtype=s0.dtype, name="s1")
        return make_op("BroadcastArgs", [s0, s1], name=scope).outputs[0]


def broadcast_static_shape(shape_x: TensorShape, shape_y: TensorShape) -> TensorShape:
    """The ``TensorShape`` that two static shapes broadcast to (unknown dims stay unknown where undecided).

    Raises:
        ValueError: the shapes cannot broadcast.

    Example:
        >>> import dtf_notebook as tf
        >>> tf.broadcast_static_shape(tf.TensorShape([None, 1]), tf.TensorShape([3]))
        TensorShape([None, 3])
    """
    try:
        return broadcast_shapes(TensorShape(shape_x), TensorShape(shape_y))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting. Got {shape_x} and {shape_y}.") from None


# ---- sequence_mask, meshgrid, repeat, matrix_transpose (composites) ---------------------------------------------
def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = dtypes.bool, name: str | None = None) -> Tensor:
    """``mask[..., j] = j < lengths[...]`` for ``j < maxlen`` (``maxlen`` defaults to the largest length).

    Raises:
        ValueError: ``maxlen`` is not a scalar.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.sequence_mask([2, 0], 3, dtype=tf.float32)))
        [[1. 1. 0.]
         [0. 0. 0.]]
    """
    with op_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = math_ops.reduce_max(lengths)
            maxlen = math_ops.maximum(convert_to_tensor(0, dtype=maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError(f"Argument `maxlen` must be scalar for sequence_mask, received `maxlen` = {maxlen}")
        row_vector = math_ops.range(
            convert_to_tensor(0, dtype=maxlen.dtype), maxlen, convert_to_tensor(1, dtype=maxlen.dtype)
        )
        matrix = math_ops.cast(expand_dims(lengths, -1), maxlen.dtype)
        result = math_ops.less(row_vector, matrix)
        dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        return result if dtype is None or dtype is dtypes.bool else math_ops.cast(result, dtype)


def meshgrid(*args: Any, **kwargs: Any) -> list[Tensor]:
    """Coordinate grids from 1-D tensors: with ``indexing="xy"`` (default) the first two axes are swapped, as in
    numpy; ``indexing="ij"`` gives matrix indexing.

    Raises:
        TypeError: an unknown keyword argument; ValueError: ``indexing`` is neither ``"xy"`` nor ``"ij"``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x, y = tf.meshgrid([1, 2, 3], [4, 5])
        ...     print(sess.run(x))
        [[1 2 3]
         [1 2 3]]
    """
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = next(iter(kwargs))
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    with op_scope(name, "meshgrid", list(args)):
        ndim = len(args)
        s0 = (1,) * ndim
        if not ndim:
            return []
        # Each input becomes a tensor with its values along its own axis and size 1 elsewhere.
        output = [reshape(stack(x), s0[:i] + (-1,) + s0[i + 1 :]) for i, x in enumerate(args)]
        shapes = [size(x) for x in args]
        output_dtype = convert_to_tensor(args[0]).dtype
        if indexing == "xy" and ndim > 1:
            output[0] = reshape(output[0], (1, -1) + (1,) * (ndim - 2))
            output[1] = reshape(output[1], (-1, 1) + (1,) * (ndim - 2))
            shapes[0], shapes[1] = shapes[1], shapes[0]
        mult_fact = ones(shapes, output_dtype)
        return [math_ops.multiply(x, mult_fact) for x in output]


def repeat(input: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Tensor:  # noqa: A002
    """Repeats each element (or slice along ``axis``) of ``input`` ``repeats`` times; with ``axis=None`` the input
    is flattened first. ``repeats`` is a scalar or one count per element along ``axis``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0)))
        [[1 2]
         [3 4]
         [3 4]]
    """
    from dtf_notebook.ops.array.gather import gather
    from dtf_notebook.ops.math.scan import cumsum
    from dtf_notebook.ops.math.sorting import searchsorted

    with op_scope(name, "Repeat", [input, repeats]):
        x = convert_to_tensor(input, name="input")
        counts = convert_to_tensor(repeats, name="repeats")
        if counts.dtype not in INDEX_DTYPES:
            raise TypeError(f"repeats must be int32 or int64, got {counts.dtype.name}")
        if axis is None:
            x = reshape(x, [-1])
            axis = 0
        n = shape(x, out_type=counts.dtype)[axis]
        counts = math_ops.multiply(counts, ones(stack([n]), dtype=counts.dtype))  # a scalar count for every element
        # Output position p takes the element whose cumulative count first exceeds p.
        ends = cumsum(counts)
        positions = math_ops.range(math_ops.reduce_sum(counts), dtype=counts.dtype)
        index = searchsorted(ends, positions, side="right", out_type=counts.dtype)
        return gather(x, index, axis=axis)


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Swaps the last two axes of ``a`` (a batch of matrices).

    Raises:
        ValueError: ``a`` has rank below 2 (when known).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_transpose([[[1, 2, 3]]])))
        [[[1]
          [2]
          [3]]]
    """
    with op_scope(name, "matrix_transpose", [a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError(
                    f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = {a} with shape: "
                    f"{fmt_shape(a.shape)}"
                )
            perm: Any = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:
            a_rank = rank(a)
            perm = concat((math_ops.range(a_rank - 2), stack([a_rank - 1, a_rank - 2])), 0)
        return transpose(a, perm=perm, conjugate=conjugate)


# ---- UnravelIndex ---------------------------------------------------------------------------------------------
def _unravel_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    indices, dims = op.inputs
    require_rank(dims, 1)
    n = dims.shape[0].value if dims.shape.ndims == 1 else None
    if indices.shape.ndims is None:
        return [(indices.dtype, unknown_shape())]
    if indices.shape.ndims > 1:
        raise ValueError(f"Shape must be at most rank 1 but is rank {indices.shape.ndims} for UnravelIndex '{op.name}'")
    return [(indices.dtype, TensorShape([n] + indices.shape.as_list()))]


def _unravel_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(indices: torch.Tensor, dims: torch.Tensor) -> torch.Tensor:
        shape_ = tuple(int(d) for d in dims.tolist())
        total = int(np.prod(shape_, dtype=np.int64))
        flat = indices.reshape(-1).long()
        if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= total):
            raise invalid(op, f"index out of range in UnravelIndex: every index must be in [0, {total})")
        coords = np.stack(np.unravel_index(flat.cpu().numpy(), shape_)) if flat.numel() else np.zeros((len(shape_), 0))
        out = torch.from_numpy(coords.astype(np.int64)).to(indices.dtype)
        return out.reshape((len(shape_),) + tuple(indices.shape))

    return run


op_registry.register_op(
    "UnravelIndex", infer=_unravel_infer, kernel=_unravel_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
)


def unravel_index(indices: Any, dims: Any, name: str | None = None) -> Tensor:
    """The coordinates in an array of shape ``dims`` of the flat ``indices``: shape ``[len(dims)] + indices.shape``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unravel_index([1, 5], [2, 3])))
        [[0 1]
         [1 2]]
    """
    with op_scope(name, "UnravelIndex", [indices, dims]) as scope:
        i = convert_to_tensor(indices, name="indices")
        check_dtype(i, INDEX_DTYPES, "UnravelIndex", "indices")
        d = convert_to_tensor(dims, dtype=i.dtype, name="dims")
        return make_op("UnravelIndex", [i, d], name=scope).outputs[0]


# ---- ShapeN, EnsureShape, ParallelConcat --------------------------------------------------------------------------
def _shape_n_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    out = op.get_attr("out_type")
    return [(out, TensorShape([t.shape.ndims])) for t in op.inputs]


def _shape_n_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.runtime.values import torch_dtype

    out = torch_dtype(op.get_attr("out_type"))
    return lambda *values: tuple(torch.tensor(tuple(v.shape), dtype=out) for v in values)


op_registry.register_op(
    "ShapeN", infer=_shape_n_infer, kernel=_shape_n_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
)


def shape_n(input: Sequence[Any], out_type: Any = dtypes.int32, name: str | None = None) -> list[Tensor]:  # noqa: A002
    """The shapes of several tensors at once (op ``ShapeN``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])))
        [array([2, 3], dtype=int32), array([4], dtype=int32)]
    """
    out_type = dtypes.as_dtype(out_type)
    if out_type not in INDEX_DTYPES:
        raise TypeError(
            f"Value for attr 'out_type' of {out_type.name} is not in the list of allowed values: int32, int64"
        )
    with op_scope(name, "ShapeN", list(input)) as scope:
        tensors = [convert_to_tensor(t) for t in input]
        return list(make_op("ShapeN", tensors, {"N": len(tensors), "out_type": out_type}, name=scope).outputs)


def _ensure_shape_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    expected = TensorShape(op.get_attr("shape"))
    try:
        return [(x.dtype, x.shape.merge_with(expected))]
    except ValueError:
        raise ValueError(
            f"Shape of tensor {x.name} {fmt_shape(x.shape)} is not compatible with expected shape "
            f"{fmt_shape(expected)}."
        ) from None


def _ensure_shape_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    expected = TensorShape(op.get_attr("shape"))
    name = op.inputs[0].name

    def run(x: Any) -> Any:
        if not expected.is_compatible_with(tuple(x.shape)):
            wanted = fmt_shape(expected)
            raise invalid(
                op, f"Shape of tensor {name} {fmt_dims(x.shape)} is not compatible with expected shape {wanted}."
            )
        return x

    return run


op_registry.register_op(
    "EnsureShape", infer=_ensure_shape_infer, kernel=_ensure_shape_kernel, grad=lambda op, grad: [grad]
)


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """``x``, checked at run time to have a shape compatible with ``shape`` (which also refines its static shape).

    Raises:
        ValueError: the static shapes already disagree; InvalidArgumentError: (at run time) the shapes disagree.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.ensure_shape(tf.placeholder(tf.float32), [None, 3]).shape.as_list()
        [None, 3]
    """
    if not isinstance(shape, TensorShape):
        shape = TensorShape(shape)
    with op_scope(name, "EnsureShape", [x]) as scope:
        t = convert_to_tensor(x, name="input")
        attrs = {"shape": shape.as_tuple() if shape.ndims is not None else None}
        return make_op("EnsureShape", [t], attrs, name=scope).outputs[0]


def _parallel_concat_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    return [(op.inputs[0].dtype, TensorShape(op.get_attr("shape")))]


op_registry.register_op(
    "ParallelConcat",
    infer=_parallel_concat_infer,
    kernel=lambda op, ctx: lambda *values: torch.cat(values, 0),
    grad=None,  # TF defines none: differentiating through parallel_stack is an error there too
)


def parallel_stack(values: Sequence[Any], name: str = "parallel_stack") -> Tensor:
    """Stacks tensors of one fully known shape along a new first axis (op ``ParallelConcat``).

    Raises:
        ValueError: a shape is not fully known while building.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.parallel_stack([[1, 2], [3, 4]])))
        [[1 2]
         [3 4]]
    """
    from dtf_notebook.ops.array.conversions import same_dtype_tensors

    with op_scope(name, "parallel_stack", list(values)):
        tensors = same_dtype_tensors(list(values), "ParallelConcat")
        first = tensors[0].shape
        if not first.is_fully_defined():
            raise ValueError(f"Cannot parallel_stack values of unknown shape, got {first}")
        rows = [expand_dims(t, 0) for t in tensors]
        attrs = {"N": len(rows), "shape": (len(rows),) + first.as_tuple()}
        return make_op("ParallelConcat", rows, attrs, name="ParallelConcat").outputs[0]


# ---- HistogramFixedWidth --------------------------------------------------------------------------------------
def _bins(values: torch.Tensor, value_range: torch.Tensor, nbins: int) -> torch.Tensor:
    lo, hi = value_range[0], value_range[1]
    scaled = (values - lo) / (hi - lo)
    return torch.clamp(torch.floor(scaled * nbins), 0, nbins - 1).long()


def _histogram_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    from dtf_notebook.runtime.values import torch_dtype

    out = torch_dtype(op.get_attr("dtype"))

    def run(values: torch.Tensor, value_range: torch.Tensor, nbins: Any) -> torch.Tensor:
        n = int(nbins)
        if n <= 0:
            raise invalid(op, f"nbins should be a positive number, but got '{n}'")
        if not bool(value_range[0] < value_range[1]):
            raise invalid(
                op, f"value_range should satisfy value_range[0] < value_range[1], but got {value_range.tolist()}"
            )
        index = _bins(values.reshape(-1), value_range.to(values.dtype), n)
        return torch.bincount(index, minlength=n).to(out)

    return run


op_registry.register_op(
    "HistogramFixedWidth",
    infer=lambda op: [(op.get_attr("dtype"), TensorShape([_static_int(op.inputs[2])]))],
    kernel=_histogram_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


def _static_int(t: Tensor) -> int | None:
    from dtf_notebook.ops.array.static_values import const_int

    return const_int(t)


def histogram_fixed_width(
    values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """Counts ``values`` in ``nbins`` equal bins over ``value_range = [lo, hi]`` (values outside go to the end bins).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5)))
        [2 1 1 0 1]
    """
    with op_scope(name, "histogram_fixed_width", [values, value_range, nbins]) as scope:
        v = convert_to_tensor(values, name="values")
        r = convert_to_tensor(value_range, dtype=v.dtype, name="value_range")
        n = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        attrs = {"dtype": dtypes.as_dtype(dtype)}
        return make_op("HistogramFixedWidth", [v, r, n], attrs, name=scope).outputs[0]


def histogram_fixed_width_bins(
    values: Any, value_range: Any, nbins: Any = 100, dtype: Any = dtypes.int32, name: str | None = None
) -> Tensor:
    """The bin index of each of ``values`` in ``nbins`` equal bins over ``value_range`` (clipped to the end bins).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5)))
        [0 0 1 2 4]
    """
    with op_scope(name, "histogram_fixed_width_bins", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        shape_ = shape(values)
        values = reshape(values, [-1])
        value_range = convert_to_tensor(value_range, name="value_range")
        nbins = convert_to_tensor(nbins, dtype=dtypes.int32, name="nbins")
        nbins_float = math_ops.cast(nbins, values.dtype)
        scaled = math_ops.truediv(
            math_ops.subtract(values, value_range[0]),
            math_ops.subtract(value_range[1], value_range[0]),
            name="scaled_values",
        )
        indices = math_ops.floor(math_ops.multiply(nbins_float, scaled), name="indices")
        indices = math_ops.cast(math_ops.clip_by_value(indices, 0, math_ops.subtract(nbins_float, 1)), dtypes.int32)
        return reshape(indices, shape_)
