"""Array ops: shapes, reshaping, slicing, joining, gathering, padding and filling tensors.

Every op here follows TF1's op type, attrs, default names and static shape
inference, and runs as torch tensor views/copies (numpy object arrays for
strings: ``shape``, ``reshape``, ``stack``, ``concat``, ``gather``,
``boolean_mask``, ``expand_dims`` and most others accept string tensors).
``Tensor.__getitem__`` is installed here and maps Python indexing onto
``StridedSlice`` exactly as TF's ``_slice_helper`` does.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([[0, 1, 2], [3, 4, 5]])
    ...     y = tf.concat([x[:, ::-1], tf.zeros_like(x)], axis=1)
    ...     with tf.Session() as sess:
    ...         print(sess.run(y))
    [[2 1 0 0 0 0]
     [5 4 3 0 0 0]]
"""

from __future__ import annotations

import builtins
import contextlib
import numbers
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from dtf_notebook.ops import identity_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import constant_value, graph_of, make_op, same_as_input
from dtf_notebook.runtime.values import torch_dtype

__all__ = [
    "newaxis", "reshape", "transpose", "invert_permutation", "concat", "stack", "unstack", "split", "slice",
    "strided_slice", "gather", "expand_dims", "squeeze", "tile", "pad", "shape", "size", "rank", "zeros_like",
    "ones_like", "zeros", "ones", "fill", "one_hot", "boolean_mask", "broadcast_to", "unique",
]

#: ``x[tf.newaxis]`` inserts a dimension of size 1 (same as ``None``).
newaxis = None

_INT32_MAX = 2**31 - 1
_INDEX_DTYPES = (dtypes.int32, dtypes.int64)
_MAX_PLAN_CACHE = 64  # distinct input shapes remembered per node by shape-dependent kernels


# ---- building helpers ---------------------------------------------------------------------------
def _flat(values: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if isinstance(v, list | tuple):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


@contextlib.contextmanager
def _op_scope(name: str | None, default: str, values: Sequence[Any]) -> Iterator[str]:
    """TF's ``name_scope(name, default, values)``: the op takes the scope's name, its converted inputs live inside."""
    graph = graph_of(_flat(values))
    with graph.as_default(), graph.name_scope(name or default) as scope:
        yield scope


def _check_dtype(t: Tensor, allowed: Sequence[dtypes.DType], param: str) -> None:
    if t.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {t.dtype.name} not in list of allowed values: {names}"
        )


