"""Tensors of one repeated value: ``fill``, ``zeros``, ``ones``, ``zeros_like``, ``ones_like`` and ``one_hot``.

``zeros``/``ones`` of a small static shape are constants (as in TF1), others ``Fill`` ops;
``ZerosLike``/``OnesLike`` are one registration each from the table ``_LIKE_KERNELS``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     [t.op.type for t in (zeros([2]), ones(tf.shape(x)), zeros_like(x), one_hot([0, 2], 3))]
    ['Const', 'Fill', 'ZerosLike', 'OneHot']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import cached, dense, is_string, op_scope
from dtf_notebook.ops.array.conversions import contains_tensor, int_tensor
from dtf_notebook.ops.array.diagnostics import invalid, require_rank
from dtf_notebook.ops.array.reshape import reshape
from dtf_notebook.ops.array.shape_ops import shape as shape_of
from dtf_notebook.ops.array.static_values import const_int, const_ints, int_reader, partial_shape
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import check_dtype, make_op, same_as_input


# ---- Fill, zeros, ones -------------------------------------------------------------------------
def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """A tensor of shape ``dims`` with every element ``value`` (a scalar).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.fill([2, 2], 7)).tolist())
        [[7, 7], [7, 7]]
    """
    with op_scope(name, "Fill", [dims, value]) as scope:
        d = int_tensor(dims, name="dims")
        v = convert_to_tensor(value, name="value")
        return make_op("Fill", [d, v], {}, name=scope).outputs[0]


def _fill_infer(op: Operation) -> list:
    dims_t, value = op.inputs
    require_rank(value, 0)
    require_rank(dims_t, 1)
    const = const_ints(dims_t)
    if const is not None:
        for d in const:
            if d < 0:
                raise ValueError(f"Invalid value in tensor used for shape: {d}")
    return [(value.dtype, partial_shape(dims_t))]


def _fill_kernel(op: Operation, ctx: Any):
    read_dims = int_reader(op.inputs[0])
    checked = const_ints(op.inputs[0]) is not None  # constant dims were checked while building
    is_str = is_string(op.inputs[1])

    def run(dims_value: Any, value: Any) -> Any:
        dims = read_dims(dims_value)
        if not checked:
            for d in dims:
                if d < 0:
                    raise invalid(op, f"Dimension {d} must be >= 0")
        if is_str:
            return np.full(dims, value[()], dtype=object)
        return torch.empty(dims, dtype=value.dtype, device=value.device).fill_(value)

    return run


def _fill_grad(op: Operation, grad: Any) -> list:
    return [None, math_ops.reduce_sum(dense(grad))]


op_registry.register_op("Fill", infer=_fill_infer, kernel=_fill_kernel, grad=_fill_grad)


def _filled(value: Any, shape_arg: Any, dtype: Any, name: str | None, default: str) -> Tensor:
    """TF1's ``zeros``/``ones``: a constant when small and static, else ``Fill``."""
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_string and value != b"":
        raise TypeError(f"Expected string, but got {value!r} of type '{type(value).__name__}'.")
    with op_scope(name, default, [shape_arg]) as scope:
        if not contains_tensor(shape_arg):
            static = TensorShape(shape_arg) if not isinstance(shape_arg, TensorShape) else shape_arg
            if not static.is_fully_defined():
                raise ValueError(f"Cannot create a tensor of shape {static} ({default} needs every dimension)")
            if static.num_elements() < 1000:
                return constant(value, dtype=dtype, shape=static.as_list(), name=scope)
        shape_t = int_tensor(shape_arg, name="shape_as_tensor", param="shape")
        if shape_t.shape.ndims == 0:
            shape_t = reshape(shape_t, [-1])
        return fill(shape_t, constant(value, dtype=dtype), name=scope)


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
    return _filled(b"" if dtype.is_string else (False if dtype.is_bool else 0), shape, dtype, name, "zeros")


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


# ---- ZerosLike, OnesLike -----------------------------------------------------------------------
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
    with op_scope(name, default, [tensor]) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        target = dtypes.as_dtype(dtype) if dtype is not None else x.dtype
        if op_type == "OnesLike" and target.is_string:
            raise TypeError("Value for attr 'T' of string is not in the list of allowed values for OnesLike")
        if target is not x.dtype:
            out = make(shape_of(x), target, name=scope)
            out.set_shape(x.shape)
            return out
        return make_op(op_type, [x], {}, name=scope).outputs[0]


