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
from dtf_notebook.ops.io.example_parser import Dense, Sparse, SparseFeatureSpec, parse_examples, parse_sequence_example
from dtf_notebook.ops.io.parsing_config import FixedLenFeature, FixedLenSequenceFeature, ParseSpec, VarLenFeature
from dtf_notebook.ops.math_ops import equal
from dtf_notebook.ops.op_helpers import make_op

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


def _dense_attrs(op: Operation, prefix: str = "") -> list[tuple[Any, ...]]:
    """``(key, dtype, shape, may be missing)`` of each dense output (read once, when the kernel is built)."""
    keys, types, shapes = (op.get_attr(prefix + a) for a in ("dense_keys", "Tdense", "dense_shapes"))
    missing = op.get_attr(prefix + "dense_missing") if prefix else [False] * len(keys)
    return [(k, t, tuple(s), bool(m)) for k, t, s, m in zip(keys, types, shapes, missing)]


def _dense_specs(op: Operation, defaults: list[Any], prefix: str = "", attrs: list | None = None) -> list[Dense]:
    specs = []
    for (key, dtype, shape, may_miss), default in zip(attrs or _dense_attrs(op, prefix), defaults):
        array = None if default is None else _numpy(default)
        if array is not None and array.size == 0 and not (shape and shape[0] is None):
            array = None  # an empty default: the feature is required
        elif array is not None and not (shape and shape[0] is None):
            array = array.reshape(shape)
        specs.append(Dense(key, dtype, shape, array, may_miss))
    return specs


def _sparse_specs(op: Operation, prefix: str = "") -> list[Sparse]:
    return [Sparse(k, t) for k, t in zip(op.get_attr(prefix + "sparse_keys"), op.get_attr(prefix + "sparse_types"))]


# ---- ParseExampleV2 ---------------------------------------------------------------------------------
def _feature_specs(op: Operation) -> list[SparseFeatureSpec]:
    counts, index_keys, sizes = (op.get_attr(a) for a in ("sf_index_counts", "sf_index_keys", "sf_sizes"))
    specs, at = [], 0
    for value_key, dtype, n, already_sorted in zip(
        op.get_attr("sf_value_keys"), op.get_attr("sf_types"), counts, op.get_attr("sf_already_sorted")
    ):
        specs.append(
            SparseFeatureSpec(
                value_key, tuple(index_keys[at : at + n]), dtype, tuple(sizes[at : at + n]), already_sorted
            )
        )
        at += n
    return specs


def _parse_example_infer(op: Operation) -> list:
    serialized = op.inputs[0]
    rank = serialized.shape.ndims
    if rank not in (None, 0, 1):
        raise ValueError(f"Input serialized of {op.name} must be a scalar or a vector, got shape {serialized.shape}")
    batch = None if rank is None else ([] if rank == 0 else [serialized.shape[0].value])
    extra = 0 if rank == 0 else 1

    def with_batch(shape: Any) -> TensorShape:
        return unknown_shape() if batch is None else TensorShape(batch).concatenate(TensorShape(shape))

    sparse = list(zip(op.get_attr("sparse_keys"), op.get_attr("sparse_types")))
    outputs = [(dtypes.int64, TensorShape([None, 1 + extra])) for _ in sparse]
    outputs += [(t, TensorShape([None])) for _, t in sparse]
    outputs += [(dtypes.int64, TensorShape([1 + extra])) for _ in sparse]
    outputs += [(t, with_batch(s)) for t, s in zip(op.get_attr("Tdense"), op.get_attr("dense_shapes"))]
    features = _feature_specs(op)
    outputs += [(dtypes.int64, TensorShape([None, len(f.index_keys) + extra])) for f in features]
    outputs += [(f.dtype, TensorShape([None])) for f in features]
    outputs += [(dtypes.int64, TensorShape([len(f.index_keys) + extra])) for f in features]
    return outputs


def _parse_example_kernel(op: Operation, ctx: Any) -> Any:
    sparse, features, attrs = _sparse_specs(op), _feature_specs(op), _dense_attrs(op)

    def run(serialized: Any, names: Any, *defaults: Any) -> tuple:
        single = np.ndim(serialized) == 0
        name_list = _byte_list(names) or None
        dense = _dense_specs(op, list(defaults), attrs=attrs)
        dense_out, sparse_out, feature_out = parse_examples(
            _byte_list(serialized), name_list, single, dense, sparse, features
        )
        outs = [_out(t[0]) for t in sparse_out] + [_out(t[1]) for t in sparse_out] + [_out(t[2]) for t in sparse_out]
        outs += [_out(d) for d in dense_out]
        outs += [_out(t[0]) for t in feature_out] + [_out(t[1]) for t in feature_out]
        outs += [_out(t[2]) for t in feature_out]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return run