def _contains_tensor(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(_contains_tensor(v) for v in value)
    return is_tensor_like(value)


def _autopack(value: Any, name: str = "packed") -> Tensor:
    """Packs a (nested) list mixing tensors and Python numbers into one tensor (TF's auto-packing)."""
    items = list(value)
    dtype = None
    for v in _flat(items):
        if is_tensor_like(v):
            dtype = convert_to_tensor(v).dtype
            break
    parts = []
    for i, v in enumerate(items):
        if isinstance(v, list | tuple) and _contains_tensor(v):
            parts.append(_autopack(v, name=str(i)))
        elif is_tensor_like(v):
            parts.append(convert_to_tensor(v))
        else:
            parts.append(constant(_dim_int(v), dtype=dtype, name=str(i)))
    return stack(parts, name=name)


def _int_tensor(value: Any, name: str, param: str | None = None) -> Tensor:
    """Converts a shape-like argument (tensor, TensorShape, nested list, numpy array) to an int32/int64 tensor."""
    param = param or name
    if isinstance(value, Dimension):
        value = _dim_int(value)
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        value = value.as_list()
    if isinstance(value, list | tuple) and _contains_tensor(value):
        t = _autopack(value)
    elif is_tensor_like(value):
        t = convert_to_tensor(value)
    else:
        if isinstance(value, list | tuple):
            value = [_dim_int(d) for d in value] if not any(isinstance(d, list | tuple) for d in value) else value
        arr = np.asarray(value)
        if arr.dtype.kind == "b" or (arr.size and arr.dtype.kind not in "iu"):
            kind = dtypes.as_dtype(arr.dtype).name if arr.dtype.kind in "fiub" else "string"
            raise TypeError(
                f"Value passed to parameter '{param}' has DataType {kind} not in list of allowed values: int32, int64"
            )
        if isinstance(value, np.ndarray | np.generic) and arr.dtype in (np.int32, np.int64):
            return constant(arr, name=name)  # a numpy array keeps its width, as in TF
        big = arr.size and (int(arr.max()) > _INT32_MAX or int(arr.min()) < -_INT32_MAX - 1)
        return constant(arr.astype(np.int64 if big else np.int32), name=name)
    _check_dtype(t, _INDEX_DTYPES, param)
    return t


def _dim_int(d: Any) -> Any:
    if isinstance(d, Dimension):
        if d.value is None:
            raise ValueError("Cannot convert an unknown Dimension to a Tensor.")
        return d.value
    return d


def _dense(grad: Any) -> Any:
    """A gradient as a dense tensor (``IndexedSlices`` are summed into place)."""
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


# ---- static values -----------------------------------------------------------------------------
def _const_ints(t: Tensor) -> list[int] | None:
    """The values of an int tensor known while building, flattened; None when unknown."""
    value = constant_value(t)
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def _const_int(t: Tensor) -> int | None:
    value = constant_value(t)
    if value is None or np.size(value) != 1:
        return None
    return int(np.asarray(value).reshape(-1)[0])


def _scalar_int(t: Tensor) -> int | None:
    """A scalar int known while building, including ``tf.shape(x)[i]`` of a known dimension."""
    value = _const_int(t)
    if value is not None:
        return value
    op = t.op
    if op.type in ("Identity", "StopGradient"):
        return _scalar_int(op.inputs[0])
    if (op.type == "StridedSlice" and op.inputs[0].op.type == "Shape" and op.get_attr("shrink_axis_mask") == 1
            and not (op.get_attr("ellipsis_mask") or op.get_attr("new_axis_mask"))):
        begin = _const_ints(op.inputs[1])
        dims = op.inputs[0].op.inputs[0].shape
        if begin is not None and len(begin) == 1 and dims.ndims is not None and -dims.ndims <= begin[0] < dims.ndims:
            return dims[begin[0]].value
    return None


def _partial_ints(t: Tensor, n: int) -> list[int | None]:
    """The ``n`` values of a 1-D int tensor, each known or None (constants and packs of scalars)."""
    value = _const_ints(t)
    if value is not None:
        return list(value)
    op = t.op
    if op.type == "Pack" and len(op.inputs) == n:
        return [_scalar_int(x) for x in op.inputs]
    if op.type == "Shape" and op.inputs[0].shape.ndims == n:
        return op.inputs[0].shape.as_list()
    return [None] * n


def _partial_shape(t: Tensor) -> TensorShape:
    """The shape a 1-D int shape tensor describes, as far as known; negative entries are unknown dims.

    Understands constants, ``Shape``, ``Pack`` of scalars (``tf.shape(x)[0]``), ``ConcatV2`` of those, and
    casts/identities, as TF's partial shape evaluation does.
    """
    value = _const_ints(t)
    if value is not None:
        if t.shape.ndims == 0:
            if value[0] == -1:
                return unknown_shape()
            raise ValueError(f"Shape must be rank 1 but is rank 0 (value {value[0]})")
        return TensorShape([d if d >= 0 else None for d in value])
    op = t.op
    if op.type == "Shape":
        return op.inputs[0].shape
    if op.type in ("Identity", "StopGradient", "Cast"):
        return _partial_shape(op.inputs[0])
    if op.type == "Pack" and op.get_attr("axis") == 0 and all(x.shape.ndims == 0 for x in op.inputs):
        dims = [_scalar_int(x) for x in op.inputs]
        return TensorShape([d if d is not None and d >= 0 else None for d in dims])
    if op.type == "ConcatV2" and _const_int(op.inputs[-1]) in (0, -1):
        parts = [_partial_shape(x) for x in op.inputs[:-1]]
        if all(p.ndims is not None for p in parts):
            out: list[int | None] = []
            for p in parts:
                out.extend(p.as_list())
            return TensorShape(out)
    n = t.shape[0].value if t.shape.ndims == 1 else None
    return unknown_shape(n)


def _fmt_dims(dims: Sequence[Any]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _fmt_shape(shape: TensorShape) -> str:
    return "?" if shape.ndims is None else _fmt_dims(shape.as_list())


def _invalid(op: Operation, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, op, message)


def _is_string(t: Tensor) -> bool:
    return t.dtype.is_string


def _remember(cache: dict, key: Any, value: Any) -> Any:
    if len(cache) >= _MAX_PLAN_CACHE:
        cache.clear()
    cache[key] = value
    return value


def _obj(value: Any) -> np.ndarray:
    """A numpy string result as an array: indexing an object array down to one element yields the bare bytes."""
    return value if isinstance(value, np.ndarray) else np.array(value, dtype=object)


def _to_list(value: Any) -> list[int]:
    """A runtime int tensor (torch or numpy) as a Python list."""
    return value.tolist() if isinstance(value, torch.Tensor | np.ndarray) else list(value)


def _grad_shape(x: Tensor) -> Tensor:
    """``tf.shape(x)``: a constant when the shape is static, so gradient graphs keep static shapes."""
    return shape(x)


# ---- Shape, Size, Rank -------------------------------------------------------------------------
def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002 - TF's name
    """The shape of ``input`` as a 1-D int tensor (a constant when it is statically known, as in TF1).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.shape(x), {x: [[1, 2, 3], [4, 5, 6]]}))
        [2 3]
    """
    out_type = dtypes.as_dtype(out_type)
    with _op_scope(name, "Shape", [input]) as scope:
        x = convert_to_tensor(input)
        if x.shape.is_fully_defined():
            return constant(x.shape.as_list(), dtype=out_type, name=scope)
        return make_op("Shape", [x], {"out_type": out_type}, name=scope).outputs[0]


def _shape_infer(op: Operation) -> list:
    return [(op.get_attr("out_type"), TensorShape([op.inputs[0].shape.ndims]))]


def _shape_kernel(op: Operation, ctx: Any):
    tdtype, device = torch_dtype(op.get_attr("out_type")), ctx.device
    cache: dict[tuple[int, ...], torch.Tensor] = {}

    def run(x: Any) -> torch.Tensor:
        dims = tuple(x.shape)
        value = cache.get(dims)
        # One small tensor per distinct shape, reused across steps (consumers never mutate inputs).
        return value if value is not None else _remember(cache, dims, torch.tensor(dims, dtype=tdtype, device=device))

    return run


op_registry.register_op("Shape", infer=_shape_infer, kernel=_shape_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002 - TF's name
    """The number of elements of ``input`` as a scalar int tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.size(tf.constant([[1, 2, 3], [4, 5, 6]]))))
        6
    """
    out_type = dtypes.as_dtype(out_type)
    with _op_scope(name, "Size", [input]) as scope:
        x = convert_to_tensor(input)
        if x.shape.is_fully_defined():
            return constant(x.shape.num_elements(), dtype=out_type, name=scope)
        return make_op("Size", [x], {"out_type": out_type}, name=scope).outputs[0]


def _size_kernel(op: Operation, ctx: Any):
    tdtype, device = torch_dtype(op.get_attr("out_type")), ctx.device
    cache: dict[int, torch.Tensor] = {}

    def run(x: Any) -> torch.Tensor:
        n = int(np.prod(x.shape)) if isinstance(x, np.ndarray) else x.numel()
        value = cache.get(n)
        return value if value is not None else _remember(cache, n, torch.tensor(n, dtype=tdtype, device=device))

    return run


op_registry.register_op(
    "Size",
    infer=lambda op: [(op.get_attr("out_type"), TensorShape([]))],
    kernel=_size_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The number of dimensions of ``input`` as a scalar int32 tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32)
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.rank(x), {x: [[1.0]]}))
        2
    """
    with _op_scope(name, "Rank", [input]) as scope:
        x = convert_to_tensor(input)
        if x.shape.ndims is not None:
            return constant(x.shape.ndims, dtype=dtypes.int32, name=scope)
        return make_op("Rank", [x], {}, name=scope).outputs[0]


def _rank_kernel(op: Operation, ctx: Any):
    device = ctx.device
    cache: dict[int, torch.Tensor] = {}

    def run(x: Any) -> torch.Tensor:
        value = cache.get(x.ndim)
        return value if value is not None else _remember(cache, x.ndim, torch.tensor(x.ndim, dtype=torch.int32,
                                                                                      device=device))

    return run


op_registry.register_op(
    "Rank", infer=lambda op: [(dtypes.int32, TensorShape([]))], kernel=_rank_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)


# ---- Reshape -----------------------------------------------------------------------------------
def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """Gives ``tensor``'s elements a new shape; one dimension may be -1 (inferred from the element count).

    Raises:
        ValueError: the element counts differ and this is known while building.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.reshape(tf.constant([1, 2, 3, 4, 5, 6]), [-1, 3])
        ...     with tf.Session() as sess:
        ...         print(y.shape.as_list(), sess.run(y).tolist())
        [2, 3] [[1, 2, 3], [4, 5, 6]]
    """
    with _op_scope(name, "Reshape", [tensor, shape]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        s = _int_tensor(shape, name="shape")
        return make_op("Reshape", [x, s], {}, name=scope).outputs[0]


def _reshape_infer(op: Operation) -> list:
    x, shape_t = op.inputs
    if shape_t.shape.ndims not in (None, 0, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {shape_t.shape.ndims}")
    const = _const_ints(shape_t)
    if const is not None:
        if shape_t.shape.ndims == 0:
            raise ValueError(f"Shape must be rank 1 but is rank 0 (value {const[0]})")
        minus = [i for i, d in enumerate(const) if d == -1]
        if len(minus) > 1:
            raise ValueError(f"Only one input size may be -1, not both {minus[0]} and {minus[1]}")
        for d in const:
            if d < -1:
                raise ValueError(f"Invalid value in tensor used for shape: {d}")
        out: list[int | None] | None = [None if d == -1 else d for d in const]
    else:
        partial = _partial_shape(shape_t)
        out = partial.as_list() if partial.ndims is not None else None
    if out is None or x.shape.ndims is None:
        return [(x.dtype, TensorShape(out))]
    # TF's rule: with at most one unknown dimension on each side, the element counts fix the missing one.
    out_unknown = [i for i, d in enumerate(out) if d is None]
    in_dims = x.shape.as_list()
    in_unknown = [i for i, d in enumerate(in_dims) if d is None]
    known_out = int(np.prod([d for d in out if d is not None], dtype=np.int64))
    known_in = int(np.prod([d for d in in_dims if d is not None], dtype=np.int64))
    if len(out_unknown) <= 1 and len(in_unknown) <= 1:
        if not in_unknown and not out_unknown and known_in != known_out:
            raise ValueError(
                f"Cannot reshape a tensor with {known_in} elements to shape {_fmt_dims(out)} ({known_out} elements)"
            )
        if not in_unknown and out_unknown and known_out > 0:
            if known_in % known_out:
                raise ValueError(f"Dimension size must be evenly divisible by {known_out} but is {known_in}")
            out[out_unknown[0]] = known_in // known_out
        elif in_unknown and not out_unknown and known_in != 0 and known_out % known_in:
            raise ValueError(f"Dimension size must be evenly divisible by {known_in} but is {known_out}")
    return [(x.dtype, TensorShape(out))]


def _reshape_error(op: Operation, n: int, dims: Sequence[int]) -> errors.InvalidArgumentError:
    minus = [i for i, d in enumerate(dims) if d == -1]
    bad = [(i, d) for i, d in enumerate(dims) if d < -1]
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if len(minus) > 1:
        msg = f"Only one input size may be -1, not both {minus[0]} and {minus[1]}"
    elif bad:
        msg = f"Size {bad[0][0]} must be non-negative, not {bad[0][1]}"
    elif minus and known == 0:
        msg = ("Reshape cannot infer the missing input size for an empty tensor unless all specified input sizes "
               "are non-zero")
    elif minus:
        msg = f"Input to reshape is a tensor with {n} values, but the requested shape requires a multiple of {known}"
    else:
        msg = f"Input to reshape is a tensor with {n} values, but the requested shape has {known}"
    return _invalid(op, msg)


def _reshape_kernel(op: Operation, ctx: Any):
    const = _const_ints(op.inputs[1])
    static = tuple(const) if const is not None else None

    def run(x: Any, shape_value: Any) -> Any:
        dims = static if static is not None else tuple(_to_list(shape_value))
        try:
            return x.reshape(dims)
        except (RuntimeError, ValueError):
            n = x.size if isinstance(x, np.ndarray) else x.numel()
            raise _reshape_error(op, n, dims) from None

    return run


def _reshape_grad(op: Operation, grad: Any) -> list:
    return [reshape(_dense(grad), _grad_shape(op.inputs[0])), None]


op_registry.register_op("Reshape", infer=_reshape_infer, kernel=_reshape_kernel, grad=_reshape_grad)


# ---- ExpandDims, Squeeze -----------------------------------------------------------------------
def expand_dims(input: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Tensor:  # noqa: A002
    """Inserts a dimension of size 1 at ``axis`` (TF1 also accepts the deprecated ``dim``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.expand_dims(tf.constant([1, 2]), -1).shape.as_list()
        [2, 1]
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    with _op_scope(name, "ExpandDims", [input, axis]) as scope:
        x = convert_to_tensor(input, name="input")
        a = _int_tensor(axis, name="dim", param="dim")
        return make_op("ExpandDims", [x, a], {}, name=scope).outputs[0]


def _expand_dims_infer(op: Operation) -> list:
    x, dim_t = op.inputs
    if dim_t.shape.num_elements() not in (None, 1):
        raise ValueError(f"'dim' input must be a tensor with a single value, got shape {dim_t.shape}")
    d = _const_int(dim_t)
    if x.shape.ndims is None or d is None:
        return [(x.dtype, unknown_shape(None if x.shape.ndims is None else x.shape.ndims + 1))]
    n = x.shape.ndims
    if not -n - 1 <= d <= n:
        raise ValueError(f"dim {d} not in the interval [{-n - 1}, {n}].")
    d = d + n + 1 if d < 0 else d
    dims = x.shape.as_list()
    return [(x.dtype, TensorShape(dims[:d] + [1] + dims[d:]))]


def _expand_dims_kernel(op: Operation, ctx: Any):
    static = _const_int(op.inputs[1])
    is_str = _is_string(op.inputs[0])

    def run(x: Any, dim_value: Any) -> Any:
        d = static if static is not None else int(_to_list(dim_value.reshape(-1))[0])
        n = x.ndim
        if not -n - 1 <= d <= n:
            raise _invalid(op, f"Tried to expand dim index {d} for tensor with {n} dimensions.")
        d = d + n + 1 if d < 0 else d
        return np.expand_dims(x, d) if is_str else x.unsqueeze(d)

    return run


op_registry.register_op("ExpandDims", infer=_expand_dims_infer, kernel=_expand_dims_kernel, grad=_reshape_grad)


def squeeze(input: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None) -> Tensor:  # noqa: A002
    """Removes dimensions of size 1 (all of them, or those listed in ``axis``).

    Raises:
        ValueError: a listed dimension is known not to be 1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.squeeze(tf.zeros([1, 2, 1, 3]), axis=[2]).shape.as_list()
        [1, 2, 3]
    """
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if axis is None:
        axis = []
    elif isinstance(axis, numbers.Integral):
        axis = [axis]
    axis = [int(a) for a in axis]
    with _op_scope(name, "Squeeze", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        return make_op("Squeeze", [x], {"squeeze_dims": axis}, name=scope).outputs[0]


def _squeeze_infer(op: Operation) -> list:
    x = op.inputs[0]
    axes = op.get_attr("squeeze_dims")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    n = x.shape.ndims
    dims = x.shape.as_list()
    wanted = set()
    for i, a in enumerate(axes):
        if not -n <= a < n:
            raise ValueError(f"squeeze_dims[{i}] not in [{-n},{n}).")
        wanted.add(a + n if a < 0 else a)
    out = []
    for i, d in enumerate(dims):
        if wanted:
            if i in wanted:
                if d is not None and d != 1:
                    raise ValueError(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
                continue
        elif d is None:
            return [(x.dtype, unknown_shape())]  # an unknown dim may or may not be squeezed
        elif d == 1:
            continue
        out.append(d)
    return [(x.dtype, TensorShape(out))]


def _squeeze_kernel(op: Operation, ctx: Any):
    axes = op.get_attr("squeeze_dims")
    is_str = _is_string(op.inputs[0])

    def run(x: Any) -> Any:
        n = x.ndim
        if not axes:
            return np.squeeze(x) if is_str else x.squeeze()
        dims = []
        for a in axes:
            if not -n <= a < n:
                raise _invalid(op, f"Tried to squeeze dim index {a} for tensor with {n} dimensions.")
            a = a + n if a < 0 else a
            if x.shape[a] != 1:
                raise _invalid(op, f"Can not squeeze dim[{a}], expected a dimension of 1, got {x.shape[a]}")
            dims.append(a)
        return np.squeeze(x, tuple(dims)) if is_str else x.squeeze(tuple(dims))

    return run


def _squeeze_grad(op: Operation, grad: Any) -> list:
    return [reshape(_dense(grad), _grad_shape(op.inputs[0]))]


op_registry.register_op("Squeeze", infer=_squeeze_infer, kernel=_squeeze_kernel, grad=_squeeze_grad)


# ---- Transpose, InvertPermutation --------------------------------------------------------------
def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """Permutes the dimensions of ``a``; ``perm=None`` reverses them.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.zeros([2, 3, 4])
        ...     tf.transpose(x).shape.as_list(), tf.transpose(x, [0, 2, 1]).shape.as_list()
        ([4, 3, 2], [2, 4, 3])
    """
    with _op_scope(name, "transpose", [a, perm]) as scope:
        x = convert_to_tensor(a, name="a")
        if perm is None:
            if x.shape.ndims is not None:
                p = constant(np.arange(x.shape.ndims - 1, -1, -1, dtype=np.int32), name="perm")
            else:
                from dtf_notebook.ops import math_ops

                r = rank(x)
                p = math_ops.subtract(math_ops.subtract(r, 1), math_ops.range(0, r, 1))
        else:
            p = _int_tensor(perm, name="perm")
        return make_op("Transpose", [x, p], {}, name=scope).outputs[0]


def _check_perm(perm: Sequence[int], n: int) -> str | None:
    for p in perm:
        if not 0 <= p < n:
            return f"{p} is out of range [0 .. {n})"
    seen = set(perm)
    for i in range(n):
        if i not in seen:
            return f"{i} is missing from {{{','.join(str(p) for p in perm)}}}."
    return None


def _transpose_infer(op: Operation) -> list:
    x, perm_t = op.inputs
    perm = _const_ints(perm_t)
    n = x.shape.ndims
    if n is None and perm_t.shape.ndims == 1:
        n = perm_t.shape[0].value
    if n is not None and perm_t.shape.ndims == 1 and perm_t.shape[0].value not in (None, n):
        raise ValueError(f"Dimension must be {n} but is {perm_t.shape[0].value}")
    if perm is None or n is None:
        return [(x.dtype, unknown_shape(n))]
    for p in perm:
        if not -n <= p < n:
            raise ValueError(f"perm dim {p} is out of range of input rank {n}")
    perm = [p + n if p < 0 else p for p in perm]
    problem = _check_perm(perm, n)
    if problem:
        raise ValueError(problem)
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    return [(x.dtype, TensorShape([dims[p] for p in perm]))]


def _transpose_kernel(op: Operation, ctx: Any):
    static = _const_ints(op.inputs[1])
    is_str = _is_string(op.inputs[0])

    def run(x: Any, perm_value: Any) -> Any:
        perm = static if static is not None else _to_list(perm_value)
        if static is None or len(perm) != x.ndim:
            if len(perm) != x.ndim:
                raise _invalid(op, f"transpose expects a vector of size {x.ndim}. But input(1) is a vector of size "
                               f"{len(perm)}")
            problem = _check_perm([p + x.ndim if p < 0 else p for p in perm], x.ndim)
            if problem:
                raise _invalid(op, problem)
        return np.transpose(x, perm) if is_str else x.permute(perm)

    return run


def _transpose_grad(op: Operation, grad: Any) -> list:
    perm = _const_ints(op.inputs[1])
    if perm is not None:
        n = len(perm)
        inverse = np.argsort([p + n if p < 0 else p for p in perm]).astype(np.int32)
        return [transpose(_dense(grad), inverse), None]
    return [transpose(_dense(grad), invert_permutation(op.inputs[1])), None]


op_registry.register_op("Transpose", infer=_transpose_infer, kernel=_transpose_kernel, grad=_transpose_grad)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """The inverse of a permutation vector: ``y[x[i]] = i``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.invert_permutation([3, 4, 0, 2, 1])))
        [2 4 3 0 1]
    """
    with _op_scope(name, "InvertPermutation", [x]) as scope:
        p = _int_tensor(x, name="x", param="x")
        return make_op("InvertPermutation", [p], {}, name=scope).outputs[0]


def _invert_permutation_infer(op: Operation) -> list:
    x = op.inputs[0]
    if x.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {x.shape.ndims}")
    return [(x.dtype, x.shape.with_rank(1))]


def _invert_permutation_kernel(op: Operation, ctx: Any):
    def run(x: torch.Tensor) -> torch.Tensor:
        values = x.tolist()
        n = len(values)
        seen = [False] * n
        for v in values:
            if not 0 <= v < n:
                raise _invalid(op, f"{v} is not between 0 and {n}")
            if seen[v]:
                raise _invalid(op, f"{v} is duplicated in the input.")
            seen[v] = True
        out = torch.empty_like(x)
        out[x.long()] = torch.arange(n, dtype=x.dtype, device=x.device)
        return out

    return run


op_registry.register_op(
    "InvertPermutation",
    infer=_invert_permutation_infer,
    kernel=_invert_permutation_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


# ---- ConcatV2 ----------------------------------------------------------------------------------
def _same_dtype_tensors(values: Sequence[Any], op_type: str, param: str = "values") -> list[Tensor]:
    """Converts a list input: Python values take the dtype of the tensors among them (TF's list-input rule)."""
    dtype = None
    for v in values:
        if is_tensor_like(v):
            dtype = convert_to_tensor(v).dtype
            break
    tensors = [
        convert_to_tensor(v) if is_tensor_like(v)
        else _autopack(v) if isinstance(v, list | tuple) and _contains_tensor(v)
        else convert_to_tensor(v, dtype=dtype)
        for v in values
    ]
    kinds = [t.dtype for t in tensors]
    if any(k is not kinds[0] for k in kinds):
        names = ", ".join(k.name for k in kinds)
        raise TypeError(f"Tensors in list passed to '{param}' of '{op_type}' Op have types [{names}] that don't all "
                        "match.")
    return tensors


def concat(values: Any, axis: Any, name: str = "concat") -> Tensor:
    """Joins tensors along ``axis`` (TF1's argument order: ``tf.concat(values, axis)``).

    Raises:
        ValueError: ranks or non-axis dimensions differ (when known while building).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     c = tf.concat([tf.zeros([2, 3]), tf.ones([2, 1])], axis=-1)
        ...     with tf.Session() as sess:
        ...         print(c.shape.as_list(), sess.run(c)[0].tolist())
        [2, 4] [0.0, 0.0, 0.0, 1.0]
    """
    if not isinstance(values, list | tuple):
        values = [values]
    if len(values) == 1:
        with _op_scope(name, "concat", list(values) + [axis]) as scope:
            a = convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32 if not is_tensor_like(axis) else None)
            a.shape.assert_has_rank(0)
            return identity_ops.identity(values[0], name=scope)
    with _op_scope(name, "concat", list(values) + [axis]) as scope:
        tensors = _same_dtype_tensors(values, "ConcatV2")
        a = _int_tensor(axis, name="axis", param="axis")
        return make_op("ConcatV2", tensors + [a], {"N": len(tensors)}, name=scope).outputs[0]


def _concat_infer(op: Operation) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    if axis_t.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {axis_t.shape.ndims}")
    dtype = values[0].dtype
    ranks = [v.shape.ndims for v in values if v.shape.ndims is not None]
    n = ranks[0] if ranks else None
    for v in values:
        if v.shape.ndims is not None and v.shape.ndims != n:
            raise ValueError(f"Shape must be rank {n} but is rank {v.shape.ndims}")
    axis = _const_int(axis_t)
    if n is None or axis is None:
        return [(dtype, unknown_shape(n))]
    if axis >= n:
        raise ValueError(f"Shape must be at least rank {axis + 1} but is rank {n}")
    if axis < -n:
        raise ValueError(f"ConcatOp : Expected concatenating dimensions in the range [{-n}, {n}), but got {axis}")
    axis = axis + n if axis < 0 else axis
    out: list[int | None] = [None] * n
    total: int | None = 0
    first: TensorShape | None = None
    for v in values:
        if v.shape.ndims is None:
            total = None
            continue
        dims = v.shape.as_list()
        total = None if total is None or dims[axis] is None else total + dims[axis]
        for i, d in enumerate(dims):
            if i == axis or d is None:
                continue
            if out[i] is not None and out[i] != d:
                raise ValueError(f"Dimension {i} in both shapes must be equal, but are {out[i]} and {d}. Shapes are "
                                 f"{_fmt_shape(first)} and {_fmt_shape(v.shape)}.")
            out[i] = d
        first = first or v.shape
    out[axis] = total
    return [(dtype, TensorShape(out))]


def _concat_error(op: Operation, parts: Sequence[Any], axis: int) -> errors.InvalidArgumentError:
    n = parts[0].ndim
    if not -n <= axis < n:
        return _invalid(op, f"ConcatOp : Expected concatenating dimensions in the range [{-n}, {n}), but got {axis}")
    a = axis + n if axis < 0 else axis
    for i, p in enumerate(parts[1:], 1):
        if p.ndim != n:
            return _invalid(op, f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                                f"{_fmt_dims(parts[0].shape)} vs. shape[{i}] = {_fmt_dims(p.shape)}")
        for d in range(n):
            if d != a and p.shape[d] != parts[0].shape[d]:
                return _invalid(op, f"ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = "
                                    f"{_fmt_dims(parts[0].shape)} vs. shape[{i}] = {_fmt_dims(p.shape)}")
    return _invalid(op, "ConcatOp : inputs could not be concatenated")


def _concat_kernel(op: Operation, ctx: Any):
    static = _const_int(op.inputs[-1])
    is_str = _is_string(op.inputs[0])

    def run(*args: Any) -> Any:
        parts = args[:-1]
        axis = static if static is not None else int(args[-1])
        try:
            return np.concatenate(parts, axis) if is_str else torch.cat(parts, axis)
        except (RuntimeError, ValueError, IndexError, np.exceptions.AxisError):
            raise _concat_error(op, parts, axis) from None

    return run


def _concat_grad(op: Operation, grad: Any) -> list:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    grad = _dense(grad)
    axis = _const_int(axis_t)
    n = values[0].shape.ndims
    if axis is not None and n is not None:
        axis = axis + n if axis < 0 else axis
        sizes = [v.shape[axis].value if v.shape.ndims is not None else None for v in values]
        if all(s is not None for s in sizes):
            return list(_split_v_outputs(grad, constant(sizes, dtype=dtypes.int32), axis, len(values))) + [None]
        axis_value: Any = axis
    else:
        from dtf_notebook.ops import math_ops

        axis_value = math_ops.floormod(axis_t, rank(values[0]))
    sizes_t = stack([gather(shape(v), axis_value) for v in values])
    return list(_split_v_outputs(grad, sizes_t, axis_t, len(values))) + [None]


op_registry.register_op("ConcatV2", infer=_concat_infer, kernel=_concat_kernel, grad=_concat_grad)


# ---- Pack, Unpack ------------------------------------------------------------------------------
def stack(values: Any, axis: int = 0, name: str = "stack") -> Tensor:
    """Stacks same-shaped tensors along a new dimension ``axis`` (op ``Pack``).

    Raises:
        ValueError: shapes differ or ``axis`` is out of range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = tf.stack([tf.constant([1, 2]), tf.constant([3, 4])], axis=1)
        ...     with tf.Session() as sess:
        ...         print(sess.run(s).tolist())
        [[1, 3], [2, 4]]
    """
    values = list(values)
    if axis == 0 and not _contains_tensor(values):
        try:
            return constant(values, name=name)  # a list of plain values is a constant, as in TF
        except (TypeError, ValueError):
            pass
    with _op_scope(name, "stack", values) as scope:
        tensors = _same_dtype_tensors(values, "Pack")
        if not tensors:
            raise ValueError("Pack expects at least one input")
        n = tensors[0].shape.ndims
        if n is not None and not -n - 1 <= axis < n + 1:
            raise ValueError(f"Argument `axis` = {axis} not in range [{-n - 1}, {n + 1})")
        return make_op("Pack", tensors, {"N": len(tensors), "axis": int(axis)}, name=scope).outputs[0]


def _pack_infer(op: Operation) -> list:
    values = op.inputs
    merged = unknown_shape()
    for v in values:
        if merged.ndims is not None and v.shape.ndims is not None and merged.ndims != v.shape.ndims:
            raise ValueError(f"Shapes must be equal rank, but are {merged.ndims} and {v.shape.ndims}; From merging "
                             f"shape 0 with other shapes.")
        try:
            merged = merged.merge_with(v.shape)
        except ValueError:
            a, b = merged.as_list(), v.shape.as_list()
            d = next(j for j in range(len(a)) if a[j] is not None and b[j] is not None and a[j] != b[j])
            raise ValueError(f"Dimension {d} in both shapes must be equal, but are {a[d]} and {b[d]}. Shapes are "
                             f"{_fmt_dims(a)} and {_fmt_dims(b)}.") from None
    if merged.ndims is None:
        return [(values[0].dtype, unknown_shape())]
    axis = op.get_attr("axis")
    n = merged.ndims
    if not -n - 1 <= axis <= n:
        raise ValueError(f"Invalid axis: {axis}; must be in [{-n - 1},{n + 1})")
    axis = axis + n + 1 if axis < 0 else axis
    dims = merged.as_list()
    return [(values[0].dtype, TensorShape(dims[:axis] + [len(values)] + dims[axis:]))]


def _pack_kernel(op: Operation, ctx: Any):
    axis = op.get_attr("axis")
    is_str = _is_string(op.inputs[0])

    def run(*parts: Any) -> Any:
        try:
            return np.stack(parts, axis) if is_str else torch.stack(parts, axis)
        except (RuntimeError, ValueError):
            for i, p in enumerate(parts[1:], 1):
                if tuple(p.shape) != tuple(parts[0].shape):
                    raise _invalid(op, f"Shapes of all inputs must match: values[0].shape = "
                                       f"{_fmt_dims(parts[0].shape)} != values[{i}].shape = {_fmt_dims(p.shape)}"
                                   ) from None
            raise

    return run


def _pack_grad(op: Operation, grad: Any) -> list:
    return unstack(_dense(grad), num=op.get_attr("N"), axis=op.get_attr("axis"))


op_registry.register_op("Pack", infer=_pack_infer, kernel=_pack_kernel, grad=_pack_grad)


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> list[Tensor]:
    """Splits ``value`` along ``axis`` into a list of tensors with that dimension removed (op ``Unpack``).

    Raises:
        ValueError: ``num`` is not given and the dimension is unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.unstack(tf.constant([[1, 2], [3, 4]]), axis=1)
        ...     with tf.Session() as sess:
        ...         print(sess.run(a).tolist(), sess.run(b).tolist())
        [1, 3] [2, 4]
    """
    with _op_scope(name, "unstack", [value]) as scope:
        x = convert_to_tensor(value, name="value")
        n = x.shape.ndims
        if n is not None:
            if not -n <= axis < n:
                raise ValueError(f"Argument `axis` = {axis} not in range [{-n}, {n})")
            if num is None:
                num = x.shape[axis].value
        if num is None:
            raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
        return make_op("Unpack", [x], {"num": int(num), "axis": int(axis)}, name=scope).outputs


def _unpack_infer(op: Operation) -> list:
    x = op.inputs[0]
    num, axis = op.get_attr("num"), op.get_attr("axis")
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())] * num
    n = x.shape.ndims
    a = axis + n if axis < 0 else axis
    dims = x.shape.as_list()
    if dims[a] is not None and dims[a] != num:
        raise ValueError(f"Dimension must be {num} but is {dims[a]}")
    return [(x.dtype, TensorShape(dims[:a] + dims[a + 1:]))] * num


def _unpack_kernel(op: Operation, ctx: Any):
    num, axis = op.get_attr("num"), op.get_attr("axis")
    is_str = _is_string(op.inputs[0])

    def run(x: Any) -> Any:
        a = axis + x.ndim if axis < 0 else axis
        if x.shape[a] != num:
            raise _invalid(op, f"Input shape axis {a} must equal {num}, got shape {_fmt_dims(x.shape)}")
        parts = tuple(_obj(np.take(x, i, axis=a)) for i in range(num)) if is_str else x.unbind(a)
        return parts[0] if num == 1 else parts  # a single output is returned bare

    return run


def _unpack_grad(op: Operation, *grads: Any) -> list:
    return [stack([_dense(g) for g in grads], axis=op.get_attr("axis"))]


op_registry.register_op("Unpack", infer=_unpack_infer, kernel=_unpack_kernel, grad=_unpack_grad)


# ---- Split, SplitV -----------------------------------------------------------------------------
def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None,
          name: str = "split") -> list[Tensor]:
    """Splits ``value`` along ``axis`` into ``num_or_size_splits`` equal parts, or parts of the listed sizes.

    One size may be -1 (the rest). Returns a list of tensors.

    Raises:
        ValueError: the sizes do not fit, or the number of parts cannot be inferred.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     parts = tf.split(tf.zeros([5, 4]), [2, -1], axis=0)
        ...     [p.shape.as_list() for p in parts]
        [[2, 4], [3, 4]]
    """
    if isinstance(num_or_size_splits, numbers.Integral | Dimension) and not isinstance(num_or_size_splits, bool):
        n = int(_dim_int(num_or_size_splits))
        with _op_scope(name, "split", [value, axis]) as scope:
            a = _int_tensor(axis, name="split_dim", param="split_dim")
            x = convert_to_tensor(value, name="value")
            outs = make_op("Split", [a, x], {"num_split": n}, name=scope).outputs
        return outs
    with _op_scope(name, "split", [value, num_or_size_splits, axis]) as scope:
        sizes = _int_tensor(num_or_size_splits, name="Const", param="size_splits")
        if sizes.shape.ndims == 0:
            raise ValueError("Rank-0 tensors are not supported as the num_or_size_splits argument to split. "
                             f"Argument provided: {num_or_size_splits}")
        if num is None:
            num = sizes.shape[0].value if sizes.shape.ndims == 1 else None
            if num is None:
                raise ValueError(f"Cannot infer argument `num` from shape {num_or_size_splits}")
        x = convert_to_tensor(value, name="value")
        a = _int_tensor(axis, name="split_dim", param="split_dim")
        return make_op("SplitV", [x, sizes, a], {"num_split": int(num)}, name=scope).outputs


def _split_v_outputs(value: Tensor, sizes: Tensor, axis: Any, num: int) -> list[Tensor]:
    """SplitV without the list-building front end (used by gradients)."""
    with _op_scope(None, "split", [value, sizes]) as scope:
        a = _int_tensor(axis, name="split_dim", param="split_dim")
        return make_op("SplitV", [value, sizes, a], {"num_split": num}, name=scope).outputs


def _axis_in_range(axis: int, n: int) -> int:
    if not -n <= axis < n:
        raise ValueError(f"Dimension size, given by scalar input {axis} must be in range [{-n}, {n})")
    return axis + n if axis < 0 else axis


def _split_infer(op: Operation) -> list:
    axis_t, x = op.inputs
    num = op.get_attr("num_split")
    if num < 1:
        raise ValueError(f"num_split must be >= 1, got {num}")
    axis = _const_int(axis_t)
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())] * num
    if axis is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))] * num
    a = _axis_in_range(axis, x.shape.ndims)
    dims = x.shape.as_list()
    if dims[a] is not None:
        if dims[a] % num:
            raise ValueError(f"Dimension size must be evenly divisible by {num} but is {dims[a]}")
        dims[a] //= num
    return [(x.dtype, TensorShape(dims))] * num


