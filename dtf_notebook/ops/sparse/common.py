"""What the sparse ops share: turning arguments into ``SparseTensor``s, TF's checks and messages, and the kernels'
helpers (row-major order of index rows, gathering values that are torch tensors or numpy string arrays).

Sparse kernels work out positions with numpy on the host, as TF's (CPU-only) sparse kernels do, and move only the
values with torch, so values keep their device and dtype (bfloat16 and strings included).

Example:
    >>> import numpy as np
    >>> row_major_order(np.array([[1, 0], [0, 2], [0, 1]]))
    array([2, 1, 0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math.cast import cast

__all__: list[str] = []


def as_sparse(value: Any, arg: str = "sp_input") -> SparseTensor:
    """``value`` as a SparseTensor (a ``SparseTensorValue`` becomes constants).

    Raises:
        TypeError: ``value`` is not sparse (TF's message).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     type(as_sparse(tf.SparseTensorValue([[0]], [1.0], [2]))).__name__
        'SparseTensor'
    """
    if isinstance(value, SparseTensorValue):
        return SparseTensor.from_value(value)
    if not isinstance(value, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(value).__name__} for '{arg}'.")
    return value


def parts(sp: SparseTensor) -> list[Tensor]:
    """The three tensors of ``sp`` in the order TF's sparse ops take them."""
    return [sp.indices, sp.values, sp.dense_shape]


def sparse_from_outputs(
    indices: Tensor, values: Tensor, shape: Tensor, static: TensorShape | None = None
) -> SparseTensor:
    """A SparseTensor of op outputs, with a static dense shape better than ``shape`` tells when one is known."""
    sp = SparseTensor(indices, values, shape)
    if static is not None and static.ndims is not None:
        sp._dense_shape_default = static
    return sp


def invalid(op: Operation | None, message: str) -> errors.InvalidArgumentError:
    """The run-time error of a bad sparse value."""
    return errors.InvalidArgumentError(None, op, message)


def host(value: Any) -> np.ndarray:
    """A kernel input as a numpy array on the host (strings stay object arrays)."""
    if isinstance(value, np.ndarray):
        return value
    return value.detach().cpu().numpy()


def like(array: np.ndarray, reference: Any) -> Any:
    """``array`` (int64 positions or values) as a runtime value on ``reference``'s device."""
    if isinstance(reference, np.ndarray):
        return array
    return torch.from_numpy(array if array.flags.c_contiguous else array.copy()).to(reference.device)


def take(values: Any, positions: np.ndarray) -> Any:
    """``values[positions]`` for torch or numpy-string values."""
    if isinstance(values, np.ndarray):
        return values[positions]
    return values[torch.from_numpy(np.asarray(positions, dtype=np.int64)).to(values.device)]


def concat_values(pieces: list[Any], dtype: dtypes.DType) -> Any:
    """Values of several kernel inputs joined (an empty list gives an empty vector of ``dtype``)."""
    if pieces and isinstance(pieces[0], np.ndarray):
        return np.concatenate(pieces).astype(object)
    return torch.cat(pieces)


def row_major_order(indices: np.ndarray) -> np.ndarray:
    """The stable permutation that puts index rows in row-major (lexicographic) order.

    Example:
        >>> row_major_order(np.array([[0, 1], [0, 0]]))
        array([1, 0])
    """
    if indices.shape[0] == 0 or indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


def row_keys(indices: np.ndarray) -> np.ndarray:
    """One comparable void value per index row, to match rows between index lists.

    Example:
        >>> a, b = row_keys(np.array([[0, 1], [2, 3]])), row_keys(np.array([[2, 3]]))
        >>> bool(a[1] == b[0]), bool(a[0] == b[0])
        (True, False)
    """
    rows = np.ascontiguousarray(indices, dtype=np.int64)
    if rows.shape[1] == 0:  # rank 0: every row is the same (empty) coordinate
        rows = np.zeros((rows.shape[0], 1), dtype=np.int64)
    return rows.view(np.dtype((np.void, 8 * rows.shape[1]))).reshape(-1)


def check_parts(op: Operation | None, indices: np.ndarray, n_values: int, shape: np.ndarray) -> None:
    """TF's run-time checks of one sparse operand's three parts."""
    if indices.ndim != 2:
        raise invalid(op, f"Input indices should be a matrix but received shape {list(indices.shape)}")
    if shape.ndim != 1:
        raise invalid(op, f"Input shape should be a vector but received shape {list(shape.shape)}")
    if indices.shape[0] != n_values:
        raise invalid(op, f"Expected {indices.shape[0]} non-empty input values, got {n_values}")
    if indices.shape[1] != shape.shape[0]:
        raise invalid(
            op,
            f"Input indices and shape have different ranks: {indices.shape[1]} vs {shape.shape[0]}",
        )


def static_rank(sp: SparseTensor) -> int | None:
    """The rank of ``sp`` known while building."""
    rank = sp.indices.shape[1].value if sp.indices.shape.ndims == 2 else None
    if rank is None and sp.dense_shape.shape.ndims == 1:
        rank = sp.dense_shape.shape[0].value
    return rank


def int64(value: Any, name: str) -> Tensor:
    """An int64 tensor of ``value`` (an int32 tensor is cast, as TF's sparse builders do)."""
    t = convert_to_tensor(value, name=name)
    return t if t.dtype is dtypes.int64 else cast(t, dtypes.int64)
