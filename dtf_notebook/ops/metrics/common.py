"""What every ``tf.metrics`` module shares: the metric variables, the collections a metric publishes to, and the
squeezing of predictions, labels and weights to matching ranks.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     total = metric_variable([], tf.float32, name="total")
    ...     value = publish(["values"], tf.identity(total))
    ...     tf.get_collection("values") == [value], total in tf.local_variables()
    (True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collections
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.losses.weights import remove_squeezable_dimensions
from dtf_notebook.ops.op_helpers import constant_value
from dtf_notebook.ops.variables import Variable


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


def publish(collections: Any, value: Any) -> Any:
    """Adds ``value`` to ``collections`` (when given) and returns it.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     t = publish(["mine"], tf.constant(1.0))
        ...     tf.get_collection("mine") == [t], publish(None, t) is t
        (True, True)
    """
    if collections:
        add_to_collections(collections, value)
    return value


def publish_pair(
    compute: Callable[[Any, str], Tensor],
    totals: Any,
    updates: Any,
    metrics_collections: Any,
    updates_collections: Any,
) -> tuple[Tensor, Tensor]:
    """A metric's ``(value, update_op)``: ``compute`` over the running totals (an op named ``value``) and over the
    results of their update ops (``update_op``), each published to its collections.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     v, u = publish_pair(lambda t, name: tf.identity(t, name=name), tf.constant(1), tf.constant(2), [], [])
        ...     v.name, u.name
        ('value:0', 'update_op:0')
    """
    value = publish(metrics_collections, compute(totals, "value"))
    update = publish(updates_collections, compute(updates, "update_op"))
    return value, update


def remove_squeezable(predictions: Any, labels: Any, weights: Any) -> tuple[Tensor, Any, Any]:
    """TF's ``_remove_squeezable_dimensions`` of the metrics: labels and predictions squeezed to the same rank,
    weights squeezed or expanded by one dimension to the predictions' rank.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     p, l, w = remove_squeezable(tf.zeros([3, 1]), tf.zeros([3]), tf.ones([3]))
        ...     p.shape.as_list(), l.shape.as_list(), w.shape.as_list()
        ([3], [3], [3])
    """
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


def static_int(value: Any, what: str) -> int:
    """``value`` as a Python int, which it must be while the graph is built (a constant tensor is read).

    Example:
        >>> static_int(4, "num_classes")
        4
    """
    if isinstance(value, Tensor):
        known = constant_value(value)
        if known is None:
            raise ValueError(f"`{what}` must be known while building the graph, got {value}")
        return int(known)
    return int(value)


def flat(t: Tensor) -> Tensor:
    """``t`` reshaped to one dimension unless it already has at most one.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     flat(tf.zeros([2, 3])).shape.as_list()
        [6]
    """
    return array_ops.reshape(t, [-1]) if t.shape.ndims is None or t.shape.ndims > 1 else t