def _split_kernel(op: Operation, ctx: Any):
    num = op.get_attr("num_split")
    static = _const_int(op.inputs[0])
    is_str = _is_string(op.inputs[1])

    def run(axis_value: Any, x: Any) -> Any:
        axis = static if static is not None else int(axis_value)
        n = x.ndim
        if not -n <= axis < n:
            raise _invalid(op, f"-input rank(-{n}) <= split_dim < input rank ({n}), but got {axis}")
        a = axis + n if axis < 0 else axis
        if x.shape[a] % num:
            raise _invalid(op, f"Number of ways to split should evenly divide the split dimension, but got "
                               f"split_dim {a} (size = {x.shape[a]}) and num_split {num}")
        if num == 1:
            return x
        return tuple(np.split(x, num, axis=a)) if is_str else x.tensor_split(num, a)

    return run


def _split_grad(op: Operation, *grads: Any) -> list:
    return [None, concat([_dense(g) for g in grads], op.inputs[0])]


op_registry.register_op("Split", infer=_split_infer, kernel=_split_kernel, grad=_split_grad)


def _resolve_sizes(sizes: list[int], dim: int) -> list[int] | str:
    """SplitV sizes with the -1 filled in, or the error message."""
    minus = [i for i, s in enumerate(sizes) if s == -1]
    if len(minus) > 1:
        return "size_splits can only have one -1"
    known = sum(s for s in sizes if s != -1)
    if minus:
        if known > dim:
            return ("Determined shape must either match input shape along split_dim exactly if fully specified, "
                    f"or be less than the size of the input along split_dim if not fully specified.  Got: {known}")
        sizes = list(sizes)
        sizes[minus[0]] = dim - known
    elif known != dim:
        return ("Determined shape must either match input shape along split_dim exactly if fully specified, or be "
                f"less than the size of the input along split_dim if not fully specified.  Got: {known}")
    if any(s < 0 for s in sizes):
        return f"Split size at index {min(i for i, s in enumerate(sizes) if s < 0)} must be >= 0. Got: " \
               f"{min(sizes)}"
    return sizes


