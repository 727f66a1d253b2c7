"""Metrics that are means: ``mean``, ``mean_tensor`` and the metrics built on them (accuracy, the mean errors,
``mean_cosine_distance``, ``percentage_below``), each a running ``total / count`` in metric variables.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     m, update = mean([1.0, 3.0])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update), [v.name for v in tf.local_variables()])
    2.0 ['mean/total:0', 'mean/count:0']
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import control_dependencies
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, state_ops
from dtf_notebook.ops.losses.weights import broadcast_weights, remove_squeezable_dimensions
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.metrics.common import metric_variable, publish, remove_squeezable
from dtf_notebook.ops.variable_scope import variable_scope


def _streaming_mean(
    values: Any,
    weights: Any,
    metrics_collections: Any,
    updates_collections: Any,
    name: str | None,
    per_element: bool,
) -> tuple[Tensor, Tensor]:
    """TF's ``mean`` (``per_element=False``: scalar totals) and ``mean_tensor`` (totals of the values' shape)."""
    with variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        shape, suffix = (values.shape, "_tensor") if per_element else ([], "")
        total = metric_variable(shape, dtypes.float32, name="total" + suffix)
        count = metric_variable(shape, dtypes.float32, name="count" + suffix)
        num_values = array_ops.ones_like(values) if per_element else None
        if weights is not None:
            values, _, weights = remove_squeezable(values, None, weights)
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.multiply(num_values, weights) if per_element else math_ops.reduce_sum(weights)
        elif not per_element:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        update_total_op = state_ops.assign_add(total, values if per_element else math_ops.reduce_sum(values))
        with control_dependencies([values]):
            update_count_op = state_ops.assign_add(count, num_values)
        mean_t = publish(metrics_collections, div_no_nan(total, math_ops.maximum(count, 0), name="value"))
        update_op = div_no_nan(update_total_op, math_ops.maximum(update_count_op, 0), name="update_op")
        return mean_t, publish(updates_collections, update_op)


def mean(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The (weighted) mean of ``values`` over every batch seen: ``total / count``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     m, update = tf.metrics.mean([1.0, 2.0, 6.0], weights=[1.0, 1.0, 0.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update), sess.run(update), sess.run(m))
        1.5 1.5 1.5
    """
    return _streaming_mean(values, weights, metrics_collections, updates_collections, name, per_element=False)


def mean_tensor(
    values: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The element-wise (weighted) mean of ``values`` over every batch seen: one running mean per element, in
    metric variables ``total_tensor`` and ``count_tensor`` of the values' shape.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     values = tf.placeholder(tf.float32, [2])
        ...     m, update = tf.metrics.mean_tensor(values)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         _ = sess.run(update, {values: [1.0, 2.0]})
        ...         print(sess.run(update, {values: [3.0, 6.0]}))
        [2. 4.]
    """
    return _streaming_mean(values, weights, metrics_collections, updates_collections, name, per_element=True)


def accuracy(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """How often ``predictions`` equal ``labels`` (weighted).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     acc, update = tf.metrics.accuracy([1, 2, 3], [1, 2, 0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        0.6667
    """
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = math_ops.cast(predictions, labels.dtype)
    is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_absolute_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean of ``|predictions - labels|``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.mean_absolute_error([0.0, 0.0], [1.0, -3.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        2.0
    """
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    errors = math_ops.abs(predictions - labels)
    return mean(errors, weights, metrics_collections, updates_collections, name or "mean_absolute_error")


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean of ``(labels - predictions)**2``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.mean_squared_error([0.0, 0.0], [1.0, -3.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        5.0
    """
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    squared = math_ops.squared_difference(labels, predictions)
    return mean(squared, weights, metrics_collections, updates_collections, name or "mean_squared_error")


def root_mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The square root of :func:`mean_squared_error`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.root_mean_squared_error([0.0, 0.0], [3.0, 4.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        3.5355
    """
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None, name or "root_mean_squared_error")
    rmse = publish(metrics_collections, math_ops.sqrt(mse))
    update = publish(updates_collections, math_ops.sqrt(update_mse))
    return rmse, update


def mean_relative_error(
    labels: Any,
    predictions: Any,
    normalizer: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean of ``|labels - predictions| / normalizer`` (0 where the normalizer is 0).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.mean_relative_error([2.0, 4.0], [1.0, 5.0], normalizer=[2.0, 4.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.375
    """
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    predictions, normalizer = remove_squeezable_dimensions(predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative = math_ops.where(
        math_ops.equal(normalizer, 0.0),
        array_ops.zeros_like(labels),
        math_ops.divide(math_ops.abs(labels - predictions), normalizer),
    )
    return mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(
    labels: Any,
    predictions: Any,
    dim: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``1 - mean(sum(labels * predictions, dim))`` for unit-normalized inputs.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.mean_cosine_distance([[0.0, 1.0]], [[0.6, 0.8]], dim=1)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        0.2
    """
    predictions, labels, weights = remove_squeezable(predictions, labels, weights)
    radial = math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial, weights, None, None, name or "mean_cosine_distance")
    mean_distance = publish(metrics_collections, math_ops.subtract(1.0, mean_distance))
    update_op = publish(updates_collections, math_ops.subtract(1.0, update_op))
    return mean_distance, update_op


def percentage_below(
    values: Any,
    threshold: float,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The fraction of ``values`` below ``threshold``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.percentage_below([1.0, 5.0, 2.0, 9.0], threshold=3.0)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
    is_below = math_ops.cast(math_ops.less(values, threshold), dtypes.float32)
    return mean(is_below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold")
