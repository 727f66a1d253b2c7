"""``tf.parse_example``, ``tf.parse_single_example`` and ``tf.parse_single_sequence_example``: serialized
``tf.train.Example`` / ``SequenceExample`` protos (the records of TFRecord input files) into tensors.

Each call builds one op (``ParseExampleV2`` or ``ParseSingleSequenceExample``) under TF's name scopes, whose
kernel parses with :mod:`.example_parser`; a ``FixedLenFeature`` becomes a dense tensor, a ``VarLenFeature`` or
``SparseFeature`` a ``SparseTensor``. The feature keys and types are attrs of the op, the dense defaults its
inputs (as in TF).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> record = tf.train.Example(features=tf.train.Features(feature={
    ...     "pixels": tf.train.Feature(float_list=tf.train.FloatList(value=[0.0, 0.5, 1.0])),
    ...     "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[7]))})).SerializeToString()
    >>> with tf.Graph().as_default():
    ...     parsed = parse_single_example(record, {"pixels": FixedLenFeature([3], tf.float32),
    ...                                            "label": FixedLenFeature([], tf.int64)})
    ...     with tf.Session() as sess:
    ...         print(sess.run(parsed))
    {'label': np.int64(7), 'pixels': array([0. , 0.5, 1. ], dtype=float32)}
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.io.example_parser import Dense, Sparse, parse_examples, parse_sequence_example
from dtf_notebook.ops.io.parsing_config import (
    FixedLenFeature,
    FixedLenSequenceFeature,
    ParseSpec,
    SparseFeature,
    VarLenFeature,
)
from dtf_notebook.ops.math_ops import equal
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.sparse.reductions import sparse_merge

__all__ = ["parse_example", "parse_single_example", "parse_single_sequence_example"]


# ---- runtime values ---------------------------------------------------------------------------------
def _numpy(value: Any) -> np.ndarray:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value, dtype=object)


def _out(array: np.ndarray) -> Any:
    """A parsed array as a runtime value: torch for numbers, numpy object arrays for strings."""
    if array.dtype == object:
        return array
    return torch.from_numpy(np.ascontiguousarray(array) if array.ndim else array.copy())


def _byte_list(value: Any) -> list[bytes]:
    return [bytes(b) for b in np.asarray(value, dtype=object).reshape(-1)]


def _dense_specs(attrs: list[tuple[Any, ...]], defaults: list[Any]) -> list[Dense]:
    """The dense outputs ``(key, dtype, shape, may be missing)`` with their fed defaults."""
    specs = []
    for (key, dtype, shape, may_miss), default in zip(attrs, defaults):
        array = None if default is None else _numpy(default)
        if array is not None and array.size == 0 and not (shape and shape[0] is None):
            array = None  # an empty default: the feature is required
        elif array is not None and not (shape and shape[0] is None):
            array = array.reshape(shape)
        specs.append(Dense(key, dtype, shape, array, may_miss))
    return specs


# ---- ParseExampleV2 and TF 1.x's ParseExample ------------------------------------------------------
def _example_outputs(serialized: Tensor, sparse_types: list, dense_types: list, dense_shapes: list) -> list:
    """The outputs of a batch parse: sparse indices, values and shapes, then the dense values."""
    rank = serialized.shape.ndims
    if rank not in (None, 0, 1):
        raise ValueError(f"Input serialized must be a scalar or a vector, got shape {serialized.shape}")
    batch = None if rank is None else ([] if rank == 0 else [serialized.shape[0].value])
    extra = 0 if rank == 0 else 1

    def with_batch(shape: Any) -> TensorShape:
        return unknown_shape() if batch is None else TensorShape(batch).concatenate(TensorShape(shape))

    outputs = [(dtypes.int64, TensorShape([None, 1 + extra])) for _ in sparse_types]
    outputs += [(t, TensorShape([None])) for t in sparse_types]
    outputs += [(dtypes.int64, TensorShape([1 + extra])) for _ in sparse_types]
    outputs += [(t, with_batch(s)) for t, s in zip(dense_types, dense_shapes)]
    return outputs


def _parse_example_infer(op: Operation) -> list:
    if op.type == "ParseExampleV2" and op.get_attr("ragged_value_types"):
        raise ValueError(f"{op.name}: RaggedFeature outputs (ragged_keys) are not supported by this package")
    return _example_outputs(
        op.inputs[0], op.get_attr("sparse_types"), op.get_attr("Tdense"), op.get_attr("dense_shapes")
    )


def _keys(value: Any) -> tuple[str, ...]:
    return tuple(b.decode("utf-8") for b in _byte_list(value))


class _ExampleSpecs:
    """The kernel's view of one parse op: its sparse and dense outputs, rebuilt only when the keys fed to it change
    (they are constants in every graph TF or this package builds, so once)."""

    def __init__(self, op: Operation) -> None:
        self._op = op
        self._sparse_types = op.get_attr("sparse_types")
        dense_types, shapes = op.get_attr("Tdense"), op.get_attr("dense_shapes")
        self._dense = [(t, tuple(s)) for t, s in zip(dense_types, shapes)]
        self._last: tuple[Any, ...] | None = None

    def get(self, sparse_keys: tuple[str, ...], dense_keys: tuple[str, ...]) -> tuple[list[Sparse], list]:
        if self._last is not None and self._last[0] == (sparse_keys, dense_keys):
            return self._last[1], self._last[2]
        if len(sparse_keys) != len(self._sparse_types):
            raise errors.InvalidArgumentError(
                None,
                self._op,
                f"{self._op.name}: {len(sparse_keys)} sparse keys for {len(self._sparse_types)} sparse types",
            )
        if len(dense_keys) != len(self._dense):
            raise errors.InvalidArgumentError(
                None, self._op, f"{self._op.name}: {len(dense_keys)} dense keys for {len(self._dense)} dense types"
            )
        sparse = [Sparse(k, t) for k, t in zip(sparse_keys, self._sparse_types)]
        dense = [(k, t, s, False) for k, (t, s) in zip(dense_keys, self._dense)]
        self._last = ((sparse_keys, dense_keys), sparse, dense)
        return sparse, dense

    def parse(self, serialized: Any, names: Any, sparse_keys: tuple, dense_keys: tuple, defaults: list) -> Any:
        """The op's outputs for one run: sparse indices, values and shapes, then the dense values."""
        sparse, attrs = self.get(sparse_keys, dense_keys)
        single = np.ndim(serialized) == 0
        names_list = _byte_list(names) or None
        dense_out, sparse_out = parse_examples(
            _byte_list(serialized), names_list, single, _dense_specs(attrs, defaults), sparse
        )
        outs = [_out(t[i]) for i in range(3) for t in sparse_out] + [_out(d) for d in dense_out]
        return outs[0] if len(outs) == 1 else tuple(outs)


