"""``tf.nn.embedding_lookup``: rows of one embedding table, or of a table split row-wise into shards.

One table: a ``Gather`` placed with the table. Several shards (a list of tables or a
``PartitionedVariable``, e.g. one shard per parameter server): TF's scheme, where each id is assigned to
the shard owning it ("mod" or "div"), ``dynamic_partition`` splits the ids by shard, each shard gathers
only its own ids on its own device, and ``dynamic_stitch`` puts the rows back in id order. So only the
looked-up rows leave a shard, and each shard's gradient is an ``IndexedSlices`` of its own rows: training
a table far larger than one machine never moves or builds the whole table.

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

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_n_to_tensor, convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.partition_stitch import parallel_dynamic_stitch
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.nn.common import INDEX
from dtf_notebook.ops.op_helpers import check_dtype
from dtf_notebook.ops.partitioned_variables import PartitionedVariable


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


def _total_rows(tables: list[Tensor], dtype: dtypes.DType) -> Any:
    """The number of rows of all shards: a Python int when known while building, else a tensor."""
    sizes = [t.shape[0].value if t.shape.ndims else None for t in tables]
    if all(s is not None for s in sizes):
        return sum(sizes)
    dims = []
    for t, s in zip(tables, sizes):
        if s is not None:
            dims.append(s)
            continue
        # Read each shard's size where the shard lives, so only the number crosses the network.
        with colocate_with(t):
            dims.append(array_ops.shape(t)[0])
    return math_ops.reduce_sum(math_ops.cast(array_ops.stack(dims), dtype))


def _assign_ids(flat_ids: Tensor, tables: list[Tensor], partition_strategy: str) -> tuple[Tensor, Tensor]:
    """``(shard of each id, row of each id in its shard)`` for TF's "mod" or "div" strategy."""
    n = len(tables)
    if partition_strategy == "mod":
        # Id i is row i // n of shard i % n.
        return flat_ids % n, flat_ids // n
    total = _total_rows(tables, flat_ids.dtype)
    if isinstance(total, int) and total < n:
        raise ValueError(f"The 'div' strategy needs at least {n} rows in all, got {total}")
    per, extras = total // n, total % n  # Python ints when the shard sizes are known, else tensors
    # Consecutive ids per shard: the first `extras` shards hold per + 1 ids, the others per.
    shard = math_ops.maximum(flat_ids // (per + 1), (flat_ids - extras) // per)
    row = math_ops.where(shard < extras, flat_ids % (per + 1), (flat_ids - extras) % per)
    return shard, row


def _sharded_lookup(tables: list[Tensor], ids: Tensor, partition_strategy: str, name: str) -> Tensor:
    """The rows for ``ids`` from a table split over ``tables``: each shard gathers only the ids it owns."""
    flat_ids = array_ops.reshape(ids, [-1])
    original_indices = math_ops.range(array_ops.size(flat_ids))
    shard, row = _assign_ids(flat_ids, tables, partition_strategy)
    shard = math_ops.cast(shard, dtypes.int32)
    n = len(tables)
    gather_ids = array_ops.dynamic_partition(row, shard, n)
    positions = array_ops.dynamic_partition(original_indices, shard, n)
    rows = []
    for table, table_ids in zip(tables, gather_ids):
        with colocate_with(table):
            rows.append(array_ops.gather(table, table_ids))
    stitched = parallel_dynamic_stitch(positions, rows, name=name)

    element_shape = TensorShape(None)
    for table in tables:
        element_shape = element_shape.merge_with(table.shape[1:] if table.shape.ndims is not None else table.shape)
    if element_shape.is_fully_defined():
        element_dims: Any = element_shape.as_list()
    else:
        with colocate_with(tables[0]):
            element_dims = array_ops.shape(tables[0])[1:]
    result = array_ops.reshape(stitched, array_ops.concat([array_ops.shape(ids), element_dims], 0))
    result.set_shape(ids.shape.concatenate(element_shape))
    return result


def embedding_lookup(
    params: Any,
    ids: Any,
    partition_strategy: str = "mod",
    name: str | None = None,
    validate_indices: bool = True,
    max_norm: Any = None,
) -> Tensor:
    """Rows of the embedding table ``params`` for each id in ``ids``.

    Args:
        params: One embedding table (a Variable or tensor), a list holding one, or a table split row-wise
            into shards: a list of tables or a ``PartitionedVariable`` (``get_variable(..., partitioner=...)``).
        ids: int32/int64 tensor of row indices, any shape.
        partition_strategy: Which shard owns id ``i`` of ``n`` shards: ``"mod"`` (row ``i // n`` of shard
            ``i % n``) or ``"div"`` (consecutive ids per shard, the first ``rows % n`` shards one more).
            Unused with one table.
        name: Name scope.
        validate_indices: Accepted for compatibility (ids are always checked against the table).
        max_norm: If set, rows whose L2 norm is larger are scaled down to this norm.

    Returns:
        A tensor of shape ``ids.shape + params.shape[1:]``. Its gradient for each table or shard is an
        ``IndexedSlices`` of the rows looked up there, so training updates only those rows.

    Raises:
        ValueError: no params, too few rows for the "div" strategy, or an unknown partition strategy.
        TypeError: ``ids`` is not an integer tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     table = tf.constant([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
        ...     rows = tf.nn.embedding_lookup(table, [[2, 0]])
        ...     shards = [tf.constant([[0.0], [2.0]]), tf.constant([[1.0]])]  # "mod": ids 0, 2 | id 1
        ...     with tf.Session() as sess:
        ...         print(sess.run(rows).tolist(), sess.run(tf.nn.embedding_lookup(shards, [2, 1, 0])).tolist())
        [[[2.0, 2.0], [0.0, 0.0]]] [[2.0], [1.0], [0.0]]
    """
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    if params is None:
        raise ValueError("params must be specified")
    if isinstance(params, PartitionedVariable):
        params = list(params)  # the shards themselves, never their concatenation
    tables = list(params) if isinstance(params, list | tuple) else [params]
    if not tables or any(t is None for t in tables):
        raise ValueError("Need at least one param")
    with name_scope(name, "embedding_lookup", tables + [ids]) as scope:
        tables = convert_n_to_tensor(tables, name="params")
        ids_t = convert_to_tensor(ids, name="ids")
        check_dtype(ids_t, INDEX, "embedding_lookup", "ids")
        if len(tables) > 1:
            return _clip_rows(_sharded_lookup(tables, ids_t, partition_strategy, scope), ids_t, max_norm)
        with colocate_with(tables[0]):
            result = _clip_rows(array_ops.gather(tables[0], ids_t, name=scope), ids_t, max_norm)
        # The result itself is not pinned to the table's device (as in TF).
        return identity(result)
