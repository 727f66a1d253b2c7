"""Weights against values, as TF's ``weights_broadcast_ops`` and ``confusion_matrix`` check and shape them.

``assert_broadcastable`` passes a scalar weight, or weights of the values' rank whose every dimension is 1 or
the values' own; statically known shapes are checked while building (a ``NoOp`` or a ``ValueError``, as in
TF), others at run time by an ``Assert``. ``remove_squeezable_dimensions`` drops a trailing size-1 axis so
that labels and predictions differ in rank by the expected amount.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     ok = assert_broadcastable(tf.ones([3, 1]), tf.zeros([3, 4]))
    ...     labels, predictions = remove_squeezable_dimensions(tf.zeros([3, 1]), tf.zeros([3]))
    >>> ok.name, labels.shape.as_list()
    ('assert_broadcastable/static_dims_check_success', [3])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.control_flow_ops import cond
from dtf_notebook.ops.identity_ops import no_op

_ERROR_PREFIX = "weights can not be broadcast to values."


def assert_broadcastable(weights: Any, values: Any) -> Operation:
    """An op that checks ``weights`` can multiply ``values`` (scalar, or each dimension 1 or the values').

    Raises:
        ValueError: the static shapes already show they cannot.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     assert_broadcastable(2.0, tf.zeros([3])).name
        'assert_broadcastable/static_scalar_check_success'
    """
    with name_scope(None, "assert_broadcastable", (weights, values)) as scope:
        with name_scope(None, "weights", (weights,)) as weights_scope:
            weights = convert_to_tensor(weights, name=weights_scope)
            weights_shape = array_ops.shape(weights, name="shape")
            weights_rank = array_ops.rank(weights, name="rank")
        with name_scope(None, "values", (values,)) as values_scope:
            values = convert_to_tensor(values, name=values_scope)
            values_shape = array_ops.shape(values, name="shape")
            values_rank = array_ops.rank(values, name="rank")
        w_rank, v_rank = weights.shape.ndims, values.shape.ndims
        if w_rank is not None and v_rank is not None:
            if w_rank == 0:
                return no_op(name="static_scalar_check_success")
            if w_rank != v_rank:
                raise ValueError(
                    f"{_ERROR_PREFIX} values.rank={v_rank}. weights.rank={w_rank}. values.shape={values.shape}. "
                    f"weights.shape={weights.shape}. Received weights={weights}, values={values}"
                )
            if weights.shape.is_fully_defined() and values.shape.is_fully_defined():
                w_dims, v_dims = weights.shape.as_list(), values.shape.as_list()
                for i in range(v_rank):
                    if w_dims[i] not in (1, v_dims[i]):
                        raise ValueError(
                            f"{_ERROR_PREFIX} Mismatch at dim {i}. values.shape={v_dims}, weights.shape={w_dims}. "
                            f"Received weights={weights}, values={values}"
                        )
                return no_op(name="static_dims_check_success")
        is_scalar = math_ops.equal(0, weights_rank, name="is_scalar")

        def valid_nonscalar() -> Tensor:
            def same_rank_dims() -> Tensor:
                ones = math_ops.equal(weights_shape, 1)
                same = math_ops.equal(weights_shape, values_shape)
                return math_ops.reduce_all(math_ops.logical_or(ones, same))

            same_rank = math_ops.equal(weights_rank, values_rank)
            return cond(same_rank, same_rank_dims, lambda: math_ops.equal(0, 1), name="has_valid_nonscalar_shape")

        valid = cond(is_scalar, lambda: is_scalar, valid_nonscalar, name="is_valid_shape")
        data = [
            _ERROR_PREFIX,
            "weights.shape=",
            weights.name,
            weights_shape,
            "values.shape=",
            values.name,
            values_shape,
            "is_scalar=",
            is_scalar,
        ]
        return Assert(valid, data, name=scope)


def broadcast_weights(weights: Any, values: Any) -> Tensor:
    """``weights`` broadcast to ``values``' shape (checked by :func:`assert_broadcastable` unless equal statically).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     broadcast_weights(tf.ones([2, 1]), tf.zeros([2, 3])).shape.as_list()
        [2, 3]
    """
    with name_scope(None, "broadcast_weights", (weights, values)) as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        if (
            weights.shape.is_fully_defined()
            and values.shape.is_fully_defined()
            and weights.shape.is_compatible_with(values.shape)
        ):
            return weights
        with control_dependencies((assert_broadcastable(weights, values),)):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


def remove_squeezable_dimensions(
    labels: Any, predictions: Any, expected_rank_diff: int = 0, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """Squeezes a trailing size-1 axis of ``labels`` or ``predictions`` to reach ``rank(predictions) - rank(labels)
    == expected_rank_diff``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _, p = remove_squeezable_dimensions(tf.zeros([4]), tf.zeros([4, 1]))
        ...     p.shape.as_list()
        [4]
    """
    with name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        p_rank, l_rank = p_shape.ndims, l_shape.ndims
        if l_rank is not None and p_rank is not None:
            diff = p_rank - l_rank
            if diff == expected_rank_diff + 1 and p_shape[-1].is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif diff == expected_rank_diff - 1 and l_shape[-1].is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
            return labels, predictions
        rank_diff = array_ops.rank(predictions) - array_ops.rank(labels)
        if p_rank is None or p_shape[-1].is_compatible_with(1):
            p = predictions
            predictions = cond(
                math_ops.equal(expected_rank_diff + 1, rank_diff), lambda: array_ops.squeeze(p, [-1]), lambda: p
            )
        if l_rank is None or l_shape[-1].is_compatible_with(1):
            lab = labels
            labels = cond(
                math_ops.equal(expected_rank_diff - 1, rank_diff), lambda: array_ops.squeeze(lab, [-1]), lambda: lab
            )
        return labels, predictions
