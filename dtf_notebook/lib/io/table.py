"""TF's immutable sorted key-value table (``tensorflow/core/lib/io/table``, LevelDB's SSTable): read and written.

A table is a run of data blocks, a meta-index block, an index block and a 48-byte footer. A block holds
prefix-compressed entries (``varint shared | varint unshared | varint value length | key suffix | value``), then a
``uint32`` restart-point array and its length; each block is followed by a 5-byte trailer (compression type, masked
CRC-32C of the block and that type byte). The footer holds the meta-index and index block handles (varint offset
and size) and the magic number. TF's checkpoint ``.index`` files are such tables, written uncompressed.

Example:
    >>> data = write_table([(b"", b"header"), (b"a", b"1"), (b"ab", b"2")])
    >>> list(read_table(data, "doc.index"))
    [(b'', b'header'), (b'a', b'1'), (b'ab', b'2')]
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

from dtf_notebook import errors
from dtf_notebook.lib.io.tf_record import masked_crc32c
from dtf_notebook.lib.io.varint import read_varint

__all__ = ["read_table", "write_table"]

MAGIC = 0xDB4775248B80FB57
FOOTER_SIZE = 48
TRAILER_SIZE = 5
_NO_COMPRESSION = 0


def _varint(data: bytes, pos: int, path: str) -> tuple[int, int]:
    try:
        return read_varint(data, pos)
    except ValueError:
        raise errors.DataLossError(None, None, f"Table {path} is corrupt: a varint runs past its block") from None


def _put_varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _block(data: bytes, offset: int, size: int, path: str) -> bytes:
    end = offset + size
    if end + TRAILER_SIZE > len(data):
        raise errors.DataLossError(None, None, f"Table {path} is truncated: a block ends past the file")
    contents, kind = data[offset:end], data[end]
    (crc,) = struct.unpack_from("<I", data, end + 1)
    if masked_crc32c(data[offset : end + 1]) != crc:
        raise errors.DataLossError(None, None, f"Table {path} is corrupt: block checksum mismatch at offset {offset}")
    if kind != _NO_COMPRESSION:
        raise errors.UnimplementedError(
            None, None, f"Table {path} has a block compressed with type {kind}; only uncompressed tables are read"
        )
    return contents


def _entries(block: bytes, path: str) -> Iterator[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise errors.DataLossError(None, None, f"Table {path} is corrupt: a block is too short")
    (restarts,) = struct.unpack_from("<I", block, len(block) - 4)
    limit = len(block) - 4 - 4 * restarts
    if limit < 0:
        raise errors.DataLossError(None, None, f"Table {path} is corrupt: bad restart count {restarts}")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = _varint(block, pos, path)
        unshared, pos = _varint(block, pos, path)
        length, pos = _varint(block, pos, path)
        if shared > len(key) or pos + unshared + length > limit:
            raise errors.DataLossError(None, None, f"Table {path} is corrupt: an entry runs past its block")
        key = key[:shared] + block[pos : pos + unshared]
        pos += unshared
        yield key, block[pos : pos + length]
        pos += length


def read_table(data: bytes, path: str) -> Iterator[tuple[bytes, bytes]]:
    """Every ``(key, value)`` of a table's bytes, in key order; every block's checksum is checked.

    Args:
        data: The whole table file.
        path: The file's name, for errors.

    Raises:
        DataLossError: the bytes are not a table (bad magic number, checksum, block bounds).
        UnimplementedError: a block is compressed (TF's checkpoint index files never are).

    Example:
        >>> dict(read_table(write_table([(b"k", b"v")]), "t"))
        {b'k': b'v'}
    """
    if len(data) < FOOTER_SIZE or struct.unpack_from("<Q", data, len(data) - 8)[0] != MAGIC:
        raise errors.DataLossError(None, None, f"{path} is not a TF table (a checkpoint .index file): bad magic")
    footer = data[len(data) - FOOTER_SIZE :]
    _, pos = _varint(footer, 0, path)  # the meta-index block: TF's bundles keep nothing there
    _, pos = _varint(footer, pos, path)
    index_offset, pos = _varint(footer, pos, path)
    index_size, _ = _varint(footer, pos, path)
    for _, handle in _entries(_block(data, index_offset, index_size, path), path):
        offset, pos = _varint(handle, 0, path)
        size, _ = _varint(handle, pos, path)
        yield from _entries(_block(data, offset, size, path), path)


class _BlockBuilder:
    def __init__(self, restart_interval: int) -> None:
        self.out, self.restarts, self.count, self.last = bytearray(), [0], 0, b""
        self.restart_interval = restart_interval

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self.count < self.restart_interval:
            limit = min(len(key), len(self.last))
            while shared < limit and key[shared] == self.last[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.out))
            self.count = 0
        for number in (shared, len(key) - shared, len(value)):
            _put_varint(self.out, number)
        self.out += key[shared:] + value
        self.last, self.count = key, self.count + 1

    def finish(self) -> bytes:
        return bytes(self.out) + struct.pack(f"<{len(self.restarts) + 1}I", *self.restarts, len(self.restarts))


def _write_block(out: bytearray, contents: bytes) -> bytes:
    handle = bytearray()
    _put_varint(handle, len(out))
    _put_varint(handle, len(contents))
    trailer = bytes([_NO_COMPRESSION])
    out += contents + trailer + struct.pack("<I", masked_crc32c(contents + trailer))
    return bytes(handle)


def write_table(entries: Iterable[tuple[bytes, bytes]], block_size: int = 4096, restart_interval: int = 16) -> bytes:
    """The bytes of an uncompressed table holding ``entries`` (keys strictly increasing, as TF requires).

    Raises:
        ValueError: the keys are not strictly increasing.

    Example:
        >>> write_table([(b"a", b"")])[-8:] == struct.pack("<Q", MAGIC)
        True
    """
    out, index = bytearray(), _BlockBuilder(1)
    block, last, pending = _BlockBuilder(restart_interval), None, False
    for key, value in entries:
        if last is not None and key <= last:
            raise ValueError(f"Table keys must increase strictly: {key!r} after {last!r}")
        block.add(key, value)
        last, pending = key, True
        if len(block.out) >= block_size:
            index.add(key, _write_block(out, block.finish()))
            block, pending = _BlockBuilder(restart_interval), False
    if pending:
        index.add(last, _write_block(out, block.finish()))
    meta_handle = _write_block(out, _BlockBuilder(restart_interval).finish())
    index_handle = _write_block(out, index.finish())
    footer = (meta_handle + index_handle).ljust(FOOTER_SIZE - 8, b"\0") + struct.pack("<Q", MAGIC)
    return bytes(out + footer)
