"""Casts: the ``Cast`` op, :func:`cast`, and TF1's ``to_float``-style shorthands.

A cast between floating types passes its gradient through (cast back); any other
cast has none. ``saturate_cast`` clamps first and so lives in :mod:`.clip`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(to_int32(cast([0.5, 2.5], tf.float64) * 2.0)))
    [1 5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import table_builder
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import torch_dtype


def _cast_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dst = torch_dtype(op.get_attr("DstT"))
    if op.inputs[0].dtype.is_complex and not op.get_attr("DstT").is_complex:
        return lambda x: torch.real(x).to(dst)  # TF keeps the real part (torch would warn)
    return lambda x: x.to(dst)


def _cast_grad(op: Operation, grad: Any) -> list[Any]:
    src, dst = op.inputs[0].dtype, op.outputs[0].dtype
    if not ((src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex)):
        return [None]
    if isinstance(grad, IndexedSlices):
        return [IndexedSlices(cast(grad.values, src), grad.indices, grad.dense_shape)]
    return [cast(grad, src)]


op_registry.register_op(
    "Cast",
    infer=lambda op: [(op.get_attr("DstT"), op.inputs[0].shape)],
    kernel=_cast_kernel,
    grad=_cast_grad,
)


def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    """Converts ``x`` to ``dtype`` (floats to ints truncate toward zero); returns ``x`` itself if it already is.

    ``IndexedSlices`` keep their indices and have their values cast.

    Raises:
        TypeError: a cast to or from ``string``, which TF does not support.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.cast([1.7, -1.7], tf.int32)))
        [ 1 -1]
    """
    base = dtypes.as_dtype(dtype)
    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, base, name=name), x.indices, x.dense_shape)
    with name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype is base:
            return x
        if x.dtype.is_string or base.is_string:
            raise TypeError(f"Cast {x.dtype.name} to {base.name} is not supported")
        return make_op("Cast", [x], {"SrcT": x.dtype, "DstT": base, "Truncate": False}, name=scope).outputs[0]


def _shorthand(fn_name: str, dtype: dtypes.DType, default_name: str, example: str, prints: str) -> Callable[..., Any]:
    def cast_to(x: Any, name: str = default_name) -> Any:
        return cast(x, dtype, name=name)

    return table_builder(cast_to, fn_name, f"Casts ``x`` to {dtype.name} (see :func:`cast`).", example, prints)


to_float = _shorthand("to_float", dtypes.float32, "ToFloat", "[1, 2]", "[1. 2.]")
to_double = _shorthand("to_double", dtypes.float64, "ToDouble", "[1, 2]", "[1. 2.]")
to_int32 = _shorthand("to_int32", dtypes.int32, "ToInt32", "[1.5, -2.5]", "[ 1 -2]")
to_int64 = _shorthand("to_int64", dtypes.int64, "ToInt64", "[7]", "[7]")
