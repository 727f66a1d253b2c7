"""Sharded saves in TF's V2 checkpoint format (the tensor bundle), as TF's ``SaveV2`` and ``MergeV2Checkpoints``.

Each task that holds variables writes the bytes of its shard (:func:`encode_shard`) and reports what it wrote as
plain data: per tensor its saved name, slice spec, dtype, shape and where its bytes lie (offset, size, masked
CRC-32C). One task then builds the single index from those reports (:func:`build_index`), the way TF's merge
combines its shards' indexes: a partitioned variable's slices, saved by several tasks, become one entry listing
every slice, and each slice an entry of its own under TF's slice key. The files are TF's:
``<prefix>.data-NNNNN-of-MMMMM`` and ``<prefix>.index`` (:mod:`dtf_notebook.lib.io.tensor_bundle`), so TF's
``Saver.restore``, ``tf.train.load_checkpoint`` and ``NewCheckpointReader`` read them.

Example:
    >>> import torch
    >>> from dtf_notebook.lib.io.tensor_bundle import TensorBundleReader
    >>> data0, entries0 = encode_shard([("w", "", torch.ones(2, 3)), ("e", "4 3 0,2:0,3", torch.zeros(2, 3))])
    >>> data1, entries1 = encode_shard([("e", "4 3 2,2:0,3", torch.ones(2, 3))])
    >>> files = {"m.data-00000-of-00002": data0, "m.data-00001-of-00002": data1}
    >>> files["m.index"] = build_index([{"shard": 0, "num_shards": 2, "entries": entries0},
    ...                                 {"shard": 1, "num_shards": 2, "entries": entries1}])
    >>> reader = TensorBundleReader("m", files.__getitem__)
    >>> reader.names(), reader.read("e")[:, 0].tolist()
    (['e', 'w'], [0.0, 0.0, 1.0, 1.0])
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io.table import write_table
from dtf_notebook.lib.io.tensor_bundle import data_filename, encode_tensor, slice_key
from dtf_notebook.protos.bundle_pb import BundleEntryProto, BundleHeaderProto
from dtf_notebook.runtime.checkpoint_format import checked_item, parse_slice_spec

__all__ = ["build_index", "encode_shard", "expected_shard_files"]

_TEMP_SUFFIX = r"\.tmp-[0-9a-f]{32}\Z"


def expected_shard_files(prefix: str, shard: int, num_shards: int) -> tuple[str, re.Pattern[str]]:
    """The exact file name shard ``shard`` of ``num_shards`` of ``prefix`` has, and the pattern of its temporary
    names (what a save kernel may report), both without a directory.

    Example:
        >>> final, temp = expected_shard_files("/run/model", 0, 2)
        >>> final, bool(temp.match(final + ".tmp-" + "0" * 32)), bool(temp.match("../" + final))
        ('model.data-00000-of-00002', True, False)
    """
    final = data_filename(prefix, shard, num_shards).rsplit("/", 1)[-1]
    return final, re.compile(re.escape(final) + _TEMP_SUFFIX)


def _extents(spec: str) -> tuple[list[int], list[int], list[int]] | None:
    """A slice spec's full shape, and its starts and lengths as TF keys them: a ``-`` axis (the whole axis) has
    length -1."""
    parsed = parse_slice_spec(spec)
    if parsed is None:
        return None
    full, starts, lengths = parsed
    whole = spec.rsplit(" ", 1)[-1].split(":")
    return full, starts, [-1 if w == "-" else n for w, n in zip(whole, lengths)]


def _host_array(value: Any) -> np.ndarray:
    """A runtime value's elements as a numpy array in host memory, without a copy where there is one already."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().resolve_conj()
        if t.dtype is torch.bfloat16:  # numpy has no bfloat16 of torch's: the same 16 bits, viewed
            return t.view(torch.int16).numpy().view(dtypes.bfloat16.np_dtype)
        return t.numpy()
    return np.asarray(value)


def encode_shard(items: Sequence[tuple[str, str, Any]]) -> tuple[bytes, list[dict[str, Any]]]:
    """The data file of one shard for ``(saved name, slice spec, runtime value)`` items, and a description of each.

    Returns:
        The file's bytes and one entry per item: ``name``, ``slice``, ``dtype`` (its name), ``shape`` (of the
        value: the slice's for a slice), and ``offset``, ``size`` and ``crc32c`` of its bytes in the file.

    Raises:
        InvalidArgumentError: a value's shape does not match its slice spec.

    Example:
        >>> import torch
        >>> data, entries = encode_shard([("n", "", np.array([b"ab", b"c"], dtype=object)), ("w", "", torch.ones(2))])
        >>> [(e["name"], e["dtype"], e["shape"], e["offset"], e["size"]) for e in entries], len(data)
        ([('n', 'string', [2], 0, 9), ('w', 'float32', [2], 9, 8)], 17)
    """
    chunks: list[bytes] = []
    entries: list[dict[str, Any]] = []
    offset = 0
    for name, spec, value in items:
        dtype, shape = checked_item(name, spec, value)
        raw, crc = encode_tensor(_host_array(value), dtype)
        chunks.append(raw)
        entries.append(
            {"name": name, "slice": spec, "dtype": dtype.name, "shape": shape, "offset": offset, "size": len(raw)}
            | {"crc32c": crc}
        )
        offset += len(raw)
    return b"".join(chunks), entries


