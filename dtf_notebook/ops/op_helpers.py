"""Shared helpers for op modules: creating ops and common output-inference rules.

Every op module builds its public functions with :func:`make_op` and picks an
inference rule here when one fits, so that shape logic is written once.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     op = make_op("Identity", [tf.constant(1.0)], name="same")
    >>> op.outputs[0].name
    'same:0'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, broadcast_shapes
from dtf_notebook.framework.tensor_util import constant_value, shape_from_tensor  # noqa: F401 - the ops' names


def graph_of(values: Sequence[Any]) -> Graph:
    """The graph that the tensor-like ``values`` belong to (the default graph when none is a tensor).

    Example:
        >>> import dtf_notebook as tf
        >>> g = tf.Graph()
        >>> with g.as_default():
        ...     c = tf.constant(1.0)
        >>> graph_of([2.0, c]) is g, graph_of([2.0]) is tf.get_default_graph()
        (True, True)
    """
    default = get_default_graph()
    if getattr(default, "building_function", False):
        return default  # a function being traced (tf.data) captures the enclosing graphs' tensors it uses, as TF's
    for v in values:
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            return g
    return default


def make_op(
    op_type: str,
    inputs: Sequence[Any],
    attrs: dict[str, Any] | None = None,
    name: str | None = None,
    control_inputs: Sequence[Operation] | None = None,
) -> Operation:
    """Creates an op of ``op_type`` in the graph of its inputs; inputs must already be tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     make_op("NoOp", [], name="nothing").type
        'NoOp'
    """
    graph = graph_of(inputs)
    with graph.as_default():
        return graph.create_op(op_type, list(inputs), attrs or {}, name, list(control_inputs or ()))


def binary_operands(x: Any, y: Any, op_name: str) -> tuple[Tensor, Tensor]:
    """Converts the two operands of a binary op to tensors of one dtype (TF's rules).

    A Python value takes the dtype of the tensor operand; two tensors of
    different dtypes are a TypeError naming both.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x, y = binary_operands(tf.constant([1, 2]), 3, "Add")
        >>> x.dtype.name, y.dtype.name
        ('int32', 'int32')
    """
    if isinstance(x, Tensor) or not isinstance(y, Tensor):
        x = convert_to_tensor(x, name="x")
        y = _convert_like(y, x.dtype, op_name, "y", "x")
    else:
        y = convert_to_tensor(y, name="y")
        x = _convert_like(x, y.dtype, op_name, "x", "y")
    return x, y


def _convert_like(value: Any, dtype: dtypes.DType, op_name: str, arg: str, other: str) -> Tensor:
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        t = convert_to_tensor(value)
        if t.dtype is not dtype:
            raise TypeError(
                f"Input '{arg}' of '{op_name}' Op has type {t.dtype.name} that does not match "
                f"type {dtype.name} of argument '{other}'."
            )
        return t
    try:
        return convert_to_tensor(value, dtype=dtype, name=arg)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Cannot convert {value!r} to a tensor of type {dtype.name} for '{op_name}': {e}") from None


def check_dtype(t: Tensor, allowed: Sequence[dtypes.DType], op_name: str, arg: str = "x") -> None:
    """Raises TypeError when ``t``'s dtype is not among ``allowed`` (TF's message shape).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     check_dtype(tf.constant("a"), (tf.float32, tf.int32), "Sqrt")
        Traceback (most recent call last):
            ...
        TypeError: Value passed to parameter 'x' has DataType string not in list of allowed values: float32, int32
    """
    if t.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(
            f"Value passed to parameter '{arg}' has DataType {t.dtype.name} not in list of allowed values: {names}"
        )


# ---- inference rules --------------------------------------------------------------------------
def same_as_input(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    """One output with input 0's dtype and shape.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     same_as_input(make_op("Identity", [tf.constant([1.0, 2.0])]))
        [(tf.float32, TensorShape([2]))]
    """
    x = op.inputs[0]
    return [(x.dtype, x.shape)]


def broadcast_binary(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    """One output with input 0's dtype and the broadcast of both input shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     broadcast_binary(make_op("Add", [tf.zeros([2, 1]), tf.zeros([3])]))
        [(tf.float32, TensorShape([2, 3]))]
    """
    x, y = op.inputs[0], op.inputs[1]
    return [(x.dtype, broadcast_shapes(x.shape, y.shape))]


def incompatible_shapes_error(a: Any, b: Any) -> errors.InvalidArgumentError | None:
    """TF's run-time error for operands whose shapes do not broadcast together; None when they do.

    Example:
        >>> import numpy as np
        >>> incompatible_shapes_error(np.zeros([2, 3]), np.zeros([5, 1])).message
        'Incompatible shapes: [2,3] vs. [5,1]'
        >>> incompatible_shapes_error(np.zeros([2, 3]), np.zeros([3])) is None
        True
    """
    shape_a, shape_b = tuple(np.shape(a)), tuple(np.shape(b))
    try:
        np.broadcast_shapes(shape_a, shape_b)
        return None
    except ValueError:
        show = lambda shape: "[" + ",".join(str(d) for d in shape) + "]"
        return errors.InvalidArgumentError(None, None, f"Incompatible shapes: {show(shape_a)} vs. {show(shape_b)}")


def broadcasting_kernel(factory: Callable[[Operation, Any], Callable[..., Any]]) -> Callable[..., Callable[..., Any]]:
    """Wraps the kernel factory of a two-input elementwise op so that operands whose shapes do not broadcast (known
    only at run time) raise TF's ``InvalidArgumentError: Incompatible shapes: [3] vs. [2]`` instead of torch's or
    numpy's wording.

    Example:
        >>> import numpy as np
        >>> import dtf_notebook as tf
        >>> kernel = broadcasting_kernel(lambda op, ctx: np.add)(None, None)
        >>> kernel(np.ones([3]), np.ones([1])).tolist()
        [2.0, 2.0, 2.0]
        >>> kernel(np.ones([3]), np.ones([2]))
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.InvalidArgumentError: Incompatible shapes: [3] vs. [2]
    """

    def make(op: Operation, ctx: Any) -> Callable[..., Any]:
        fn = factory(op, ctx)

        def run(a: Any, b: Any, *rest: Any) -> Any:
            try:
                return fn(a, b, *rest)
            except (RuntimeError, ValueError) as e:
                error = incompatible_shapes_error(a, b)
                if error is None:
                    raise
                raise error from e

        return run

    return make


def broadcast_compare(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    """One bool output with the broadcast of both input shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     broadcast_compare(make_op("Less", [tf.zeros([2, 1]), tf.zeros([3])]))
        [(tf.bool, TensorShape([2, 3]))]
    """
    x, y = op.inputs[0], op.inputs[1]
    return [(dtypes.bool, broadcast_shapes(x.shape, y.shape))]


def attr_dtype_shape(dtype_attr: str = "dtype", shape_attr: str = "shape"):
    """A rule giving one output whose dtype and shape come from two attrs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     attr_dtype_shape()(tf.placeholder(tf.float32, [None, 3]).op)
        [(tf.float32, TensorShape([None, 3]))]
    """

    def infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
        shape = op.get_attr(shape_attr) if shape_attr in op.attrs else None
        return [(op.get_attr(dtype_attr), TensorShape(shape))]

    return infer


def no_outputs(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    """No outputs (NoOp, group, assignments used only for effect).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     no_outputs(tf.no_op())
        []
    """
    return []
