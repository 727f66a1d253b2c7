"""Metrics from confusion counts at thresholds (``prediction > threshold`` is positive): the counts themselves,
``precision_at_thresholds``, ``recall_at_thresholds``, ``sensitivity_at_specificity`` and
``specificity_at_sensitivity``. :func:`confusion_at_thresholds` also serves ``auc``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     _, update = recall_at_thresholds([1, 0, 1], [0.9, 0.6, 0.3], [0.5])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update).round(4))
    [0.5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, state_ops
from dtf_notebook.ops.check_ops import assert_greater_equal, assert_less_equal
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.losses.weights import broadcast_weights
from dtf_notebook.ops.math.scan import cumsum
from dtf_notebook.ops.metrics.common import metric_variable, publish, publish_pair, remove_squeezable
from dtf_notebook.ops.variable_scope import variable_scope

Metric = Callable[..., tuple[Tensor, Tensor]]
_KINDS = (("tp", "true_positives"), ("fn", "false_negatives"), ("tn", "true_negatives"), ("fp", "false_positives"))


def confusion_at_thresholds(
    labels: Any, predictions: Any, thresholds: list[float], weights: Any = None, includes: Any = None
) -> tuple[dict, dict]:
    """Counts of tp/fn/tn/fp per threshold (``prediction > threshold`` is positive), as TF builds them: the
    running counts (metric variables) and their update ops, each a dict keyed by ``"tp"``, ``"fn"``, ...

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     counts, updates = confusion_at_thresholds([1, 0], [0.9, 0.6], [0.5, 0.7], includes=("tp", "fp"))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(updates))
        {'tp': array([1., 1.], dtype=float32), 'fp': array([1., 0.], dtype=float32)}
    """
    all_includes = tuple(key for key, _ in _KINDS)
    includes = all_includes if includes is None else includes
    for include in includes:
        if include not in all_includes:
            raise ValueError(f"Invalid key: {include}")
    predictions = convert_to_tensor(predictions)
    with control_dependencies(
        [
            assert_greater_equal(
                predictions, math_ops.cast(0.0, predictions.dtype), message="predictions must be in [0, 1]"
            ),
            assert_less_equal(
                predictions, math_ops.cast(1.0, predictions.dtype), message="predictions must be in [0, 1]"
            ),
        ]
    ):
        predictions, labels, weights = remove_squeezable(
            math_ops.cast(predictions, dtypes.float32), math_ops.cast(labels, dtypes.bool), weights
        )
    num_thresholds = len(thresholds)
    predictions_2d = array_ops.reshape(predictions, [-1, 1])
    labels_2d = array_ops.reshape(math_ops.cast(labels, dtypes.bool), [1, -1])
    num_predictions: Any = predictions_2d.shape[0].value
    if num_predictions is None:
        num_predictions = array_ops.shape(predictions_2d)[0]
    thresh_tiled = array_ops.tile(
        array_ops.expand_dims(constant(thresholds, dtype=dtypes.float32), [1]), array_ops.stack([1, num_predictions])
    )
    pred_is_pos = math_ops.greater(
        array_ops.tile(array_ops.transpose(predictions_2d), [num_thresholds, 1]), thresh_tiled
    )
    pred_is_neg = math_ops.logical_not(pred_is_pos) if ("fn" in includes or "tn" in includes) else None
    label_is_pos = array_ops.tile(labels_2d, [num_thresholds, 1])
    label_is_neg = math_ops.logical_not(label_is_pos) if ("fp" in includes or "tn" in includes) else None
    weights_tiled = None
    if weights is not None:
        weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), predictions)
        weights_tiled = array_ops.tile(array_ops.reshape(weights, [1, -1]), [num_thresholds, 1])
    sides = {"tp": (label_is_pos, pred_is_pos), "fn": (label_is_pos, pred_is_neg)}
    sides.update(tn=(label_is_neg, pred_is_neg), fp=(label_is_neg, pred_is_pos))
    values, updates = {}, {}
    for key, name in _KINDS:
        if key not in includes:
            continue
        var = metric_variable([num_thresholds], dtypes.float32, name=name)
        hit = math_ops.cast(math_ops.logical_and(*sides[key]), dtypes.float32)
        if weights_tiled is not None:
            hit = hit * weights_tiled
        updates[key] = state_ops.assign_add(var, math_ops.reduce_sum(hit, 1))
        values[key] = var
    return values, updates


def _count_at_thresholds(default_name: str, key: str) -> Metric:
    def metric(
        labels: Any,
        predictions: Any,
        thresholds: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(labels, predictions, thresholds, weights, (key,))
            value = publish(metrics_collections, identity(values[key]))
            return value, publish(updates_collections, updates[key])

    fn_name = f"{default_name}_at_thresholds"
    metric.__name__ = metric.__qualname__ = fn_name
    metric.__doc__ = f"""The (weighted) {default_name.replace("_", " ")} at each threshold (``prediction >
    threshold`` is positive); predictions must be in [0, 1].

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.{fn_name}([1, 0, 1, 0], [0.9, 0.6, 0.3, 0.1], [0.5])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        [1.]
    """
    return metric


true_positives_at_thresholds = _count_at_thresholds("true_positives", "tp")
false_positives_at_thresholds = _count_at_thresholds("false_positives", "fp")
false_negatives_at_thresholds = _count_at_thresholds("false_negatives", "fn")
true_negatives_at_thresholds = _count_at_thresholds("true_negatives", "tn")


def _ratio_at_thresholds(kind: str, other_key: str, doc: str) -> Metric:
    def metric(
        labels: Any,
        predictions: Any,
        thresholds: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, f"{kind}_at_thresholds", (predictions, labels, weights)):
            values, updates = confusion_at_thresholds(labels, predictions, thresholds, weights, ("tp", other_key))
            epsilon = 1e-7

            def compute(counts: dict, op_name: str) -> Tensor:
                tp, other = counts["tp"], counts[other_key]
                return math_ops.divide(tp, epsilon + tp + other, name=f"{kind}_{op_name}")

            return publish_pair(compute, values, updates, metrics_collections, updates_collections)

    metric.__name__ = metric.__qualname__ = f"{kind}_at_thresholds"
    metric.__doc__ = doc
    return metric


precision_at_thresholds = _ratio_at_thresholds(
    "precision",
    "fp",
    """``tp / (tp + fp)`` at each threshold.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.precision_at_thresholds([1, 0, 1, 0], [0.9, 0.6, 0.3, 0.1], [0.2, 0.5])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update).round(4))
        [0.6667 0.5   ]
    """,
)
recall_at_thresholds = _ratio_at_thresholds(
    "recall",
    "fn",
    """``tp / (tp + fn)`` at each threshold.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.recall_at_thresholds([1, 0, 1, 0], [0.9, 0.6, 0.3, 0.1], [0.2, 0.5])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update).round(4))
        [1.  0.5]
    """,
)


def _at_operating_point(
    scope: tuple[str | None, str],
    labels: Any,
    predictions: Any,
    weights: Any,
    num_thresholds: int,
    collections: tuple[Any, Any],
    compute: Callable[[dict, str], Tensor],
) -> tuple[Tensor, Tensor]:
    """``compute`` over the confusion counts at ``num_thresholds`` thresholds spread over [0, 1] (plus one just
    below 0 and one just above 1), in the variable scope ``scope`` (the name given, the default name)."""
    kepsilon = 1e-7
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    with variable_scope(*scope, (predictions, labels, weights)):
        values, updates = confusion_at_thresholds(
            labels, predictions, [0.0 - kepsilon, *inner, 1.0 + kepsilon], weights
        )
        return publish_pair(compute, values, updates, *collections)


def sensitivity_at_specificity(
    labels: Any,
    predictions: Any,
    specificity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The sensitivity (recall) at the threshold whose specificity is closest to ``specificity``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.sensitivity_at_specificity([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], 0.5)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        1.0
    """
    if specificity < 0 or specificity > 1:
        raise ValueError(f"`specificity` must be in the range [0, 1]. Currently, `specificity` got {specificity}.")
    kepsilon = 1e-7

    def compute(counts: dict, op_name: str) -> Tensor:
        tp, tn, fp, fn = counts["tp"], counts["tn"], counts["fp"], counts["fn"]
        specificities = math_ops.divide(tn, tn + fp + kepsilon)
        index = math_ops.cast(math_ops.argmin(math_ops.abs(specificities - specificity), 0), dtypes.int32)
        return math_ops.divide(tp[index], tp[index] + fn[index] + kepsilon, op_name)

    scope = (name, "sensitivity_at_specificity")
    collections = (metrics_collections, updates_collections)
    return _at_operating_point(scope, labels, predictions, weights, num_thresholds, collections, compute)


