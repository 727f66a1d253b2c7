"""Splitting strings into a ``SparseTensor`` of tokens: TF1's ``tf.string_split`` and ``tf.strings.split``.

* ``StringSplit`` (``tf.string_split``): each string of a vector split at any byte of ``delimiter``
  (into single bytes when it is empty), empty tokens dropped unless ``skip_empty=False``.
* ``StringSplitV2`` (``tf.strings.split``): Python's ``str.split`` rules: at each ``sep`` (empty tokens
  kept), or at runs of whitespace when ``sep`` is empty or None, with ``maxsplit``.

Both give ``indices`` ``[n, 2]`` (row, token position), ``values`` and ``dense_shape`` ``[rows, most tokens]``.
TF returns a ``RaggedTensor`` for ``result_type="RaggedTensor"``; ragged tensors do not exist here, so only
the ``SparseTensor`` form (TF1's default) is offered.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     st = sess.run(string_split(["hello world", "a b c"]))
    ...     print(st.indices.tolist(), st.values, st.dense_shape)
    [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]] [b'hello' b'world' b'a' b'b' b'c'] [2 3]
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.strings.common import register, shape_text, string_input, to_torch

__all__ = ["string_split", "strings_split", "split_v2"]


def _check_result_type(result_type: str) -> None:
    if result_type == "RaggedTensor":
        raise ValueError(
            "result_type='RaggedTensor' is not available: dtf_notebook has no RaggedTensor; "
            "use result_type='SparseTensor' (TF1's default)."
        )
    if result_type != "SparseTensor":
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def string_split(
    source: Any,
    sep: Any = None,
    skip_empty: bool = True,
    delimiter: Any = None,
    result_type: str = "SparseTensor",
    name: str | None = None,
) -> SparseTensor:
    """Splits each string of the vector ``source`` at any byte of ``sep`` (default ``" "``): TF1's ``tf.string_split``.

    Args:
        source: A 1-D string tensor.
        sep: The delimiter bytes (each one splits); ``""`` splits into single bytes.
        skip_empty: Drop empty tokens.
        delimiter: Old name of ``sep``.
        result_type: ``"SparseTensor"`` (``"RaggedTensor"`` is not available here).
        name: Name scope (default ``StringSplit``).

    Returns:
        A rank-2 ``SparseTensor`` of tokens.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(string_split(["a,,b"], sep=",", skip_empty=False)).values)
        [b'a' b'' b'b']
    """
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    _check_result_type(result_type)
    delimiter = " " if sep is None and delimiter is None else (sep if sep is not None else delimiter)
    with name_scope(name, "StringSplit", [source]):
        d = string_input(delimiter, "StringSplit", "delimiter")
        x = string_input(source, "StringSplit")
        op = make_op("StringSplit", [x, d], {"skip_empty": bool(skip_empty)}, name="StringSplit")
        return SparseTensor(*op.outputs)


def strings_split(
    input: Any = None,  # noqa: A002 - TF's name
    sep: Any = None,
    maxsplit: int = -1,
    result_type: str = "SparseTensor",
    source: Any = None,
    name: str | None = None,
) -> SparseTensor:
    """Splits each string as Python's ``str.split`` (``tf.strings.split`` of TF1): a ``SparseTensor`` of rank N+1.

    Args:
        input: A string tensor of any rank (a scalar is taken as a vector of one).
        sep: The separator; None or ``""`` splits at runs of whitespace and drops empty tokens.
        maxsplit: Split at most this many times (-1: no limit).
        result_type: ``"SparseTensor"`` (``"RaggedTensor"`` is not available here).
        source: Old name of ``input``.
        name: Name scope (default ``StringSplit``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(strings_split(["1<>2<><>3"], sep="<>")).values)
        [b'1' b'2' b'' b'3']
    """
    if input is not None and source is not None:
        raise ValueError("Cannot specify both 'input' and 'source'")
    _check_result_type(result_type)
    with name_scope(name, "StringSplit", [input if input is not None else source]):
        x = string_input(input if input is not None else source, "StringSplitV2", "input")
        if x.shape.ndims == 0:
            x = array_ops.expand_dims(x, 0)
        rank = 1 if x.shape.ndims is None else x.shape.ndims
        flat = x if rank == 1 else array_ops.reshape(x, [-1])
        s = string_input("" if sep is None else sep, "StringSplitV2", "sep")
        indices, values, shape = make_op(
            "StringSplitV2", [flat, s], {"maxsplit": int(maxsplit)}, name="StringSplitV2"
        ).outputs
        if rank == 1:
            return SparseTensor(indices, values, shape)
        # Rows of the flattened input back to coordinates of the input (what TF's ragged to_sparse gives).
        dims = array_ops.shape(x, out_type=dtypes.int64)
        row, remainder, coords = indices[:, 0], None, []
        remainder = row
        for k in reversed(range(rank)):
            coords.insert(0, math_ops.floormod(remainder, dims[k]))
            remainder = math_ops.floordiv(remainder, dims[k])
        full = array_ops.stack([*coords, indices[:, 1]], axis=1)
        return SparseTensor(full, values, array_ops.concat([dims, shape[1:]], 0))


def _split_infer(op: Any) -> list:
    x, sep = op.inputs
    if x.shape.ndims not in (None, 1):
        raise ValueError(f"Shape must be rank 1 but is rank {x.shape.ndims} for '{op.name}' (op: '{op.type}')")
    if sep.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {sep.shape.ndims} for '{op.name}' (op: '{op.type}')")
    return [
        (dtypes.int64, TensorShape([None, 2])),
        (dtypes.string, TensorShape([None])),
        (dtypes.int64, TensorShape([2])),
    ]


def _tokens_kernel(op: Any, split: Callable[[bytes, bytes], list[bytes]]) -> Callable[..., tuple]:
    def run(values: np.ndarray, sep: np.ndarray) -> tuple:
        if np.ndim(values) != 1:
            raise errors.InvalidArgumentError(
                None, op, f"input must be a vector, got shape: {shape_text(np.shape(values))}"
            )
        if np.ndim(sep) != 0:
            raise errors.InvalidArgumentError(None, op, f"sep must be a scalar, got shape: {shape_text(np.shape(sep))}")
        delimiter = np.asarray(sep, dtype=object).item()
        indices: list[tuple[int, int]] = []
        tokens: list[bytes] = []
        widest = 0
        for row, text in enumerate(values):
            parts = split(text, delimiter)
            indices.extend((row, j) for j in range(len(parts)))
            tokens.extend(parts)
            widest = max(widest, len(parts))
        out_values = np.empty(len(tokens), dtype=object)
        out_values[:] = tokens
        out_indices = np.array(indices, dtype=np.int64).reshape(-1, 2)
        return to_torch(out_indices), out_values, to_torch(np.array([len(values), widest], dtype=np.int64))

    return run


def _split_v1(op: Any, ctx: Any) -> Callable[..., tuple]:
    skip_empty = op.get_attr("skip_empty")

    def split(text: bytes, delimiter: bytes) -> list[bytes]:
        if not delimiter or not text:  # (an empty string has no tokens, even when empty ones are kept)
            return [text[i : i + 1] for i in range(len(text))]
        parts = re.split(b"[" + re.escape(delimiter) + b"]", text)
        return [p for p in parts if p] if skip_empty else parts

    return _tokens_kernel(op, split)


def _split_v2(op: Any, ctx: Any) -> Callable[..., tuple]:
    maxsplit = op.get_attr("maxsplit")
    return _tokens_kernel(op, lambda text, sep: split_v2(text, sep, maxsplit))


_WHITESPACE = b" \t\n\v\f\r"


def split_v2(text: bytes, sep: bytes, maxsplit: int) -> list[bytes]:
    """TF's ``SplitV2``: Python's ``str.split`` except that the rest after ``maxsplit`` splits is always a token
    (possibly empty), and ``maxsplit=0`` keeps the string whole.

    Example:
        >>> split_v2(b"e f", b"", 2), split_v2(b" a  b ", b"", -1), split_v2(b"a,,b", b",", 1)
        ([b'e', b'f', b''], [b'a', b'b'], [b'a', b',b'])
    """
    if maxsplit == 0:
        return [text]
    if sep:
        parts = text.split(sep)
        if 0 < maxsplit < len(parts) - 1:
            parts = parts[:maxsplit] + [sep.join(parts[maxsplit:])]
        return parts
    result: list[bytes] = []
    rest = text.lstrip(_WHITESPACE)
    while rest:
        end = next((i for i, b in enumerate(rest) if b in _WHITESPACE), len(rest))
        result.append(rest[:end])
        rest = rest[end:].lstrip(_WHITESPACE)
        if maxsplit > 0 and len(result) == maxsplit:
            result.append(rest)
            break
    return result


register("StringSplit", _split_infer, _split_v1)
register("StringSplitV2", _split_infer, _split_v2)
