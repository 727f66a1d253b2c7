"""TF's V2 checkpoint format (the tensor bundle): ``<prefix>.index`` plus ``<prefix>.data-NNNNN-of-MMMMM``.

The index is a table (:mod:`dtf_notebook.lib.io.table`): key ``""`` holds a ``BundleHeaderProto`` (shard count,
endianness), each saved tensor's name a ``BundleEntryProto`` (dtype, shape, shard, offset, size, masked CRC-32C).
A data file holds the tensors' bytes: numbers as their little-endian memory, strings as the varint length of each
element, a masked CRC-32C of those lengths (as ``uint32``), then the bytes. A partitioned variable's entry lists
its ``slices`` instead of bytes; each slice is an entry of its own under a key in TF's ``OrderedCode``
(``0``, the name, the rank, then each axis's start and length).

:class:`TensorBundleReader` reads such a checkpoint (written by TF, or by :func:`write_tensor_bundle`), whole
tensors or any slice, checking every checksum; :func:`write_tensor_bundle` writes one that TF restores.

Example:
    >>> import numpy as np
    >>> files = {}
    >>> write_tensor_bundle("ckpt/model", {"w": np.ones((2, 3), np.float32), "s": np.array([b"ab"], object)},
    ...                     files.__setitem__)
    >>> sorted(files)
    ['ckpt/model.data-00000-of-00001', 'ckpt/model.index']
    >>> reader = TensorBundleReader("ckpt/model", files.__getitem__)
    >>> reader.names(), reader.shape("w"), reader.read("s")
    (['s', 'w'], [2, 3], array([b'ab'], dtype=object))
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any

import google_crc32c
import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.lib.io.table import read_table, write_table
from dtf_notebook.lib.io.tf_record import masked_crc32c
from dtf_notebook.lib.io.varint import read_varint as _varint
from dtf_notebook.protos.bundle_pb import BundleEntryProto, BundleHeaderProto

__all__ = ["TensorBundleReader", "data_filename", "encode_tensor", "index_filename", "slice_key", "write_tensor_bundle"]

INDEX_SUFFIX = ".index"
#: Glob matching every data file of a prefix.
DATA_GLOB = ".data-?????-of-?????"


def index_filename(prefix: str) -> str:
    """``<prefix>.index``.

    Example:
        >>> index_filename("m.ckpt-3")
        'm.ckpt-3.index'
    """
    return prefix + INDEX_SUFFIX


def data_filename(prefix: str, shard: int, num_shards: int) -> str:
    """``<prefix>.data-<shard>-of-<num_shards>`` with TF's five-digit numbers.

    Example:
        >>> data_filename("m.ckpt-3", 0, 2)
        'm.ckpt-3.data-00000-of-00002'
    """
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


# ---- TF's OrderedCode keys of slices ----------------------------------------------------------------------------
def _num_increasing(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(raw)]) + raw


_HEADER_BITS = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0), (0xFE, 0), (0xFF, 0)]
_HEADER_BITS += [(0xFF, 0x80), (0xFF, 0xC0)]


def _signed_num_increasing(value: int) -> bytes:
    magnitude = ~value if value < 0 else value
    if magnitude < 64:
        return bytes([(0x80 ^ value) & 0xFF])
    length = 10 if magnitude.bit_length() >= 63 else magnitude.bit_length() // 7 + 1
    buf = bytearray((b"\xff\xff" if value < 0 else b"\0\0") + struct.pack(">q", value))[10 - length :]
    buf[0] ^= _HEADER_BITS[length][0]
    buf[1] ^= _HEADER_BITS[length][1]
    return bytes(buf)


def slice_key(name: str, starts: list[int], lengths: list[int]) -> bytes:
    """The index key TF stores one slice of a partitioned variable under (``EncodeTensorNameSlice``).

    Example:
        >>> slice_key("p", [3, 0], [2, 2])
        b'\\x00p\\x00\\x01\\x01\\x02\\x83\\x82\\x80\\x82'
    """
    escaped = name.encode("utf-8").replace(b"\xff", b"\xff\x00").replace(b"\x00", b"\x00\xff")
    key = _num_increasing(0) + escaped + b"\x00\x01" + _num_increasing(len(starts))
    for start, length in zip(starts, lengths):
        key += _signed_num_increasing(start) + _signed_num_increasing(length)
    return key


# ---- reading ----------------------------------------------------------------------------------------------------
def _extent(proto: Any, size: int) -> tuple[int, int]:
    return (proto.start, proto.length) if proto.HasField("length") else (0, size)


def _key_extents(part: Any) -> tuple[list[int], list[int]]:
    """A slice's starts and lengths as its key spells them: an axis taken whole (no length) is length -1."""
    return [e.start for e in part.extent], [e.length if e.HasField("length") else -1 for e in part.extent]


