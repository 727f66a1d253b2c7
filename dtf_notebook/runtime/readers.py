"""Readers: resources that turn work units (file names, taken from a queue) into records, as TF1's ``ReaderBase``.

A :class:`ReaderResource` lives in a task's resource containers like a queue. Asked for a record, it takes
the next work unit from the queue it is given when it has none in progress (waiting on the queue as a dequeue
does), opens it with its :class:`RecordSource` and hands out its records one at a time; at the end of a unit it
counts it as completed and moves on to the next. The bookkeeping is TF's: ``work_started``, ``work_finished``,
``num_records_produced``, the current work unit, and which errors drop a unit (one raised while opening it)
and which leave it in progress (one raised while reading it).

The sources, one per reader kind (:data:`SOURCES`): text lines (``TextLineReader``), TFRecord records
(``TFRecordReader``), fixed-length records with header, footer and hop (``FixedLengthRecordReader``), whole
files (``WholeFileReader``) and the work unit itself (``IdentityReader``). Every file is checked against the
task's file roots before it is opened.

Example:
    >>> import numpy as np, torch
    >>> from dtf_notebook.framework import dtypes
    >>> from dtf_notebook.runtime.queues import FIFOQueueResource
    >>> queue = FIFOQueueResource("q", [dtypes.string], [()], capacity=-1)
    >>> queue.enqueue_many((np.array([b"a", b"b"], dtype=object),), step=None)
    >>> reader = ReaderResource("r", "IdentityReader 'r'", IdentitySource())
    >>> reader.read(queue, step=None), reader.read(queue, step=None), reader.num_work_units_completed()
    ((b'a', b'a'), (b'b', b'b'), 2)
"""

from __future__ import annotations

import abc
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.lib.io.gfile import GFile
from dtf_notebook.lib.io.tf_record import tf_record_iterator
from dtf_notebook.runtime.file_access import FileAccess
from dtf_notebook.runtime.queues import SharedResource

__all__ = [
    "ReaderResource",
    "RecordSource",
    "TextLineSource",
    "TFRecordSource",
    "FixedLengthRecordSource",
    "WholeFileSource",
    "IdentitySource",
    "encode_state",
    "decode_state",
]

#: A record as a source yields it: key, value, and whether it is the last of its work unit.
Record = tuple[bytes, bytes, bool]
_CHUNK = 256 * 1024  # bytes read from a file at a time (TF's readers buffer 256 KiB too)


# ---- sources: one work unit's records ---------------------------------------------------------------
class RecordSource(abc.ABC):
    """How one kind of reader reads a work unit. ``start`` may fail (the unit is then dropped); the iterator
    it returns yields :data:`Record` tuples (errors raised by it leave the unit in progress, as in TF).

    Attributes:
        tf_state: TF serializes this kind's state (only its base state: it holds none of its own).

    Example:
        >>> issubclass(TextLineSource, RecordSource), IdentitySource.tf_state
        (True, True)
    """

    tf_state = False

    @abc.abstractmethod
    def start(self, work: bytes, files: FileAccess) -> Iterator[Record]:
        """Opens the work unit (a file name, for most readers); returns an iterator over its records."""

    @staticmethod
    def _path(work: bytes, files: FileAccess) -> str:
        return files.check(work.decode("utf-8", "surrogateescape"), "read")


class IdentitySource(RecordSource):
    """The work unit is the record: key and value are both the work unit.

    Example:
        >>> list(IdentitySource().start(b"w", FileAccess()))
        [(b'w', b'w', True)]
    """

    tf_state = True

    def start(self, work: bytes, files: FileAccess) -> Iterator[Record]:
        return iter([(work, work, True)])


class WholeFileSource(RecordSource):
    """The whole file is the record, its name the key (read when the record is asked for, as TF does).

    Example:
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://readers_doc/whole.txt", "all of it")
        >>> list(WholeFileSource().start(b"memory://readers_doc/whole.txt", FileAccess()))
        [(b'memory://readers_doc/whole.txt', b'all of it', True)]
    """

    tf_state = True

    def start(self, work: bytes, files: FileAccess) -> Iterator[Record]:
        def records() -> Iterator[Record]:
            with GFile(self._path(work, files), "rb") as f:
                data = f.read()
            yield work, data, True

        return records()


def _open(path: str) -> GFile:
    f = GFile(path, "rb")
    f.tell()  # opens the file now, so a missing file fails when the unit starts
    return f


