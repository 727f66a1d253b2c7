"""Arg-reductions: ``ArgMax`` and ``ArgMin``, the index of the extreme entry along one axis.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1, 9, 3], [7, 2, 7]])
    ...     print(sess.run([argmax(x, 1), argmin(x, 0, output_type=tf.int32)]))
    [array([1, 0]), array([0, 1, 0], dtype=int32)]
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
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import INDEX, REAL, deprecated_arg, is_tensor_like, table_builder
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op
from dtf_notebook.runtime.values import torch_dtype


def _arg_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x = op.inputs[0]
    out_type = op.get_attr("output_type")
    value = constant_value(op.inputs[1])
    rank = x.shape.ndims
    if rank is None:
        return [(out_type, unknown_shape())]
    if value is None:
        return [(out_type, unknown_shape(max(rank - 1, 0)))]
    axis = int(np.reshape(value, -1)[0])
    if not -rank <= axis < rank:
        raise ValueError(
            f"Dimension ({axis}) must be in the range [{-rank}, {rank}), where {rank} is the number of "
            "dimensions in the input."
        )
    axis %= rank
    return [(out_type, TensorShape([d for i, d in enumerate(x.shape.as_list()) if i != axis]))]


def _arg_kernel(torch_name: str):
    def factory(op: Operation, ctx: Any) -> Callable[..., Any]:
        torch_fn = getattr(torch, torch_name)  # looked up when a plan is built: torch loads then
        out = torch_dtype(op.get_attr("output_type"))
        value = constant_value(op.inputs[1])
        if value is not None:
            axis = int(np.reshape(value, -1)[0])
            if out is torch.int64:
                return lambda x, dim: torch_fn(x, axis)
            return lambda x, dim: torch_fn(x, axis).to(out)
        return lambda x, dim: torch_fn(x, int(dim)).to(out)

    return factory


for _type, _torch_fn in (("ArgMax", "argmax"), ("ArgMin", "argmin")):
    op_registry.register_op(_type, infer=_arg_infer, kernel=_arg_kernel(_torch_fn), grad=op_registry.NOT_DIFFERENTIABLE)


def _arg(op_type: str, input: Any, axis: Any, name: str | None, dimension: Any, output_type: Any) -> Tensor:  # noqa: A002
    axis = deprecated_arg("axis", axis, "dimension", dimension)
    output_type = dtypes.as_dtype(output_type)
    if output_type not in INDEX:
        raise TypeError(f"output_type must be int32 or int64, got {output_type.name}")
    with name_scope(name, op_type, [input]) as scope:
        x = convert_to_tensor(input, name="input")
        check_dtype(x, REAL, op_type, "input")
        if is_tensor_like(axis):
            dim = convert_to_tensor(axis)
        else:
            dim = convert_to_tensor(0 if axis is None else axis, preferred_dtype=dtypes.int32, name="dimension")
        check_dtype(dim, INDEX, op_type, "dimension")
        return make_op(op_type, [x, dim], {"output_type": output_type}, name=scope).outputs[0]


def _arg_reduction(fn_name: str, op_type: str, extreme: str, prints: str) -> Callable[..., Tensor]:
    def arg_reduce(
        input: Any,  # noqa: A002 - TF's name
        axis: Any = None,
        name: str | None = None,
        dimension: Any = None,
        output_type: Any = dtypes.int64,
    ) -> Tensor:
        return _arg(op_type, input, axis, name, dimension, output_type)

    summary = (
        f"Index of the {extreme} entry along ``axis`` (default 0; TF1's ``dimension`` is the old name); "
        "ties take the first."
    )
    raises = ["TypeError: ``output_type`` is not int32 or int64, or the input is not numeric."]
    return table_builder(arg_reduce, fn_name, summary, "[[1, 3], [4, 2]], axis=1", prints, raises)


argmax = _arg_reduction("argmax", "ArgMax", "largest", "[1 0]")
argmin = _arg_reduction("argmin", "ArgMin", "smallest", "[0 1]")
