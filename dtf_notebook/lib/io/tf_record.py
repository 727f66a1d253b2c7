"""TFRecord files: ``TFRecordWriter``, ``tf_record_iterator`` and their options (``tf.python_io``, ``tf.io``).

A TFRecord file is a sequence of records, each ``uint64 length | uint32 masked_crc32c(length) | data |
uint32 masked_crc32c(data)`` (little-endian), the whole stream optionally compressed with ZLIB or GZIP.
The bytes are TF's: files written here are read by TF's readers and the reverse. Files are reached
through :mod:`dtf_notebook.lib.io.file_io`, so local paths and fsspec URLs both work.

Example:
    >>> with TFRecordWriter("memory://tf_record_doc/a.tfrecord.gz", "GZIP") as writer:
    ...     writer.write(b"first")
    ...     writer.write("second")
    >>> list(tf_record_iterator("memory://tf_record_doc/a.tfrecord.gz", TFRecordOptions("GZIP")))
    [b'first', b'second']
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import google_crc32c
import numpy as np

from dtf_notebook import errors
from dtf_notebook.lib.io import file_io
from dtf_notebook.lib.io.gfile import GFile

_MASK_DELTA = 0xA282EAD8
_LENGTH = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_HEADER_SIZE = _LENGTH.size + _CRC.size
_CHUNK = 256 * 1024  # bytes read from, or gathered before writing to, the file at a time


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C (Castagnoli) of ``data``: rotated and offset so CRCs of CRCs are not trivial.

    Example:
        >>> hex(masked_crc32c(b"123456789"))
        '0xc78ab0e5'
    """
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def encode_record(data: bytes) -> bytes:
    """One framed record holding ``data``.

    Example:
        >>> len(encode_record(b"abc"))  # 8 + 4 + 3 + 4
        19
    """
    length = _LENGTH.pack(len(data))
    return length + _CRC.pack(masked_crc32c(length)) + data + _CRC.pack(masked_crc32c(data))


