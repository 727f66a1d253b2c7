"""Metrics over a streaming confusion matrix of class ids: ``mean_iou`` and ``mean_per_class_accuracy``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     iou, update = mean_iou([0, 1], [0, 1], num_classes=2)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update)
    ...         print(sess.run(iou))
    1.0
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, state_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.metrics.common import flat, metric_variable, publish, static_int
from dtf_notebook.ops.variable_scope import variable_scope


def _streaming_confusion_matrix(labels: Any, predictions: Any, num_classes: int, weights: Any = None) -> tuple:
    total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
    predictions = flat(math_ops.cast(predictions, dtypes.int64))
    labels = flat(math_ops.cast(labels, dtypes.int64))
    # The batch's matrix: rows are labels, columns predictions, each pair counted with its weight.
    rows = array_ops.one_hot(labels, num_classes, dtype=dtypes.float64)
    cols = array_ops.one_hot(predictions, num_classes, dtype=dtypes.float64)
    if weights is not None:
        weights = flat(math_ops.cast(convert_to_tensor(weights), dtypes.float64))
        cols = cols * array_ops.expand_dims(weights * array_ops.ones_like(math_ops.cast(labels, dtypes.float64)), 1)
    current_cm = math_ops.matmul(rows, cols, transpose_a=True)
    return total_cm, state_ops.assign_add(total_cm, current_cm)


def mean_iou(
    labels: Any,
    predictions: Any,
    num_classes: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean intersection-over-union over the classes that occur: ``tp / (tp + fp + fn)`` per class.

    ``update_op`` adds the batch's confusion matrix (and returns it), as in TF; read the metric from ``value``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     iou, update = tf.metrics.mean_iou([0, 0, 1, 1], [0, 1, 1, 1], num_classes=2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         _ = sess.run(update)
        ...         print(round(float(sess.run(iou)), 4))
        0.5833
    """
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        n = static_int(num_classes, "num_classes")
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions, n, weights)
        sum_over_row = math_ops.cast(math_ops.reduce_sum(total_cm, 0), dtypes.float32)
        sum_over_col = math_ops.cast(math_ops.reduce_sum(total_cm, 1), dtypes.float32)
        eye = constant([[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)], dtype=dtypes.float64)
        cm_diag = math_ops.cast(math_ops.reduce_sum(total_cm * eye, 1), dtypes.float32)
        denominator = sum_over_row + sum_over_col - cm_diag
        num_valid = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), dtypes.float32))
        denominator = math_ops.where(math_ops.greater(denominator, 0), denominator, array_ops.ones_like(denominator))
        iou = math_ops.divide(cm_diag, denominator)
        result = math_ops.where(
            math_ops.greater(num_valid, 0), math_ops.reduce_sum(iou, name="mean_iou") / num_valid, 0
        )
        return publish(metrics_collections, result), publish(updates_collections, update_op)


def mean_per_class_accuracy(
    labels: Any,
    predictions: Any,
    num_classes: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The mean over classes of each class's accuracy; ``update_op`` returns the per-class accuracies.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     acc, update = tf.metrics.mean_per_class_accuracy([0, 0, 1, 1], [0, 1, 1, 1], num_classes=2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update), sess.run(acc))
        [0.5 1. ] 0.75
    """
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        n = static_int(num_classes, "num_classes")
        labels = flat(math_ops.cast(labels, dtypes.int64))
        predictions = flat(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([n], dtypes.float32, name="total")
        count = metric_variable([n], dtypes.float32, name="count")
        ones = array_ops.ones(array_ops.reshape(array_ops.size(labels), [1]), dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = math_ops.cast(flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct = is_correct * weights
            ones = ones * weights
        update_total_op = state_ops.scatter_add(total, labels, ones)
        update_count_op = state_ops.scatter_add(count, labels, is_correct)
        per_class = div_no_nan(count, math_ops.maximum(total, 0))
        value = publish(metrics_collections, math_ops.reduce_mean(per_class, name="mean_accuracy"))
        update_op = div_no_nan(update_count_op, math_ops.maximum(update_total_op, 0), name="update_op")
        return value, publish(updates_collections, update_op)
