"""TF1's numerics and type helpers: ``tf.verify_tensor_all_finite``, ``tf.add_check_numerics_ops``,
``tf.assert_same_float_dtype``, ``tf.bitcast`` (``Bitcast``) and ``tf.guarantee_const`` (``GuaranteeConst``).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(bitcast(tf.constant([1.0], tf.float32), tf.int32)))
    [1065353216]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with, control_dependencies, get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.ops.assert_op import check_numerics
from dtf_notebook.ops.identity_ops import group
from dtf_notebook.ops.image.transforms import with_dependencies
from dtf_notebook.ops.op_helpers import make_op, same_as_input
from dtf_notebook.runtime.values import torch_dtype

__all__ = [
    "add_check_numerics_ops",
    "assert_same_float_dtype",
    "bitcast",
    "guarantee_const",
    "verify_tensor_all_finite",
]

_CHECKED = (dtypes.float16, dtypes.float32, dtypes.float64)


def verify_tensor_all_finite(
    t: Any = None, msg: Any = None, name: str | None = None, x: Any = None, message: Any = None
) -> Tensor:
    """``t`` (new name ``x``) after a ``CheckNumerics`` of it: the step fails with ``InvalidArgumentError`` naming
    ``msg`` (new name ``message``) if it holds a NaN or an Inf.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.verify_tensor_all_finite([1.0, 2.0], "finite")))
        [1. 2.]
    """
    if x is not None and t is not None:
        raise ValueError("Cannot specify both 'x' and 't'")
    if message is not None and msg is not None:
        raise ValueError("Cannot specify both 'message' and 'msg'")
    x = t if x is None else x
    message = msg if message is None else message
    with name_scope(name, "VerifyFinite", [x]) as scope:
        value = convert_to_tensor(x, name="x")
        with colocate_with(value):
            verified = check_numerics(value, message=message)
            return with_dependencies([verified], value, name=scope)


def add_check_numerics_ops() -> Operation:
    """An op that checks every float16/32/64 tensor of the default graph for NaN and Inf (in creation order, one
    check after the other), naming the tensor in the error.

    Raises:
        ValueError: the graph has control flow (``tf.cond``, ``tf.while_loop``), as in TF.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.placeholder(tf.float32)
        ...     y = tf.log(x, name="log")
        ...     check = tf.add_check_numerics_ops()
        ...     sess.run([y, check], {x: -1.0})
        Traceback (most recent call last):
            ...
        dtf_notebook.errors.InvalidArgumentError: log:0 : Tensor had NaN values
        ...
    """
    checks: list[Any] = []
    for op in get_default_graph().get_operations():
        for output in op.outputs:
            if output.dtype in _CHECKED and not output.is_ref:
                if op._get_control_flow_context() is not None:
                    raise ValueError(
                        "`tf.add_check_numerics_ops() is not compatible with TensorFlow control flow operations such "
                        "as `tf.cond()` or `tf.while_loop()`."
                    )
                with control_dependencies(checks):
                    checks = [check_numerics(output, message=f"{op.name}:{output.value_index}")]
    return group(*checks)


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> dtypes.DType:
    """The one float dtype of ``tensors`` (and ``dtype``, if given); float32 when there is none.

    Raises:
        ValueError: the tensors' dtypes differ, or the dtype is not a float type.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_same_float_dtype([tf.constant(1.0), tf.constant([2.0])]), tf.assert_same_float_dtype()
        (tf.float32, tf.float32)
    """
    expected = dtypes.as_dtype(dtype) if dtype is not None else None
    first = None
    for item in tensors or ():
        if item is None:
            continue
        item_type = item.dtype.base_dtype
        if expected is None:
            expected, first = item_type, getattr(item, "name", str(item))
        elif item_type is not expected:
            suffix = f" as {first}" if first else ""
            name = getattr(item, "name", str(item))
            raise ValueError(f"{name}, type={item_type!r}, must be of the same type ({expected!r}){suffix}.")
    if expected is None:
        return dtypes.float32
    if not expected.is_floating:
        raise ValueError(f"Expected floating point type, got {expected!r}.")
    return expected


# ---- Bitcast ---------------------------------------------------------------------------------------------------
def _bitcast_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    x, out = op.inputs[0], op.get_attr("type")
    if x.shape.ndims is None:
        return [(out, unknown_shape())]
    dims = x.shape.as_list()
    if x.dtype.size > out.size:
        dims = dims + [x.dtype.size // out.size]
    elif x.dtype.size < out.size:
        ratio = out.size // x.dtype.size
        if not dims or dims[-1] not in (None, ratio):
            raise ValueError(f"Cannot bitcast from {x.dtype.name} to {out.name}: the last dimension must be {ratio}")
        dims = dims[:-1]
    return [(out, TensorShape(dims))]


def _bitcast_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    src, dst = op.inputs[0].dtype, op.get_attr("type")
    target = torch_dtype(dst)

    def run(x: Any) -> Any:
        if src.size > dst.size:
            return x.reshape(*x.shape, 1).view(target)
        if src.size < dst.size:
            ratio = dst.size // src.size
            if x.dim() == 0 or x.shape[-1] != ratio:
                raise errors.InvalidArgumentError(None, op, f"Cannot bitcast: the last dimension must be {ratio}")
            return x.contiguous().view(target).squeeze(-1)
        return x.view(target)

    return run


op_registry.register_op("Bitcast", infer=_bitcast_infer, kernel=_bitcast_kernel)


def bitcast(input: Any, type: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's names
    """The bytes of ``input`` read as ``type``: the shape gains a last dimension when ``type`` is smaller (the size
    ratio) and loses one (which must be the ratio) when it is larger.

    Raises:
        TypeError: either type is a string (or has no fixed size).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.bitcast(tf.constant([258], tf.int32), tf.uint8)))
        [[2 1 0 0]]
    """
    x = convert_to_tensor(input, name="input")
    dst = dtypes.as_dtype(type)
    for t in (x.dtype, dst):
        if not t.size or t.is_quantized or t.is_string or t.is_bool:
            raise TypeError(f"Value passed to parameter 'type' has DataType {t.name}, which Bitcast does not support")
    return make_op("Bitcast", [x], {"T": x.dtype, "type": dst}, name=name or "Bitcast").outputs[0]


# ---- GuaranteeConst --------------------------------------------------------------------------------------------
op_registry.register_op("GuaranteeConst", infer=same_as_input, kernel=lambda op, ctx: lambda x: x)


def guarantee_const(input: Any, name: str | None = None) -> Tensor:  # noqa: A002 - TF's name
    """``input`` itself, promising that it is constant over the session (TF may fold it; here it is an identity
    without a gradient, as in TF).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.guarantee_const([1, 2])))
        [1 2]
    """
    x = convert_to_tensor(input, name="input")
    return make_op("GuaranteeConst", [x], {"T": x.dtype}, name=name or "GuaranteeConst").outputs[0]