def _parse_example_kernel(op: Operation, ctx: Any) -> Any:
    specs = _ExampleSpecs(op)

    def run(serialized: Any, names: Any, sparse_keys: Any, dense_keys: Any, ragged_keys: Any, *defaults: Any) -> Any:
        if _byte_list(ragged_keys):
            raise errors.InvalidArgumentError(None, op, f"{op.name}: RaggedFeature keys are not supported here")
        return specs.parse(serialized, names, _keys(sparse_keys), _keys(dense_keys), list(defaults))

    return run


def _parse_example_v1_kernel(op: Operation, ctx: Any) -> Any:
    specs = _ExampleSpecs(op)
    n_sparse, n_dense = op.get_attr("Nsparse"), op.get_attr("Ndense")

    def run(serialized: Any, names: Any, *rest: Any) -> Any:
        sparse_keys = tuple(k for v in rest[:n_sparse] for k in _keys(v))
        dense_keys = tuple(k for v in rest[n_sparse : n_sparse + n_dense] for k in _keys(v))
        return specs.parse(serialized, names, sparse_keys, dense_keys, list(rest[n_sparse + n_dense :]))

    return run


op_registry.register_op(
    "ParseExampleV2",
    infer=_parse_example_infer,
    kernel=_parse_example_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)
# TF 1.x wrote this op (keys as one scalar input each); its graphs import and run here.
op_registry.register_op(
    "ParseExample",
    infer=_parse_example_infer,
    kernel=_parse_example_v1_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def _default_tensor(spec: ParseSpec, key: str, dtype: dtypes.DType, shape: TensorShape) -> Tensor:
    """TF's ``_make_dense_default``: the default reshaped to the feature's shape, a padding scalar, or ``[]``."""
    value = spec.dense_defaults.get(key)
    safe = re.sub("[^A-Za-z0-9_.\\-/]", "_", key)
    if shape.ndims and shape[0].value is None:
        if value is None:
            return convert_to_tensor("" if dtype == dtypes.string else 0, dtype=dtype)
        return array_ops.reshape(convert_to_tensor(value, dtype=dtype, name="padding_" + safe), [])
    if value is None:
        return constant([], dtype=dtype)
    if isinstance(value, Tensor):
        return value
    return array_ops.reshape(convert_to_tensor(value, dtype=dtype, name="key_" + safe), shape.as_list())


def _parse_example_op(serialized: Tensor, names: Any, spec: ParseSpec) -> dict[str, Tensor | SparseTensor]:
    """The ``ParseExampleV2`` op of ``spec`` (TF's inputs, attrs and names), as ``{raw key: output}``: the
    ``SparseFeature``s are built from these outside the caller's scope, as TF does."""
    defaults = [_default_tensor(spec, k, t, s) for k, t, s in zip(spec.dense_keys, spec.dense_types, spec.dense_shapes)]
    attrs = {
        "Tdense": list(spec.dense_types),
        "num_sparse": len(spec.sparse_keys),
        "sparse_types": list(spec.sparse_types),
        "ragged_value_types": [],
        "ragged_split_types": [],
        "dense_shapes": [s.as_tuple() for s in spec.dense_shapes],
    }
    with name_scope(None, "ParseExampleV2") as scope:
        # (the key inputs are made inside the op's scope, as TF's generated op function makes them)
        key_inputs = [
            convert_to_tensor([] if names is None else names, dtype=dtypes.string, name="names"),
            constant(list(spec.sparse_keys), dtype=dtypes.string, name="sparse_keys"),
            constant(list(spec.dense_keys), dtype=dtypes.string, name="dense_keys"),
            constant([], dtype=dtypes.string, name="ragged_keys"),
        ]
        op = make_op("ParseExampleV2", [serialized, *key_inputs, *defaults], attrs, name=scope)
    result, _ = _split_outputs(list(op.outputs), spec)
    return result


def _with_sparse_features(features: dict, raw: dict[str, Any]) -> dict[str, Any]:
    """TF's ``_construct_tensors_for_composite_features``: each ``SparseFeature`` merged from its index and value
    outputs (``sparse_merge``), then only the keys asked for."""
    updates = {}
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, SparseFeature):
            if isinstance(feature.index_key, str):
                ids: Any = raw[feature.index_key]
            else:
                ids = [raw[k] for k in feature.index_key]
            updates[key] = sparse_merge(
                ids, raw[feature.value_key], feature.size, already_sorted=feature.already_sorted
            )
    out = {**raw, **updates}
    return {k: v for k, v in out.items() if k in features}


