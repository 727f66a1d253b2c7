"""Runtime source datasets: tensors, slices, ranges, zip/concatenate, Python generators and the file readers.

The readers (text lines, TFRecord records, fixed-length records) open their files where the iterator runs, after
asking the task's :class:`~dtf_notebook.runtime.file_access.FileAccess`, through fsspec (so ``memory://`` and
object-store URLs work), with ``""``, ``"ZLIB"`` or ``"GZIP"`` compression as TF reads them.

Example:
    >>> import torch
    >>> it = RangeDataset(0, 5, 2, torch.int64).iterator()
    >>> [it.next(None), it.next(None), it.next(None), it.next(None)]
    [(tensor(0),), (tensor(2),), (tensor(4),), None]
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.data import generators
from dtf_notebook.data.kernels.common import (
    Env,
    RtDataset,
    RtIterator,
    dim0,
    gather,
    invalid,
    row,
    rows,
    string_scalar,
)
from dtf_notebook.data.kernels.sparse import SparseRows
from dtf_notebook.data.structure import is_structure
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io.gfile import GFile
from dtf_notebook.lib.io.tf_record import TFRecordOptions, tf_record_iterator
from dtf_notebook.runtime import values

__all__ = [
    "TensorsDataset",
    "TensorSlicesDataset",
    "RangeDataset",
    "ZipDataset",
    "ConcatenateDataset",
    "GeneratorDataset",
    "TextLineDataset",
    "TFRecordDataset",
    "FixedLengthRecordDataset",
]

_CHUNK = 256 * 1024  # bytes read at a time when the pipeline gives no buffer size


class _Once(RtIterator):
    def __init__(self, element: tuple) -> None:
        self._element: tuple | None = element

    def next(self, step: Any) -> tuple | None:
        element, self._element = self._element, None
        return element


class TensorsDataset(RtDataset):
    """``from_tensors``: one element.

    Example:
        >>> it = TensorsDataset([torch.tensor(1)]).iterator()
        >>> it.next(None), it.next(None)
        ((tensor(1),), None)
    """

    def __init__(self, components: Sequence[Any]) -> None:
        self.element = tuple(components)

    def iterator(self) -> RtIterator:
        return _Once(self.element)


_CHUNK_ROWS = 1024  # rows unbound at a time: one view per row costs far less than indexing each row


class _SlicesIterator(RtIterator):
    """Rows of the components, in order; it also hands out row *indices* (:meth:`next_index`, :meth:`gather`) so
    that a shuffle or batch above it can gather many rows at once."""

    def __init__(self, components: tuple, n: int) -> None:
        self.components, self._n, self._i = components, n, 0
        self._chunk_start, self._chunk_end = 0, 0
        self._chunk: list[Any] = []
        if components:
            self.next_batch = self._next_batch

    def next(self, step: Any) -> tuple | None:
        i = self._i
        if i >= self._n:
            return None
        self._i = i + 1
        if i >= self._chunk_end:
            end = min(self._n, i + _CHUNK_ROWS)
            self._chunk = [c[i:end].unbind(0) if isinstance(c, torch.Tensor) else None for c in self.components]
            self._chunk_start, self._chunk_end = i, end
        k = i - self._chunk_start
        return tuple([rows_[k] if rows_ is not None else row(c, i) for rows_, c in zip(self._chunk, self.components)])

    def next_index(self) -> int | None:
        """The next row's index (the row itself is not made), or None at the end."""
        i = self._i
        if i >= self._n:
            return None
        self._i = i + 1
        return i

    def gather(self, indices: Sequence[int]) -> tuple:
        """The rows ``indices`` of every component, stacked."""
        return tuple([gather(c, indices) for c in self.components])

    def _next_batch(self, n: int, step: Any) -> tuple | None:
        i = self._i
        if i >= self._n:
            return None
        j = min(self._n, i + n)
        self._i = j
        return tuple([rows(c, i, j) for c in self.components])


