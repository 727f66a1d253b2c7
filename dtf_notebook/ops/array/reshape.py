"""Ops that give a tensor's elements a new shape: ``reshape``, ``expand_dims``, ``squeeze`` and ``broadcast_to``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 4, 5])
    ...     reshape(x, [tf.shape(x)[0], -1]).shape.as_list(), squeeze(expand_dims(x, 1), [1]).shape.as_list()
    ([None, None], [None, 4, 5])
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import canonical_axis, dense, is_string, op_scope, to_list
from dtf_notebook.ops.array.conversions import tensor_and_ints_op
from dtf_notebook.ops.array.diagnostics import fmt_dims, invalid, require_rank
from dtf_notebook.ops.array.shape_ops import shape as shape_of
from dtf_notebook.ops.array.static_values import const_int, const_ints, int_reader, partial_shape
from dtf_notebook.ops.op_helpers import make_op


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
    return tensor_and_ints_op("Reshape", name, tensor, "tensor", shape, "shape")


def _reshape_infer(op: Operation) -> list:
    x, shape_t = op.inputs
    if shape_t.shape.ndims not in (None, 0, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {shape_t.shape.ndims}")
    const = const_ints(shape_t)
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
        partial = partial_shape(shape_t)
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
                f"Cannot reshape a tensor with {known_in} elements to shape {fmt_dims(out)} ({known_out} elements)"
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
        msg = (
            "Reshape cannot infer the missing input size for an empty tensor unless all specified input sizes "
            "are non-zero"
        )
    elif minus:
        msg = f"Input to reshape is a tensor with {n} values, but the requested shape requires a multiple of {known}"
    else:
        msg = f"Input to reshape is a tensor with {n} values, but the requested shape has {known}"
    return invalid(op, msg)


def _reshape_kernel(op: Operation, ctx: Any):
    read_dims = int_reader(op.inputs[1])

    def run(x: Any, shape_value: Any) -> Any:
        dims = read_dims(shape_value)
        try:
            return x.reshape(dims)
        except (RuntimeError, ValueError):
            n = x.size if isinstance(x, np.ndarray) else x.numel()
            raise _reshape_error(op, n, dims) from None

    return run


def _reshape_grad(op: Operation, grad: Any) -> list:
    """The gradient of any op that only reshapes input 0: the gradient reshaped back."""
    back = reshape(dense(grad), shape_of(op.inputs[0]))
    return [back] + [None] * (len(op.inputs) - 1)


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
    return tensor_and_ints_op("ExpandDims", name, input, "input", axis, "dim")


def _expand_dims_infer(op: Operation) -> list:
    x, dim_t = op.inputs
    if dim_t.shape.num_elements() not in (None, 1):
        raise ValueError(f"'dim' input must be a tensor with a single value, got shape {dim_t.shape}")
    d = const_int(dim_t)
    if x.shape.ndims is None or d is None:
        return [(x.dtype, unknown_shape(None if x.shape.ndims is None else x.shape.ndims + 1))]
    n = x.shape.ndims
    if not -n - 1 <= d <= n:
        raise ValueError(f"dim {d} not in the interval [{-n - 1}, {n}].")
    d = canonical_axis(d, n + 1)
    dims = x.shape.as_list()
    return [(x.dtype, TensorShape(dims[:d] + [1] + dims[d:]))]


def _expand_dims_kernel(op: Operation, ctx: Any):
    static = const_int(op.inputs[1])
    is_str = is_string(op.inputs[0])

    def run(x: Any, dim_value: Any) -> Any:
        d = static if static is not None else int(to_list(dim_value.reshape(-1))[0])
        n = x.ndim
        if not -n - 1 <= d <= n:
            raise invalid(op, f"Tried to expand dim index {d} for tensor with {n} dimensions.")
        d = canonical_axis(d, n + 1)
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
    with op_scope(name, "Squeeze", [input]) as scope:
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
        wanted.add(canonical_axis(a, n))
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
    is_str = is_string(op.inputs[0])

    def run(x: Any) -> Any:
        n = x.ndim
        if not axes:
            return np.squeeze(x) if is_str else x.squeeze()
        dims = []
        for a in axes:
            if not -n <= a < n:
                raise invalid(op, f"Tried to squeeze dim index {a} for tensor with {n} dimensions.")
            a = canonical_axis(a, n)
            if x.shape[a] != 1:
                raise invalid(op, f"Can not squeeze dim[{a}], expected a dimension of 1, got {x.shape[a]}")
            dims.append(a)
        return np.squeeze(x, tuple(dims)) if is_str else x.squeeze(tuple(dims))

    return run


op_registry.register_op("Squeeze", infer=_squeeze_infer, kernel=_squeeze_kernel, grad=_reshape_grad)


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
    return tensor_and_ints_op("BroadcastTo", name, input, "input", shape, "shape")


def _broadcast_to_infer(op: Operation) -> list:
    x, shape_t = op.inputs
    require_rank(shape_t, 1)
    target = partial_shape(shape_t)
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
    read_dims = int_reader(op.inputs[1])
    is_str = is_string(op.inputs[0])

    def run(x: Any, shape_value: Any) -> Any:
        dims = read_dims(shape_value)
        try:
            # A broadcast view: consumers never write into their inputs, so no copy is needed.
            return np.broadcast_to(x, dims).copy() if is_str else x.expand(dims)
        except (RuntimeError, ValueError):
            raise invalid(op, f"Incompatible shapes: {fmt_dims(x.shape)} vs. {fmt_dims(dims)}") from None

    return run


def _broadcast_to_grad(op: Operation, grad: Any) -> list:
    x, shape_t = op.inputs
    grad = dense(grad)
    target = const_ints(shape_t)
    if target is not None and x.shape.is_fully_defined():
        src = x.shape.as_list()
        lead = len(target) - len(src)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(src) if d == 1 and target[lead + i] != 1]
        summed = math_ops.reduce_sum(grad, axes, keepdims=True) if axes else grad
        return [reshape(summed, src), None]
    x_shape = shape_of(x, out_type=shape_t.dtype)
    _, axes_t = math_ops.broadcast_gradient_args(shape_t, x_shape)
    return [reshape(math_ops.reduce_sum(grad, axes_t, keepdims=True), x_shape), None]


op_registry.register_op("BroadcastTo", infer=_broadcast_to_infer, kernel=_broadcast_to_kernel, grad=_broadcast_to_grad)
