"""``transpose`` (op ``Transpose``) and ``invert_permutation``: permuting a tensor's dimensions.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     transpose(tf.zeros([2, 3, 4]), [2, 0, 1]).shape.as_list()
    [4, 2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array.common import canonical_axis, dense, is_string, op_scope, to_list
from dtf_notebook.ops.array.conversions import int_tensor
from dtf_notebook.ops.array.diagnostics import invalid, require_rank
from dtf_notebook.ops.array.shape_ops import rank
from dtf_notebook.ops.array.static_values import const_ints
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import make_op


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Tensor:
    """Permutes the dimensions of ``a``; ``perm=None`` reverses them; ``conjugate`` also conjugates a complex ``a``
    (a ``Conj`` before the ``Transpose``, where TF has one ``ConjugateTranspose``; real tensors ignore it).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.zeros([2, 3, 4])
        ...     tf.transpose(x).shape.as_list(), tf.transpose(x, [0, 2, 1]).shape.as_list()
        ([4, 3, 2], [2, 4, 3])
    """
    with op_scope(name, "transpose", [a, perm]) as scope:
        x = convert_to_tensor(a, name="a")
        if conjugate and x.dtype.is_complex:
            x = op_registry.builders.conjugate(x)  # the complex ops build on the array ops
        if perm is None:
            if x.shape.ndims is not None:
                p = constant(np.arange(x.shape.ndims - 1, -1, -1, dtype=np.int32), name="perm")
            else:
                r = rank(x)
                p = math_ops.subtract(math_ops.subtract(r, 1), math_ops.range(0, r, 1))
        else:
            p = int_tensor(perm, name="perm")
        return make_op("Transpose", [x, p], {}, name=scope).outputs[0]


def _check_perm(perm: Sequence[int], n: int) -> str | None:
    for p in perm:
        if not 0 <= p < n:
            return f"{p} is out of range [0 .. {n})"
    seen = set(perm)
    for i in range(n):
        if i not in seen:
            return f"{i} is missing from {{{','.join(str(p) for p in perm)}}}."
    return None


def _transpose_infer(op: Operation) -> list:
    x, perm_t = op.inputs
    perm = const_ints(perm_t)
    n = x.shape.ndims
    if n is None and perm_t.shape.ndims == 1:
        n = perm_t.shape[0].value
    if n is not None and perm_t.shape.ndims == 1 and perm_t.shape[0].value not in (None, n):
        raise ValueError(f"Dimension must be {n} but is {perm_t.shape[0].value}")
    if perm is None or n is None:
        return [(x.dtype, unknown_shape(n))]
    for p in perm:
        if not -n <= p < n:
            raise ValueError(f"perm dim {p} is out of range of input rank {n}")
    perm = [canonical_axis(p, n) for p in perm]
    problem = _check_perm(perm, n)
    if problem:
        raise ValueError(problem)
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    return [(x.dtype, TensorShape([dims[p] for p in perm]))]


def _transpose_kernel(op: Operation, ctx: Any):
    static = const_ints(op.inputs[1])
    is_str = is_string(op.inputs[0])

    def run(x: Any, perm_value: Any) -> Any:
        perm = static if static is not None else to_list(perm_value)
        if static is None or len(perm) != x.ndim:
            if len(perm) != x.ndim:
                raise invalid(
                    op, f"transpose expects a vector of size {x.ndim}. But input(1) is a vector of size {len(perm)}"
                )
            problem = _check_perm([canonical_axis(p, x.ndim) for p in perm], x.ndim)
            if problem:
                raise invalid(op, problem)
        return np.transpose(x, perm) if is_str else x.permute(perm)

    return run


def _transpose_grad(op: Operation, grad: Any) -> list:
    perm = const_ints(op.inputs[1])
    if perm is not None:
        n = len(perm)
        inverse = np.argsort([canonical_axis(p, n) for p in perm]).astype(np.int32)
        return [transpose(dense(grad), inverse), None]
    return [transpose(dense(grad), invert_permutation(op.inputs[1])), None]


op_registry.register_op("Transpose", infer=_transpose_infer, kernel=_transpose_kernel, grad=_transpose_grad)


def invert_permutation(x: Any, name: str | None = None) -> Tensor:
    """The inverse of a permutation vector: ``y[x[i]] = i``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.invert_permutation([3, 4, 0, 2, 1])))
        [2 4 3 0 1]
    """
    with op_scope(name, "InvertPermutation", [x]) as scope:
        p = int_tensor(x, name="x")
        return make_op("InvertPermutation", [p], {}, name=scope).outputs[0]


def _invert_permutation_infer(op: Operation) -> list:
    x = op.inputs[0]
    require_rank(x, 1)
    return [(x.dtype, x.shape.with_rank(1))]


def _invert_permutation_kernel(op: Operation, ctx: Any):
    def run(x: torch.Tensor) -> torch.Tensor:
        values = x.tolist()
        n = len(values)
        seen = [False] * n
        for v in values:
            if not 0 <= v < n:
                raise invalid(op, f"{v} is not between 0 and {n}")
            if seen[v]:
                raise invalid(op, f"{v} is duplicated in the input.")
            seen[v] = True
        out = torch.empty_like(x)
        out[x.long()] = torch.arange(n, dtype=x.dtype, device=x.device)
        return out

    return run


op_registry.register_op(
    "InvertPermutation",
    infer=_invert_permutation_infer,
    kernel=_invert_permutation_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)
