"""Reusable receive buffers for large tensors, so a steady stream of them does not fault in fresh pages.

A fresh 64 MiB ``np.empty`` is a new memory mapping whose 16,384 pages the kernel zeroes and maps one
by one on first write: on a 2-core machine that costs as much as moving the bytes over loopback.
:class:`BufferPool` keeps a few large buffers and hands one out again once nothing refers to it any more:
every numpy view, and every torch tensor made with ``torch.from_numpy``, holds a reference to the
buffer, so a buffer whose reference count is back to the pool's own is provably unused.

Example:
    >>> pool = BufferPool(max_bytes=1 << 20, min_bytes=0)
    >>> a = pool.take(1000)
    >>> address = a.ctypes.data
    >>> a.nbytes, pool.take(1000).ctypes.data == address   # still in use: another buffer
    (1000, False)
    >>> del a
    >>> pool.take(1000).ctypes.data == address             # released: handed out again
    True
"""

from __future__ import annotations

import sys
import threading

import numpy as np

# References to a pooled buffer when nobody else holds it: the pool's list and getrefcount's argument.
_FREE_REFS = 2


class BufferPool:
    """Large byte buffers, recycled once every view of them is gone.

    Args:
        max_bytes: Most bytes the pool keeps; beyond it buffers are plain fresh allocations.
        min_bytes: Smaller requests are not pooled (the allocator recycles small blocks well on its own).

    Thread-safe.

    Example:
        >>> pool = BufferPool(max_bytes=1 << 20, min_bytes=1024)
        >>> big, small = pool.take(4096), pool.take(10)
        >>> big.dtype, big.nbytes, small.nbytes, pool.nbytes   # only the large buffer is pooled
        (dtype('uint8'), 4096, 10, 4096)
    """

    def __init__(self, max_bytes: int = 1 << 30, min_bytes: int = 4 << 20) -> None:
        self.max_bytes = max_bytes
        self.min_bytes = min_bytes
        self._buffers: list[np.ndarray] = []
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes the pool holds (in use or free)."""
        return sum(b.nbytes for b in self._buffers)

    def take(self, nbytes: int) -> np.ndarray:
        """A writable uint8 array of exactly ``nbytes`` (a view of a pooled buffer when one is free)."""
        if nbytes < self.min_bytes:
            return np.empty(nbytes, dtype=np.uint8)
        buffers = self._buffers
        with self._lock:
            for i in range(len(buffers)):
                size = buffers[i].nbytes
                if nbytes <= size <= 2 * nbytes and self._free(i):
                    return buffers[i][:nbytes]
            # Make room by dropping free buffers; a request that still does not fit is not pooled.
            held = self.nbytes
            i = 0
            while held + nbytes > self.max_bytes and i < len(buffers):
                if self._free(i):
                    held -= buffers.pop(i).nbytes
                else:
                    i += 1
            buffer = np.empty(nbytes, dtype=np.uint8)
            if held + nbytes <= self.max_bytes:
                buffers.append(buffer)
            return buffer[:nbytes]

    def _free(self, i: int) -> bool:
        # Indexing without a local name keeps the count at the pool's reference plus getrefcount's argument.
        return sys.getrefcount(self._buffers[i]) == _FREE_REFS


RECEIVE_POOL = BufferPool()
"""The process's pool for large tensors received over the wire and large values copied out of a session."""


def copy_to_pool(array: np.ndarray, pool: BufferPool = RECEIVE_POOL) -> np.ndarray:
    """A copy of ``array`` (C-contiguous), in a pooled buffer when it is large.

    Example:
        >>> copy_to_pool(np.arange(3.0)).tolist()
        [0.0, 1.0, 2.0]
    """
    if array.nbytes < pool.min_bytes:
        return np.array(array, order="C")  # not pooled: numpy's own copy is the quickest
    out = pool.take(array.nbytes).view(array.dtype).reshape(array.shape)
    np.copyto(out, array)
    return out


__all__ = ["RECEIVE_POOL", "BufferPool", "copy_to_pool"]
