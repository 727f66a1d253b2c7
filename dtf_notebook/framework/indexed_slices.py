"""``IndexedSlices``: a sparse set of rows of a dense tensor (the gradient of a gather).

``values[i]`` is row ``indices[i]`` of a tensor of shape ``dense_shape``;
repeated indices add up. Gradients of ``gather`` and ``embedding_lookup`` are
IndexedSlices, so training an embedding never materialises the whole table.
Converting one to a tensor (``tf.convert_to_tensor``) densifies it with an
``UnsortedSegmentSum``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([2]), tf.constant([3, 2]))
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.convert_to_tensor(s)))
    [[0. 0.]
     [0. 0.]
     [1. 1.]]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from dtf_notebook.framework.convert import register_tensor_conversion_function
from dtf_notebook.framework.op_registry import builders
from dtf_notebook.framework.tensor import Tensor

#: What ``Session.run`` returns for a fetched IndexedSlices.
IndexedSlicesValue = namedtuple("IndexedSlicesValue", ["values", "indices", "dense_shape"])


class IndexedSlices:
    """Sparse rows ``values`` at ``indices`` of a tensor of shape ``dense_shape``.

    Args:
        values: Tensor of shape ``[n] + dense_shape[1:]``.
        indices: 1-D integer tensor of length n.
        dense_shape: Optional 1-D integer tensor, the shape of the dense tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = IndexedSlices(tf.constant([[1.0]]), tf.constant([0]))
        >>> s.dtype
        tf.float32
    """

    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Tensor | None = None) -> None:
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    graph = property(lambda self: self._values.graph)
    op = property(lambda self: self._values.op)
    device = property(lambda self: self._values.device)
    name = property(lambda self: self._values.name)

    def __repr__(self) -> str:
        shape = f", dense_shape={self._dense_shape!r}" if self._dense_shape is not None else ""
        return f"IndexedSlices(indices={self._indices!r}, values={self._values!r}{shape})"

    def _fetch_components(self) -> tuple[list[Tensor], Any]:
        parts = [self._values, self._indices]
        if self._dense_shape is not None:
            parts.append(self._dense_shape)
        return parts, lambda values, indices, dense_shape=None: IndexedSlicesValue(values, indices, dense_shape)

    def _feed_components(self) -> list[Tensor]:
        parts, _ = self._fetch_components()
        return parts

    def _split_feed_value(self, value: Any) -> list[Any]:
        return list(value)[: len(self._feed_components())]


def _indexed_slices_to_tensor(
    value: IndexedSlices, dtype: Any = None, name: str | None = None, as_ref: bool = False
) -> Tensor:
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {value!r}")
    num_rows = builders.gather(value.dense_shape, 0)
    return builders.unsorted_segment_sum(value.values, value.indices, num_rows, name=name)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor, priority=10)