class TensorBundleReader:
    """The tensors of a TF V2 checkpoint, as numpy arrays (strings: ``object`` arrays of bytes).

    Args:
        prefix: The checkpoint's prefix (``.../model.ckpt-1000``).
        read_file: Reads one whole file by path (its caller decides where the process may read).
        read_range: Reads ``size`` bytes of a file from an offset (bytes, or a writable ``uint8`` array the reader
            may keep): then each tensor is read alone, else each data file whole, once.

    Raises:
        NotFoundError: ``read_file`` found no index file (from ``read_file``).
        DataLossError: the index is not a TF checkpoint index, or is big-endian.

    Example:
        >>> files = {}
        >>> write_tensor_bundle("doc/m", {"b": np.arange(3, dtype=np.int64)}, files.__setitem__)
        >>> TensorBundleReader("doc/m", files.__getitem__).dtype("b")
        tf.int64
    """

    def __init__(
        self,
        prefix: str,
        read_file: Callable[[str], bytes],
        read_range: Callable[[str, int, int], bytes | np.ndarray] | None = None,
    ) -> None:
        self.prefix = prefix
        self.index_path = index_filename(prefix)
        self._read_file = read_file
        self._read_range = read_range
        self._entries: dict[str, Any] = {}
        self._slices: dict[bytes, Any] = {}
        self._data: dict[int, bytes] = {}
        header = None
        for key, value in read_table(read_file(self.index_path), self.index_path):
            if key == b"":
                header = BundleHeaderProto.FromString(value)
            elif key.startswith(b"\x00"):
                self._slices[key] = BundleEntryProto.FromString(value)
            else:
                self._entries[key.decode("utf-8")] = BundleEntryProto.FromString(value)
        if header is None:
            raise errors.DataLossError(None, None, f"{self.index_path} has no bundle header: not a TF checkpoint")
        if header.endianness != BundleHeaderProto.LITTLE:
            raise errors.DataLossError(None, None, f"{self.index_path} was written big-endian; only little is read")
        self.num_shards = header.num_shards

    def names(self) -> list[str]:
        """Saved tensor names, sorted."""
        return sorted(self._entries)

    def has_tensor(self, name: str) -> bool:
        """True when a tensor of that saved name is in the checkpoint."""
        return name in self._entries

    def _entry(self, name: str) -> Any:
        entry = self._entries.get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint {self.prefix}")
        return entry

    def shape(self, name: str) -> list[int]:
        """The full shape of a saved tensor (partitioned ones: the whole variable's)."""
        return [d.size for d in self._entry(name).shape.dim]

    def dtype(self, name: str) -> dtypes.DType:
        """The dtype of a saved tensor."""
        return dtypes.as_dtype(self._entry(name).dtype)

    def shards(self) -> list[dict[str, Any]]:
        """Each data file of the checkpoint, in shard order, with the names of the tensors it holds (a partitioned
        one is named by every file that holds one of its slices)."""
        held: list[set[str]] = [set() for _ in range(self.num_shards)]
        for name, entry in self._entries.items():
            parts = [self._slices.get(slice_key(name, *_key_extents(s))) for s in entry.slices]
            for part in parts if entry.slices else [entry]:
                if part is not None and 0 <= part.shard_id < self.num_shards:
                    held[part.shard_id].add(name)
        return [
            {"shard": i, "file": data_filename(self.prefix, i, self.num_shards).rsplit("/", 1)[-1]}
            | {"tensors": sorted(held[i])}
            for i in range(self.num_shards)
        ]

    def _shard(self, number: int) -> bytes:
        if number not in self._data:
            if not 0 <= number < self.num_shards:
                raise errors.DataLossError(None, None, f"{self.index_path} names shard {number} of {self.num_shards}")
            self._data[number] = self._read_file(data_filename(self.prefix, number, self.num_shards))
        return self._data[number]

    def _value(self, name: str, entry: Any) -> np.ndarray:
        dtype = dtypes.as_dtype(entry.dtype)
        shape = [d.size for d in entry.shape.dim]
        path = data_filename(self.prefix, entry.shard_id, self.num_shards)
        if self._read_range is not None:  # only this tensor's bytes
            if not 0 <= entry.shard_id < self.num_shards:
                raise errors.DataLossError(
                    None, None, f"{self.index_path} names shard {entry.shard_id} of {self.num_shards}"
                )
            data = self._read_range(path, entry.offset, entry.size)
        else:
            data = self._shard(entry.shard_id)[entry.offset : entry.offset + entry.size]
        if len(data) != entry.size:
            raise errors.DataLossError(None, None, f"{path} ends inside tensor {name}")
        try:
            if dtype.is_string:
                value, crc = _decode_strings(bytes(data), int(np.prod(shape, dtype=np.int64)))
                value = value.reshape(shape)
            elif isinstance(data, np.ndarray):  # the reader's own copy of the bytes: viewed, not copied again
                value = data.view(dtype.np_dtype).reshape(shape)
                crc = _masked_crc_of_array(data)
            else:
                value = np.frombuffer(data, dtype=dtype.np_dtype).reshape(shape).copy()
                crc = masked_crc32c(data)
        except ValueError as e:
            raise errors.DataLossError(None, None, f"Tensor {name} in {path} is corrupt: {e}") from None
        if crc != entry.crc32c:
            raise errors.DataLossError(None, None, f"Checksum does not match: tensor {name} in {path} is corrupt")
        return value

    def read(self, name: str, spec: str = "") -> np.ndarray:
        """The saved tensor ``name``, or its slice ``spec`` (TF's ``"d0 d1 off,len:off,len"``), as numpy.

        Raises:
            NotFoundError: no tensor of that name.
            InvalidArgumentError: ``spec``'s full shape differs from the saved one, or the saved slices do not
                cover it.
            DataLossError: a checksum or size does not match.
        """
        from dtf_notebook.runtime.checkpoint_format import parse_slice_spec

        entry = self._entry(name)
        full = [d.size for d in entry.shape.dim]
        parsed = parse_slice_spec(spec)
        if parsed is not None and parsed[0] != full:
            raise errors.InvalidArgumentError(
                None, None, f"Restoring {name}: {self.index_path} holds it with shape {full}, its parts say {parsed[0]}"
            )
        offset, lengths = (parsed[1], parsed[2]) if parsed is not None else ([0] * len(full), full)
        if not entry.slices:
            value = self._value(name, entry)
            return value[tuple(slice(o, o + n) for o, n in zip(offset, lengths))] if parsed is not None else value
        return self._assemble(name, entry, offset, lengths)

    def _assemble(self, name: str, entry: Any, offset: list[int], lengths: list[int]) -> np.ndarray:
        dtype = dtypes.as_dtype(entry.dtype)
        full = [d.size for d in entry.shape.dim]
        out = np.empty(lengths, dtype=object if dtype.is_string else dtype.np_dtype)
        covered = 0
        for part in entry.slices:
            starts, sizes = zip(*(_extent(e, n) for e, n in zip(part.extent, full))) if full else ((), ())
            lo = [max(a, b) for a, b in zip(offset, starts)]
            hi = [min(a + n, b + m) for a, n, b, m in zip(offset, lengths, starts, sizes)]
            if any(h <= low for low, h in zip(lo, hi)):
                continue
            key = slice_key(name, *_key_extents(part))
            if key not in self._slices:
                raise errors.DataLossError(None, None, f"{self.index_path} lists a slice of {name} it does not hold")
            value = self._value(name, self._slices[key])
            out[tuple(slice(a - b, h - b) for a, h, b in zip(lo, hi, offset))] = value[
                tuple(slice(a - b, h - b) for a, h, b in zip(lo, hi, starts))
            ]
            covered += int(np.prod([h - a for a, h in zip(lo, hi)], dtype=np.int64))
        if covered != int(np.prod(lengths, dtype=np.int64)):
            raise errors.InvalidArgumentError(
                None, None, f"Restoring {name}: the slices saved in {self.index_path} do not cover the slice asked for"
            )
        return out


