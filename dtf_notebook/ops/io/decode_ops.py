"""``tf.decode_csv`` (``DecodeCSV``) and ``tf.decode_raw`` (``DecodeRaw``, ``DecodePaddedRaw``): records read from
text and binary files into typed tensors, with TF's parsing rules and messages.

``decode_csv`` follows TF's kernel: RFC 4180 fields (quotes doubled inside quoted fields, or plain characters with
``use_quote_delim=False``), an empty field or ``na_value`` takes the column's default (an error when the default is
empty: the column is required), numbers as TF reads them (ints and floats may carry spaces around them; floats
also ``inf``, ``nan``, hexadecimal; a float32 column rounds as float32).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     label, word, score = decode_csv(['1,"a,b",0.5', '2,,'], [[0], ["none"], [-1.0]])
    ...     with tf.Session() as sess:
    ...         print(*sess.run([label, word, score]))
    [1 2] [b'a,b' b'none'] [ 0.5 -1. ]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime import values as runtime_values

__all__ = ["decode_csv", "decode_raw"]

_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)
_TYPE_NAMES = {dtypes.float32: "float", dtypes.float64: "double", dtypes.int32: "int32", dtypes.int64: "int64"}
_SPACE = b" \t\n\v\f\r"
_INT = re.compile(rb"[+-]?[0-9]+")
_DECIMAL = re.compile(rb"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_HEX = re.compile(rb"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?")
_SPECIAL = {b"inf": float("inf"), b"infinity": float("inf"), b"nan": float("nan")}
_INT_RANGE = {dtypes.int32: (-(2**31), 2**31 - 1), dtypes.int64: (-(2**63), 2**63 - 1)}


# ---- numbers as TF's safe_strto* read them ------------------------------------------------------------
def _parse_int(text: bytes, dtype: dtypes.DType) -> int | None:
    body = text.strip(_SPACE)
    if not _INT.fullmatch(body):
        return None
    value = int(body)
    low, high = _INT_RANGE[dtype]
    return value if low <= value <= high else None


def _parse_float(text: bytes) -> float | None:
    body = text.strip(_SPACE)
    if _DECIMAL.fullmatch(body):
        return float(body)
    if _HEX.fullmatch(body):
        sign = -1.0 if body[:1] == b"-" else 1.0
        return sign * float.fromhex(body.lstrip(b"+-").decode())
    sign = -1.0 if body[:1] == b"-" else 1.0
    special = _SPECIAL.get(body.lstrip(b"+-").lower())
    return None if special is None else sign * special


# ---- fields --------------------------------------------------------------------------------------------
def _fields(record: bytes, delim: int, quotes: bool, select: Sequence[int]) -> list[bytes]:
    """TF's ``ExtractFields``: the (selected) fields of one record."""
    out: list[bytes] = []
    i, n, parsed, wanted = 0, len(record), 0, 0
    if not record:
        return out
    quote = ord('"')
    while i < n:
        if record[i] in (10, 13):  # line ends between fields are skipped
            i += 1
            continue
        include = not select or select[wanted] == parsed
        field = bytearray()
        if quotes and record[i] == quote:
            i += 1
            while i < n - 1 and (record[i] != quote or record[i + 1] != delim):
                if record[i] != quote:
                    field.append(record[i])
                    i += 1
                else:
                    if record[i + 1] != quote:
                        raise errors.InvalidArgumentError(
                            None, None, "Quote inside a string has to be escaped by another quote"
                        )
                    field.append(quote)
                    i += 2
            if not (i < n and record[i] == quote and (i == n - 1 or record[i + 1] == delim)):
                raise errors.InvalidArgumentError(
                    None, None, "Quoted field has to end with quote followed by delim or end"
                )
            i += 2
        else:
            end = record.find(bytes([delim]), i)
            end = n if end < 0 else end
            field = record[i:end]
            if (quotes and quote in field) or 10 in field or 13 in field:
                raise errors.InvalidArgumentError(None, None, "Unquoted fields cannot have quotes/CRLFs inside")
            i = end + 1
        parsed += 1
        if include:
            out.append(bytes(field))
            wanted += 1
            if select and wanted == len(select):
                return out
    if (not select or select[wanted] == parsed) and record[-1] == delim:
        out.append(b"")  # a record ending in the delimiter has an empty last field
    return out