class TextLineSource(RecordSource):
    """Lines without their ``\\n`` (or ``\\r\\n``), keyed ``file:line`` with lines counted from 1.

    Args:
        skip_header_lines: Lines skipped at the start of each file (they still count in the keys).

    Example:
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://readers_doc/t.csv", "head\\r\\na\\n\\nb")
        >>> [(k.decode().split("/")[-1], v) for k, v, _ in TextLineSource(1).start(b"memory://readers_doc/t.csv",
        ...                                                                           FileAccess())]
        [('t.csv:2', b'a'), ('t.csv:3', b''), ('t.csv:4', b'b')]
    """

    def __init__(self, skip_header_lines: int = 0) -> None:
        self.skip_header_lines = int(skip_header_lines)

    def start(self, work: bytes, files: FileAccess) -> Iterator[Record]:
        f = _open(self._path(work, files))
        number = 0
        while number < self.skip_header_lines:
            if not f.readline():
                break  # TF: a file shorter than its header just has no records
            number += 1
        return self._lines(f, work, number)

    @staticmethod
    def _lines(f: GFile, work: bytes, number: int) -> Iterator[Record]:
        prefix = work + b":"
        with f:
            for line in f:
                number += 1
                if line.endswith(b"\n"):
                    line = line[:-1]
                if line.endswith(b"\r"):
                    line = line[:-1]
                yield prefix + str(number).encode(), line, False


class TFRecordSource(RecordSource):
    """The records of a TFRecord file, keyed ``file:offset`` (the offset of the record in the uncompressed stream).

    Args:
        compression_type: ``""``, ``"ZLIB"`` or ``"GZIP"``.

    Example:
        >>> from dtf_notebook.lib.io.tf_record import TFRecordWriter
        >>> with TFRecordWriter("memory://readers_doc/r.tfrecord") as w:
        ...     w.write(b"one"); w.write(b"two")
        >>> [(k.split(b":")[-1], v) for k, v, _ in TFRecordSource().start(b"memory://readers_doc/r.tfrecord",
        ...                                                               FileAccess())]
        [(b'0', b'one'), (b'19', b'two')]
    """

    def __init__(self, compression_type: str = "") -> None:
        self.compression_type = compression_type or ""

    def start(self, work: bytes, files: FileAccess) -> Iterator[Record]:
        return _KeyedRecords(tf_record_iterator(self._path(work, files), self.compression_type), work)


class _KeyedRecords:
    """The records of one TFRecord file keyed ``file:offset`` as TF keys them; :meth:`take` hands out many at once
    (``read_up_to``), with no Python frame per record."""

    def __init__(self, records: Any, work: bytes) -> None:
        self._records = records
        self._prefix = work + b":"
        self._offset = 0

    def __iter__(self) -> _KeyedRecords:
        return self

    def __next__(self) -> Record:
        data = next(self._records)
        key = self._prefix + b"%d" % self._offset
        self._offset += 16 + len(data)  # length, its CRC, the data, its CRC
        return key, data, False

    def take(self, n: int) -> tuple[list[bytes], list[bytes]]:
        """Up to ``n`` records as ``(keys, values)``; fewer only at the end of the file."""
        values = self._records.take(n)
        keys = []
        prefix, offset = self._prefix, self._offset
        for data in values:
            keys.append(prefix + b"%d" % offset)
            offset += 16 + len(data)
        self._offset = offset
        return keys, values


class _Stream:
    """A file read a chunk at a time, inflated when compressed; ``read(n)`` gives fewer bytes only at the end."""

    def __init__(self, f: GFile, encoding: str, path: str) -> None:
        self._file, self._path = f, path
        self._inflater = None
        if encoding:
            self._inflater = zlib.decompressobj(zlib.MAX_WBITS + (16 if encoding == "GZIP" else 0))
        self._buffer = b""

    def _more(self) -> bytes:
        while True:
            data = self._file.read(_CHUNK)
            if self._inflater is None or not data:
                return data
            try:
                data = self._inflater.decompress(data)
            except zlib.error as e:
                raise errors.DataLossError(None, None, f"{self._path}: corrupted compressed data ({e})") from e
            if data:
                return data

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            more = self._more()
            if not more:
                break
            self._buffer += more
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data

    def close(self) -> None:
        self._file.close()