def parse_example(serialized: Any, features: Any, name: str | None = None, example_names: Any = None) -> dict[str, Any]:
    """Parses a batch of serialized ``Example`` protos into a dict of tensors (TF1's ``tf.parse_example``).

    Args:
        serialized: A string vector of serialized ``Example`` protos.
        features: ``{key: FixedLenFeature | VarLenFeature | SparseFeature | FixedLenSequenceFeature}``.
        name: Name scope (default ``ParseExample``).
        example_names: Names of the protos, used in error messages.

    Returns:
        ``{key: Tensor or SparseTensor}``: dense features ``[batch, *shape]``, sparse ones with indices
        ``[example, position]`` (a ``SparseFeature``'s: ``[example, *index]``).

    Raises:
        ValueError: no features, or an invalid feature (TF's messages).
        InvalidArgumentError (at run time): a proto does not parse, or a feature is missing or malformed.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> def example(*words):
        ...     feature = tf.train.Feature(bytes_list=tf.train.BytesList(value=list(words)))
        ...     return tf.train.Example(features=tf.train.Features(feature={"w": feature})).SerializeToString()
        >>> with tf.Graph().as_default():
        ...     words = parse_example([example(b"a", b"b"), example(b"c")], {"w": VarLenFeature(tf.string)})["w"]
        ...     with tf.Session() as sess:
        ...         value = sess.run(words)
        >>> value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist()
        ([[0, 0], [0, 1], [1, 0]], [b'a', b'b', b'c'], [2, 2])
    """
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    spec = ParseSpec.from_features(features)
    with name_scope(name, "ParseExample", [serialized, example_names]):
        serialized_t = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        raw = _parse_example_op(serialized_t, example_names, spec)
    return _with_sparse_features(features, raw)


def _assert_scalar(value: Tensor, what: str) -> Tensor:
    """``value`` when it is a scalar: checked now when its rank is known, else at run time (TF's way)."""
    rank = value.shape.ndims
    if rank is None:
        check = Assert(
            equal(array_ops.rank(value), 0), [f"Input {what} must be a scalar"], name=f"{what.capitalize()}IsScalar"
        )
        with control_dependencies([check]):
            result = identity(value, name=f"{what}Dependencies")
        result.set_shape([])
        return result
    if rank != 0:
        raise ValueError(f"Input {what} must be a scalar")
    return value


