"""Diagonals and bands of (batches of) matrices: ``MatrixDiagV3``, ``MatrixDiagPartV3``, ``MatrixSetDiagV3`` (with
TF's ``k`` bands and ``align``), ``MatrixBandPart``, ``Diag``/``DiagPart`` (tensors of any rank), and ``eye``.

A band ``k = (lo, hi)`` of an ``M x N`` matrix is packed as ``hi - lo + 1`` rows (the highest diagonal first) of
``max_diag_len`` entries; ``align`` says, for superdiagonals and for subdiagonals, whether a shorter diagonal is
packed to the left or to the right of its row. One helper computes, for ``(M, N, lo, hi, align)``, where every
band entry sits in the matrix and in the packed tensor; the three kernels are single gathers/scatters on those.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(matrix_diag_part([[1, 2, 3], [4, 5, 6]], k=(0, 1))))
    [[2 6]
     [1 5]]
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import dense, op_scope
from dtf_notebook.ops.array.diagnostics import fmt_shape, invalid
from dtf_notebook.ops.array.fill import ones, zeros, zeros_like
from dtf_notebook.ops.array.static_values import const_ints
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["matrix_diag", "matrix_diag_part", "matrix_set_diag", "matrix_band_part", "diag", "diag_part", "eye"]

_ALIGNMENTS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


# ---- the band's geometry ------------------------------------------------------------------------------------------
def _band(k: list[int]) -> tuple[int, int]:
    lo, hi = (k[0], k[0]) if len(k) == 1 else (k[0], k[1])
    return lo, hi


def _max_diag_len(m: int, n: int, lo: int, hi: int) -> int:
    return min(m + min(hi, 0), n - max(lo, 0))


@functools.lru_cache(maxsize=256)
def _positions(m: int, n: int, lo: int, hi: int, align: str) -> tuple[np.ndarray, ...]:
    """``(rows, cols, diag_rows, diag_cols)``: matrix and packed positions of every entry of the band."""
    length = _max_diag_len(m, n, lo, hi)
    super_right, sub_right = align.split("_")[0] == "RIGHT", align.split("_")[1] == "RIGHT"
    out: list[list[int]] = [[], [], [], []]
    for d in range(hi, lo - 1, -1):
        diag_len = min(m + min(0, d), n - max(0, d))
        if diag_len <= 0:
            continue
        right = super_right if d >= 0 else sub_right
        offset = length - diag_len if right else 0
        j = np.arange(diag_len)
        i = j + max(0, -d)
        out[0].extend(i)
        out[1].extend(i + d)
        out[2].extend([hi - d] * diag_len)
        out[3].extend(j + offset)
    return tuple(np.asarray(v, dtype=np.int64) for v in out)


def _read_band(op: Operation, k: torch.Tensor) -> tuple[int, int]:
    values = [int(v) for v in k.reshape(-1).tolist()]
    if len(values) not in (1, 2):
        raise invalid(op, f"diag_index must be a scalar or vector with at most 2 elements, got {len(values)}")
    lo, hi = _band(values)
    if lo > hi:
        raise invalid(op, f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")
    return lo, hi


def _static_band(t: Tensor) -> tuple[int, int] | None:
    values = const_ints(t)
    return _band(values) if values is not None and len(values) in (1, 2) else None


# ---- MatrixDiagPartV3 ---------------------------------------------------------------------------------------------
def _diag_part_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, k, _ = op.inputs
    band = _static_band(k)
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {x.shape.ndims} for MatrixDiagPartV3 '{op.name}'")
    batch, (m, n) = x.shape.as_list()[:-2], x.shape.as_list()[-2:]
    if band is None:
        return [(x.dtype, unknown_shape())]
    lo, hi = band
    length = _max_diag_len(m, n, lo, hi) if m is not None and n is not None else None
    return [(x.dtype, TensorShape(batch + ([] if lo == hi else [hi - lo + 1]) + [length]))]


def _diag_part_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    align = op.get_attr("align")

    def run(x: torch.Tensor, k: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        lo, hi = _read_band(op, k)
        m, n = x.shape[-2:]
        for what, d in (("lower", lo), ("upper", hi)):
            if not (-m < d < n or d == 0):
                raise invalid(op, f"{what}_diag_index is out of bound: {d}. It must be between {-m} and {n}")
        rows, cols, drows, dcols = (torch.from_numpy(a).to(x.device) for a in _positions(m, n, lo, hi, align))
        out = torch.full(x.shape[:-2] + (hi - lo + 1, _max_diag_len(m, n, lo, hi)), padding.item(), dtype=x.dtype)
        out = out.to(x.device)
        out[..., drows, dcols] = x[..., rows, cols]
        return out.squeeze(-2) if lo == hi else out

    return run


def _diag_part_grad(op: Operation, grad: Any) -> list[Any]:
    x, k, _ = op.inputs
    grad = dense(grad)
    align = op.get_attr("align")
    matrix = x.shape[-2:] if x.shape.ndims is not None else unknown_shape()
    if matrix.is_fully_defined():
        m, n = matrix.as_list()
        return [matrix_diag(grad, k=k, num_rows=m, num_cols=n, align=align), None, None]
    return [matrix_set_diag(zeros_like(x), grad, k=k, align=align), None, None]


op_registry.register_op("MatrixDiagPartV3", infer=_diag_part_infer, kernel=_diag_part_kernel, grad=_diag_part_grad)


# ---- MatrixDiagV3 -------------------------------------------------------------------------------------------------
def _diag_sizes(
    length: int, lo: int, hi: int, rows: int, cols: int, error: Callable[[str], Exception]
) -> tuple[int, int]:
    """The matrix size: TF's defaults where ``num_rows`` or ``num_cols`` is -1, and TF's consistency rule (the
    diagonals must reach the matrix's last row or last column)."""
    min_rows, min_cols = length - min(hi, 0), length + max(lo, 0)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows < min_rows or cols < min_cols or (rows != min_rows and cols != min_cols):
        raise error(
            "num_rows and num_cols are not consistent with lower_diag_index, upper_diag_index, and the length of "
            f"the given diagonals: num_rows = {rows} (at least {min_rows}), num_cols = {cols} (at least {min_cols}), "
            "and one of them must be its least value"
        )
    return rows, cols


def _diag_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    diagonal, k, num_rows, num_cols, _ = op.inputs
    band = _static_band(k)
    rows, cols = const_ints(num_rows), const_ints(num_cols)
    if diagonal.shape.ndims is None or band is None:
        return [(diagonal.dtype, unknown_shape())]
    lo, hi = band
    dims = diagonal.shape.as_list()
    batch = dims[:-1] if lo == hi else dims[:-2]
    length = dims[-1]
    if length is None or rows is None or cols is None:
        return [(diagonal.dtype, TensorShape(batch + [None, None]))]
    r, c = _diag_sizes(length, lo, hi, rows[0], cols[0], ValueError)
    return [(diagonal.dtype, TensorShape(batch + [r, c]))]


def _diag_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    align = op.get_attr("align")

    def run(diagonal: torch.Tensor, k: Any, num_rows: Any, num_cols: Any, padding: torch.Tensor) -> torch.Tensor:
        lo, hi = _read_band(op, k)
        packed = diagonal.unsqueeze(-2) if lo == hi else diagonal
        length = packed.shape[-1]
        m, n = _diag_sizes(length, lo, hi, int(num_rows), int(num_cols), lambda msg: invalid(op, msg))
        if _max_diag_len(m, n, lo, hi) != length:
            raise invalid(
                op,
                f"The number of diagonals provided in the input does not match the lower_diag_index and "
                f"upper_diag_index range, or the diagonal length {length} does not fit a {m}x{n} matrix",
            )
        rows, cols, drows, dcols = (torch.from_numpy(a).to(diagonal.device) for a in _positions(m, n, lo, hi, align))
        out = torch.full(packed.shape[:-2] + (m, n), padding.item(), dtype=diagonal.dtype, device=diagonal.device)
        out[..., rows, cols] = packed[..., drows, dcols]
        return out

    return run


def _diag_grad(op: Operation, grad: Any) -> list[Any]:
    return [matrix_diag_part(dense(grad), k=op.inputs[1], align=op.get_attr("align")), None, None, None, None]


op_registry.register_op("MatrixDiagV3", infer=_diag_infer, kernel=_diag_kernel, grad=_diag_grad)


# ---- MatrixSetDiagV3 ----------------------------------------------------------------------------------------------
def _set_diag_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    align = op.get_attr("align")

    def run(x: torch.Tensor, diagonal: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        lo, hi = _read_band(op, k)
        m, n = x.shape[-2:]
        packed = diagonal.unsqueeze(-2) if lo == hi else diagonal
        expected = tuple(x.shape[:-2]) + (hi - lo + 1, _max_diag_len(m, n, lo, hi))
        if tuple(packed.shape) != expected:
            raise invalid(op, f"diagonal must have shape {list(expected)}, got {list(diagonal.shape)}")
        rows, cols, drows, dcols = (torch.from_numpy(a).to(x.device) for a in _positions(m, n, lo, hi, align))
        out = x.clone()  # never write into an input
        out[..., rows, cols] = packed[..., drows, dcols]
        return out

    return run


def _set_diag_grad(op: Operation, grad: Any) -> list[Any]:
    _, diagonal, k = op.inputs
    grad = dense(grad)
    align = op.get_attr("align")
    grad_input = matrix_set_diag(grad, zeros_like(diagonal), k=k, align=align)
    return [grad_input, matrix_diag_part(grad, k=k, align=align), None]


op_registry.register_op(
    "MatrixSetDiagV3",
    infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
    kernel=_set_diag_kernel,
    grad=_set_diag_grad,
)


# ---- builders -----------------------------------------------------------------------------------------------------
def _check_align(align: str) -> str:
    if align not in _ALIGNMENTS:
        raise ValueError(f"align must be one of {', '.join(_ALIGNMENTS)}, got {align!r}")
    return align


def _k_tensor(k: Any) -> Tensor:
    return convert_to_tensor(k, dtype=None if isinstance(k, Tensor) else dtypes.int32, name="k")


def matrix_diag(
    diagonal: Any,
    name: str = "diag",
    k: Any = 0,
    num_rows: Any = -1,
    num_cols: Any = -1,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """A batch of matrices holding ``diagonal`` on diagonal ``k`` (or the band ``k = (lo, hi)``), ``padding_value``
    elsewhere.

    Raises:
        InvalidArgumentError: (at run time) the diagonals do not fit the band or the matrix size.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_diag([1, 2], k=1)))
        [[0 1 0]
         [0 0 2]
         [0 0 0]]
    """
    with op_scope(name, "MatrixDiagV3", [diagonal]) as scope:
        d = convert_to_tensor(diagonal, name="diagonal")
        inputs = [
            d,
            _k_tensor(k),
            convert_to_tensor(num_rows, dtype=dtypes.int32, name="num_rows"),
            convert_to_tensor(num_cols, dtype=dtypes.int32, name="num_cols"),
            convert_to_tensor(
                bool(padding_value) if d.dtype.is_bool else padding_value, dtype=d.dtype, name="padding_value"
            ),
        ]
        return make_op("MatrixDiagV3", inputs, {"align": _check_align(align)}, name=scope).outputs[0]


def matrix_diag_part(
    input: Any,  # noqa: A002 - TF's name
    name: str = "diag_part",
    k: Any = 0,
    padding_value: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """Diagonal ``k`` (or the band ``k = (lo, hi)``, packed, shorter diagonals padded) of a batch of matrices.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_diag_part([[1, 2], [3, 4], [5, 6]])))
        [1 4]
    """
    with op_scope(name, "MatrixDiagPartV3", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        padding = convert_to_tensor(bool(padding_value) if x.dtype.is_bool else padding_value, dtype=x.dtype)
        inputs = [x, _k_tensor(k), padding]
        return make_op("MatrixDiagPartV3", inputs, {"align": _check_align(align)}, name=scope).outputs[0]


def matrix_set_diag(
    input: Any,  # noqa: A002 - TF's name
    diagonal: Any,
    name: str = "set_diag",
    k: Any = 0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """A copy of the batch of matrices ``input`` with diagonal ``k`` (or the band ``k``) replaced by ``diagonal``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_set_diag(tf.zeros([2, 3], tf.int32), [7, 8])))
        [[7 0 0]
         [0 8 0]]
    """
    with op_scope(name, "MatrixSetDiagV3", [input, diagonal]) as scope:
        x = convert_to_tensor(input, name="input")
        d = convert_to_tensor(diagonal, dtype=x.dtype, name="diagonal")
        return make_op("MatrixSetDiagV3", [x, d, _k_tensor(k)], {"align": _check_align(align)}, name=scope).outputs[0]


# ---- MatrixBandPart -----------------------------------------------------------------------------------------------
def _band_part_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(x: torch.Tensor, num_lower: Any, num_upper: Any) -> torch.Tensor:
        lower, upper = int(num_lower), int(num_upper)
        m, n = x.shape[-2:]
        if lower > m or upper > n:
            raise invalid(op, f"num_lower ({lower}) must be at most {m} and num_upper ({upper}) at most {n}")
        i = torch.arange(m, device=x.device).view(-1, 1)
        j = torch.arange(n, device=x.device).view(1, -1)
        keep = torch.ones((m, n), dtype=torch.bool, device=x.device)
        if lower >= 0:
            keep &= i - j <= lower
        if upper >= 0:
            keep &= j - i <= upper
        return torch.where(keep, x, torch.zeros((), dtype=x.dtype, device=x.device))

    return run


def _band_part_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {x.shape.ndims} for MatrixBandPart '{op.name}'")
    return [(x.dtype, x.shape)]


op_registry.register_op(
    "MatrixBandPart",
    infer=_band_part_infer,
    kernel=_band_part_kernel,
    grad=lambda op, grad: [matrix_band_part(dense(grad), op.inputs[1], op.inputs[2]), None, None],
)


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any, name: str | None = None) -> Tensor:  # noqa: A002
    """Zeros all but the band of each matrix: ``num_lower`` subdiagonals and ``num_upper`` superdiagonals (a negative
    count keeps that whole triangle).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.matrix_band_part(tf.ones([3, 3], tf.int32), 0, -1)))
        [[1 1 1]
         [0 1 1]
         [0 0 1]]
    """
    with op_scope(name, "MatrixBandPart", [input, num_lower, num_upper]) as scope:
        x = convert_to_tensor(input, name="input")
        lower = convert_to_tensor(num_lower, dtype=None if isinstance(num_lower, Tensor) else dtypes.int64)
        upper = convert_to_tensor(num_upper, dtype=lower.dtype, name="num_upper")
        return make_op("MatrixBandPart", [x, lower, upper], name=scope).outputs[0]


# ---- Diag / DiagPart (any rank) -----------------------------------------------------------------------------------
def _diag_any_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(d: torch.Tensor) -> torch.Tensor:
        n = d.numel()
        return torch.diag(d.reshape(-1)).reshape(tuple(d.shape) * 2) if n else d.reshape(tuple(d.shape) * 2)

    return run


def _diag_part_any_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    def run(x: torch.Tensor) -> torch.Tensor:
        k = x.dim() // 2
        if x.dim() % 2 or tuple(x.shape[:k]) != tuple(x.shape[k:]):
            raise invalid(op, f"Input must have shape [D1,...,Dk,D1,...,Dk], got {list(x.shape)}")
        n = int(np.prod(x.shape[:k], dtype=np.int64))
        return torch.diagonal(x.reshape(n, n)).reshape(x.shape[:k]).clone()

    return run


def _diag_any_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    d = op.inputs[0]
    if d.shape.ndims is None:
        return [(d.dtype, unknown_shape())]
    return [(d.dtype, d.shape.concatenate(d.shape))]


def _diag_part_any_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    if x.shape.ndims is None:
        return [(x.dtype, unknown_shape())]
    if x.shape.ndims % 2:
        raise ValueError(f"Input must have even rank <= 6, input rank is {x.shape.ndims} for DiagPart '{op.name}'")
    k = x.shape.ndims // 2
    try:
        return [(x.dtype, x.shape[:k].merge_with(x.shape[k:]))]
    except ValueError:
        raise ValueError(f"Invalid shape {fmt_shape(x.shape)} for DiagPart '{op.name}'") from None


op_registry.register_op(
    "Diag", infer=_diag_any_infer, kernel=_diag_any_kernel, grad=lambda op, grad: [diag_part(dense(grad))]
)
op_registry.register_op(
    "DiagPart", infer=_diag_part_any_infer, kernel=_diag_part_any_kernel, grad=lambda op, grad: [diag(dense(grad))]
)


def diag(diagonal: Any, name: str | None = None) -> Tensor:
    """The tensor of rank ``2k`` with ``diagonal`` (rank ``k``) on its diagonal: ``out[i..., i...] = diagonal[i...]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.diag([1, 2])))
        [[1 0]
         [0 2]]
    """
    with op_scope(name, "Diag", [diagonal]) as scope:
        return make_op("Diag", [convert_to_tensor(diagonal, name="diagonal")], name=scope).outputs[0]


def diag_part(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The diagonal ``out[i...] = input[i..., i...]`` of a tensor of rank ``2k``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.diag_part([[1, 2], [3, 4]])))
        [1 4]
    """
    with op_scope(name, "DiagPart", [input]) as scope:
        return make_op("DiagPart", [convert_to_tensor(input, name="input")], name=scope).outputs[0]


def eye(
    num_rows: Any,
    num_columns: Any = None,
    batch_shape: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Tensor:
    """An identity matrix (or a batch of them), ``num_rows x num_columns``; built as TF builds it, from
    ``matrix_diag`` of ones (or ``matrix_set_diag`` on zeros when it is not square).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.eye(2, 3, dtype=tf.int32)))
        [[1 0 0]
         [0 1 0]]
    """
    from dtf_notebook.ops.array.concat_split import concat
    from dtf_notebook.ops.math_ops import minimum

    with op_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        is_square = num_columns is None
        batch_shape = [] if batch_shape is None else batch_shape
        num_columns = num_rows if num_columns is None else num_columns
        dynamic = isinstance(num_rows, Tensor) or isinstance(num_columns, Tensor)
        if dynamic:
            diag_size: Any = minimum(num_rows, num_columns)
        else:
            if not isinstance(num_rows, int | np.integer) or not isinstance(num_columns, int | np.integer):
                raise TypeError(
                    f"Arguments `num_rows` and `num_columns` must be positive integer values. Received: "
                    f"num_rows={num_rows}, num_columns={num_columns}"
                )
            is_square = num_rows == num_columns
            diag_size = int(min(num_rows, num_columns))
        if isinstance(batch_shape, Tensor) or isinstance(diag_size, Tensor):
            batch_t = convert_to_tensor(batch_shape, name="shape", dtype=dtypes.int32)
            diag_shape: Any = concat((batch_t, [diag_size]), axis=0)
            if not is_square:
                shape: Any = concat((batch_t, [num_rows, num_columns]), axis=0)
        else:
            batch_list = TensorShape(batch_shape).as_list()
            diag_shape = batch_list + [diag_size]
            if not is_square:
                shape = batch_list + [num_rows, num_columns]
        diag_ones = ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(diag_ones)
        return matrix_set_diag(zeros(shape, dtype=dtype), diag_ones)