class FixedLengthRecordSource(RecordSource):
    """Records of ``record_bytes`` bytes at offsets ``header_bytes + k * hop_bytes`` (``hop_bytes`` 0: the record
    size), each produced only when it and ``footer_bytes`` more bytes fit in the file; keyed ``file:k``.

    Raises (from ``start``):
        OutOfRangeError: the file is shorter than its header (TF's "reached end of file").

    Example:
        >>> from dtf_notebook.lib.io import file_io
        >>> file_io.write_string_to_file("memory://readers_doc/f.bin", bytes(range(10)))
        >>> source = FixedLengthRecordSource(record_bytes=3, header_bytes=1, footer_bytes=1, hop_bytes=2)
        >>> [list(v) for _, v, _ in source.start(b"memory://readers_doc/f.bin", FileAccess())]
        [[1, 2, 3], [3, 4, 5], [5, 6, 7]]
    """

    def __init__(
        self, record_bytes: int, header_bytes: int = 0, footer_bytes: int = 0, hop_bytes: int = 0, encoding: str = ""
    ) -> None:
        self.record_bytes, self.header_bytes, self.footer_bytes = (
            int(record_bytes),
            int(header_bytes),
            int(footer_bytes),
        )
        self.hop_bytes = int(hop_bytes) or self.record_bytes
        self.encoding = encoding or ""

    def start(self, work: bytes, files: FileAccess) -> Iterator[Record]:
        stream = _Stream(_open(self._path(work, files)), self.encoding, work.decode("utf-8", "replace"))
        if len(stream.read(self.header_bytes)) < self.header_bytes:
            stream.close()
            raise errors.OutOfRangeError(None, None, "reached end of file")
        return self._records(stream, work)

    def _records(self, stream: _Stream, work: bytes) -> Iterator[Record]:
        # TF's lookahead: the bytes after a record that may start the next one (hop < record + footer).
        prefix, want = work + b":", self.record_bytes + self.footer_bytes
        cache, number = b"", 0
        try:
            while True:
                if number:
                    if self.hop_bytes <= len(cache):
                        cache = cache[self.hop_bytes :]
                    else:
                        skip = self.hop_bytes - len(cache)
                        cache = b""
                        if len(stream.read(skip)) < skip:
                            return
                more = stream.read(want - len(cache))
                if len(cache) + len(more) < want:
                    return
                cache += more
                yield prefix + str(number).encode(), cache[: self.record_bytes], False
                number += 1
        finally:
            stream.close()


#: Reader kind (the handle op's type without ``V2``) -> a function of the op's attrs making its source.
SOURCES: dict[str, Callable[[Callable[[str], Any]], RecordSource]] = {
    "TextLineReader": lambda attr: TextLineSource(attr("skip_header_lines")),
    "TFRecordReader": lambda attr: TFRecordSource(attr("compression_type")),
    "FixedLengthRecordReader": lambda attr: FixedLengthRecordSource(
        attr("record_bytes"), attr("header_bytes"), attr("footer_bytes"), attr("hop_bytes"), attr("encoding")
    ),
    "WholeFileReader": lambda attr: WholeFileSource(),
    "IdentityReader": lambda attr: IdentitySource(),
}