class TensorSlicesDataset(RtDataset):
    """``from_tensor_slices``: one element per row of dimension 0 of every component; the three components of a
    SparseTensor (starting at the slots ``sparse``) give its rows (see :class:`~.sparse.SparseRows`).

    Raises:
        InvalidArgumentError: the components have different sizes in dimension 0 (TF's message), or a SparseTensor
            is not valid.

    Example:
        >>> it = TensorSlicesDataset([torch.tensor([1, 2]), np.array([b"a", b"b"], dtype=object)]).iterator()
        >>> first = it.next(None); first[0], first[1][()]
        (tensor(1), b'a')
    """

    def __init__(self, components: Sequence[Any], sparse: Sequence[int] = ()) -> None:
        self.components = tuple(components)
        self.sparse = {start: SparseRows(*self.components[start : start + 3]) for start in sparse}
        inside = {start + k for start in self.sparse for k in range(3)}
        sizes = [dim0(c) for i, c in enumerate(self.components) if i not in inside]
        sizes += [rows.n for rows in self.sparse.values()]
        if any(s != sizes[0] for s in sizes):
            raise invalid("All components must have the same size in the 0th dimension")
        self.n = sizes[0] if sizes else 0

    def iterator(self) -> RtIterator:
        if self.sparse:
            return _SparseSlicesIterator(self.components, self.sparse, self.n)
        return _SlicesIterator(self.components, self.n)


class _SparseSlicesIterator(RtIterator):
    """Rows of components some of which are SparseTensors (one element at a time: a batch of sparse rows is no
    stack, so there is no ``next_batch``)."""

    def __init__(self, components: tuple, sparse: dict[int, SparseRows], n: int) -> None:
        self._components, self._sparse, self._n, self._i = components, sparse, n, 0

    def next(self, step: Any) -> tuple | None:
        i = self._i
        if i >= self._n:
            return None
        self._i = i + 1
        out: list[Any] = []
        c, components, sparse = 0, self._components, self._sparse
        while c < len(components):
            rows = sparse.get(c)
            if rows is None:
                out.append(row(components[c], i))
                c += 1
            else:
                out.extend(rows.row(i))
                c += 3
        return tuple(out)


class _RangeIterator(RtIterator):
    def __init__(self, start: int, stop: int, step: int, dtype: torch.dtype) -> None:
        self._next, self._stop, self._step, self._dtype = start, stop, step, dtype
        self.next_batch = self._next_batch

    def _done(self, i: int) -> bool:
        return i >= self._stop if self._step > 0 else i <= self._stop

    def next(self, step: Any) -> tuple | None:
        i = self._next
        if self._done(i):
            return None
        self._next = i + self._step
        return (torch.tensor(i, dtype=self._dtype),)

    def _next_batch(self, n: int, step: Any) -> tuple | None:
        i = self._next
        if self._done(i):
            return None
        end = i + n * self._step
        end = min(end, self._stop) if self._step > 0 else max(end, self._stop)
        batch = torch.arange(i, end, self._step, dtype=self._dtype)
        self._next = i + len(batch) * self._step
        return (batch,)


class RangeDataset(RtDataset):
    """``Dataset.range(start, stop, step)``.

    Raises:
        InvalidArgumentError: ``step`` is 0.

    Example:
        >>> it = RangeDataset(3, 0, -1, torch.int64).iterator()
        >>> it.next_batch(5, None)
        (tensor([3, 2, 1]),)
    """

    def __init__(self, start: int, stop: int, step: int, dtype: torch.dtype) -> None:
        if step == 0:
            raise invalid("step must be a non-zero integer.")
        self.start, self.stop, self.step, self.dtype = start, stop, step, dtype

    def iterator(self) -> RtIterator:
        return _RangeIterator(self.start, self.stop, self.step, self.dtype)


class _ZipIterator(RtIterator):
    def __init__(self, iterators: list[RtIterator]) -> None:
        self._iterators = iterators

    def next(self, step: Any) -> tuple | None:
        out: list[Any] = []
        for it in self._iterators:
            element = it.next(step)
            if element is None:
                return None
            out.extend(element)
        return tuple(out)

    def close(self) -> None:
        for it in self._iterators:
            it.close()


