"""Counting metrics over boolean labels and predictions: ``true_positives``, ``false_positives``,
``false_negatives``, ``true_negatives``, and the ratios ``precision`` and ``recall`` built from them.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     _, update = recall([1, 1, 0], [1, 0, 0])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update))
    0.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops, state_ops
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.metrics.common import metric_variable, publish, publish_pair, remove_squeezable
from dtf_notebook.ops.variable_scope import variable_scope

Metric = Callable[..., tuple[Tensor, Tensor]]


def _count_condition(values: Tensor, weights: Any, metrics_collections: Any, updates_collections: Any) -> tuple:
    if values.dtype.base_dtype != dtypes.bool:
        raise TypeError(f"values must be bool, got {values.dtype.name}")
    count = metric_variable([], dtypes.float32, name="count")
    values = math_ops.cast(values, dtypes.float32)
    if weights is not None:
        weights = math_ops.cast(weights, dtypes.float32)
        if weights.shape.ndims not in (None, 0, values.shape.ndims):
            raise ValueError(f"weights must be a scalar or of the values' rank, got shape {weights.shape}")
        values = math_ops.multiply(values, weights)
    value_tensor = publish(metrics_collections, identity(count))
    update_op = publish(updates_collections, state_ops.assign_add(count, math_ops.reduce_sum(values)))
    return value_tensor, update_op


def _as_booleans(predictions: Any, labels: Any, weights: Any) -> tuple[Tensor, Tensor, Any]:
    return remove_squeezable(math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights)


def _condition_metric(default_name: str, label_value: bool, prediction_value: bool) -> Metric:
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _as_booleans(predictions, labels, weights)
            condition = math_ops.logical_and(
                math_ops.equal(labels, label_value), math_ops.equal(predictions, prediction_value)
            )
            return _count_condition(condition, weights, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = default_name
    kind = {"true_positives": "positive", "false_positives": "positive"}.get(default_name, "negative")
    metric.__doc__ = f"""The (weighted) number of {default_name.replace("_", " ")}: labels {label_value}, predictions
    {prediction_value} (both read as booleans; a {kind} prediction is a True one).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.{default_name}([1, 1, 0, 0], [1, 0, 1, 0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        1.0
    """
    return metric


true_positives = _condition_metric("true_positives", True, True)
false_positives = _condition_metric("false_positives", False, True)
false_negatives = _condition_metric("false_negatives", True, False)
true_negatives = _condition_metric("true_negatives", False, False)


def _ratio_metric(default_name: str, other: Metric, doc: str) -> Metric:
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _as_booleans(predictions, labels, weights)
            tp, tp_update = true_positives(labels, predictions, weights)
            wrong, wrong_update = other(labels, predictions, weights)

            def ratio(counts: tuple[Tensor, Tensor], op_name: str) -> Tensor:
                a, b = counts
                return math_ops.where(math_ops.greater(a + b, 0), math_ops.divide(a, a + b), 0, op_name)

            return publish_pair(ratio, (tp, wrong), (tp_update, wrong_update), metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = default_name
    metric.__doc__ = doc
    return metric


precision = _ratio_metric(
    "precision",
    false_positives,
    """``tp / (tp + fp)`` over every batch (0 while nothing was predicted positive).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.precision([1, 0, 1, 0], [1, 1, 1, 0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        0.6667
    """,
)
recall = _ratio_metric(
    "recall",
    false_negatives,
    """``tp / (tp + fn)`` over every batch (0 while no label was positive).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.recall([1, 0, 1, 1], [1, 1, 1, 0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        0.6667
    """,
)