# ---- the reader -------------------------------------------------------------------------------------
class ReaderResource(SharedResource):
    """A reader: the current work unit, its records, and TF's counters; safe to share between threads.

    Args:
        name: Shared name.
        label: How messages name it, as TF does: ``"TextLineReader 'node'"``.
        source: How it reads a work unit.
        container, mgr, device: See :class:`~dtf_notebook.runtime.queues.SharedResource`.
        files: The task's file roots (default: anywhere).

    Example:
        >>> reader = ReaderResource("r", "IdentityReader 'r'", IdentitySource())
        >>> reader.num_records_produced(), reader.serialize_state()
        (0, b'')
    """

    kind = "Reader"

    def __init__(
        self,
        name: str,
        label: str,
        source: RecordSource,
        container: str = "",
        mgr: Any = None,
        device: str = "",
        files: FileAccess | None = None,
    ) -> None:
        super().__init__(name, container, mgr, device)
        self.label = label
        self.source = source
        self._files = files or FileAccess()
        self._lock = threading.Lock()  # held for a whole read, queue wait included (TF's mutex)
        self._reset()

    def _reset(self) -> None:
        self._work_started = self._work_finished = self._produced = 0
        self._work = b""
        self._records: Iterator[Record] | None = None
        self._work_records = 0  # records of the current unit handed out (to replay them after a restore)

    # ---- work units -------------------------------------------------------------------------------
    def _next_work(self, queue: Any, step: Any) -> bytes:
        types = queue.component_types
        if len(types) != 1:
            raise errors.InvalidArgumentError(None, None, "Expected single component queue")
        if types[0] != dtypes.string:
            raise errors.InvalidArgumentError(None, None, "Expected queue with single string component")
        (work,) = queue.dequeue(step)
        work = np.asarray(work, dtype=object)
        if work.size != 1:
            raise errors.InvalidArgumentError(None, None, "Expected to dequeue a one-element string tensor")
        return bytes(work.reshape(-1)[0])

    def _in_progress(self) -> bool:
        return self._work_finished < self._work_started

    def _start(self, queue: Any, step: Any) -> None:
        self._work = self._next_work(queue, step)
        self._records = self.source.start(self._work, self._files)
        self._work_records = 0
        self._work_started += 1

    def _finish(self) -> None:
        self._records = None
        self._work_finished = self._work_started

    def _next_record(self) -> Record | None:
        """The next record of the unit in progress, or None at its end (after which the unit is finished)."""
        if self._records is None:  # restored in progress: reopen the unit and skip what was read
            self._records = self.source.start(self._work, self._files)
            for _ in range(self._work_records):
                if next(self._records, None) is None:
                    break
        try:
            record = next(self._records, None)
        except BaseException:
            # TF keeps a unit that failed while being read in progress; its next read tries the same place again.
            self._records = None
            raise
        if record is None:
            self._finish()
            return None
        self._produced += 1
        self._work_records += 1
        if record[2]:
            self._finish()
        return record

    # ---- reading ----------------------------------------------------------------------------------
    def read(self, queue: Any, step: Any) -> tuple[bytes, bytes]:
        """The next record ``(key, value)``, taking work units from ``queue`` as needed.

        Raises:
            OutOfRangeError: the queue is closed and empty (the input is exhausted).
            InvalidArgumentError: the queue does not hold single strings.
            NotFoundError, DataLossError, ...: opening or reading a file failed.
        """
        with self._lock:
            while True:
                if not self._in_progress():
                    self._start(queue, step)
                record = self._next_record()
                if record is not None:
                    return record[0], record[1]

    def read_up_to(self, queue: Any, n: int, step: Any) -> tuple[list[bytes], list[bytes]]:
        """Up to ``n`` records; fewer when a work unit ends after at least one record (TF's ``ReadUpTo``).

        Raises:
            InvalidArgumentError: ``n`` is negative.

        Example:
            >>> import numpy as np
            >>> from dtf_notebook.runtime.queues import FIFOQueueResource
            >>> queue = FIFOQueueResource("q", [dtypes.string], [()], capacity=-1)
            >>> queue.enqueue_many((np.array([b"a", b"b"], dtype=object),), step=None)
            >>> ReaderResource("r", "IdentityReader 'r'", IdentitySource()).read_up_to(queue, 5, step=None)
            ([b'a'], [b'a'])
        """
        if n < 0:
            raise errors.InvalidArgumentError(None, None, f"num_records of {self.label} must be >= 0, got {n}")
        keys: list[bytes] = []
        values: list[bytes] = []
        with self._lock:
            while len(keys) < n:
                if not self._in_progress():
                    self._start(queue, step)
                if not self._take_records(n - len(keys), keys, values):
                    record = self._next_record()
                    if record is not None:
                        keys.append(record[0])
                        values.append(record[1])
                if not self._in_progress() and keys:
                    break
        return keys, values

    def _take_records(self, n: int, keys: list[bytes], values: list[bytes]) -> bool:
        """Up to ``n`` records of the unit in progress at once, when its source can (finishing the unit when it has
        fewer); False when it cannot (then :meth:`_next_record` reads one at a time)."""
        take = getattr(self._records, "take", None)
        if take is None:
            return False
        try:
            got_keys, got_values = take(n)
        except BaseException:
            self._records = None  # as _next_record: a unit that failed while being read stays in progress
            raise
        keys.extend(got_keys)
        values.extend(got_values)
        self._produced += len(got_keys)
        self._work_records += len(got_keys)
        if len(got_keys) < n:
            self._finish()
        return True

    def num_records_produced(self) -> int:
        """Records handed out since the reader was made or reset."""
        with self._lock:
            return self._produced

    def num_work_units_completed(self) -> int:
        """Work units finished since the reader was made or reset."""
        with self._lock:
            return self._work_finished

    def reset(self) -> None:
        """Back to the reader's initial state (the unit in progress is dropped)."""
        with self._lock:
            self._reset()

    # ---- state --------------------------------------------------------------------------------------
    def serialize_state(self) -> bytes:
        """The reader's state: TF's ``ReaderBaseState`` bytes, plus (for readers of files, whose state TF does not
        serialize) how many records of the unit in progress were read.

        Example:
            >>> r = ReaderResource("r", "TextLineReader 'r'", TextLineSource())
            >>> decode_state(r.serialize_state(), r.label)
            {'work_started': 0, 'work_finished': 0, 'num_records_produced': 0, 'current_work': b'', 'records_read': 0}
        """
        with self._lock:
            extra = None if self.source.tf_state else self._work_records
            return encode_state(self._work_started, self._work_finished, self._produced, self._work, extra)

    def restore_state(self, state: bytes) -> None:
        """Restores :meth:`serialize_state`'s bytes; a reader of files reopens the unit in progress at its record.

        Raises:
            InvalidArgumentError: the bytes do not parse or are inconsistent (the reader is then reset, as TF).

        Example:
            >>> r = ReaderResource("r", "IdentityReader 'r'", IdentitySource())
            >>> r.restore_state(encode_state(2, 2, 2, b"w")); r.num_records_produced()
            2
        """
        with self._lock:
            try:
                fields = decode_state(state, self.label)
                started, finished = fields["work_started"], fields["work_finished"]
                text = _state_text(fields)
                if min(started, finished, fields["num_records_produced"], fields["records_read"]) < 0:
                    raise errors.InvalidArgumentError(
                        None, None, f"Unexpected negative value when restoring in {self.label}: {text}"
                    )
                resumable = not self.source.tf_state and started == finished + 1
                if started > finished and not resumable:
                    raise errors.InvalidArgumentError(
                        None, None, f"Inconsistent work started vs. finished when restoring in {self.label}: {text}"
                    )
            except errors.OpError:
                self._reset()
                raise
            self._work_started, self._work_finished = started, finished
            self._produced, self._work = fields["num_records_produced"], fields["current_work"]
            self._records, self._work_records = None, fields["records_read"]


