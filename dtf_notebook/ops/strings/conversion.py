"""String ops that convert or match: regular expressions (RE2 rules), ``AsString`` and ``StringToNumber``.

* ``StaticRegexReplace``/``RegexReplace`` and ``StaticRegexFullMatch``/``RegexFullMatch`` run Python's ``re``
  on the UTF-8 text with RE2's rewrite syntax (``\\0`` ... ``\\9``, ``\\\\``) and RE2's global replacement
  (no empty match right after the previous match).
* ``AsString`` formats numbers as TF's kernel does (``printf`` with ``width``, ``fill``, ``precision``,
  ``scientific``/``shortest``; booleans as ``true``/``false``).
* ``StringToNumber`` parses as TF's ``safe_strto*`` functions (spaces around, a ``-`` sign for integers,
  ``inf``/``nan``/hex for floats), failing with TF's message.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(regex_replace(["a1b22"], r"(\\d+)", r"<\\1>")), sess.run(as_string(3.5, precision=2)))
    [b'a<1>b<22>'] b'3.50'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.strings.common import as_bytes, map_strings, register, string_input, to_numpy, to_torch

__all__ = ["regex_replace", "regex_full_match", "as_string", "string_to_number"]


# ---- regular expressions ----------------------------------------------------------------------
def _text(s: bytes) -> str:
    return s.decode("utf-8", "surrogateescape")


def _compile(op: Any, pattern: bytes) -> re.Pattern[str]:
    # RE2's \z (end of text) is Python's \Z.
    source = re.sub(r"(?<!\\)((?:\\\\)*)\\z", r"\1\\Z", _text(pattern))
    try:
        return re.compile(source)
    except re.error as e:
        raise errors.InvalidArgumentError(None, op, f"Invalid pattern: {_text(pattern)}, error: {e}") from None


def _rewriter(op: Any, rewrite: bytes) -> Callable[[re.Match[str]], str]:
    """RE2's rewrite string: ``\\0``-``\\9`` insert groups, ``\\\\`` a backslash; anything else after ``\\`` fails."""
    parts: list[str | int] = []
    text, i = _text(rewrite), 0
    while i < len(text):
        c = text[i]
        if c != "\\":
            parts.append(c)
        elif i + 1 < len(text) and text[i + 1].isdigit():
            parts.append(int(text[i + 1]))
            i += 1
        elif i + 1 < len(text) and text[i + 1] == "\\":
            parts.append("\\")
            i += 1
        else:
            raise errors.InvalidArgumentError(None, op, f"Invalid rewrite pattern: {text}")
        i += 1

    def expand(m: re.Match[str]) -> str:
        return "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts)

    return expand


def _replace(pattern: re.Pattern[str], expand: Callable[[re.Match[str]], str], s: str, replace_global: bool) -> str:
    """RE2's ``GlobalReplace`` (or ``Replace`` for the first match only)."""
    out: list[str] = []
    pos, last_end = 0, -1
    while pos <= len(s):
        m = pattern.search(s, pos)
        if m is None:
            break
        out.append(s[pos : m.start()])
        if m.start() == m.end() and m.start() == last_end:
            # An empty match right where the previous match ended is skipped, as RE2 does.
            if m.start() < len(s):
                out.append(s[m.start()])
            pos = m.start() + 1
            continue
        out.append(expand(m))
        pos = last_end = m.end()
        if m.start() == m.end():
            if pos < len(s):
                out.append(s[pos])
            pos += 1
        if not replace_global:
            break
    out.append(s[pos:])
    return "".join(out)


def regex_replace(
    input: Any,  # noqa: A002 - TF's name
    pattern: Any,
    rewrite: Any,
    replace_global: bool = True,
    name: str | None = None,
) -> Tensor:
    """Replaces the matches of the regular expression ``pattern`` in each string by ``rewrite``.

    Python strings for ``pattern`` and ``rewrite`` build a ``StaticRegexReplace`` op (compiled once),
    tensors a ``RegexReplace``. ``rewrite`` refers to groups as ``\\1`` (``\\0``: the whole match).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(regex_replace(["aaa"], "a", "b", replace_global=False)))
        [b'baa']
    """
    x = string_input(input, "RegexReplace")
    if isinstance(pattern, str | bytes) and isinstance(rewrite, str | bytes):
        attrs = {"pattern": as_bytes(pattern), "rewrite": as_bytes(rewrite), "replace_global": bool(replace_global)}
        return make_op("StaticRegexReplace", [x], attrs, name=name or "StaticRegexReplace").outputs[0]
    p = string_input(pattern, "RegexReplace", "pattern")
    r = string_input(rewrite, "RegexReplace", "rewrite")
    attrs = {"replace_global": bool(replace_global)}
    return make_op("RegexReplace", [x, p, r], attrs, name=name or "RegexReplace").outputs[0]


