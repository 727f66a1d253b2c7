"""TFRecord framing: the container format of event files.

Each record is ``uint64 length | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)``,
all little-endian. The CRC is CRC-32C (Castagnoli), "masked" by rotating it and adding a constant, so
that a CRC of data that itself holds CRCs is not trivially zero.

Example:
    >>> import io
    >>> buffer = io.BytesIO()
    >>> RecordWriter(buffer).write(b"hello")
    >>> buffer.getvalue()[:8] == (5).to_bytes(8, "little")
    True
    >>> list(read_records(io.BytesIO(buffer.getvalue())))
    [b'hello']
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import BinaryIO

from dtf_notebook import errors
from dtf_notebook.lib.io.tf_record import encode_record, masked_crc32c

_CRC = struct.Struct("<I")
_HEADER = struct.Struct("<QI")  # length and its masked CRC


class RecordWriter:
    """Writes framed records to a binary file object.

    Example:
        >>> import io
        >>> out = io.BytesIO()
        >>> writer = RecordWriter(out)
        >>> writer.write(b"a"); writer.write(b"bc")
        >>> len(out.getvalue())
        35
    """

    def __init__(self, file: BinaryIO) -> None:
        self._file = file

    def write(self, data: bytes) -> None:
        """Appends one record."""
        self._file.write(encode_record(data))

    def flush(self) -> None:
        """Flushes the file object."""
        self._file.flush()

    def close(self) -> None:
        """Closes the file object."""
        self._file.close()


def read_records(file: BinaryIO, name: str = "<stream>") -> Iterator[bytes]:
    """Yields the data of each record in ``file``, checking both CRCs.

    Args:
        file: A binary file object positioned at a record boundary.
        name: The file's name, for error messages.

    Raises:
        DataLossError: a CRC does not match, or the file ends inside a record.

    Example:
        >>> import io
        >>> list(read_records(io.BytesIO(encode_record(b"x") + encode_record(b"yz"))))
        [b'x', b'yz']
    """
    offset = 0
    while True:
        header = file.read(_HEADER.size)
        if not header:
            return
        if len(header) < _HEADER.size:
            raise errors.DataLossError(None, None, f"Truncated record header at offset {offset} in {name}")
        length, length_crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != length_crc:
            raise errors.DataLossError(None, None, f"Corrupted record length at offset {offset} in {name}")
        data = file.read(length)
        footer = file.read(_CRC.size)
        if len(data) < length or len(footer) < _CRC.size:
            raise errors.DataLossError(None, None, f"Truncated record at offset {offset} in {name}")
        if masked_crc32c(data) != _CRC.unpack(footer)[0]:
            raise errors.DataLossError(None, None, f"Corrupted record data at offset {offset} in {name}")
        offset += _HEADER.size + length + _CRC.size
        yield data


__all__ = ["RecordWriter", "encode_record", "masked_crc32c", "read_records"]
