"""TF1's ``tf.metrics``: streaming metrics, each ``(value, update_op)`` over local "metric" variables.

Every metric keeps running totals in variables of ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES`` (initialized
by ``tf.local_variables_initializer()``), named under the metric's scope (``accuracy/total``,
``accuracy/count``, ...). ``update_op`` adds a batch to the totals and returns the metric so far; ``value``
reads the totals. The metrics are composed as TF's ``metrics_impl.py`` composes them; the ``_at_k`` metrics
compute TF's set sizes (top-k predictions against the labels of each row) with dense comparisons.
Since the totals live in variables, updates run from several workers against variables on a ps task add up
to the single-process answer.

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

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collections, control_dependencies, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, state_ops
from dtf_notebook.ops.check_ops import assert_greater_equal, assert_less_equal
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.losses.weights import assert_broadcastable, broadcast_weights, remove_squeezable_dimensions
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.math.scan import cumsum
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.ops.variables import Variable

__all__ = [
    "accuracy",
    "auc",
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
    "specificity_at_sensitivity",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]


# ---- shared pieces ----------------------------------------------------------------------------------
def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: str | None = None) -> Variable:
    """A zero-initialized, non-trainable variable in ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v = metric_variable([2], tf.float32, name="total")
        ...     v.name, tf.get_collection(tf.GraphKeys.METRIC_VARIABLES) == [v], tf.trainable_variables()
        ('total:0', True, [])
    """
    return Variable(
        lambda: array_ops.zeros(shape, dtype),
        trainable=False,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape,
        name=name,
    )


def _publish(collections: Any, value: Any) -> Any:
    if collections:
        add_to_collections(collections, value)
    return value


def _remove_squeezable_dimensions(predictions: Any, labels: Any, weights: Any) -> tuple[Tensor, Any, Any]:
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank == 0:
        return predictions, labels, weights
    if p_rank is not None and w_rank is not None:
        if w_rank - p_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = array_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def _static_int(value: Any, what: str) -> int:
    if isinstance(value, Tensor):
        known = constant_value(value)
        if known is None:
            raise ValueError(f"`{what}` must be known while building the graph, got {value}")
        return int(known)
    return int(value)


# ---- mean and its relatives -------------------------------------------------------------------------
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
    with variable_scope(name, "mean", (values, weights)):
        values = math_ops.cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = math_ops.cast(array_ops.size(values), dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float32), values)
            values = math_ops.multiply(values, weights)
            num_values = math_ops.reduce_sum(weights)
        update_total_op = state_ops.assign_add(total, math_ops.reduce_sum(values))
        with control_dependencies([values]):
            update_count_op = state_ops.assign_add(count, num_values)
        mean_t = _publish(metrics_collections, div_no_nan(total, math_ops.maximum(count, 0), name="value"))
        update_op = div_no_nan(update_total_op, math_ops.maximum(update_count_op, 0), name="update_op")
        _publish(updates_collections, update_op)
        return mean_t, update_op


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
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
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
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
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
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
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
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None, name or "root_mean_squared_error")
    rmse = _publish(metrics_collections, math_ops.sqrt(mse))
    update = _publish(updates_collections, math_ops.sqrt(update_mse))
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
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
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
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    radial = math_ops.reduce_sum(math_ops.multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial, weights, None, None, name or "mean_cosine_distance")
    mean_distance = _publish(metrics_collections, math_ops.subtract(1.0, mean_distance))
    update_op = _publish(updates_collections, math_ops.subtract(1.0, update_op))
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


# ---- counts of a condition --------------------------------------------------------------------------
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
    value_tensor = _publish(metrics_collections, identity(count))
    update_op = _publish(updates_collections, state_ops.assign_add(count, math_ops.reduce_sum(values)))
    return value_tensor, update_op


def _condition_metric(default_name: str, label_value: bool, prediction_value: bool):
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights
            )
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


def _ratio_metric(default_name: str, other: Any, doc: str):
    def metric(
        labels: Any,
        predictions: Any,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = _remove_squeezable_dimensions(
                math_ops.cast(predictions, dtypes.bool), math_ops.cast(labels, dtypes.bool), weights
            )
            tp, tp_update = true_positives(labels, predictions, weights)
            wrong, wrong_update = other(labels, predictions, weights)

            def ratio(a: Tensor, b: Tensor, op_name: str) -> Tensor:
                return math_ops.where(math_ops.greater(a + b, 0), math_ops.divide(a, a + b), 0, op_name)

            value = _publish(metrics_collections, ratio(tp, wrong, "value"))
            update = _publish(updates_collections, ratio(tp_update, wrong_update, "update_op"))
            return value, update

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


# ---- confusion counts at thresholds -----------------------------------------------------------------
def _confusion_matrix_at_thresholds(
    labels: Any, predictions: Any, thresholds: list[float], weights: Any = None, includes: Any = None
) -> tuple[dict, dict]:
    """Counts of tp/fn/tn/fp per threshold (``prediction > threshold`` is positive), as TF builds them."""
    all_includes = ("tp", "fn", "tn", "fp")
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
        predictions, labels, weights = _remove_squeezable_dimensions(
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
    values, updates = {}, {}
    for key, name, label_side, pred_side in (
        ("tp", "true_positives", label_is_pos, pred_is_pos),
        ("fn", "false_negatives", label_is_pos, pred_is_neg),
        ("tn", "true_negatives", label_is_neg, pred_is_neg),
        ("fp", "false_positives", label_is_neg, pred_is_pos),
    ):
        if key not in includes:
            continue
        var = metric_variable([num_thresholds], dtypes.float32, name=name)
        hit = math_ops.cast(math_ops.logical_and(label_side, pred_side), dtypes.float32)
        if weights_tiled is not None:
            hit = hit * weights_tiled
        updates[key] = state_ops.assign_add(var, math_ops.reduce_sum(hit, 1))
        values[key] = var
    return values, updates


def _at_thresholds(default_name: str, key: str):
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
            values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, (key,))
            value = _publish(metrics_collections, identity(values[key]))
            return value, _publish(updates_collections, updates[key])

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


true_positives_at_thresholds = _at_thresholds("true_positives", "tp")
false_positives_at_thresholds = _at_thresholds("false_positives", "fp")
false_negatives_at_thresholds = _at_thresholds("false_negatives", "fn")
true_negatives_at_thresholds = _at_thresholds("true_negatives", "tn")


def precision_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``tp / (tp + fp)`` at each threshold.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.precision_at_thresholds([1, 0, 1, 0], [0.9, 0.6, 0.3, 0.1], [0.2, 0.5])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update).round(4))
        [0.6667 0.5   ]
    """
    with variable_scope(name, "precision_at_thresholds", (predictions, labels, weights)):
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, ("tp", "fp"))
        epsilon = 1e-7

        def compute(tp: Tensor, fp: Tensor, op_name: str) -> Tensor:
            return math_ops.divide(tp, epsilon + tp + fp, name=f"precision_{op_name}")

        value = _publish(metrics_collections, compute(values["tp"], values["fp"], "value"))
        return value, _publish(updates_collections, compute(updates["tp"], updates["fp"], "update_op"))


