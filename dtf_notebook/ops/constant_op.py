"""``tf.constant`` and the conversion of Python and numpy values to ``Const`` ops.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Session() as sess:
    ...     sess.run(tf.constant([[1, 2], [3, 4]], dtype=tf.float32))
    array([[1., 2.],
           [3., 4.]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import register_tensor_conversion_function
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.runtime import values

__all__ = ["constant"]


def _to_numpy(value: Any, dtype: dtypes.DType | None) -> np.ndarray:
    inferred = dtype or dtypes.dtype_of_value(value)
    if inferred.is_string:
        arr = np.asarray(value, dtype=object)
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in arr.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(arr.shape)
    raw = np.asarray(value)
    if raw.dtype.kind in "OSU":
        raise TypeError(f"Expected {inferred.name}, got {value!r} of type '{type(value).__name__}' instead.")
    if inferred.is_integer and raw.dtype.kind == "f" and not np.all(np.equal(np.mod(raw, 1), 0)):
        raise TypeError(f"Expected {inferred.name}, got {value!r} of type '{type(value).__name__}' instead.")
    if inferred.is_integer and raw.size and (raw.min() < inferred.min or raw.max() > inferred.max):
        raise ValueError(f"Value {value!r} is out of range for dtype {inferred.name}")
    return np.asarray(raw, dtype=inferred.np_dtype)


def constant(
    value: Any, dtype: Any = None, shape: Any = None, name: str = "Const", verify_shape: bool = False
) -> Tensor:
    """Creates a constant tensor (TF1's ``tf.constant``).

    A scalar ``value`` with a ``shape`` is broadcast to fill it; a list with a
    larger ``shape`` is an error when ``verify_shape`` is set, else it is
    padded with its last element, as in TF1.

    Raises:
        TypeError: ``value`` cannot be held in ``dtype``.
        ValueError: ``value`` does not fit ``shape``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     c = tf.constant(0.5, shape=[2, 3])
        >>> c.shape.as_list(), c.dtype
        ([2, 3], tf.float32)
    """
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    arr = _to_numpy(value, dtype)
    if shape is not None:
        shape = TensorShape(shape).as_list()
        if arr.shape != tuple(shape):
            if arr.size == 1:
                arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
            elif verify_shape or arr.size > int(np.prod(shape)):
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, got {arr.shape}.")
            elif arr.size == int(np.prod(shape)):
                arr = arr.reshape(shape)
            else:
                flat = arr.reshape(-1)
                arr = np.concatenate([flat, np.repeat(flat[-1:], int(np.prod(shape)) - flat.size)]).reshape(shape)
    g = get_default_graph()
    op = g.create_op("Const", [], {"value": arr, "dtype": dtype or dtypes.as_dtype(arr.dtype)}, name=name)
    return op.outputs[0]


def _const_infer(op: Any) -> list:
    value = op.get_attr("value")
    return [(op.get_attr("dtype"), TensorShape(value.shape))]


def _const_kernel(op: Any, ctx: Any):
    value = values.from_numpy(op.get_attr("value"), ctx.device)
    return lambda: value


op_registry.register_op("Const", infer=_const_infer, kernel=_const_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


def _convert_value(value: Any, dtype: Any = None, name: str | None = None, as_ref: bool = False) -> Tensor:
    return constant(value, dtype=dtype, name=name or "Const")


register_tensor_conversion_function(
    (list, tuple, int, float, bool, str, bytes, np.ndarray, np.generic), _convert_value, priority=200
)