class ZipDataset(RtDataset):
    """``Dataset.zip``: the components of one element of each input, until the shortest input ends.

    Example:
        >>> it = ZipDataset([RangeDataset(0, 2, 1, torch.int64), RangeDataset(5, 9, 1, torch.int64)]).iterator()
        >>> it.next(None), it.next(None), it.next(None)
        ((tensor(0), tensor(5)), (tensor(1), tensor(6)), None)
    """

    def __init__(self, inputs: Sequence[RtDataset]) -> None:
        self.inputs = list(inputs)

    def iterator(self) -> RtIterator:
        return _ZipIterator([d.iterator() for d in self.inputs])


class _ConcatenateIterator(RtIterator):
    def __init__(self, first: RtIterator, second: RtDataset) -> None:
        self._current: RtIterator | None = first
        self._second: RtDataset | None = second

    def next(self, step: Any) -> tuple | None:
        while self._current is not None:
            element = self._current.next(step)
            if element is not None:
                return element
            self._current.close()
            second, self._second = self._second, None
            self._current = None if second is None else second.iterator()
        return None

    def close(self) -> None:
        if self._current is not None:
            self._current.close()


class ConcatenateDataset(RtDataset):
    """``a.concatenate(b)``: the elements of ``a``, then those of ``b``.

    Example:
        >>> it = ConcatenateDataset(TensorsDataset([torch.tensor(1)]), TensorsDataset([torch.tensor(2)])).iterator()
        >>> it.next(None), it.next(None), it.next(None)
        ((tensor(1),), (tensor(2),), None)
    """

    def __init__(self, first: RtDataset, second: RtDataset) -> None:
        self.first, self.second = first, second

    def iterator(self) -> RtIterator:
        return _ConcatenateIterator(self.first.iterator(), self.second)


# ---- from_generator ----------------------------------------------------------------------------------------------
def _describe_types(types: Any) -> str:
    return repr(types)


class _GeneratorIterator(RtIterator):
    def __init__(self, owner: GeneratorDataset) -> None:
        self._owner = owner
        self._it: Any = None
        self._done = False

    def next(self, step: Any) -> tuple | None:
        if self._done:
            return None
        owner = self._owner
        try:
            if self._it is None:
                self._it = iter(owner.generator(*owner.args))
            value = next(self._it)
        except StopIteration:
            self._done = True
            return None
        except errors.OpError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's generator failed: TF reports it as InvalidArgument
            raise invalid(f"{type(e).__name__}: {e}") from e
        return owner.convert(value)

    def close(self) -> None:
        it, self._it = self._it, None
        self._done = True
        if it is not None and hasattr(it, "close"):
            it.close()