def recall_at_thresholds(
    labels: Any,
    predictions: Any,
    thresholds: Any,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """``tp / (tp + fn)`` at each threshold.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.recall_at_thresholds([1, 0, 1, 0], [0.9, 0.6, 0.3, 0.1], [0.2, 0.5])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update).round(4))
        [1.  0.5]
    """
    with variable_scope(name, "recall_at_thresholds", (predictions, labels, weights)):
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights, ("tp", "fn"))
        epsilon = 1e-7

        def compute(tp: Tensor, fn: Tensor, op_name: str) -> Tensor:
            return math_ops.divide(tp, epsilon + tp + fn, name=f"recall_{op_name}")

        value = _publish(metrics_collections, compute(values["tp"], values["fn"], "value"))
        return value, _publish(updates_collections, compute(updates["tp"], updates["fn"], "update_op"))


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
        values, updates = _confusion_matrix_at_thresholds(labels, predictions, thresholds, weights)
        n = num_thresholds

        def interpolate_pr_auc(tp: Tensor, fp: Tensor, fn: Tensor) -> Tensor:
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

        def compute_auc(tp: Tensor, fn: Tensor, tn: Tensor, fp: Tensor, op_name: str) -> Tensor:
            if curve == "PR" and summation_method == "careful_interpolation":
                return interpolate_pr_auc(tp, fp, fn)
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

        value = _publish(
            metrics_collections, compute_auc(values["tp"], values["fn"], values["tn"], values["fp"], "value")
        )
        update = compute_auc(updates["tp"], updates["fn"], updates["tn"], updates["fp"], "update_op")
        return value, _publish(updates_collections, update)


