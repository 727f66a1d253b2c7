"""Dense feature columns: numbers as they are, bucketized numbers, and categorical columns made dense by an
embedding or a multi-hot indicator (TF1's ``numeric_column``, ``bucketized_column``, ``embedding_column``,
``indicator_column``).

Example:
    >>> column = bucketized_column(numeric_column("age"), [18, 65])
    >>> column.name, column._variable_shape.as_list(), column._num_buckets
    ('age_bucketized', [1, 3], 3)
"""

from __future__ import annotations

import collections
import math
from typing import Any

from dtf_notebook.feature_column.base import CategoricalColumn, DenseColumn, IdWeightPair, LazyBuilder
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.array.fill import one_hot
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.array.pad_tile import tile
from dtf_notebook.ops.array.reshape import expand_dims, reshape
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.array.transpose import transpose
from dtf_notebook.ops.init_ops import truncated_normal_initializer
from dtf_notebook.ops.io.parsing_config import FixedLenFeature
from dtf_notebook.ops.lookup.bucketize import bucketize
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.range import range as math_range
from dtf_notebook.ops.math.reduce import reduce_sum
from dtf_notebook.ops.nn.embedding_safe import safe_embedding_lookup_sparse
from dtf_notebook.ops.sparse.reductions import sparse_tensor_to_dense
from dtf_notebook.ops.variable_scope import get_variable
from dtf_notebook.train.checkpoint_init import init_from_checkpoint

__all__ = ["numeric_column", "bucketized_column", "embedding_column", "indicator_column"]


class _NumericColumn(
    DenseColumn,
    collections.namedtuple("_NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"]),
):
    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        tensor = inputs.get(self.key)
        if isinstance(tensor, SparseTensor):
            raise ValueError(
                "The corresponding Tensor of numerical column must be a Tensor. SparseTensor is not supported. "
                f"key: {self.key}"
            )
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return cast(tensor, dtypes.float32)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(self.shape)

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None) -> Any:
        return inputs.get(self)


