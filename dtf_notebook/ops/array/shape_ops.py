"""``shape``, ``size`` and ``rank``: facts about a tensor's shape, constants when known while building (as in TF1).

The three ops (``Shape``, ``Size``, ``Rank``) differ only in what they measure, so one builder,
one inference rule and one cached kernel serve all of them, driven by the table ``_MEASURES``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     [t.op.type for t in (shape(x), size(x), rank(x))]
    ['Shape', 'Size', 'Const']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import cached, op_scope
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import torch_dtype


class _Measure(NamedTuple):
    static: Callable[[TensorShape], Any]  # the value from a static shape, or None while unknown
    runtime: Callable[[Any], Any]  # the value from a torch tensor or numpy array
    out_rank: int  # 1 for Shape (a vector), 0 for Size and Rank
    has_out_type: bool  # Rank is always int32 and has no ``out_type`` attr


_MEASURES = {
    "Shape": _Measure(
        lambda s: s.as_list() if s.is_fully_defined() else None, lambda x: tuple(x.shape), out_rank=1, has_out_type=True
    ),
    "Size": _Measure(
        lambda s: s.num_elements(),
        lambda x: int(np.prod(x.shape)) if isinstance(x, np.ndarray) else x.numel(),
        out_rank=0,
        has_out_type=True,
    ),
    "Rank": _Measure(lambda s: s.ndims, lambda x: x.ndim, out_rank=0, has_out_type=False),
}


def _measure(op_type: str, input: Any, name: str | None, out_type: Any) -> Tensor:  # noqa: A002 - TF's name
    out_type = dtypes.as_dtype(out_type)
    measure = _MEASURES[op_type]
    with op_scope(name, op_type, [input]) as scope:
        x = convert_to_tensor(input)
        static = measure.static(x.shape)
        if static is not None:
            return constant(static, dtype=out_type, name=scope)
        attrs = {"out_type": out_type} if measure.has_out_type else {}
        return make_op(op_type, [x], attrs, name=scope).outputs[0]


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002 - TF's name
    """The shape of ``input`` as a 1-D int tensor (a constant when it is statically known, as in TF1).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32, [None, 3])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.shape(x), {x: [[1, 2, 3], [4, 5, 6]]}))
        [2 3]
    """
    return _measure("Shape", input, name, out_type)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:  # noqa: A002 - TF's name
    """The number of elements of ``input`` as a scalar int tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.size(tf.constant([[1, 2, 3], [4, 5, 6]]))))
        6
    """
    return _measure("Size", input, name, out_type)


def rank(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """The number of dimensions of ``input`` as a scalar int32 tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32)
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.rank(x), {x: [[1.0]]}))
        2
    """
    return _measure("Rank", input, name, dtypes.int32)


def _out_type(op: Operation, measure: _Measure) -> dtypes.DType:
    return op.get_attr("out_type") if measure.has_out_type else dtypes.int32


def _measure_infer(measure: _Measure) -> Callable[[Operation], list]:
    def infer(op: Operation) -> list:
        dims = [op.inputs[0].shape.ndims] if measure.out_rank else []
        return [(_out_type(op, measure), TensorShape(dims))]

    return infer


def _measure_kernel(measure: _Measure) -> Callable[[Operation, Any], Callable[[Any], torch.Tensor]]:
    def kernel(op: Operation, ctx: Any) -> Callable[[Any], torch.Tensor]:
        tdtype, device = torch_dtype(_out_type(op, measure)), ctx.device
        measure_value = measure.runtime
        cache: dict[Any, torch.Tensor] = {}

        def to_tensor(value: Any) -> torch.Tensor:
            return torch.tensor(value, dtype=tdtype, device=device)

        def run(x: Any) -> torch.Tensor:
            value = measure_value(x)
            # One small tensor per distinct value, reused across steps (consumers never mutate inputs).
            return cached(cache, value, to_tensor, value)

        return run

    return kernel


for _op_type, _m in _MEASURES.items():
    op_registry.register_op(
        _op_type, infer=_measure_infer(_m), kernel=_measure_kernel(_m), grad=op_registry.NOT_DIFFERENTIABLE
    )
