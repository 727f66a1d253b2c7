"""``tf.nn.embedding_lookup_sparse``: one combined embedding per row of a batch of sparse ids.

Row ``r`` of the result combines the embeddings of the ids in row ``r`` of ``sp_ids`` (a ``SparseTensor``
of shape ``[batch, max_ids]``), optionally weighted by ``sp_weights``: their weighted sum ("sum"), that
sum divided by the sum of the weights ("mean") or by the square root of the sum of their squares
("sqrtn"); a row without ids gives zeros. As in TF, each distinct id is looked up once
(``unique``), through :func:`~dtf_notebook.ops.nn.embedding.embedding_lookup`, so a sharded table
gathers only its own rows on its own device and its gradient stays sparse per shard.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     table = tf.constant([[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]])
    ...     ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([0, 2, 1], tf.int64), [3, 2])
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.nn.embedding_lookup_sparse(table, ids, None, combiner="sum")).tolist())
    [[5.0, 5.0], [0.0, 0.0], [2.0, 2.0]]
"""

from __future__ import annotations

import logging
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.nn.embedding import embedding_lookup
from dtf_notebook.ops.partitioned_variables import PartitionedVariable

__all__ = ["embedding_lookup_sparse"]

_log = logging.getLogger(__name__)
_COMBINERS = ("mean", "sqrtn", "sum")


def _divide_no_nan(x: Tensor, y: Tensor) -> Tensor:
    """``x / y``, 0 where ``y`` is 0 (TF's ``div_no_nan``), with a finite gradient there too."""
    zero = math_ops.equal(y, 0.0)
    safe = math_ops.where(zero, array_ops.ones_like(y), y)
    quotient = math_ops.divide(x, safe)
    return math_ops.where(
        array_ops.broadcast_to(zero, array_ops.shape(quotient)), array_ops.zeros_like(quotient), quotient
    )


def _broadcastable(weights: Tensor, rank: int | None, rows: Tensor) -> Tensor:
    """``weights`` ``[N]`` reshaped to ``[N, 1, ...]`` to scale rows of rank ``rank``."""
    if rank is not None:
        shaped = array_ops.reshape(weights, [-1] + [1] * (rank - 1))
        shaped.set_shape(weights.shape.concatenate([1] * (rank - 1)))
        return shaped
    ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(rows) - 1, 0), dtype=dtypes.int32)
    return array_ops.reshape(weights, array_ops.concat([array_ops.shape(weights), ones], 0))


def embedding_lookup_sparse(
    params: Any,
    sp_ids: SparseTensor,
    sp_weights: SparseTensor | None,
    partition_strategy: str = "mod",
    name: str | None = None,
    combiner: str | None = None,
    max_norm: Any = None,
) -> Tensor:
    """Combined embeddings for sparse ids and weights (TF1's ``tf.nn.embedding_lookup_sparse``).

    Args:
        params: One embedding table, a list of row-wise shards, or a ``PartitionedVariable`` (as for
            ``embedding_lookup``).
        sp_ids: ``SparseTensor`` of int32/int64 ids, ``[batch, max_ids]``; its indices in row-major order
            (``indices[:, 0]`` picks the output row).
        sp_weights: ``SparseTensor`` of float weights with the same indices as ``sp_ids``, or None (all 1).
        partition_strategy: ``"mod"`` or ``"div"``, as for ``embedding_lookup``.
        name: Name of the result (and its scope).
        combiner: ``"mean"`` (the default, with a warning as in TF), ``"sqrtn"`` or ``"sum"``.
        max_norm: If set, embeddings with a larger L2 norm are scaled down to it before combining.

    Returns:
        ``[max(row) + 1] + params.shape[1:]``: one combined embedding per row up to the last row holding an
        id (rows in between without ids are zeros).

    Raises:
        TypeError: ``sp_ids`` or ``sp_weights`` is not a SparseTensor.
        ValueError: an unknown combiner, or weights whose shape does not match the ids'.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     table = tf.constant([[1.0], [2.0], [4.0]])
        ...     ids = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([0, 2], tf.int64), [1, 2])
        ...     weights = tf.SparseTensor([[0, 0], [0, 1]], [3.0, 1.0], [1, 2])
        ...     mean = tf.nn.embedding_lookup_sparse(table, ids, weights, combiner="mean")
        ...     with tf.Session() as sess:
        ...         print(sess.run(mean).tolist())  # (3 * 1 + 1 * 4) / (3 + 1)
        [[1.75]]
    """
    if combiner is None:
        _log.warning('The default value of combiner will change from "mean" to "sqrtn" after 2016/11/01.')
        combiner = "mean"
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    if isinstance(params, PartitionedVariable):
        params = list(params)
    if not isinstance(params, list):
        params = [params]
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids).__name__}")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor, got {type(sp_weights).__name__}")
        sp_ids.values.shape.assert_is_compatible_with(sp_weights.values.shape)
        sp_ids.indices.shape.assert_is_compatible_with(sp_weights.indices.shape)
        sp_ids.dense_shape.shape.assert_is_compatible_with(sp_weights.dense_shape.shape)

    with name_scope(name, "embedding_lookup_sparse", params + [sp_ids]) as scope:
        segment_ids = math_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = array_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm)
        original_dtype = embeddings.dtype
        if original_dtype in (dtypes.float16, dtypes.bfloat16):
            # Low-precision tables are combined in float32 (as TF does), then cast back.
            embeddings = math_ops.cast(embeddings, dtypes.float32)
        rows = array_ops.gather(embeddings, idx)  # one embedding per (row, id) entry
        if sp_weights is None:
            weights = array_ops.ones_like(math_ops.cast(segment_ids, rows.dtype))
        else:
            weights = math_ops.cast(sp_weights.values, rows.dtype)
        weights = _broadcastable(weights, rows.shape.ndims, rows)
        if sp_weights is not None:
            rows = math_ops.multiply(rows, weights)

        # As TF's segment_sum: rows up to the largest row id holding an id (none when there are no ids).
        num_rows = math_ops.reduce_max(array_ops.concat([segment_ids + 1, [0]], 0))
        combined = math_ops.unsorted_segment_sum(rows, segment_ids, num_rows)
        if combiner == "mean":
            combined = _divide_no_nan(combined, math_ops.unsorted_segment_sum(weights, segment_ids, num_rows))
        elif combiner == "sqrtn":
            squares = math_ops.unsorted_segment_sum(math_ops.multiply(weights, weights), segment_ids, num_rows)
            combined = _divide_no_nan(combined, math_ops.sqrt(squares))
        if combined.dtype != original_dtype:
            combined = math_ops.cast(combined, original_dtype)
        result = identity(combined, name=scope)
        result.set_shape(TensorShape([None]).concatenate(embeddings.shape[1:]))
        return result