def _checked_entry(entry: Any, shard: int) -> dict[str, Any]:
    """One reported entry, its fields of the right kinds (reports travel between tasks as data)."""
    fields = {"name": str, "slice": str, "dtype": str, "shape": list, "offset": int, "size": int, "crc32c": int}
    if not isinstance(entry, Mapping) or any(not isinstance(entry.get(k), t) for k, t in fields.items()):
        raise errors.InvalidArgumentError(None, None, f"Shard {shard} reports a malformed tensor entry: {entry!r}")
    if entry["offset"] < 0 or entry["size"] < 0 or any(type(d) is not int or d < 0 for d in entry["shape"]):
        raise errors.InvalidArgumentError(None, None, f"Shard {shard} reports a malformed tensor entry: {entry!r}")
    if not entry["name"]:  # (the index's header has the empty key)
        raise errors.InvalidArgumentError(None, None, "A saved tensor needs a name; one was saved under ''")
    try:
        dtypes.as_dtype(entry["dtype"])
        parse_slice_spec(entry["slice"])
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(None, None, f"Shard {shard} reports tensor {entry['name']}: {e}") from None
    return dict(entry)


def _entry_proto(dtype: str, shape: Sequence[int]) -> BundleEntryProto:
    proto = BundleEntryProto(dtype=dtypes.as_dtype(dtype).as_datatype_enum)
    proto.shape.dim.extend(proto.shape.Dim(size=d) for d in shape)
    return proto


def build_index(shards: Sequence[Mapping[str, Any]]) -> bytes:
    """The bytes of ``<prefix>.index`` for shards described as ``{"shard", "num_shards", "entries"}``.

    Raises:
        InvalidArgumentError: the shard numbers are not ``0..n-1`` of ``n``, a tensor is saved twice, the slices of
            a partitioned tensor disagree on its dtype or full shape, or an entry is malformed.

    Example:
        >>> import torch
        >>> _, entries = encode_shard([("w", "", torch.ones(2))])
        >>> build_index([{"shard": 0, "num_shards": 2, "entries": entries}])
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.InvalidArgumentError: Expected shards 0..0 of 1, got [(0, 2)]
    """
    num = len(shards)
    ordered = sorted(shards, key=lambda s: s["shard"])
    if [s["shard"] for s in ordered] != list(range(num)) or any(s["num_shards"] != num for s in ordered):
        found = [(s["shard"], s["num_shards"]) for s in ordered]
        raise errors.InvalidArgumentError(None, None, f"Expected shards 0..{num - 1} of {num}, got {found}")
    table: dict[bytes, BundleEntryProto] = {}
    sliced: dict[str, tuple[str, list[int]]] = {}  # name -> (dtype, full shape) of a partitioned tensor
    for s in ordered:
        for entry in (_checked_entry(e, s["shard"]) for e in s["entries"]):
            name, spec = entry["name"], entry["slice"]
            extents = _extents(spec)
            if extents is None:
                key = name.encode("utf-8")
                if key in table:
                    raise errors.InvalidArgumentError(None, None, f"Tensor {name} is saved more than once")
            else:
                full, starts, lengths = extents
                known = sliced.get(name)
                if known is None and name.encode("utf-8") in table:
                    raise errors.InvalidArgumentError(None, None, f"Tensor {name} is saved more than once")
                if known is not None and known != (entry["dtype"], full):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"Slices of {name} disagree: {known[0]}{known[1]} vs {entry['dtype']}{full}",
                    )
                if known is None:
                    sliced[name] = (entry["dtype"], full)
                    table[name.encode("utf-8")] = _entry_proto(entry["dtype"], full)
                # TF's full-tensor entry lists each slice; an axis taken whole has an extent with no fields.
                extent_list = table[name.encode("utf-8")].slices.add().extent
                for start, length in zip(starts, lengths):
                    extent = extent_list.add()
                    if length != -1:
                        extent.start, extent.length = start, length
                key = slice_key(name, starts, lengths)
                if key in table:
                    raise errors.InvalidArgumentError(None, None, f"Tensor {name} is saved more than once")
            proto = _entry_proto(entry["dtype"], entry["shape"])
            proto.shard_id, proto.offset, proto.size, proto.crc32c = (
                s["shard"],
                entry["offset"],
                entry["size"],
                entry["crc32c"],
            )
            table[key] = proto
    header = BundleHeaderProto(num_shards=num)
    header.version.producer = 1
    rows = [(b"", header.SerializeToString())]
    rows += [(key, table[key].SerializeToString()) for key in sorted(table)]
    return write_table(rows)
