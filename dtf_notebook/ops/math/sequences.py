"""TF's Python-level functions over sequences of values, built as TF builds them: ``linspace`` (``lin_space``),
``confusion_matrix``, and the monotonicity tests ``is_non_decreasing`` and ``is_strictly_increasing``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(linspace(1.0, 2.0, 3)), sess.run(is_strictly_increasing([1, 2, 3])))
    [1.  1.5 2. ] True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import broadcast_shapes, unknown_shape
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.math._common import array_ops
from dtf_notebook.ops.math.binary import add, maximum, multiply, subtract, truediv
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import equal, greater, greater_equal
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.reduce import reduce_all, reduce_max
from dtf_notebook.ops.math.select_v2 import where_v2
from dtf_notebook.ops.op_helpers import constant_value

__all__ = ["is_non_decreasing", "is_strictly_increasing", "confusion_matrix", "linspace", "lin_space"]


# ---- monotonicity ---------------------------------------------------------------------------------------------
def _monotonic(x: Any, name: str | None, default: str, compare: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
    from dtf_notebook.ops.check_ops import is_numeric_tensor

    with name_scope(name, default, [x]):
        flat = array_ops().reshape(convert_to_tensor(x, name="x"), [-1])
        if not is_numeric_tensor(flat):
            raise TypeError(f"Expected x to be numeric, instead found: {flat}")
        # Fewer than two entries give two empty slices, and reduce_all([]) is True.
        return reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x: Any, name: str | None = None) -> Tensor:
    """Whether ``x`` (flattened) never decreases; true for fewer than two entries.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run([tf.is_non_decreasing([1, 1, 2]), tf.is_strictly_increasing([1, 1, 2])]))
        [np.True_, np.False_]
    """
    return _monotonic(x, name, "is_non_decreasing", greater_equal)


def is_strictly_increasing(x: Any, name: str | None = None) -> Tensor:
    """Whether ``x`` (flattened) always increases; true for fewer than two entries.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.is_strictly_increasing([[1, 2], [3, 9]])))
        True
    """
    return _monotonic(x, name, "is_strictly_increasing", greater)


# ---- confusion matrix -----------------------------------------------------------------------------------------
def _remove_squeezable_dimensions(labels: Tensor, predictions: Tensor) -> tuple[Tensor, Tensor]:
    """Drops a trailing size-1 axis of whichever input has one more axis than the other (static ranks)."""
    ao = array_ops()
    lr, pr = labels.shape.ndims, predictions.shape.ndims
    if lr is not None and pr is not None:
        if pr - lr == 1 and predictions.shape[-1].is_compatible_with(1):
            predictions = ao.squeeze(predictions, [-1])
        elif pr - lr == -1 and labels.shape[-1].is_compatible_with(1):
            labels = ao.squeeze(labels, [-1])
    return labels, predictions


def confusion_matrix(
    labels: Any,
    predictions: Any,
    num_classes: Any = None,
    dtype: Any = dtypes.int32,
    name: str | None = None,
    weights: Any = None,
) -> Tensor:
    """The ``[num_classes, num_classes]`` matrix counting (or summing ``weights`` of) each (label, prediction) pair;
    rows are labels, columns predictions.

    Raises:
        InvalidArgumentError: (at run time) a label or prediction is negative or not below ``num_classes``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2])))
        [[1 0 0]
         [0 1 1]
         [0 0 1]]
    """
    from dtf_notebook.ops import check_ops
    from dtf_notebook.ops.array.scatter_nd import scatter_nd

    ao = array_ops()
    with name_scope(name, "confusion_matrix", (predictions, labels, num_classes, weights)):
        labels, predictions = _remove_squeezable_dimensions(
            convert_to_tensor(labels, name="labels"), convert_to_tensor(predictions, name="predictions")
        )
        predictions = cast(predictions, dtypes.int64)
        labels = cast(labels, dtypes.int64)
        labels = _with_check(check_ops.assert_non_negative(labels, message="`labels` contains negative values"), labels)
        predictions = _with_check(
            check_ops.assert_non_negative(predictions, message="`predictions` contains negative values"), predictions
        )
        if num_classes is None:
            num_classes = add(maximum(reduce_max(predictions), reduce_max(labels)), 1)
        else:
            n = cast(num_classes, dtypes.int64)
            labels = _with_check(check_ops.assert_less(labels, n, message="`labels` out of bound"), labels)
            predictions = _with_check(
                check_ops.assert_less(predictions, n, message="`predictions` out of bound"), predictions
            )
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            weights = cast(weights, dtype)
        shape = ao.stack([num_classes, num_classes])
        indices = ao.stack([labels, predictions], axis=1)
        values = ao.ones_like(predictions, dtype) if weights is None else weights
        return scatter_nd(indices=indices, updates=values, shape=cast(shape, dtypes.int64))


def _with_check(check: Any, value: Tensor) -> Tensor:
    """``value`` through an identity that runs after ``check`` (TF's ``with_dependencies``)."""
    with name_scope(None, "control_dependency", [value]) as scope, control_dependencies([check]):
        return identity(value, name=scope)


# ---- linspace -------------------------------------------------------------------------------------------------
def linspace(start: Any, stop: Any, num: Any, name: str | None = None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included) along a new axis ``axis``; ``start``
    and ``stop`` may be tensors that broadcast together.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.linspace(0.0, 1.0, 5)))
        [0.   0.25 0.5  0.75 1.  ]
    """
    from dtf_notebook.ops.array.array_extras import broadcast_dynamic_shape

    ao = array_ops()
    with name_scope(name, "linspace", [start, stop]):
        start = convert_to_tensor(start, name="start")
        stop = convert_to_tensor(stop, name="stop", dtype=start.dtype)
        num_int = convert_to_tensor(num, name="num")
        if not num_int.dtype.is_integer:
            raise TypeError(f"num must be an integer, got {num_int.dtype.name}")
        shape_ = broadcast_dynamic_shape(ao.shape(start), ao.shape(stop))
        start = ao.broadcast_to(start, shape_)
        stop = ao.broadcast_to(stop, shape_)
        expanded_start = ao.expand_dims(start, axis=axis)
        expanded_stop = ao.expand_dims(stop, axis=axis)
        shape = ao.shape(expanded_start)
        ndims = ao.shape(shape)[0]
        axis_t = where_v2(axis >= 0, axis, add(ndims, axis))
        # Endpoints are added by concatenation and the result sliced to num, so that num = 0 and 1 work too.
        num_fill = maximum(subtract(num_int, 2), 0)
        n_steps = maximum(subtract(num_int, 1), 1)
        delta = truediv(subtract(expanded_stop, expanded_start), cast(n_steps, expanded_stop.dtype))
        expanded_start = cast(expanded_start, delta.dtype)
        expanded_stop = cast(expanded_stop, delta.dtype)
        range_end = where_v2(greater_equal(num_int, 0), n_steps, -1)
        desired_range = cast(math_range(1, cast(range_end, dtypes.int64), dtype=dtypes.int64), delta.dtype)
        mask = equal(axis_t, math_range(ndims))
        desired_range = ao.reshape(desired_range, where_v2(mask, num_fill, 1))
        res = add(expanded_start, multiply(delta, desired_range))
        concatenated = ao.concat([expanded_start, res, expanded_stop], axis=axis)
        begin = ao.zeros_like(shape)
        size = ao.concat([shape[0:axis_t], ao.reshape(cast(num_int, shape.dtype), [1]), shape[axis_t + 1 :]], axis=0)
        out = ao.slice(concatenated, begin, size)
        # TF knows the result's shape while building when num and the bounds' shapes are known; so do we.
        static_num = constant_value(num_int)
        bounds = broadcast_shapes(start.shape, stop.shape) if start.shape.ndims is not None else unknown_shape()
        if static_num is not None and bounds.ndims is not None:
            dims = bounds.as_list()
            at = axis if axis >= 0 else len(dims) + 1 + axis
            out.set_shape(dims[:at] + [max(int(static_num), 0)] + dims[at:])
        return out


lin_space = linspace
