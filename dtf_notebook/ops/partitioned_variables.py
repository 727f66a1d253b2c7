"""Partitioned variables: a variable split along one axis into parts (``get_variable(..., partitioner=...)``).

:class:`PartitionedVariable` holds the parts and converts to their concatenation; ``_PartitionInfo``
tells an initializer where its part lies, and ``_SaveSliceInfo`` (in ``ops.variables``, as TF's
``Variable.SaveSliceInfo``) tells savers how a part maps into the full variable. The variable store
(:mod:`dtf_notebook.ops.variable_store`) creates the parts with :func:`call_partitioner` and :func:`iter_slices`.

Example:
    >>> list(iter_slices([5, 2], 2, 0))
    [([0, 0], [3, 2]), ([3, 0], [2, 2])]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import register_tensor_conversion_function
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, identity_ops
from dtf_notebook.ops.variables import Variable


class _PartitionInfo:
    """Where one part lies in a partitioned variable (handed to initializers as ``partition_info``)."""

    def __init__(self, full_shape: Sequence[int], var_offset: Sequence[int]) -> None:
        if len(var_offset) != len(full_shape):
            raise ValueError(
                f"Expected equal length, but `var_offset` is of length {len(var_offset)} while "
                f"full_shape is of length {len(full_shape)}."
            )
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={var_offset}, shape={full_shape}")
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape: Sequence[int]) -> int:
        """The offset of this part along its partitioned axis."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape: Sequence[int]) -> int | None:
        """The one axis along which a part of ``shape`` differs from the full shape (None when it is whole)."""
        if len(shape) != len(self.full_shape):
            raise ValueError(
                f"Expected equal length, but received shape={shape} of length {len(shape)} while "
                f"self.full_shape={self.full_shape} is of length {len(self.full_shape)}."
            )
        dims = [i for i, (n, full) in enumerate(zip(shape, self.full_shape)) if n != full]
        if len(dims) > 1:
            raise ValueError(
                f"Cannot use single_slice_dim() with shape={shape} and full_shape={self.full_shape}: "
                "the part differs along more than one axis."
            )
        return dims[0] if dims else None


