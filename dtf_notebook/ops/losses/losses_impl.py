"""The ``tf.losses`` functions, composed exactly as TF's ``losses_impl.py`` composes them.

Every loss casts to float32, computes per-element losses, and hands them to :func:`compute_weighted_loss`,
which multiplies by ``weights`` (a scalar or a tensor broadcastable to the losses), reduces per
``reduction`` (:class:`Reduction`), casts back to the input's dtype and adds the result to ``LOSSES``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     loss = tf.losses.absolute_difference([[1.0, 2.0]], [[2.0, 4.0]], weights=[[1.0, 0.0]])
    ...     with tf.Session() as sess:
    ...         print(sess.run(loss), loss.op.name)
    1.0 absolute_difference/value
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, control_dependencies, get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops, nn_ops
from dtf_notebook.ops.control_flow_ops import cond
from dtf_notebook.ops.identity_ops import stop_gradient
from dtf_notebook.ops.losses.util import add_loss
from dtf_notebook.ops.losses.weights import assert_broadcastable, broadcast_weights, remove_squeezable_dimensions
from dtf_notebook.ops.math.safe_div import div_no_nan

__all__ = [
    "Reduction",
    "compute_weighted_loss",
    "absolute_difference",
    "cosine_distance",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]

_LOSSES = GraphKeys.LOSSES


class Reduction:
    """How :func:`compute_weighted_loss` reduces weighted losses.

    ``NONE``: the weighted losses as they are; ``SUM``: their sum; ``MEAN``: the sum over the sum of the
    weights; ``SUM_OVER_BATCH_SIZE``: the sum over the number of losses; ``SUM_BY_NONZERO_WEIGHTS`` (the
    default, also ``SUM_OVER_NONZERO_WEIGHTS``): the sum over the number of nonzero weights.

    Example:
        >>> Reduction.validate(Reduction.MEAN)
        >>> Reduction.validate("mean")
        Traceback (most recent call last):
            ...
        ValueError: Invalid Reduction Key mean. Key should be one of ('none', 'weighted_sum', 'weighted_mean', \
'weighted_sum_over_batch_size', 'weighted_sum_by_nonzero_weights', 'weighted_sum_by_nonzero_weights').
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        """Every reduction key."""
        return (
            cls.NONE,
            cls.SUM,
            cls.MEAN,
            cls.SUM_OVER_BATCH_SIZE,
            cls.SUM_OVER_NONZERO_WEIGHTS,
            cls.SUM_BY_NONZERO_WEIGHTS,
        )

    @classmethod
    def validate(cls, key: str) -> None:
        """Raises ValueError for an unknown reduction key."""
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


def _safe_mean(losses: Tensor, num_present: Any) -> Tensor:
    total_loss = math_ops.reduce_sum(losses)
    return div_no_nan(total_loss, num_present, name="value")


def _num_present(losses: Tensor, weights: Any, per_batch: bool = False) -> Tensor:
    """The number of losses with a nonzero weight (per batch entry when ``per_batch``)."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present", (losses, weights)) as scope:
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        present = math_ops.where(
            math_ops.equal(weights, 0.0), array_ops.zeros_like(weights), array_ops.ones_like(weights)
        )
        present = broadcast_weights(present, losses)
        if per_batch:
            return math_ops.reduce_sum(
                present, axis=math_ops.range(1, array_ops.rank(present)), keepdims=True, name=scope
            )
        return math_ops.reduce_sum(present, name=scope)


def _num_elements(losses: Tensor) -> Tensor:
    with name_scope(None, "num_elements", [losses]) as scope:
        return math_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def compute_weighted_loss(
    losses: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """``losses * weights`` reduced per ``reduction``, added to ``loss_collection``.

    Args:
        losses: Per-element losses.
        weights: A scalar, or a tensor of ``losses``' rank whose dimensions are 1 or ``losses``'.
        scope: Name scope.
        loss_collection: Collection the result goes to (None: none).
        reduction: A :class:`Reduction` key.

    Raises:
        ValueError: an unknown reduction, or weights that cannot broadcast to the losses.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.compute_weighted_loss([1.0, 3.0], [1.0, 0.5],
        ...                                                    reduction=tf.losses.Reduction.MEAN)))
        1.6666666
    """
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", (losses, weights)):
        get_default_graph()._last_loss_reduction = reduction
        with control_dependencies((assert_broadcastable(weights, losses),)):
            losses = convert_to_tensor(losses)
            input_dtype = losses.dtype
            losses = math_ops.cast(losses, dtype=dtypes.float32)
            weights = math_ops.cast(weights, dtype=dtypes.float32)
            weighted_losses = math_ops.multiply(losses, weights)
            if reduction == Reduction.NONE:
                loss = weighted_losses
            else:
                loss = math_ops.reduce_sum(weighted_losses)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(loss, math_ops.reduce_sum(array_ops.ones_like(losses) * weights))
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = math_ops.cast(loss, input_dtype)
            add_loss(loss, loss_collection)
            return loss


def _check_args(first: str, a: Any, second: str, b: Any) -> None:
    if a is None:
        raise ValueError(f"Argument `{first}` must not be None.")
    if b is None:
        raise ValueError(f"Argument `{second}` must not be None.")


def _as_float_pair(predictions: Any, labels: Any) -> tuple[Tensor, Tensor]:
    predictions = math_ops.cast(predictions, dtype=dtypes.float32)
    labels = math_ops.cast(labels, dtype=dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


def _pointwise_loss(
    default_name: str,
    labels: Any,
    predictions: Any,
    weights: Any,
    scope: str | None,
    loss_collection: str | None,
    reduction: str,
    losses_of: Callable[[Tensor, Tensor], Tensor],
    second: str = "predictions",
) -> Tensor:
    """The weighted loss of ``losses_of(predictions, labels)`` (both cast to float32, shapes compatible) in the
    name scope ``scope`` or ``default_name``; ``second`` names the predictions argument in errors."""
    _check_args("labels", labels, second, predictions)
    with name_scope(scope, default_name, (predictions, labels, weights)) as scope:
        predictions, labels = _as_float_pair(predictions, labels)
        losses = losses_of(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def absolute_difference(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted ``|predictions - labels|``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.absolute_difference([1.0, 2.0], [2.0, 4.0])))
        1.5
    """
    args = (labels, predictions, weights, scope, loss_collection, reduction)
    return _pointwise_loss("absolute_difference", *args, lambda p, lab: math_ops.abs(math_ops.subtract(p, lab)))


