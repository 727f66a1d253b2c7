"""Converting the arguments of array ops: shape-like int arguments and lists of same-dtype tensors.

A shape-like argument (a tensor, ``TensorShape``, nested list or numpy array) becomes an int32
tensor, or int64 when a value needs it; a list that mixes tensors and numbers is auto-packed
(see :mod:`dtf_notebook.ops.array.autopack`).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     int_tensor([2, 2**40], name="shape").dtype
    tf.int64
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape
from dtf_notebook.ops.array.common import op_scope
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import check_dtype, make_op

INT32_MAX = 2**31 - 1
INDEX_DTYPES = (dtypes.int32, dtypes.int64)


def contains_tensor(value: Any) -> bool:
    """True when ``value`` is tensor-like or a (nested) list/tuple holding one.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     contains_tensor([1, [2, tf.constant(3)]]), contains_tensor([1, [2, 3]])
        (True, False)
    """
    if isinstance(value, list | tuple):
        return any(contains_tensor(v) for v in value)
    return is_tensor_like(value)


def dim_int(d: Any) -> Any:
    """A ``Dimension``'s value (an error when unknown); anything else unchanged.

    Example:
        >>> dim_int(Dimension(3)), dim_int(5)
        (3, 5)
    """
    if isinstance(d, Dimension):
        if d.value is None:
            raise ValueError("Cannot convert an unknown Dimension to a Tensor.")
        return d.value
    return d


def first_tensor_dtype(values: Sequence[Any]) -> dtypes.DType | None:
    """The dtype of the first tensor-like entry of ``values``; None when there is none.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     first_tensor_dtype([1, tf.constant(2, tf.int64)]), first_tensor_dtype([1, 2])
        (tf.int64, None)
    """
    for v in values:
        if is_tensor_like(v):
            return convert_to_tensor(v).dtype
    return None


def int_tensor(value: Any, name: str, param: str | None = None) -> Tensor:
    """Converts a shape-like argument (tensor, TensorShape, nested list, numpy array) to an int32/int64 tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     t = int_tensor(TensorShape([2, 3]), name="shape")
        >>> t.op.type, t.dtype.name, t.shape.as_list()
        ('Const', 'int32', [2])
    """
    param = param or name
    if isinstance(value, Dimension):
        value = dim_int(value)
    if isinstance(value, TensorShape):
        if not value.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape {value} to a Tensor.")
        value = value.as_list()
    if not contains_tensor(value):
        return _int_constant(value, name, param)
    t = convert_to_tensor(value)  # a list mixing tensors and numbers is auto-packed
    check_dtype(t, INDEX_DTYPES, name, param)
    return t


def _int_constant(value: Any, name: str, param: str) -> Tensor:
    if isinstance(value, list | tuple):
        value = [dim_int(d) for d in value] if not any(isinstance(d, list | tuple) for d in value) else value
    arr = np.asarray(value)
    if arr.dtype.kind == "b" or (arr.size and arr.dtype.kind not in "iu"):
        kind = dtypes.as_dtype(arr.dtype).name if arr.dtype.kind in "fiub" else "string"
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {kind} not in list of allowed values: int32, int64"
        )
    if isinstance(value, np.ndarray | np.generic) and arr.dtype in (np.int32, np.int64):
        return constant(arr, name=name)  # a numpy array keeps its width, as in TF
    big = arr.size and (int(arr.max()) > INT32_MAX or int(arr.min()) < -INT32_MAX - 1)
    return constant(arr.astype(np.int64 if big else np.int32), name=name)


def same_dtype_tensors(values: Sequence[Any], op_type: str, param: str = "values") -> list[Tensor]:
    """Converts a list input: Python values take the dtype of the tensors among them (TF's list-input rule).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     [t.dtype.name for t in same_dtype_tensors([1, tf.constant(2.0)], "Pack")]
        ['float32', 'float32']
    """
    dtype = first_tensor_dtype(values)
    tensors = [convert_to_tensor(v) if contains_tensor(v) else convert_to_tensor(v, dtype=dtype) for v in values]
    kinds = [t.dtype for t in tensors]
    if any(k is not kinds[0] for k in kinds):
        names = ", ".join(k.name for k in kinds)
        raise TypeError(
            f"Tensors in list passed to '{param}' of '{op_type}' Op have types [{names}] that don't all match."
        )
    return tensors


def tensor_and_ints_op(op_type: str, name: str | None, x: Any, x_name: str, ints: Any, ints_name: str) -> Tensor:
    """Builds ``op_type(x, ints)`` for ops taking a tensor and a shape-like argument (Reshape, Tile, ...).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     t = tensor_and_ints_op("Reshape", None, tf.zeros([2, 3]), "tensor", [3, 2], "shape")
        >>> t.op.type, t.shape.as_list()
        ('Reshape', [3, 2])
    """
    with op_scope(name, op_type, [x, ints]) as scope:
        t = convert_to_tensor(x, name=x_name)
        i = int_tensor(ints, name=ints_name)
        return make_op(op_type, [t, i], {}, name=scope).outputs[0]
