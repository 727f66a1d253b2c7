"""Parsing serialized ``Example`` and ``SequenceExample`` protos into numpy arrays, with TF's rules and messages.

The kernels of ``ParseExampleV2`` and ``ParseSingleSequenceExample`` call these. A feature's values come out
of the protobuf message (the ``upb`` runtime) as one numpy array per feature and example; dense features are
checked against their shape, filled from their default when missing, and stacked; sparse ones gathered into
``(indices, values, dense_shape)``.

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> from dtf_notebook.protos.example_pb import Example, Feature, Features, FloatList
    >>> data = Example(features=Features(feature={"x": Feature(float_list=FloatList(value=[1, 2]))}))
    >>> dense = [Dense("x", dtypes.float32, (2,), None)]
    >>> parse_examples([data.SerializeToString()], None, False, dense, [])[0][0].tolist()
    [[1.0, 2.0]]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.ops.io.example_layout import parse_uniform
from dtf_notebook.protos.example_pb import Example, SequenceExample
from dtf_notebook.runtime.queues import format_shape

__all__ = ["Dense", "Sparse", "parse_examples", "parse_sequence_example"]

_KIND = {dtypes.float32: "float_list", dtypes.int64: "int64_list", dtypes.string: "bytes_list"}
_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_NUMPY = {dtypes.float32: np.float32, dtypes.int64: np.int64, dtypes.string: object}
_LITTLE_F32 = np.dtype("<f4")


@dataclass(frozen=True)
class Dense:
    """A dense output: its key, dtype, shape (first dimension None: a variable number of items, padded), and default
    (None: required; for a variable shape, the padding value). ``allow_missing``: a feature list that may be absent
    (it then has no steps)."""

    key: str
    dtype: dtypes.DType
    shape: tuple[int | None, ...]
    default: np.ndarray | None
    allow_missing: bool = False

    @functools.cached_property
    def variable(self) -> bool:
        return bool(self.shape) and self.shape[0] is None

    @functools.cached_property
    def stride(self) -> int:
        return math.prod(self.shape[1:] if self.variable else self.shape)


@dataclass(frozen=True)
class Sparse:
    """A ``VarLenFeature`` output."""

    key: str
    dtype: dtypes.DType


def _escape(data: bytes) -> str:
    return "".join(chr(b) if 32 <= b < 127 and b not in (34, 39, 92) else f"\\{b:03o}" for b in data[:64])


class _Where:
    """How a message names the example (and feature) it is about: TF's batch and single-example wordings."""

    def __init__(self, names: Sequence[bytes] | None, index: int, single: bool) -> None:
        self.single, self.index = single, index
        name = names[index] if names is not None and index < len(names) else b""
        self.name = name.decode("utf-8", "backslashreplace") if name else "<unknown>"

    def key(self, key: str) -> str:
        return f"Key: {key}.  " if self.single else f"Name: {self.name}, Key: {key}, Index: {self.index}.  "

    def missing(self, key: str, dtype: dtypes.DType) -> errors.InvalidArgumentError:
        head = "" if self.single else f"Name: {self.name}, "
        text = f"{head}Feature: {key} (data type: {_NAME[_KIND[dtype]]}) is required but could not be found."
        return errors.InvalidArgumentError(None, None, text)


class _Wheres(Sequence):
    """The :class:`_Where` of each example of a batch, made when a message needs one (most batches need none)."""

    def __init__(self, names: Sequence[bytes] | None, count: int, single: bool) -> None:
        self._names, self._count, self._single = names, count, single

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if not -self._count <= index < self._count:
            raise IndexError(index)
        return _Where(self._names, index % self._count, self._single)


