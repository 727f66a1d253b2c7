"""TF1's ``tf.metrics``: streaming metrics, each ``(value, update_op)`` over local "metric" variables.

Every metric keeps running totals in variables of ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES`` (initialized
by ``tf.local_variables_initializer()``), named under the metric's scope (``accuracy/total``,
``accuracy/count``, ...). ``update_op`` adds a batch to the totals and returns the metric so far; ``value``
reads the totals. The metrics are composed as TF's ``metrics_impl.py`` composes them; the ``_at_k`` metrics
compute TF's set sizes (top-k predictions against the labels of each row) with dense comparisons.
Since the totals live in variables, updates run from several workers against variables on a ps task add up
to the single-process answer.

The modules: ``common`` (metric variables, collections, squeezing), ``means`` (means and the errors built on
them), ``counts`` (true/false positives/negatives, precision, recall), ``thresholds`` (counts at thresholds and
what is read from them), ``auc``, ``confusion`` (mean IoU, per-class accuracy) and ``at_k``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     labels = tf.placeholder(tf.int32, [None])
    ...     predictions = tf.placeholder(tf.int32, [None])
    ...     acc, update = tf.metrics.accuracy(labels, predictions)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         _ = sess.run(update, {labels: [1, 2], predictions: [1, 0]})
    ...         _ = sess.run(update, {labels: [3, 3], predictions: [3, 3]})
    ...         print(sess.run(acc), [v.name for v in tf.local_variables()])
    0.75 ['accuracy/total:0', 'accuracy/count:0']
"""

from dtf_notebook.ops.metrics.at_k import (
    average_precision_at_k,
    precision_at_k,
    precision_at_top_k,
    recall_at_k,
    recall_at_top_k,
    sparse_average_precision_at_k,
    sparse_precision_at_k,
)
from dtf_notebook.ops.metrics.auc import auc
from dtf_notebook.ops.metrics.common import metric_variable
from dtf_notebook.ops.metrics.confusion import mean_iou, mean_per_class_accuracy
from dtf_notebook.ops.metrics.counts import (
    false_negatives,
    false_positives,
    precision,
    recall,
    true_negatives,
    true_positives,
)
from dtf_notebook.ops.metrics.means import (
    accuracy,
    mean,
    mean_absolute_error,
    mean_cosine_distance,
    mean_relative_error,
    mean_squared_error,
    mean_tensor,
    percentage_below,
    root_mean_squared_error,
)
from dtf_notebook.ops.metrics.thresholds import (
    false_negatives_at_thresholds,
    false_positives_at_thresholds,
    precision_at_thresholds,
    recall_at_thresholds,
    sensitivity_at_specificity,
    specificity_at_sensitivity,
    true_negatives_at_thresholds,
    true_positives_at_thresholds,
)

__all__ = [
    "accuracy",
    "auc",
    "average_precision_at_k",
    "false_negatives",
    "false_negatives_at_thresholds",
    "false_positives",
    "false_positives_at_thresholds",
    "mean",
    "mean_absolute_error",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "percentage_below",
    "precision",
    "precision_at_k",
    "precision_at_thresholds",
    "precision_at_top_k",
    "recall",
    "recall_at_k",
    "recall_at_thresholds",
    "recall_at_top_k",
    "root_mean_squared_error",
    "sensitivity_at_specificity",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
    "specificity_at_sensitivity",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]