def _decode_strings(data: bytes, count: int) -> tuple[np.ndarray, int]:
    sizes, pos = [], 0
    for _ in range(count):
        size, pos = _varint(data, pos)
        sizes.append(size)
    lengths = struct.pack(f"<{count}I", *(s & 0xFFFFFFFF for s in sizes))
    if data[pos : pos + 4] != struct.pack("<I", masked_crc32c(lengths)):
        raise ValueError("the checksum of the string lengths does not match")
    crc = google_crc32c.extend(google_crc32c.value(lengths), data[pos : pos + 4])
    pos += 4
    out = np.empty(count, dtype=object)
    for i, size in enumerate(sizes):
        out[i] = data[pos : pos + size]
        pos += size
    if pos != len(data):
        raise ValueError("the string bytes do not fill the tensor's extent")
    crc = google_crc32c.extend(crc, data[pos - sum(sizes) : pos])
    return out, _mask(crc)


def _masked_crc_of_array(data: np.ndarray, chunk: int = 1 << 18) -> int:
    # google_crc32c takes only bytes: a piece at a time, each copy small enough to stay in the cache.
    view, crc = memoryview(data).cast("B"), 0
    for start in range(0, len(view), chunk):
        crc = google_crc32c.extend(crc, view[start : start + chunk].tobytes())
    return _mask(crc)