def specificity_at_sensitivity(
    labels: Any,
    predictions: Any,
    sensitivity: float,
    weights: Any = None,
    num_thresholds: int = 200,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """The specificity at the (last) threshold whose sensitivity is closest to ``sensitivity``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.specificity_at_sensitivity([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], 0.5)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        1.0
    """
    if sensitivity < 0 or sensitivity > 1:
        raise ValueError(f"`sensitivity` must be in the range [0, 1]. Currently, `sensitivity` got {sensitivity}.")
    kepsilon = 1e-7

    def compute(counts: dict, op_name: str) -> Tensor:
        tp, tn, fp, fn = counts["tp"], counts["tn"], counts["fp"], counts["fn"]
        sensitivities = math_ops.divide(tp, tp + fn + kepsilon)
        distance = math_ops.abs(sensitivities - sensitivity)
        at_min = math_ops.cast(math_ops.equal(distance, math_ops.reduce_min(distance)), dtypes.int64)
        # argmax of the running count of minima: the first index holding the last minimum, as in TF.
        index = math_ops.cast(math_ops.argmax(cumsum(at_min), 0), dtypes.int32)
        return math_ops.divide(tn[index], tn[index] + fp[index] + kepsilon, op_name)

    scope = (name, "specificity_at_sensitivity")
    collections = (metrics_collections, updates_collections)
    return _at_operating_point(scope, labels, predictions, weights, num_thresholds, collections, compute)