def regex_full_match(input: Any, pattern: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Whether each whole string matches the regular expression ``pattern`` (a bool tensor).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(regex_full_match(["ab12", "ab"], r"[a-z]+\\d+")))
        [ True False]
    """
    x = string_input(input, "RegexFullMatch")
    if isinstance(pattern, str | bytes):
        attrs = {"pattern": as_bytes(pattern)}
        return make_op("StaticRegexFullMatch", [x], attrs, name=name or "StaticRegexFullMatch").outputs[0]
    p = string_input(pattern, "RegexFullMatch", "pattern")
    return make_op("RegexFullMatch", [x, p], name=name or "RegexFullMatch").outputs[0]


def _scalar_bytes(op: Any, value: np.ndarray, arg: str) -> bytes:
    if np.ndim(value) != 0:
        raise errors.InvalidArgumentError(None, op, f"{arg} must be scalar, but received {list(np.shape(value))}")
    return np.asarray(value, dtype=object).item()


def _static_replace_kernel(op: Any, ctx: Any) -> Callable[[np.ndarray], np.ndarray]:
    pattern = _compile(op, op.get_attr("pattern"))
    expand = _rewriter(op, op.get_attr("rewrite"))
    replace_global = op.get_attr("replace_global")
    return lambda values: map_strings(
        values, lambda s: _replace(pattern, expand, _text(s), replace_global).encode("utf-8", "surrogateescape")
    )


def _replace_kernel(op: Any, ctx: Any) -> Callable[..., np.ndarray]:
    replace_global = op.get_attr("replace_global")

    def run(values: np.ndarray, pattern: np.ndarray, rewrite: np.ndarray) -> np.ndarray:
        compiled = _compile(op, _scalar_bytes(op, pattern, "Pattern"))
        expand = _rewriter(op, _scalar_bytes(op, rewrite, "Rewrite"))
        return map_strings(
            values, lambda s: _replace(compiled, expand, _text(s), replace_global).encode("utf-8", "surrogateescape")
        )

    return run


def _static_match_kernel(op: Any, ctx: Any) -> Callable[[np.ndarray], Any]:
    pattern = _compile(op, op.get_attr("pattern"))
    return lambda values: to_torch(map_strings(values, lambda s: pattern.fullmatch(_text(s)) is not None, np.bool_))


def _match_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    def run(values: np.ndarray, pattern: np.ndarray) -> Any:
        compiled = _compile(op, _scalar_bytes(op, pattern, "Pattern"))
        return to_torch(map_strings(values, lambda s: compiled.fullmatch(_text(s)) is not None, np.bool_))

    return run


def _shape_of_input(dtype: dtypes.DType) -> Callable[[Any], list]:
    return lambda op: [(dtype, op.inputs[0].shape)]


register("StaticRegexReplace", _shape_of_input(dtypes.string), _static_replace_kernel)
register("RegexReplace", _shape_of_input(dtypes.string), _replace_kernel)
register("StaticRegexFullMatch", _shape_of_input(dtypes.bool), _static_match_kernel)
register("RegexFullMatch", _shape_of_input(dtypes.bool), _match_kernel)


# ---- AsString ---------------------------------------------------------------------------------
_INTEGERS = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)
_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)


def _format_for(dtype: dtypes.DType, precision: int, scientific: bool, shortest: bool, width: int, fill: str) -> str:
    """TF's printf format of ``AsString``; raises ValueError with the kernel's message for a bad combination."""
    if scientific and shortest:
        raise ValueError("Cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise ValueError("Fill string must be one or fewer characters")
    if fill and fill not in " +-0#":
        raise ValueError(f'Fill argument not supported: "{fill}"')
    is_float = dtype in _FLOATS
    if not is_float and (scientific or shortest):
        raise ValueError(f"scientific and shortest format not supported for datatype {dtype.name}")
    if not is_float and precision > -1:
        raise ValueError(f"precision not supported for datatype {dtype.name}")
    fmt = "%" + fill + (str(width) if width > -1 else "") + (f".{precision}" if precision > -1 else "")
    if dtype is dtypes.bool:
        return ""
    if is_float:
        return fmt + ("g" if shortest else "e" if scientific else "f")
    return fmt + "d"


def as_string(
    input: Any,  # noqa: A002 - TF's name
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: str | None = None,
) -> Tensor:
    """Each number (or boolean) as a string, formatted as C's ``printf`` would with TF's options.

    Args:
        input: A numeric or bool tensor.
        precision: Digits after the point of floats (-1: printf's default of 6).
        scientific: Exponent notation for floats (``%e``).
        shortest: The shorter of ``%e`` and ``%f`` (``%g``).
        width: Minimum width, padded with ``fill`` (-1: none).
        fill: One of ``' '``, ``'+'``, ``'-'``, ``'0'``, ``'#'``: printf's flag.
        name: Name of the op.

    An invalid option or combination fails when the op runs (``InvalidArgumentError``, TF's messages).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(as_string([7, 42], width=4, fill="0")), sess.run(as_string(True)))
        [b'0007' b'0042'] b'true'
    """
    x = convert_to_tensor(input, name="input")
    if x.dtype.base_dtype not in _INTEGERS + _FLOATS + (dtypes.bool,):
        raise TypeError(f"Value passed to parameter 'input' has DataType {x.dtype.name} not supported by AsString")
    attrs = {
        "T": x.dtype.base_dtype,
        "precision": int(precision),
        "scientific": bool(scientific),
        "shortest": bool(shortest),
        "width": int(width),
        "fill": fill,
    }
    return make_op("AsString", [x], attrs, name=name or "AsString").outputs[0]


def _as_string_kernel(op: Any, ctx: Any) -> Callable[[Any], np.ndarray]:
    dtype = op.get_attr("T")
    options = [op.get_attr(a) for a in ("precision", "scientific", "shortest", "width", "fill")]
    try:
        fmt = _format_for(dtype, *options)
    except ValueError as e:
        raise errors.InvalidArgumentError(None, op, str(e)) from None

    def one(v: Any) -> bytes:
        if dtype is dtypes.bool:
            return b"true" if v else b"false"
        return (fmt % (float(v) if dtype in _FLOATS else int(v))).encode()

    def run(x: Any) -> np.ndarray:
        values = to_numpy(x)
        out = np.empty(values.shape, dtype=object)
        for i, v in enumerate(values.reshape(-1)):
            out.reshape(-1)[i] = one(v)
        return out

    return run


register("AsString", _shape_of_input(dtypes.string), _as_string_kernel)


# ---- StringToNumber ---------------------------------------------------------------------------
_INT_RE = re.compile(rb"\s*([+-]?\d+)\s*")
_FLOAT_RE = re.compile(rb"\s*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|nan|0x[0-9a-f]+))\s*", re.IGNORECASE)
_LIMITS = {dtypes.int32: (-(2**31), 2**31 - 1), dtypes.int64: (-(2**63), 2**63 - 1)}


def _parser(op: Any, out_type: dtypes.DType) -> Callable[[bytes], Any]:
    def fail(s: bytes) -> errors.InvalidArgumentError:
        return errors.InvalidArgumentError(
            None, op, f"StringToNumberOp could not correctly convert string: {s.decode('utf-8', 'replace')}"
        )

    if out_type in _LIMITS:
        low, high = _LIMITS[out_type]

        def parse_int(s: bytes) -> int:
            m = _INT_RE.fullmatch(s)
            if m is None or not low <= int(m.group(1)) <= high:
                raise fail(s)
            return int(m.group(1))

        return parse_int

    def parse_float(s: bytes) -> float:
        # TF's converter rejects strings of 32 bytes or more outright.
        m = _FLOAT_RE.fullmatch(s)
        if m is None or len(s) >= 32:
            raise fail(s)
        text = m.group(1).decode()
        body = text.lstrip("+-")
        if body[:2].lower() == "0x":
            value = float(int(body, 16))
            return -value if text.startswith("-") else value
        return float(text)

    return parse_float


def string_to_number(
    string_tensor: Any = None,
    out_type: Any = dtypes.float32,
    name: str | None = None,
    input: Any = None,  # noqa: A002 - TF's name
) -> Tensor:
    """Parses each string as a number of ``out_type`` (float32, float64, int32 or int64).

    A string that is not a number of that type fails when run with TF's ``InvalidArgumentError``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_to_number([" 1.5", "-2e3", "inf"])), sess.run(string_to_number(["-7"], tf.int64)))
        [ 1.5e+00 -2.0e+03      inf] [-7]
    """
    x = string_input(string_tensor if input is None else input, "StringToNumber", "string_tensor")
    out_type = dtypes.as_dtype(out_type)
    if out_type not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(
            f"Value passed to parameter 'out_type' has DataType {out_type.name} not in list of allowed values: "
            "float32, float64, int32, int64"
        )
    return make_op("StringToNumber", [x], {"out_type": out_type}, name=name or "StringToNumber").outputs[0]


def _to_number_kernel(op: Any, ctx: Any) -> Callable[[np.ndarray], Any]:
    out_type = op.get_attr("out_type")
    parse = _parser(op, out_type)
    return lambda values: to_torch(map_strings(values, parse, out_type.np_dtype))


register("StringToNumber", lambda op: [(op.get_attr("out_type"), op.inputs[0].shape)], _to_number_kernel)
