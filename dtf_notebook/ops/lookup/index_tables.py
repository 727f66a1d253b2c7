"""Index tables (``tf.contrib.lookup.index_table_from_tensor`` / ``_from_file``): a vocabulary's entries map to
their positions, other keys to ``default_value`` or, with ``num_oov_buckets``, to ``vocab_size + hash % n``
(TF's ``Fingerprint64`` hash of the key, its decimal text for integer keys).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     table = index_table_from_tensor(tf.constant([10, 20], tf.int64), dtype=tf.int64)
    ...     ids = table.lookup(tf.constant([20, 30], tf.int64))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.tables_initializer())
    ...         print(sess.run(ids))
    [ 1 -1]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.ops.array_ops import size
from dtf_notebook.ops.lookup.table_ops import HashTable, KeyValueTensorInitializer, TextFileIndex, TextFileInitializer
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.math_ops import add, cast, not_equal
from dtf_notebook.ops.math_ops import range as math_range
from dtf_notebook.ops.strings.conversion import as_string
from dtf_notebook.ops.strings.elementwise import string_to_hash_bucket_fast

__all__ = ["IdTableWithHashBuckets", "index_table_from_tensor", "index_table_from_file"]


class IdTableWithHashBuckets:
    """A table whose misses go to ``num_oov_buckets`` hash buckets after its entries (TF's class of that name).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     ids = IdTableWithHashBuckets(None, 5).lookup(tf.constant(["hello"]))
        ...     with tf.Session() as sess:
        ...         print(sess.run(ids))
        [1]
    """

    def __init__(self, table: HashTable | None, num_oov_buckets: int, key_dtype: Any = None, name: str | None = None):
        if num_oov_buckets < 0:
            raise ValueError(f"oov_buckets must be > 0 if no table is supplied, got {num_oov_buckets}")
        self._table = table
        self._num_oov_buckets = num_oov_buckets
        default = getattr(table, "key_dtype", dtypes.string)
        self.key_dtype = dtypes.as_dtype(key_dtype) if key_dtype is not None else default
        self.value_dtype = dtypes.int64
        self._name = name or (table.name if table is not None else "hash_bucket")

    @property
    def name(self) -> str:
        """The table's name (its inner table's)."""
        return self._name

    @property
    def init(self) -> Any:
        """The inner table's initializer (None without one)."""
        return None if self._table is None else self._table.init

    initializer = init

    def size(self, name: str | None = None) -> Any:
        """Entries plus buckets (int64 scalar)."""
        if self._table is None:
            return convert_to_tensor(self._num_oov_buckets, dtypes.int64, name=name)
        return add(self._table.size(), self._num_oov_buckets, name=name)

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The ids of ``keys`` (tensor or SparseTensor): their vocabulary position, else their bucket."""
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, self.lookup(keys.values, name), keys.dense_shape)
        values = convert_to_tensor(keys)
        if self._table is not None and self._table.key_dtype.base_dtype == dtypes.int64:
            values = cast(values, dtypes.int64)
        if self._num_oov_buckets == 0:
            return self._table.lookup(values, name=name)
        with name_scope(name, f"{self._name}_Lookup"):
            text = values if values.dtype.base_dtype == dtypes.string else as_string(values)
            buckets = string_to_hash_bucket_fast(text, num_buckets=self._num_oov_buckets, name="hash_bucket")
            if self._table is None:
                return buckets
            ids = self._table.lookup(values)
            buckets = add(buckets, self._table.size())
            return where(not_equal(ids, self._table.default_value), ids, buckets)


def _check_oov(num_oov_buckets: int) -> None:
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets}.")


def index_table_from_tensor(
    vocabulary_list: Any,
    num_oov_buckets: int = 0,
    default_value: int = -1,
    hasher_spec: Any = None,
    dtype: Any = dtypes.string,
    name: str | None = None,
) -> Any:
    """A table from the entries of ``vocabulary_list`` to their positions (int64).

    Raises:
        ValueError: an empty vocabulary, a negative ``num_oov_buckets``, or a vocabulary of another kind than
            ``dtype`` (integers against strings).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     index_table_from_tensor(None)
        Traceback (most recent call last):
        ValueError: vocabulary_list must be specified.
    """
    if vocabulary_list is None:
        raise ValueError("vocabulary_list must be specified.")
    _check_oov(num_oov_buckets)
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_integer and dtype.base_dtype != dtypes.string:
        raise TypeError("Only integer and string keys are supported.")
    with name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(f"Expected {'integer' if dtype.is_integer else 'non-integer'}, got {keys.dtype}.")
        if not dtype.is_integer and keys.dtype.base_dtype != dtype:
            raise ValueError(f"Expected {dtype}, got {keys.dtype}.")
        values = cast(math_range(size(keys)), dtypes.int64)
        with name_scope(None, "hash_table"):
            table_keys = cast(keys, dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(
                table_keys, values, table_keys.dtype.base_dtype, dtypes.int64, "table_init"
            )
            table: Any = HashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets, key_dtype=dtype)
        return table


def index_table_from_file(
    vocabulary_file: Any = None,
    num_oov_buckets: int = 0,
    vocab_size: int | None = None,
    default_value: int = -1,
    hasher_spec: Any = None,
    key_dtype: Any = dtypes.string,
    name: str | None = None,
    key_column_index: int = TextFileIndex.WHOLE_LINE,
    value_column_index: int = TextFileIndex.LINE_NUMBER,
    delimiter: str = "\t",
) -> Any:
    """A table from the lines of ``vocabulary_file`` (read when the table is initialised) to their numbers.

    Raises:
        ValueError: no file, a negative ``num_oov_buckets`` or a ``vocab_size`` below 1.
        TypeError: keys neither strings nor integers.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     index_table_from_file("")
        Traceback (most recent call last):
        ValueError: vocabulary_file must be specified and must not be empty.
    """
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("vocabulary_file must be specified and must not be empty.")
    _check_oov(num_oov_buckets)
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}. (vocabulary_file: {vocabulary_file})")
    key_dtype = dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype.base_dtype != dtypes.string:
        raise TypeError("Only integer and string keys are supported.")
    with name_scope(name, "string_to_index"):
        with name_scope(None, "hash_table"):
            init = TextFileInitializer(
                vocabulary_file,
                dtypes.int64 if key_dtype.is_integer else key_dtype,
                key_column_index,
                dtypes.int64,
                value_column_index,
                vocab_size=vocab_size,
                delimiter=delimiter,
                name="table_init",
            )
            table: Any = HashTable(init, default_value)
        if num_oov_buckets:
            table = IdTableWithHashBuckets(table, num_oov_buckets, key_dtype=key_dtype)
        return table
