"""Categorical feature columns: ids from hashing, a vocabulary list or file, or the integer itself.

Each gives a SparseTensor of int64 ids per example (empty strings and ``-1`` dropped), as TF1's
``categorical_column_with_*`` do, with the same lookup-table and hash ops and names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> column = categorical_column_with_vocabulary_list("color", ["red", "green"], num_oov_buckets=1)
    >>> column.name, column._num_buckets
    ('color', 3)
"""

from __future__ import annotations

import collections
from typing import Any

import fsspec
import numpy as np

from dtf_notebook.feature_column.base import (
    CategoricalColumn,
    IdWeightPair,
    LazyBuilder,
    to_sparse_input_and_drop_ignore_values,
)
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.ops.array.fill import fill
from dtf_notebook.ops.array.shape_ops import shape
from dtf_notebook.ops.io.parsing_config import VarLenFeature
from dtf_notebook.ops.lookup.index_tables import index_table_from_file, index_table_from_tensor
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.math.compare import greater_equal, less, logical_or
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.strings.conversion import as_string
from dtf_notebook.ops.strings.elementwise import string_to_hash_bucket_fast
from dtf_notebook.platform import tf_logging as logging

__all__ = [
    "categorical_column_with_hash_bucket",
    "categorical_column_with_vocabulary_list",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_identity",
]


def _assert_string_or_int(dtype: Any, prefix: str) -> None:
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


def _sparse_input(inputs: LazyBuilder, key: str, dtype: Any) -> SparseTensor:
    tensor = to_sparse_input_and_drop_ignore_values(inputs.get(key))
    _assert_string_or_int(tensor.dtype, f"column_name: {key} input_tensor")
    if dtype.is_integer != tensor.dtype.is_integer:
        raise ValueError(
            f"Column dtype and SparseTensors dtype must be compatible. key: {key}, column dtype: {dtype}, tensor "
            f"dtype: {tensor.dtype}"
        )
    return tensor


def _vocabulary_ids(inputs: LazyBuilder, key: str, dtype: Any, make_table: Any) -> SparseTensor:
    """The ids of a vocabulary column: its sparse input (integers as int64) looked up in ``make_table(key_dtype)``."""
    tensor = _sparse_input(inputs, key, dtype)
    key_dtype = dtype
    if tensor.dtype.is_integer:
        key_dtype = dtypes.int64
        tensor = SparseTensor(tensor.indices, cast(tensor.values, dtypes.int64), tensor.dense_shape)
    return make_table(key_dtype).lookup(tensor)


class _KeyedCategoricalColumn(CategoricalColumn):
    """A categorical column read from one input feature, ``self.key``, whose ids are its transformed feature (no
    weights). Subclasses are namedtuples with ``key`` (and ``dtype`` unless they override the parse spec)."""

    @property
    def name(self) -> str:
        return self.key

    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(self.dtype)}

    def _get_sparse_tensors(self, inputs: LazyBuilder, weight_collections: Any = None, trainable: Any = None):
        return IdWeightPair(inputs.get(self), None)


class _HashedCategoricalColumn(
    _KeyedCategoricalColumn, collections.namedtuple("_HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])
):
    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        tensor = _sparse_input(inputs, self.key, self.dtype)
        values = tensor.values if self.dtype == dtypes.string else as_string(tensor.values)
        ids = string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(tensor.indices, ids, tensor.dense_shape)

    @property
    def _num_buckets(self) -> int:
        return self.hash_bucket_size


def categorical_column_with_hash_bucket(key: str, hash_bucket_size: int, dtype: Any = dtypes.string) -> Any:
    """Ids ``Fingerprint64(value) % hash_bucket_size`` (integers hashed as their decimal text).

    Raises:
        ValueError: ``hash_bucket_size`` missing or below 1, or a dtype other than string or integer.

    Example:
        >>> categorical_column_with_hash_bucket("city", 0)
        Traceback (most recent call last):
        ValueError: hash_bucket_size must be at least 1. hash_bucket_size: 0, key: city
    """
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    dtype = dtypes.as_dtype(dtype)
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"dtype must be string or integer. dtype: {dtype}, column_name: {key}")
    return _HashedCategoricalColumn(key, hash_bucket_size, dtype)


class _VocabularyListCategoricalColumn(
    _KeyedCategoricalColumn,
    collections.namedtuple(
        "_VocabularyListCategoricalColumn", ["key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"]
    ),
):
    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        return _vocabulary_ids(
            inputs,
            self.key,
            self.dtype,
            lambda key_dtype: index_table_from_tensor(
                vocabulary_list=tuple(self.vocabulary_list),
                default_value=self.default_value,
                num_oov_buckets=self.num_oov_buckets,
                dtype=key_dtype,
                name=f"{self.key}_lookup",
            ),
        )

    @property
    def _num_buckets(self) -> int:
        return len(self.vocabulary_list) + self.num_oov_buckets


