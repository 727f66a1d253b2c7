"""Element types of tensors (``tf.float32``, ``tf.int64``, ``tf.string``, ...).

A :class:`DType` is an immutable value that knows its name, its numpy type and
its properties. The mapping to torch dtypes lives in the runtime, so this
module stays importable without torch.

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> dtypes.as_dtype("float32") is dtypes.float32
    True
    >>> dtypes.int64.is_integer, dtypes.float32.size
    (True, 4)
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

try:  # bfloat16 has no numpy type of its own; ml_dtypes provides the one TF uses.
    import ml_dtypes

    _BFLOAT16_NP: Any = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    _BFLOAT16_NP = np.dtype(np.float32)


class DType:
    """One tensor element type.

    Example:
        >>> float32.name, float32.as_numpy_dtype
        ('float32', <class 'numpy.float32'>)
    """

    __slots__ = ("_name", "_np", "_enum", "_kind", "_size")

    def __new__(cls, type_enum: Any, handle_data: Any = None) -> DType:
        # TF's ``DType(type_enum)``: here every DType is one shared object, so this finds it by its enum.
        enum = int(type_enum)  # TF converts as int() does (a ValueError for a name)
        if enum not in _BY_ENUM:
            raise TypeError(f"{type_enum} does not correspond to a valid tensorflow::DataType")
        return _BY_ENUM[enum]

    def __init__(self, type_enum: Any, handle_data: Any = None) -> None:
        pass  # the shared object is already set up

    @classmethod
    def _define(cls, name: str, np_dtype: Any, enum: int, kind: str, size: int) -> DType:
        """Creates one of the module's DType objects (``kind``: "f" float, "i" signed int, "u" unsigned, "c"
        complex, "b" bool, "s" string, "q" quantized, "r" resource, "v" variant)."""
        self = object.__new__(cls)
        self._name = name
        self._np = np_dtype
        self._enum = enum
        self._kind = kind
        self._size = size
        return self

    name = property(lambda self: self._name)
    size = property(lambda self: self._size)
    as_datatype_enum = property(lambda self: self._enum)
    base_dtype = property(lambda self: self)
    is_floating = property(lambda self: self._kind == "f")
    is_integer = property(lambda self: self._kind in "iu")
    is_unsigned = property(lambda self: self._kind == "u")
    is_bool = property(lambda self: self._kind == "b")
    is_complex = property(lambda self: self._kind == "c")
    is_quantized = property(lambda self: self._kind == "q")
    is_numpy_compatible = property(lambda self: self._kind not in "rv")
    is_string = property(lambda self: self._kind == "s")

    @property
    def real_dtype(self) -> DType:
        """The type of the real and imaginary parts of a complex type (the type itself for the others)."""
        return {"complex64": float32, "complex128": float64}.get(self._name, self)

    @property
    def as_numpy_dtype(self) -> Any:
        """The numpy scalar type (``object`` for strings, TF's structured numpy type for the quantized types)."""
        if self._kind == "q":
            return self._np
        return self._np.type if self._kind != "s" else object

    @property
    def np_dtype(self) -> np.dtype:
        """The numpy dtype used to hold values of this type."""
        return self._np

    @property
    def min(self) -> Any:
        if self._kind == "f":
            return float(np.finfo(self._np).min)
        if self._kind in "iu":
            return int(np.iinfo(self._np).min)
        raise TypeError(f"Cannot find minimum value of {self._name}.")

    @property
    def max(self) -> Any:
        if self._kind == "f":
            return float(np.finfo(self._np).max)
        if self._kind in "iu":
            return int(np.iinfo(self._np).max)
        raise TypeError(f"Cannot find maximum value of {self._name}.")

    def __reduce__(self):
        return (as_dtype, (self._name,))

    def is_compatible_with(self, other: Any) -> bool:
        """True when values of ``other`` may be used where this type is expected."""
        return as_dtype(other) is self

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: {self._name!r}>"


float16 = DType._define("float16", np.dtype(np.float16), 19, "f", 2)
half = float16
float32 = DType._define("float32", np.dtype(np.float32), 1, "f", 4)
float64 = DType._define("float64", np.dtype(np.float64), 2, "f", 8)
double = float64
bfloat16 = DType._define("bfloat16", _BFLOAT16_NP, 14, "f", 2)
int8 = DType._define("int8", np.dtype(np.int8), 6, "i", 1)
int16 = DType._define("int16", np.dtype(np.int16), 5, "i", 2)
int32 = DType._define("int32", np.dtype(np.int32), 3, "i", 4)
int64 = DType._define("int64", np.dtype(np.int64), 9, "i", 8)
uint8 = DType._define("uint8", np.dtype(np.uint8), 4, "u", 1)
bool = DType._define("bool", np.dtype(np.bool_), 10, "b", 1)  # noqa: A001 - TF's public name
string = DType._define("string", np.dtype(object), 7, "s", 0)
#: A handle to a per-step resource (a TensorArray); its runtime value is the resource itself, never sent between tasks.
resource = DType._define("resource", np.dtype(object), 20, "r", 0)

uint16 = DType._define("uint16", np.dtype(np.uint16), 17, "u", 2)
uint32 = DType._define("uint32", np.dtype(np.uint32), 22, "u", 4)
uint64 = DType._define("uint64", np.dtype(np.uint64), 23, "u", 8)
complex64 = DType._define("complex64", np.dtype(np.complex64), 8, "c", 8)
complex128 = DType._define("complex128", np.dtype(np.complex128), 18, "c", 16)
# Quantized types: names, enums and TF's numpy types only; no op here computes on them (TF's quantized kernels
# have no torch counterpart), so a graph may name them but a session cannot run ops on their values.
qint8 = DType._define("qint8", np.dtype([("qint8", np.int8)]), 11, "q", 1)
quint8 = DType._define("quint8", np.dtype([("quint8", np.uint8)]), 12, "q", 1)
qint16 = DType._define("qint16", np.dtype([("qint16", np.int16)]), 15, "q", 2)
quint16 = DType._define("quint16", np.dtype([("quint16", np.uint16)]), 16, "q", 2)
qint32 = DType._define("qint32", np.dtype([("qint32", np.int32)]), 13, "q", 4)
#: TF's variant (a type-erased value, such as a TensorList): named so graphs can mention it; no op here makes one.
variant = DType._define("variant", np.dtype(object), 21, "v", 0)
#: The quantized types (TF's set also holds their ``_ref`` types, which do not exist here).
QUANTIZED_DTYPES = frozenset((qint8, quint8, qint16, quint16, qint32))

ALL_DTYPES: tuple[DType, ...] = (
    float16,
    float32,
    float64,
    bfloat16,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    complex64,
    complex128,
    bool,
    string,
    qint8,
    quint8,
    qint16,
    quint16,
    qint32,
)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update({"half": float16, "double": float64, "float": float32})
_BY_ENUM = {d.as_datatype_enum: d for d in ALL_DTYPES}
for _special in (resource, variant):  # no numpy or wire form
    _BY_NAME[_special.name], _BY_ENUM[_special.as_datatype_enum] = _special, _special
_NP_TO_DTYPE = {d.np_dtype: d for d in ALL_DTYPES if d is not string and d.np_dtype is not float32.np_dtype}
_NP_TO_DTYPE[np.dtype(np.float32)] = float32
_PY_TO_DTYPE = {float: float32, int: int32, builtins.bool: bool}


def as_dtype(type_value: Any) -> DType:
    """Converts a name, numpy type, python type or DType into a DType.

    Raises:
        TypeError: ``type_value`` names no known element type.

    Example:
        >>> as_dtype(np.int64), as_dtype("float64")
        (tf.int64, tf.float64)
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        name = type_value[:-4] if type_value.endswith("_ref") else type_value
        if name in _BY_NAME:
            return _BY_NAME[name]
    elif isinstance(type_value, int) and not isinstance(type_value, builtins.bool) and type_value in _BY_ENUM:
        return _BY_ENUM[type_value]
    elif type_value in (str, bytes, np.str_, np.bytes_, object):
        return string
    elif type_value in _PY_TO_DTYPE:
        return _PY_TO_DTYPE[type_value]
    else:
        try:
            np_dtype = np.dtype(type_value)
        except TypeError:
            np_dtype = None
        if np_dtype is not None:
            if np_dtype in _NP_TO_DTYPE:
                return _NP_TO_DTYPE[np_dtype]
            if np_dtype.kind in "OSU":
                return string
    raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")


def dtype_of_value(value: Any) -> DType:
    """The DType a Python or numpy value converts to (TF's defaults: int → int32, float → float32).

    Example:
        >>> dtype_of_value(3), dtype_of_value(np.zeros(2)), dtype_of_value(b"hi")
        (tf.int32, tf.float64, tf.string)
    """
    if isinstance(value, np.ndarray | np.generic):
        return as_dtype(value.dtype)
    if isinstance(value, builtins.bool | np.bool_):
        return bool
    if isinstance(value, int):
        return int32 if -(2**31) <= value < 2**31 else int64
    if isinstance(value, float):
        return float32
    if isinstance(value, complex):
        return complex128
    if isinstance(value, str | bytes):
        return string
    if isinstance(value, list | tuple):
        if not value:
            return float32
        kinds = [dtype_of_value(v) for v in value]
        for candidate in (string, complex128, float32, int64, int32, bool):
            if candidate in kinds:
                return candidate
    raise TypeError(f"Cannot convert {value!r} (type {type(value).__name__}) to a tensor value.")