def _split_v_infer(op: Operation) -> list:
    x, sizes_t, axis_t = op.inputs
    num = op.get_attr("num_split")
    if sizes_t.shape.ndims == 1 and sizes_t.shape[0].value not in (None, num):
        raise ValueError(f"Dimension must be {num} but is {sizes_t.shape[0].value}")
    sizes = _const_ints(sizes_t)
    axis = _const_int(axis_t)
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())] * num
    if axis is None:
        return [(x.dtype, unknown_shape(x.shape.ndims))] * num
    a = _axis_in_range(axis, x.shape.ndims)
    dims = x.shape.as_list()
    if sizes is None:
        return [(x.dtype, TensorShape(dims[:a] + [None] + dims[a + 1:]))] * num
    if dims[a] is not None:
        resolved = _resolve_sizes(sizes, dims[a])
        if isinstance(resolved, str):
            if "Determined" in resolved:
                resolved = f"can't split axis of size {dims[a]} into pieces of size {_fmt_dims(sizes)}"
            raise ValueError(resolved)
    else:
        if sum(1 for s in sizes if s == -1) > 1:
            raise ValueError("size_splits can only have one -1")
        resolved = [None if s == -1 else s for s in sizes]
    return [(x.dtype, TensorShape(dims[:a] + [s] + dims[a + 1:])) for s in resolved]


def _split_v_kernel(op: Operation, ctx: Any):
    num = op.get_attr("num_split")
    static_sizes = _const_ints(op.inputs[1])
    static_axis = _const_int(op.inputs[2])
    is_str = _is_string(op.inputs[0])

    def run(x: Any, sizes_value: Any, axis_value: Any) -> Any:
        axis = static_axis if static_axis is not None else int(axis_value)
        n = x.ndim
        if not -n <= axis < n:
            raise _invalid(op, f"-input rank(-{n}) <= split_dim < input rank ({n}), but got {axis}")
        a = axis + n if axis < 0 else axis
        sizes = _resolve_sizes(static_sizes if static_sizes is not None else _to_list(sizes_value), x.shape[a])
        if isinstance(sizes, str):
            raise _invalid(op, sizes)
        if num == 1:
            return x
        if is_str:
            return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=a))
        return x.split(sizes, a)

    return run


def _split_v_grad(op: Operation, *grads: Any) -> list:
    return [concat([_dense(g) for g in grads], op.inputs[2]), None, None]


op_registry.register_op("SplitV", infer=_split_v_infer, kernel=_split_v_kernel, grad=_split_v_grad)


# ---- Slice -------------------------------------------------------------------------------------
def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """Extracts ``size[i]`` elements from ``begin[i]`` in each dimension; a size of -1 takes the rest.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3], [4, 5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.slice(x, [0, 1], [-1, 2])).tolist())
        [[2, 3], [5, 6]]
    """
    with _op_scope(name, "Slice", [input_, begin, size]) as scope:
        x = convert_to_tensor(input_, name="input")
        b = _int_tensor(begin, name="begin")
        s = _int_tensor(size, name="size")
        if b.dtype is not s.dtype:
            raise TypeError(f"Input 'size' of 'Slice' Op has type {s.dtype.name} that does not match type "
                            f"{b.dtype.name} of argument 'begin'.")
        return make_op("Slice", [x, b, s], {}, name=scope).outputs[0]


def _slice_bounds(dims: Sequence[int], begin: Sequence[int], sizes: Sequence[int]) -> list[builtins.slice] | str:
    """The Python slices a Slice op takes, or TF's error message."""
    out = []
    for i, (d, b, s) in enumerate(zip(dims, begin, sizes)):
        if s == -1:
            s = d - b
        if not 0 <= b <= d:
            return f"Expected begin[{i}] in [0, {d}], but got {b}"
        if not 0 <= s <= d - b:
            return f"Expected size[{i}] in [0, {d - b}], but got {s}"
        out.append(builtins.slice(b, b + s))
    return out


def _slice_infer(op: Operation) -> list:
    x, begin_t, size_t = op.inputs
    for t in (begin_t, size_t):
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {t.shape.ndims}")
    n = x.shape.ndims
    for t in (begin_t, size_t):
        if t.shape.ndims == 1 and t.shape[0].value is not None:
            if n is not None and t.shape[0].value != n:
                raise ValueError(f"Shape must be rank {t.shape[0].value} but is rank {n}")
            n = t.shape[0].value
    if n is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    begin, sizes = _partial_ints(begin_t, n), _partial_ints(size_t, n)
    out: list[int | None] = []
    for i, (d, b, s) in enumerate(zip(dims, begin, sizes)):
        if b is not None and b < 0:
            raise ValueError(f"Expected begin[{i}] in [0, {d if d is not None else '?'}], but got {b}")
        if s is not None and s < -1:
            raise ValueError(f"Expected size[{i}] >= -1, but got {s}")
        if d is not None and b is not None and b > d:
            raise ValueError(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s == -1:
            out.append(d - b if d is not None and b is not None else None)
            continue
        if d is not None and b is not None and s is not None and b + s > d:
            raise ValueError(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        out.append(s)
    return [(x.dtype, TensorShape(out))]


def _slice_kernel(op: Operation, ctx: Any):
    begin_c, size_c = _const_ints(op.inputs[1]), _const_ints(op.inputs[2])
    cache: dict[Any, tuple[builtins.slice, ...]] = {}

    def index(dims: tuple[int, ...], begin: Sequence[int], sizes: Sequence[int]) -> tuple[builtins.slice, ...]:
        if len(begin) != len(dims) or len(sizes) != len(dims):
            raise _invalid(op, f"Expected begin and size arguments to be 1-D tensors of size {len(dims)}, but got "
                               f"shapes [{len(begin)}] and [{len(sizes)}] instead.")
        bounds = _slice_bounds(dims, begin, sizes)
        if isinstance(bounds, str):
            raise _invalid(op, bounds)
        return tuple(bounds)

    if begin_c is not None and size_c is not None:
        def run(x: Any, _begin: Any, _size: Any) -> Any:
            dims = tuple(x.shape)
            idx = cache.get(dims)
            if idx is None:
                idx = _remember(cache, dims, index(dims, begin_c, size_c))
            return x[idx]
    else:
        def run(x: Any, begin_v: Any, size_v: Any) -> Any:
            return x[index(tuple(x.shape), _to_list(begin_v), _to_list(size_v))]

    return run


def _slice_grad(op: Operation, grad: Any) -> list:
    x, begin_t, _ = op.inputs
    grad = _dense(grad)
    out = op.outputs[0]
    begin = _const_ints(begin_t)
    if begin is not None and x.shape.is_fully_defined() and out.shape.is_fully_defined():
        after = [d - b - s for d, b, s in zip(x.shape.as_list(), begin, out.shape.as_list())]
        paddings = constant(np.stack([begin, after], axis=1).astype(np.int32).reshape(-1, 2))
        return [pad(grad, paddings), None, None]
    from dtf_notebook.ops import math_ops

    shape_x = shape(x, out_type=begin_t.dtype)
    after_t = math_ops.subtract(math_ops.subtract(shape_x, shape(grad, out_type=begin_t.dtype)), begin_t)
    paddings = stack([begin_t, after_t], axis=1)
    return [pad(grad, paddings), None, None]


op_registry.register_op("Slice", infer=_slice_infer, kernel=_slice_kernel, grad=_slice_grad)


# ---- StridedSlice ------------------------------------------------------------------------------
_NEW_AXIS = -1
_MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


class _SliceSpecError(ValueError):
    """A strided-slice spec that cannot apply to the input (TF's message)."""


def _dense_spec(ndims: int, n_sparse: int, masks: Sequence[int]) -> tuple[list[tuple[int | None, bool, bool, bool]],
                                                                           list[int]]:
    """TF's BuildDenseSpec: maps the sparse slice spec onto one entry per input dimension.

    Returns ``(dense, final)``: ``dense[d] = (sparse index or None, begin masked, end masked, shrink)`` and, per
    output dimension, the dense dimension it comes from (``_NEW_AXIS`` for an inserted one); shrunk dimensions
    do not appear in ``final``.
    """
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    if bin(ellipsis_mask & ((1 << n_sparse) - 1)).count("1") > 1:
        raise _SliceSpecError("Multiple ellipses in slice spec not allowed")
    ellipsis_seen = False
    new_after_ellipsis = 0
    for i in range(n_sparse):
        if ellipsis_seen and (new_axis_mask >> i) & 1:
            new_after_ellipsis += 1
        if (ellipsis_mask >> i) & 1:
            ellipsis_seen = True
    sparse_dims = n_sparse
    if not ellipsis_seen:
        ellipsis_mask |= 1 << n_sparse  # an implicit ellipsis at the end
        sparse_dims += 1
    dense: list[tuple[int | None, bool, bool, bool]] = []
    final: list[int] = []
    for i in range(sparse_dims):
        if (ellipsis_mask >> i) & 1:
            stop = min(ndims - (sparse_dims - i) + 1 + new_after_ellipsis, ndims)
            while len(dense) < stop:
                final.append(len(dense))
                dense.append((None, True, True, False))
        elif (new_axis_mask >> i) & 1:
            final.append(_NEW_AXIS)
        else:
            if len(dense) == ndims:
                raise _SliceSpecError(f"Index out of range using input dim {len(dense)}; input has only {ndims} dims")
            shrink = bool((shrink_mask >> i) & 1)
            if not shrink:
                final.append(len(dense))
            dense.append((i, bool((begin_mask >> i) & 1), bool((end_mask >> i) & 1), shrink))
    return dense, final


def _slice_dim(i: int, dim: int | None, b: int | None, e: int | None, s: int | None, begin_masked: bool,
               end_masked: bool, shrink: bool) -> tuple[int | None, int | None, int | None]:
    """One dense dimension: ``(start, stop, size)`` after TF's canonicalisation (None where unknown)."""
    if s == 0:
        raise _SliceSpecError(f"strides[{i}] must be non-zero")
    if dim is None:
        return None, None, 1 if shrink else None
    if shrink:
        if s is not None and s <= 0:
            raise _SliceSpecError("only stride 1 allowed on non-range indexing.")
        if b is None:
            return None, None, 1
        x = b + dim if b < 0 else b
        if not 0 <= x < dim:
            raise _SliceSpecError(f"slice index {x} of dimension {i} out of bounds.")
        return x, x + 1, 1
    if s is None:
        return None, None, None
    lo, hi = (0, dim) if s > 0 else (-1, dim - 1)

    def canonical(v: int | None, masked: bool, is_end: bool) -> int | None:
        if masked:
            return (hi if is_end else lo) if s > 0 else (lo if is_end else hi)
        if v is None:
            return None
        v = v + dim if v < 0 else v
        return min(max(v, lo), hi)

    start, stop = canonical(b, begin_masked, False), canonical(e, end_masked, True)
    if start is None or stop is None:
        return start, stop, None
    length = stop - start
    if length == 0 or (length < 0) != (s < 0):
        return start, stop, 0
    return start, stop, (abs(length) + abs(s) - 1) // abs(s)


def _strided_slice_shape(dims: Sequence[int | None], begin: Sequence[int | None], end: Sequence[int | None],
                         strides: Sequence[int | None], masks: Sequence[int]) -> list[int | None]:
    """The output shape of a strided slice over ``dims`` (entries may be unknown)."""
    dense, final = _dense_spec(len(dims), len(begin), masks)
    sizes = []
    for d, (j, bm, em, shrink) in enumerate(dense):
        b, e, s = (begin[j], end[j], strides[j]) if j is not None else (0, 0, 1)
        sizes.append(_slice_dim(d, dims[d], b, e, s, bm, em, shrink)[2])
    return [1 if f == _NEW_AXIS else sizes[f] for f in final]


def _strided_slice_plan(dims: Sequence[int], begin: Sequence[int], end: Sequence[int], strides: Sequence[int],
                        masks: Sequence[int]) -> tuple[tuple[Any, ...], tuple[int, ...], tuple[int, ...],
                                                       tuple[int, ...] | None]:
    """How to run a strided slice on a known shape: ``(index, flip_dims, sliced_shape, final_shape or None)``.

    ``x[index]`` takes the elements with positive steps (torch has no negative-step slicing), flipping
    ``flip_dims`` of that result restores the requested order, and a reshape to ``final_shape`` inserts new axes.
    """
    dense, final = _dense_spec(len(dims), len(begin), masks)
    index: list[Any] = []
    flips: list[int] = []
    sliced: list[int] = []
    for d, (j, bm, em, shrink) in enumerate(dense):
        b, e, s = (begin[j], end[j], strides[j]) if j is not None else (0, 0, 1)
        start, stop, n = _slice_dim(d, dims[d], b, e, s, bm, em, shrink)
        if shrink:
            index.append(start)
            continue
        if n == 0:
            index.append(builtins.slice(0, 0, 1))
        elif s > 0:
            index.append(builtins.slice(start, stop, s))
        else:
            last = start + s * (n - 1)
            index.append(builtins.slice(last, start + 1, -s))
            if n > 1:
                flips.append(len(sliced))
        sliced.append(n)
    final_shape = tuple(_final_sizes(final, dense, sliced)) if _NEW_AXIS in final else None
    return tuple(index), tuple(flips), tuple(sliced), final_shape


def _final_sizes(final: Sequence[int], dense: Sequence[tuple[Any, ...]], sliced: Sequence[int]) -> list[int]:
    """Sizes of ``final``'s entries: dense dims map onto ``sliced`` (which skips shrunk dims)."""
    position, k = {}, 0
    for d, entry in enumerate(dense):
        if not entry[3]:
            position[d] = k
            k += 1
    return [1 if f == _NEW_AXIS else sliced[position[f]] for f in final]


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0, end_mask: int = 0,
                  ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0, var: Any = None,
                  name: str | None = None) -> Tensor:
    """Numpy-style strided slicing with TF's bit masks (what ``x[...]`` builds).

    Bit ``i`` of ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]`` (the full range),
    ``ellipsis_mask`` marks an ``...``, ``new_axis_mask`` inserts a dimension and ``shrink_axis_mask``
    takes the single index ``begin[i]`` and drops the dimension.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3], [4, 5, 6]])
        ...     y = tf.strided_slice(x, [0, -1], [0, 0], [1, -1], begin_mask=1, end_mask=3)
        ...     with tf.Session() as sess:
        ...         print(sess.run(y).tolist())
        [[3, 2, 1], [6, 5, 4]]
    """
    with _op_scope(name, "StridedSlice", [input_, begin, end, strides]) as scope:
        x = convert_to_tensor(input_, name="input")
        b = _int_tensor(begin, name="begin")
        e = _int_tensor(end, name="end")
        if strides is None:
            n = b.shape[0].value if b.shape.ndims == 1 else None
            s = constant(np.ones(n, dtype=b.dtype.np_dtype), name="strides") if n is not None else ones_like(b)
        else:
            s = _int_tensor(strides, name="strides")
        masks = dict(zip(_MASK_NAMES, (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)))
        return make_op("StridedSlice", [x, b, e, s], {k: int(v) for k, v in masks.items()}, name=scope).outputs[0]


def _masks(op: Operation) -> tuple[int, ...]:
    return tuple(op.get_attr(k) for k in _MASK_NAMES)


def _spec_length(op: Operation, tensors: Sequence[Tensor]) -> int | None:
    lengths = []
    for t in tensors:
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"Shape must be rank 1 but is rank {t.shape.ndims}")
        lengths.append(t.shape[0].value if t.shape.ndims == 1 else None)
    known = [n for n in lengths if n is not None]
    if any(n != known[0] for n in known):
        raise ValueError("Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
                         f"{', '.join(_fmt_dims([n]) for n in lengths[:-1])}, and {_fmt_dims([lengths[-1]])} instead.")
    return known[0] if known else None


