"""This package's earlier checkpoint format, still read: safetensors shard files plus one JSON index; and TF's
slice specs, which both formats use.

Savers now write TF's V2 format (:mod:`dtf_notebook.runtime.bundle_shards`); checkpoints saved in this one by
earlier versions restore as before (:class:`~dtf_notebook.runtime.checkpoint_reader.CheckpointReader`), and its
writing half stays as the format's definition (tests make such checkpoints with it).

A checkpoint with prefix ``P`` is

* ``P.data-00000-of-0000N.safetensors`` ... one file per shard, each written by the task that holds
  its variables (safetensors bytes; the header's metadata names the writing task and pid);
* ``P.index.json``, written last, after every shard is in place: the checkpoint exists exactly
  when its index does.

The index lists every saved tensor under its saved name (a Variable's op name, or the key of a
``Saver`` dict): dtype, full shape and its *parts*. An unpartitioned variable has one part
covering it; each part of a partitioned variable is stored as its own safetensors entry with
TF's slice spec (``"full dims off,len:off,len"``), so a reader can assemble the whole tensor or
any other slicing of it. Each shard entry of the index records its file, task, device and pid.

String tensors have no safetensors dtype: they are stored as two entries, the concatenated bytes
(uint8) and the length of each element (int64), and the index names both.

Example:
    >>> import torch
    >>> data, entries = encode_shard([("w", "", torch.ones(2, 3)), ("e", "4 3 2,2:0,3", torch.zeros(2, 3))])
    >>> [(e["name"], e["key"], e["shape"]) for e in entries]
    [('w', 'w', [2, 3]), ('e', 'e:2,2:0,3', [2, 3])]
    >>> meta = {"shard": 0, "num_shards": 1, "file": "m.data-00000-of-00001.safetensors", "task": "", "pid": 1,
    ...         "device": "", "bytes": len(data), "entries": entries}
    >>> index = build_index([meta])
    >>> index["tensors"]["e"]["shape"], index["tensors"]["e"]["parts"][0]["offset"]
    ([4, 3], [2, 0])
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import safetensors_torch, torch
from dtf_notebook.runtime import values

FORMAT = "dtf_notebook.checkpoint"
VERSION = 1
INDEX_SUFFIX = ".index.json"
DATA_SUFFIX = ".safetensors"
#: Glob matching every shard file of a prefix.
SHARD_GLOB = ".data-?????-of-?????" + DATA_SUFFIX


def index_filename(prefix: str) -> str:
    """The index file of the checkpoint ``prefix``.

    Example:
        >>> index_filename("/tmp/run/model.ckpt-10")
        '/tmp/run/model.ckpt-10.index.json'
    """
    return prefix + INDEX_SUFFIX


def shard_filename(prefix: str, shard: int, num_shards: int) -> str:
    """The data file of shard ``shard`` of ``num_shards`` (TF's numbering, 5 digits).

    Example:
        >>> shard_filename("model.ckpt", 1, 3)
        'model.ckpt.data-00001-of-00003.safetensors'
    """
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}{DATA_SUFFIX}"


_SHARD_FILE = re.compile(r"[^/\\]+\.data-[0-9]{5}-of-[0-9]{5}" + re.escape(DATA_SUFFIX) + r"\Z")


def check_shard_file(name: Any, where: str) -> str:
    """``name`` if it is a plain shard file name (``<prefix>.data-NNNNN-of-NNNNN.safetensors``, no directory),
    as an index or a save kernel reports it; anything else could point outside the checkpoint's directory.

    Raises:
        DataLossError: it is not (``where`` names the index or message that held it).

    Example:
        >>> check_shard_file("model.data-00000-of-00001.safetensors", "model.index.json")
        'model.data-00000-of-00001.safetensors'
        >>> check_shard_file("../../etc/passwd", "model.index.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.DataLossError: model.index.json names shard file '../../etc/passwd', which is not a ...
    """
    if not isinstance(name, str) or not _SHARD_FILE.match(name):
        raise errors.DataLossError(
            None, None, f"{where} names shard file {name!r}, which is not a shard file name of this directory"
        )
    return name


# ---- slice specs ----------------------------------------------------------------------------------
def parse_slice_spec(spec: str) -> tuple[list[int], list[int], list[int]] | None:
    """TF's slice spec ``"d0 d1 off,len:off,len"`` as (full shape, offsets, lengths); None for ``""``.

    A ``-`` extent means the whole axis.

    Raises:
        ValueError: the spec is malformed or the slice lies outside the full shape.

    Example:
        >>> parse_slice_spec("5 2 2,2:-")
        ([5, 2], [2, 0], [2, 2])
        >>> parse_slice_spec("") is None
        True
    """
    if not spec:
        return None
    *dims, extents = spec.split(" ")
    try:
        full = [int(d) for d in dims]
        ranges = extents.split(":")
        if len(ranges) != len(full):
            raise ValueError("one extent per axis is needed")
        offsets, lengths = [], []
        for r, n in zip(ranges, full):
            if r == "-":
                offsets.append(0)
                lengths.append(n)
                continue
            off, length = (int(x) for x in r.split(","))
            if off < 0 or length < 0 or off + length > n:
                raise ValueError(f"extent {r} lies outside an axis of size {n}")
            offsets.append(off)
            lengths.append(length)
    except ValueError as e:
        raise ValueError(f"Bad slice spec {spec!r}: {e}") from None
    return full, offsets, lengths


def slice_key(name: str, spec: str) -> str:
    """The safetensors key of a saved tensor or slice (``":"`` never occurs in a variable's op name).

    Example:
        >>> slice_key("w", ""), slice_key("w", "4 3 0,2:0,3")
        ('w', 'w:0,2:0,3')
    """
    return name if not spec else f"{name}:{spec.rsplit(' ', 1)[-1]}"


def checked_item(name: str, spec: str, value: Any) -> tuple[dtypes.DType, list[int]]:
    """The dtype and shape of a value to save as ``name`` (slice ``spec``), checked against the spec.

    Raises:
        InvalidArgumentError: the value's shape is not the slice's.

    Example:
        >>> checked_item("w", "4 3 0,2:0,3", np.zeros((2, 3), np.float32))
        (tf.float32, [2, 3])
    """
    dtype = values.dtype_of(value)
    shape = [int(d) for d in value.shape]
    parsed = parse_slice_spec(spec)
    if parsed is not None and parsed[2] != shape:
        raise errors.InvalidArgumentError(
            None, None, f"Saving {name}: its value has shape {shape} but its slice spec {spec!r} says {parsed[2]}"
        )
    return dtype, shape


# ---- shard files ----------------------------------------------------------------------------------
def _string_buffers(value: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    flat = [v.encode() if isinstance(v, str) else bytes(v) for v in value.reshape(-1)]
    data = np.frombuffer(b"".join(flat), dtype=np.uint8).copy()
    lengths = np.array([len(v) for v in flat], dtype=np.int64)
    return torch.from_numpy(data), torch.from_numpy(lengths)


def encode_shard(
    items: Sequence[tuple[str, str, Any]], metadata: Mapping[str, str] | None = None
) -> tuple[bytes, list[dict[str, Any]]]:
    """Serialises ``(saved name, slice spec, runtime value)`` items into safetensors bytes.

    Returns:
        The file's bytes and one index entry per item (name, slice, key, dtype, shape[, lengths_key]).

    Raises:
        InvalidArgumentError: two items would share a key, or a value's shape does not match its slice spec.

    Example:
        >>> data, entries = encode_shard([("s", "", np.array([b"ab", b"c"], dtype=object))])
        >>> entries[0]["dtype"], entries[0]["lengths_key"]
        ('string', 's:lengths')
    """
    tensors: dict[str, torch.Tensor] = {}
    entries: list[dict[str, Any]] = []
    for name, spec, value in items:
        key = slice_key(name, spec)
        dtype, shape = checked_item(name, spec, value)
        entry: dict[str, Any] = {"name": name, "slice": spec, "key": key, "dtype": dtype.name, "shape": shape}
        if dtype.is_string:
            entry["lengths_key"] = key + ":lengths"
            data_t, lengths_t = _string_buffers(value)
            tensors_for = {key: data_t, entry["lengths_key"]: lengths_t}
        else:
            # safetensors needs contiguous CPU tensors; a variable's own buffer is never modified here.
            tensors_for = {key: value.detach().to("cpu").contiguous()}
        for k, t in tensors_for.items():
            if k in tensors:
                raise errors.InvalidArgumentError(
                    None, None, f"Two saved tensors share the checkpoint key {k!r} (saving {name})"
                )
            tensors[k] = t
        entries.append(entry)
    return safetensors_torch.save(tensors, metadata=dict(metadata or {})), entries


def decode_entry(tensors: Mapping[str, torch.Tensor] | Any, part: Mapping[str, Any]) -> Any:
    """The runtime value of one stored part: a torch tensor, or a numpy array of bytes for strings.

    ``tensors`` maps safetensors keys to tensors (a dict, or anything with ``get_tensor``).

    Example:
        >>> data, entries = encode_shard([("s", "", np.array([b"ab", b"c"], dtype=object))])
        >>> decode_entry(safetensors_torch.load(data), entries[0])
        array([b'ab', b'c'], dtype=object)
    """
    get = tensors.get_tensor if hasattr(tensors, "get_tensor") else tensors.__getitem__
    shape = tuple(part["shape"])
    if "lengths_key" not in part:
        return get(part["key"]).reshape(shape)
    data = get(part["key"]).numpy().tobytes()
    lengths = get(part["lengths_key"]).numpy()
    out = np.empty(len(lengths), dtype=object)
    start = 0
    for i, n in enumerate(lengths):
        out[i] = data[start : start + int(n)]
        start += int(n)
    return out.reshape(shape)


# ---- the index ------------------------------------------------------------------------------------
def _part_of(entry: Mapping[str, Any], shard: Mapping[str, Any]) -> tuple[dict[str, Any], list[int]]:
    parsed = parse_slice_spec(entry["slice"])
    if parsed is None:
        full, offset = list(entry["shape"]), [0] * len(entry["shape"])
    else:
        full, offset, _ = parsed
    part = {
        "shard": shard["shard"],
        "file": shard["file"],
        "key": entry["key"],
        "slice": entry["slice"],
        "offset": offset,
        "shape": entry["shape"],
    }
    if "lengths_key" in entry:
        part["lengths_key"] = entry["lengths_key"]
    return part, full


def build_index(shards: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The index of a checkpoint from its shards' descriptions (what each save kernel reported).

    Raises:
        InvalidArgumentError: shard numbers are inconsistent, a tensor is saved twice, or the parts of a
            partitioned tensor disagree on its dtype or full shape.

    Example:
        >>> data, entries = encode_shard([("w", "", torch.ones(2))])
        >>> index = build_index([{"shard": 0, "num_shards": 1, "file": "m.data-00000-of-00001.safetensors",
        ...                       "entries": entries}])
        >>> index["tensors"]["w"]["dtype"], index["tensors"]["w"]["shape"]
        ('float32', [2])
    """
    num = len(shards)
    ordered = sorted(shards, key=lambda s: s["shard"])
    if [s["shard"] for s in ordered] != list(range(num)) or any(s["num_shards"] != num for s in ordered):
        found = [(s["shard"], s["num_shards"]) for s in ordered]
        raise errors.InvalidArgumentError(None, None, f"Expected shards 0..{num - 1} of {num}, got {found}")
    tensors: dict[str, dict[str, Any]] = {}
    for s in ordered:
        for entry in s["entries"]:
            name = entry["name"]
            part, full = _part_of(entry, s)
            known = tensors.get(name)
            if known is None:
                tensors[name] = {"dtype": entry["dtype"], "shape": full, "parts": [part]}
                continue
            if not entry["slice"] or not known["parts"][0]["slice"]:
                raise errors.InvalidArgumentError(None, None, f"Tensor {name} is saved more than once")
            if known["dtype"] != entry["dtype"] or known["shape"] != full:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Slices of {name} disagree: {known['dtype']}{known['shape']} vs {entry['dtype']}{full}",
                )
            known["parts"].append(part)
    fields = ("file", "task", "device", "host", "pid", "bytes")
    shard_info = [{k: s[k] for k in fields if k in s} | {"shard": s["shard"]} for s in ordered]
    return {"format": FORMAT, "version": VERSION, "shards": shard_info, "tensors": dict(sorted(tensors.items()))}


def encode_index(index: Mapping[str, Any]) -> bytes:
    """The index as UTF-8 JSON bytes.

    Example:
        >>> data = encode_index({"tensors": {}})
        >>> type(data).__name__, json.loads(data)
        ('bytes', {'tensors': {}})
    """
    return json.dumps(index, indent=1, sort_keys=False).encode("utf-8")


def parse_index(data: bytes, path: str) -> dict[str, Any]:
    """Reads an index file's bytes, checking its format marker and structure.

    Raises:
        DataLossError: the file is not a checkpoint index of this format.

    Example:
        >>> parse_index(b"{}", "x.index.json")
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.DataLossError: x.index.json is not a dtf_notebook checkpoint index (format marker missing)
    """
    try:
        index = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise errors.DataLossError(None, None, f"{path} is not a readable checkpoint index: {e}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise errors.DataLossError(None, None, f"{path} is not a dtf_notebook checkpoint index (format marker missing)")
    if index.get("version") != VERSION:
        raise errors.DataLossError(
            None, None, f"{path} has checkpoint format version {index.get('version')}; this reader knows {VERSION}"
        )
    if not isinstance(index.get("shards"), list) or not isinstance(index.get("tensors"), dict):
        raise errors.DataLossError(None, None, f"{path} lacks its 'shards' or 'tensors' table")
    return index


def as_dtype(name: str, path: str) -> dtypes.DType:
    """The DType named in an index, as a DataLossError naming the file when unknown.

    Example:
        >>> as_dtype("float32", "m.index.json")
        tf.float32
        >>> as_dtype("float99", "m.index.json")
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.DataLossError: m.index.json names an unknown dtype 'float99'
    """
    try:
        return dtypes.as_dtype(name)
    except TypeError:
        raise errors.DataLossError(None, None, f"{path} names an unknown dtype {name!r}") from None


def num_elements(shape: Sequence[int]) -> int:
    """The number of elements of a fully known shape.

    Example:
        >>> num_elements([2, 3]), num_elements([])
        (6, 1)
    """
    return math.prod(shape)