def _zeros_like_kernel(op: Operation, ctx: Any):
    if is_string(op.inputs[0]):
        return lambda x: np.full(x.shape, b"", dtype=object)
    return torch.zeros_like


_LIKE_KERNELS = {"ZerosLike": _zeros_like_kernel, "OnesLike": lambda op, ctx: torch.ones_like}
for _op_type, _kernel in _LIKE_KERNELS.items():
    op_registry.register_op(_op_type, infer=same_as_input, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


# ---- OneHot ------------------------------------------------------------------------------------
def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
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
    with op_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        on_t, on_dtype = _tensor_and_dtype(on_value)
        off_t, off_dtype = _tensor_and_dtype(off_value)
        if dtype is not None:
            dtype = dtypes.as_dtype(dtype)
            for what, t in (("on_value", on_t), ("off_value", off_t)):
                if t is not None and t.dtype is not dtype:
                    raise TypeError(f"dtype {dtype} of {what} does not match dtype parameter {t.dtype}")
        elif on_dtype is not None and off_dtype is not None and on_dtype is not off_dtype:
            raise TypeError(f"dtype {on_dtype} of on_value does not match dtype {off_dtype} of off_value")
        else:
            dtype = on_dtype or off_dtype or dtypes.float32
        if on_t is None:
            on_t = constant(_default(on_value, dtype, 1), dtype, name="on_value")
        if off_t is None:
            off_t = constant(_default(off_value, dtype, 0), dtype, name="off_value")
        idx = convert_to_tensor(indices, name="indices")
        check_dtype(idx, (dtypes.uint8, dtypes.int8, dtypes.int32, dtypes.int64), "OneHot", "indices")
        d = convert_to_tensor(depth) if is_tensor_like(depth) else convert_to_tensor(depth, dtypes.int32, "depth")
        axis = -1 if axis is None else int(axis)
        n = idx.shape.ndims
        if axis < -1 or (n is not None and axis > n):
            raise ValueError(f"Expected axis to be -1 or between [0, {(n or 0) + 1}).  But received: {axis}")
        return make_op("OneHot", [idx, d, on_t, off_t], {"axis": axis}, name=scope).outputs[0]


def _tensor_and_dtype(value: Any) -> tuple[Tensor | None, dtypes.DType | None]:
    """An on/off value as ``(tensor or None, dtype or None)``: only tensor-likes convert up front."""
    if is_tensor_like(value):
        t = convert_to_tensor(value)
        return t, t.dtype
    return None, dtypes.dtype_of_value(value) if value is not None else None


def _default(value: Any, dtype: dtypes.DType, number: int) -> Any:
    """An on/off value, or ``number`` (as a bool for bool dtypes) when it is not given."""
    if value is not None:
        return value
    return bool(number) if dtype.is_bool else number


def _one_hot_infer(op: Operation) -> list:
    idx, depth_t, on_t, off_t = op.inputs
    for t in (depth_t, on_t, off_t):
        require_rank(t, 0)
    depth = const_int(depth_t)
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
    static = const_int(op.inputs[1])
    device = ctx.device
    classes: dict[tuple[int, int], torch.Tensor] = {}

    def positions(depth: int, trailing: int) -> torch.Tensor:
        return torch.arange(depth, device=device).view((depth,) + (1,) * trailing)

    def run(idx: torch.Tensor, depth_v: Any, on: torch.Tensor, off: torch.Tensor) -> torch.Tensor:
        depth = static if static is not None else int(depth_v)
        if depth < 0:
            raise invalid(op, f"depth must be non-negative, got: {depth}")
        a = idx.ndim if axis == -1 else axis
        if a > idx.ndim:
            raise invalid(op, f"Expected axis to be -1 or between [0, {idx.ndim + 1}).  But received: {axis}")
        trailing = idx.ndim - a
        c = cached(classes, (depth, trailing), positions, depth, trailing)
        return torch.where(idx.unsqueeze(a) == c, on, off)

    return run


op_registry.register_op(
    "OneHot", infer=_one_hot_infer, kernel=_one_hot_kernel, grad=lambda op, grad: [None, None, None, None]
)