def _strided_slice_infer(op: Operation) -> list:
    x = op.inputs[0]
    n = _spec_length(op, op.inputs[1:4])
    if x.shape.ndims is None or n is None:
        return [(x.dtype, unknown_shape())]
    begin, end, strides = (_partial_ints(t, n) for t in op.inputs[1:4])
    try:
        dims = _strided_slice_shape(x.shape.as_list(), begin, end, strides, _masks(op))
    except _SliceSpecError as e:
        raise ValueError(str(e)) from None
    return [(x.dtype, TensorShape(dims))]


def _apply_plan(x: Any, plan: tuple[Any, ...], is_str: bool) -> Any:
    index, flips, _, final_shape = plan
    y = _obj(x[index]) if is_str else x[index]
    if flips:
        y = np.flip(y, flips) if is_str else torch.flip(y, flips)
    if final_shape is not None:
        y = y.reshape(final_shape)
    return y


def _plan_maker(op: Operation, masks: tuple[int, ...]):
    def make(dims: tuple[int, ...], begin: Sequence[int], end: Sequence[int], strides: Sequence[int]):
        if not len(begin) == len(end) == len(strides):
            raise _invalid(op, "Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
                               f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead.")
        try:
            return _strided_slice_plan(dims, begin, end, strides, masks)
        except _SliceSpecError as e:
            raise _invalid(op, str(e)) from None

    return make


def _spec_values(op: Operation, first: int) -> tuple[list[int], list[int], list[int]] | None:
    values = [_const_ints(t) for t in op.inputs[first:first + 3]]
    return None if any(v is None for v in values) else tuple(values)  # type: ignore[return-value]


def _strided_slice_kernel(op: Operation, ctx: Any):
    make = _plan_maker(op, _masks(op))
    static = _spec_values(op, 1)
    is_str = _is_string(op.inputs[0])
    cache: dict[Any, Any] = {}

    if static is not None:
        begin, end, strides = static

        def run(x: Any, _b: Any, _e: Any, _s: Any) -> Any:
            dims = tuple(x.shape)
            plan = cache.get(dims)
            if plan is None:
                plan = _remember(cache, dims, make(dims, begin, end, strides))
            return _apply_plan(x, plan, is_str)
    else:
        def run(x: Any, b: Any, e: Any, s: Any) -> Any:
            return _apply_plan(x, make(tuple(x.shape), _to_list(b), _to_list(e), _to_list(s)), is_str)

    return run


def _strided_slice_grad(op: Operation, grad: Any) -> list:
    x, begin, end, strides = op.inputs
    masks = {k: op.get_attr(k) for k in _MASK_NAMES}
    shape_x = shape(x, out_type=begin.dtype)
    with _op_scope(None, "StridedSliceGrad", [shape_x, grad]) as scope:
        dx = make_op("StridedSliceGrad", [shape_x, begin, end, strides, _dense(grad)], masks, name=scope).outputs[0]
    return [dx, None, None, None]


op_registry.register_op(
    "StridedSlice", infer=_strided_slice_infer, kernel=_strided_slice_kernel, grad=_strided_slice_grad
)


def _strided_slice_grad_infer(op: Operation) -> list:
    shape_t, dy = op.inputs[0], op.inputs[4]
    _spec_length(op, op.inputs[1:4])
    return [(dy.dtype, _partial_shape(shape_t))]


def _strided_slice_grad_kernel(op: Operation, ctx: Any):
    make = _plan_maker(op, _masks(op))
    static_shape = _const_ints(op.inputs[0])
    static = _spec_values(op, 1)
    cache: dict[Any, Any] = {}

    def run(shape_v: Any, b: Any, e: Any, s: Any, dy: torch.Tensor) -> torch.Tensor:
        dims = tuple(static_shape) if static_shape is not None else tuple(_to_list(shape_v))
        if static is not None:
            plan = cache.get(dims)
            if plan is None:
                plan = _remember(cache, dims, make(dims, *static))
        else:
            plan = make(dims, _to_list(b), _to_list(e), _to_list(s))
        index, flips, sliced, _ = plan
        g = dy.reshape(sliced)
        if flips:
            g = torch.flip(g, flips)
        out = dy.new_zeros(dims)
        out[index] = g
        return out

    return run


def _strided_slice_grad_grad(op: Operation, grad: Any) -> list:
    masks = {k: op.get_attr(k) for k in _MASK_NAMES}
    _, begin, end, strides, _ = op.inputs
    return [None, None, None, None, strided_slice(_dense(grad), begin, end, strides, **masks)]


op_registry.register_op(
    "StridedSliceGrad",
    infer=_strided_slice_grad_infer,
    kernel=_strided_slice_grad_kernel,
    grad=_strided_slice_grad_grad,
)


# ---- Tensor.__getitem__ ------------------------------------------------------------------------
_SLICE_TYPE_ERROR = (
    "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar tf.int32/tf.int64 tensors are "
    "valid indices"
)
_SLICE_INDEX_DTYPES = (dtypes.int16, dtypes.int32, dtypes.int64)


def _check_index(idx: Any) -> None:
    if isinstance(idx, numbers.Integral | Dimension):
        return
    dtype = getattr(idx, "dtype", None)
    idx_shape = getattr(idx, "shape", None)
    rank_of = idx_shape.ndims if isinstance(idx_shape, TensorShape) else (len(idx_shape) if idx_shape is not None
                                                                          else None)
    ok_dtype = dtype is not None and (dtype in _SLICE_INDEX_DTYPES if isinstance(dtype, dtypes.DType)
                                      else np.dtype(dtype).kind in "iu")
    if not ok_dtype or rank_of not in (None, 0):
        raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _index_value(v: Any) -> Any:
    if isinstance(v, Dimension):
        return v.value
    if isinstance(v, np.ndarray | np.generic) and v.dtype.kind in "iu" and v.ndim == 0:
        return int(v)
    return v


def _slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Tensor:
    """``tensor[slice_spec]``: Python indexing mapped onto StridedSlice (TF's ``_slice_helper``).

    Ints drop a dimension, slices (any step, negative too) keep one, ``...`` stands for the remaining
    dimensions, ``None``/``tf.newaxis`` inserts one; scalar int tensors may replace ints and slice bounds.
    A bool tensor (or array) indexes with :func:`boolean_mask`.

    Raises:
        TypeError: an index is not one of those.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3], [4, 5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(x[1, ::-1]).tolist(), x[:, None, 0].shape.as_list())
        [6, 5, 4] [2, 1]
    """
    tensor = convert_to_tensor(tensor)
    if (isinstance(slice_spec, bool | np.bool_)
            or (isinstance(slice_spec, Tensor) and slice_spec.dtype is dtypes.bool)
            or (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == np.bool_)):
        return boolean_mask(tensor, slice_spec)
    if not isinstance(slice_spec, list | tuple):
        slice_spec = [slice_spec]
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for index, s in enumerate(slice_spec):
        bit = 1 << index
        if isinstance(s, builtins.slice):
            bound_dtype = None
            for part in (s.start, s.stop, s.step):
                if isinstance(part, Tensor):
                    if part.dtype is dtypes.int64 or bound_dtype is None:
                        bound_dtype = part.dtype
            start, stop, step = (_index_value(part) for part in (s.start, s.stop, s.step))
            for part in (start, stop, step):
                if part is not None:
                    _check_index(part)
            if start is None:
                start = 0 if bound_dtype is None else constant(0, dtype=bound_dtype)
                begin_mask |= bit
            if stop is None:
                stop = 0 if bound_dtype is None else constant(0, dtype=bound_dtype)
                end_mask |= bit
            if step is None:
                step = 1 if bound_dtype is None else constant(1, dtype=bound_dtype)
            begin.append(start)
            end.append(stop)
            strides.append(step)
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        else:
            s = _index_value(s)
            _check_index(s)
            begin.append(s)
            # StridedSlice ignores `end` on a shrunk axis (it uses begin + 1), so no `s + 1` op is needed.
            end.append(s)
            strides.append(1)
            shrink_axis_mask |= bit
    with _op_scope(None, "strided_slice", [tensor] + begin + end + strides) as scope:
        if begin:
            packed = [stack(part) for part in (begin, end, strides)]
            if any(p.dtype is dtypes.int64 for p in packed) and not all(p.dtype is dtypes.int64 for p in packed):
                from dtf_notebook.ops import math_ops

                packed = [p if p.dtype is dtypes.int64 else math_ops.cast(p, dtypes.int64) for p in packed]
            packed_begin, packed_end, packed_strides = packed
        else:
            packed_begin = packed_end = packed_strides = constant([], dtype=dtypes.int32)
        return strided_slice(tensor, packed_begin, packed_end, packed_strides, begin_mask=begin_mask,
                             end_mask=end_mask, shrink_axis_mask=shrink_axis_mask, new_axis_mask=new_axis_mask,
                             ellipsis_mask=ellipsis_mask, var=var, name=scope)


Tensor._override_operator("__getitem__", _slice_helper)


# ---- GatherV2 ----------------------------------------------------------------------------------
def gather(params: Any, indices: Any, validate_indices: Any = None, name: str | None = None, axis: Any = None,
           batch_dims: int = 0) -> Tensor:
    """Gathers slices of ``params`` along ``axis`` at ``indices`` (any shape): the result has shape
    ``params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]``.

    The gradient for ``params`` along axis 0 is an ``IndexedSlices`` (only the gathered rows).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     p = tf.constant([[1, 2], [3, 4], [5, 6]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.gather(p, [2, 0])).tolist(), sess.run(tf.gather(p, 1, axis=1)).tolist())
        [[5, 6], [1, 2]] [2, 4, 6]
    """
    if axis is None:
        axis = batch_dims
    with _op_scope(name, "GatherV2", [params, indices, axis]) as scope:
        p = convert_to_tensor(params, name="params")
        i = convert_to_tensor(indices, name="indices")
        _check_dtype(i, (dtypes.int16, dtypes.int32, dtypes.int64), "indices")
        a = _int_tensor(axis, name="axis", param="axis")
        batch_dims = int(batch_dims)
        if batch_dims < 0:
            if i.shape.ndims is None:
                raise ValueError("batch_dims < 0 needs indices of known rank")
            batch_dims += i.shape.ndims
        return make_op("GatherV2", [p, i, a], {"batch_dims": batch_dims}, name=scope).outputs[0]


def _gather_infer(op: Operation) -> list:
    p, i, axis_t = op.inputs
    b = op.get_attr("batch_dims")
    axis = _const_int(axis_t)
    if axis_t.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {axis_t.shape.ndims}")
    if p.shape.ndims is None or i.shape.ndims is None or axis is None:
        if p.shape.ndims is not None and i.shape.ndims is not None:
            return [(p.dtype, unknown_shape(p.shape.ndims + i.shape.ndims - 1 - b))]
        return [(p.dtype, unknown_shape())]
    n = p.shape.ndims
    if axis >= n:
        raise ValueError(f"Shape must be at least rank {axis + 1} but is rank {n}")
    if axis < -n:
        raise ValueError(f"Expected axis in the range [{-n}, {n}), but got {axis}")
    a = axis + n if axis < 0 else axis
    if b > i.shape.ndims:
        raise ValueError(f"batch_dims ({b}) must be less than or equal to rank(indices) ({i.shape.ndims}).")
    if b > a:
        raise ValueError(f"batch_dims ({b}) must be less than or equal to axis ({a}).")
    pd, idims = p.shape.as_list(), i.shape.as_list()
    for k in range(b):
        if pd[k] is not None and idims[k] is not None and pd[k] != idims[k]:
            raise ValueError(f"Dimension {k} in both shapes must be equal, but are {pd[k]} and {idims[k]}")
    return [(p.dtype, TensorShape(pd[:a] + idims[b:] + pd[a + 1:]))]


def _gather_error(op: Operation, idx: torch.Tensor, limit: int) -> errors.InvalidArgumentError:
    bad = ((idx < 0) | (idx >= limit)).nonzero()[0].tolist()
    value = int(idx[tuple(bad)])
    where = ",".join(str(k) for k in bad)
    return _invalid(op, f"indices[{where}] = {value} is not in [0, {limit})")


def _gather_kernel(op: Operation, ctx: Any):
    static_axis = _const_int(op.inputs[2])
    b = op.get_attr("batch_dims")
    is_str = _is_string(op.inputs[0])

    def run(params: Any, idx: Any, axis_value: Any) -> Any:
        axis = static_axis if static_axis is not None else int(axis_value)
        n = params.ndim
        if not -n <= axis < n:
            raise _invalid(op, f"Expected axis in the range [{-n}, {n}), but got {axis}")
        a = axis + n if axis < 0 else axis
        limit = params.shape[a]
        if isinstance(idx, np.ndarray):
            idx = torch.from_numpy(idx)
        if idx.numel():
            # One reduction + host read: an out-of-range index must fail loudly (CUDA would assert instead).
            lo, hi = torch.aminmax(idx)
            if int(lo) < 0 or int(hi) >= limit:
                raise _gather_error(op, idx, limit)
        if is_str:
            return _gather_numpy(params, idx.cpu().numpy(), a, b)
        if b == 0:
            flat = params.index_select(a, idx.reshape(-1))
            return flat.reshape(params.shape[:a] + idx.shape + params.shape[a + 1:])
        return _batch_gather(params, idx, a, b)

    return run


def _gather_numpy(params: np.ndarray, idx: np.ndarray, a: int, b: int) -> np.ndarray:
    if b == 0:
        return _obj(np.take(params, idx, axis=a))
    batch = params.shape[:b]
    out = [np.take(params[k], idx[k], axis=a - b) for k in np.ndindex(*batch)]
    return np.stack(out).reshape(batch + out[0].shape) if out else np.empty(
        batch + params.shape[b:a] + idx.shape[b:] + params.shape[a + 1:], dtype=object)


def _batch_gather(params: torch.Tensor, idx: torch.Tensor, a: int, b: int) -> torch.Tensor:
    """Gather with ``b`` leading batch dimensions shared by ``params`` and ``idx``."""
    batch = params.shape[:b]
    nb = int(np.prod(batch, dtype=np.int64))
    outer = params.shape[b:a]
    inner = params.shape[a + 1:]
    p = params.reshape((nb, int(np.prod(outer, dtype=np.int64)), params.shape[a], -1))
    i = idx.reshape(nb, -1).long()
    rows = torch.arange(nb, device=params.device).view(nb, 1, 1)
    cols = torch.arange(p.shape[1], device=params.device).view(1, -1, 1)
    out = p[rows, cols, i.unsqueeze(1)]  # [nb, outer, n_idx, inner]
    return out.reshape(batch + outer + idx.shape[b:] + inner)


def _gather_grad(op: Operation, grad: Any) -> list:
    params, indices, axis_t = op.inputs
    b = op.get_attr("batch_dims")
    axis = _const_int(axis_t)
    grad = _dense(grad)
    graph = op.graph
    with graph.colocate_with(params.op):
        params_shape = shape(params)
    if axis == 0:
        n_idx = indices.shape.num_elements()
        tail = params.shape[1:] if params.shape.ndims is not None else unknown_shape()
        if n_idx is not None and tail.is_fully_defined():
            values_shape: Any = constant([n_idx] + tail.as_list(), dtype=dtypes.int32)
            flat_indices_shape: Any = constant([n_idx], dtype=dtypes.int32)
        else:
            flat_indices_shape = expand_dims(size(indices), 0)
            values_shape = concat([flat_indices_shape, params_shape[1:]], 0)
        values = reshape(grad, values_shape)
        flat_indices = reshape(indices, flat_indices_shape)
        return [IndexedSlices(values, flat_indices, params_shape), None, None]
    return [_gather_grad_along_axis(params, indices, axis_t, b, grad, params_shape), None, None]


def _gather_grad_along_axis(params: Tensor, indices: Tensor, axis_t: Tensor, b: int, grad: Tensor,
                            params_shape: Tensor) -> Tensor:
    """TF's gradient for gathers along a non-leading axis: move the gathered axis right after the batch
    dimensions, segment-sum the rows into place, and move it back."""
    from dtf_notebook.ops import math_ops

    axis = _const_int(axis_t)
    n = params.shape.ndims
    if axis is not None and n is not None:
        a = axis + n if axis < 0 else axis
        perm = list(range(b)) + [a] + list(range(b, a)) + list(range(a + 1, n))
        transpose_dims: Any = constant(perm, dtype=dtypes.int32)
        invert_dims: Any = constant(np.argsort(perm).astype(np.int32), dtype=dtypes.int32)
        if params.shape.is_fully_defined():
            dims = params.shape.as_list()
            values_shape: Any = constant(dims[:a] + [-1] + dims[a + 1:], dtype=dtypes.int32)
            gather_dim_size: Any = constant(dims[a], dtype=dtypes.int32)
        else:
            values_shape = concat([params_shape[:a], [-1], params_shape[a + 1:]], 0)
            gather_dim_size = params_shape[a]
    else:
        a_t = math_ops.floormod(axis_t, rank(params))
        outer_shape = params_shape[:a_t]
        values_shape = concat([outer_shape, [-1], params_shape[a_t:][1:]], 0)
        gather_dim_size = gather(params_shape, a_t)
        values_dims = size(values_shape)
        axis_dims = size(outer_shape)
        outer_batch = math_ops.range(b)
        batch_axis = math_ops.range(b, axis_dims)
        inner_axes = math_ops.range(math_ops.add(axis_dims, 1), values_dims)
        transpose_dims = concat([outer_batch, expand_dims(axis_dims, 0), batch_axis, inner_axes], 0)
        invert_dims = concat([outer_batch, math_ops.add(batch_axis, 1), [b], inner_axes], 0)
    values_t = transpose(reshape(grad, values_shape), transpose_dims)
    if not b:
        params_grad = math_ops.unsorted_segment_sum(values_t, reshape(indices, [-1]), gather_dim_size)
        return transpose(params_grad, invert_dims)
    # Batched: offset each batch's indices by batch_index * gather_dim_size and segment-sum over the flat batch.
    values_t_shape = shape(values_t)
    batch_shape = values_t_shape[:b]
    flat_values_shape = concat([[-1], values_t_shape[b + 1:]], 0)
    batch_size = math_ops.reduce_prod(batch_shape)
    offsets = math_ops.multiply(math_ops.range(batch_size), gather_dim_size)
    rest = indices.shape.ndims - b if indices.shape.ndims is not None else math_ops.subtract(rank(indices), b)
    offsets = reshape(offsets, concat([batch_shape, ones(stack([rest]) if isinstance(rest, Tensor) else [rest],
                                                         dtypes.int32)], 0))
    flat_idx = math_ops.add(math_ops.cast(indices, dtypes.int32), offsets)
    segments = math_ops.unsorted_segment_sum(reshape(values_t, flat_values_shape), reshape(flat_idx, [-1]),
                                             math_ops.multiply(gather_dim_size, batch_size))
    params_grad = reshape(segments, concat([batch_shape, flat_values_shape], 0))
    return transpose(params_grad, invert_dims)


op_registry.register_op("GatherV2", infer=_gather_infer, kernel=_gather_kernel, grad=_gather_grad)


# ---- Tile --------------------------------------------------------------------------------------
def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Repeats ``input`` ``multiples[i]`` times along each dimension ``i``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.tile(tf.constant([[1, 2]]), [2, 2])).tolist())
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    with _op_scope(name, "Tile", [input, multiples]) as scope:
        x = convert_to_tensor(input, name="input")
        m = _int_tensor(multiples, name="multiples")
        return make_op("Tile", [x, m], {}, name=scope).outputs[0]


