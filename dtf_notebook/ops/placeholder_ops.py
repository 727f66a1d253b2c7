"""Placeholders: graph inputs fed at run time (``tf.placeholder``, ``tf.placeholder_with_default``,
``tf.sparse_placeholder``).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3], name="x")
    ...     with tf.Session() as sess:
    ...         print(sess.run(x * 2, {x: [[1, 2, 3]]}))
    [[2. 4. 6.]]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import attr_dtype_shape, make_op

__all__ = ["placeholder", "placeholder_with_default", "sparse_placeholder"]


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Tensor:
    """A tensor that must be fed with ``feed_dict`` on every run that needs it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.placeholder(tf.int64, [None]).shape.as_list()
        [None]
    """
    shape = TensorShape(shape)
    return make_op(
        "Placeholder", [], {"dtype": dtypes.as_dtype(dtype), "shape": shape.as_tuple()}, name=name or "Placeholder"
    ).outputs[0]


def _placeholder_kernel(op: Any, ctx: Any):
    def run() -> None:
        raise errors.InvalidArgumentError(
            None,
            op,
            f"You must feed a value for placeholder tensor '{op.name}' with dtype {op.get_attr('dtype').name}"
            + (f" and shape {TensorShape(op.get_attr('shape'))}" if op.get_attr("shape") is not None else ""),
        )

    return run


op_registry.register_op(
    "Placeholder", infer=attr_dtype_shape(), kernel=_placeholder_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """A placeholder that yields ``input`` when it is not fed.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     p = tf.placeholder_with_default(tf.constant([1.0, 2.0]), [None])
        ...     with tf.Session() as sess:
        ...         print(sess.run(p), sess.run(p, {p: [5.0]}))
        [1. 2.] [5.]
    """
    value = convert_to_tensor(input)
    shape = TensorShape(shape)
    if not value.shape.is_compatible_with(shape):
        raise ValueError(f"The default value of shape {value.shape} is not compatible with shape {shape}")
    return make_op(
        "PlaceholderWithDefault", [value], {"shape": shape.as_tuple()}, name=name or "PlaceholderWithDefault"
    ).outputs[0]


op_registry.register_op(
    "PlaceholderWithDefault",
    infer=lambda op: [(op.inputs[0].dtype, TensorShape(op.get_attr("shape")))],
    kernel=lambda op, ctx: lambda x: x,
    grad=lambda op, grad: [grad],
)


def sparse_placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> SparseTensor:
    """A SparseTensor to feed on every run (a ``SparseTensorValue`` or an ``(indices, values, dense_shape)``
    triple); TF1's ``tf.sparse_placeholder``.

    Args:
        dtype: Type of the values.
        shape: The dense shape (``None`` entries or -1: unknown); then ``dense_shape`` need not be fed.
            None: the shape must be fed too.
        name: Prefix of the placeholders' names (``name/values``, ``name/indices``, ``name/shape``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sp = tf.sparse_placeholder(tf.float32, shape=[None, 5])
        ...     total = tf.reduce_sum(sp.values)
        ...     with tf.Session() as sess:
        ...         print(sp.shape, sess.run(total, {sp: ([[0, 1], [3, 4]], [1.0, 2.0], [4, 5])}))
        (?, 5) 3.0
    """
    shape_name = f"{name}/shape" if name is not None else None
    if shape is None:
        dense_shape = placeholder(dtypes.int64, [None], name=shape_name)
        known = None
    else:
        dims = [None if d is None or d == -1 else int(d) for d in TensorShape(shape).as_list()]
        known = TensorShape(dims)
        default = convert_to_tensor(
            [-1 if d is None else d for d in dims],
            dtype=dtypes.int64,
            name=f"{name}/shape_default" if name is not None else None,
        )
        # Feedable (a constant would not be) yet known while building, through `known` below.
        dense_shape = placeholder_with_default(default, [len(dims)], name=shape_name)
    rank = None if known is None else known.ndims
    values = placeholder(dtype, [None], name=f"{name}/values" if name is not None else None)
    indices = placeholder(dtypes.int64, [None, rank], name=f"{name}/indices" if name is not None else None)
    result = SparseTensor(indices=indices, values=values, dense_shape=dense_shape)
    result._dense_shape_default = known
    return result
