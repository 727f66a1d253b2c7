"""``tf.range``: the ``Range`` op, whose length is known while building when its arguments are constants.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     range(2, 11, 3).shape.as_list()
    [3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import invalid_argument, is_tensor_like
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.op_helpers import constant_value, make_op
from dtf_notebook.runtime.values import torch_dtype

_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _range_size(start: Any, limit: Any, delta: Any, dtype: dtypes.DType, error: Callable[[str], Exception]) -> int:
    if delta == 0:
        raise error("Requires delta != 0")
    if delta > 0 and start > limit:
        raise error(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise error(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if dtype.is_integer:
        return (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    # TF computes the length in the output's precision.
    t = dtype.np_dtype.type
    return int(np.ceil(np.abs((t(limit) - t(start)) / t(delta))))


def _range_values(start: Any, delta: Any, size: int, dtype: dtypes.DType, device: torch.device) -> torch.Tensor:
    out = torch_dtype(dtype)
    if dtype.is_integer:
        return torch.arange(size, dtype=torch.int64, device=device).mul_(int(delta)).add_(int(start)).to(out)
    steps = torch.arange(size, dtype=torch.float64, device=device)
    return steps.mul_(float(delta)).add_(float(start)).to(out)


def _range_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    dtype = op.get_attr("Tidx")
    args = [constant_value(t) for t in op.inputs]
    if any(a is None for a in args):
        return [(dtype, TensorShape([None]))]
    start, limit, delta = (a.item() for a in args)
    return [(dtype, TensorShape([_range_size(start, limit, delta, dtype, ValueError)]))]


def _range_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("Tidx")
    args = [constant_value(t) for t in op.inputs]
    if all(a is not None for a in args):
        start, limit, delta = (a.item() for a in args)
        result = _range_values(start, delta, _range_size(start, limit, delta, dtype, ValueError), dtype, ctx.device)
        return lambda *_: result

    def run(start: torch.Tensor, limit: torch.Tensor, delta: torch.Tensor) -> torch.Tensor:
        s, lim, d = start.item(), limit.item(), delta.item()
        return _range_values(s, d, _range_size(s, lim, d, dtype, invalid_argument), dtype, start.device)

    return run


op_registry.register_op("Range", infer=_range_infer, kernel=_range_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range") -> Tensor:  # noqa: A001
    """The sequence ``start, start + delta, ...`` up to but excluding ``limit`` (``range(n)`` counts from 0).

    Without ``dtype`` the result takes the widest of the arguments' types (int32 < int64 < float32 < float64).

    Raises:
        ValueError: ``delta`` is 0 or points away from ``limit`` (when known while building).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.range(4)), sess.run(tf.range(5, 0, -2)), sess.run(tf.range(0.0, 1.0, 0.25)))
        [0 1 2 3] [5 3 1] [0.   0.25 0.5  0.75]
    """
    if limit is None:
        start, limit = 0, start
    with name_scope(name, "Range", [start, limit, delta]) as scope:
        values = [convert_to_tensor(v) if is_tensor_like(v) else v for v in (start, limit, delta)]
        if dtype is None:
            kinds = [v.dtype if isinstance(v, Tensor) else dtypes.dtype_of_value(v) for v in values]
            for kind in kinds:
                if kind not in _RANGE_DTYPES:
                    raise TypeError(f"Range arguments must be int32, int64, float32 or float64, got {kind.name}")
            inferred = max(kinds, key=_RANGE_DTYPES.index)
        else:
            inferred = dtypes.as_dtype(dtype)
        # Python values become constants of the result type directly (not casts), so the length stays static.
        args = [
            cast(v, inferred) if isinstance(v, Tensor) else convert_to_tensor(v, dtype=inferred, name=arg)
            for v, arg in zip(values, ("start", "limit", "delta"))
        ]
        return make_op("Range", args, {"Tidx": inferred}, name=scope).outputs[0]
