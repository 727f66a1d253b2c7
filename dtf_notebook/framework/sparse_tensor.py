"""``tf.SparseTensor``: a sparse tensor as three dense tensors (TF1's representation).

``indices`` (int64, ``[N, rank]``) lists the coordinates of the ``N`` values present, ``values`` (``[N]``)
their values and ``dense_shape`` (int64, ``[rank]``) the shape of the dense tensor. Like
``IndexedSlices`` it is a composite: fetching one returns a :data:`SparseTensorValue`, and feeding one
(for instance a :func:`~dtf_notebook.ops.placeholder_ops.sparse_placeholder`) takes a
``SparseTensorValue`` or an ``(indices, values, dense_shape)`` triple.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     sp = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=[1.0, 2.0], dense_shape=[3, 4])
    ...     with tf.Session() as sess:
    ...         value = sess.run(sp)
    >>> sp.shape, value.values.tolist(), value.dense_shape.tolist()
    (TensorShape([3, 4]), [1.0, 2.0], [3, 4])
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.default_session import run_in_default_session
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.framework.tensor_util import shape_from_tensor

__all__ = ["SparseTensor", "SparseTensorValue"]

#: What ``Session.run`` returns for a fetched SparseTensor (and what feeding one takes).
SparseTensorValue = namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor: ``values[i]`` sits at coordinates ``indices[i]`` of a tensor of shape ``dense_shape``.

    Args:
        indices: int64 ``[N, rank]`` coordinates (in row-major order for the ops that need it).
        values: ``[N]`` values, any dtype.
        dense_shape: int64 ``[rank]`` shape of the dense tensor.

    Raises:
        ValueError: ``indices`` is not a matrix, ``values`` or ``dense_shape`` not a vector, or their sizes
            disagree (the message gives the shapes).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sp = SparseTensor([[0, 1]], [5], [2, 3])
        >>> sp.dtype, sp.indices.dtype, sp.get_shape().as_list()
        (tf.int32, tf.int64, [2, 3])
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any) -> None:
        #: A static shape known better than ``dense_shape`` tells (set by ``sparse_placeholder``).
        self._dense_shape_default: TensorShape | None = None
        with name_scope(None, "SparseTensor", [indices, values, dense_shape]):
            self._indices = convert_to_tensor(indices, name="indices", dtype=dtypes.int64)
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(dense_shape, name="dense_shape", dtype=dtypes.int64)
        indices_shape = self._indices.shape.with_rank(2)
        values_shape = self._values.shape.with_rank(1)
        dense_shape_shape = self._dense_shape.shape.with_rank(1)
        try:
            indices_shape[0].merge_with(values_shape[0])
            indices_shape[1].merge_with(dense_shape_shape[0])
        except ValueError:
            raise ValueError(
                f"SparseTensor parts do not fit: indices {indices_shape}, values {values_shape}, "
                f"dense_shape {dense_shape_shape}"
            ) from None

    @classmethod
    def from_value(cls, value: Any) -> SparseTensor:
        """A SparseTensor of constants from a :data:`SparseTensorValue` (a SparseTensor is returned as is).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     SparseTensor.from_value(SparseTensorValue([[1]], [2.0], [4])).values.op.type
            'Const'
        """
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    op = property(lambda self: self._values.op)
    graph = property(lambda self: self._indices.graph)

    @property
    def shape(self) -> TensorShape:
        """The dense shape as far as it is known while building."""
        shape = shape_from_tensor(self._dense_shape)
        if self._dense_shape_default is not None:
            shape = shape.merge_with(self._dense_shape_default)
        rank = self._indices.shape[1].value
        return shape if rank is None else shape.merge_with(TensorShape([None] * rank))

    def get_shape(self) -> TensorShape:
        """Same as :attr:`shape`."""
        return self.shape

    def eval(self, feed_dict: Any = None, session: Any = None) -> SparseTensorValue:
        """Evaluates this sparse tensor in ``session`` (default: the default session).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default(), tf.Session():
            ...     SparseTensor([[0]], [3.0], [2]).eval().values.tolist()
            [3.0]
        """
        return run_in_default_session(self, feed_dict, session)

    def __repr__(self) -> str:
        return f"SparseTensor(indices={self._indices!r}, values={self._values!r}, dense_shape={self._dense_shape!r})"

    # The composite protocol of fetches and feeds (see dtf_notebook.runtime.fetches).
    def _fetch_components(self) -> tuple[list[Tensor], Any]:
        return [self._indices, self._values, self._dense_shape], SparseTensorValue

    def _feed_components(self) -> list[Tensor]:
        return [self._indices, self._values, self._dense_shape]

    def _split_feed_value(self, value: Any) -> list[Any]:
        parts = list(value)
        if len(parts) != 3:
            raise TypeError(
                f"A SparseTensor is fed a SparseTensorValue or an (indices, values, dense_shape) triple, got {value!r}"
            )
        return parts