def cosine_distance(
    labels: Any,
    predictions: Any,
    axis: int | None = None,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim: int | None = None,
) -> Tensor:
    """Weighted ``1 - sum(predictions * labels, axis)`` of unit-normalized inputs (``dim`` is TF1's old name).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.cosine_distance([[0.0, 1.0]], [[0.6, 0.8]], axis=1)))
        0.19999999
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("You must specify argument `axis`.")

    def losses_of(predictions: Tensor, labels: Tensor) -> Tensor:
        radial_diffs = math_ops.multiply(predictions, labels)
        return 1 - math_ops.reduce_sum(radial_diffs, axis=(axis,), keepdims=True)

    args = (labels, predictions, weights, scope, loss_collection, reduction)
    return _pointwise_loss("cosine_distance_loss", *args, losses_of)


def hinge_loss(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted ``max(0, 1 - (2 * labels - 1) * logits)`` for 0/1 ``labels``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.hinge_loss([1.0, 0.0], [0.5, -2.0])))
        0.25
    """

    def losses_of(logits: Tensor, labels: Tensor) -> Tensor:
        all_ones = array_ops.ones_like(labels)
        labels = math_ops.subtract(2 * labels, all_ones)
        return nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(labels, logits)))

    args = (labels, logits, weights, scope, loss_collection, reduction)
    return _pointwise_loss("hinge_loss", *args, losses_of, second="logits")


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    delta: float = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted Huber loss: ``0.5 * e**2`` for ``|e| <= delta``, ``delta * (|e| - 0.5 * delta)`` beyond.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.huber_loss([0.0, 0.0], [0.5, 3.0])))
        1.3125
    """

    def losses_of(predictions: Tensor, labels: Tensor) -> Tensor:
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        # The linear part is abs_error - quadratic (not abs_error - delta), so its gradient is 0 inside delta.
        linear = math_ops.subtract(abs_error, quadratic)
        return math_ops.add(
            math_ops.multiply(convert_to_tensor(0.5, dtype=quadratic.dtype), math_ops.multiply(quadratic, quadratic)),
            math_ops.multiply(delta, linear),
        )

    args = (labels, predictions, weights, scope, loss_collection, reduction)
    return _pointwise_loss("huber_loss", *args, losses_of)


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    epsilon: float = 1e-7,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted ``-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.losses.log_loss([1.0], [0.5]))), 4))
        0.6931
    """

    def losses_of(predictions: Tensor, labels: Tensor) -> Tensor:
        return -math_ops.multiply(labels, math_ops.log(predictions + epsilon)) - math_ops.multiply(
            1 - labels, math_ops.log(1 - predictions + epsilon)
        )

    args = (labels, predictions, weights, scope, loss_collection, reduction)
    return _pointwise_loss("log_loss", *args, losses_of)