def numeric_column(
    key: str, shape: Any = (1,), default_value: Any = None, dtype: Any = dtypes.float32, normalizer_fn: Any = None
) -> Any:
    """A real-valued feature of the given per-example ``shape``, cast to float32 (after ``normalizer_fn``).

    Raises:
        ValueError: a shape that is not positive integers, a non-numeric dtype, or a non-callable normalizer.

    Example:
        >>> numeric_column("x", shape=[2]).shape
        (2,)
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or any(not isinstance(d, int) or d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return _NumericColumn(key, shape, default_value, dtype, normalizer_fn)


class _BucketizedColumn(
    DenseColumn, CategoricalColumn, collections.namedtuple("_BucketizedColumn", ["source_column", "boundaries"])
):
    @property
    def name(self) -> str:
        return f"{self.source_column.name}_bucketized"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return self.source_column._parse_example_spec

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        return bucketize(inputs.get(self.source_column), boundaries=self.boundaries)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None) -> Any:
        ids = cast(inputs.get(self), dtypes.int64)
        return one_hot(indices=ids, depth=len(self.boundaries) + 1, on_value=1.0, off_value=0.0)

    @property
    def _num_buckets(self) -> int:
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None):
        tensor = inputs.get(self)
        batch_size = shape(tensor)[0]
        dimension = self.source_column.shape[0]
        i1 = reshape(tile(expand_dims(math_range(0, batch_size), 1), [1, dimension]), (-1,))
        i2 = tile(math_range(0, dimension), [batch_size])
        bucket_indices = reshape(tensor, (-1,)) + (len(self.boundaries) + 1) * i2
        indices = cast(transpose(stack((i1, i2))), dtypes.int64)
        dense_shape = cast(stack([batch_size, dimension]), dtypes.int64)
        return IdWeightPair(SparseTensor(indices, bucket_indices, dense_shape), None)


def bucketized_column(source_column: Any, boundaries: Any) -> Any:
    """The bucket of a one-dimensional numeric column's value: dense as one-hot, categorical as ids.

    Raises:
        ValueError: the source is not a 1-D numeric_column, or boundaries are not a sorted list.

    Example:
        >>> bucketized_column(numeric_column("x"), [1.0, 0.0])
        Traceback (most recent call last):
        ValueError: boundaries must be a sorted list.
    """
    if not isinstance(source_column, _NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries or not isinstance(boundaries, list | tuple):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return _BucketizedColumn(source_column, tuple(boundaries))


class _EmbeddingColumn(
    DenseColumn,
    collections.namedtuple(
        "_EmbeddingColumn",
        [
            "categorical_column",
            "dimension",
            "combiner",
            "layer_creator",
            "ckpt_to_load_from",
            "tensor_name_in_ckpt",
            "max_norm",
            "trainable",
        ],
    ),
):
    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_embedding"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([self.dimension])

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None) -> Any:
        pair = self.categorical_column._get_sparse_tensors(inputs, weight_collections, trainable)
        weights = get_variable(
            name="embedding_weights",
            shape=(self.categorical_column._num_buckets, self.dimension),
            dtype=dtypes.float32,
            initializer=self.layer_creator,
            trainable=self.trainable and (trainable is None or trainable),
            collections=weight_collections,
        )
        if self.ckpt_to_load_from is not None:
            init_from_checkpoint(self.ckpt_to_load_from, {self.tensor_name_in_ckpt: weights})
        return safe_embedding_lookup_sparse(
            weights,
            pair.id_tensor,
            sparse_weights=pair.weight_tensor,
            combiner=self.combiner,
            name=f"{self.name}_weights",
            max_norm=self.max_norm,
        )


def embedding_column(
    categorical_column: Any,
    dimension: int,
    combiner: str = "mean",
    initializer: Any = None,
    ckpt_to_load_from: str | None = None,
    tensor_name_in_ckpt: str | None = None,
    max_norm: float | None = None,
    trainable: bool = True,
) -> Any:
    """A categorical column's ids as the ``combiner`` of their rows in an ``[num_buckets, dimension]`` table.

    The table is the variable ``embedding_weights`` (default initializer: truncated normal with stddev
    ``1/sqrt(dimension)``), optionally loaded from ``ckpt_to_load_from``.

    Raises:
        ValueError: a dimension below 1, only one of the checkpoint arguments, or a non-callable initializer.

    Example:
        >>> from dtf_notebook.feature_column.categorical import categorical_column_with_identity
        >>> embedding_column(categorical_column_with_identity("x", 4), 0)
        Traceback (most recent call last):
        ValueError: Invalid dimension 0.
    """
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if initializer is not None and not callable(initializer):
        raise ValueError(
            f"initializer must be callable if specified. Embedding of column_name: {categorical_column.name}"
        )
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column. Given: {categorical_column}")
    if initializer is None:
        initializer = truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    return _EmbeddingColumn(
        categorical_column,
        dimension,
        combiner,
        initializer,
        ckpt_to_load_from,
        tensor_name_in_ckpt,
        max_norm,
        trainable,
    )


class _IndicatorColumn(DenseColumn, collections.namedtuple("_IndicatorColumn", ["categorical_column"])):
    @property
    def name(self) -> str:
        return f"{self.categorical_column.name}_indicator"

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        pair = self.categorical_column._get_sparse_tensors(inputs)
        if pair.weight_tensor is not None:
            raise ValueError(f"Weighted categorical columns are not supported here: {self.categorical_column}")
        dense_ids = sparse_tensor_to_dense(pair.id_tensor, default_value=-1)
        hot = one_hot(dense_ids, depth=self.categorical_column._num_buckets, on_value=1.0, off_value=0.0)
        return reduce_sum(hot, axis=[-2])

    @property
    def _variable_shape(self) -> TensorShape:
        return TensorShape([1, self.categorical_column._num_buckets])

    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None) -> Any:
        return inputs.get(self)


def indicator_column(categorical_column: Any) -> Any:
    """A categorical column as a multi-hot vector of ``num_buckets`` (counts when an id repeats).

    Example:
        >>> from dtf_notebook.feature_column.categorical import categorical_column_with_identity
        >>> indicator_column(categorical_column_with_identity("x", 4)).name
        'x_indicator'
    """
    if not isinstance(categorical_column, CategoricalColumn):
        raise ValueError(f"categorical_column must be a categorical column. Given: {categorical_column}")
    return _IndicatorColumn(categorical_column)