def parse_single_example(
    serialized: Any, features: Any, name: str | None = None, example_names: Any = None
) -> dict[str, Any]:
    """Parses one serialized ``Example`` (TF1's ``tf.parse_single_example``): as :func:`parse_example` without the
    batch dimension.

    Raises:
        ValueError: ``serialized`` is not a scalar, or the features are invalid.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     parsed = parse_single_example(tf.train.Example().SerializeToString(),
        ...                                   {"k": FixedLenFeature([2], tf.int64, default_value=[1, 2])})
        ...     print(parsed["k"].shape, parsed["k"].op.name)
        (2,) ParseSingleExample/ParseExample/ParseExampleV2
    """
    if features is None:
        raise ValueError("Invalid argument: features cannot be None.")
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    with name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized_t = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        serialized_t = _assert_scalar(serialized_t, "serialized")
        return parse_example(serialized_t, features, None, example_names)


# ---- ParseSingleSequenceExample (TF 1.x's signature: each key one scalar input) -------------------------
_SEQUENCE_PARTS = (
    # (key input, its count attr, the dtypes attr, the shapes attr or None)
    ("context_sparse_keys", "Ncontext_sparse", "context_sparse_types", None),
    ("context_dense_keys", "Ncontext_dense", "Tcontext_dense", "context_dense_shapes"),
    ("feature_list_sparse_keys", "Nfeature_list_sparse", "feature_list_sparse_types", None),
    ("feature_list_dense_keys", "Nfeature_list_dense", "feature_list_dense_types", "feature_list_dense_shapes"),
)


def _sequence_infer(op: Operation) -> list:
    outputs = []
    for (_, _, sparse_types, _), (_, _, dense_types, shapes), batch in (
        (_SEQUENCE_PARTS[0], _SEQUENCE_PARTS[1], []),
        (_SEQUENCE_PARTS[2], _SEQUENCE_PARTS[3], [None]),
    ):
        sparse = op.get_attr(sparse_types)
        outputs += [(dtypes.int64, TensorShape([None, 1 + len(batch)])) for _ in sparse]
        outputs += [(t, TensorShape([None])) for t in sparse]
        outputs += [(dtypes.int64, TensorShape([1 + len(batch)])) for _ in sparse]
        pairs = zip(op.get_attr(dense_types), op.get_attr(shapes))
        outputs += [(t, TensorShape(batch + list(s))) for t, s in pairs]
    return outputs


def _sequence_kernel(op: Operation, ctx: Any) -> Any:
    counts = [op.get_attr(count) for _, count, _, _ in _SEQUENCE_PARTS]
    types = [op.get_attr(t) for _, _, t, _ in _SEQUENCE_PARTS]
    shapes = [[tuple(s) for s in op.get_attr(a)] if a else None for _, _, _, a in _SEQUENCE_PARTS]

    def run(serialized: Any, missing_assumed_empty: Any, *rest: Any) -> tuple:
        keys, at = [], 0
        for n in counts:
            keys.append([k for v in rest[at : at + n] for k in _keys(v)])
            at += n
        defaults, debug_name = list(rest[at : at + counts[1]]), _byte_list(rest[at + counts[1]])
        may_miss = set(_keys(missing_assumed_empty))
        context_sparse = [Sparse(k, t) for k, t in zip(keys[0], types[0])]
        list_sparse = [Sparse(k, t) for k, t in zip(keys[2], types[2])]
        context_attrs = [(k, t, s, False) for k, t, s in zip(keys[1], types[1], shapes[1])]
        list_attrs = [(k, t, s, k in may_miss) for k, t, s in zip(keys[3], types[3], shapes[3])]
        parsed = parse_sequence_example(
            _byte_list(serialized)[0],
            debug_name[0] if debug_name and debug_name[0] else None,
            _dense_specs(context_attrs, defaults),
            context_sparse,
            _dense_specs(list_attrs, [None] * len(list_attrs)),
            list_sparse,
        )
        c_dense, c_sparse, l_dense, l_sparse = parsed
        outs = [_out(t[i]) for i in range(3) for t in c_sparse] + [_out(d) for d in c_dense]
        outs += [_out(t[i]) for i in range(3) for t in l_sparse] + [_out(d) for d in l_dense]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return run