def _mask(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---- writing ----------------------------------------------------------------------------------------------------
def encode_tensor(value: np.ndarray, dtype: dtypes.DType) -> tuple[bytes, int]:
    """A tensor's bytes in a data file and their masked CRC-32C, as TF's ``BundleWriter`` writes them: numbers as
    their little-endian memory; strings as each element's varint length, the masked CRC-32C of the lengths as
    ``uint32``, then the elements' bytes.

    Example:
        >>> encode_tensor(np.array([b"ab", b"c"], dtype=object), dtypes.string)[0]
        b'\\x02\\x01\\x03q|gabc'
    """
    if not dtype.is_string:
        data = np.ascontiguousarray(value, dtype=dtype.np_dtype).tobytes()
        return data, masked_crc32c(data)
    items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in value.reshape(-1)]
    head = bytearray()
    for item in items:
        size = len(item)
        while size > 0x7F:
            head.append((size & 0x7F) | 0x80)
            size >>= 7
        head.append(size)
    lengths = struct.pack(f"<{len(items)}I", *(len(i) & 0xFFFFFFFF for i in items))
    check = struct.pack("<I", masked_crc32c(lengths))
    body = b"".join(items)
    crc = google_crc32c.extend(google_crc32c.extend(google_crc32c.value(lengths), check), body)
    return bytes(head) + check + body, _mask(crc)


def write_tensor_bundle(prefix: str, tensors: Mapping[str, Any], write_file: Callable[[str, bytes], Any]) -> None:
    """Writes ``tensors`` (name -> numpy value) as a one-shard TF V2 checkpoint: data file first, index last.

    Args:
        prefix: The checkpoint's prefix.
        tensors: Saved name -> array (``object`` arrays of bytes or str for strings).
        write_file: Writes one whole file by path.

    Raises:
        TypeError: a value's dtype has no TF dtype.

    Example:
        >>> files = {}
        >>> write_tensor_bundle("doc/w", {"x": np.float32(2.5)}, files.__setitem__)
        >>> TensorBundleReader("doc/w", files.__getitem__).read("x")
        array(2.5, dtype=float32)
    """
    data, entries = bytearray(), []
    for name in sorted(tensors, key=lambda n: n.encode("utf-8")):
        value = np.asarray(tensors[name])
        dtype = dtypes.string if value.dtype == object else dtypes.as_dtype(value.dtype)
        raw, crc = encode_tensor(value, dtype)
        entry = BundleEntryProto(dtype=dtype.as_datatype_enum, offset=len(data), size=len(raw), crc32c=crc)
        entry.shape.dim.extend(entry.shape.Dim(size=d) for d in value.shape)
        data += raw
        entries.append((name.encode("utf-8"), entry.SerializeToString()))
    header = BundleHeaderProto(num_shards=1)
    header.version.producer = 1
    write_file(data_filename(prefix, 0, 1), bytes(data))
    write_file(index_filename(prefix), write_table([(b"", header.SerializeToString()), *entries]))