def _decode_csv_kernel(op: Operation, ctx: Any) -> Any:
    types: list[dtypes.DType] = op.get_attr("OUT_TYPE")
    delim_text, quotes = op.get_attr("field_delim"), op.get_attr("use_quote_delim")
    na_value = op.get_attr("na_value").encode() if isinstance(op.get_attr("na_value"), str) else op.get_attr("na_value")
    select = list(op.get_attr("select_cols"))
    delim_bytes = delim_text.encode() if isinstance(delim_text, str) else bytes(delim_text)
    if len(delim_bytes) != 1:
        raise errors.InvalidArgumentError(None, op, "field_delim should be only 1 char")
    if select and len(select) != len(types):
        raise errors.InvalidArgumentError(None, op, "select_cols should match output size")
    if any(a >= b for a, b in zip(select, select[1:])):
        raise errors.InvalidArgumentError(None, op, "select_cols should be strictly increasing indices")
    if select and select[0] < 0:
        raise errors.InvalidArgumentError(None, op, "select_cols should be non-negative indices")
    delim = delim_bytes[0]

    def run(records: Any, *defaults: Any) -> Any:
        default_values = []
        for f, d in enumerate(defaults):
            array = d if isinstance(d, np.ndarray) else d.detach().cpu().numpy()
            if array.ndim > 1:
                raise errors.InvalidArgumentError(None, op, "Each record default should be at most rank 1")
            if array.size > 1:
                raise errors.InvalidArgumentError(
                    None, op, f"There should only be 1 default per field but field {f} has {array.size}"
                )
            default_values.append(array.reshape(-1)[0] if array.size else None)
        flat = np.asarray(records, dtype=object).reshape(-1)
        columns: list[list[Any]] = [[] for _ in types]
        for i, record in enumerate(flat):
            fields = _fields(bytes(record), delim, quotes, select)
            if len(fields) != len(types):
                raise errors.InvalidArgumentError(
                    None, op, f"Expect {len(types)} fields but have {len(fields)} in record {i}"
                )
            for f, (text, dtype) in enumerate(zip(fields, types)):
                columns[f].append(_field_value(text, dtype, default_values[f], na_value, f, i, op))
        shape = np.shape(records)
        outs = [_column(values, dtype, shape) for values, dtype in zip(columns, types)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    return run


def _field_value(text: bytes, dtype: dtypes.DType, default: Any, na: bytes, f: int, i: int, op: Operation) -> Any:
    if not text or text == na:
        if default is None:
            raise errors.InvalidArgumentError(None, op, f"Field {f} is required but missing in record {i}!")
        return default
    if dtype == dtypes.string:
        return text
    value = _parse_int(text, dtype) if dtype.is_integer else _parse_float(text)
    if value is None:
        shown = text.decode("utf-8", "backslashreplace")
        raise errors.InvalidArgumentError(
            None, op, f"Field {f} in record {i} is not a valid {_TYPE_NAMES[dtype]}: {shown}"
        )
    return value


def _column(values: list[Any], dtype: dtypes.DType, shape: tuple[int, ...]) -> Any:
    if dtype == dtypes.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out.reshape(shape)
    with np.errstate(over="ignore"):  # a float32 column overflows to inf, as TF's parser gives
        array = np.array(values, dtype=dtype.as_numpy_dtype)
    return torch.from_numpy(array.reshape(shape))


def _decode_csv_infer(op: Operation) -> list:
    types = op.get_attr("OUT_TYPE")
    for i, (t, d) in enumerate(zip(types, op.inputs[1:])):
        if t not in _CSV_TYPES:
            raise TypeError(f"csv: data type {t.name} not supported in field {i}")
        if d.dtype != t:
            raise TypeError(f"Record default {i} of {op.name} has type {d.dtype.name}, but OUT_TYPE says {t.name}")
        dims = d.shape.as_list() if d.shape.ndims is not None else None
        if dims is not None and (len(dims) > 1 or (dims and dims[0] is not None and dims[0] > 1)):
            raise ValueError(
                f"Shape of a default must be a length-0 or length-1 vector, or a scalar. (record default {i} of "
                f"{op.name} has shape {d.shape})"
            )
    return [(t, op.inputs[0].shape) for t in types]


op_registry.register_op(
    "DecodeCSV", infer=_decode_csv_infer, kernel=_decode_csv_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
)


def decode_csv(
    records: Any,
    record_defaults: Sequence[Any],
    field_delim: str = ",",
    use_quote_delim: bool = True,
    name: str | None = None,
    na_value: str = "",
    select_cols: Sequence[int] | None = None,
) -> list[Tensor]:
    """Converts CSV records to tensors, one per column (TF1's ``tf.decode_csv``).

    Args:
        records: A string tensor of any shape; each string is one record (a line).
        record_defaults: One default per (selected) column, whose dtype gives the column's (float32, float64,
            int32, int64 or string): a one-element list or tensor, or an empty one for a required column.
        field_delim: The one-character delimiter.
        use_quote_delim: Read ``"..."`` as quoted fields (RFC 4180); False: quotes are plain characters.
        name: Op name (default ``DecodeCSV``).
        na_value: Another spelling of a missing field.
        select_cols: Sorted column indices to decode (one default each).

    Returns:
        A list of tensors with the shape of ``records``.

    Raises:
        ValueError: ``select_cols`` is not strictly increasing, negative, or does not match ``record_defaults``.
        InvalidArgumentError (at run time): a record has too few or too many fields, a required field is empty,
            a number does not parse, or quotes are malformed.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     b, d = decode_csv(["a;1;x;2.5"], [[0], [0.0]], field_delim=";", select_cols=[1, 3])
        ...     with tf.Session() as sess:
        ...         print(*sess.run([b, d]))
        [1] [2.5]
    """
    if select_cols is not None and any(a >= b for a, b in zip(select_cols, list(select_cols)[1:])):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    with name_scope(name, "DecodeCSV", [records, *record_defaults]) as scope:
        # (the inputs are converted inside the op's scope, as TF's generated op functions do)
        records_t = convert_to_tensor(records, dtype=dtypes.string, name="records")
        defaults = [convert_to_tensor(d, name=f"record_defaults_{i}") for i, d in enumerate(record_defaults)]
        attrs = {
            "OUT_TYPE": [d.dtype for d in defaults],
            "field_delim": field_delim,
            "use_quote_delim": bool(use_quote_delim),
            "na_value": na_value,
            "select_cols": [int(c) for c in select_cols or []],
        }
        return list(make_op("DecodeCSV", [records_t, *defaults], attrs, name=scope).outputs)


# ---- DecodeRaw ---------------------------------------------------------------------------------------
_RAW_TYPES = (
    dtypes.float16,
    dtypes.float32,
    dtypes.float64,
    dtypes.int8,
    dtypes.int16,
    dtypes.int32,
    dtypes.int64,
    dtypes.uint8,
    dtypes.bool,
)


def _raw_infer(op: Operation) -> list:
    out_type = op.get_attr("out_type")
    if out_type not in _RAW_TYPES:
        allowed = ", ".join(t.name for t in _RAW_TYPES)
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list of allowed "
            f"values: {allowed}"
        )
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [(out_type, unknown_shape())]
    last = None
    if op.type == "DecodePaddedRaw":
        from dtf_notebook.ops.op_helpers import constant_value

        length = constant_value(op.inputs[1])
        last = None if length is None else int(length) // out_type.size
    return [(out_type, shape.concatenate(TensorShape([last])))]


