"""TF's error texts for array ops: rank checks while building, shapes in messages, run-time errors.

Example:
    >>> fmt_dims([2, None, 3])
    '[2,?,3]'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape


def require_rank(t: Tensor, rank: int) -> None:
    """Raises TF's ValueError when ``t``'s rank is known and is not ``rank``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     require_rank(tf.zeros([2]), 2)
        Traceback (most recent call last):
            ...
        ValueError: Shape must be rank 2 but is rank 1
    """
    if t.shape.ndims not in (None, rank):
        raise ValueError(f"Shape must be rank {rank} but is rank {t.shape.ndims}")


def fmt_dims(dims: Sequence[Any]) -> str:
    """Dimensions as TF prints them in messages: ``[2,?,3]``.

    Example:
        >>> fmt_dims([2, None, 3])
        '[2,?,3]'
    """
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def fmt_shape(shape: TensorShape) -> str:
    """A static shape as TF prints it in messages (``?`` for an unknown rank).

    Example:
        >>> fmt_shape(TensorShape([2, None])), fmt_shape(TensorShape(None))
        ('[2,?]', '?')
    """
    return "?" if shape.ndims is None else fmt_dims(shape.as_list())


def invalid(op: Operation, message: str) -> errors.InvalidArgumentError:
    """The run-time error a kernel of ``op`` raises for bad input values.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     e = invalid(tf.constant(1, name="k").op, "indices[0] = 7 is not in [0, 3)")
        >>> type(e).__name__, e.op.name, e.message
        ('InvalidArgumentError', 'k', 'indices[0] = 7 is not in [0, 3)')
    """
    return errors.InvalidArgumentError(None, op, message)


def dims_with_rank(shape: TensorShape, *lengths: int | None) -> list[int | None] | None:
    """``shape``'s dims, or unknown dims for the rank that spec inputs of ``lengths`` rows give.

    Raises TF's ValueError when the known ranks disagree; returns None when no rank is known.

    Example:
        >>> dims_with_rank(TensorShape(None), None, 3), dims_with_rank(TensorShape([2, None]), 2)
        ([None, None, None], [2, None])
    """
    n = shape.ndims
    for length in lengths:
        if length is not None:
            if n is not None and length != n:
                raise ValueError(f"Shape must be rank {length} but is rank {n}")
            n = length
    if n is None:
        return None
    return shape.as_list() if shape.ndims is not None else [None] * n
