"""TF's auto-packing: a list or tuple mixing tensors and numbers converts to one packed tensor.

Registered as the tensor conversion function for lists and tuples (priority 150, ahead of the
``Const`` conversion at 200), so every op argument accepts ``[tf.shape(x)[0], -1]``. A list
without any tensor is declined (``NotImplemented``) and becomes a constant as before.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     packed = tf.convert_to_tensor([tf.shape(x)[0], -1])
    ...     plain = tf.convert_to_tensor([1, 2])
    >>> packed.op.type, packed.shape.as_list(), plain.op.type
    ('Pack', [2], 'Const')
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor, is_tensor_like, register_tensor_conversion_function
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import flat
from dtf_notebook.ops.array.conversions import contains_tensor, dim_int, first_tensor_dtype
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.constant_op import constant


def autopack(value: Any, dtype: dtypes.DType | None = None, name: str = "packed") -> Tensor:
    """Packs a (nested) list mixing tensors and Python numbers into one tensor (TF's auto-packing).

    Numbers take ``dtype``, else the dtype of the first tensor; with ``dtype`` given, tensors of
    another dtype are cast to it (as TF does).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     packed = autopack([tf.shape(x)[0], 3])
        ...     wide = autopack([tf.constant(2), 3], dtype=tf.int64)
        >>> packed.op.type, packed.shape.as_list(), wide.dtype.name
        ('Pack', [2], 'int64')
    """
    items = list(value)
    number_dtype = dtype if dtype is not None else first_tensor_dtype(flat(items))
    parts = []
    for i, v in enumerate(items):
        if isinstance(v, list | tuple) and contains_tensor(v):
            parts.append(autopack(v, dtype, name=str(i)))
        elif is_tensor_like(v):
            parts.append(_cast(convert_to_tensor(v), dtype))
        else:
            parts.append(constant(dim_int(v), dtype=number_dtype, name=str(i)))
    return stack(parts, name=name)


def _cast(t: Tensor, dtype: dtypes.DType | None) -> Tensor:
    if dtype is None or t.dtype is dtype:
        return t
    return math_ops.cast(t, dtype)


def _autopacking_conversion(
    value: Any, dtype: dtypes.DType | None = None, name: str | None = None, as_ref: bool = False
) -> Tensor:
    if as_ref or not contains_tensor(value):
        return NotImplemented  # the Const conversion takes lists of plain values
    return autopack(value, dtype, name=name or "packed")


register_tensor_conversion_function((list, tuple), _autopacking_conversion, priority=150)
