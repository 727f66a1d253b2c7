"""Metrics of each row's top ``k`` predictions against its labels (a set of class ids): ``precision_at_k``,
``recall_at_k``, their ``_at_top_k`` forms given the predicted ids, and ``average_precision_at_k``.

TF computes these with set operations; here the set sizes come from dense comparisons of ids, with TF's set
semantics (a row's labels are a set; labels outside ``[0, num_classes)`` count as labels nobody predicts).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     _, update = precision_at_top_k([[0], [2]], [[0, 1], [0, 2]])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.local_variables_initializer())
    ...         print(sess.run(update))
    0.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, state_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.losses.weights import assert_broadcastable, broadcast_weights
from dtf_notebook.ops.math.safe_div import div_no_nan
from dtf_notebook.ops.math.scan import cumsum
from dtf_notebook.ops.math.sorting import top_k
from dtf_notebook.ops.metrics.common import metric_variable, publish

Metric = Callable[..., tuple[Tensor, Tensor]]


def _at_k_name(name: str, k: int | None = None, class_id: int | None = None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _int64_labels(labels: Any, predictions: Tensor) -> Tensor:
    """The labels as int64 ids, given a last dimension when they have one dimension fewer than the predictions."""
    labels = math_ops.cast(convert_to_tensor(labels), dtypes.int64)
    if labels.shape.ndims == predictions.shape.ndims - 1:
        labels = array_ops.expand_dims(labels, -1)
    return labels


def _repeated_labels(labels: Tensor) -> Tensor:
    """Booleans ``[..., m]``: whether each label of a row already occurred earlier in that row."""
    m = labels.shape[-1].value
    same = math_ops.equal(array_ops.expand_dims(labels, -1), array_ops.expand_dims(labels, -2))  # [..., m, m]
    earlier = constant([[j < i for j in range(m)] for i in range(m)], dtype=dtypes.bool)
    return math_ops.reduce_any(math_ops.logical_and(same, earlier), -1)


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
    labels = _int64_labels(labels, topk)
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
    repeated = _repeated_labels(labels)
    predicted = math_ops.reduce_any(math_ops.logical_and(label_is, array_ops.expand_dims(topk, -2)), -1)
    missed = math_ops.logical_and(math_ops.logical_not(repeated), math_ops.logical_not(predicted))
    fn = math_ops.reduce_sum(math_ops.cast(missed, dtypes.float64), -1)
    return tp, fp, fn


def _at_k_counts_from_indices(labels: Any, idx: Tensor, class_id: int | None) -> tuple[Tensor, Tensor, Tensor]:
    """Per-row (tp, fp, fn) from the predicted class ids ``idx`` (distinct per row) and the labels' sets."""
    labels = _int64_labels(labels, idx)
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
    repeated = _repeated_labels(labels)
    tp = math_ops.reduce_sum(as_float(idx_in_labels), -1)
    fp = math_ops.reduce_sum(as_float(math_ops.logical_not(idx_in_labels)), -1)
    missed = math_ops.logical_and(math_ops.logical_not(repeated), math_ops.logical_not(label_predicted))
    return tp, fp, math_ops.reduce_sum(as_float(missed), -1)


def _streaming_at_k(counts: Tensor, weights: Any, scope_name: str) -> tuple[Tensor, Tensor]:
    with name_scope(None, scope_name, (counts, weights)) as scope:
        if weights is not None:
            with control_dependencies((assert_broadcastable(weights, counts),)):
                counts = math_ops.multiply(counts, math_ops.cast(weights, dtypes.float64))
        batch_total = math_ops.cast(math_ops.reduce_sum(counts), dtypes.float64)
        var = metric_variable([], dtypes.float64, name=scope)  # the scope's own name, as TF names it
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
    value = publish(metrics_collections, math_ops.divide(tp, math_ops.add(tp, other), name=scope))
    update = math_ops.divide(tp_update, math_ops.add(tp_update, other_update), name="update")
    return value, publish(updates_collections, update)


def _at_k_metric(kind: str, by_index: bool) -> Metric:
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
                counts = _at_k_counts_from_indices(labels, idx, class_id)
                return _at_top_k(kind, counts, k, class_id, weights, metrics_collections, updates_collections, scope)
            if k is None or k < 1:
                raise ValueError(f"`k` must be a positive integer, got {k}")
            if predictions.shape[-1].value is None:
                raise ValueError("The last dimension of `predictions` (the classes) must be known")
            counts = _at_k_counts(labels, _top_k_mask(predictions, k), class_id)
            return _at_top_k(kind, counts, k, class_id, weights, metrics_collections, updates_collections, scope)

    metric.__name__ = metric.__qualname__ = f"{kind}_at_{'top_k' if by_index else 'k'}"
    return metric


precision_at_k = _at_k_metric("precision", by_index=False)
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


