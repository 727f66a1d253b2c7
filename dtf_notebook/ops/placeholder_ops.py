"""Placeholders: graph inputs fed at run time (``tf.placeholder``, ``tf.placeholder_with_default``).

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
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import attr_dtype_shape, make_op

__all__ = ["placeholder", "placeholder_with_default"]


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