op_registry.register_op(
    "ParseSingleSequenceExample",
    infer=_sequence_infer,
    kernel=_sequence_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def _split_outputs(outs: list[Tensor], spec: ParseSpec) -> tuple[dict[str, Any], list[Tensor]]:
    n = len(spec.sparse_keys)
    result: dict[str, Any] = {
        k: SparseTensor(outs[i], outs[n + i], outs[2 * n + i]) for i, k in enumerate(spec.sparse_keys)
    }
    dense = outs[3 * n : 3 * n + len(spec.dense_keys)]
    result.update(zip(spec.dense_keys, dense))
    return result, outs[3 * n + len(spec.dense_keys) :]


def parse_single_sequence_example(
    serialized: Any,
    context_features: Any = None,
    sequence_features: Any = None,
    example_name: Any = None,
    name: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parses one serialized ``SequenceExample`` (TF1's ``tf.parse_single_sequence_example``).

    Args:
        serialized: A string scalar.
        context_features: ``{key: FixedLenFeature | VarLenFeature}`` for the example's context.
        sequence_features: ``{key: FixedLenSequenceFeature | VarLenFeature}`` for its feature lists; a
            ``FixedLenSequenceFeature`` gives ``[steps, *shape]`` (missing lists need ``allow_missing``).
        example_name: The proto's name, used in error messages.
        name: Name scope (default ``ParseSingleSequenceExample``).

    Returns:
        ``(context, feature_lists)``: two dicts of tensors and ``SparseTensor``s.

    Raises:
        ValueError: neither kind of features given, or an invalid feature.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> steps = [tf.train.Feature(float_list=tf.train.FloatList(value=[t, -t])) for t in (1.0, 2.0)]
        >>> seq = tf.train.SequenceExample(feature_lists=tf.train.FeatureLists(
        ...     feature_list={"xy": tf.train.FeatureList(feature=steps)}))
        >>> with tf.Graph().as_default():
        ...     _, lists = parse_single_sequence_example(
        ...         seq.SerializeToString(), sequence_features={"xy": FixedLenSequenceFeature([2], tf.float32)})
        ...     with tf.Session() as sess:
        ...         print(sess.run(lists["xy"]).tolist())
        [[1.0, -1.0], [2.0, -2.0]]
    """
    if context_features is None and sequence_features is None:
        raise ValueError("Both context_features and sequence_features are None, but at least one should have values.")
    context = ParseSpec.from_features(context_features, (VarLenFeature, FixedLenFeature))
    lists = ParseSpec.from_features(sequence_features, (VarLenFeature, FixedLenSequenceFeature), sequence=True)
    with name_scope(name, "ParseSingleSequenceExample", [serialized, example_name]):
        serialized_t = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        serialized_t = _assert_scalar(serialized_t, "serialized")
        defaults = [
            _default_tensor(context, k, t, s)
            for k, t, s in zip(context.dense_keys, context.dense_types, context.dense_shapes)
        ]
        missing = [k for k in lists.dense_keys if k in lists.dense_defaults]
        attrs: dict[str, Any] = {
            "Ncontext_sparse": len(context.sparse_keys),
            "Ncontext_dense": len(context.dense_keys),
            "Nfeature_list_sparse": len(lists.sparse_keys),
            "Nfeature_list_dense": len(lists.dense_keys),
            "context_sparse_types": list(context.sparse_types),
            "Tcontext_dense": list(context.dense_types),
            "feature_list_dense_types": list(lists.dense_types),
            "context_dense_shapes": [s.as_tuple() for s in context.dense_shapes],
            "feature_list_sparse_types": list(lists.sparse_types),
            "feature_list_dense_shapes": [s.as_tuple() for s in lists.dense_shapes],
        }
        with name_scope(None, "ParseSingleSequenceExample") as scope:
            # (inputs made inside the op's scope, as TF's generated op function makes them)
            key_inputs = [
                convert_to_tensor(missing, dtype=dtypes.string, name="feature_list_dense_missing_assumed_empty")
            ]
            for arg, keys in zip(
                [part[0] for part in _SEQUENCE_PARTS],
                [context.sparse_keys, context.dense_keys, lists.sparse_keys, lists.dense_keys],
            ):
                key_inputs += [constant(k, dtype=dtypes.string, name=f"{arg}_{i}") for i, k in enumerate(keys)]
            name_t = convert_to_tensor("" if example_name is None else example_name, dtypes.string, name="debug_name")
            inputs = [serialized_t, *key_inputs, *defaults, name_t]
            op = make_op("ParseSingleSequenceExample", inputs, attrs, name=scope)
        context_out, rest = _split_outputs(list(op.outputs), context)
        lists_out, _ = _split_outputs(rest, lists)
        return context_out, lists_out
