"""The iterator resource: where an iterator's position lives between ``Session.run`` calls.

An :class:`IteratorResource` sits in the resource containers of the task whose device runs the iterator's op
(``IteratorV2``, ``OneShotIterator``), under its container and shared name, exactly like a queue: every run (and,
with a ``shared_name``, every session) that names it continues the same pass. ``MakeIterator`` starts a new pass
(closing the old one's files and threads), ``IteratorGetNext`` takes the next element. Its string handle names the
device, container and name, so ``Iterator.from_string_handle`` finds it again on that device.

Example:
    >>> import torch
    >>> from dtf_notebook.data.kernels.sources import RangeDataset
    >>> r = IteratorResource("it", "", None, "/cpu:0", [], [])
    >>> r.reset(RangeDataset(0, 1, 1, torch.int64).iterator())
    >>> r.get_next(None)
    (tensor(0),)
    >>> r.get_next(None)
    Traceback (most recent call last):
    ...
    dtf_notebook.errors.OutOfRangeError: End of sequence
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.data.kernels.common import RtIterator, string_scalar
from dtf_notebook.runtime.queues import SharedResource

__all__ = ["IteratorResource", "parse_string_handle"]

_HANDLE_PREFIX = b"dtf-iterator\x00"


class IteratorResource(SharedResource):
    """An iterator's state: the current pass (None before the first initialisation) and its element structure.

    Args:
        name, container, mgr, device: See :class:`~dtf_notebook.runtime.queues.SharedResource`.
        types: The flat component dtypes it hands out; ``shapes``: their static shapes.

    Example:
        >>> IteratorResource("it", "", None, "/cpu:0", [], []).get_next(None)
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.FailedPreconditionError: GetNext() failed because the iterator has not been \
initialized. Ensure that you have run the initializer operation for this iterator before getting the next element.
    """

    kind = "Iterator"

    def __init__(self, name: str, container: str, mgr: Any, device: str, types: list[Any], shapes: list[Any]) -> None:
        super().__init__(name, container, mgr, device)
        self.types = list(types)
        self.shapes = list(shapes)
        self._iterator: RtIterator | None = None
        self._lock = threading.Lock()
        self._ended = False
        self._one_shot = threading.Lock()
        self._one_shot_done = False

    def reset(self, iterator: RtIterator) -> None:
        """Starts a new pass (the old one is closed)."""
        with self._lock:
            old, self._iterator = self._iterator, iterator
            self._ended = False
        if old is not None:
            old.close()

    def initialize_once(self, make: Callable[[], RtIterator]) -> None:
        """Starts the first pass with ``make()`` unless one was started (a one-shot iterator)."""
        if self._one_shot_done:
            return
        with self._one_shot:
            if not self._one_shot_done:
                self.reset(make())
                self._one_shot_done = True

    def get_next(self, step: Any) -> tuple:
        """The next element of the current pass.

        Raises:
            FailedPreconditionError: the iterator was never initialised.
            OutOfRangeError: the pass has ended ("End of sequence").
        """
        with self._lock:
            iterator = self._iterator
            if iterator is None:
                raise errors.FailedPreconditionError(
                    None,
                    None,
                    "GetNext() failed because the iterator has not been initialized. Ensure that you have run the "
                    "initializer operation for this iterator before getting the next element.",
                )
            if not self._ended:
                element = iterator.next(step)
                if element is not None:
                    return element
                self._ended = True
        raise errors.OutOfRangeError(None, None, "End of sequence")

    def string_handle(self) -> bytes:
        """The handle ``Iterator.from_string_handle`` takes: this device, container and name."""
        return _HANDLE_PREFIX + b"\x00".join(s.encode() for s in (self.device, self.container, self.name))

    def read(self) -> np.ndarray:
        """The string handle, when the handle tensor is read as a value."""
        return string_scalar(self.string_handle())

    def close(self) -> None:
        """Ends the current pass (its files and threads go)."""
        with self._lock:
            old, self._iterator = self._iterator, None
        if old is not None:
            old.close()


def parse_string_handle(handle: bytes) -> tuple[str, str, str]:
    """``(device, container, name)`` of an iterator string handle.

    Raises:
        InvalidArgumentError: the string is not an iterator handle.

    Example:
        >>> r = IteratorResource("it", "c", None, "/job:w/task:0/device:CPU:0", [], [])
        >>> parse_string_handle(r.string_handle())
        ('/job:w/task:0/device:CPU:0', 'c', 'it')
    """
    parts = handle[len(_HANDLE_PREFIX) :].split(b"\x00") if handle.startswith(_HANDLE_PREFIX) else []
    if len(parts) != 3:
        raise errors.InvalidArgumentError(
            None, None, f"Could not parse an iterator string handle from {handle[:60]!r}: use Iterator.string_handle()"
        )
    device, container, name = (p.decode() for p in parts)
    return device, container, name