op_registry.register_op(
    "ParseExampleV2",
    infer=_parse_example_infer,
    kernel=_parse_example_kernel,
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


def _parse_example_op(serialized: Tensor, names: Any, spec: ParseSpec) -> dict[str, Any]:
    names_t = convert_to_tensor([] if names is None else names, dtype=dtypes.string)
    defaults = [_default_tensor(spec, k, t, s) for k, t, s in zip(spec.dense_keys, spec.dense_types, spec.dense_shapes)]
    features = [f for _, f in spec.sparse_features]
    index_lists = [[f.index_key] if isinstance(f.index_key, str) else list(f.index_key) for f in features]
    size_lists = [[f.size] if isinstance(f.index_key, str) else list(f.size) for f in features]
    attrs = {
        "sparse_keys": list(spec.sparse_keys),
        "sparse_types": list(spec.sparse_types),
        "dense_keys": list(spec.dense_keys),
        "Tdense": list(spec.dense_types),
        "dense_shapes": [s.as_tuple() for s in spec.dense_shapes],
        "sf_value_keys": [f.value_key for f in features],
        "sf_types": [dtypes.as_dtype(f.dtype) for f in features],
        "sf_index_keys": [k for keys in index_lists for k in keys],
        "sf_index_counts": [len(keys) for keys in index_lists],
        "sf_sizes": [int(s) for sizes in size_lists for s in sizes],
        "sf_already_sorted": [bool(f.already_sorted) for f in features],
    }
    op = make_op("ParseExampleV2", [serialized, names_t, *defaults], attrs, name="ParseExampleV2")
    outs = list(op.outputs)
    n_sparse, n_dense = len(spec.sparse_keys), len(spec.dense_keys)
    result: dict[str, Any] = {}
    for i, key in enumerate(spec.sparse_keys):
        result[key] = SparseTensor(outs[i], outs[n_sparse + i], outs[2 * n_sparse + i])
    for i, key in enumerate(spec.dense_keys):
        result[key] = outs[3 * n_sparse + i]
    rest = outs[3 * n_sparse + n_dense :]
    n_features = len(features)
    batch = [] if serialized.shape.ndims == 0 else [None]  # (TF's static batch size is unknown here too)
    for i, (key, _) in enumerate(spec.sparse_features):
        st = SparseTensor(rest[i], rest[n_features + i], rest[2 * n_features + i])
        st._dense_shape_default = TensorShape(batch + [int(s) for s in size_lists[i]])
        result[key] = st
    return result


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
        return _parse_example_op(serialized_t, example_names, spec)


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


# ---- ParseSingleSequenceExample -------------------------------------------------------------------
def _sequence_infer(op: Operation) -> list:
    outputs = []
    for prefix, batch in (("context_", []), ("feature_list_", [None])):
        sparse = op.get_attr(prefix + "sparse_types")
        outputs += [(dtypes.int64, TensorShape([None, 1 + len(batch)])) for _ in sparse]
        outputs += [(t, TensorShape([None])) for t in sparse]
        outputs += [(dtypes.int64, TensorShape([1 + len(batch)])) for _ in sparse]
        shapes = op.get_attr(prefix + "dense_shapes")
        outputs += [(t, TensorShape(batch + list(s))) for t, s in zip(op.get_attr(prefix + "Tdense"), shapes)]
    return outputs


def _sequence_kernel(op: Operation, ctx: Any) -> Any:
    n_context = len(op.get_attr("context_dense_keys"))
    context_sparse, list_sparse = _sparse_specs(op, "context_"), _sparse_specs(op, "feature_list_")
    list_dense = _dense_specs(op, [None] * len(op.get_attr("feature_list_dense_keys")), "feature_list_")

    def run(serialized: Any, name: Any, *defaults: Any) -> tuple:
        context_dense = _dense_specs(op, list(defaults[:n_context]), "context_")
        names = _byte_list(name)
        parsed = parse_sequence_example(
            _byte_list(serialized)[0],
            names[0] if names else None,
            context_dense,
            context_sparse,
            list_dense,
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
        name_t = convert_to_tensor("" if example_name is None else example_name, dtype=dtypes.string)
        defaults = [
            _default_tensor(context, k, t, s)
            for k, t, s in zip(context.dense_keys, context.dense_types, context.dense_shapes)
        ]
        attrs: dict[str, Any] = {}
        for prefix, spec in (("context_", context), ("feature_list_", lists)):
            attrs.update(
                {
                    prefix + "sparse_keys": list(spec.sparse_keys),
                    prefix + "sparse_types": list(spec.sparse_types),
                    prefix + "dense_keys": list(spec.dense_keys),
                    prefix + "Tdense": list(spec.dense_types),
                    prefix + "dense_shapes": [s.as_tuple() for s in spec.dense_shapes],
                    prefix + "dense_missing": [k in spec.dense_defaults for k in spec.dense_keys],
                }
            )
        op = make_op("ParseSingleSequenceExample", [serialized_t, name_t, *defaults], attrs)
        context_out, rest = _split_outputs(list(op.outputs), context)
        lists_out, _ = _split_outputs(rest, lists)
        return context_out, lists_out
