"""String ops applied to each element: length, substrings, case, whitespace, base64 and hash buckets.

``StringLength``, ``Substr``, ``StringStrip``, ``StringLower``, ``StringUpper``, ``EncodeBase64``,
``DecodeBase64`` and the three ``StringToHashBucket*`` ops, with TF's semantics (``unit="UTF8_CHAR"``
counts characters; the fast bucket hashes with farmhash ``Fingerprint64``, the strong one with keyed
SipHash-2-4, the legacy one with TF's ``Hash64``, all as TF does, so the buckets are TF's).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(string_length(["héllo", ""], unit="UTF8_CHAR")))
    [5 0]
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import broadcast_shapes
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.ops.strings.common import map_strings, register, shape_text, string_input, to_numpy, to_torch
from dtf_notebook.ops.strings.hashes import fingerprint64, siphash24, tf_hash64

__all__ = [
    "string_length",
    "substr",
    "string_strip",
    "string_lower",
    "string_upper",
    "encode_base64",
    "decode_base64",
    "string_to_hash_bucket_fast",
    "string_to_hash_bucket_strong",
    "string_to_hash_bucket",
]

_UNITS = ("BYTE", "UTF8_CHAR")


def _unit(unit: str) -> str:
    if unit not in _UNITS:
        raise ValueError(f"Attr 'unit' of '{unit}' is not in the list of allowed values: 'BYTE', 'UTF8_CHAR'")
    return unit


def _same_shape(dtype: dtypes.DType) -> Callable[[Any], list]:
    return lambda op: [(dtype, op.inputs[0].shape)]


def _unary(op_type: str, fn: Callable[[Any], Callable[[bytes], Any]], out: dtypes.DType) -> None:
    """Registers ``op_type``: ``fn(op)`` gives the per-string function; the output has the input's shape."""
    np_out = object if out is dtypes.string else out.np_dtype

    def kernel(op: Any, ctx: Any) -> Callable[[np.ndarray], Any]:
        per_string = fn(op)

        def run(values: np.ndarray) -> Any:
            result = map_strings(values, per_string, np_out)
            return result if out is dtypes.string else to_torch(result)

        return run

    register(op_type, _same_shape(out), kernel)


# ---- StringLength -----------------------------------------------------------------------------
def _utf8_length(s: bytes) -> int:
    # Every byte that is not a continuation byte (0b10xxxxxx) starts a character, as TF counts.
    return sum(1 for b in s if b & 0xC0 != 0x80)


def string_length(input: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:  # noqa: A002 - TF's name
    """The length of each string, in bytes (``unit="BYTE"``) or UTF-8 characters (``"UTF8_CHAR"``), as int32.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_length([["ab", "é"]])))
        [[2 2]]
    """
    x = string_input(input, "StringLength")
    return make_op("StringLength", [x], {"unit": _unit(unit)}, name=name or "StringLength").outputs[0]


_unary("StringLength", lambda op: len if op.get_attr("unit") == "BYTE" else _utf8_length, dtypes.int32)


# ---- Substr -----------------------------------------------------------------------------------
def substr(input: Any, pos: Any, len: Any, name: str | None = None, unit: str = "BYTE") -> Tensor:  # noqa: A002
    """The substring of ``len`` bytes (or UTF-8 characters) of each string from ``pos`` (negative: from the end).

    ``pos`` and ``len`` (int32 or int64) broadcast against ``input``; a ``pos`` past the end is an
    ``InvalidArgumentError`` when run, a ``len`` past the end stops at the end.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(substr(["hello", "world"], [1, -3], [2, 2])))
        [b'el' b'rl']
    """
    x = string_input(input, "Substr")
    p = convert_to_tensor(pos, name="pos")
    check_dtype(p, (dtypes.int32, dtypes.int64), "Substr", "pos")
    n = convert_to_tensor(len, dtype=p.dtype, name="len")
    attrs = {"T": p.dtype, "unit": _unit(unit)}
    return make_op("Substr", [x, p, n], attrs, name=name or "Substr").outputs[0]


def _substr_infer(op: Any) -> list:
    x, p, n = op.inputs
    if p.shape.ndims is not None and n.shape.ndims is not None and not p.shape.is_compatible_with(n.shape):
        raise ValueError(
            f"pos and len should have the same shape, got: {shape_text(p.shape)} vs. {shape_text(n.shape)} "
            f"for '{op.name}' (op: 'Substr')"
        )
    return [(dtypes.string, broadcast_shapes(x.shape, p.shape))]


def _char_offsets(s: bytes) -> list[int]:
    """Byte offsets of the UTF-8 characters of ``s``, and its length last."""
    return [i for i, b in enumerate(s) if b & 0xC0 != 0x80] + [len(s)]


def _substr_kernel(op: Any, ctx: Any) -> Callable[..., np.ndarray]:
    utf8 = op.get_attr("unit") == "UTF8_CHAR"

    def run(values: np.ndarray, pos: Any, length: Any) -> np.ndarray:
        pos_np, len_np = to_numpy(pos), to_numpy(length)
        if pos_np.shape != len_np.shape:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"pos and len should have the same shape, got: {shape_text(pos_np.shape)} vs. "
                f"{shape_text(len_np.shape)}",
            )
        try:
            s, p, n = np.broadcast_arrays(np.asarray(values, dtype=object), pos_np, len_np)
        except ValueError:
            raise errors.InvalidArgumentError(
                None, op, f"Incompatible shapes: {shape_text(np.shape(values))} vs. {shape_text(pos_np.shape)}"
            ) from None
        out = np.empty(s.shape, dtype=object)
        for i, (text, start, count) in enumerate(zip(s.reshape(-1), p.reshape(-1), n.reshape(-1))):
            offsets = _char_offsets(text) if utf8 else None
            size = len(offsets) - 1 if utf8 else len(text)
            start, count = int(start), int(count)
            if start < 0:
                start += size
            if start < 0 or start > size:
                raise errors.InvalidArgumentError(
                    None,
                    op,
                    f"pos {int(p.reshape(-1)[i])} out of range for string b'{text.decode('latin-1')}' at index {i}",
                )
            end = size if count < 0 else min(start + count, size)
            if utf8:
                out.reshape(-1)[i] = text[offsets[start] : offsets[end]]
            else:
                out.reshape(-1)[i] = text[start:end]
        return out

    return run