def categorical_column_with_vocabulary_list(
    key: str, vocabulary_list: Any, dtype: Any = None, default_value: int = -1, num_oov_buckets: int = 0
) -> Any:
    """Ids: a value's position in ``vocabulary_list``; others ``default_value``, or a hash bucket after the list.

    Raises:
        ValueError: an empty or repeating list, both ``num_oov_buckets`` and ``default_value``, or dtypes that
            do not match.

    Example:
        >>> categorical_column_with_vocabulary_list("x", ["a", "a"])
        Traceback (most recent call last):
        ValueError: Duplicate keys in vocabulary_list ['a', 'a'], column_name: x
    """
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    vocabulary_dtype = dtypes.as_dtype(np.array(vocabulary_list).dtype)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    _assert_string_or_int(vocabulary_dtype, f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    else:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer != vocabulary_dtype.is_integer:
            raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not match, column_name: {key}")
    return _VocabularyListCategoricalColumn(key, tuple(vocabulary_list), dtype, default_value, num_oov_buckets)


class _VocabularyFileCategoricalColumn(
    _KeyedCategoricalColumn,
    collections.namedtuple(
        "_VocabularyFileCategoricalColumn",
        ["key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype", "default_value"],
    ),
):
    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        return _vocabulary_ids(
            inputs,
            self.key,
            self.dtype,
            lambda key_dtype: index_table_from_file(
                vocabulary_file=self.vocabulary_file,
                num_oov_buckets=self.num_oov_buckets,
                vocab_size=self.vocabulary_size,
                default_value=-1 if self.default_value is None else self.default_value,
                key_dtype=key_dtype,
                name=f"{self.key}_lookup",
            ),
        )

    @property
    def _num_buckets(self) -> int:
        return self.vocabulary_size + self.num_oov_buckets


def categorical_column_with_vocabulary_file(
    key: str,
    vocabulary_file: str,
    vocabulary_size: int | None = None,
    num_oov_buckets: int = 0,
    default_value: int | None = None,
    dtype: Any = dtypes.string,
) -> Any:
    """Ids: a value's line number in ``vocabulary_file`` (read by the task when tables are initialised).

    ``vocabulary_size`` defaults to the file's line count, read now.

    Raises:
        ValueError: no file (or a missing one when its size must be counted), a size below 1, or both
            ``num_oov_buckets`` and ``default_value``.

    Example:
        >>> categorical_column_with_vocabulary_file("x", "")
        Traceback (most recent call last):
        ValueError: Missing vocabulary_file in x.
    """
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        fs, path = fsspec.core.url_to_fs(vocabulary_file)
        if not fs.exists(path):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with fs.open(path, "rb") as f:
            vocabulary_size = sum(1 for _ in f)
        logging.info(
            "vocabulary_size = %d in %s is inferred from the number of elements in the vocabulary_file %s.",
            vocabulary_size,
            key,
            vocabulary_file,
        )
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    _assert_string_or_int(dtype, f"column_name: {key}")
    return _VocabularyFileCategoricalColumn(
        key, vocabulary_file, vocabulary_size, num_oov_buckets, dtype, default_value
    )


class _IdentityCategoricalColumn(
    _KeyedCategoricalColumn,
    collections.namedtuple("_IdentityCategoricalColumn", ["key", "num_buckets", "default_value"]),
):
    @property
    def _parse_example_spec(self) -> dict[str, Any]:
        return {self.key: VarLenFeature(dtypes.int64)}

    def _transform_feature(self, inputs: LazyBuilder) -> SparseTensor:
        tensor = to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        if not tensor.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {tensor.dtype}")
        values = tensor.values
        if values.dtype.base_dtype != dtypes.int64:
            values = cast(values, dtypes.int64, name="values")
        if self.default_value is not None:
            num_buckets = cast(self.num_buckets, dtypes.int64, name="num_buckets")
            zero = cast(0, dtypes.int64, name="zero")
            out_of_range = logical_or(less(values, zero), greater_equal(values, num_buckets), name="out_of_range")
            defaults = fill(dims=shape(values), value=cast(self.default_value, dtypes.int64), name="default_values")
            values = where(out_of_range, defaults, values)
        return SparseTensor(tensor.indices, values, tensor.dense_shape)

    @property
    def _num_buckets(self) -> int:
        return self.num_buckets


def categorical_column_with_identity(key: str, num_buckets: int, default_value: int | None = None) -> Any:
    """Ids: the integer values themselves, in ``[0, num_buckets)``; others ``default_value`` when given.

    Raises:
        ValueError: ``num_buckets`` below 1, or ``default_value`` outside ``[0, num_buckets)``.

    Example:
        >>> categorical_column_with_identity("x", 3, default_value=3)
        Traceback (most recent call last):
        ValueError: default_value 3 not in range [0, 3), column_name x
    """
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    return _IdentityCategoricalColumn(key, num_buckets, default_value)