class TFRecordCompressionType:
    """The compression of a TFRecord file.

    Example:
        >>> TFRecordCompressionType.NONE, TFRecordCompressionType.ZLIB, TFRecordCompressionType.GZIP
        (0, 1, 2)
    """

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """How a TFRecord file is compressed; the zlib settings are zlib's (None leaves zlib's default).

    Args:
        compression_type: A :class:`TFRecordCompressionType`, ``"ZLIB"``, ``"GZIP"``, ``""`` or None.
        flush_mode: The zlib flush mode of each write (``zlib.Z_NO_FLUSH`` by default).
        input_buffer_size: Bytes read from the file at a time when reading.
        output_buffer_size: Accepted for TF's signature; compressed bytes go to the file as zlib yields them.
        window_bits: zlib's window bits (15 for ZLIB; GZIP adds 16 for its header).
        compression_level: 0 (none) to 9 (best); zlib's default when None.
        compression_method: zlib's method (only ``zlib.DEFLATED``).
        mem_level: zlib's memory level, 1 to 9.
        compression_strategy: zlib's strategy (``zlib.Z_DEFAULT_STRATEGY``, ``Z_FILTERED``, ...).

    Raises:
        ValueError: an unknown ``compression_type``.

    Example:
        >>> TFRecordOptions("GZIP").compression_type, TFRecordOptions(TFRecordCompressionType.ZLIB).compression_type
        ('GZIP', 1)
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(
        self,
        compression_type: int | str | None = None,
        flush_mode: int | None = None,
        input_buffer_size: int | None = None,
        output_buffer_size: int | None = None,
        window_bits: int | None = None,
        compression_level: int | None = None,
        compression_method: int | None = None,
        mem_level: int | None = None,
        compression_strategy: int | None = None,
    ) -> None:
        self.get_compression_type_string(compression_type)  # validate, but keep the caller's spelling (as TF)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """``""``, ``"ZLIB"`` or ``"GZIP"`` for options, a compression type or its name.

        Raises:
            ValueError: not a compression type.

        Example:
            >>> TFRecordOptions.get_compression_type_string(TFRecordCompressionType.GZIP)
            'GZIP'
        """
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if options in cls.compression_type_map:
            return cls.compression_type_map[options]
        if options in cls.compression_type_map.values():
            return options
        raise ValueError(f'Not a valid compression_type: "{options}"')

    def _wbits(self, compression: str) -> int:
        if self.window_bits is not None:
            return self.window_bits
        return zlib.MAX_WBITS + 16 if compression == "GZIP" else zlib.MAX_WBITS


def _options(options: Any) -> TFRecordOptions:
    return options if isinstance(options, TFRecordOptions) else TFRecordOptions(compression_type=options)


class TFRecordWriter:
    """Writes records to a TFRecord file, compressed as ``options`` say.

    Args:
        path: A local path or fsspec URL; an existing file is replaced.
        options: A :class:`TFRecordOptions`, a :class:`TFRecordCompressionType` or its name, or None.

    Raises:
        NotFoundError: the directory of ``path`` does not exist.
        FailedPreconditionError: ``path`` is a directory.

    Example:
        >>> with TFRecordWriter("memory://tf_record_writer_doc/r") as writer:
        ...     writer.write(b"\\x00binary\\xff")
        >>> next(tf_record_iterator("memory://tf_record_writer_doc/r"))
        b'\\x00binary\\xff'
    """

    def __init__(self, path: Any, options: Any = None) -> None:
        options = _options(options)
        self._path = file_io._fspath(path)
        compression = TFRecordOptions.get_compression_type_string(options)
        self._compressor = None
        if compression:
            self._compressor = zlib.compressobj(
                zlib.Z_DEFAULT_COMPRESSION if options.compression_level is None else options.compression_level,
                zlib.DEFLATED if options.compression_method is None else options.compression_method,
                options._wbits(compression),
                zlib.DEF_MEM_LEVEL if options.mem_level is None else options.mem_level,
                zlib.Z_DEFAULT_STRATEGY if options.compression_strategy is None else options.compression_strategy,
            )
        self._flush_mode = options.flush_mode
        self._pending: list[bytes] = []  # framed (compressed) bytes not yet handed to the file
        self._pending_size = 0
        self._file: GFile | None = GFile(self._path, "wb")
        self._file.tell()  # opens the file now, so a bad path fails here as in TF

    def _live_file(self) -> GFile:
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, "Writer is closed.")
        return self._file

    def _put(self, data: bytes, flush_mode: int | None = None) -> None:
        file = self._live_file()
        if self._compressor is not None:
            data = self._compressor.compress(data)
            if flush_mode not in (None, zlib.Z_NO_FLUSH):
                data += self._compressor.flush(flush_mode)
        if data:
            self._pending.append(data)
            self._pending_size += len(data)
        if self._pending_size >= _CHUNK or flush_mode not in (None, zlib.Z_NO_FLUSH):
            self._drain(file)

    def _drain(self, file: GFile) -> None:
        if self._pending:
            file.write(b"".join(self._pending))
            self._pending, self._pending_size = [], 0

    def write(self, record: bytes | str) -> None:
        """Appends one record (``str`` is written as UTF-8).

        Raises:
            FailedPreconditionError: the writer is closed.
            TypeError: ``record`` is neither ``bytes`` nor ``str``.
        """
        if not isinstance(record, bytes | bytearray | memoryview | str):
            raise TypeError(f"TFRecordWriter.write() takes bytes or str, got {type(record).__name__}: {record!r}")
        self._put(encode_record(file_io._as_bytes(record)), self._flush_mode)

    def flush(self) -> None:
        """Makes every record written so far readable from the file (a zlib sync flush when compressing)."""
        self._put(b"", zlib.Z_SYNC_FLUSH)
        self._live_file().flush()

    def close(self) -> None:
        """Finishes the compressed stream and closes the file; closing twice is harmless."""
        if self._file is None:
            return
        if self._compressor is not None:
            self._pending.append(self._compressor.flush(zlib.Z_FINISH))
        file, self._file = self._file, None
        try:
            self._drain(file)
        finally:
            file.close()

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Chunks:
    """Reads ``raw`` a chunk at a time, inflating it when compressed (successive GZIP members are joined)."""

    def __init__(self, raw: GFile, chunk: int, path: str, wbits: int | None = None) -> None:
        self._raw, self._chunk, self._path, self._wbits = raw, chunk, path, wbits
        self._inflater = None if wbits is None else zlib.decompressobj(wbits)
        self._buffer = b""
        self._pos = 0  # read position in _buffer: records are sliced off without copying the rest

    def _more(self) -> bytes:
        """The next bytes of the (inflated) stream; empty at its end."""
        if self._inflater is None:
            return self._raw.read(self._chunk)
        while True:
            if self._inflater.eof:  # one compressed stream ended: another may follow
                compressed = self._inflater.unused_data or self._raw.read(self._chunk)
                if not compressed:
                    return b""
                self._inflater = zlib.decompressobj(self._wbits)
            else:
                compressed = self._raw.read(self._chunk)
                if not compressed:
                    return b""
            try:
                data = self._inflater.decompress(compressed)
            except zlib.error as e:
                raise errors.DataLossError(None, None, f"{self._path}: corrupted compressed data ({e})") from e
            if data:
                return data

    def read(self, n: int) -> bytes:
        while len(self._buffer) - self._pos < n:
            more = self._more()
            if not more:
                break
            self._buffer = self._buffer[self._pos :] + more
            self._pos = 0
        data = self._buffer[self._pos : self._pos + n]
        self._pos += len(data)
        return data

    def close(self) -> None:
        self._raw.close()


_RUN_ROWS = 512  # records looked at per call: a run that breaks early costs at most this many header compares
_SKIP_AFTER_MISS = 16  # records of varying lengths pay for a look at most once every this many records


def _same_length_run(buf: bytes, pos: int, length: int, limit: int) -> list[bytes] | None:
    """The whole records from ``buf[pos:]`` (at most ``limit``; none when fewer than 2) that have the first one's
    length and check out: framed as it is, with its length's CRC and the CRCs of their data right. None when the
    buffer or ``limit`` leaves room for fewer than 2 records (no verdict on the data).

    Records of one dataset often have one length (fixed-size features): their headers are then the same 12 bytes,
    checked once, and the CRCs of their data all together.
    """
    stride = _HEADER_SIZE + length + _CRC.size
    count = min(limit, _RUN_ROWS, (len(buf) - pos) // stride)
    if count < 2:
        return None
    # Records of varying lengths (text lines, say) stop here, at a bytes compare or three: no numpy for a run that
    # is not there.
    first = buf[pos : pos + _HEADER_SIZE]
    for at in range(pos + stride, pos + min(count, 4) * stride, stride):
        if buf[at : at + _HEADER_SIZE] != first:
            return []
    if masked_crc32c(buf[pos : pos + _LENGTH.size]) != _CRC.unpack_from(buf, pos + _LENGTH.size)[0]:
        return []
    rows = np.frombuffer(buf, dtype=np.uint8, count=count * stride, offset=pos).reshape(count, stride)
    differs = (rows[:, :_HEADER_SIZE] != rows[0, :_HEADER_SIZE]).any(axis=1)
    if differs.any():
        count = int(differs.argmax())
    if count < 2:
        return []
    records = [buf[at : at + length] for at in range(pos + _HEADER_SIZE, pos + count * stride, stride)]
    crcs = np.fromiter(map(google_crc32c.value, records), dtype=np.uint64, count=count)
    masked = (((crcs >> 15) | (crcs << 17)) + _MASK_DELTA) & 0xFFFFFFFF
    wrong = masked != rows[:count, stride - _CRC.size :].copy().view("<u4").ravel()
    # up to the first record whose CRC is wrong: the careful path then names it
    return records[: int(wrong.argmax())] if wrong.any() else records


class _RecordIterator:
    """Iterates over the records of an open TFRecord file, checking both CRCs of each."""

    def __init__(self, path: str, options: TFRecordOptions) -> None:
        self._path = path
        raw = GFile(path, "rb")
        raw.tell()  # opens the file now: a missing file fails when the iterator is made, as in TF
        compression = TFRecordOptions.get_compression_type_string(options)
        chunk = options.input_buffer_size or _CHUNK
        self._stream: _Chunks | None = _Chunks(raw, chunk, path, options._wbits(compression) if compression else None)
        self._offset = 0

    def __iter__(self) -> _RecordIterator:
        return self

    def __next__(self) -> bytes:
        if self._stream is None:
            raise StopIteration
        offset = self._offset
        header = self._stream.read(_HEADER_SIZE)
        if len(header) < _HEADER_SIZE:  # TF ends quietly at a partial header too
            self._close()
            raise StopIteration
        (length,) = _LENGTH.unpack_from(header)
        if masked_crc32c(header[: _LENGTH.size]) != _CRC.unpack_from(header, _LENGTH.size)[0]:
            hint = " (Is this even a TFRecord file?)" if offset == 0 else ""
            self._close()
            raise errors.DataLossError(None, None, f"corrupted record at {offset}{hint}")
        body = self._stream.read(length + _CRC.size)
        if len(body) < length + _CRC.size:
            self._close()
            raise errors.DataLossError(None, None, f"truncated record at {offset} in {self._path}")
        data = body[:length]
        if masked_crc32c(data) != _CRC.unpack_from(body, length)[0]:
            self._close()
            raise errors.DataLossError(None, None, f"corrupted record at {offset + _HEADER_SIZE}")
        self._offset = offset + _HEADER_SIZE + length + _CRC.size
        return data

    def take(self, n: int) -> list[bytes]:
        """Up to ``n`` next records (fewer only at the end of the file), framed straight from the read buffer.

        Raises:
            DataLossError: as iterating does.
        """
        out: list[bytes] = []
        header_size, crc_size = _HEADER_SIZE, _CRC.size
        skip = 0  # records read one by one before looking for a run again, after a miss
        while len(out) < n:
            stream = self._stream
            if stream is None:
                break
            buf, pos = stream._buffer, stream._pos
            if len(buf) - pos >= header_size:
                (length,) = _LENGTH.unpack_from(buf, pos)
                same = None if skip else _same_length_run(buf, pos, length, n - len(out))
                if same:
                    out.extend(same)
                    stream._pos = pos + len(same) * (header_size + length + crc_size)
                    self._offset += stream._pos - pos
                    continue
                skip = _SKIP_AFTER_MISS if same is not None else max(0, skip - 1)
                start = pos + header_size
                end = start + length + crc_size
                if (
                    end <= len(buf)
                    and masked_crc32c(buf[pos : pos + _LENGTH.size]) == _CRC.unpack_from(buf, pos + _LENGTH.size)[0]
                ):
                    data = buf[start : end - crc_size]
                    if masked_crc32c(data) == _CRC.unpack_from(buf, end - crc_size)[0]:
                        stream._pos = end
                        self._offset += end - pos
                        out.append(data)
                        continue
            # The buffer ends inside this record, or a CRC failed: one record the careful way (it refills the buffer,
            # or raises the error naming the offset).
            record = next(self, None)
            if record is None:
                break
            out.append(record)
        return out

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.close()


def tf_record_iterator(path: Any, options: Any = None) -> _RecordIterator:
    """An iterator over the records of the TFRecord file ``path``.

    Args:
        path: A local path or fsspec URL.
        options: A :class:`TFRecordOptions`, a :class:`TFRecordCompressionType` or its name, or None.

    Raises:
        NotFoundError: there is no such file (raised here, not at the first record).
        DataLossError: while iterating, a record's CRC does not match or the file ends inside a record.

    Example:
        >>> with TFRecordWriter("memory://tf_record_iter_doc/r", TFRecordCompressionType.ZLIB) as writer:
        ...     for i in range(3):
        ...         writer.write(str(i))
        >>> list(tf_record_iterator("memory://tf_record_iter_doc/r", "ZLIB"))
        [b'0', b'1', b'2']
    """
    return _RecordIterator(file_io._fspath(path), _options(options))


__all__ = [
    "TFRecordCompressionType",
    "TFRecordOptions",
    "TFRecordWriter",
    "encode_record",
    "masked_crc32c",
    "tf_record_iterator",
]
