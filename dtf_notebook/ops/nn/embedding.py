"""``tf.nn.embedding_lookup``: rows of one embedding table, or of a table split row-wise into partitions.

The lookup is a ``Gather`` placed with each table, so the gradient of a table is an ``IndexedSlices``
and training updates only the rows that were looked up.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     table = tf.Variable(tf.zeros([10, 4]))
    ...     rows = tf.nn.embedding_lookup(table, [[1, 2, 3]])
    ...     rows.shape.as_list(), type(tf.gradients(rows, table)[0]).__name__
    ([1, 3, 4], 'IndexedSlices')
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.nn.common import INDEX
from dtf_notebook.ops.op_helpers import check_dtype


def _clip_rows(values: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Rescales each looked-up embedding whose L2 norm exceeds ``max_norm`` (TF's ``clip_by_norm``, safe at 0)."""
    if max_norm is None:
        return values
    ids_rank, values_rank = ids.shape.ndims, values.shape.ndims
    if ids_rank is None or values_rank is None:
        axes: Any = math_ops.range(array_ops.rank(ids), array_ops.rank(values))
    else:
        axes = list(range(ids_rank, values_rank))
    l2sum = math_ops.reduce_sum(math_ops.multiply(values, values), axes, keepdims=True)
    positive = math_ops.greater(l2sum, 0.0)
    # sqrt is taken of 1 where the sum is 0, so its gradient stays finite (TF's trick).
    l2sum_safe = math_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
    l2norm = math_ops.where(positive, math_ops.sqrt(l2sum_safe), l2sum)
    clip = convert_to_tensor(max_norm, dtype=values.dtype, name="max_norm")
    return math_ops.divide(math_ops.multiply(values, clip), math_ops.maximum(l2norm, clip))


def _partitioned_rows(tables: list[Any], ids: Tensor, partition_strategy: str) -> Tensor:
    """Looks ``ids`` up in a table split row-wise into ``tables`` (TF's "mod" or "div" assignment of ids).

    Each partition is gathered on its own device at the row each id would have there (clipped into range),
    and the partition that owns each id is selected, so only ``len(ids)`` rows leave every partition and
    each partition's gradient stays an ``IndexedSlices``.
    """
    n = len(tables)
    sizes, ranks = [], []
    for t in tables:
        shape = t.get_shape()
        sizes.append(shape[0].value if shape.ndims else None)
        ranks.append(shape.ndims)
    if any(size is None for size in sizes) or len(set(ranks)) != 1:
        raise ValueError(
            "A partitioned embedding_lookup needs partitions of one known rank with known numbers of rows, got "
            f"shapes {[str(t.get_shape()) for t in tables]}"
        )
    if partition_strategy == "mod":
        part, row = math_ops.floormod(ids, n), math_ops.floordiv(ids, n)
    else:
        per, extras = divmod(sum(sizes), n)
        if per == 0:
            raise ValueError(f"The 'div' strategy needs at least {n} rows in all, got {sum(sizes)}")
        # The first `extras` partitions hold per + 1 consecutive ids, the others per.
        shifted = math_ops.subtract(ids, extras)
        part = math_ops.maximum(math_ops.floordiv(ids, per + 1), math_ops.floordiv(shifted, per))
        row = math_ops.where(
            math_ops.less(part, extras), math_ops.floormod(ids, per + 1), math_ops.floormod(shifted, per)
        )
    result = None
    for k, table in enumerate(tables):
        with colocate_with(table):
            rows = array_ops.gather(table, math_ops.clip_by_value(row, 0, sizes[k] - 1))
        if result is None:
            result = rows
            continue
        owned = math_ops.equal(part, k)
        for _ in range(ranks[0] - 1):
            owned = array_ops.expand_dims(owned, -1)
        result = math_ops.where(array_ops.broadcast_to(owned, array_ops.shape(rows)), rows, result)
    return result


def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Tensor:
    """Rows of the embedding table ``params`` for each id in ``ids`` (a gather placed with ``params``).

    Args:
        params: One embedding table (a Variable or tensor), a list holding one, or a list of several
            tables that together hold the rows (a partitioned table, e.g. one per parameter server).
        ids: int32/int64 tensor of row indices, any shape.
        partition_strategy: How ids map to partitions: ``"mod"`` (id ``i`` is row ``i // n`` of
            partition ``i % n``) or ``"div"`` (consecutive ids per partition). Unused with one table.
        name: Name scope.
        validate_indices: Accepted for compatibility (ids are checked when a single table is gathered).
        max_norm: If set, rows whose L2 norm is larger are scaled down to this norm.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``. Its gradient for each table is an
        ``IndexedSlices``, so training updates only the looked-up rows.

    Raises:
        ValueError: no params, partitions of unknown sizes, or an unknown partition strategy.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     table = tf.constant([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
        ...     rows = tf.nn.embedding_lookup(table, [[2, 0]])
        ...     with tf.Session() as sess:
        ...         print(sess.run(rows))
        [[[2. 2.]
          [0. 0.]]]
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    tables = list(params) if isinstance(params, list | tuple) else [params]
    if not tables or any(t is None for t in tables):
        raise ValueError("Need at least one param")
    tables = [
        t if isinstance(t, Tensor) or hasattr(t, "_as_graph_element") else convert_to_tensor(t, name="params")
        for t in tables
    ]
    with name_scope(name, "embedding_lookup", tables + [ids]) as scope:
        ids_t = convert_to_tensor(ids, name="ids")
        check_dtype(ids_t, INDEX, "embedding_lookup", "ids")
        if len(tables) > 1:
            return identity(
                _clip_rows(_partitioned_rows(tables, ids_t, partition_strategy), ids_t, max_norm), name=scope
            )
        with colocate_with(tables[0]):
            result = _clip_rows(array_ops.gather(tables[0], ids_t, name=scope), ids_t, max_norm)
        # The result itself is not pinned to the table's device (as in TF).
        return identity(result)
