"""How ``parse_example`` and its kin read each feature: ``FixedLenFeature``, ``VarLenFeature``, ``SparseFeature``,
``FixedLenSequenceFeature`` (TF1's namedtuples, with TF's defaults), and :class:`ParseSpec`, the checked plan of
one parse op built from a ``{key: feature}`` dict with TF's rules and messages.

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> features = {"label": FixedLenFeature([], dtypes.int64), "words": VarLenFeature(dtypes.string)}
    >>> spec = ParseSpec.from_features(features)
    >>> spec.dense_keys, spec.sparse_keys
    (['label'], ['words'])
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature", "ParseSpec"]

#: The dtypes an ``Example`` holds: float32 (FloatList), int64 (Int64List), string (BytesList).
PARSE_TYPES = (dtypes.float32, dtypes.int64, dtypes.string)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any length, parsed into a ``SparseTensor`` (TF1's ``tf.VarLenFeature``).

    Example:
        >>> VarLenFeature(dtypes.string)
        VarLenFeature(dtype=tf.string)
    """


class SparseFeature(
    collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
):
    """A ``SparseTensor`` built from an index feature (or several) and a value feature (TF1's ``tf.SparseFeature``).

    Its dense shape is ``size`` (one size per index key); without ``already_sorted`` the entries are sorted.

    Example:
        >>> SparseFeature("ix", "val", dtypes.float32, 100).already_sorted
        False
    """

    def __new__(cls, index_key: Any, value_key: str, dtype: Any, size: Any, already_sorted: bool = False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of fixed shape, parsed into a dense ``Tensor`` (TF1's ``tf.FixedLenFeature``).

    Without ``default_value`` every example must have it.

    Example:
        >>> FixedLenFeature([2], dtypes.float32, default_value=[0.0, 0.0]).shape
        [2]
    """

    def __new__(cls, shape: Any, dtype: Any, default_value: Any = None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """A feature made of a variable number of items of fixed ``shape`` (TF1's ``tf.FixedLenSequenceFeature``).

    In ``parse_example`` (which needs ``allow_missing=True``) the items of a batch are padded to the longest with
    ``default_value`` (zeros or empty strings when None); in ``parse_single_sequence_example`` each step of a
    feature list is one item.

    Example:
        >>> FixedLenSequenceFeature([], dtypes.int64, allow_missing=True).allow_missing
        True
    """

    def __new__(cls, shape: Any, dtype: Any, allow_missing: bool = False, default_value: Any = None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


@dataclass
class ParseSpec:
    """One parse op's features, sorted by key as TF sorts them, checked with TF's rules.

    Attributes:
        dense_keys, dense_types, dense_shapes, dense_defaults: Dense outputs (a shape whose first dimension
            is None holds a variable number of items); defaults by key (None: a padding default).
        sparse_keys, sparse_types: The variable-length outputs the op parses, as TF's ``ParseOpParams`` lists
            them: each ``VarLenFeature``, and each ``SparseFeature``'s index keys (sorted) and value key, every key
            once (the ``SparseFeature`` itself is built from them after the op).
    """

    dense_keys: list[str] = field(default_factory=list)
    dense_types: list[dtypes.DType] = field(default_factory=list)
    dense_shapes: list[TensorShape] = field(default_factory=list)
    dense_defaults: dict[str, Any] = field(default_factory=dict)
    sparse_keys: list[str] = field(default_factory=list)
    sparse_types: list[dtypes.DType] = field(default_factory=list)

    @classmethod
    def from_features(cls, features: Any, allowed: tuple[type, ...] = (), sequence: bool = False) -> ParseSpec:
        """The spec of ``features`` (a dict of feature configs); ``allowed`` limits their kinds.

        Args:
            features: ``{key: feature}``.
            allowed: Feature classes accepted (all four by default).
            sequence: The features are a ``SequenceExample``'s feature lists (then a ``FixedLenSequenceFeature``'s
                shape is one step's, and ``allow_missing`` is not required).

        Raises:
            ValueError: an unsupported or invalid feature, conflicting types, or keys used both dense and sparse.

        Example:
            >>> ParseSpec.from_features({"x": FixedLenFeature(None, dtypes.float32)})
            Traceback (most recent call last):
            ...
            ValueError: Missing shape for feature x. Received feature=FixedLenFeature(shape=None, \
dtype=tf.float32, default_value=None).
        """
        allowed = allowed or (VarLenFeature, SparseFeature, FixedLenFeature, FixedLenSequenceFeature)
        spec = cls()
        for key in sorted(features or {}):
            feature = features[key]
            if not isinstance(feature, allowed):
                raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")
            if not feature.dtype:
                raise ValueError(f"Missing type for feature {key}. Received feature={feature}.")
            dtype = dtypes.as_dtype(feature.dtype)
            if isinstance(feature, VarLenFeature):
                spec._add_sparse_key(key, dtype)
            elif isinstance(feature, SparseFeature):
                spec._add_sparse_feature(feature, dtype)
            elif isinstance(feature, FixedLenFeature):
                spec._add_fixed(key, feature, dtype)
            else:
                spec._add_sequence(key, feature, dtype, sequence)
        for dtype in spec.dense_types + spec.sparse_types:
            if dtype not in PARSE_TYPES:
                raise TypeError(
                    f"Value passed to parameter 'dense_defaults' has DataType {dtype.name} not in list of allowed "
                    "values: float32, int64, string"
                )
        common = set(spec.dense_keys) & set(spec.sparse_keys)
        if common:
            raise ValueError(
                f"Dense and sparse keys must not intersect; dense_keys: {spec.dense_keys}, sparse_keys: "
                f"{spec.sparse_keys}, intersection: {common}"
            )
        return spec

    def _add_sparse_key(self, key: str, dtype: dtypes.DType) -> None:
        if key not in self.sparse_keys:
            self.sparse_keys.append(key)
            self.sparse_types.append(dtype)
        elif self.sparse_types[self.sparse_keys.index(key)] != dtype:
            raise ValueError(
                f"Conflicting type {self.sparse_types[self.sparse_keys.index(key)]} vs {dtype} for feature {key}."
            )

    def _add_sparse_feature(self, feature: SparseFeature, dtype: dtypes.DType) -> None:
        if not feature.index_key:
            raise ValueError(f"Missing index_key for SparseFeature {feature}.")
        if not feature.value_key:
            raise ValueError(f"Missing value_key for SparseFeature {feature}.")
        index_keys = [feature.index_key] if isinstance(feature.index_key, str) else list(feature.index_key)
        sizes = [feature.size] if isinstance(feature.index_key, str) else list(feature.size)
        if len(sizes) != len(index_keys):
            raise ValueError("sp_ids and vocab_size have to have equal lengths.")
        for index_key in sorted(index_keys):
            self._add_sparse_key(index_key, dtypes.int64)
        self._add_sparse_key(feature.value_key, dtype)

    def _add_fixed(self, key: str, feature: FixedLenFeature, dtype: dtypes.DType) -> None:
        if feature.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
        shape = TensorShape(feature.shape)
        if feature.shape and shape.ndims and shape[0].value is None:
            raise ValueError(
                f"First dimension of shape for feature {key} unknown. Consider using FixedLenSequenceFeature. "
                f"Received feature={feature}."
            )
        if not shape.is_fully_defined():
            raise ValueError(
                f"All dimensions of shape for feature {key} need to be known but received {feature.shape}."
            )
        self.dense_keys.append(key)
        self.dense_types.append(dtype)
        self.dense_shapes.append(shape)
        if feature.default_value is not None:
            self.dense_defaults[key] = feature.default_value

    def _add_sequence(self, key: str, feature: FixedLenSequenceFeature, dtype: dtypes.DType, sequence: bool) -> None:
        if feature.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
        if not sequence and not feature.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
        shape = TensorShape(feature.shape)
        if not sequence:
            shape = TensorShape([None]).concatenate(shape)
        self.dense_keys.append(key)
        self.dense_types.append(dtype)
        self.dense_shapes.append(shape)
        if feature.allow_missing or not sequence:
            self.dense_defaults[key] = None
        if feature.default_value is not None:
            self.dense_defaults[key] = feature.default_value

    @property
    def num_features(self) -> int:
        """How many outputs the op has.

        Example:
            >>> ParseSpec.from_features({"a": VarLenFeature(dtypes.int64)}).num_features
            1
        """
        return len(self.dense_keys) + len(self.sparse_keys)
