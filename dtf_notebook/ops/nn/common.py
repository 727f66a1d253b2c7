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
    """``shape``, checked to have rank ``rank`` (an unknown shape becomes ``rank`` unknown dimensions)."""
    if shape.ndims is not None and shape.ndims != rank:
        raise ValueError(f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape if shape.ndims is not None else TensorShape([None] * rank)


def with_rank_at_least(shape: TensorShape, rank: int) -> TensorShape:
    """``shape``, checked to have at least rank ``rank`` when its rank is known."""
    if shape.ndims is not None and shape.ndims < rank:
        raise ValueError(f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def sentinel_check(sentinel: Any, fn_name: str) -> None:
    """Rejects a positional first argument of a TF1 loss function."""
    # TF1's loss functions take a leading `_sentinel` so that positional (labels, logits) mix-ups fail loudly.
    if sentinel is not None:
        raise ValueError(f"Only call `{fn_name}` with named arguments (labels=..., logits=..., ...)")


def static_int(value: Any) -> int | None:
    """``value`` as a Python int when it is known while building (None for a tensor of unknown value)."""
    if isinstance(value, Tensor):
        v = constant_value(value)
        return None if v is None else int(v)
    return None if value is None else int(value)


def axis_arg(axis: Any, dim: Any) -> Any:
    """The axis given as ``axis`` or as TF1's deprecated ``dim`` (default: the last, -1)."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'.")
    return -1 if axis is None and dim is None else (axis if axis is not None else dim)


def swap_axis_perm(rank: int, axis: int) -> list[int]:
    """The permutation that swaps ``axis`` with the last axis (its own inverse)."""
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm


def check_data_format(value: Any, allowed: Sequence[str] = FORMATS) -> str:
    """The validated ``data_format`` string (default ``NHWC``)."""
    fmt = "NHWC" if value is None else str(value)
    if fmt not in allowed:
        raise ValueError(f"Unknown data format: {value!r}; expected one of {', '.join(allowed)}")
    return fmt
