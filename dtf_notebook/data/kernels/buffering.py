"""Runtime transformations with threads or storage: prefetch, map with ``num_parallel_calls``, and cache.

``prefetch`` runs its input on a background thread that keeps up to ``buffer_size`` elements ready, so the
pipeline's work overlaps the training step (torch kernels release the GIL); ``map`` with ``num_parallel_calls``
runs the function for that many elements at once on a thread pool, in input order. Both threads stop when the
iterator is closed (re-initialised) or its resource is removed from its container (its session closed or reset),
and a consumer waiting on them gives up at its step's deadline or abort, as every blocked kernel here does.

``cache`` keeps the elements of the first complete pass in memory, or in a file (``filename``): later passes read
them back. The file is this library's own (TFRecord-framed elements, ``<filename>.dtf-cache``), written to a
temporary name and renamed when the pass completes, so a partial pass never leaves a cache behind.

Example:
    >>> import torch
    >>> from dtf_notebook.data.kernels.common import Env
    >>> from dtf_notebook.data.kernels.sources import RangeDataset
    >>> it = PrefetchDataset(RangeDataset(0, 3, 1, torch.int64), 2, Env()).iterator()
    >>> [it.next(None), it.next(None), it.next(None), it.next(None)]
    [(tensor(0),), (tensor(1),), (tensor(2),), None]
    >>> it.close()
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import itertools
import os
import struct
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.data.kernels.common import Env, RtDataset, RtIterator, invalid
from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io import file_io
from dtf_notebook.lib.io.tf_record import TFRecordWriter, tf_record_iterator
from dtf_notebook.runtime import values
from dtf_notebook.runtime.float_env import flush_denormals_in_this_thread
from dtf_notebook.runtime.queues import POLL_SECS

__all__ = [
    "PrefetchDataset",
    "ParallelMapDataset",
    "CacheDataset",
    "CACHE_SUFFIX",
    "encode_element",
    "decode_element",
    "check_cache_name",
]

_END = object()  # the end of the sequence, as an item of a buffer


class _Failure:
    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def _wait(cond: threading.Condition, ready: Callable[[], bool], step: Any, env: Env, what: str) -> None:
    """Waits (holding ``cond``) until ``ready()``, giving up like every blocked kernel (deadline, abort, removal)."""
    while not ready():
        timeout = POLL_SECS
        if step is not None and step.deadline is not None:
            timeout = max(0.0, min(timeout, step.deadline - time.monotonic()))
        cond.wait(timeout)
        if ready():
            return
        if step is not None:
            step.check_waiting(what)
        if not env.alive():
            raise errors.CancelledError(
                None, None, f"The iterator was removed from its container while a step waited for {what}"
            )


_live: weakref.WeakSet[_PrefetchIterator] = weakref.WeakSet()


@atexit.register
def _stop_threads() -> None:
    """Stops the prefetch threads before the interpreter goes: one killed inside a torch kernel aborts the process."""
    iterators = list(_live)
    for it in iterators:
        it.close()
    for it in iterators:
        thread = it._thread
        if thread is not None:
            thread.join(timeout=2.0)


def _one_kernel_thread() -> None:
    """A pipeline thread runs its kernels on one thread each (OpenMP's count is per thread): the pipeline's small
    tensors gain nothing from more, and more would compete with the training step's kernels for the cores. It
    flushes denormals to zero, as every thread that runs kernels does (see ``runtime.float_env``)."""
    torch.set_num_threads(1)
    flush_denormals_in_this_thread()


class _PrefetchIterator(RtIterator):
    def __init__(self, source: RtIterator, size: int, env: Env) -> None:
        self._source, self._size, self._env = source, size, env
        self._cond = threading.Condition()
        self._items: collections.deque[Any] = collections.deque()
        self._closed = False
        self._thread: threading.Thread | None = None

    def _fill(self) -> None:
        cond, items, source, env = self._cond, self._items, self._source, self._env
        _one_kernel_thread()
        try:
            while True:
                with cond:
                    while len(items) >= self._size and not self._closed:
                        cond.wait(POLL_SECS)
                        if not env.alive():
                            self._closed = True
                    if self._closed:
                        return
                try:
                    element = source.next(None)
                except Exception as e:  # noqa: BLE001 - handed to the consumer, which raises it for this element
                    element = _Failure(e)
                with cond:
                    items.append(_END if element is None else element)
                    cond.notify_all()
                if element is None:
                    return
                # Hand the GIL over now: a consumer woken by the notify would otherwise wait for the interpreter's
                # switch interval (5 ms) while this thread computes the next element.
                time.sleep(0)
        finally:
            source.close()

    def next(self, step: Any) -> tuple | None:
        cond, items = self._cond, self._items
        with cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._fill, name="dtf-data-prefetch", daemon=True)
                self._thread.start()
                _live.add(self)
            thread = self._thread
            if not items:
                if step is not None:
                    step.before_wait()
                _wait(cond, lambda: bool(items) or not thread.is_alive(), step, self._env, "a prefetched element")
            if not items:
                raise errors.InternalError(None, None, "The prefetch thread of the input pipeline stopped")
            item = items[0]
            if item is _END:
                return None
            items.popleft()
            cond.notify_all()
        if type(item) is _Failure:
            raise item.error
        return item

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            started = self._thread is not None
        if not started:
            self._source.close()


class PrefetchDataset(RtDataset):
    """``prefetch(buffer_size)``: a background thread keeps up to ``buffer_size`` elements ready.

    Example:
        >>> PrefetchDataset.__name__
        'PrefetchDataset'
    """

    def __init__(self, source: RtDataset, buffer_size: int, env: Env) -> None:
        if buffer_size < 0:
            buffer_size = max(2, os.cpu_count() or 1)  # AUTOTUNE
        self.source, self.buffer_size, self.env = source, buffer_size, env

    def iterator(self) -> RtIterator:
        if self.buffer_size == 0:
            return self.source.iterator()
        return _PrefetchIterator(self.source.iterator(), self.buffer_size, self.env)


class _ParallelMapIterator(RtIterator):
    def __init__(self, source: RtIterator, fn: Callable[[Sequence[Any]], list[Any]], width: int, env: Env) -> None:
        self._source, self._fn, self._width, self._env = source, fn, width, env
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pending: collections.deque[concurrent.futures.Future] = collections.deque()
        self._end = False

    def next(self, step: Any) -> tuple | None:
        pending = self._pending
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                self._width, thread_name_prefix="dtf-data-map", initializer=_one_kernel_thread
            )
        while not self._end and len(pending) < self._width:
            try:
                element = self._source.next(step)
            except errors.OpError as e:
                failed: concurrent.futures.Future = concurrent.futures.Future()
                failed.set_exception(e)
                pending.append(failed)
                break
            if element is None:
                self._end = True
                break
            pending.append(self._pool.submit(self._fn, element))
        if not pending:
            return None
        future = pending.popleft()
        while True:
            try:
                return tuple(future.result(timeout=POLL_SECS))
            except concurrent.futures.TimeoutError:
                if step is not None:
                    step.check_waiting("a mapped element")
                if not self._env.alive():
                    raise errors.CancelledError(None, None, "The iterator was removed from its container") from None

    def close(self) -> None:
        self._stop_pool()
        self._source.close()

    def _stop_pool(self) -> None:
        for future in self._pending:
            future.cancel()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def __del__(self) -> None:
        # A pass nobody closes (its session was closed) still lets its worker threads go.
        self._stop_pool()


class ParallelMapDataset(RtDataset):
    """``map(fn, num_parallel_calls=n)``: ``fn`` runs for up to ``n`` elements at once; the order is the input's.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> it = ParallelMapDataset(RangeDataset(0, 4, 1, torch.int64), lambda e: [e[0] + 1], 3, Env()).iterator()
        >>> [int(it.next(None)[0]) for _ in range(4)], it.next(None)
        ([1, 2, 3, 4], None)
        >>> it.close()
    """

    def __init__(self, source: RtDataset, fn: Callable[[Sequence[Any]], list[Any]], width: int, env: Env) -> None:
        if width < 0:
            width = os.cpu_count() or 1  # AUTOTUNE
        self.source, self.fn, self.width, self.env = source, fn, max(1, width), env

    def iterator(self) -> RtIterator:
        return _ParallelMapIterator(self.source.iterator(), self.fn, self.width, self.env)


# ---- cache -------------------------------------------------------------------------------------------------------
#: Appended to a cache's ``filename``: the file is this library's format, not TF's tensor bundle.
CACHE_SUFFIX = ".dtf-cache"
_HEAD = struct.Struct("<BB")  # dtype enum, rank
_temp_ids = itertools.count(1)


def encode_element(element: Sequence[Any]) -> bytes:
    """One element as bytes: per component its dtype, shape and data (strings length-prefixed).

    Example:
        >>> data = encode_element((torch.tensor([1, 2]), np.array([b"ab"], dtype=object)))
        >>> decoded = decode_element(data); decoded[0], decoded[1].tolist()
        (tensor([1, 2]), [b'ab'])
    """
    parts = [struct.pack("<I", len(element))]
    for value in element:
        dtype = values.dtype_of(value)
        shape = tuple(int(d) for d in value.shape)
        parts.append(_HEAD.pack(dtype.as_datatype_enum, len(shape)))
        parts.append(struct.pack(f"<{len(shape)}q", *shape))
        if dtype.is_string:
            flat = [v if isinstance(v, bytes) else bytes(v) for v in np.asarray(value, dtype=object).reshape(-1)]
            parts.append(struct.pack(f"<{len(flat)}Q", *[len(v) for v in flat]))
            parts.extend(flat)
        else:
            parts.append(np.ascontiguousarray(values.to_numpy(value)).tobytes())
    return b"".join(parts)


def decode_element(data: bytes) -> tuple:
    """The element :func:`encode_element` wrote.

    Raises:
        DataLossError: the bytes are not an encoded element.

    Example:
        >>> decode_element(encode_element((torch.tensor(2.5),)))
        (tensor(2.5000),)
    """
    try:
        (count,) = struct.unpack_from("<I", data, 0)
        pos = 4
        out = []
        for _ in range(count):
            enum, rank = _HEAD.unpack_from(data, pos)
            pos += _HEAD.size
            shape = struct.unpack_from(f"<{rank}q", data, pos)
            pos += 8 * rank
            dtype = dtypes.as_dtype(enum)
            n = int(np.prod(shape)) if rank else 1
            if dtype.is_string:
                lengths = struct.unpack_from(f"<{n}Q", data, pos)
                pos += 8 * n
                flat = np.empty(n, dtype=object)
                for i, length in enumerate(lengths):
                    flat[i] = data[pos : pos + length]
                    pos += length
                out.append(flat.reshape(shape))
            else:
                size = n * dtype.np_dtype.itemsize
                array = np.frombuffer(data, dtype=dtype.np_dtype, count=n, offset=pos).reshape(shape)
                pos += size
                out.append(values.from_numpy(array.copy(), torch.device("cpu")))
        return tuple(out)
    except (struct.error, TypeError, ValueError) as e:
        raise errors.DataLossError(None, None, f"A cached element is corrupt ({e})") from None


class _ListIterator(RtIterator):
    def __init__(self, elements: list[tuple]) -> None:
        self._elements, self._i = elements, 0

    def next(self, step: Any) -> tuple | None:
        i = self._i
        if i >= len(self._elements):
            return None
        self._i = i + 1
        return self._elements[i]


class _MemoryWriter(RtIterator):
    def __init__(self, owner: CacheDataset) -> None:
        self._owner, self._source = owner, owner.source.iterator()
        self._elements: list[tuple] = []

    def next(self, step: Any) -> tuple | None:
        element = self._source.next(step)
        if element is None:
            if self._owner.memory is None:
                self._owner.memory = self._elements
            return None
        self._elements.append(element)
        return element

    def close(self) -> None:
        self._source.close()


class _FileWriter(RtIterator):
    def __init__(self, owner: CacheDataset) -> None:
        self._owner, self._source = owner, owner.source.iterator()
        self._temp = f"{owner.path}.tmp-{os.getpid()}-{next(_temp_ids)}"
        owner.env.files.check(self._temp, "write")
        self._writer: TFRecordWriter | None = TFRecordWriter(self._temp)

    def next(self, step: Any) -> tuple | None:
        element = self._source.next(step)
        writer = self._writer
        if element is None:
            if writer is not None:
                writer.close()
                self._writer = None
                file_io.rename(self._temp, self._owner.path, overwrite=True)
            return None
        if writer is not None:
            writer.write(encode_element(element))
        return element

    def close(self) -> None:
        self._source.close()
        if self._writer is not None:  # a partial pass leaves no cache behind
            self._writer.close()
            self._writer = None
            if file_io.exists(self._temp):
                file_io.remove(self._temp)


class _FileReader(RtIterator):
    def __init__(self, path: str) -> None:
        self._records = tf_record_iterator(path)

    def next(self, step: Any) -> tuple | None:
        record = next(self._records, None)
        return None if record is None else decode_element(record)


class CacheDataset(RtDataset):
    """``cache(filename)``: the first complete pass's elements, kept in memory (``""``) or in a file.

    Example:
        >>> from dtf_notebook.data.kernels.sources import RangeDataset
        >>> ds = CacheDataset(RangeDataset(0, 2, 1, torch.int64), "", Env())
        >>> first = ds.iterator(); _ = [first.next(None) for _ in range(3)]
        >>> ds.memory is not None, ds.iterator().next(None)
        (True, (tensor(0),))
    """

    def __init__(self, source: RtDataset, filename: str, env: Env) -> None:
        self.source, self.env = source, env
        self.memory: list[tuple] | None = None
        self.path = filename + CACHE_SUFFIX if filename else ""
        if self.path:
            env.files.check(self.path, "read")

    def iterator(self) -> RtIterator:
        if not self.path:
            return _ListIterator(self.memory) if self.memory is not None else _MemoryWriter(self)
        if file_io.exists(self.path):
            return _FileReader(self.path)
        return _FileWriter(self)


def check_cache_name(filename: Any) -> str:
    """The cache's file name from its input value.

    Raises:
        InvalidArgumentError: the value is not a scalar string.

    Example:
        >>> check_cache_name(np.array(b"/tmp/cache", dtype=object))
        '/tmp/cache'
    """
    array = np.asarray(filename, dtype=object)
    if array.ndim != 0:
        raise invalid(f"filename must be a scalar string, got a tensor of shape {list(array.shape)}")
    value = array[()]
    return value.decode() if isinstance(value, bytes) else str(value)
