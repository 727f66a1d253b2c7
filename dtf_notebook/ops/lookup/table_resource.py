"""The static hash table a ``HashTableV2`` op holds in its task's resource containers.

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> table = HashTableResource("t", dtypes.string, dtypes.int64)
    >>> table.initialize([b"a", b"b"], [0, 1], "init")
    >>> table.find([b"b", b"c"], -1, "lookup"), table.size()
    ([1, -1], 2)
"""

from __future__ import annotations

import threading
from typing import Any

from dtf_notebook import errors
from dtf_notebook.runtime.queues import SharedResource

__all__ = ["HashTableResource"]


class HashTableResource(SharedResource):
    """A read-only map filled once (TF's ``HashTable``): later fills must bring the same data.

    Args:
        name: Shared name.
        key_dtype, value_dtype: The table's DTypes.
        container, mgr, device: See :class:`~dtf_notebook.runtime.queues.SharedResource`.

    Example:
        >>> from dtf_notebook.framework import dtypes
        >>> HashTableResource("t", dtypes.int64, dtypes.int64).find([1], 0, "lookup")
        Traceback (most recent call last):
        dtf_notebook.errors.FailedPreconditionError: Table not initialized.
    """

    kind = "HashTable"

    def __init__(
        self, name: str, key_dtype: Any, value_dtype: Any, container: str = "", mgr: Any = None, device: str = ""
    ) -> None:
        super().__init__(name, container, mgr, device)
        self.key_dtype = key_dtype
        self.value_dtype = value_dtype
        self._table: dict[Any, Any] | None = None
        self._lock = threading.Lock()

    def initialize(self, keys: list, values: list, node: str) -> None:
        """Fills the table; a second fill with other data is FailedPreconditionError (the same data: no-op)."""
        if len(keys) != len(values):
            raise errors.InvalidArgumentError(
                None, None, f"{node}: keys and values must have the same size {len(keys)} vs {len(values)}"
            )
        table: dict[Any, Any] = {}
        for key, value in zip(keys, values, strict=True):
            if key in table and table[key] != value:
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    f"{node}: HashTable has different value for same key. Key {key!r} has "
                    f"{table[key]!r} and trying to add value {value!r}",
                )
            table[key] = value
        with self._lock:
            if self._table is None:
                self._table = table
            elif self._table != table:
                raise errors.FailedPreconditionError(
                    None, None, f"{node}: Table was already initialized with different data."
                )

    def find(self, keys: list, default: Any, node: str) -> list:
        """The values of ``keys``, ``default`` for the keys not in the table."""
        table = self._table
        if table is None:
            raise errors.FailedPreconditionError(None, None, "Table not initialized.")
        return [table.get(k, default) for k in keys]

    def size(self) -> int:
        """The number of entries (0 before the table is filled)."""
        return len(self._table or {})