def _values(feature: Any, dtype: dtypes.DType, key: str, where: _Where, dense: bool) -> np.ndarray | None:
    """The feature's values as a numpy array; None when it holds no list (missing)."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None
    expected = _KIND[dtype]
    if kind != expected:
        if dense:
            detail = f"Data type: {_NAME[kind]} but expected type: {_NAME[expected]}"
        else:
            detail = f"Expected type: {_NAME[expected]}, Actual type: {_NAME[kind]}"
        raise errors.InvalidArgumentError(None, None, f"{where.key(key)}Data types don't match. {detail}")
    holder = getattr(feature, kind)
    if kind == "float_list":
        # A FloatList serializes as one packed run of little-endian floats after its tag and length: reading
        # those bytes is several times faster than converting the repeated field value by value.
        data = holder.SerializeToString()
        count = len(holder.value)
        return np.frombuffer(data, dtype=_LITTLE_F32, count=count, offset=len(data) - 4 * count)
    values = holder.value
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    # (numpy reads a list several times faster than a protobuf repeated field, which it probes as a sequence)
    return np.array(list(values), dtype=_NUMPY[dtype])


def _dense_value(spec: Dense, values: np.ndarray, where: _Where) -> np.ndarray:
    name = _NAME[_KIND[spec.dtype]]
    if spec.variable:
        if values.size % max(spec.stride, 1):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"{where.key(spec.key)}Number of {name} values is not a multiple of stride length. Saw "
                f"{values.size} values but output shape is: {format_shape(spec.shape)}",
            )
        rows = values.size // spec.stride if spec.stride else 0
        return values.reshape((rows, *spec.shape[1:]))
    if values.size != spec.stride:
        if isinstance(where, _StepWhere):  # TF words it differently for a step of a feature list
            detail = f"Number of values != expected.  values size: {values.size}"
        else:
            detail = f"Number of {name} values != expected.  Values size: {values.size}"
        raise errors.InvalidArgumentError(
            None, None, f"{where.key(spec.key)}{detail} but output shape: {format_shape(spec.shape)}"
        )
    return values.reshape(spec.shape)


def _varint_size(value: int) -> int:
    """Bytes in the protobuf varint of ``value`` (>= 0)."""
    return max(1, (value.bit_length() + 6) // 7)


def _fast_fixed_dense(spec: Dense, features: list[Any]) -> np.ndarray | None:
    """The fixed-shape dense feature of every example when each holds exactly ``stride`` values of the right type
    (the common case), with no per-example numpy calls; None when any example needs :func:`_fixed_dense`'s checks
    (a missing feature, a wrong type or count: that path then raises TF's message or fills the default).

    Float lists are read as their packed bytes (one ``tag, length`` head of the same size for every example, then
    ``4 * stride`` little-endian bytes), joined and converted once.
    """
    kind = _KIND[spec.dtype]
    key, stride, n = spec.key, spec.stride, len(features)
    try:
        holders = [getattr(fmap[key], kind) for fmap in features]
    except (KeyError, TypeError):
        return None
    if kind == "float_list":
        if stride == 0:
            return None
        blobs = [h.SerializeToString() for h in holders]
        # The head is 1 tag byte and the varint of the payload's length: the same for every list of ``stride`` floats.
        head = 1 + _varint_size(4 * stride)
        size = head + 4 * stride
        if any(len(b) != size for b in blobs):
            return None
        rows = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(n, size)[:, head:]
        return rows.copy().view(_LITTLE_F32).astype(np.float32, copy=False)
    if kind == "int64_list":
        if stride == 1:
            try:
                flat = [h.value[0] for h in holders]
            except IndexError:
                return None
            if any(len(h.value) != 1 for h in holders):
                return None
            return np.array(flat, dtype=np.int64).reshape(n, 1)
        flat = []
        for h in holders:
            v = h.value
            if len(v) != stride:
                return None
            flat.extend(v)
        return np.array(flat, dtype=np.int64).reshape(n, stride)
    return None


def _fixed_dense(spec: Dense, features: list[Any], wheres: list[_Where], single: bool) -> np.ndarray:
    """A fixed-shape dense feature of every example, written straight into the output array."""
    if features:
        fast = _fast_fixed_dense(spec, features)
        if fast is not None:
            return fast.reshape(spec.shape if single else (len(features), *spec.shape))
    out = np.empty((len(features), spec.stride), dtype=_NUMPY[spec.dtype])
    for i, (fmap, where) in enumerate(zip(features, wheres)):
        values = _get(fmap, spec.key, spec.dtype, where, True)
        if values is None:
            if spec.default is None:
                raise where.missing(spec.key, spec.dtype)
            out[i] = spec.default.reshape(-1)
        else:
            out[i] = _dense_value(spec, values, where).reshape(-1)
    return out.reshape(spec.shape if single else (len(features), *spec.shape))


def _stack_dense(spec: Dense, items: list[np.ndarray], single: bool) -> np.ndarray:
    rows = max((len(x) for x in items), default=0)
    pad = spec.default if spec.default is not None else np.array(b"" if spec.dtype == dtypes.string else 0)
    out = np.empty((len(items), rows, *spec.shape[1:]), dtype=_NUMPY[spec.dtype])
    out[...] = pad.reshape(()) if pad.size == 1 else pad
    for i, x in enumerate(items):
        out[i, : len(x)] = x
    return out[0] if single else out


def _sparse(parts: list[np.ndarray | None], dtype: dtypes.DType, single: bool) -> tuple[np.ndarray, ...]:
    lengths = [0 if p is None else p.size for p in parts]
    total = sum(lengths)
    values = np.empty(total, dtype=_NUMPY[dtype])
    rows = np.repeat(np.arange(len(parts), dtype=np.int64), lengths)
    cols = np.concatenate([np.arange(n, dtype=np.int64) for n in lengths]) if parts else np.zeros(0, np.int64)
    start = 0
    for p, n in zip(parts, lengths):
        if n:
            values[start : start + n] = p
            start += n
    width = max(lengths, default=0)
    if single:
        return cols.reshape(-1, 1), values, np.array([width], dtype=np.int64)
    return np.stack([rows, cols], axis=1), values, np.array([len(parts), width], dtype=np.int64)


def _get(fmap: Any, key: str, dtype: dtypes.DType, where: _Where, dense: bool) -> np.ndarray | None:
    if key not in fmap:
        return None
    return _values(fmap[key], dtype, key, where, dense)


def _parse_one(data: bytes, cls: type, where: _Where) -> Any:
    try:
        return cls.FromString(data)
    except DecodeError:
        head = "" if where.single else f"Name: {where.name}, "
        raise errors.InvalidArgumentError(
            None, None, f"{head}Could not parse example input, value: '{_escape(data)}'"
        ) from None


_UNIFORM_KINDS = {dtypes.float32: "float", dtypes.int64: "int"}


def _uniform_dense(serialized: Sequence[bytes], dense: Sequence[Dense], single: bool) -> list[np.ndarray] | None:
    """Fixed-shape float and int64 features of records sharing one layout (see :mod:`.example_layout`), or None."""
    wanted = []
    for spec in dense:
        kind = _UNIFORM_KINDS.get(spec.dtype)
        if kind is None or spec.variable:
            return None
        wanted.append((spec.key, kind, spec.stride))
    found = parse_uniform(serialized, wanted)
    if found is None:
        return None
    n = len(serialized)
    return [values.reshape(spec.shape if single else (n, *spec.shape)) for values, spec in zip(found, dense)]


def parse_examples(
    serialized: Sequence[bytes],
    names: Sequence[bytes] | None,
    single: bool,
    dense: Sequence[Dense],
    sparse: Sequence[Sparse],
) -> tuple[list[np.ndarray], list[tuple[np.ndarray, ...]]]:
    """Parses serialized ``Example`` protos.

    Args:
        serialized: The protos (one when ``single``).
        names: Their names, for messages (None: unknown).
        single: One example: outputs have no batch dimension.
        dense, sparse: The outputs wanted.

    Returns:
        ``(dense values, sparse (indices, values, shape) triples)``.

    Raises:
        InvalidArgumentError: a proto does not parse, a required feature is missing, a feature has the wrong
            type or number of values (TF's messages).

    Example:
        >>> from dtf_notebook.protos.example_pb import Example, Feature, Features, Int64List
        >>> data = Example(features=Features(feature={"ids": Feature(int64_list=Int64List(value=[4, 5]))}))
        >>> _, [(indices, values, shape)] = parse_examples([data.SerializeToString()], None, False, [],
        ...                                                [Sparse("ids", dtypes.int64)])
        >>> indices.tolist(), values.tolist(), shape.tolist()
        ([[0, 0], [0, 1]], [4, 5], [1, 2])
    """
    if len(serialized) > 1 and dense and not sparse:  # (one record: protobuf is as fast)
        fast = _uniform_dense(serialized, dense, single)
        if fast is not None:
            return fast, []
    wheres = _Wheres(names, len(serialized), single)
    try:
        features = [Example.FromString(data).features.feature for data in serialized]
    except DecodeError:
        features = [_parse_one(data, Example, where).features.feature for data, where in zip(serialized, wheres)]
    dense_out = []
    for spec in dense:
        if not spec.variable:
            dense_out.append(_fixed_dense(spec, features, wheres, single))
            continue
        items = []
        for fmap, where in zip(features, wheres):
            values = _get(fmap, spec.key, spec.dtype, where, True)
            if values is None:
                items.append(np.zeros((0, *spec.shape[1:]), dtype=_NUMPY[spec.dtype]))
            else:
                items.append(_dense_value(spec, values, where))
        dense_out.append(_stack_dense(spec, items, single))
    sparse_out = [
        _sparse([_get(f, s.key, s.dtype, w, False) for f, w in zip(features, wheres)], s.dtype, single) for s in sparse
    ]
    return dense_out, sparse_out


def parse_sequence_example(
    data: bytes,
    name: bytes | None,
    context_dense: Sequence[Dense],
    context_sparse: Sequence[Sparse],
    list_dense: Sequence[Dense],
    list_sparse: Sequence[Sparse],
) -> tuple[list[np.ndarray], list[tuple[np.ndarray, ...]], list[np.ndarray], list[tuple[np.ndarray, ...]]]:
    """Parses one serialized ``SequenceExample``: its context features as :func:`parse_examples` does for one
    example, and its feature lists (one item per step): dense ones ``[steps, *shape]``, sparse ones with indices
    ``[step, position]``.

    Example:
        >>> from dtf_notebook.protos.example_pb import Feature, FeatureList, FeatureLists, Int64List
        >>> steps = [Feature(int64_list=Int64List(value=[t])) for t in (7, 8)]
        >>> seq = SequenceExample(feature_lists=FeatureLists(feature_list={"t": FeatureList(feature=steps)}))
        >>> out = parse_sequence_example(seq.SerializeToString(), None, [], [], [Dense("t", dtypes.int64, (), None)],
        ...                              [])
        >>> out[2][0].tolist()
        [7, 8]
    """
    where = _Where([name] if name else None, 0, True)
    message = _parse_one(data, SequenceExample, where)
    context = message.context.feature
    dense_out: list[np.ndarray] = []
    sparse_out: list[tuple[np.ndarray, ...]] = []
    for spec in context_dense:
        values = _get(context, spec.key, spec.dtype, where, True)
        if values is None:
            if spec.default is None:
                raise where.missing(spec.key, spec.dtype)
            dense_out.append(spec.default)
        else:
            dense_out.append(np.array(_dense_value(spec, values, where)))  # (a copy: the values may be a view)
    for spec in context_sparse:
        sparse_out.append(_sparse([_get(context, spec.key, spec.dtype, where, False)], spec.dtype, True))
    lists = message.feature_lists.feature_list
    list_dense_out = []
    for spec in list_dense:
        if spec.key not in lists:
            if not spec.allow_missing:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Name: {where.name}, Feature list '{spec.key}' is required but could not be found.  "
                    "Did you mean to include it in feature_list_dense_missing_assumed_empty or "
                    "feature_list_dense_defaults?",
                )
            list_dense_out.append(np.zeros((0, *spec.shape), dtype=_NUMPY[spec.dtype]))
            continue
        steps = []
        for t, feature in enumerate(lists[spec.key].feature):
            step_where = _StepWhere(where, spec.key, t)
            values = _values(feature, spec.dtype, spec.key, step_where, True)
            values = np.zeros(0, dtype=_NUMPY[spec.dtype]) if values is None else values
            steps.append(_dense_value(Dense(spec.key, spec.dtype, spec.shape, None), values, step_where))
        empty = np.zeros((0, *spec.shape), dtype=_NUMPY[spec.dtype])
        list_dense_out.append(np.stack(steps) if steps else empty)
    list_sparse_out = []
    for spec in list_sparse:
        steps_found = lists[spec.key].feature if spec.key in lists else []
        parts = [
            _values(f, spec.dtype, spec.key, _StepWhere(where, spec.key, t), False) for t, f in enumerate(steps_found)
        ]
        list_sparse_out.append(_sparse(parts, spec.dtype, False))
    return dense_out, sparse_out, list_dense_out, list_sparse_out


class _StepWhere(_Where):
    """Messages about one step of a feature list."""

    def __init__(self, where: _Where, key: str, step: int) -> None:
        self.single, self.index, self.name = True, step, where.name
        self._list = key

    def key(self, key: str) -> str:
        return f"Name: {self.name}, Key: {key}, Index: {self.index}.  "
