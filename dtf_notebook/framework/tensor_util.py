"""What a tensor's value or shape is known to be while building: TF's ``tensor_util.constant_value`` and
``constant_value_as_shape``, pure functions of the graph (no op is run).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     constant_value(tf.constant([3, -1])), shape_from_tensor(tf.constant([3, -1]))
    (array([ 3, -1], dtype=int32), TensorShape([3, None]))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape

__all__ = ["constant_value", "shape_from_tensor"]


def constant_value(t: Tensor) -> Any:
    """The numpy value of ``t`` when it is known while building (a Const, or a Shape of a fully known tensor).

    Returns None when it is not known statically.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     p = tf.placeholder(tf.float32)
        ...     constant_value(tf.constant([1, 2])), constant_value(tf.shape(tf.zeros([2, 3]))), constant_value(p)
        (array([1, 2], dtype=int32), array([2, 3], dtype=int32), None)
    """
    op = t.op
    if op.type == "Const":
        return op.get_attr("value")
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined():
        return np.array(op.inputs[0].shape.as_list(), dtype=op.get_attr("out_type").np_dtype)
    if op.type == "Identity":
        return constant_value(op.inputs[0])
    return None


def shape_from_tensor(t: Tensor) -> TensorShape:
    """The shape a 1-D shape tensor describes, as far as it is known statically.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     p = tf.placeholder(tf.float32, [None, 3])
        ...     shape_from_tensor(tf.constant([2, -1])), shape_from_tensor(tf.stack([4, tf.shape(p)[0]]))
        (TensorShape([2, None]), TensorShape([4, None]))
    """
    value = constant_value(t)
    if value is not None:
        return TensorShape([int(d) if d >= 0 else None for d in value.reshape(-1)])
    if t.op.type == "Pack":
        dims = []
        for part in t.op.inputs:
            v = constant_value(part)
            dims.append(int(v) if v is not None and int(v) >= 0 else None)
        return TensorShape(dims)
    n = t.shape[0].value if t.shape.ndims == 1 else None
    return unknown_shape(n)