class PartitionedVariable:
    """A variable split into parts along one axis; converts to the concatenation of its parts.

    Created by ``get_variable(..., partitioner=...)``; iterating gives the
    part variables in offset order.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.get_variable("v", [4, 3], partitioner=lambda shape, dtype: [2, 1])
        >>> [p.name for p in v], v.get_shape().as_list()
        (['v/part_0:0', 'v/part_1:0'], [4, 3])
    """

    def __init__(
        self,
        name: str,
        shape: TensorShape,
        dtype: dtypes.DType,
        variable_list: list[Variable],
        partitions: Sequence[int],
    ) -> None:
        if not isinstance(variable_list, list | tuple) or not variable_list:
            raise ValueError(f"variable_list must be a non-empty list of variables, got {variable_list!r}")
        self._variable_list = sorted(variable_list, key=lambda v: v._save_slice_info.var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtype
        self._partitions = list(partitions)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._variable_list)

    def __len__(self) -> int:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length of {len(axes)} tensors")
        return len(self._variable_list)

    def _partition_axes(self) -> list[int]:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def as_tensor(self) -> Tensor:
        """The parts concatenated along the partitioned axis (named like the variable).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     v = tf.get_variable("v", [4], partitioner=lambda shape, dtype: [2])
            ...     v.as_tensor().name
            'v:0'
        """
        graph = self._variable_list[0].graph
        with graph.as_default(), graph.control_dependencies(None):
            if len(self._variable_list) == 1:
                with graph.name_scope(None):
                    return identity_ops.identity(self._variable_list[0], name=self._name)
            with graph.name_scope(self._name + "/ConcatPartitions/"):
                concatenated = array_ops.concat(self._variable_list, self._partition_axes()[0])
            with graph.name_scope(None):
                return identity_ops.identity(concatenated, name=self._name)

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    #: The full (unpartitioned) shape.
    shape = property(lambda self: self._shape)
    graph = property(lambda self: self._variable_list[0].graph)

    def get_shape(self) -> TensorShape:
        """The full (unpartitioned) shape."""
        return self._shape

    def _split_value(self, value: Any) -> list[Any]:
        """One value per part: a list of them as given, a PartitionedVariable's parts, else ``value`` split
        along the partitioned axis into the parts' sizes."""
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(
                    f"Assigning to '{self._name}' needs one value per part ({len(self._variable_list)}), "
                    f"got a list of {len(value)}"
                )
            return value
        if isinstance(value, PartitionedVariable):
            return list(value)
        axis = self._partition_axes()[0]
        sizes = [part.get_shape()[axis].value for part in self._variable_list]
        return array_ops.split(value, sizes, axis=axis)

    def _assign_parts(self, method: str, value: Any, use_locking: bool, name: str | None, read_value: bool) -> list:
        return [
            getattr(part, method)(part_value, use_locking=use_locking, name=name, read_value=read_value)
            for part, part_value in zip(self._variable_list, self._split_value(value))
        ]

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True) -> list:
        """Assigns the full ``value`` to the parts, split along the partitioned axis (TF1's semantics).

        Args:
            value: The full value (a tensor or array of the variable's shape), a Python list of one value per
                part (as in TF, a list is always taken per part), or a PartitionedVariable split the same way.
            use_locking, name: Passed to each part's ``assign``.
            read_value: Return each part's new value (True) or its assign op (False).

        Returns:
            A list with one entry per part, in offset order.

        Raises:
            ValueError: a list whose length is not the number of parts, or a value whose shape does not
                split into the parts' shapes.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     v = tf.get_variable("v", [3, 2], partitioner=lambda shape, dtype: [2, 1])
            ...     parts = v.assign(tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
            ...     with tf.Session() as sess:
            ...         print([p.tolist() for p in sess.run(parts)])
            [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]]
        """
        return self._assign_parts("assign", value, use_locking, name, read_value)

    def assign_add(
        self, value: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> list:
        """Adds the full ``value`` to the parts, split as in :meth:`assign`.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     split = tf.fixed_size_partitioner(3)
            ...     v = tf.get_variable("v", [3], initializer=tf.ones_initializer(), partitioner=split)
            ...     parts = v.assign_add(tf.constant([1.0, 2.0, 3.0]))
            ...     with tf.Session() as sess:
            ...         sess.run(tf.global_variables_initializer())
            ...         print([p.tolist() for p in sess.run(parts)])
            [[2.0], [3.0], [4.0]]
        """
        return self._assign_parts("assign_add", value, use_locking, name, read_value)

    def assign_sub(
        self, value: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> list:
        """Subtracts the full ``value`` from the parts, split as in :meth:`assign`.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     split = tf.fixed_size_partitioner(2)
            ...     v = tf.get_variable("v", [2], initializer=tf.ones_initializer(), partitioner=split)
            ...     ops = v.assign_sub([[1.0], [2.0]], read_value=False)  # one value per part
            >>> [op.type for op in ops]
            ['AssignSub', 'AssignSub']
        """
        return self._assign_parts("assign_sub", value, use_locking, name, read_value)

    def _get_variable_list(self) -> list[Variable]:
        return self._variable_list

    def _get_partitions(self) -> list[int]:
        return self._partitions

    def __repr__(self) -> str:
        return f"<PartitionedVariable '{self._name}' shape={self._shape} parts={len(self._variable_list)}>"


def _partitioned_to_tensor(
    v: PartitionedVariable, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Tensor:
    if as_ref:
        raise TypeError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_to_tensor, priority=10)


def call_partitioner(partitioner: Callable[..., Any], shape: TensorShape, dtype: dtypes.DType) -> list[int]:
    """The partitioner's slicing of ``shape``, validated: one entry per axis, at most one above 1.

    Example:
        >>> from dtf_notebook.framework import dtypes
        >>> split_cols = lambda shape, dtype: [1, 2]
        >>> call_partitioner(split_cols, TensorShape([6, 4]), dtypes.float32)
        [1, 2]
    """
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    slicing = [int(p) for p in slicing]
    if len(slicing) != shape.ndims:
        raise ValueError(
            f"Partitioner returned a partition list that does not match the Variable's rank: {slicing} vs. {shape}"
        )
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, partitioning: {slicing}")
    return slicing


def slice_dim_and_count(slicing: Sequence[int]) -> tuple[int, int]:
    """The axis a slicing splits and its number of parts (axis 0, one part when nothing is split).

    Example:
        >>> slice_dim_and_count([1, 3])
        (1, 3)
        >>> slice_dim_and_count([1, 1])
        (0, 1)
    """
    for dim, count in enumerate(slicing):
        if count > 1:
            return dim, count
    return 0, 1


def iter_slices(full_shape: list[int], num_slices: int, slice_dim: int) -> Iterator[tuple[list[int], list[int]]]:
    """(offset, shape) of each part; the first ``full % num_slices`` parts get one extra row (TF's split).

    Example:
        >>> list(iter_slices([2, 7], 3, 1))
        [([0, 0], [2, 3]), ([0, 3], [2, 2]), ([0, 5], [2, 2])]
    """
    extra = full_shape[slice_dim] % num_slices
    base = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = base + (1 if i < extra else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]