def _tile_infer(op: Operation) -> list:
    x, m_t = op.inputs
    if m_t.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {m_t.shape.ndims}")
    n = x.shape.ndims
    m_len = m_t.shape[0].value if m_t.shape.ndims == 1 else None
    if n is not None and m_len is not None and n != m_len:
        raise ValueError(f"Shape must be rank {m_len} but is rank {n}")
    n = n if n is not None else m_len
    if n is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    mult = _partial_ints(m_t, n)
    for i, k in enumerate(mult):
        if k is not None and k < 0:
            raise ValueError(f"Expected multiples[{i}] >= 0, but got {k}")
    return [(x.dtype, TensorShape([d * k if d is not None and k is not None else None for d, k in zip(dims, mult)]))]


def _tile_kernel(op: Operation, ctx: Any):
    static = _const_ints(op.inputs[1])
    is_str = _is_string(op.inputs[0])

    def check(x: Any, mult: Sequence[int]) -> None:
        if len(mult) != x.ndim:
            raise _invalid(op, f"Expected multiples argument to be a vector of length {x.ndim} but got length "
                               f"{len(mult)}")
        for i, k in enumerate(mult):
            if k < 0:
                raise _invalid(op, f"Expected multiples[{i}] >= 0, but got {k}")

    def run(x: Any, mult_value: Any) -> Any:
        mult = static if static is not None else _to_list(mult_value)
        if len(mult) != x.ndim or static is None:
            check(x, mult)
        return np.tile(x, mult) if is_str else x.repeat(*mult) if mult else x

    return run


def _tile_grad(op: Operation, grad: Any) -> list:
    x, m_t = op.inputs
    grad = _dense(grad)
    from dtf_notebook.ops import math_ops

    mult = _const_ints(m_t)
    if mult is not None and x.shape.is_fully_defined():
        split_shape = [v for pair in zip(mult, x.shape.as_list()) for v in pair]
        axes: Any = list(range(0, len(split_shape), 2))
        split_t: Any = constant(split_shape, dtype=dtypes.int32)
    else:
        input_shape = shape(x, out_type=m_t.dtype)
        split_t = reshape(transpose(stack([m_t, input_shape])), [-1])
        axes = math_ops.range(0, size(split_t), 2)
    dx = math_ops.reduce_sum(reshape(grad, split_t), axes)
    dx.set_shape(x.shape)
    return [dx, None]


op_registry.register_op("Tile", infer=_tile_infer, kernel=_tile_kernel, grad=_tile_grad)


