"""Clipping by norms, built as TF builds them: ``clip_by_norm``, ``global_norm``, ``clip_by_global_norm`` and
``clip_by_average_norm``. ``IndexedSlices`` (sparse gradients) are clipped through their values.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     clipped, norm = clip_by_global_norm([tf.constant([3.0, 0.0]), tf.constant([4.0])], 2.5)
    ...     print(sess.run(clipped), sess.run(norm))
    [array([1.5, 0. ], dtype=float32), array([2.], dtype=float32)] 5.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.math._common import array_ops
from dtf_notebook.ops.math.binary import add as add_
from dtf_notebook.ops.math.binary import maximum, minimum, multiply, subtract, truediv
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import greater
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.reduce import reduce_sum
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.math.unary import rsqrt, sqrt

__all__ = ["clip_by_norm", "global_norm", "clip_by_global_norm", "clip_by_average_norm"]


def _values(t: Any, name: str) -> Tensor:
    return convert_to_tensor(t.values if isinstance(t, IndexedSlices) else t, name=name)


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: str | None = None) -> Any:
    """``t * clip_norm / max(l2norm(t, axes), clip_norm)``: ``t`` scaled down so that its L2 norm (over ``axes``,
    all by default) is at most ``clip_norm``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.clip_by_norm([3.0, 4.0], 1.0)))
        [0.6 0.8]
    """
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = _values(t, "t")
        if np.isscalar(clip_norm):
            clip_norm = max(clip_norm, 0)
        else:
            clip_norm = cast(maximum(clip_norm, 0), values.dtype)
        l2sum = reduce_sum(multiply(values, values), axes, keepdims=True)
        pred = greater(l2sum, 0)
        # The square root's gradient at 0 is infinite: take it of 1 where the sum is 0.
        l2sum_safe = where(pred, l2sum, array_ops().ones_like(l2sum))
        l2norm = where(pred, sqrt(l2sum_safe), l2sum)
        intermediate = multiply(values, clip_norm)
        values.shape.assert_is_compatible_with(intermediate.shape)
        values_clip = identity(truediv(intermediate, maximum(l2norm, clip_norm)), name=scope)
        if isinstance(t, IndexedSlices):
            return IndexedSlices(values_clip, t.indices, t.dense_shape)
        return values_clip


def _check_list(t_list: Any) -> list[Any]:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def global_norm(t_list: Sequence[Any], name: str | None = None) -> Tensor:
    """``sqrt(sum(l2norm(t) ** 2 for t in t_list))``; None entries are skipped.

    Raises:
        TypeError: ``t_list`` is not a sequence.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.global_norm([[3.0], [4.0, 0.0], None])))
        5.0
    """
    from dtf_notebook.ops.nn.statistics import l2_loss

    t_list = _check_list(t_list)
    with name_scope(name, "global_norm", [t for t in t_list if t is not None]):
        values = [_values(t, f"t_{i}") if t is not None else None for i, t in enumerate(t_list)]
        half_squared_norms = []
        for v in values:
            if v is not None:
                with colocate_with(v):
                    half_squared_norms.append(l2_loss(v))
        half_squared_norm = reduce_sum(array_ops().stack(half_squared_norms))
        return sqrt(multiply(half_squared_norm, constant(2.0, dtype=half_squared_norm.dtype)), name="global_norm")


def clip_by_global_norm(
    t_list: Sequence[Any], clip_norm: Any, use_norm: Any = None, name: str | None = None
) -> tuple[list[Any], Tensor]:
    """Scales every tensor of ``t_list`` by ``clip_norm / max(global_norm, clip_norm)``; returns the scaled list
    and the global norm (``use_norm`` when given). An infinite or NaN norm makes every entry NaN, as in TF.

    Raises:
        TypeError: ``t_list`` is not a sequence.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     clipped, norm = tf.clip_by_global_norm([[6.0], [8.0]], 5.0)
        ...     print(sess.run(clipped))
        [array([3.], dtype=float32), array([4.], dtype=float32)]
    """
    t_list = _check_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    present = [t for t in t_list if t is not None]
    with name_scope(name, "clip_by_global_norm", present + [clip_norm]) as scope:
        scale_for_finite = multiply(
            clip_norm, minimum(truediv(1.0, use_norm), truediv(constant(1.0, dtype=use_norm.dtype), clip_norm))
        )
        # Adding (norm - norm) is 0 for a finite norm and NaN otherwise, so a non-finite norm poisons every entry.
        scale = add_(scale_for_finite, subtract(use_norm, use_norm))
        values = [_values(t, f"t_{i}") if t is not None else None for i, t in enumerate(t_list)]
        clipped: list[Any] = []
        for i, v in enumerate(values):
            if v is None:
                clipped.append(None)
                continue
            with colocate_with(v):
                clipped.append(identity(multiply(v, cast(scale, v.dtype)), name=f"{scope}_{i}"))
        result = [
            IndexedSlices(c, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else c
            for c, t in zip(clipped, t_list)
        ]
    return result, use_norm


def clip_by_average_norm(t: Any, clip_norm: Any, name: str | None = None) -> Tensor:
    """``t`` scaled so that its L2 norm divided by its number of elements is at most ``clip_norm``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.clip_by_average_norm([3.0, 4.0], 1.0)))
        [1.2 1.6]
    """
    ao = array_ops()
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        n_element = cast(ao.size(t), dtypes.float32)
        # All axes: a constant list when the rank is known (TF folds its range(rank) to one while building).
        axes = list(range(t.shape.ndims)) if t.shape.ndims is not None else math_range(ao.rank(t))
        l2norm_inv = rsqrt(reduce_sum(multiply(t, t), axes))
        factor = minimum(multiply(l2norm_inv, n_element), truediv(constant(1.0), clip_norm))
        return identity(multiply(multiply(t, clip_norm), factor), name=scope)
