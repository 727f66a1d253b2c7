"""Partitioners for ``tf.get_variable(..., partitioner=...)``: how many parts to split a variable into.

A partitioner is ``fn(shape=TensorShape, dtype=DType) -> [parts per axis]`` with at most one entry above 1.
The variable store then creates one variable per part (``name/part_0``, ``name/part_1``, ...), the first
``rows % parts`` parts holding one extra row; under ``tf.train.replica_device_setter`` each part is a separate
variable op, so the parts go round-robin to the ps tasks. Formulas follow TF1's
``tensorflow/python/ops/partitioned_variables.py``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
    ...         emb = tf.get_variable("emb", [10, 4], partitioner=fixed_size_partitioner(3))
    >>> [(p.op.name, p.shape.as_list(), p.device) for p in emb]  # doctest: +NORMALIZE_WHITESPACE
    [('emb/part_0', [4, 4], '/job:ps/task:0'), ('emb/part_1', [3, 4], '/job:ps/task:1'),
     ('emb/part_2', [3, 4], '/job:ps/task:2')]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape

__all__ = ["fixed_size_partitioner", "min_max_variable_partitioner", "variable_axis_size_partitioner"]

Partitioner = Callable[..., list[int]]


def _element_size(dtype: Any, bytes_per_string_element: int) -> int:
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype.base_dtype == dtypes.string else dtype.size


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Partitioner:
    """A partitioner splitting ``axis`` into ``num_shards`` parts (fewer when the axis is shorter).

    Args:
        num_shards: Number of parts.
        axis: The axis to split.

    Returns:
        A partitioner for ``get_variable`` and ``variable_scope``.

    Example:
        >>> fixed_size_partitioner(3)(TensorShape([1000000000, 20]), dtype=dtypes.float32)
        [3, 1]
        >>> fixed_size_partitioner(5, axis=1)(TensorShape([10, 2]))
        [1, 2]
    """

    def _partitioner(shape: TensorShape, **unused_args: Any) -> list[int]:
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape.dims[axis].value)
        return partitions

    return _partitioner


def min_max_variable_partitioner(
    max_partitions: int = 1, axis: int = 0, min_slice_size: int = 256 << 10, bytes_per_string_element: int = 16
) -> Partitioner:
    """A partitioner giving each part at least ``min_slice_size`` bytes, in at most ``max_partitions`` parts.

    Args:
        max_partitions: Upper bound on the number of parts.
        axis: The axis to split.
        min_slice_size: Minimum bytes per part (256 KiB by default).
        bytes_per_string_element: Assumed size of one element of a string variable.

    Returns:
        A partitioner for ``get_variable`` and ``variable_scope``.

    Raises:
        ValueError: (when called) ``axis`` is not an axis of the variable.

    Example:
        >>> part = min_max_variable_partitioner(max_partitions=32)
        >>> part(TensorShape([1024, 1024]), dtypes.float32)  # 4 MiB / 256 KiB
        [16, 1]
        >>> min_max_variable_partitioner(max_partitions=4)(TensorShape([1024, 1024]), dtypes.float32)
        [4, 1]
    """

    def _partitioner(shape: TensorShape, dtype: Any) -> list[int]:
        if axis >= len(shape):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {shape}")
        total_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = [1] * len(shape)
        # No more parts than rows along the axis or than max_partitions allows.
        partitions[axis] = max(
            1, min(shape.dims[axis].value, max_partitions, int(math.ceil(total_bytes / min_slice_size)))
        )
        return partitions

    return _partitioner


def variable_axis_size_partitioner(
    max_shard_bytes: int, axis: int = 0, bytes_per_string_element: int = 16, max_shards: int | None = None
) -> Partitioner:
    """A partitioner keeping each part below ``max_shard_bytes`` where splitting ``axis`` allows it.

    When even one slice along ``axis`` is larger, every slice becomes its own part. ``max_shards`` caps the
    number of parts and then wins over ``max_shard_bytes``.

    Args:
        max_shard_bytes: Largest wanted part, in bytes (e.g. ``(64 << 20) - 1``).
        axis: The axis to split.
        bytes_per_string_element: Assumed size of one element of a string variable.
        max_shards: Upper bound on the number of parts (None: no bound).

    Returns:
        A partitioner for ``get_variable`` and ``variable_scope``.

    Raises:
        ValueError: a byte count or ``max_shards`` is not positive; (when called) the shape is not a fully
            defined ``TensorShape``.

    Example:
        >>> part = variable_axis_size_partitioner(max_shard_bytes=4096)
        >>> part(TensorShape([100, 32]), dtypes.float32)  # 128 bytes per row, 32 rows per part
        [4, 1]
        >>> variable_axis_size_partitioner(4096, max_shards=2)(TensorShape([100, 32]), dtypes.float32)
        [2, 1]
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. Currently, max_shard_bytes is "
            f"{max_shard_bytes} and bytes_per_string_element is {bytes_per_string_element}"
        )
    if max_shards and max_shards < 1:
        raise ValueError(f"max_shards must be positive, got {max_shards}")

    def _partitioner(shape: TensorShape, dtype: Any) -> list[int]:
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        rows = shape.dims[axis].value
        bytes_per_slice = shape.num_elements() / rows * _element_size(dtype, bytes_per_string_element)
        # At least one slice per part, however large a slice is.
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(rows / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions = [1] * shape.ndims
        partitions[axis] = axis_shards
        return partitions

    return _partitioner