register("Substr", _substr_infer, _substr_kernel)


# ---- StringStrip / StringLower / StringUpper --------------------------------------------------
def string_strip(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """Each string without its leading and trailing ASCII whitespace.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_strip([" a b\\t\\n"])))
        [b'a b']
    """
    x = string_input(input, "StringStrip")
    return make_op("StringStrip", [x], name=name or "StringStrip").outputs[0]


_unary("StringStrip", lambda op: bytes.strip, dtypes.string)


def _case(op_type: str, ascii_fn: Callable[[bytes], bytes], unicode_fn: Callable[[str], str]) -> None:
    def per_string(op: Any) -> Callable[[bytes], bytes]:
        encoding = op.get_attr("encoding")
        if encoding == "":
            return ascii_fn
        return lambda s: unicode_fn(s.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    _unary(op_type, per_string, dtypes.string)


def _case_op(op_type: str, input: Any, encoding: str, name: str | None) -> Tensor:  # noqa: A002
    if encoding not in ("", "utf-8"):
        raise ValueError(f"encoding must be '' or 'utf-8', got {encoding!r}")
    x = string_input(input, op_type)
    return make_op(op_type, [x], {"encoding": encoding}, name=name or op_type).outputs[0]


def string_lower(input: Any, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    """Each string in lower case: ASCII letters only, or all of Unicode with ``encoding="utf-8"``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_lower(["ÀB"])), sess.run(string_lower(["ÀB"], encoding="utf-8"))[0].decode())
        [b'\\xc3\\x80b'] àb
    """
    return _case_op("StringLower", input, encoding, name)


def string_upper(input: Any, encoding: str = "", name: str | None = None) -> Tensor:  # noqa: A002
    """Each string in upper case: ASCII letters only, or all of Unicode with ``encoding="utf-8"``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_upper(["ab1"])))
        [b'AB1']
    """
    return _case_op("StringUpper", input, encoding, name)


_case("StringLower", bytes.lower, str.lower)
_case("StringUpper", bytes.upper, str.upper)


# ---- EncodeBase64 / DecodeBase64 --------------------------------------------------------------
def encode_base64(input: Any, pad: bool = False, name: str | None = None) -> Tensor:  # noqa: A002
    """Each string in web-safe base64 (``-`` and ``_``), padded with ``=`` only when ``pad``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(encode_base64(["hi?>"])), sess.run(encode_base64(["hi?>"], pad=True)))
        [b'aGk_Pg'] [b'aGk_Pg==']
    """
    x = string_input(input, "EncodeBase64")
    return make_op("EncodeBase64", [x], {"pad": bool(pad)}, name=name or "EncodeBase64").outputs[0]


def decode_base64(input: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Each web-safe base64 string decoded (padding optional).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(decode_base64(["aGk_Pg", "aGk_Pg=="])))
        [b'hi?>' b'hi?>']
    """
    x = string_input(input, "DecodeBase64")
    return make_op("DecodeBase64", [x], name=name or "DecodeBase64").outputs[0]


def _encode(op: Any) -> Callable[[bytes], bytes]:
    pad = op.get_attr("pad")
    return lambda s: base64.urlsafe_b64encode(s) if pad else base64.urlsafe_b64encode(s).rstrip(b"=")


def _decode(op: Any) -> Callable[[bytes], bytes]:
    def decode(s: bytes) -> bytes:
        body = s.rstrip(b"=")
        if len(body) % 4 == 1 or not all(c in _WEB_SAFE for c in body):
            raise errors.InvalidArgumentError(None, op, "Invalid character found in base64.")
        try:
            return base64.urlsafe_b64decode(body + b"=" * (-len(body) % 4))
        except binascii.Error:
            raise errors.InvalidArgumentError(None, op, "Invalid character found in base64.") from None

    return decode


_WEB_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_unary("EncodeBase64", _encode, dtypes.string)
_unary("DecodeBase64", _decode, dtypes.string)


# ---- StringToHashBucketFast / Strong / legacy -------------------------------------------------
def _buckets(num_buckets: Any) -> int:
    if num_buckets is None or int(num_buckets) < 1:
        raise ValueError(f"num_buckets must be at least 1, got {num_buckets}")
    return int(num_buckets)


def string_to_hash_bucket_fast(input: Any, num_buckets: int, name: str | None = None) -> Tensor:  # noqa: A002
    """``Fingerprint64(s) % num_buckets`` for each string (int64): TF's buckets, stable across runs and machines.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_to_hash_bucket_fast(["hello", "world"], 10)))
        [6 8]
    """
    x = string_input(input, "StringToHashBucketFast")
    attrs = {"num_buckets": _buckets(num_buckets)}
    return make_op("StringToHashBucketFast", [x], attrs, name=name or "StringToHashBucketFast").outputs[0]


def string_to_hash_bucket_strong(
    input: Any,  # noqa: A002 - TF's name
    num_buckets: int,
    key: Any,
    name: str | None = None,
) -> Tensor:
    """``SipHash-2-4(key, s) % num_buckets`` for each string (int64); ``key`` is a list of two integers.

    Raises:
        ValueError: ``key`` does not hold two integers.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_to_hash_bucket_strong(["hello"], 10, [1, 2])))
        [2]
    """
    key = [int(k) for k in key]
    if len(key) != 2:
        raise ValueError(f"Key must have 2 elements, got {len(key)}")
    x = string_input(input, "StringToHashBucketStrong")
    attrs = {"num_buckets": _buckets(num_buckets), "key": key}
    return make_op("StringToHashBucketStrong", [x], attrs, name=name or "StringToHashBucketStrong").outputs[0]


def string_to_hash_bucket(
    string_tensor: Any = None,
    num_buckets: int | None = None,
    name: str | None = None,
    input: Any = None,  # noqa: A002
) -> Tensor:
    """TF1's legacy bucketing (``Hash64(s) % num_buckets``, int64); prefer :func:`string_to_hash_bucket_fast`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_to_hash_bucket(["hello"], 10)))
        [8]
    """
    x = string_input(string_tensor if input is None else input, "StringToHashBucket", "string_tensor")
    attrs = {"num_buckets": _buckets(num_buckets)}
    return make_op("StringToHashBucket", [x], attrs, name=name or "StringToHashBucket").outputs[0]


def _bucketing(hash_of: Callable[[Any], Callable[[bytes], int]]) -> Callable[[Any], Callable[[bytes], int]]:
    def per_string(op: Any) -> Callable[[bytes], int]:
        h, n = hash_of(op), op.get_attr("num_buckets")
        return lambda s: h(s) % n

    return per_string


def _strong_hash(op: Any) -> Callable[[bytes], int]:
    k0, k1 = (k & ((1 << 64) - 1) for k in op.get_attr("key"))
    return lambda s: siphash24((k0, k1), s)


_unary("StringToHashBucketFast", _bucketing(lambda op: fingerprint64), dtypes.int64)
_unary("StringToHashBucketStrong", _bucketing(_strong_hash), dtypes.int64)
_unary("StringToHashBucket", _bucketing(lambda op: tf_hash64), dtypes.int64)
