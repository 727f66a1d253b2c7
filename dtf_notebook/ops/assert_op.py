"""Run-time checks: ``tf.Assert`` (fails a step when a condition is false) and ``tf.check_numerics``.

Both raise ``InvalidArgumentError`` from the step that runs them, with TF's text: ``Assert`` writes
``assertion failed: [d1] [d2] ...`` with the first ``summarize`` elements of each data tensor.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.int32, [2])
    ...     check = tf.Assert(tf.reduce_all(x > 0), ["x must be positive:", x])
    ...     with tf.Session() as sess:
    ...         sess.run(check, {x: [1, -2]})
    Traceback (most recent call last):
        ...
    dtf_notebook.errors.InvalidArgumentError: assertion failed: [x must be positive:] [1 -2]
    ...
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.logging_ops import host_value
from dtf_notebook.ops.op_helpers import check_dtype, graph_of, make_op, no_outputs, same_as_input
from dtf_notebook.ops.tensor_summary import summarize as summarize_value

__all__ = ["Assert", "check_numerics"]


def _bool_condition(condition: Any) -> Tensor:
    if isinstance(condition, Tensor) or hasattr(condition, "_as_graph_element"):
        t = convert_to_tensor(condition)
        if t.dtype is not dtypes.bool:
            raise TypeError(
                f"Input 'condition' of 'Assert' Op has type {t.dtype.name} that does not match expected type of bool."
            )
        return t
    if not isinstance(condition, bool | np.bool_) and not (
        isinstance(condition, list | tuple | np.ndarray) and np.asarray(condition).dtype == np.bool_
    ):
        kind = type(condition).__name__
        raise TypeError(
            f"Expected bool passed to parameter 'condition' of op 'Assert', got {condition!r} of type '{kind}' "
            f"instead. Error: Expected bool, but got {condition!r} of type '{kind}'."
        )
    return convert_to_tensor(condition, dtype=dtypes.bool, name="condition")


def Assert(condition: Any, data: Any, summarize: int | None = None, name: str | None = None) -> Operation:  # noqa: N802
    """Returns an ``Assert`` op that fails the step with ``InvalidArgumentError`` when ``condition`` is False.

    The message is ``assertion failed: `` and each item of ``data`` as ``[...]`` with its first ``summarize``
    elements (3 by default, all when negative). ``condition`` must be a bool scalar when the op runs.
    (TF1 wraps an Assert whose data is not all int32 and string in a ``cond``; here it is always a plain
    ``Assert`` op, which checks and fails the same way.)

    Raises:
        TypeError: ``condition`` is not bool.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     op = tf.Assert(tf.constant(True), ["never printed"])
        ...     with tf.Session() as sess:
        ...         sess.run(op)
        >>> op.name, op.type
        ('Assert/Assert', 'Assert')
    """
    items = list(data) if isinstance(data, list | tuple) else [data]
    graph = graph_of([condition, *items])
    with graph.as_default(), name_scope(name, "Assert", [condition, items]), name_scope("Assert") as scope:
        cond = _bool_condition(condition)
        tensors = [convert_to_tensor(d, name=f"data_{i}") for i, d in enumerate(items)]
        attrs = {"T": [t.dtype for t in tensors], "summarize": 3 if summarize is None else int(summarize)}
        return make_op("Assert", [cond, *tensors], attrs, name=scope)


def _assert_kernel(op: Operation, ctx: Any):
    summarize = op.get_attr("summarize")

    def run(condition: Any, *data: Any) -> None:
        cond = host_value(condition)
        if cond.size != 1 or cond.ndim > 1:
            shape = ",".join(str(d) for d in cond.shape)
            raise errors.InvalidArgumentError(None, op, f"In[0] should be a scalar: [{shape}]")
        if bool(cond.reshape(-1)[0]):
            return
        parts = " ".join(f"[{summarize_value(host_value(d), summarize)}]" for d in data)
        raise errors.InvalidArgumentError(None, op, f"assertion failed: {parts}")

    return run


op_registry.register_op(
    "Assert", infer=no_outputs, kernel=_assert_kernel, grad=op_registry.NOT_DIFFERENTIABLE, stateful=True, cpu_only=True
)


_FLOATS = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Tensor:
    """Returns ``tensor`` unchanged; the step fails with ``InvalidArgumentError`` if it holds a NaN or an Inf.

    The error reads ``<message> : Tensor had NaN values`` (or ``Inf``, or ``Inf and NaN``). The gradient
    is checked too, with ``message`` after TF's prefix for gradients.

    Raises:
        TypeError: ``tensor`` is not a float tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.placeholder(tf.float32)
        ...     y = tf.check_numerics(tf.log(x), "log of x")
        ...     with tf.Session() as sess:
        ...         sess.run(y, {x: -1.0})
        Traceback (most recent call last):
            ...
        dtf_notebook.errors.InvalidArgumentError: log of x : Tensor had NaN values
        ...
    """
    graph = graph_of([tensor]) if isinstance(tensor, Tensor) else get_default_graph()
    with graph.as_default():
        t = convert_to_tensor(tensor)
        check_dtype(t, _FLOATS, "CheckNumerics", "tensor")
        return make_op(
            "CheckNumerics", [t], {"T": t.dtype, "message": str(message)}, name=name or "CheckNumerics"
        ).outputs[0]


def _check_numerics_kernel(op: Operation, ctx: Any):
    message = op.get_attr("message")

    def run(x: Any) -> Any:
        if isinstance(x, torch.Tensor):  # checked where it lives: no copy of a GPU tensor to the host
            nan, inf = bool(torch.isnan(x).any()), bool(torch.isinf(x).any())
        else:
            nan, inf = bool(np.isnan(x).any()), bool(np.isinf(x).any())
        if nan or inf:
            found = "Inf and NaN" if nan and inf else ("NaN" if nan else "Inf")
            raise errors.InvalidArgumentError(None, op, f"{message} : Tensor had {found} values")
        return x

    return run


def _check_numerics_grad(op: Operation, grad: Any) -> list[Any]:
    prefix = "Not a number (NaN) or infinity (Inf) values detected in gradient. "
    return [check_numerics(grad, prefix + op.get_attr("message"))]


op_registry.register_op(
    "CheckNumerics", infer=same_as_input, kernel=_check_numerics_kernel, grad=_check_numerics_grad, stateful=True
)