# ---- Pad, PadV2, MirrorPad, MirrorPadGrad ------------------------------------------------------
def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", name: str | None = None,
        constant_values: Any = 0) -> Tensor:
    """Pads ``tensor``: ``paddings[i] = [before, after]`` elements around dimension ``i``.

    ``mode`` is ``"CONSTANT"`` (filled with ``constant_values``), ``"REFLECT"`` (mirrored without the edge)
    or ``"SYMMETRIC"`` (mirrored with the edge), case-insensitive.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([[1, 2, 3]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.pad(x, [[0, 0], [2, 2]], "REFLECT")).tolist())
        [[3, 2, 1, 2, 3, 2, 1]]
    """
    mode_upper = mode.upper() if isinstance(mode, str) else mode
    if mode_upper == "CONSTANT":
        zero = _is_zero(constant_values)
        with _op_scope(name, "Pad" if zero else "PadV2", [tensor, paddings, constant_values]) as scope:
            x = convert_to_tensor(tensor, name="input")
            p = _int_tensor(paddings, name="paddings")
            if zero:
                return make_op("Pad", [x, p], {}, name=scope).outputs[0]
            c = convert_to_tensor(constant_values, dtype=x.dtype, name="constant_values")
            return make_op("PadV2", [x, p, c], {}, name=scope).outputs[0]
    if mode_upper in ("REFLECT", "SYMMETRIC"):
        with _op_scope(name, "MirrorPad", [tensor, paddings]) as scope:
            x = convert_to_tensor(tensor, name="input")
            p = _int_tensor(paddings, name="paddings")
            return make_op("MirrorPad", [x, p], {"mode": mode_upper}, name=scope).outputs[0]
    raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", "REFLECT", or "SYMMETRIC". '
                     f"Received `mode` = {mode}")


def _is_zero(value: Any) -> bool:
    if is_tensor_like(value):
        return False
    try:
        arr = np.asarray(value)
        return arr.dtype.kind in "biuf" and arr.size == 1 and not arr.reshape(-1)[0]
    except (TypeError, ValueError):
        return False


def _mirror_problem(mode: str, dim: int, before: int, after: int) -> str | None:
    if before < 0 or after < 0:
        return f"Paddings must be non-negative: {before} {after}"
    if mode == "REFLECT" and (before >= dim or after >= dim) and (before or after):
        return f"paddings must be less than the dimension size: {before}, {after} not less than {dim}"
    if mode == "SYMMETRIC" and (before > dim or after > dim):
        return f"paddings must be no greater than the dimension size: {before}, {after} greater than {dim}"
    return None


def _pad_infer(op: Operation) -> list:
    x, p_t = op.inputs[0], op.inputs[1]
    if len(op.inputs) == 3 and op.inputs[2].shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {op.inputs[2].shape.ndims}")
    if p_t.shape.ndims not in (None, 2) or (p_t.shape.ndims == 2 and p_t.shape[1].value not in (None, 2)):
        raise ValueError(f"paddings must be a matrix with 2 columns, got shape {_fmt_shape(p_t.shape)}")
    n = x.shape.ndims
    rows = p_t.shape[0].value if p_t.shape.ndims == 2 else None
    if n is not None and rows is not None and n != rows:
        raise ValueError(f"Shape must be rank {rows} but is rank {n}")
    n = n if n is not None else rows
    if n is None:
        return [(x.dtype, unknown_shape())]
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    flat = _const_ints(p_t)
    if flat is None:
        return [(x.dtype, unknown_shape(n))]
    pairs = list(zip(flat[0::2], flat[1::2]))
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError("Paddings must be non-negative")
    if op.type == "MirrorPad":
        for d, (a, b) in zip(dims, pairs):
            problem = _mirror_problem(op.get_attr("mode"), d, a, b) if d is not None else None
            if problem:
                raise ValueError(problem)
    return [(x.dtype, TensorShape([d + a + b if d is not None else None for d, (a, b) in zip(dims, pairs)]))]


def _pad_pairs(op: Operation, x: Any, value: Any) -> list[tuple[int, int]]:
    flat = _to_list(value.reshape(-1)) if not isinstance(value, list) else value
    if len(flat) != 2 * x.ndim:
        raise _invalid(op, f"The first dimension of paddings must be the rank of inputs[{len(flat) // 2},2] "
                           f"{_fmt_dims(x.shape)}")
    pairs = list(zip(flat[0::2], flat[1::2]))
    for a, b in pairs:
        if a < 0 or b < 0:
            raise _invalid(op, f"Paddings must be non-negative: {a} {b}")
    return pairs


def _pad_kernel(op: Operation, ctx: Any):
    static = _const_ints(op.inputs[1])
    is_str = _is_string(op.inputs[0])
    cache: dict[Any, Any] = {}

    def plan(x: Any, p_value: Any) -> tuple[tuple[int, ...], tuple[builtins.slice, ...]]:
        pairs = _pad_pairs(op, x, static if static is not None else p_value)
        out_shape = tuple(d + a + b for d, (a, b) in zip(x.shape, pairs))
        inner = tuple(builtins.slice(a, a + d) for d, (a, _) in zip(x.shape, pairs))
        return out_shape, inner

    def run(x: Any, p_value: Any, fill_value: Any = None) -> Any:
        key = tuple(x.shape)
        if static is not None:
            planned = cache.get(key)
            if planned is None:
                planned = _remember(cache, key, plan(x, p_value))
        else:
            planned = plan(x, p_value)
        out_shape, inner = planned
        if is_str:
            out = np.full(out_shape, b"" if fill_value is None else fill_value[()], dtype=object)
        elif fill_value is None:
            out = x.new_zeros(out_shape)
        else:
            out = torch.empty(out_shape, dtype=x.dtype, device=x.device).fill_(fill_value)
        out[inner] = x
        return out

    return run


def _pad_grad(op: Operation, grad: Any) -> list:
    x, p_t = op.inputs[0], op.inputs[1]
    grad = _dense(grad)
    flat = _const_ints(p_t)
    if flat is not None:
        begin: Any = constant(np.asarray(flat[0::2], dtype=p_t.dtype.np_dtype))
    else:
        begin = reshape(slice(p_t, [0, 0], stack([rank(x), 1])), [-1])
    dx = slice(grad, begin, shape(x, out_type=begin.dtype))
    return [dx, None] if len(op.inputs) == 2 else [dx, None, None]


op_registry.register_op("Pad", infer=_pad_infer, kernel=_pad_kernel, grad=_pad_grad)
op_registry.register_op("PadV2", infer=_pad_infer, kernel=_pad_kernel, grad=_pad_grad)


def _mirror_index(dim: int, before: int, after: int, mode: str) -> np.ndarray:
    """Source position of each padded position along one dimension."""
    pos = np.arange(-before, dim + after)
    edge = 0 if mode == "REFLECT" else 1
    pos = np.where(pos < 0, -pos - edge, pos)
    return np.where(pos >= dim, 2 * dim - 2 + edge - pos, pos)


def _mirror_plan(op: Operation, dims: tuple[int, ...], pairs: Sequence[tuple[int, int]], mode: str,
                 device: Any) -> list[tuple[int, torch.Tensor]]:
    steps = []
    for d, (dim, (a, b)) in enumerate(zip(dims, pairs)):
        problem = _mirror_problem(mode, dim, a, b)
        if problem:
            raise _invalid(op, problem)
        if a or b:
            steps.append((d, torch.from_numpy(_mirror_index(dim, a, b, mode)).to(device)))
    return steps


def _mirror_pad_kernel(op: Operation, ctx: Any):
    static = _const_ints(op.inputs[1])
    mode = op.get_attr("mode")
    device = ctx.device
    is_str = _is_string(op.inputs[0])
    cache: dict[Any, Any] = {}

    def run(x: Any, p_value: Any) -> Any:
        key = tuple(x.shape)
        steps = cache.get(key) if static is not None else None
        if steps is None:
            pairs = _pad_pairs(op, x, static if static is not None else p_value)
            steps = _mirror_plan(op, key, pairs, mode, device if not is_str else "cpu")
            if static is not None:
                _remember(cache, key, steps)
        for d, idx in steps:
            x = np.take(x, idx.numpy(), axis=d) if is_str else x.index_select(d, idx)
        return x

    return run


def _mirror_pad_grad(op: Operation, grad: Any) -> list:
    with _op_scope(None, "MirrorPadGrad", [grad]) as scope:
        dx = make_op("MirrorPadGrad", [_dense(grad), op.inputs[1]], {"mode": op.get_attr("mode")}, name=scope)
    return [dx.outputs[0], None]


op_registry.register_op("MirrorPad", infer=_pad_infer, kernel=_mirror_pad_kernel, grad=_mirror_pad_grad)


def _mirror_pad_grad_infer(op: Operation) -> list:
    g, p_t = op.inputs
    flat = _const_ints(p_t)
    if g.shape.ndims is None or flat is None:
        return [(g.dtype, unknown_shape(g.shape.ndims))]
    pairs = list(zip(flat[0::2], flat[1::2]))
    return [(g.dtype, TensorShape([d - a - b if d is not None else None for d, (a, b) in zip(g.shape.as_list(),
                                                                                               pairs)]))]


def _mirror_pad_grad_kernel(op: Operation, ctx: Any):
    static = _const_ints(op.inputs[1])
    mode = op.get_attr("mode")
    device = ctx.device
    cache: dict[Any, Any] = {}

    def run(g: torch.Tensor, p_value: Any) -> torch.Tensor:
        key = tuple(g.shape)
        planned = cache.get(key) if static is not None else None
        if planned is None:
            pairs = _pad_pairs(op, g, static if static is not None else p_value)
            dims = tuple(d - a - b for d, (a, b) in zip(key, pairs))
            planned = (dims, _mirror_plan(op, dims, pairs, mode, device))
            if static is not None:
                _remember(cache, key, planned)
        dims, steps = planned
        # The forward pass gathers one dimension after another; undo that in reverse, summing repeats.
        for d, idx in reversed(steps):
            shape_d = list(g.shape)
            shape_d[d] = dims[d]
            g = g.new_zeros(shape_d).index_add_(d, idx, g)
        return g

    return run


def _mirror_pad_grad_grad(op: Operation, grad: Any) -> list:
    return [pad(_dense(grad), op.inputs[1], mode=op.get_attr("mode")), None]


op_registry.register_op(
    "MirrorPadGrad", infer=_mirror_pad_grad_infer, kernel=_mirror_pad_grad_kernel, grad=_mirror_pad_grad_grad
)


