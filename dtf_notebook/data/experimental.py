"""``tf.data.experimental``: the pieces TF1 scripts use (AUTOTUNE, iterator helpers, fused transformations).

The transformations are functions of a dataset for ``Dataset.apply``, built from the core ones
(``map_and_batch`` is ``map`` then ``batch``, which the runtime fuses anyway).

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.data.dataset_ops import Dataset
    >>> with tf.Graph().as_default():
    ...     ds = Dataset.range(10).apply(map_and_batch(lambda x: x * 2, 4, drop_remainder=True))
    ...     ds.output_shapes
    TensorShape([4])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.data.dataset_ops import AUTOTUNE, DatasetV1
from dtf_notebook.data.input_pipelines import make_batched_features_dataset, make_csv_dataset, parse_example_dataset
from dtf_notebook.data.iterator_ops import get_single_element, make_initializable_iterator, make_one_shot_iterator
from dtf_notebook.data.readers import CsvDataset
from dtf_notebook.data.structure import SparseTensorSpec, TensorSpec

__all__ = [
    "AUTOTUNE",
    "CsvDataset",
    "make_one_shot_iterator",
    "make_initializable_iterator",
    "get_single_element",
    "map_and_batch",
    "shuffle_and_repeat",
    "parallel_interleave",
    "ignore_errors",
    "get_structure",
    "SparseTensorStructure",
    "TensorStructure",
    "make_csv_dataset",
    "make_batched_features_dataset",
    "parse_example_dataset",
]

Transformation = Callable[[DatasetV1], DatasetV1]


def map_and_batch(
    map_func: Callable[..., Any],
    batch_size: Any,
    num_parallel_batches: Any = None,
    drop_remainder: Any = False,
    num_parallel_calls: Any = None,
) -> Transformation:
    """``map(map_func)`` then ``batch(batch_size, drop_remainder)``, for ``Dataset.apply``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     DatasetV1.range(5).apply(map_and_batch(lambda x: x * 2, 2)).output_shapes
        TensorShape([None])
    """
    return lambda dataset: dataset.map(map_func, num_parallel_calls).batch(batch_size, drop_remainder)


def shuffle_and_repeat(buffer_size: Any, count: Any = None, seed: Any = None) -> Transformation:
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``: every epoch in its own order.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     DatasetV1.range(3).apply(shuffle_and_repeat(3, 2, seed=1)).output_types
        tf.int64
    """
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def parallel_interleave(
    map_func: Callable[..., Any],
    cycle_length: Any,
    block_length: Any = 1,
    sloppy: bool = False,
    buffer_output_elements: Any = None,
    prefetch_input_elements: Any = None,
) -> Transformation:
    """``interleave(map_func, cycle_length, block_length)`` in its deterministic order (``sloppy`` order is a
    permission, not a promise).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ds = DatasetV1.range(3).apply(parallel_interleave(lambda x: DatasetV1.range(x), cycle_length=2))
        ...     ds.output_types
        tf.int64
    """
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def ignore_errors() -> Transformation:
    """Drops the elements whose computation failed.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ds = DatasetV1.from_tensor_slices([1.0, 0.0, 2.0])
        ...     ds = ds.map(lambda x: tf.debugging.check_numerics(1 / x, "inf"))
        ...     x = ds.apply(ignore_errors()).make_one_shot_iterator().get_next()
        ...     with tf.Session() as sess:
        ...         print(sess.run(x), sess.run(x))
        1.0 0.5
    """
    return lambda dataset: dataset.ignore_errors()


def get_structure(dataset_or_iterator: Any) -> Any:
    """The spec structure of a dataset's or iterator's elements (``TensorSpec`` and ``SparseTensorSpec`` leaves).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     get_structure(DatasetV1.from_tensors(tf.SparseTensorValue([[0]], [1.0], [3])))
        SparseTensorSpec(TensorShape([3]), tf.float32)
    """
    return dataset_or_iterator.element_spec


def SparseTensorStructure(dtype: Any, shape: Any) -> SparseTensorSpec:  # noqa: N802 - TF1's name
    """TF1's name for ``tf.SparseTensorSpec(shape, dtype)`` (note the order of the arguments).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> SparseTensorStructure(tf.int64, [None])
        SparseTensorSpec(TensorShape([None]), tf.int64)
    """
    return SparseTensorSpec(shape, dtype)


def TensorStructure(dtype: Any, shape: Any) -> TensorSpec:  # noqa: N802 - TF1's name
    """TF1's name for the spec of a dense component of ``dtype`` and ``shape``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> TensorStructure(tf.int64, [2])
        TensorSpec(shape=(2,), dtype=tf.int64)
    """
    return TensorSpec(dtype, shape)