class GeneratorDataset(RtDataset):
    """``Dataset.from_generator``: calls the registered generator (with the evaluated ``args``) per pass.

    Args:
        token: The generator's registry token (see :mod:`dtf_notebook.data.generators`).
        args: Argument values (passed to the generator as numpy values).
        types: The flat component dtypes; ``structure``: the types' nesting; ``shapes``: the flat static shapes.

    Example:
        >>> from dtf_notebook.framework import dtypes
        >>> token = generators.register(lambda n: iter(range(int(n))), "count")
        >>> ds = GeneratorDataset(token, [torch.tensor(2)], [dtypes.int64], dtypes.int64, [TensorShape([])])
        >>> it = ds.iterator(); it.next(None), it.next(None), it.next(None)
        ((tensor(0),), (tensor(1),), None)
    """

    def __init__(self, token: str, args: Sequence[Any], types: list[Any], structure: Any, shapes: list[Any]) -> None:
        self.generator = generators.lookup(token)
        self.args = [values.to_numpy(a) for a in args]
        self.types = list(types)
        self.structure = structure
        self.shapes = [TensorShape(s) for s in shapes]

    def iterator(self) -> RtIterator:
        return _GeneratorIterator(self)

    def convert(self, value: Any) -> tuple:
        """One yielded value as a flat element, checked against the declared structure, types and shapes."""
        try:
            flat = _flatten_up_to(self.structure, value)
        except TypeError:
            raise invalid(
                "TypeError: `generator` yielded an element that did not match the expected structure. The expected "
                f"structure was {_describe_types(self.structure)}, but the yielded element was {value}."
            ) from None
        out = []
        for component, dtype, shape in zip(flat, self.types, self.shapes):
            try:
                if dtype.is_string:
                    array = np.asarray(component, dtype=object)
                    flat_strings = np.empty(array.size, dtype=object)
                    for i, v in enumerate(array.reshape(-1)):
                        flat_strings[i] = _as_bytes(v)
                    array = flat_strings.reshape(array.shape)
                else:
                    array = np.asarray(component)
                    if array.dtype.kind in "OSU" or (array.dtype.kind == "f" and not dtype.is_floating):
                        raise TypeError(component)
                    array = array.astype(dtype.np_dtype)
            except (TypeError, ValueError):
                raise invalid(
                    "TypeError: `generator` yielded an element that could not be converted to the expected type. "
                    f"The expected type was {dtype.name}, but the yielded element was {component}."
                ) from None
            if not shape.is_compatible_with(array.shape):
                raise invalid(
                    f"TypeError: `generator` yielded an element of shape {_py_shape(array.shape)} where an element "
                    f"of shape {_py_shape(shape.as_tuple())} was expected."
                )
            out.append(array if dtype.is_string else values.from_numpy(array, torch.device("cpu")))
        return tuple(out)


