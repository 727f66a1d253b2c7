"""``tf.nn.safe_embedding_lookup_sparse``: :func:`~dtf_notebook.ops.nn.embedding_sparse.embedding_lookup_sparse`
made safe for real input, as TF builds it: ids of any rank (the last dimension holds each row's ids), invalid ids
(negative) and, unless summing, non-positive weights pruned, and rows without ids filled with ``default_id``'s
embedding (or zeros when it is None).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     table = tf.constant([[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]])
    ...     ids = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([0, -1, 2], tf.int64), [3, 2])
    ...     print(sess.run(safe_embedding_lookup_sparse(table, ids)).tolist())
    [[1.0, 1.0], [0.0, 0.0], [4.0, 4.0]]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, unknown_shape
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.nn.embedding_sparse import embedding_lookup_sparse
from dtf_notebook.ops.partitioned_variables import PartitionedVariable
from dtf_notebook.ops.sparse.elementwise import sparse_retain
from dtf_notebook.ops.sparse.structure import sparse_fill_empty_rows, sparse_reshape

__all__ = ["safe_embedding_lookup_sparse"]


def _prune_invalid_ids(ids: SparseTensor, weights: SparseTensor | None) -> tuple[Any, Any]:
    valid = math_ops.greater_equal(ids.values, 0)
    if weights is not None:
        valid = math_ops.logical_and(valid, array_ops.ones_like(weights.values, dtype=dtypes.bool))
    ids = sparse_retain(ids, valid)
    return ids, (sparse_retain(weights, valid) if weights is not None else None)


def _prune_invalid_weights(ids: SparseTensor, weights: SparseTensor | None) -> tuple[Any, Any]:
    if weights is None:
        return ids, None
    valid = math_ops.greater(weights.values, 0)
    return sparse_retain(ids, valid), sparse_retain(weights, valid)


def safe_embedding_lookup_sparse(
    embedding_weights: Any,
    sparse_ids: SparseTensor,
    sparse_weights: SparseTensor | None = None,
    combiner: str = "mean",
    default_id: int | None = None,
    name: str | None = None,
    partition_strategy: str = "div",
    max_norm: Any = None,
) -> Tensor:
    """Combined embeddings of sparse ids of shape ``[d_0, ..., d_n, max_ids]`` (TF1's
    ``tf.nn.safe_embedding_lookup_sparse``): a ``[d_0, ..., d_n] + embedding dims`` tensor.

    Args:
        embedding_weights: A table, a list of row-wise shards, or a ``PartitionedVariable``.
        sparse_ids: int64 (or int32) ids; negative ids are dropped.
        sparse_weights: Weights with the same indices, or None (all 1); with a combiner other than "sum", entries
            whose weight is not positive are dropped.
        combiner: "mean" (default), "sqrtn" or "sum".
        default_id: The id whose embedding a row without ids gets (None: zeros).
        name: The name scope (default "embedding_lookup").
        partition_strategy: "div" (TF1's default here) or "mod".
        max_norm: If set, embeddings are clipped to this L2 norm before combining.

    Raises:
        ValueError: no embedding weights.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     table = tf.constant([[1.0], [3.0]])
        ...     ids = tf.SparseTensor([[0, 0, 0], [0, 0, 1]], tf.constant([0, 1], tf.int64), [1, 2, 2])
        ...     print(sess.run(tf.nn.safe_embedding_lookup_sparse(table, ids, default_id=1)).tolist())
        [[[2.0], [3.0]]]
    """
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if isinstance(embedding_weights, PartitionedVariable):
        embedding_weights = list(embedding_weights)
    if not isinstance(embedding_weights, list):
        embedding_weights = [embedding_weights]
    if not embedding_weights:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    tables = [convert_to_tensor(w, dtype=dtype) for w in embedding_weights]
    with name_scope(name, "embedding_lookup", [*tables, sparse_ids, sparse_weights]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape[0].value if original_shape.shape.ndims == 1 else None
        rank: Any = array_ops.size(original_shape) if rank_dim is None else rank_dim
        leading = math_ops.reduce_prod(array_ops.slice(original_shape, [0], array_ops.reshape(rank - 1, [1])))
        ids = sparse_reshape(sparse_ids, array_ops.stack([leading, array_ops.gather(original_shape, rank - 1)]))
        weights = None
        if sparse_weights is not None:
            weights = SparseTensor(ids.indices, sparse_weights.values, ids.dense_shape)
        ids, weights = _prune_invalid_ids(ids, weights)
        if combiner != "sum":
            ids, weights = _prune_invalid_weights(ids, weights)
        ids, is_row_empty = sparse_fill_empty_rows(ids, default_id or 0)
        if weights is not None:
            weights, _ = sparse_fill_empty_rows(weights, 1.0)
        result = embedding_lookup_sparse(
            tables,
            ids,
            weights,
            combiner=combiner,
            partition_strategy=partition_strategy,
            name=None if default_id is None else scope,
            max_norm=max_norm,
        )
        if default_id is None:
            # Rows that had no ids are zeros, not the embedding of the filled-in id 0.
            empty = array_ops.tile(
                array_ops.reshape(is_row_empty, [-1, 1]), array_ops.stack([1, array_ops.shape(result)[1]])
            )
            result = where(empty, array_ops.zeros_like(result), result, name=scope)
        final = array_ops.reshape(
            result,
            array_ops.concat(
                [
                    array_ops.slice(math_ops.cast(original_shape, dtypes.int32), [0], array_ops.reshape(rank - 1, [1])),
                    array_ops.slice(array_ops.shape(result), [1], [-1]),
                ],
                0,
            ),
        )
        leading_rank = None if rank_dim is None else (Dimension(rank_dim) - 1).value
        final.set_shape(unknown_shape(leading_rank).concatenate(result.shape[1:]))
        known = sparse_ids.shape  # static dense shape: TF's shape inference folds the reshape's constant shape
        if known.ndims is not None:
            final.set_shape(known[:-1].concatenate(result.shape[1:]))
        return final
