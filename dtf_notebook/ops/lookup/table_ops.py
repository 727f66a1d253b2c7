"""Static hash tables in the graph: ``HashTableV2`` and the ops that fill and read it.

The table is a :class:`HashTableResource` in the resource containers of the task its ``HashTableV2`` op runs
on (a handle op, as the queues' are); ``InitializeTableV2`` fills it from key and value tensors,
``InitializeTableFromTextFileV2`` from a vocabulary file (read on that task, inside its file roots), and
``LookupTableFindV2`` maps keys to values, unknown keys to the default value. A table is read-only once
filled: filling it again with the same data does nothing, with other data fails, as in TF; reading it before
it is filled is ``FailedPreconditionError``.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops.lookup import HashTable, KeyValueTensorInitializer
    >>> with tf.Graph().as_default():
    ...     table = HashTable(KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int64)), -1)
    ...     ids = table.lookup(tf.constant(["b", "z"]))
    ...     with tf.Session() as sess:
    ...         sess.run(tf.tables_initializer())
    ...         print(sess.run(ids))
    [ 1 -1]
"""

from __future__ import annotations

from typing import Any

import fsspec
import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import scalar
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.data_flow.common import (
    HANDLE_SPEC,
    expect_resource,
    handle_kernel,
    register_handle_op,
    register_handle_user,
    using_handle,
)
from dtf_notebook.ops.lookup.table_resource import HashTableResource
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["HashTable", "KeyValueTensorInitializer", "TextFileInitializer", "TextFileIndex"]


class TextFileIndex:
    """Special column indices of a vocabulary file line (``tf.lookup.TextFileIndex``).

    Example:
        >>> TextFileIndex.WHOLE_LINE, TextFileIndex.LINE_NUMBER
        (-2, -1)
    """

    WHOLE_LINE = -2
    LINE_NUMBER = -1


# ---- kernels -----------------------------------------------------------------------------------------
def _as_keys(value: Any, dtype: dtypes.DType) -> list:
    array = value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value, dtype=object)
    if dtype.is_string:
        return [bytes(k) for k in array.reshape(-1)]
    return array.reshape(-1).tolist()


def _output(values: list, shape: tuple, dtype: dtypes.DType) -> Any:
    if dtype.is_string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    return torch.from_numpy(np.asarray(values, dtype=dtype.as_numpy_dtype).reshape(shape))


def _make_table(op: Operation, container: str, name: str, mgr: Any, device: str) -> HashTableResource:
    return HashTableResource(name, op.get_attr("key_dtype"), op.get_attr("value_dtype"), container, mgr, device)


def _verify_table(op: Operation, resource: Any) -> None:
    table = expect_resource(resource, HashTableResource, op)
    if (table.key_dtype, table.value_dtype) != (op.get_attr("key_dtype"), op.get_attr("value_dtype")):
        raise errors.InvalidArgumentError(
            None,
            op,
            f"Table '{table.name}' maps {table.key_dtype.name} to {table.value_dtype.name}, but {op.name} "
            f"asks for {op.get_attr('key_dtype').name} to {op.get_attr('value_dtype').name}",
        )


register_handle_op("HashTableV2", lambda op: [HANDLE_SPEC], handle_kernel(_make_table, _verify_table))


def _init_run(op: Operation):
    def run(table: Any, keys: Any, values: Any) -> None:
        table = expect_resource(table, HashTableResource, op)
        table.initialize(_as_keys(keys, table.key_dtype), _as_keys(values, table.value_dtype), op.name)

    return run


def _text_file_kernel(op: Operation, ctx: Any):
    files = ctx.state.files

    def run(table: Any, filename: Any) -> None:
        table = expect_resource(table, HashTableResource, op)
        path = bytes(np.asarray(filename, dtype=object).reshape(())[()]).decode("utf-8")
        checked = files.check(path, "read")
        try:
            with fsspec.open(checked, "rb") as f:
                text = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(None, op, f"{path}; No such file or directory") from None
        keys, values = _parse_vocabulary(op, path, text, table)
        table.initialize(keys, values, op.name)

    return run