def _numpy_type(op: Operation) -> np.dtype:
    out_type = op.get_attr("out_type")
    np_type = np.dtype(out_type.as_numpy_dtype)
    return np_type.newbyteorder("<" if op.get_attr("little_endian") else ">")


def _to_torch(array: np.ndarray, op: Operation) -> torch.Tensor:
    native = array.astype(array.dtype.newbyteorder("="), copy=True)
    return torch.from_numpy(native).to(runtime_values.torch_dtype(op.get_attr("out_type")))


def _raw_kernel(op: Operation, ctx: Any) -> Any:
    np_type = _numpy_type(op)
    type_name = {"float16": "half", "float32": "float", "float64": "double"}.get(
        op.get_attr("out_type").name, op.get_attr("out_type").name
    )

    def run(data: Any) -> torch.Tensor:
        flat = [bytes(b) for b in np.asarray(data, dtype=object).reshape(-1)]
        size = len(flat[0]) if flat else 0
        if size % np_type.itemsize:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"Input to DecodeRaw has length {size} that is not a multiple of {np_type.itemsize}, the size of "
                f"{type_name}",
            )
        for i, b in enumerate(flat[1:], start=1):
            if len(b) != size:
                raise errors.InvalidArgumentError(
                    None,
                    op,
                    f"DecodeRaw requires input strings to all be the same size, but element {i} has size {size} "
                    f"!= {len(b)}",
                )
        array = np.frombuffer(b"".join(flat), dtype=np_type).reshape((*np.shape(data), size // np_type.itemsize))
        return _to_torch(array, op)

    return run


def _padded_raw_kernel(op: Operation, ctx: Any) -> Any:
    np_type = _numpy_type(op)

    def run(data: Any, fixed_length: Any) -> torch.Tensor:
        length = int(fixed_length)
        if length % np_type.itemsize:
            raise errors.InvalidArgumentError(
                None, op, f"fixed_length ({length}) must be a multiple of the size of out_type ({np_type.itemsize})"
            )
        flat = [bytes(b)[:length].ljust(length, b"\0") for b in np.asarray(data, dtype=object).reshape(-1)]
        array = np.frombuffer(b"".join(flat), dtype=np_type).reshape((*np.shape(data), length // np_type.itemsize))
        return _to_torch(array, op)

    return run


for _type, _kernel in (("DecodeRaw", _raw_kernel), ("DecodePaddedRaw", _padded_raw_kernel)):
    op_registry.register_op(_type, infer=_raw_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True)


def decode_raw(
    input_bytes: Any = None,
    out_type: Any = None,
    little_endian: bool = True,
    name: str | None = None,
    bytes: Any = None,  # noqa: A002 - TF1's old name of input_bytes
    fixed_length: Any = None,
) -> Tensor:
    """Reinterprets the bytes of strings as numbers (TF1's ``tf.decode_raw``, ``tf.io.decode_raw``).

    Args:
        input_bytes: A string tensor; its strings must all have the same length (unless ``fixed_length``).
        out_type: The element type (float16/32/64, int8/16/32/64, uint8, bool).
        little_endian: The byte order of the data.
        name: Op name (default ``DecodeRaw``).
        bytes: TF1's deprecated name of ``input_bytes``.
        fixed_length: Bytes taken from each string (cut or zero-padded), for strings of different lengths.

    Returns:
        A tensor of shape ``input_bytes.shape + [length / size of out_type]``.

    Raises:
        ValueError: both or neither of ``input_bytes`` and ``bytes`` given.
        InvalidArgumentError (at run time): strings of different lengths, or a length that is not a multiple
            of the element size.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(decode_raw([b"\\x01\\x00\\x02\\x00"], tf.int16)))
        [[1 2]]
    """
    if input_bytes is not None and bytes is not None:
        raise ValueError("Cannot specify both 'input_bytes' and 'bytes'")
    if input_bytes is None:
        input_bytes = bytes
    if input_bytes is None:
        raise ValueError("decode_raw needs input_bytes")
    if out_type is None:
        raise ValueError("decode_raw needs out_type")
    data = convert_to_tensor(input_bytes, dtype=dtypes.string, name="input_bytes")
    attrs = {"out_type": dtypes.as_dtype(out_type), "little_endian": bool(little_endian)}
    if fixed_length is not None:
        length = convert_to_tensor(fixed_length, dtype=dtypes.int32, name="fixed_length")
        return make_op("DecodePaddedRaw", [data, length], attrs, name=name or "DecodePaddedRaw").outputs[0]
    return make_op("DecodeRaw", [data], attrs, name=name or "DecodeRaw").outputs[0]
