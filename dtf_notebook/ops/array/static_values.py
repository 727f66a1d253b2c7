"""What is known while building about the values of int tensors (shapes, axes, sizes).

Shape functions use these to infer static shapes through ``Const``, ``Shape``, ``Pack``
(``[tf.shape(x)[0], -1]``) and ``ConcatV2``, as TF's partial shape evaluation does.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     partial_shape(tf.stack([tf.shape(x)[1], tf.shape(x)[0]])).as_list()
    [3, None]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.ops.array.common import to_list
from dtf_notebook.ops.op_helpers import constant_value


def const_ints(t: Tensor) -> list[int] | None:
    """The values of an int tensor known while building, flattened; None when unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     const_ints(tf.constant([[1, 2], [3, 4]])), const_ints(tf.placeholder(tf.int32))
        ([1, 2, 3, 4], None)
    """
    value = constant_value(t)
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def const_int(t: Tensor) -> int | None:
    """The single value of an int tensor known while building; None when unknown or not one value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     const_int(tf.constant([7])), const_int(tf.constant([1, 2]))
        (7, None)
    """
    value = constant_value(t)
    if value is None or np.size(value) != 1:
        return None
    return int(np.asarray(value).reshape(-1)[0])


def scalar_int(t: Tensor) -> int | None:
    """A scalar int known while building, including ``tf.shape(x)[i]`` of a known dimension.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     scalar_int(tf.shape(x)[1]), scalar_int(tf.shape(x)[0])
        (3, None)
    """
    value = const_int(t)
    if value is not None:
        return value
    op = t.op
    if op.type in ("Identity", "StopGradient"):
        return scalar_int(op.inputs[0])
    if (
        op.type == "StridedSlice"
        and op.inputs[0].op.type == "Shape"
        and op.get_attr("shrink_axis_mask") == 1
        and not (op.get_attr("ellipsis_mask") or op.get_attr("new_axis_mask"))
    ):
        begin = const_ints(op.inputs[1])
        dims = op.inputs[0].op.inputs[0].shape
        if begin is not None and len(begin) == 1 and dims.ndims is not None and -dims.ndims <= begin[0] < dims.ndims:
            return dims[begin[0]].value
    return None


def partial_ints(t: Tensor, n: int) -> list[int | None]:
    """The ``n`` values of a 1-D int tensor, each known or None (constants and packs of scalars).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     partial_ints(tf.stack([tf.shape(x)[0], 3]), 2)
        [None, 3]
    """
    value = const_ints(t)
    if value is not None:
        return list(value)
    op = t.op
    if op.type == "Pack" and len(op.inputs) == n:
        return [scalar_int(x) for x in op.inputs]
    if op.type == "Shape" and op.inputs[0].shape.ndims == n:
        return op.inputs[0].shape.as_list()
    return [None] * n


def partial_shape(t: Tensor) -> TensorShape:
    """The shape a 1-D int shape tensor describes, as far as known; negative entries are unknown dims.

    Understands constants, ``Shape``, ``Pack`` of scalars (``tf.shape(x)[0]``), ``ConcatV2`` of those, and
    casts/identities, as TF's partial shape evaluation does.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     partial_shape(tf.concat([tf.shape(x), [5]], 0)).as_list()
        [None, 3, 5]
    """
    value = const_ints(t)
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
        return partial_shape(op.inputs[0])
    if op.type == "Pack" and op.get_attr("axis") == 0 and all(x.shape.ndims == 0 for x in op.inputs):
        dims = [scalar_int(x) for x in op.inputs]
        return TensorShape([d if d is not None and d >= 0 else None for d in dims])
    if op.type == "ConcatV2" and const_int(op.inputs[-1]) in (0, -1):
        parts = [partial_shape(x) for x in op.inputs[:-1]]
        if all(p.ndims is not None for p in parts):
            out: list[int | None] = []
            for p in parts:
                out.extend(p.as_list())
            return TensorShape(out)
    n = t.shape[0].value if t.shape.ndims == 1 else None
    return unknown_shape(n)


def int_reader(t: Tensor) -> Callable[[Any], tuple[int, ...]]:
    """For a kernel: reads the values of int input ``t`` at run time, or returns them as read while building.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     known = int_reader(tf.constant([2, 3]))
        ...     fed = int_reader(tf.placeholder(tf.int32, [2]))
        >>> known(None), fed(np.array([4, 5]))
        ((2, 3), (4, 5))
    """
    const = const_ints(t)
    if const is None:
        return lambda value: tuple(to_list(value))
    static = tuple(const)
    return lambda value: static
