"""``Bucketize``: the index of the bucket each value falls in, given sorted boundaries (TF's op and its
``math_ops._bucketize``, which ``bucketized_column`` uses).

A value ``v`` goes to bucket ``i`` when ``boundaries[i-1] <= v < boundaries[i]``: bucket 0 below the first
boundary, ``len(boundaries)`` at or above the last. Boundaries are float32, as TF's attribute is.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(bucketize(tf.constant([-1.0, 0.0, 0.5, 3.0]), [0.0, 1.0])))
    [0 1 1 2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["bucketize"]

_TYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def _infer(op: Operation) -> list:
    if op.inputs[0].dtype.base_dtype not in _TYPES:
        raise TypeError(f"Bucketize '{op.name}' takes int32, int64, float or double, got {op.inputs[0].dtype.name}")
    return [(dtypes.int32, op.inputs[0].shape)]


def _kernel(op: Operation, ctx: Any) -> Any:
    boundaries = torch.from_numpy(np.asarray(op.get_attr("boundaries"), np.float32).astype(np.float64))

    def run(x: Any) -> Any:
        return torch.bucketize(x.to(torch.float64), boundaries.to(x.device), right=True).to(torch.int32)

    return run


op_registry.register_op("Bucketize", infer=_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE)


def bucketize(input: Any, boundaries: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The bucket of each value of ``input`` (int32, same shape) for the sorted float ``boundaries``.

    Raises:
        ValueError: ``boundaries`` are not sorted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     bucketize([1, 2], [0.5, 1.0, 2.0]).dtype
        tf.int32
    """
    values = [float(b) for b in boundaries]
    if values != sorted(values):
        raise ValueError(f"Expected sorted boundaries, got {values}")
    x = convert_to_tensor(input)
    return make_op("Bucketize", [x], {"boundaries": values}, name=name or "Bucketize").outputs[0]