def mean_pairwise_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
) -> Tensor:
    """Weighted mean of ``((p_i - p_j) - (l_i - l_j))**2`` over the pairs within each batch entry.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.mean_pairwise_squared_error([[0.0, 1.0, 2.0]], [[0.0, 2.0, 2.0]])))
        0.6666666
    """
    _check_args("labels", labels, "predictions", predictions)
    with name_scope(scope, "mean_pairwise_squared_error", (predictions, labels, weights)):
        weights = math_ops.cast(weights, dtype=dtypes.float32)
        labels = math_ops.cast(labels, dtype=dtypes.float32)
        with control_dependencies((assert_broadcastable(weights, labels),)):
            predictions = math_ops.cast(predictions, dtype=dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = math_ops.subtract(predictions, labels)
            axis = math_ops.range(1, array_ops.rank(diffs))
            sum_squares_diff_per_batch = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
            num_present_per_batch = _num_present(diffs, weights, per_batch=True)
            term1 = 2.0 * div_no_nan(
                sum_squares_diff_per_batch, math_ops.maximum(num_present_per_batch - 1, 0), name="value"
            )
            sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = 2.0 * div_no_nan(
                math_ops.square(sum_diff),
                math_ops.maximum(math_ops.multiply(num_present_per_batch, num_present_per_batch - 1), 0),
                name="value",
            )
            weighted_losses = math_ops.multiply(term1 - term2, weights)
            loss = math_ops.reduce_sum(weighted_losses)
            mean_loss = math_ops.where(
                math_ops.reduce_sum(num_present_per_batch) > 0, loss, array_ops.zeros_like(loss), name="value"
            )
            add_loss(mean_loss, loss_collection)
            return mean_loss


def mean_squared_error(
    labels: Any,
    predictions: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted ``(predictions - labels)**2``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.mean_squared_error([0.0, 0.0], [1.0, 3.0], reduction="weighted_sum")))
        10.0
    """
    args = (labels, predictions, weights, scope, loss_collection, reduction)
    return _pointwise_loss("mean_squared_error", *args, math_ops.squared_difference)


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted sigmoid cross-entropy; ``label_smoothing`` pulls the labels towards 0.5.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.losses.sigmoid_cross_entropy([[1.0, 0.0]], [[0.0, 0.0]]))), 4))
        0.6931
    """
    _check_args("multi_class_labels", multi_class_labels, "logits", logits)
    with name_scope(scope, "sigmoid_cross_entropy_loss", (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        multi_class_labels = math_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(multi_class_labels.shape)
        if label_smoothing > 0:
            multi_class_labels = multi_class_labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=multi_class_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = 1.0,
    label_smoothing: float = 0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted softmax cross-entropy of one-hot labels; ``label_smoothing`` mixes them with uniform ones.

    Weights of shape ``[batch]`` weigh each example. No gradient flows into the labels.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.losses.softmax_cross_entropy([[0.0, 1.0]], [[0.0, 0.0]]))), 4))
        0.6931
    """
    _check_args("onehot_labels", onehot_labels, "logits", logits)
    with name_scope(scope, "softmax_cross_entropy_loss", (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = math_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(onehot_labels.shape)
        if label_smoothing > 0:
            num_classes = math_ops.cast(array_ops.shape(onehot_labels)[-1], logits.dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            onehot_labels = onehot_labels * smooth_positives + smooth_negatives
        onehot_labels = stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _remove_squeezable_dimensions(
    labels: Any, predictions: Any, weights: Any = None, expected_rank_diff: int = 0
) -> tuple[Any, Any, Any]:
    labels, predictions = remove_squeezable_dimensions(labels, predictions, expected_rank_diff=expected_rank_diff)
    if weights is not None:
        weights = convert_to_tensor(weights)
        labels_rank = labels.shape.ndims
        weights_shape = weights.shape
        weights_rank = weights_shape.ndims
        if labels_rank is not None and weights_rank is not None:
            if weights_rank - labels_rank == 1:
                weights = array_ops.squeeze(weights, [-1])
            return labels, predictions, weights
        rank_diff = array_ops.rank(weights) - array_ops.rank(labels)
        if weights_rank is None or (weights_rank > 0 and weights_shape[-1].is_compatible_with(1)):
            w = weights
            weights = cond(math_ops.equal(1, rank_diff), lambda: array_ops.squeeze(w, [-1]), lambda: w)
    return labels, predictions, weights


def sparse_softmax_cross_entropy(
    labels: Any,
    logits: Any,
    weights: Any = 1.0,
    scope: str | None = None,
    loss_collection: str | None = _LOSSES,
    reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Weighted softmax cross-entropy of integer class ``labels`` (``[batch]``, or ``[batch, 1]``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(round(float(sess.run(tf.losses.sparse_softmax_cross_entropy([1], [[0.0, 0.0]]))), 4))
        0.6931
    """
    _check_args("labels", labels, "logits", logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", (logits, labels, weights)) as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights, expected_rank_diff=1)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)