def _py_shape(dims: Any) -> str:
    if dims is None:
        return "<unknown>"
    inner = ", ".join("?" if d is None else str(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def _as_bytes(v: Any) -> bytes:
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, bytes | np.bytes_):
        return bytes(v)
    raise TypeError(v)


def _flatten_up_to(structure: Any, value: Any) -> list[Any]:
    """``value``'s leaves at the places of ``structure``'s (lists in ``value`` count as tuples there, as in TF)."""
    if not is_structure(structure):
        return [value]
    if isinstance(structure, Mapping):
        if not isinstance(value, Mapping) or sorted(value) != sorted(structure):
            raise TypeError(value)
        out: list[Any] = []
        for k in sorted(structure):
            out.extend(_flatten_up_to(structure[k], value[k]))
        return out
    if not isinstance(value, tuple | list) or len(value) != len(structure):
        raise TypeError(value)
    out = []
    for s, v in zip(structure, value):
        out.extend(_flatten_up_to(s, v))
    return out


# ---- file readers ------------------------------------------------------------------------------------------------
class _Inflater:
    """Reads a file's bytes in chunks, inflating ZLIB or GZIP streams (successive GZIP members are joined)."""

    def __init__(self, path: str, compression: str, chunk: int) -> None:
        self._file = GFile(path, "rb")
        self._file.tell()  # opens it now: a missing file fails when its pass starts, as in TF
        self._path, self._chunk = path, chunk
        self._wbits = None if not compression else (zlib.MAX_WBITS + 16 if compression == "GZIP" else zlib.MAX_WBITS)
        self._inflater = None if self._wbits is None else zlib.decompressobj(self._wbits)

    def read_chunk(self) -> bytes:
        """The next bytes of the (inflated) file; empty at its end."""
        if self._inflater is None:
            return self._file.read(self._chunk)
        while True:
            if self._inflater.eof:
                compressed = self._inflater.unused_data or self._file.read(self._chunk)
                if not compressed:
                    return b""
                self._inflater = zlib.decompressobj(self._wbits)
            else:
                compressed = self._file.read(self._chunk)
                if not compressed:
                    return b""
            try:
                data = self._inflater.decompress(compressed)
            except zlib.error as e:
                raise errors.DataLossError(None, None, f"{self._path}: corrupted compressed data ({e})") from e
            if data:
                return data

    def size(self) -> int:
        return self._file.size()

    def close(self) -> None:
        self._file.close()


def _compression(value: bytes) -> str:
    name = value.decode() if isinstance(value, bytes) else str(value)
    if name not in ("", "ZLIB", "GZIP"):
        raise invalid(f"Unsupported compression_type: {name}.")
    return name


class _FilesIterator(RtIterator):
    """Goes through the files one after another; subclasses read one file's elements in ``_open``/``_read``."""

    def __init__(self, owner: _FileDataset) -> None:
        self._owner = owner
        self._index = 0
        self._current: Any = None

    def next(self, step: Any) -> tuple | None:
        owner = self._owner
        while True:
            if self._current is None:
                if self._index >= len(owner.filenames):
                    return None
                path = owner.filenames[self._index]
                self._index += 1
                self._current = self._open(owner.env.files.check(path, "read"))
            element = self._read()
            if element is not None:
                return (string_scalar(element),)
            self._finish()

    def _finish(self) -> None:
        current, self._current = self._current, None
        if current is not None and hasattr(current, "close"):
            current.close()

    def close(self) -> None:
        self._finish()

    def _open(self, path: str) -> Any:
        raise NotImplementedError

    def _read(self) -> bytes | None:
        raise NotImplementedError


class _FileDataset(RtDataset):
    def __init__(self, filenames: list[bytes], env: Env) -> None:
        self.filenames = [f.decode() for f in filenames]
        self.env = env


class _Lines:
    def __init__(self, source: _Inflater) -> None:
        self.source = source
        self.pending: list[bytes] = []
        self.pos = 0
        self.rest = b""
        self.eof = False

    def close(self) -> None:
        self.source.close()


class _TextLineIterator(_FilesIterator):
    def _open(self, path: str) -> _Lines:
        return _Lines(_Inflater(path, self._owner.compression, self._owner.buffer_size))

    def _read(self) -> bytes | None:
        lines: _Lines = self._current
        while lines.pos >= len(lines.pending):
            if lines.eof:
                return None
            chunk = lines.source.read_chunk()
            if not chunk:
                lines.eof = True
                lines.pending, lines.pos = ([lines.rest] if lines.rest else []), 0
                lines.rest = b""
                continue
            parts = (lines.rest + chunk).split(b"\n")
            lines.rest = parts.pop()
            lines.pending, lines.pos = parts, 0
        line = lines.pending[lines.pos]
        lines.pos += 1
        return line[:-1] if line.endswith(b"\r") else line


class TextLineDataset(_FileDataset):
    """``TextLineDataset``: the lines of each file, without their ``\\n`` (or ``\\r\\n``).

    Example:
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://text_line_doc/a.txt", "x\\r\\ny\\n")
        >>> it = TextLineDataset([b"memory://text_line_doc/a.txt"], b"", 0, Env()).iterator()
        >>> [it.next(None)[0][()], it.next(None)[0][()], it.next(None)]
        [b'x', b'y', None]
    """

    def __init__(self, filenames: list[bytes], compression: bytes, buffer_size: int, env: Env) -> None:
        super().__init__(filenames, env)
        self.compression = _compression(compression)
        self.buffer_size = buffer_size if buffer_size > 0 else _CHUNK

    def iterator(self) -> RtIterator:
        return _TextLineIterator(self)


class _TFRecordIterator(_FilesIterator):
    def _open(self, path: str) -> Any:
        options = TFRecordOptions(self._owner.compression or None, input_buffer_size=self._owner.buffer_size)
        return tf_record_iterator(path, options)

    def _read(self) -> bytes | None:
        return next(self._current, None)

    def _finish(self) -> None:
        self._current = None  # the record iterator closes its file at its end


class TFRecordDataset(_FileDataset):
    """``TFRecordDataset``: the records of each TFRecord file (CRCs checked; ``DataLossError`` when corrupt).

    Example:
        >>> from dtf_notebook.lib.io.tf_record import TFRecordWriter
        >>> with TFRecordWriter("memory://tfrecord_ds_doc/r") as w:
        ...     w.write(b"one"); w.write(b"two")
        >>> it = TFRecordDataset([b"memory://tfrecord_ds_doc/r"], b"", 0, Env()).iterator()
        >>> [it.next(None)[0][()], it.next(None)[0][()], it.next(None)]
        [b'one', b'two', None]
    """

    def __init__(self, filenames: list[bytes], compression: bytes, buffer_size: int, env: Env) -> None:
        super().__init__(filenames, env)
        self.compression = _compression(compression)
        self.buffer_size = buffer_size if buffer_size > 0 else _CHUNK

    def iterator(self) -> RtIterator:
        return _TFRecordIterator(self)


class _Fixed:
    def __init__(self, source: _Inflater, path: str, owner: FixedLengthRecordDataset) -> None:
        self.source, self.path, self.owner = source, path, owner
        self.buffer = b""
        self.pos = 0
        self.eof = False
        self.header_left = owner.header_bytes
        if not owner.compression:
            body = source.size() - owner.header_bytes - owner.footer_bytes
            if body < 0 or body % owner.record_bytes:
                raise owner.length_error(path, max(body, 0))

    def fill(self, n: int) -> bool:
        """At least ``n`` unread bytes in the buffer (False at the end of the file)."""
        while len(self.buffer) - self.pos < n and not self.eof:
            chunk = self.source.read_chunk()
            if not chunk:
                self.eof = True
                break
            self.buffer = self.buffer[self.pos :] + chunk
            self.pos = 0
        return len(self.buffer) - self.pos >= n

    def close(self) -> None:
        self.source.close()


class _FixedIterator(_FilesIterator):
    def _open(self, path: str) -> _Fixed:
        return _Fixed(_Inflater(path, self._owner.compression, self._owner.buffer_size), path, self._owner)

    def _read(self) -> bytes | None:
        fixed: _Fixed = self._current
        owner = self._owner
        if fixed.header_left:
            fixed.fill(fixed.header_left)
            skip = min(fixed.header_left, len(fixed.buffer) - fixed.pos)
            fixed.pos += skip
            fixed.header_left -= skip
        size = owner.record_bytes
        # A record is read only when the footer still follows it.
        if not fixed.fill(size + owner.footer_bytes):
            left = len(fixed.buffer) - fixed.pos - owner.footer_bytes
            if left > 0:
                raise owner.length_error(fixed.path, left)
            return None
        record = fixed.buffer[fixed.pos : fixed.pos + size]
        fixed.pos += size
        return record


class FixedLengthRecordDataset(_FileDataset):
    """``FixedLengthRecordDataset``: records of ``record_bytes`` between a header and a footer, in each file.

    Raises:
        InvalidArgumentError: a file's body is not a whole number of records (TF's message).

    Example:
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://fixed_doc/f.bin", "HHabcdFF")
        >>> it = FixedLengthRecordDataset([b"memory://fixed_doc/f.bin"], 2, 2, 2, 0, b"", Env()).iterator()
        >>> [it.next(None)[0][()], it.next(None)[0][()], it.next(None)]
        [b'ab', b'cd', None]
    """

    def __init__(
        self,
        filenames: list[bytes],
        header_bytes: int,
        record_bytes: int,
        footer_bytes: int,
        buffer_size: int,
        compression: bytes,
        env: Env,
    ) -> None:
        super().__init__(filenames, env)
        if record_bytes <= 0:
            raise invalid(f"record_bytes must be > 0, got {record_bytes}")
        if header_bytes < 0 or footer_bytes < 0:
            raise invalid("header_bytes and footer_bytes must be >= 0")
        self.header_bytes, self.record_bytes, self.footer_bytes = header_bytes, record_bytes, footer_bytes
        self.buffer_size = buffer_size if buffer_size > 0 else _CHUNK
        self.compression = _compression(compression)

    def length_error(self, path: str, body: int) -> errors.InvalidArgumentError:
        return invalid(
            f"Excluding the header ({self.header_bytes} bytes) and footer ({self.footer_bytes} bytes), input file "
            f'"{path}" has body length {body} bytes, which is not an exact multiple of the record length '
            f"({self.record_bytes} bytes)."
        )

    def iterator(self) -> RtIterator:
        return _FixedIterator(self)