def _sensitivity_thresholds(num_thresholds: int) -> list[float]:
    kepsilon = 1e-7
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - kepsilon, *inner, 1.0 + kepsilon]


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
    with variable_scope(name, "sensitivity_at_specificity", (predictions, labels, weights)):
        kepsilon = 1e-7
        values, updates = _confusion_matrix_at_thresholds(
            labels, predictions, _sensitivity_thresholds(num_thresholds), weights
        )

        def compute(tp: Tensor, tn: Tensor, fp: Tensor, fn: Tensor, op_name: str) -> Tensor:
            specificities = math_ops.divide(tn, tn + fp + kepsilon)
            index = math_ops.cast(math_ops.argmin(math_ops.abs(specificities - specificity), 0), dtypes.int32)
            return math_ops.divide(tp[index], tp[index] + fn[index] + kepsilon, op_name)

        value = _publish(metrics_collections, compute(values["tp"], values["tn"], values["fp"], values["fn"], "value"))
        update = compute(updates["tp"], updates["tn"], updates["fp"], updates["fn"], "update_op")
        return value, _publish(updates_collections, update)


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
    with variable_scope(name, "specificity_at_sensitivity", (predictions, labels, weights)):
        kepsilon = 1e-7
        values, updates = _confusion_matrix_at_thresholds(
            labels, predictions, _sensitivity_thresholds(num_thresholds), weights
        )

        def compute(tp: Tensor, tn: Tensor, fp: Tensor, fn: Tensor, op_name: str) -> Tensor:
            sensitivities = math_ops.divide(tp, tp + fn + kepsilon)
            distance = math_ops.abs(sensitivities - sensitivity)
            at_min = math_ops.cast(math_ops.equal(distance, math_ops.reduce_min(distance)), dtypes.int64)
            # argmax of the running count of minima: the first index holding the last minimum, as in TF.
            index = math_ops.cast(math_ops.argmax(cumsum(at_min), 0), dtypes.int32)
            return math_ops.divide(tn[index], tn[index] + fp[index] + kepsilon, op_name)

        value = _publish(metrics_collections, compute(values["tp"], values["tn"], values["fp"], values["fn"], "value"))
        update = compute(updates["tp"], updates["tn"], updates["fp"], updates["fn"], "update_op")
        return value, _publish(updates_collections, update)


# ---- confusion matrix metrics -----------------------------------------------------------------------
def _flat(t: Tensor) -> Tensor:
    return array_ops.reshape(t, [-1]) if t.shape.ndims is None or t.shape.ndims > 1 else t


