"""TF's tensor utilities: ``TensorProto`` from and to numpy (``tf.make_tensor_proto``, ``tf.make_ndarray``), values
known while building (``tf.get_static_value``), and the small predicates and conversions of ``tf.is_tensor``,
``tf.dimension_value`` & co.

``make_tensor_proto`` follows TF's rules exactly (Python floats become float32 and ints int32 unless they do not fit,
a tensor of more than one element of a fixed-size numeric type goes into ``tensor_content``, the rest into the typed
``*_val`` lists), so the bytes of a proto made here equal TF's and either library reads the other's.

Example:
    >>> proto = make_tensor_proto([[1, 2], [3, 4]])
    >>> proto.dtype, len(proto.tensor_content)
    (3, 16)
    >>> make_ndarray(proto)
    array([[1, 2],
           [3, 4]], dtype=int32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_proto import VALUE_FIELDS, make_ndarray
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape, as_shape

__all__ = [
    "convert_to_tensor_or_indexed_slices",
    "convert_to_tensor_or_sparse_tensor",
    "dimension_at_index",
    "dimension_value",
    "get_static_value",
    "is_symbolic_tensor",
    "is_tensor",
    "make_ndarray",
    "make_tensor_proto",
]

# The types TF writes as raw bytes into tensor_content (when a tensor has more than one element).
_CONTENT_TYPES = frozenset(
    (
        dtypes.float16,
        dtypes.bfloat16,
        dtypes.float32,
        dtypes.float64,
        dtypes.int8,
        dtypes.int16,
        dtypes.int32,
        dtypes.int64,
        dtypes.uint8,
        dtypes.uint32,
        dtypes.uint64,
        *dtypes.QUANTIZED_DTYPES,
    )
)
# The typed list of each type (the 16-bit floats travel as their bit patterns in half_val).


def _tensor_proto_class() -> Any:
    from dtf_notebook.protos.graph_pb import TensorProto

    return TensorProto


def _shape_proto(shape: Any) -> Any:
    from dtf_notebook.protos.graph_pb import TensorShapeProto

    static = as_shape(shape)
    if static.ndims is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else d) for d in static.as_list()])


def _flatten(values: Any) -> list[Any]:
    if isinstance(values, list | tuple):
        return [leaf for v in values for leaf in _flatten(v)]
    return [values]


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes | np.bytes_):
        return bytes(value)
    raise TypeError(f"Failed to convert element of type {type(value).__name__} to a string: {value!r:.60}")


def make_tensor_proto(
    values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False, allow_broadcast: bool = False
) -> Any:
    """A ``TensorProto`` (TF's message, ``tensorflow.TensorProto``) holding ``values``.

    Args:
        values: A Python value, a nested list or a numpy array (a ``TensorProto`` is returned as is).
        dtype: The element type (default: numpy's, with Python floats as float32 and ints as int32 when they fit).
        shape: The tensor's shape (default: the values'); fewer values than it holds are repeated by readers.
        verify_shape: Require the values to have exactly ``shape``.
        allow_broadcast: Allow one value (or a scalar) for any ``shape``, else require as many values as it holds.

    Returns:
        The ``TensorProto``, written as TF writes it.

    Raises:
        TypeError: ``dtype`` does not fit the values, or the values have no TF type.
        ValueError: ``None`` values, more values than ``shape`` holds, nested lists of uneven lengths, or both
            ``verify_shape`` and ``allow_broadcast``.

    Example:
        >>> proto = make_tensor_proto(1.5)
        >>> proto.dtype, list(proto.float_val), len(proto.tensor_shape.dim)
        (1, [1.5], 0)
        >>> make_tensor_proto([7], shape=[3]).int_val[:]
        [7]
    """
    if allow_broadcast and verify_shape:
        raise ValueError("allow_broadcast and verify_shape are not both allowed.")
    tensor_proto_class = _tensor_proto_class()
    if isinstance(values, tensor_proto_class):
        return values
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    quantized = dtype is not None and dtype.is_quantized
    np_dt = dtype.as_numpy_dtype if dtype is not None and dtype.is_numpy_compatible else None
    if isinstance(values, np.ndarray | np.generic):
        array = values.astype(np_dt) if np_dt is not None else values
    else:
        if values is None:
            raise ValueError("None values not supported.")
        if isinstance(values, Tensor):
            raise TypeError(f"make_tensor_proto takes values, not the symbolic tensor {values.name!r}")
        if shape is not None and np.prod(shape, dtype=np.int64) == 0:
            array = np.empty(shape, dtype=np_dt)
        else:
            if dtype is not None:
                _check_compatible(values, dtype)
            array = np.array(values, dtype=np_dt if not (np_dt is not None and dtype.is_string) else object)
            if not quantized and list(array.shape) != _dense_dims(values):
                raise ValueError(
                    f"Expected values {values!r:.60} to be a dense tensor with shape {_dense_dims(values)}, "
                    f"but got shape {list(array.shape)}."
                )
        if dtype is None and array.dtype == np.float64:
            array = array.astype(np.float32)  # Python's float is float32 in TF
        elif dtype is None and array.dtype == np.int64:
            narrow = array.astype(np.int32)
            if np.array_equal(narrow, array):  # ... and its int int32, unless that loses values
                array = narrow
    try:
        value_dtype = dtypes.as_dtype(array.dtype)
    except TypeError:
        raise TypeError(f"Unrecognized data type: {array.dtype}") from None
    if quantized:
        value_dtype = dtype
    if dtype is not None and dtype is not value_dtype:
        raise TypeError(f"`dtype` {dtype!r} is not compatible with {values!r:.60} of dtype {array.dtype}.")
    if shape is None:
        shape, same_size, size = list(array.shape), True, array.size
    else:
        shape = [int(d) for d in shape]
        size = int(np.prod(shape, dtype=np.int64))
        same_size = size == array.size
        if allow_broadcast:
            if array.shape not in ((1,), ()) and array.size != size:
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.")
        else:
            if verify_shape and array.shape != tuple(shape):
                raise TypeError(f"Expected Tensor's shape: {tuple(shape)}, but got {array.shape}.")
            if array.size > size:
                raise ValueError(f"Too many elements provided. Takes at most {size}, but got {array.size}")
    proto = tensor_proto_class(dtype=value_dtype.as_datatype_enum, tensor_shape=_shape_proto(shape))
    if same_size and value_dtype in _CONTENT_TYPES and size > 1:
        proto.tensor_content = np.ascontiguousarray(array).tobytes()
        return proto
    if value_dtype.is_string:
        flat = array.reshape(-1) if isinstance(values, np.ndarray) else _flatten(values)
        proto.string_val.extend(_as_bytes(v) for v in flat)
        return proto
    flat = array.reshape(-1)
    if value_dtype in (dtypes.float16, dtypes.bfloat16):
        proto.half_val.extend(flat.view(np.uint16).tolist())
    elif value_dtype.is_complex:
        getattr(proto, VALUE_FIELDS[value_dtype]).extend(np.stack([flat.real, flat.imag], 1).reshape(-1).tolist())
    elif value_dtype.is_quantized:
        proto.int_val.extend(flat[flat.dtype.names[0]].tolist())
    else:
        getattr(proto, VALUE_FIELDS.get(value_dtype, "int_val")).extend(flat.tolist())
    return proto


def _leaf_ok(dtype: dtypes.DType) -> Any:
    if dtype.is_bool:
        return lambda v: isinstance(v, bool | np.bool_)
    if dtype.is_integer:
        return lambda v: isinstance(v, int | np.integer)
    if dtype.is_floating:
        return lambda v: isinstance(v, int | float | np.integer | np.floating)
    if dtype.is_complex:
        return lambda v: isinstance(v, int | float | complex | np.number)
    if dtype.is_string:
        return lambda v: isinstance(v, str | bytes | np.str_ | np.bytes_)
    return lambda v: True


def _check_compatible(values: Any, dtype: dtypes.DType) -> None:
    """TF's ``_AssertCompatible``: every Python value fits ``dtype`` (quantized values are tuples of ints)."""
    if dtype.is_quantized:
        leaves = [values] if not isinstance(values, list | tuple) else values
        for leaf in leaves:
            if isinstance(values, tuple):
                if not isinstance(leaf, int | np.integer):
                    raise TypeError(f"Expected {dtype.name}, but got {leaf} of type '{type(leaf).__name__}'.")
            elif not isinstance(leaf, list | tuple):
                raise TypeError(f"Expected {dtype.name}, but got {leaf} of type '{type(leaf).__name__}'.")
            else:
                _check_compatible(leaf, dtype)
        return
    ok = _leaf_ok(dtype)
    for leaf in _flatten(values):
        if not isinstance(leaf, np.ndarray) and not ok(leaf):
            raise TypeError(f"Expected {dtype.name}, but got {leaf} of type '{type(leaf).__name__}'.")


def _dense_dims(values: Any) -> list[int]:
    """The shape of a nested list as TF reads it (the first element's nesting decides)."""
    if not isinstance(values, list | tuple):
        return []
    if not values:
        return [0]
    return [len(values), *_dense_dims(values[0])]


# ---- values known while building ------------------------------------------------------------------------------
def _static(t: Tensor, partial: bool) -> Any:
    op = t.op
    kind = op.type
    if kind == "Const":
        return np.asarray(op.get_attr("value"))
    if kind in ("Shape", "Size", "Rank"):
        shape = op.inputs[0].shape
        if kind == "Rank":
            return None if shape.ndims is None else np.array(shape.ndims, dtype=np.int32)
        if not shape.is_fully_defined():
            return None
        dims = shape.as_list()
        return np.array(dims if kind == "Shape" else np.prod(dims, dtype=np.int64), dtype=t.dtype.np_dtype)
    if kind in ("Identity", "StopGradient", "CheckNumerics"):
        return _static(op.inputs[0], partial)
    if kind == "Cast":
        value = _static(op.inputs[0], False)
        return None if value is None else value.astype(t.dtype.np_dtype)
    if kind == "Range":
        parts = [_static(x, False) for x in op.inputs]
        return None if any(p is None for p in parts) else np.arange(*parts, dtype=t.dtype.np_dtype)
    if kind == "ConcatV2":
        parts = [_static(x, False) for x in op.inputs]
        return None if any(p is None for p in parts) else np.concatenate(parts[:-1], axis=int(parts[-1]))
    if kind == "Pack":
        if not op.inputs or op.get_attr("axis") != 0:
            return None
        parts = [_static(x, partial) for x in op.inputs]
        if any(p is None for p in parts) and not partial:
            return None
        try:
            return np.array(parts)
        except ValueError:  # some parts unknown
            return np.array(parts, dtype=object)
    if kind == "Unpack":
        value = _static(op.inputs[0], partial) if op.get_attr("axis") == 0 else None
        return None if value is None else value[t.value_index]
    if kind == "Fill":
        value = _static(op.inputs[1], False)
        if value is None or not t.shape.is_fully_defined():
            return None
        return np.full(t.shape.as_list(), value, dtype=value.dtype)
    if kind in ("Equal", "NotEqual"):
        a, b = (_static(x, False) for x in op.inputs)
        if a is None or b is None:
            return None
        return np.equal(a, b) if kind == "Equal" else np.not_equal(a, b)
    return None


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of ``tensor`` when the graph alone determines it (TF's ``constant_value``), else None.

    Known: constants, the shape, size and rank of tensors whose static shapes are known, and ``Identity``,
    ``StopGradient``, ``Cast``, ``Range``, ``ConcatV2``, ``Pack`` (axis 0), ``Unpack``, ``Fill``, ``Equal`` and
    ``NotEqual`` of known values. A value that is not a tensor is returned as is.

    Args:
        tensor: A Tensor (or any value).
        partial: For ``Pack``, return an ``object`` array with None for the parts not known instead of None.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     get_static_value(tf.shape(x)), get_static_value(tf.shape(x)[1] * 2), get_static_value(7)
        (None, None, 7)
        >>> with tf.Graph().as_default():
        ...     get_static_value(tf.cast(tf.shape(tf.zeros([2, 3])), tf.float32))
        array([2., 3.], dtype=float32)
    """
    if isinstance(tensor, IndexedSlices | SparseTensor) or hasattr(tensor, "_as_graph_element"):
        return None
    if not isinstance(tensor, Tensor):
        return tensor
    return _static(tensor, partial)


# ---- predicates and conversions -------------------------------------------------------------------------------
def is_tensor(x: Any) -> bool:
    """Whether ``x`` is a tensor-like object of a graph: a Tensor, a variable, a SparseTensor or IndexedSlices (not a
    numpy array or Python value).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     is_tensor(tf.constant(1.0)), is_tensor(tf.SparseTensor([[0]], [1.0], [2])), is_tensor(np.ones(2))
        (True, True, False)
    """
    if isinstance(x, Tensor | SparseTensor | IndexedSlices):
        return True
    from dtf_notebook.framework.convert import is_tensor_like

    return is_tensor_like(x)


def is_symbolic_tensor(tensor: Any) -> bool:
    """Whether ``tensor`` is a graph ``Tensor`` itself (not a variable, SparseTensor or value).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     is_symbolic_tensor(tf.constant(1.0)), is_symbolic_tensor(tf.Variable(1.0)), is_symbolic_tensor(1.0)
        (True, False, False)
    """
    return isinstance(tensor, Tensor)


def dimension_value(dimension: Any) -> int | None:
    """The int (or None) a ``Dimension`` holds; an int or None is returned as is (TF's ``tf.dimension_value``).

    Example:
        >>> dimension_value(Dimension(3)), dimension_value(None), dimension_value(4)
        (3, None, 4)
    """
    return dimension.value if isinstance(dimension, Dimension) else dimension


def dimension_at_index(shape: TensorShape, index: int) -> Dimension:
    """Dimension ``index`` of ``shape``, an unknown Dimension when the rank is unknown.

    Example:
        >>> dimension_at_index(TensorShape([2, None]), 0), dimension_at_index(TensorShape(None), 5)
        (Dimension(2), Dimension(None))
    """
    if shape.ndims is None:
        return Dimension(None)
    return shape.dims[index]


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Any = None, name: str | None = None) -> Any:
    """``value`` as a Tensor, but an ``IndexedSlices`` (or its value) stays an ``IndexedSlices``.

    Raises:
        ValueError: ``dtype`` differs from an ``IndexedSlices``' dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     rows = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]))
        ...     convert_to_tensor_or_indexed_slices(rows) is rows, convert_to_tensor_or_indexed_slices([1.0]).dtype
        (True, tf.float32)
    """
    if isinstance(value, IndexedSlicesValue):
        value = IndexedSlices(value.values, value.indices, value.dense_shape)
    if isinstance(value, IndexedSlices):
        if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(value.dtype):
            requested = dtypes.as_dtype(dtype).name
            raise ValueError(
                f"Tensor conversion requested dtype {requested} for Tensor with dtype {value.dtype.name}: {value!r}"
            )
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


def convert_to_tensor_or_sparse_tensor(value: Any, dtype: Any = None, name: str | None = None) -> Any:
    """``value`` as a Tensor, but a ``SparseTensor`` (or a ``SparseTensorValue``, made constant) stays sparse.

    Raises:
        RuntimeError: ``dtype`` differs from the sparse tensor's dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sp = convert_to_tensor_or_sparse_tensor(tf.SparseTensorValue([[0]], [1.0], [2]))
        ...     type(sp).__name__, convert_to_tensor_or_sparse_tensor(3).dtype
        ('SparseTensor', tf.int32)
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor.from_value(value)
    if isinstance(value, SparseTensor):
        if dtype is not None and dtype is not value.dtype:
            raise RuntimeError(f"Sparse dtype: requested = {dtype.name}, actual = {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)
