"""``tf.metrics.auc``: the area under the ROC or PR curve from confusion counts at thresholds.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     _, update = auc([0, 1], [0.3, 0.6])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(round(float(sess.run(update)), 2))
    1.0
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.metrics.common import publish_pair
from dtf_notebook.ops.metrics.thresholds import confusion_at_thresholds
from dtf_notebook.ops.variable_scope import variable_scope


def _interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor, n: int) -> Tensor:
    """TF's careful interpolation of the PR curve between thresholds (Davis & Goadrich 2006)."""
    dtp = tp[: n - 1] - tp[1:]
    p = tp + fp
    prec_slope = div_no_nan(dtp, math_ops.maximum(p[: n - 1] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - math_ops.multiply(prec_slope, p[1:])
    safe_p_ratio = math_ops.where(
        math_ops.logical_and(p[: n - 1] > 0, p[1:] > 0),
        div_no_nan(p[: n - 1], math_ops.maximum(p[1:], 0), name="recall_relative_ratio"),
        array_ops.ones_like(p[1:]),
    )
    increment = div_no_nan(
        prec_slope * (dtp + intercept * math_ops.log(safe_p_ratio)),
        math_ops.maximum(tp[1:] + fn[1:], 0),
        name="pr_auc_increment",
    )
    return math_ops.reduce_sum(increment, name="interpolate_pr_auc")


def auc(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    curve: str = "ROC",
    name: str | None = None,
    summation_method: str = "trapezoidal",
    thresholds: Any = None,
) -> tuple[Tensor, Tensor]:
    """Area under the ROC or PR curve, from confusion counts at ``num_thresholds`` thresholds in [0, 1].

    Args:
        labels: Booleans (or 0/1) per prediction.
        predictions: Probabilities in [0, 1].
        weights: Optional per-prediction weights.
        num_thresholds: How many thresholds (spaced evenly, plus one just below 0 and one just above 1).
        curve: ``"ROC"`` or ``"PR"``.
        summation_method: ``"trapezoidal"``, ``"careful_interpolation"`` (PR), ``"minoring"`` or ``"majoring"``.
        thresholds: Explicit thresholds instead of ``num_thresholds``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 2))
        0.75
    """
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        epsilon = 1.0e-6
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
        else:
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - epsilon] + list(thresholds) + [1.0 + epsilon]
        values, updates = confusion_at_thresholds(labels, predictions, thresholds, weights)
        n = num_thresholds

        def compute_auc(counts: dict, op_name: str) -> Tensor:
            tp, fn, tn, fp = counts["tp"], counts["fn"], counts["tn"], counts["fp"]
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolate_pr_auc(tp, fp, fn, n)
            rec = math_ops.divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = math_ops.divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, math_ops.divide(tp + epsilon, tp + fp + epsilon)
            if summation_method in ("trapezoidal", "careful_interpolation"):
                heights = (y[: n - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                heights = math_ops.minimum(y[: n - 1], y[1:])
            elif summation_method == "majoring":
                heights = math_ops.maximum(y[: n - 1], y[1:])
            else:
                raise ValueError(f"Invalid summation_method: {summation_method}")
            return math_ops.reduce_sum(math_ops.multiply(x[: n - 1] - x[1:], heights), name=op_name)

        return publish_pair(compute_auc, values, updates, metrics_collections, updates_collections)