def sparse_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    class_id: int | None = None,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """TF1's older name of :func:`precision_at_k`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.sparse_precision_at_k([[0], [2]], [[0.9, 0.1, 0.5], [0.8, 0.1, 0.3]], k=1)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
    return precision_at_k(labels, predictions, k, class_id, weights, metrics_collections, updates_collections, name)


def _average_precision_per_row(labels: Any, predictions_idx: Tensor) -> Tensor:
    """TF's ``_sparse_average_precision_at_top_k``: per row, the mean over the relevant labels (at most k) of the
    precision at each rank where a label was retrieved; NaN for a row without labels, as in TF."""
    with name_scope(None, "average_precision", (predictions_idx, labels)) as scope:
        predictions_idx = math_ops.cast(predictions_idx, dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of predictions_idx must be at least 1.")
        k = predictions_idx.shape[-1].value
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set.")
        labels = _int64_labels(labels, predictions_idx)
        match = math_ops.equal(array_ops.expand_dims(predictions_idx, -1), array_ops.expand_dims(labels, -2))
        relevant_per_k = math_ops.cast(math_ops.reduce_any(match, -1), dtypes.float64, name="relevant_per_k")
        tp_per_k = cumsum(relevant_per_k, axis=-1, name="tp_per_k")
        retrieved_per_k = cumsum(array_ops.ones_like(relevant_per_k), axis=-1, name="retrieved_per_k")
        precision_per_k = math_ops.divide(tp_per_k, retrieved_per_k, name="precision_per_k")
        relevant_precision = math_ops.multiply(precision_per_k, relevant_per_k, name="relevant_precision_per_k")
        precision_sum = math_ops.reduce_sum(relevant_precision, axis=(-1,), name="precision_sum")
        with name_scope(None, "num_relevant", (labels,)) as relevant_scope:
            num_labels = math_ops.reduce_sum(math_ops.cast(math_ops.greater_equal(labels, 0), dtypes.int64), -1)
            num_relevant = math_ops.minimum(num_labels, k, name=relevant_scope)
        return math_ops.divide(precision_sum, math_ops.cast(num_relevant, dtypes.float64), name=scope)


def _streaming_average_precision(
    labels: Any, predictions_idx: Tensor, weights: Any, metrics_collections: Any, updates_collections: Any, name: str
) -> tuple[Tensor, Tensor]:
    with name_scope(name, "average_precision_at_top_k", (predictions_idx, labels, weights)) as scope:
        average_precision = _average_precision_per_row(labels, predictions_idx)
        if weights is not None:
            weights = broadcast_weights(math_ops.cast(weights, dtypes.float64), average_precision)
            average_precision = math_ops.multiply(average_precision, weights)
        with name_scope(None, "max", (average_precision,)) as max_scope:
            # The most the rows can add up to: 1 per row, or its weight.
            max_var = metric_variable([], dtypes.float64, name=max_scope)
            if weights is None:
                batch_max = math_ops.cast(array_ops.size(average_precision, name="batch_max"), dtypes.float64)
            else:
                batch_max = math_ops.reduce_sum(weights, name="batch_max")
            max_update = state_ops.assign_add(max_var, batch_max, name="update")
        with name_scope(None, "total", (average_precision,)) as total_scope:
            total_var = metric_variable([], dtypes.float64, name=total_scope)
            batch_total = math_ops.reduce_sum(average_precision, name="batch_total")
            total_update = state_ops.assign_add(total_var, batch_total, name="update")
        value = publish(metrics_collections, div_no_nan(total_var, max_var, name="mean"))
        return value, publish(updates_collections, div_no_nan(total_update, max_update, name=scope))


def average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Mean average precision of each row's ``k`` highest ``predictions`` against its labels (class ids; ids
    below 0 are padding): per row, the precision at each rank that retrieved a label, summed and divided by
    ``min(k, number of labels)``; the rows' mean, weighted, over every batch.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     labels = [[0, 1], [2, -1]]
        ...     _, update = tf.metrics.average_precision_at_k(labels, [[0.9, 0.1, 0.5], [0.8, 0.1, 0.3]], k=2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with name_scope(name, _at_k_name("average_precision", k), (predictions, labels, weights)) as scope:
        _, predictions_idx = top_k(predictions, k)
        return _streaming_average_precision(
            labels, predictions_idx, weights, metrics_collections, updates_collections, scope
        )


def sparse_average_precision_at_k(
    labels: Any,
    predictions: Any,
    k: int,
    weights: Any = None,
    metrics_collections: Any = None,
    updates_collections: Any = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """TF1's older name of :func:`average_precision_at_k`.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, update = tf.metrics.sparse_average_precision_at_k([[2]], [[0.9, 0.1, 0.5]], k=2)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.local_variables_initializer())
        ...         print(sess.run(update))
        0.5
    """
    return average_precision_at_k(labels, predictions, k, weights, metrics_collections, updates_collections, name)
