"""How TF's kernels write a tensor's value as text: ``Print`` and ``Assert`` (v1) and ``tf.print`` (v2).

Pure functions of a numpy value, written to give TF's text character for character: floats in the
shortest of ``%.6g``/``%.9g`` (``%.15g``/``%.17g`` for float64) that reads back the same, bools as
``1``/``0``, strings C-escaped (quoted in v2). The v1 form lists the first ``max_entries`` elements
in row-major order and ends with ``...`` when some are left out; the v2 form is numpy-like and shows
the first and last ``max_entries`` entries of every dimension.

Example:
    >>> import numpy as np
    >>> summarize(np.arange(6).reshape(2, 3), 4)
    '[0 1 2][3...]...'
    >>> print(summarize(np.arange(6).reshape(2, 3), 1, v2=True))
    [[0 ... 2]
     [3 ... 5]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def format_element(value: Any, v2: bool = False) -> str:
    """One element as TF writes it (``v2`` quotes strings).

    Example:
        >>> import numpy as np
        >>> format_element(np.float32(1 / 3)), format_element(np.float64(0.1)), format_element(np.bool_(True))
        ('0.333333343', '0.1', '1')
        >>> format_element(b'a\\n', v2=True)
        '"a\\\\n"'
    """
    if isinstance(value, bytes | str):
        text = _c_escape(value.encode() if isinstance(value, str) else value)
        return f'"{text}"' if v2 else text
    if isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    if isinstance(value, np.floating):
        return _format_float(float(value), 6 if value.dtype.itemsize <= 4 else 15, value.dtype.itemsize <= 4)
    if isinstance(value, float):
        return _format_float(value, 15, False)
    return str(int(value))


def _format_float(value: float, digits: int, single: bool) -> str:
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.{digits}g}"
    back = float(np.float32(text)) if single else float(text)
    if back != value:
        text = f"{value:.{digits + (3 if single else 2)}g}"
    return text


_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'", ord("\\"): "\\\\"}


def _c_escape(raw: bytes) -> str:
    # TF's Utf8SafeCEscape: control bytes as octal, quotes and backslash escaped, bytes >= 0x80 kept as they are.
    out = []
    for b in raw:
        if b in _ESCAPES:
            out.append(_ESCAPES[b])
        elif b < 0x20 or b == 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b) if b < 0x80 else bytes([b]).decode("latin-1"))
    text = "".join(out)
    # Bytes >= 0x80 were kept one per character; put valid UTF-8 back together so it reads as text.
    return text.encode("latin-1").decode("utf-8", errors="replace")


def _elements(value: np.ndarray) -> np.ndarray:
    # bfloat16 and float16 are written as the float32 they widen to, as TF does.
    if value.dtype.kind == "f" and value.dtype.itemsize < 4 or value.dtype.name == "bfloat16":
        return value.astype(np.float32)
    return value


def summarize(value: Any, max_entries: int, v2: bool = False) -> str:
    """``value``'s text with at most ``max_entries`` elements (all when negative), as TF's kernels write it.

    Example:
        >>> import numpy as np
        >>> summarize(np.array([1.5, 2.0, 3.0, 4.0], np.float32), 3), summarize(np.array(7), 3)
        ('1.5 2 3...', '7')
        >>> summarize(np.arange(10), 3, v2=True)
        '[0 1 2 ... 7 8 9]'
    """
    arr = _elements(np.asarray(value))
    n = arr.size
    limit = min(n if max_entries < 0 else max_entries, n)
    if arr.dtype == np.bool_ and limit == 0:
        return ""
    flat = arr.reshape(-1)
    if arr.ndim == 0:
        text = " ".join(format_element(flat[i], v2) for i in range(limit))
        return text + ("..." if n > limit else "")
    if v2:
        parts: list[str] = []
        _one_dim_v2(arr, 0, limit, 0, parts)
        return "".join(parts)
    parts = []
    _one_dim_v1(flat, arr.shape, 0, limit, [0], parts)
    return "".join(parts) + ("..." if n > limit else "")


def _one_dim_v1(
    flat: np.ndarray, shape: tuple[int, ...], dim: int, limit: int, index: list[int], out: list[str]
) -> None:
    if index[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if index[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(format_element(flat[index[0]]))
            index[0] += 1
        return
    for _ in range(shape[dim]):
        opened = index[0] < limit
        if opened:
            out.append("[")
        _one_dim_v1(flat, shape, dim + 1, limit, index, out)
        if index[0] < limit or opened:
            out.append("]")


def _spacing(dim: int, ndims: int) -> str:
    if dim == ndims - 1:
        return " "
    return "\n" * (ndims - dim - 1) + " " * (dim + 1)


def _one_dim_v2(arr: np.ndarray, dim: int, ends: int, offset: int, out: list[str]) -> None:
    shape, ndims = arr.shape, arr.ndim
    if dim == ndims:
        out.append(format_element(arr.reshape(-1)[offset], True))
        return
    out.append("[")
    count = shape[dim]
    start_of_end = max(ends, count - ends)
    per_item = int(np.prod(shape[dim + 1 :], dtype=np.int64))
    for i in range(min(ends, count)):
        if i > 0:
            out.append(_spacing(dim, ndims))
        _one_dim_v2(arr, dim + 1, ends, offset + per_item * i, out)
    if count > 2 * ends:
        out.append(_spacing(dim, ndims) + "...")
    for i in range(start_of_end, count):
        out.append(_spacing(dim, ndims))
        _one_dim_v2(arr, dim + 1, ends, offset + per_item * i, out)
    out.append("]")
