"""Clamping values into a range: :func:`clip_by_value` and :func:`saturate_cast` (clamp, then cast).

Both are built from ``Maximum`` and ``Minimum``, so their gradients come from those ops.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([-5.0, 0.5, 300.0])
    ...     print(sess.run([clip_by_value(x, 0.0, 1.0), saturate_cast(x, tf.uint8)]))
    [array([0. , 0.5, 1. ], dtype=float32), array([  0,   0, 255], dtype=uint8)]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math.binary import maximum, minimum
from dtf_notebook.ops.math.cast import cast


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    """Clamps ``t`` into ``[clip_value_min, clip_value_max]`` (bounds may be tensors that broadcast into ``t``).

    Raises:
        ValueError: the bounds would broadcast ``t`` to a larger shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.clip_by_value([1.0, 5.0, 10.0], 2.0, 8.0)))
        [2. 5. 8.]
    """
    if isinstance(t, IndexedSlices):
        return IndexedSlices(clip_by_value(t.values, clip_value_min, clip_value_max, name), t.indices, t.dense_shape)
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.merge_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.merge_with(t_max.shape)
        return t_max


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Tensor:
    """Casts ``value`` to ``dtype``, first clamping it into ``dtype``'s range.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.saturate_cast([-1.7, 300.0], tf.uint8)))
        [  0 255]
    """
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        if value.dtype.is_bool or dtype.is_bool or value.dtype.is_string or dtype.is_string:
            return cast(value, dtype, name=scope)
        if value.dtype.min < dtype.min:
            value = maximum(value, constant(dtype.min, dtype=value.dtype))
        if value.dtype.max > dtype.max:
            value = minimum(value, constant(dtype.max, dtype=value.dtype), name="clamp")
        return cast(value, dtype, name=scope)
