"""Parsing a batch of ``tf.train.Example`` records that share one byte layout, without protobuf, in a few numpy
operations.

Records written by one program for one dataset (a digit: 784 floats ``x`` and an int64 ``y``) usually differ only
in their values: the same features in the same order, the same numbers of values, so the same tags and lengths
at the same offsets. :func:`parse_uniform` walks the first record to find where each wanted feature's values lie,
checks that every record has exactly the first one's bytes everywhere else (and its varints' boundaries), and
then cuts the values out of all records at once. A batch that does not qualify (a feature missing, another
layout, strings, unpacked lists) gets None, and the caller parses it record by record with protobuf, which also
gives TF's error messages.

Why: parsing 100 digit records message by message took 350-600 us of Python holding the GIL, which a training
step reading from a queue-runner pipeline shares.

Example:
    >>> from dtf_notebook.protos.example_pb import Example, Feature, Features, FloatList, Int64List
    >>> def record(x, y):
    ...     feature = {"x": Feature(float_list=FloatList(value=x)), "y": Feature(int64_list=Int64List(value=[y]))}
    ...     return Example(features=Features(feature=feature)).SerializeToString()
    >>> out = parse_uniform([record([1.0, 2.0], 3), record([4.0, 5.0], 7)], [("x", "float", 2), ("y", "int", 1)])
    >>> out[0].tolist(), out[1].tolist()
    ([[1.0, 2.0], [4.0, 5.0]], [[3], [7]])
    >>> parse_uniform([record([1.0, 2.0], 3), record([4.0, 5.0], -1)], [("y", "int", 1)]) is None  # -1: 10 bytes
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.lib.io.varint import read_varint as _varint

__all__ = ["parse_uniform"]

_FLOATS = np.dtype("<f4")
_LEN = 2  # protobuf wire type of a length-delimited field


def _fields(data: bytes, start: int, end: int):
    """``(field number, wire type, value start, value end)`` of each field of a message in ``data[start:end]``;
    for a varint field the value is its bytes."""
    pos = start
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == _LEN:
            size, pos = _varint(data, pos)
            yield number, wire, pos, pos + size
            pos += size
        elif wire == 0:
            _, after = _varint(data, pos)
            yield number, wire, pos, after
            pos = after
        elif wire == 5:
            yield number, wire, pos, pos + 4
            pos += 4
        elif wire == 1:
            yield number, wire, pos, pos + 8
            pos += 8
        else:
            raise ValueError(f"wire type {wire}")
    if pos != end:
        raise ValueError("field runs past its message")


def _locate(record: bytes, wanted: Sequence[tuple[str, str, int]]) -> list[tuple[int, int, Any]] | None:
    """Per wanted feature: the start and end of its packed values in ``record`` and, for an int list, the end offset
    of each varint; None when a feature is missing, repeated, of another kind or count, or not packed."""
    found: dict[str, tuple[int, int, int]] = {}  # key -> (kind field, values start, values end)
    for number, wire, start, end in _fields(record, 0, len(record)):
        if number != 1 or wire != _LEN:  # Example.features
            return None
        for entry_number, entry_wire, entry_start, entry_end in _fields(record, start, end):
            if entry_number != 1 or entry_wire != _LEN:  # Features.feature (a map entry)
                return None
            key = None
            feature = None
            for field, field_wire, s, e in _fields(record, entry_start, entry_end):
                if field_wire != _LEN:
                    return None
                if (field == 1 and key is not None) or (field == 2 and feature is not None):
                    return None  # a repeated field of the entry: protobuf merges them
                if field == 1:
                    key = record[s:e]
                elif field == 2:
                    feature = (s, e)
            if key is None or feature is None:
                return None
            kinds = list(_fields(record, *feature))
            if len(kinds) != 1 or kinds[0][1] != _LEN:
                return None
            kind, _, list_start, list_end = kinds[0]
            values = list(_fields(record, list_start, list_end))
            if len(values) > 1 or (values and (values[0][0] != 1 or values[0][1] != _LEN)):
                return None  # unpacked values, or other fields
            name = key.decode("utf-8", "surrogateescape")
            if name in found:
                return None
            found[name] = (kind, values[0][2], values[0][3]) if values else (kind, list_end, list_end)
    out = []
    for key, kind, count in wanted:
        if key not in found:
            return None
        field, start, end = found[key]
        if kind == "float":
            if field != 2 or end - start != 4 * count:
                return None
            out.append((start, end, None))
        else:
            if field != 3:
                return None
            # A varint ends at each byte without the continuation bit; the last byte must end one.
            block = np.frombuffer(record, dtype=np.uint8, count=end - start, offset=start)
            ends = np.flatnonzero(block < 0x80) + (start + 1)
            if len(ends) != count or (count and ends[-1] != end) or (not count and end != start):
                return None
            if count and np.diff(ends, prepend=start).max() > 10:
                return None  # longer than a 64-bit varint: protobuf's path says what is wrong
            out.append((start, end, ends))
    return out


_last_layouts: dict[tuple[Any, int], tuple[Any, np.ndarray, np.ndarray]] = {}  # the last layout per wanted and size


def _layout(first: bytes, first_row: np.ndarray, wanted: tuple[Any, ...]) -> tuple[Any, np.ndarray, np.ndarray] | None:
    """``(located, skeleton, skeleton bytes)`` of ``first``: where the wanted values lie, the offsets of every other
    byte, and those bytes. A record whose bytes at the last layout's skeleton offsets are the same has that layout
    (tags and lengths are skeleton bytes; the ends of int64 varints, inside the values, are compared apart), so the
    first record is walked only when the layout changes."""
    key = (wanted, len(first))
    cached = _last_layouts.get(key)
    if cached is not None and (first_row[cached[1]] == cached[2]).all() and _same_varint_ends(first_row, cached[0]):
        return cached
    try:
        located = _locate(first, wanted)
    except (ValueError, IndexError):
        return None
    if located is None:
        return None
    mask = np.ones(len(first), dtype=bool)
    for start, end, _ in located:
        mask[start:end] = False
    skeleton = np.flatnonzero(mask)
    layout = (located, skeleton, first_row[skeleton].copy())
    if len(_last_layouts) > 64:
        _last_layouts.clear()
    _last_layouts[key] = layout
    return layout


def _same_varint_ends(row: np.ndarray, located: Sequence[tuple[int, int, Any]]) -> bool:
    """Whether the int64 varints of ``row`` end where ``located`` says (value bytes are not skeleton bytes)."""
    for start, end, ends in located:
        if ends is not None and not np.array_equal(np.flatnonzero(row[start:end] < 0x80) + (start + 1), ends):
            return False
    return True


def parse_uniform(serialized: Sequence[bytes], wanted: Sequence[tuple[str, str, int]]) -> list[np.ndarray] | None:
    """The wanted dense features of every record, or None when the records do not share the first one's layout.

    Args:
        serialized: ``tf.train.Example`` records.
        wanted: ``(key, "float" | "int", number of values)`` per feature.

    Returns:
        Per feature an array ``[len(serialized), number of values]`` (float32 or int64), or None.

    Example:
        >>> parse_uniform([b"not an example"], [("x", "float", 1)]) is None
        True
    """
    if not serialized:
        return None
    first = serialized[0]
    size = len(first)
    if len(set(map(len, serialized))) != 1:
        return None
    rows = np.frombuffer(b"".join(serialized), dtype=np.uint8).reshape(len(serialized), size)
    layout = _layout(first, rows[0], tuple(wanted))
    if layout is None:
        return None
    located, skeleton, skeleton_bytes = layout
    if not (rows[:, skeleton] == skeleton_bytes).all():
        return None
    out = []
    for (start, end, ends), (_, kind, count) in zip(located, wanted):
        block = rows[:, start:end]
        if kind == "float":
            out.append(block.copy().view(_FLOATS).astype(np.float32, copy=False).reshape(len(serialized), count))
            continue
        if not count:
            out.append(np.zeros((len(serialized), 0), dtype=np.int64))
            continue
        if end - start == count:  # one byte per varint (values 0-127): each byte is its value
            if (block >= 0x80).any():
                return None
            out.append(block.astype(np.int64))
            continue
        # Every record's varints must end where the first one's do: continuation bits everywhere but at each end.
        last = np.zeros(end - start, dtype=bool)
        last[ends - start - 1] = True
        if not ((block >= 0x80) != last).all():
            return None
        # Each byte's 7 bits shifted to its place in its varint, summed per varint (the fields are disjoint, so the
        # sum is their union; uint64 drops what a 10th byte shifts past bit 63, as protobuf does).
        starts = np.concatenate([[0], ends[:-1] - start]).astype(np.intp)
        place = np.arange(end - start) - np.repeat(starts, np.diff(ends - start, prepend=0))
        bits = (block & 0x7F).astype(np.uint64) << (7 * place).astype(np.uint64)
        values = np.add.reduceat(bits, starts, axis=1) if count else np.zeros((len(serialized), 0), np.uint64)
        out.append(values.view(np.int64))
    return out