def _column(op: Operation, path: str, line_number: int, line: bytes, index: int, dtype: dtypes.DType) -> Any:
    delimiter = op.get_attr("delimiter").encode("utf-8")
    if index == TextFileIndex.LINE_NUMBER:
        return line_number
    if index == TextFileIndex.WHOLE_LINE:
        field = line
    else:
        fields = line.split(delimiter)
        if index >= len(fields):
            raise errors.InvalidArgumentError(
                None,
                op,
                f"Invalid number of columns in {path} line {line_number} ({line!r}) : expected {index + 1}"
                f" got {len(fields)}",
            )
        field = fields[index]
    if dtype.is_string:
        return field
    try:
        return int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, op, f"Field {field!r} in line {line_number} of {path} is not a valid {dtype.name}"
        ) from None


def _parse_vocabulary(op: Operation, path: str, text: bytes, table: HashTableResource) -> tuple[list, list]:
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    lines = [line.removesuffix(b"\r") for line in lines]
    vocab_size = op.get_attr("vocab_size")
    if vocab_size != -1:
        if len(lines) < vocab_size:
            raise errors.InvalidArgumentError(
                None, op, f"Invalid vocab_size in {path}: expected {vocab_size} got {len(lines)}"
            )
        lines = lines[:vocab_size]
    key_index, value_index = op.get_attr("key_index"), op.get_attr("value_index")
    keys = [_column(op, path, n, line, key_index, table.key_dtype) for n, line in enumerate(lines)]
    values = [_column(op, path, n, line, value_index, table.value_dtype) for n, line in enumerate(lines)]
    return keys, values


def _find_run(op: Operation):
    def run(table: Any, keys: Any, default: Any) -> Any:
        table = expect_resource(table, HashTableResource, op)
        shape = tuple(keys.shape)
        found = table.find(_as_keys(keys, table.key_dtype), _as_keys(default, table.value_dtype)[0], op.name)
        return _output(found, shape, table.value_dtype)

    return run


def _size_run(op: Operation):
    def run(table: Any) -> Any:
        return torch.tensor(expect_resource(table, HashTableResource, op).size(), dtype=torch.int64)

    return run


def _find_infer(op: Operation) -> list:
    return [(op.inputs[2].dtype.base_dtype, op.inputs[1].shape)]


register_handle_user("InitializeTableV2", lambda op: [], _init_run)
op_registry.register_op(
    "InitializeTableFromTextFileV2",
    infer=lambda op: [],
    kernel=_text_file_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_inputs=(0,),
    stateful=True,
    cpu_only=True,
)
register_handle_user("LookupTableFindV2", _find_infer, _find_run)
register_handle_user("LookupTableSizeV2", lambda op: [(dtypes.int64, scalar())], _size_run)


