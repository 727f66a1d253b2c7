"""What the linear-algebra ops share: shape rules for batches of matrices and TF's errors for failed factorizations.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     square_batch(tf.zeros([4, 3, 3]), "MatrixInverse").as_list()
    [4, 3, 3]
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.diagnostics import fmt_shape, invalid

#: The dtypes TF's linear-algebra kernels take (no half floats, no integers).
LINALG_FLOAT = (dtypes.float32, dtypes.float64)


def matrix_batch(x: Tensor, what: str) -> TensorShape:
    """``x``'s static shape, checked to be a batch of matrices (rank >= 2 when known).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     matrix_batch(tf.placeholder(tf.float32), "Svd").ndims is None
        True
    """
    shape = x.shape
    if shape.ndims is not None and shape.ndims < 2:
        raise ValueError(f"Shape must be at least rank 2 but is rank {shape.ndims} for {what}")
    return shape


def square_batch(x: Tensor, what: str) -> TensorShape:
    """``x``'s static shape, checked to be a batch of square matrices (where the sizes are known).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     square_batch(tf.zeros([2, 3]), "Cholesky")
        Traceback (most recent call last):
            ...
        ValueError: Dimensions must be equal, but are 2 and 3 for Cholesky (input shape [2,3])
    """
    shape = matrix_batch(x, what)
    if shape.ndims is None:
        return unknown_shape()
    m, n = shape[-2].value, shape[-1].value
    if m is not None and n is not None and m != n:
        raise ValueError(f"Dimensions must be equal, but are {m} and {n} for {what} (input shape {fmt_shape(shape)})")
    return shape[:-2].concatenate([m if m is not None else n] * 2)


@contextlib.contextmanager
def linalg_errors(op: Operation, message: str) -> Iterator[None]:
    """Turns torch's failure of a factorization or solve (a singular or non-definite input) into TF's
    ``InvalidArgumentError`` with ``message``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     op = tf.no_op(name="inv")
        >>> try:
        ...     with linalg_errors(op, "Input is not invertible."):
        ...         torch.linalg.inv(torch.zeros(2, 2))
        ... except tf.errors.InvalidArgumentError as e:
        ...     print(e.message)
        Input is not invertible.
    """
    try:
        yield
    except torch.linalg.LinAlgError:
        raise invalid(op, message) from None
