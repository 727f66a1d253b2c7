"""What the ``tf.nn`` modules share: dtype families, rank checks and TF1's argument conventions.

Example:
    >>> from dtf_notebook.framework.tensor_shape import TensorShape
    >>> with_rank(TensorShape(None), 2).as_list(), axis_arg(None, 0), swap_axis_perm(3, 0)
    ([None, None], 0, [2, 1, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import constant_value

FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
REALS = FLOATS + (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8)
INDEX = (dtypes.int32, dtypes.int64)
FORMATS = ("NHWC", "NCHW")


def with_rank(shape: TensorShape, rank: int) -> TensorShape:
    """``shape``, checked to have rank ``rank`` (an unknown shape becomes ``rank`` unknown dimensions).

    Example:
        >>> with_rank(TensorShape(None), 2), with_rank(TensorShape([3, 4]), 2)
        (TensorShape([None, None]), TensorShape([3, 4]))
    """
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape if shape.ndims is not None else TensorShape([None] * rank)


def with_rank_at_least(shape: TensorShape, rank: int) -> TensorShape:
    """``shape``, checked to have at least rank ``rank`` when its rank is known.

    Example:
        >>> with_rank_at_least(TensorShape([2, 3, 4]), 2)
        TensorShape([2, 3, 4])
    """
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def sentinel_check(sentinel: Any, fn_name: str) -> None:
    """Rejects a positional first argument of a TF1 loss function.

    Example:
        >>> sentinel_check(None, "softmax_cross_entropy_with_logits")  # called with keywords: fine
        >>> sentinel_check([0.5], "softmax_cross_entropy_with_logits")
        Traceback (most recent call last):
            ...
        ValueError: Only call `softmax_cross_entropy_with_logits` with named arguments (labels=..., logits=..., ...)
    """
    # TF1's loss functions take a leading `_sentinel` so that positional (labels, logits) mix-ups fail loudly.
    if sentinel is not None:
        raise ValueError(f"Only call `{fn_name}` with named arguments (labels=..., logits=..., ...)")


def static_int(value: Any) -> int | None:
    """``value`` as a Python int when it is known while building (None for a tensor of unknown value).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     static_int(tf.constant(3)), static_int(tf.placeholder(tf.int32)), static_int(4)
        (3, None, 4)
    """
    if isinstance(value, Tensor):
        v = constant_value(value)
        return None if v is None else int(v)
    return None if value is None else int(value)


def axis_arg(axis: Any, dim: Any) -> Any:
    """The axis given as ``axis`` or as TF1's deprecated ``dim`` (default: the last, -1).

    Example:
        >>> axis_arg(None, None), axis_arg(None, 1), axis_arg(0, None)
        (-1, 1, 0)
    """
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    return -1 if axis is None and dim is None else (axis if axis is not None else dim)


def swap_axis_perm(rank: int, axis: int) -> list[int]:
    """The permutation that swaps ``axis`` with the last axis (its own inverse).

    Example:
        >>> swap_axis_perm(4, 1)
        [0, 3, 2, 1]
    """
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm


def check_data_format(value: Any, allowed: Sequence[str] = FORMATS) -> str:
    """The validated ``data_format`` string (default ``NHWC``).

    Example:
        >>> check_data_format(None), check_data_format("NCHW")
        ('NHWC', 'NCHW')
    """
    fmt = "NHWC" if value is None else str(value)
    if fmt not in allowed:
        raise ValueError(f"Unknown data format: {value!r}; expected one of {', '.join(allowed)}")
    return fmt