def _streaming_confusion_matrix(labels: Any, predictions: Any, num_classes: int, weights: Any = None) -> tuple:
    total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
    predictions = _flat(math_ops.cast(predictions, dtypes.int64))
    labels = _flat(math_ops.cast(labels, dtypes.int64))
    # The batch's matrix: rows are labels, columns predictions, each pair counted with its weight.
    rows = array_ops.one_hot(labels, num_classes, dtype=dtypes.float64)
    cols = array_ops.one_hot(predictions, num_classes, dtype=dtypes.float64)
    if weights is not None:
        weights = _flat(math_ops.cast(convert_to_tensor(weights), dtypes.float64))
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
        n = _static_int(num_classes, "num_classes")
        total_cm, update_op = _streaming_confusion_matrix(labels, predictions, n, weights)
        sum_over_row = math_ops.cast(math_ops.reduce_sum(total_cm, 0), dtypes.float32)
        sum_over_col = math_ops.cast(math_ops.reduce_sum(total_cm, 1), dtypes.float32)
        eye = constant(_identity(n), dtype=dtypes.float64)
        cm_diag = math_ops.cast(math_ops.reduce_sum(total_cm * eye, 1), dtypes.float32)
        denominator = sum_over_row + sum_over_col - cm_diag
        num_valid = math_ops.reduce_sum(math_ops.cast(math_ops.not_equal(denominator, 0), dtypes.float32))
        denominator = math_ops.where(math_ops.greater(denominator, 0), denominator, array_ops.ones_like(denominator))
        iou = math_ops.divide(cm_diag, denominator)
        result = math_ops.where(
            math_ops.greater(num_valid, 0), math_ops.reduce_sum(iou, name="mean_iou") / num_valid, 0
        )
        return _publish(metrics_collections, result), _publish(updates_collections, update_op)


