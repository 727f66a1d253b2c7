"""``tf.create_partitioned_variables``: TF1's older way to make a variable split into parts.

The slicing is given directly instead of by a partitioner, and the variable is named by a variable scope
(``name``, default ``PartitionedVariable`` made unique): its parts are ``<scope>/part_<i>``, saved as
slices of the full variable ``<scope>``. It returns the list of parts, not a ``PartitionedVariable``;
``get_variable(..., partitioner=...)`` is the newer form of the same thing.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     parts = create_partitioned_variables([5, 2], [3, 1], tf.ones_initializer())
    >>> [(p.op.name, p.shape.as_list()) for p in parts]  # doctest: +NORMALIZE_WHITESPACE
    [('PartitionedVariable/part_0', [2, 2]), ('PartitionedVariable/part_1', [2, 2]),
     ('PartitionedVariable/part_2', [1, 2])]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.ops.variable_scope import variable_scope
from dtf_notebook.ops.variable_store import _get_default_variable_store
from dtf_notebook.ops.variables import Variable

__all__ = ["create_partitioned_variables"]


def create_partitioned_variables(
    shape: Sequence[int],
    slicing: Sequence[int],
    initializer: Any,
    dtype: Any = dtypes.float32,
    trainable: bool = True,
    collections: Any = None,
    name: str | None = None,
    reuse: Any = None,
) -> list[Variable]:
    """Creates (or, with ``reuse``, gets) a variable of ``shape`` split into parts by ``slicing``.

    Args:
        shape: The full shape (rank at least 1).
        slicing: Parts per axis, one entry per axis of ``shape``; at most one entry above 1. The first
            ``shape[axis] % parts`` parts get one extra row.
        initializer: An initializer (called per part with its ``partition_info``), or a Tensor or value of the
            full shape, which is sliced.
        dtype: Element type.
        trainable: Add the parts to ``TRAINABLE_VARIABLES``.
        collections: Collections of the parts (default ``[GLOBAL_VARIABLES]``).
        name: The variable scope naming the variable (default ``PartitionedVariable``, made unique).
        reuse: The scope's reuse: True gets the parts made before under the same name.

    Returns:
        The part variables in offset order.

    Raises:
        ValueError: ``shape`` and ``slicing`` differ in length, ``shape`` is a scalar, more than one axis is
            split, or the variable exists (without reuse) or is missing (with reuse).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     parts = create_partitioned_variables([4], [2], [1.0, 2.0, 3.0, 4.0], name="e")  # a value: sliced
        ...     same = create_partitioned_variables([4], [2], tf.zeros_initializer(), name="e", reuse=True)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(same[1] is parts[1], [p.tolist() for p in sess.run(parts)])
        True [[1.0, 2.0], [3.0, 4.0]]
    """
    if len(shape) != len(slicing):
        raise ValueError(
            "The 'shape' and 'slicing' of a partitioned Variable must have the length: "
            f"shape: {list(shape)}, slicing: {list(slicing)}"
        )
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {list(shape)}")
    slices = list(slicing)

    def partitioner(**unused_kwargs: Any) -> list[int]:
        return slices

    with variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        if scope.custom_getter is not None:
            # The parts are made by the store directly (as in TF), so a custom getter would be skipped silently.
            raise ValueError(
                "create_partitioned_variables cannot run under a variable scope with a custom getter "
                f"({scope.custom_getter!r}); use get_variable with a partitioner instead."
            )
        with get_default_graph().name_scope(None):
            partitioned = _get_default_variable_store()._get_partitioned_variable(
                scope.name,
                partitioner,
                shape,
                dtypes.as_dtype(dtype),
                initializer,
                scope.regularizer,
                scope.reuse,
                trainable,
                collections,
                scope.caching_device,
                True,
                scope.constraint,
            )
    return list(partitioned)
