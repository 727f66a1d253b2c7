"""``tf.edit_distance`` (``EditDistance``): the Levenshtein distance between the sequences of two SparseTensors.

The last dimension holds the sequences: the entries sharing all other coordinates form one sequence (in the order
they are listed). The result has the largest of the two dense shapes without the last dimension; a position where
neither holds a sequence is 0. Normalized distances divide by the length of the truth sequence (an empty truth gives
inf, as in TF).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     hyp = tf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    ...     truth = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], ["a", "c", "b"], [1, 3])
    ...     print(sess.run(edit_distance(hyp, truth, normalize=False)))
    [1.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.framework.tensor_util import constant_value
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.sparse.common import as_sparse, check_parts, host, invalid, parts

__all__ = ["edit_distance"]


def _levenshtein(a: list[Any], b: list[Any]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _sequences(ind: np.ndarray, values: Any) -> dict[tuple[int, ...], list[Any]]:
    items = values.tolist() if isinstance(values, np.ndarray) else values.cpu().tolist()
    groups: dict[tuple[int, ...], list[Any]] = {}
    for row, value in zip(ind[:, :-1].tolist(), items):
        groups.setdefault(tuple(row), []).append(value)
    return groups


def _kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    normalize = op.get_attr("normalize")

    def run(h_i: Any, h_v: Any, h_s: Any, t_i: Any, t_v: Any, t_s: Any) -> Any:
        h_ind, h_shape, t_ind, t_shape = host(h_i), host(h_s), host(t_i), host(t_s)
        check_parts(op, h_ind, len(h_v), h_shape)
        check_parts(op, t_ind, len(t_v), t_shape)
        if len(h_shape) != len(t_shape):
            raise invalid(op, f"hypothesis and truth must have the same rank, got {len(h_shape)} and {len(t_shape)}")
        if len(h_shape) < 1:
            raise invalid(op, "hypothesis and truth must have rank at least 1")
        out_shape = np.maximum(h_shape[:-1], t_shape[:-1]).astype(np.int64)
        out = np.zeros(tuple(out_shape.tolist()), dtype=np.float32)
        hyp, truth = _sequences(h_ind, h_v), _sequences(t_ind, t_v)
        for key in set(hyp) | set(truth):
            a, b = hyp.get(key, []), truth.get(key, [])
            distance = float(_levenshtein(a, b))
            if normalize:
                distance = distance / len(b) if b else np.inf
            out[key] = distance
        return torch.from_numpy(out)

    return run


def _infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    h_s, t_s = constant_value(op.inputs[2]), constant_value(op.inputs[5])
    if h_s is not None and t_s is not None:
        if len(h_s) != len(t_s):
            raise ValueError(f"hypothesis and truth must have the same rank, got {len(h_s)} and {len(t_s)}")
        return [(dtypes.float32, TensorShape(np.maximum(h_s[:-1], t_s[:-1]).tolist()))]
    return [(dtypes.float32, unknown_shape())]  # TF's shape function needs both shapes as constants


op_registry.register_op(
    "EditDistance", infer=_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
)


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True, name: str = "edit_distance") -> Tensor:
    """The Levenshtein distances between the sequences of ``hypothesis`` and ``truth`` (see the module doc).

    Raises:
        TypeError: an argument is not a SparseTensor, or their value types differ.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     hyp = tf.SparseTensor([[0, 0]], [1], [1, 1])
        ...     truth = tf.SparseTensor([[0, 0], [0, 1]], [1, 2], [1, 2])
        ...     print(sess.run(tf.edit_distance(hyp, truth)))
        [0.5]
    """
    if not isinstance(hypothesis, SparseTensor | SparseTensorValue):
        raise TypeError("Hypothesis must be a SparseTensor.")
    if not isinstance(truth, SparseTensor | SparseTensorValue):
        raise TypeError("Truth must be a SparseTensor.")
    hyp, tru = as_sparse(hypothesis, "hypothesis"), as_sparse(truth, "truth")
    if hyp.dtype is not tru.dtype:
        raise TypeError(
            f"Input 'truth_values' of 'EditDistance' Op has type {tru.dtype.name} that does not match type "
            f"{hyp.dtype.name} of argument 'hypothesis_values'."
        )
    attrs = {"normalize": bool(normalize), "T": hyp.dtype}
    return make_op("EditDistance", [*parts(hyp), *parts(tru)], attrs, name=name).outputs[0]