def _identity(n: int) -> list[list[float]]:
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


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
        n = _static_int(num_classes, "num_classes")
        labels = _flat(math_ops.cast(labels, dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([n], dtypes.float32, name="total")
        count = metric_variable([n], dtypes.float32, name="count")
        ones = array_ops.ones(array_ops.reshape(array_ops.size(labels), [1]), dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = math_ops.cast(predictions, labels.dtype)
        is_correct = math_ops.cast(math_ops.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = math_ops.cast(_flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct = is_correct * weights
            ones = ones * weights
        update_total_op = state_ops.scatter_add(total, labels, ones)
        update_count_op = state_ops.scatter_add(count, labels, is_correct)
        per_class = div_no_nan(count, math_ops.maximum(total, 0))
        value = _publish(metrics_collections, math_ops.reduce_mean(per_class, name="mean_accuracy"))
        update_op = div_no_nan(update_count_op, math_ops.maximum(update_total_op, 0), name="update_op")
        return value, _publish(updates_collections, update_op)


# ---- at k -------------------------------------------------------------------------------------------
def _at_k_name(name: str, k: int | None = None, class_id: int | None = None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _top_k_mask(predictions: Tensor, k: int) -> Tensor:
    """Booleans ``[..., classes]``: the ``k`` largest predictions of each row (ties go to the lower index, as TF's
    ``top_k``)."""
    p = array_ops.expand_dims(predictions, -1)  # [..., c, 1]: the entry ranked
    q = array_ops.expand_dims(predictions, -2)  # [..., 1, c]: the entries it is compared with
    n = predictions.shape[-1].value
    index = math_ops.range(n)
    before = math_ops.less(array_ops.expand_dims(index, 0), array_ops.expand_dims(index, 1))  # [c, c]: j < i
    beats = math_ops.logical_or(math_ops.greater(q, p), math_ops.logical_and(math_ops.equal(q, p), before))
    rank = math_ops.reduce_sum(math_ops.cast(beats, dtypes.int32), -1)
    return math_ops.less(rank, k)


def _at_k_counts(labels: Any, topk: Tensor, class_id: int | None) -> tuple[Tensor, Tensor, Tensor]:
    """Per-row (tp, fp, fn) with TF's set semantics: the labels of a row are a set; ``topk`` marks predictions."""
    labels = math_ops.cast(convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims == topk.shape.ndims - 1:
        labels = array_ops.expand_dims(labels, -1)
    num_classes = topk.shape[-1].value
    classes = math_ops.range(num_classes, dtype=dtypes.int64)
    label_is = math_ops.equal(array_ops.expand_dims(labels, -1), classes)  # [..., m, c]
    in_labels = math_ops.reduce_any(label_is, -2)  # [..., c]
    if class_id is not None:
        chosen = math_ops.equal(classes, class_id)
        topk = math_ops.logical_and(topk, chosen)
        in_labels = math_ops.logical_and(in_labels, chosen)
    tp = math_ops.reduce_sum(math_ops.cast(math_ops.logical_and(topk, in_labels), dtypes.float64), -1)
    fp = math_ops.reduce_sum(
        math_ops.cast(math_ops.logical_and(topk, math_ops.logical_not(in_labels)), dtypes.float64), -1
    )
    if class_id is not None:
        fn = math_ops.reduce_sum(
            math_ops.cast(math_ops.logical_and(in_labels, math_ops.logical_not(topk)), dtypes.float64), -1
        )
        return tp, fp, fn
    # Distinct labels of each row (labels outside [0, classes) included, as TF's sets count them) not predicted.
    m = labels.shape[-1].value
    same = math_ops.equal(array_ops.expand_dims(labels, -1), array_ops.expand_dims(labels, -2))  # [..., m, m]
    earlier = constant(_strictly_lower(m), dtype=dtypes.bool)
    repeated = math_ops.reduce_any(math_ops.logical_and(same, earlier), -1)
    predicted = math_ops.reduce_any(math_ops.logical_and(label_is, array_ops.expand_dims(topk, -2)), -1)
    missed = math_ops.logical_and(math_ops.logical_not(repeated), math_ops.logical_not(predicted))
    fn = math_ops.reduce_sum(math_ops.cast(missed, dtypes.float64), -1)
    return tp, fp, fn


def _strictly_lower(m: int) -> list[list[bool]]:
    return [[j < i for j in range(m)] for i in range(m)]


def _streaming_at_k(counts: Tensor, weights: Any, scope_name: str) -> tuple[Tensor, Tensor]:
    with name_scope(None, scope_name, (counts, weights)) as scope:
        if weights is not None:
            with control_dependencies((assert_broadcastable(weights, counts),)):
                counts = math_ops.multiply(counts, math_ops.cast(weights, dtypes.float64))
        batch_total = math_ops.cast(math_ops.reduce_sum(counts), dtypes.float64)
        var = metric_variable([], dtypes.float64, name=scope.rstrip("/").split("/")[-1])
        return var, state_ops.assign_add(var, batch_total, name="update")


def _at_top_k(
    kind: str,
    counts: tuple[Tensor, Tensor, Tensor],
    k: int | None,
    class_id: int | None,
    weights: Any,
    metrics_collections: Any,
    updates_collections: Any,
    scope: str,
) -> tuple[Tensor, Tensor]:
    tp_row, fp_row, fn_row = counts
    tp, tp_update = _streaming_at_k(tp_row, weights, _at_k_name("true_positive", k, class_id))
    other_name = "false_positive" if kind == "precision" else "false_negative"
    other, other_update = _streaming_at_k(
        fp_row if kind == "precision" else fn_row, weights, _at_k_name(other_name, k, class_id)
    )
    value = _publish(metrics_collections, math_ops.divide(tp, math_ops.add(tp, other), name=scope))
    update = math_ops.divide(tp_update, math_ops.add(tp_update, other_update), name="update")
    return value, _publish(updates_collections, update)


def _at_k_metric(kind: str, by_index: bool):
    def metric(
        labels: Any,
        predictions: Any,
        k: int | None = None,
        class_id: int | None = None,
        weights: Any = None,
        metrics_collections: Any = None,
        updates_collections: Any = None,
        name: str | None = None,
    ) -> tuple[Tensor, Tensor]:
        predictions = convert_to_tensor(predictions)
        with name_scope(name, _at_k_name(kind, k, class_id), (predictions, labels, weights)) as scope:
            if by_index:
                idx = math_ops.cast(predictions, dtypes.int64)
                k_ = k if k is not None else idx.shape[-1].value
                counts = _at_k_counts_from_indices(labels, idx, class_id)
                return _at_top_k(kind, counts, k_, class_id, weights, metrics_collections, updates_collections, scope)
            if k is None or k < 1:
                raise ValueError(f"`k` must be a positive integer, got {k}")
            if predictions.shape[-1].value is None:
                raise ValueError("The last dimension of `predictions` (the classes) must be known")
            counts = _at_k_counts(labels, _top_k_mask(predictions, k), class_id)
            return _at_top_k(kind, counts, k, class_id, weights, metrics_collections, updates_collections, scope)

    return metric


def _at_k_counts_from_indices(labels: Any, idx: Tensor, class_id: int | None) -> tuple[Tensor, Tensor, Tensor]:
    """Per-row (tp, fp, fn) from the predicted class ids ``idx`` (distinct per row) and the labels' sets."""
    labels = math_ops.cast(convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims == idx.shape.ndims - 1:
        labels = array_ops.expand_dims(labels, -1)
    as_float = lambda b: math_ops.cast(b, dtypes.float64)  # noqa: E731
    if class_id is not None:
        predicted = math_ops.reduce_any(math_ops.equal(idx, class_id), -1)
        labelled = math_ops.reduce_any(math_ops.equal(labels, class_id), -1)
        tp = as_float(math_ops.logical_and(predicted, labelled))
        fp = as_float(math_ops.logical_and(predicted, math_ops.logical_not(labelled)))
        fn = as_float(math_ops.logical_and(labelled, math_ops.logical_not(predicted)))
        return tp, fp, fn
    match = math_ops.equal(array_ops.expand_dims(labels, -1), array_ops.expand_dims(idx, -2))  # [..., m, k]
    idx_in_labels = math_ops.reduce_any(match, -2)
    label_predicted = math_ops.reduce_any(match, -1)
    m = labels.shape[-1].value
    same = math_ops.equal(array_ops.expand_dims(labels, -1), array_ops.expand_dims(labels, -2))
    repeated = math_ops.reduce_any(math_ops.logical_and(same, constant(_strictly_lower(m), dtype=dtypes.bool)), -1)
    tp = math_ops.reduce_sum(as_float(idx_in_labels), -1)
    fp = math_ops.reduce_sum(as_float(math_ops.logical_not(idx_in_labels)), -1)
    missed = math_ops.logical_and(math_ops.logical_not(repeated), math_ops.logical_not(label_predicted))
    return tp, fp, math_ops.reduce_sum(as_float(missed), -1)


precision_at_k = _at_k_metric("precision", by_index=False)
precision_at_k.__name__ = precision_at_k.__qualname__ = "precision_at_k"
precision_at_k.__doc__ = """Precision of the ``k`` highest ``predictions`` of each row against its ``labels``.

    Args:
        labels: ``[batch]`` or ``[batch, num_labels]`` int class ids (a row's labels are a set).
        predictions: ``[batch, num_classes]`` scores.
        k: How many top predictions count.
        class_id: Only count this class (else every class).
        weights: Per-row weights, broadcastable to ``[batch]``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.precision_at_k([[0], [2]], [[0.9, 0.1, 0.5], [0.8, 0.1, 0.3]], k=2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
recall_at_k = _at_k_metric("recall", by_index=False)
recall_at_k.__name__ = recall_at_k.__qualname__ = "recall_at_k"
recall_at_k.__doc__ = """Recall of the ``k`` highest ``predictions`` of each row against its ``labels`` (class ids);
    labels outside ``[0, num_classes)`` always count as false negatives, as in TF.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.recall_at_k([[0, 1], [2, 2]], [[0.9, 0.1, 0.5], [0.8, 0.1, 0.3]], k=2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(round(float(sess.run(update)), 4))
        0.6667
    """


def precision_at_top_k(
    labels: Any,
    predictions_idx: Any,
    k: int | None = None,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """:func:`precision_at_k` given each row's top-k class ids (``predictions_idx``) instead of scores.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.precision_at_top_k([[0], [2]], [[0, 2], [0, 2]])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
    fn = _at_k_metric("precision", by_index=True)
    return fn(labels, predictions_idx, k, class_id, weights, metrics_collections, updates_collections, name)


def recall_at_top_k(
    labels: Any,
    predictions_idx: Any,
    k: int | None = None,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """:func:`recall_at_k` given each row's top-k class ids (``predictions_idx``) instead of scores.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.recall_at_top_k([[0], [1]], [[0, 2], [0, 2]])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
    fn = _at_k_metric("recall", by_index=True)
    return fn(labels, predictions_idx, k, class_id, weights, metrics_collections, updates_collections, name)
