"""What every feature column shares: the base classes, the builder that transforms each feature once, and
TF's rule for turning a dense input into a SparseTensor (dropping ``-1`` and ``''``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     sparse = to_sparse_input_and_drop_ignore_values(tf.constant([["a", ""], ["b", "c"]]))
    ...     with tf.Session() as sess:
    ...         print(sess.run(sparse.values))
    [b'a' b'b' b'c']
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.array.reshape import expand_dims
from dtf_notebook.ops.array.scatter_nd import gather_nd
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import not_equal
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.sparse.structure import sparse_reshape

__all__ = [
    "FeatureColumn",
    "DenseColumn",
    "CategoricalColumn",
    "IdWeightPair",
    "LazyBuilder",
    "to_sparse_input_and_drop_ignore_values",
    "normalize_feature_columns",
]


class IdWeightPair(NamedTuple):
    """A categorical column's ids (SparseTensor) and optional weights."""

    id_tensor: Any
    weight_tensor: Any


class FeatureColumn(abc.ABC):
    """A feature column (TF1's ``_FeatureColumn``): a name and how to transform its raw feature."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The column's name (input_layer and linear_model order columns by it)."""

    @property
    def _var_scope_name(self) -> str:
        return self.name

    @abc.abstractmethod
    def _transform_feature(self, inputs: LazyBuilder) -> Any:
        """The column's tensor, built from ``inputs`` (a :class:`LazyBuilder`)."""

    @property
    @abc.abstractmethod
    def _parse_example_spec(self) -> dict[str, Any]:
        """The ``parse_example`` spec of the raw features the column reads."""

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._asdict().items()) if hasattr(self, "_asdict") else ""
        return f"{type(self).__name__.lstrip('_')}({fields})"


class DenseColumn(FeatureColumn):
    """A column with a dense representation (TF1's ``_DenseColumn``): ``input_layer`` takes it."""

    @property
    @abc.abstractmethod
    def _variable_shape(self) -> TensorShape:
        """The shape of one example's dense tensor."""

    @abc.abstractmethod
    def _get_dense_tensor(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None) -> Any:
        """The dense tensor of the batch, ``[batch] + _variable_shape``."""


class CategoricalColumn(FeatureColumn):
    """A column of ids in ``[0, _num_buckets)`` (TF1's ``_CategoricalColumn``): ``linear_model`` takes it."""

    IdWeightPair = IdWeightPair

    @property
    @abc.abstractmethod
    def _num_buckets(self) -> int:
        """How many distinct ids there are."""

    @abc.abstractmethod
    def _get_sparse_tensors(
        self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None
    ) -> IdWeightPair:
        """The batch's ids (SparseTensor) and their weights (None: all 1)."""


def to_sparse_input_and_drop_ignore_values(input_tensor: Any, ignore_value: Any = None) -> SparseTensor:
    """``input_tensor`` as a SparseTensor without its ``ignore_value`` entries (``''``, ``-1``, or 0 for floats).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     sparse = to_sparse_input_and_drop_ignore_values(tf.constant([[1, -1]]))
        ...     with tf.Session() as sess:
        ...         print(sess.run(sparse.indices).tolist())
        [[0, 0]]
    """
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    input_tensor = convert_to_tensor(input_tensor)
    with name_scope(None, "to_sparse_input"):
        dtype = input_tensor.dtype.base_dtype
        if ignore_value is None:
            ignore_value = "" if dtype == dtypes.string else (-1 if dtype.is_integer else 0)
        ignore = (
            cast(ignore_value, dtype, name="ignore_value")
            if dtype != dtypes.string
            else convert_to_tensor(ignore_value, dtypes.string, name="ignore_value")
        )
        indices = where(not_equal(input_tensor, ignore), name="indices")
        return SparseTensor(
            indices=indices,
            values=gather_nd(input_tensor, indices, name="values"),
            dense_shape=shape(input_tensor, out_type=dtypes.int64, name="dense_shape"),
        )


class LazyBuilder:
    """Transforms each feature (raw key or column) once and caches it (TF1's ``_LazyBuilder``).

    Raw features of rank 1 become ``[batch, 1]``; rank 0 is refused.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     LazyBuilder({"x": tf.constant([1.0, 2.0])}).get("x").shape.as_list()
        [2, 1]
    """

    def __init__(self, features: Mapping[str, Any]) -> None:
        self._features = dict(features)
        self._cache: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        """The transformed feature of ``key`` (a raw feature name or a column).

        Raises:
            ValueError: the feature is missing, or has rank 0.
        """
        if key in self._cache:
            return self._cache[key]
        if isinstance(key, str):
            if key not in self._features:
                raise ValueError(f"Feature {key} is not in features dictionary.")
            value = self._raw(key)
        elif isinstance(key, FeatureColumn):
            value = key._transform_feature(self)
            if value is None:
                raise ValueError(f"Column {key} is not supported.")
        else:
            raise TypeError(f'"key" must be either a "str" or "_FeatureColumn". Provided: {key}')
        self._cache[key] = value
        return value

    def _raw(self, key: str) -> Any:
        raw = self._features[key]
        tensor = raw if isinstance(raw, SparseTensor) else convert_to_tensor(raw)
        if isinstance(tensor, SparseTensor):
            rank = tensor.dense_shape.shape[0] if tensor.dense_shape.shape.ndims else None
            if rank == 1:
                return sparse_reshape(tensor, [-1, 1])
            return tensor
        rank = tensor.shape.ndims
        if rank == 0:
            raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {tensor}")
        return expand_dims(tensor, -1) if rank == 1 else tensor


def normalize_feature_columns(feature_columns: Any) -> list[FeatureColumn]:
    """``feature_columns`` as a list of distinct-named columns.

    Raises:
        ValueError: none, a dict, an item that is not a column, or two columns of one name.

    Example:
        >>> normalize_feature_columns([])
        Traceback (most recent call last):
        ValueError: feature_columns must not be empty.
    """
    if isinstance(feature_columns, FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(
                f"Items of feature_columns must be a _FeatureColumn. Given (type {type(column)}): {column}."
            )
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    seen: dict[str, FeatureColumn] = {}
    for column in feature_columns:
        if column.name in seen:
            raise ValueError(
                f"Duplicate feature column name found for columns: {column} and {seen[column.name]}. This usually "
                "means that these columns refer to same base feature. Either one must be discarded or a duplicated "
                "but renamed item must be inserted in features dict."
            )
        seen[column.name] = column
    return list(feature_columns)


def make_parse_example_spec(feature_columns: Any) -> dict[str, Any]:
    """The ``parse_example`` spec of the raw features ``feature_columns`` read, merged (TF1's
    ``tf.feature_column.make_parse_example_spec``).

    Raises:
        ValueError: an item is not a feature column, or two columns read one key differently.

    Example:
        >>> from dtf_notebook.feature_column import numeric_column
        >>> make_parse_example_spec([numeric_column("x", shape=[2])])
        {'x': FixedLenFeature(shape=(2,), dtype=tf.float32, default_value=None)}
    """
    result: dict[str, Any] = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: {column}")
        config = column._parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(
                    f"feature_columns contain different parse_spec for key {key}. Given {value} and {result[key]}"
                )
        result.update(config)
    return result