# ---- Fill, zeros, ones, ZerosLike, OnesLike ----------------------------------------------------
def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` with every element ``value`` (a scalar).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.fill([2, 2], 7)).tolist())
        [[7, 7], [7, 7]]
    """
    with _op_scope(name, "Fill", [dims, value]) as scope:
        d = _int_tensor(dims, name="dims")
        v = convert_to_tensor(value, name="value")
        return make_op("Fill", [d, v], {}, name=scope).outputs[0]


def _fill_infer(op: Operation) -> list:
    dims_t, value = op.inputs
    if value.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {value.shape.ndims}")
    if dims_t.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {dims_t.shape.ndims}")
    const = _const_ints(dims_t)
    if const is not None:
        for d in const:
            if d < 0:
                raise ValueError(f"Invalid value in tensor used for shape: {d}")
    return [(value.dtype, _partial_shape(dims_t))]


def _fill_kernel(op: Operation, ctx: Any):
    const = _const_ints(op.inputs[0])
    static = tuple(const) if const is not None else None
    is_str = _is_string(op.inputs[1])

    def run(dims_value: Any, value: Any) -> Any:
        dims = static if static is not None else tuple(_to_list(dims_value))
        if static is None:
            for d in dims:
                if d < 0:
                    raise _invalid(op, f"Dimension {d} must be >= 0")
        if is_str:
            return np.full(dims, value[()], dtype=object)
        return torch.empty(dims, dtype=value.dtype, device=value.device).fill_(value)

    return run


def _fill_grad(op: Operation, grad: Any) -> list:
    from dtf_notebook.ops import math_ops

    return [None, math_ops.reduce_sum(_dense(grad))]


op_registry.register_op("Fill", infer=_fill_infer, kernel=_fill_kernel, grad=_fill_grad)


def _filled(value: Any, shape_arg: Any, dtype: Any, name: str | None, default: str) -> Tensor:
    """TF1's ``zeros``/``ones``: a constant when small and static, else ``Fill``."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_string and value != b"":
        raise TypeError(f"Expected string, but got {value!r} of type '{type(value).__name__}'.")
    with _op_scope(name, default, [shape_arg]) as scope:
        if not _contains_tensor(shape_arg):
            static = TensorShape(shape_arg) if not isinstance(shape_arg, TensorShape) else shape_arg
            if not static.is_fully_defined():
                raise ValueError(f"Cannot create a tensor of shape {static} ({default} needs every dimension)")
            if static.num_elements() < 1000:
                return constant(value, dtype=dtype, shape=static.as_list(), name=scope)
        shape_t = _int_tensor(shape_arg, name="shape_as_tensor", param="shape")
        if shape_t.shape.ndims == 0:
            shape_t = reshape(shape_t, [-1])
        return fill(shape_t, constant(value, dtype=dtype), name=scope)


def _zero_of(dtype: dtypes.DType) -> Any:
    return b"" if dtype.is_string else (False if dtype.is_bool else 0)


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of zeros of ``shape`` (a list, TensorShape or 1-D int tensor).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.zeros([2, 3], tf.int32)).tolist())
        [[0, 0, 0], [0, 0, 0]]
    """
    dtype = dtypes.as_dtype(dtype)
    return _filled(_zero_of(dtype), shape, dtype, name, "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    """A tensor of ones of ``shape`` (a list, TensorShape or 1-D int tensor).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.ones([3])).tolist())
        [1.0, 1.0, 1.0]
    """
    dtype = dtypes.as_dtype(dtype)
    return _filled(True if dtype.is_bool else 1, shape, dtype, name, "ones")


def zeros_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True) -> Tensor:
    """Zeros with the shape of ``tensor`` and its dtype (or ``dtype``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.zeros_like(tf.constant([[1.5, 2.5]]))).tolist())
        [[0.0, 0.0]]
    """
    return _like("ZerosLike", "zeros_like", zeros, tensor, dtype, name)


def ones_like(tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True) -> Tensor:
    """Ones with the shape of ``tensor`` and its dtype (or ``dtype``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.ones_like(tf.constant([1, 2]))).tolist())
        [1, 1]
    """
    return _like("OnesLike", "ones_like", ones, tensor, dtype, name)


def _like(op_type: str, default: str, make: Any, tensor: Any, dtype: Any, name: str | None) -> Tensor:
    with _op_scope(name, default, [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        target = dtypes.as_dtype(dtype) if dtype is not None else x.dtype
        if op_type == "OnesLike" and target.is_string:
            raise TypeError("Value for attr 'T' of string is not in the list of allowed values for OnesLike")
        if target is not x.dtype:
            out = make(shape(x), target, name=scope)
            out.set_shape(x.shape)
            return out
        return make_op(op_type, [x], {}, name=scope).outputs[0]


def _zeros_like_kernel(op: Operation, ctx: Any):
    if _is_string(op.inputs[0]):
        return lambda x: np.full(x.shape, b"", dtype=object)
    return torch.zeros_like


def _ones_like_kernel(op: Operation, ctx: Any):
    return torch.ones_like


op_registry.register_op(
    "ZerosLike", infer=same_as_input, kernel=_zeros_like_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)
op_registry.register_op("OnesLike", infer=same_as_input, kernel=_ones_like_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


# ---- OneHot ------------------------------------------------------------------------------------
def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None, axis: int | None = None,
            dtype: Any = None, name: str | None = None) -> Tensor:
    """One-hot encodes ``indices`` along a new dimension of size ``depth`` at ``axis`` (default last).

    Positions equal to the index hold ``on_value`` (default 1), others ``off_value`` (default 0); indices
    outside ``[0, depth)`` give a row of ``off_value``. The dtype is ``dtype``, else that of the on/off
    values, else float32.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.one_hot([0, 2, -1], 3)).tolist())
        [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    with _op_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        on_t = convert_to_tensor(on_value) if is_tensor_like(on_value) else None
        off_t = convert_to_tensor(off_value) if is_tensor_like(off_value) else None
        on_dtype = on_t.dtype if on_t is not None else (dtypes.dtype_of_value(on_value) if on_value is not None
                                                         else None)
        off_dtype = off_t.dtype if off_t is not None else (dtypes.dtype_of_value(off_value) if off_value is not None
                                                           else None)
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
            for what, d in (("on_value", on_dtype), ("off_value", off_dtype)):
                if d is not None and d is not dtype and (what == "on_value" and on_t is not None
                                                         or what == "off_value" and off_t is not None):
                    raise TypeError(f"dtype {dtype} of {what} does not match dtype parameter {d}")
        elif on_dtype is not None and off_dtype is not None and on_dtype is not off_dtype:
            raise TypeError(f"dtype {on_dtype} of on_value does not match dtype {off_dtype} of off_value")
        else:
            dtype = on_dtype or off_dtype or dtypes.float32
        one = True if dtype.is_bool else 1
        zero = False if dtype.is_bool else 0
        on_t = on_t if on_t is not None else constant(one if on_value is None else on_value, dtype=dtype,
                                                      name="on_value")
        off_t = off_t if off_t is not None else constant(zero if off_value is None else off_value, dtype=dtype,
                                                         name="off_value")
        idx = convert_to_tensor(indices, name="indices")
        _check_dtype(idx, (dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.int64), "indices")
        d = convert_to_tensor(depth, dtype=dtypes.int32, name="depth") if not is_tensor_like(depth) else \
            convert_to_tensor(depth)
        axis = -1 if axis is None else int(axis)
        n = idx.shape.ndims
        if axis < -1 or (n is not None and axis > n):
            raise ValueError(f"Expected axis to be -1 or between [0, {(n or 0) + 1}).  But received: {axis}")
        return make_op("OneHot", [idx, d, on_t, off_t], {"axis": axis}, name=scope).outputs[0]


def _one_hot_infer(op: Operation) -> list:
    idx, depth_t, on_t, off_t = op.inputs
    for t in (depth_t, on_t, off_t):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims}")
    depth = _const_int(depth_t)
    if depth is not None and depth < 0:
        raise ValueError(f"Dimension size, given by scalar input 1, must be non-negative but is {depth}")
    if idx.shape.ndims is None:
        return [(on_t.dtype, unknown_shape())]
    axis = op.get_attr("axis")
    dims = idx.shape.as_list()
    a = len(dims) if axis == -1 else axis
    return [(on_t.dtype, TensorShape(dims[:a] + [depth] + dims[a:]))]


def _one_hot_kernel(op: Operation, ctx: Any):
    axis = op.get_attr("axis")
    static = _const_int(op.inputs[1])
    device = ctx.device
    classes: dict[tuple[int, int], torch.Tensor] = {}

    def run(idx: torch.Tensor, depth_v: Any, on: torch.Tensor, off: torch.Tensor) -> torch.Tensor:
        depth = static if static is not None else int(depth_v)
        if depth < 0:
            raise _invalid(op, f"depth must be non-negative, got: {depth}")
        a = idx.ndim if axis == -1 else axis
        if a > idx.ndim:
            raise _invalid(op, f"Expected axis to be -1 or between [0, {idx.ndim + 1}).  But received: {axis}")
        trailing = idx.ndim - a
        key = (depth, trailing)
        c = classes.get(key)
        if c is None:
            c = _remember(classes, key, torch.arange(depth, device=device).view((depth,) + (1,) * trailing))
        return torch.where(idx.unsqueeze(a) == c, on, off)

    return run


op_registry.register_op(
    "OneHot", infer=_one_hot_infer, kernel=_one_hot_kernel, grad=lambda op, grad: [None, None, None, None]
)


# ---- Unique ------------------------------------------------------------------------------------
def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> tuple[Tensor, Tensor]:
    """The distinct elements ``y`` of the 1-D ``x`` in order of first occurrence, and ``idx`` with ``x == y[idx]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     y, idx = tf.unique([3, 1, 3, 2, 1])
        ...     with tf.Session() as sess:
        ...         print(sess.run(y).tolist(), sess.run(idx).tolist())
        [3, 1, 2] [0, 1, 0, 2, 1]
    """
    with _op_scope(name, "Unique", [x]) as scope:
        t = convert_to_tensor(x, name="x")
        out_idx = dtypes.as_dtype(out_idx)
        if out_idx not in _INDEX_DTYPES:
            raise TypeError(f"Value for attr 'out_idx' of {out_idx.name} is not in the list of allowed values: "
                            "int32, int64")
        y, idx = make_op("Unique", [t], {"out_idx": out_idx}, name=scope).outputs
        return y, idx


def _unique_infer(op: Operation) -> list:
    x = op.inputs[0]
    if x.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {x.shape.ndims}")
    return [(x.dtype, TensorShape([None])), (op.get_attr("out_idx"), x.shape.with_rank(1))]


def _unique_kernel(op: Operation, ctx: Any):
    out_idx = torch_dtype(op.get_attr("out_idx"))
    is_str = _is_string(op.inputs[0])

    def run(x: Any) -> tuple[Any, Any]:
        if x.ndim != 1:
            raise _invalid(op, f"unique expects a 1D vector, got shape {_fmt_dims(x.shape)}")
        if is_str:
            seen: dict[bytes, int] = {}
            idx = [seen.setdefault(v, len(seen)) for v in x]
            y = np.empty(len(seen), dtype=object)
            y[:] = list(seen)
            return y, torch.tensor(idx, dtype=out_idx)
        values, inverse = torch.unique(x, sorted=True, return_inverse=True)
        n = values.numel()
        # torch orders distinct values by size; TF orders them by first occurrence.
        first = torch.full((n,), x.numel(), dtype=torch.int64, device=x.device)
        first.scatter_reduce_(0, inverse, torch.arange(x.numel(), device=x.device), reduce="amin")
        order = torch.argsort(first)
        position = torch.empty_like(order)
        position[order] = torch.arange(n, device=x.device)
        return values[order], position[inverse].to(out_idx)

    return run


op_registry.register_op("Unique", infer=_unique_infer, kernel=_unique_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


# ---- boolean_mask ------------------------------------------------------------------------------
def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Tensor:
    """The elements (or slices) of ``tensor`` where the bool ``mask`` is true, flattened over the mask's dims.

    ``mask``'s shape must match ``tensor.shape[axis:axis + mask.ndim]``. Works on string tensors.

    Raises:
        ValueError: ``mask`` is a scalar, has unknown rank, or its shape does not match.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     names = tf.constant(["a", "b", "c"])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.boolean_mask(names, [True, False, True])))
        [b'a' b'c']
    """
    from dtf_notebook.ops import math_ops

    with _op_scope(name, "boolean_mask", [tensor, mask]):
        x = convert_to_tensor(tensor, name="tensor")
        m = convert_to_tensor(mask, name="mask")
        nd_mask = m.shape.ndims
        if nd_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if nd_mask is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.  E.g. "
                             "shape=[None] is ok, but shape=None is not.")
        axis = 0 if axis is None else axis
        axis_value = _const_int(axis) if isinstance(axis, Tensor) else int(axis)
        shape_x = x.shape
        if axis_value is not None and shape_x.ndims is not None:
            if axis_value < 0:
                axis_value += shape_x.ndims
            shape_x[axis_value:axis_value + nd_mask].assert_is_compatible_with(m.shape)
        if axis_value is not None and shape_x.ndims is not None and shape_x.is_fully_defined():
            dims = shape_x.as_list()
            leading = int(np.prod(dims[axis_value:axis_value + nd_mask], dtype=np.int64))
            new_shape: Any = constant(dims[:axis_value] + [leading] + dims[axis_value + nd_mask:],
                                      dtype=dtypes.int32)
        else:
            a = axis_value if axis_value is not None else axis
            shape_t = shape(x)
            leading = math_ops.reduce_prod(shape_t[a:a + nd_mask], [0])
            new_shape = concat([shape_t[:a], [leading], shape_t[a + nd_mask:]], 0)
        flat = reshape(x, new_shape)
        if axis_value is not None and shape_x.ndims is not None:
            first = shape_x[axis_value:axis_value + nd_mask].num_elements()
            flat.set_shape(shape_x[:axis_value].concatenate([first]).concatenate(shape_x[axis_value + nd_mask:]))
        flat_mask = reshape(m, [-1])
        indices = squeeze(math_ops.where(flat_mask), axis=[1])
        return gather(flat, indices, axis=axis_value if axis_value is not None else axis)


# ---- BroadcastTo -------------------------------------------------------------------------------
def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Broadcasts ``input`` to ``shape`` with numpy's rules.

    Raises:
        ValueError: the shapes are known to be incompatible.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.broadcast_to(tf.constant([1, 2]), [2, 2])).tolist())
        [[1, 2], [1, 2]]
    """
    with _op_scope(name, "BroadcastTo", [input, shape]) as scope:
        x = convert_to_tensor(input, name="input")
        s = _int_tensor(shape, name="shape")
        return make_op("BroadcastTo", [x, s], {}, name=scope).outputs[0]


def _broadcast_to_infer(op: Operation) -> list:
    x, shape_t = op.inputs
    if shape_t.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {shape_t.shape.ndims}")
    target = _partial_shape(shape_t)
    if target.ndims is None or x.shape.ndims is None:
        return [(x.dtype, target)]
    if x.shape.ndims > target.ndims:
        raise ValueError(f"Shape must be at most rank {target.ndims} but is rank {x.shape.ndims}")
    out = target.as_list()
    offset = target.ndims - x.shape.ndims
    for i, d in enumerate(x.shape.as_list()):
        t = out[offset + i]
        if d is not None and t is not None and d != 1 and d != t:
            raise ValueError(f"Dimensions must be equal, but are {d} and {t}")
        if t is None and d is not None and d != 1:
            out[offset + i] = d
    return [(x.dtype, TensorShape(out))]


def _broadcast_to_kernel(op: Operation, ctx: Any):
    const = _const_ints(op.inputs[1])
    static = tuple(const) if const is not None else None
    is_str = _is_string(op.inputs[0])

    def run(x: Any, shape_value: Any) -> Any:
        dims = static if static is not None else tuple(_to_list(shape_value))
        try:
            # A broadcast view: consumers never write into their inputs, so no copy is needed.
            return np.broadcast_to(x, dims).copy() if is_str else x.expand(dims)
        except (RuntimeError, ValueError):
            raise _invalid(op, f"Incompatible shapes: {_fmt_dims(x.shape)} vs. {_fmt_dims(dims)}") from None

    return run


def _broadcast_to_grad(op: Operation, grad: Any) -> list:
    from dtf_notebook.ops import math_ops

    x, shape_t = op.inputs
    grad = _dense(grad)
    target = _const_ints(shape_t)
    if target is not None and x.shape.is_fully_defined():
        src = x.shape.as_list()
        lead = len(target) - len(src)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(src) if d == 1 and target[lead + i] != 1]
        summed = math_ops.reduce_sum(grad, axes, keepdims=True) if axes else grad
        return [reshape(summed, src), None]
    x_shape = shape(x, out_type=shape_t.dtype)
    _, axes_t = math_ops.broadcast_gradient_args(shape_t, x_shape)
    return [reshape(math_ops.reduce_sum(grad, axes_t, keepdims=True), x_shape), None]


op_registry.register_op("BroadcastTo", infer=_broadcast_to_infer, kernel=_broadcast_to_kernel, grad=_broadcast_to_grad)