# ---- ReaderBaseState (tensorflow/core/framework/reader_base.proto), written by hand: four fields ------------
_FIELDS = {1: "work_started", 2: "work_finished", 3: "num_records_produced", 4: "current_work"}
_RECORDS_READ = 100  # ours: records read from the unit in progress (TF serializes no reader of files)


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 as protobuf writes it: negatives in ten bytes
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def encode_state(started: int, finished: int, produced: int, work: bytes, records_read: int | None = None) -> bytes:
    """``ReaderBaseState`` bytes as TF writes them (proto3: zero fields left out), plus our field 100.

    Example:
        >>> encode_state(1, 1, 1, b"w1")
        b'\\x08\\x01\\x10\\x01\\x18\\x01"\\x02w1'
    """
    out = bytearray()
    for number, value in ((1, started), (2, finished), (3, produced), (_RECORDS_READ, records_read or 0)):
        if value:
            out += _varint(number << 3) + _varint(value)
    if work:
        out += _varint(4 << 3 | 2) + _varint(len(work)) + work
    return bytes(out)


def decode_state(data: bytes, label: str) -> dict[str, Any]:
    """The fields of ``ReaderBaseState`` bytes (and our ``records_read``); unknown fields are skipped.

    Raises:
        InvalidArgumentError: the bytes are not such a message (TF's "Could not parse state for ...").

    Example:
        >>> decode_state(b"\\x08\\x01\\x10\\x01\\x18\\x01\\x22\\x02w1", "IdentityReader 'r'")["current_work"]
        b'w1'
    """
    fields: dict[str, Any] = {"work_started": 0, "work_finished": 0, "num_records_produced": 0, "current_work": b""}
    fields["records_read"] = 0
    pos = 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            if pos >= len(data) or shift > 63:
                raise ValueError("truncated varint")
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value - (1 << 64) if value >= 1 << 63 else value

    try:
        while pos < len(data):
            tag = varint()
            number, wire = tag >> 3, tag & 7
            if wire == 0:
                value: Any = varint()
            elif wire == 2:
                size = varint()
                if size < 0 or pos + size > len(data):
                    raise ValueError("truncated field")
                value, pos = bytes(data[pos : pos + size]), pos + size
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
                if pos > len(data):
                    raise ValueError("truncated field")
                continue
            else:
                raise ValueError(f"wire type {wire}")
            name = _FIELDS.get(number) or ("records_read" if number == _RECORDS_READ else None)
            if name is None:
                continue
            if (name == "current_work") != (wire == 2):
                raise ValueError(f"field {number} has wire type {wire}")
            fields[name] = value
    except ValueError:
        escaped = "".join(chr(b) if 32 <= b < 127 and b not in (34, 39, 92) else f"\\{b:03o}" for b in data)
        raise errors.InvalidArgumentError(None, None, f"Could not parse state for {label}: {escaped}") from None
    return fields


def _state_text(fields: dict[str, Any]) -> str:
    parts = [f"{k}: {fields[k]}" for k in ("work_started", "work_finished", "num_records_produced") if fields[k]]
    if fields["current_work"]:
        parts.append(f'current_work: "{fields["current_work"].decode("utf-8", "backslashreplace")}"')
    return " ".join(parts)