# ---- Python API ----------------------------------------------------------------------------------------
class KeyValueTensorInitializer:
    """Fills a table from a tensor of keys and one of values (``tf.lookup.KeyValueTensorInitializer``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     KeyValueTensorInitializer([1, 2], [10, 20]).key_dtype
        tf.int32
    """

    def __init__(
        self, keys: Any, values: Any, key_dtype: Any = None, value_dtype: Any = None, name: str | None = None
    ) -> None:
        with name_scope(name, "key_value_init", [keys, values]) as scope:
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        self.key_dtype = self._keys.dtype.base_dtype
        self.value_dtype = self._values.dtype.base_dtype

    def initialize(self, table: HashTable) -> Operation:
        """The op that fills ``table`` (added to ``GraphKeys.TABLE_INITIALIZERS``)."""
        with using_handle(table.resource_handle, self._name, "table_init") as scope:
            op = make_op("InitializeTableV2", [table.resource_handle, self._keys, self._values], {}, name=scope)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class TextFileInitializer:
    """Fills a table from the lines of a text file (``tf.lookup.TextFileInitializer``).

    ``key_index``/``value_index`` pick a ``delimiter``-separated column, or :class:`TextFileIndex`'s whole line
    (-2) or line number (-1); ``vocab_size`` (-1: all) takes the first lines only.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     TextFileInitializer("vocab.txt", tf.string, -2, tf.int64, -1).value_dtype
        tf.int64
    """

    def __init__(
        self,
        filename: Any,
        key_dtype: Any,
        key_index: int,
        value_dtype: Any,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: str | None = None,
    ) -> None:
        self.key_dtype = dtypes.as_dtype(key_dtype)
        self.value_dtype = dtypes.as_dtype(value_dtype)
        if key_index == TextFileIndex.LINE_NUMBER and self.key_dtype != dtypes.int64:
            raise ValueError(f"Signature mismatch. Keys must be dtype {dtypes.int64}, got {self.key_dtype}.")
        if value_index == TextFileIndex.WHOLE_LINE and not self.value_dtype.is_string:
            raise ValueError(f"Signature mismatch. Values must be dtype {dtypes.string}, got {self.value_dtype}.")
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"Invalid vocab_size {vocab_size}.")
        self._filename = filename
        self._key_index, self._value_index = int(key_index), int(value_index)
        self._vocab_size = -1 if vocab_size is None else int(vocab_size)
        self._delimiter = delimiter
        self._name = name

    def initialize(self, table: HashTable) -> Operation:
        """The op that fills ``table`` (added to ``GraphKeys.TABLE_INITIALIZERS``)."""
        with using_handle(table.resource_handle, self._name, "text_file_init") as scope:
            filename = convert_to_tensor(self._filename, dtype=dtypes.string, name="asset_filepath")
            attrs = {
                "key_index": self._key_index,
                "value_index": self._value_index,
                "vocab_size": self._vocab_size,
                "delimiter": self._delimiter,
            }
            op = make_op("InitializeTableFromTextFileV2", [table.resource_handle, filename], attrs, name=scope)
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class HashTable:
    """A static table from keys to values, filled once by its initializer (``tf.contrib.lookup.HashTable``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     table = HashTable(KeyValueTensorInitializer([3, 5], [1.5, 2.5]), -1.0)
        ...     with tf.Session() as sess:
        ...         sess.run(table.init)
        ...         print(sess.run(table.lookup(tf.constant([5, 4]))), sess.run(table.size()))
        [ 2.5 -1. ] 2
    """

    def __init__(self, initializer: Any, default_value: Any, shared_name: str | None = None, name: str | None = None):
        self.key_dtype = initializer.key_dtype
        self.value_dtype = initializer.value_dtype
        with name_scope(name, "hash_table") as scope:
            attrs = {
                "container": "",
                "shared_name": shared_name or "",
                "key_dtype": self.key_dtype,
                "value_dtype": self.value_dtype,
                "use_node_name_sharing": False,
            }
            self.resource_handle = make_op("HashTableV2", [], attrs, name=scope).outputs[0]
            self._name = scope.rstrip("/")
            self.default_value = convert_to_tensor(default_value, dtype=self.value_dtype)
            self.init = initializer.initialize(self)

    @property
    def name(self) -> str:
        """The table op's name."""
        return self._name

    @property
    def initializer(self) -> Operation:
        """The op that fills the table."""
        return self.init

    def size(self, name: str | None = None) -> Tensor:
        """The number of entries (int64 scalar)."""
        with using_handle(self.resource_handle, name, f"{self._name}_Size") as scope:
            return make_op("LookupTableSizeV2", [self.resource_handle], {}, name=scope).outputs[0]

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        """The values of ``keys`` (a tensor or SparseTensor of the key dtype), the default for unknown keys.

        Raises:
            TypeError: ``keys`` are not of the table's key dtype.
        """
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, self.lookup(keys.values, name), keys.dense_shape)
        keys = convert_to_tensor(keys, dtype=self.key_dtype)
        if keys.dtype.base_dtype != self.key_dtype:
            raise TypeError(f"Signature mismatch. Keys must be dtype {self.key_dtype}, got {keys.dtype}.")
        with using_handle(self.resource_handle, name, f"{self._name}_Lookup") as scope:
            inputs = [self.resource_handle, keys, self.default_value]
            return make_op("LookupTableFindV2", inputs, {}, name=scope).outputs[0]
