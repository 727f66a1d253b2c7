"""TF1's control-flow primitives: ``Switch``, ``Merge``, ``Enter``, ``Exit``, ``NextIteration``, ``LoopCond``.

``tf.cond`` and ``tf.while_loop`` are built from these, exactly as in TF1, so graphs export and import
like TF's. The executor runs them itself (:mod:`dtf_notebook.runtime.dataflow`): ``Switch`` sends its
data to one output and a dead value to the other, ``Merge`` forwards the first live input, ``Enter`` /
``Exit`` move values into and out of a loop's frame, ``NextIteration`` into the next iteration. The
``Ref*`` variants forward a variable itself (so an ``assign`` inside a branch updates the variable).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant(3.0)
    ...     on_false, on_true = switch(x, tf.constant(True))
    ...     value, index = merge([on_false * 10.0, on_true * 2.0])
    ...     with tf.Session() as sess:
    ...         print(sess.run([value, index]))
    [np.float32(6.0), np.int32(1)]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import colocate_with
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.ops.op_helpers import make_op, same_as_input

__all__ = ["switch", "ref_switch", "merge", "enter", "exit", "next_iteration", "loop_cond"]


def _identity_kernel(op: Any, ctx: Any) -> Any:
    return lambda x: x


def _switch_infer(op: Any) -> list:
    data, pred = op.inputs
    pred.shape.assert_is_compatible_with(TensorShape([]))
    return [(data.dtype, data.shape), (data.dtype, data.shape)]


def _merge_shape(shapes: list[TensorShape]) -> TensorShape:
    """The most specific shape every input is compatible with (TF's Merge shape function)."""
    first = shapes[0]
    if first.ndims is None or any(s.ndims != first.ndims for s in shapes):
        return unknown_shape()
    dims = []
    for i in range(first.ndims):
        values = {s.as_list()[i] for s in shapes}
        dims.append(values.pop() if len(values) == 1 else None)
    return TensorShape(dims)


def _merge_infer(op: Any) -> list:
    inputs = op.inputs
    dtype = inputs[0].dtype
    for t in inputs[1:]:
        if t.dtype != dtype:
            raise TypeError(f"Merge inputs must all have one type, got {dtype.name} and {t.dtype.name}")
    return [(dtype, _merge_shape([t.shape for t in inputs])), (dtypes.int32, TensorShape([]))]


def _enter_infer(op: Any) -> list:
    x = op.inputs[0]
    # TF: a constant Enter keeps its input's shape; a loop variable's Enter is set by the loop builder.
    return [(x.dtype, x.shape if op.get_attr("is_constant") else unknown_shape())]


def _loop_cond_infer(op: Any) -> list:
    pred = op.inputs[0]
    if pred.dtype != dtypes.bool:
        raise TypeError(f"LoopCond takes a bool scalar, got {pred.dtype.name}")
    pred.shape.assert_is_compatible_with(TensorShape([]))
    return [(dtypes.bool, TensorShape([]))]


# Kernels are never called for the five executor-run kinds; registering one keeps the compiler uniform.
for _type, _infer, _refs in (
    ("Switch", _switch_infer, False),
    ("RefSwitch", _switch_infer, True),
    ("Merge", _merge_infer, False),
    ("RefMerge", _merge_infer, True),
    ("Enter", _enter_infer, False),
    ("RefEnter", _enter_infer, True),
    ("Exit", same_as_input, False),
    ("RefExit", same_as_input, True),
    ("NextIteration", same_as_input, False),
    ("RefNextIteration", same_as_input, True),
):
    _n_outputs = 2 if "Switch" in _type else 1
    op_registry.register_op(
        _type,
        infer=_infer,
        kernel=_identity_kernel,
        ref_inputs=(range(64) if "Merge" in _type else (0,)) if _refs else (),  # a RefMerge takes N refs
        ref_outputs=range(_n_outputs) if _refs else (),
    )
op_registry.register_op(
    "LoopCond", infer=_loop_cond_infer, kernel=_identity_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)


def switch(data: Any, pred: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(output_false, output_true)``: ``data`` on the output ``pred`` picks, a dead value on the other.

    A variable (a reference) is forwarded by reference through ``RefSwitch``, colocated with it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     f, t = switch(tf.constant(1.0), tf.constant(False))
        >>> f.op.type, f.name, t.name
        ('Switch', 'Switch:0', 'Switch:1')
    """
    data = convert_to_tensor(data) if not isinstance(data, Tensor) else data
    pred = convert_to_tensor(pred, dtype=dtypes.bool)
    if data.is_ref:
        return ref_switch(data, pred, name)
    with colocate_with(data.op, ignore_existing=True):
        op = make_op("Switch", [data, pred], name=name or "Switch")
    return op.outputs[0], op.outputs[1]


def ref_switch(data: Tensor, pred: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``switch`` for a variable itself: both outputs are references to it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0)
        ...     f, t = ref_switch(v._variable, tf.constant(True))
        >>> f.op.type, t.is_ref
        ('RefSwitch', True)
    """
    pred = convert_to_tensor(pred, dtype=dtypes.bool)
    with colocate_with(data.op, ignore_existing=True):
        op = make_op("RefSwitch", [data, pred], name=name or "RefSwitch")
    return op.outputs[0], op.outputs[1]


def merge(inputs: list[Any], name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(output, value_index)``: the first of ``inputs`` to be live, and its position.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     out, index = merge([tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])])
        >>> out.shape, index.dtype.name
        (TensorShape([2]), 'int32')
    """
    tensors = [convert_to_tensor(x) for x in inputs]
    op_type = "RefMerge" if all(t.is_ref for t in tensors) else "Merge"
    op = make_op(op_type, tensors, {"N": len(tensors), "T": tensors[0].dtype}, name=name or "Merge")
    return op.outputs[0], op.outputs[1]


def enter(
    data: Any,
    frame_name: str,
    is_constant: bool = False,
    parallel_iterations: int = 10,
    use_input_shape: bool = True,
    name: str | None = None,
) -> Tensor:
    """``data`` made available in the child frame ``frame_name`` (a loop); a constant one in every iteration.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     e = enter(tf.constant([1.0]), "loop", is_constant=True)
        >>> e.op.get_attr("frame_name"), e.shape
        ('loop', TensorShape([1]))
    """
    data = convert_to_tensor(data) if not isinstance(data, Tensor) else data
    op_type = "RefEnter" if data.is_ref else "Enter"
    attrs = {
        "T": data.dtype,
        "frame_name": frame_name,
        "is_constant": bool(is_constant),
        "parallel_iterations": int(parallel_iterations),
    }
    if data.is_ref:
        with colocate_with(data.op, ignore_existing=True):
            out = make_op(op_type, [data], attrs, name=name or "Enter").outputs[0]
    else:
        out = make_op(op_type, [data], attrs, name=name or "Enter").outputs[0]
    if use_input_shape:
        out.set_shape(data.shape)
    return out


def exit(data: Any, name: str | None = None) -> Tensor:  # noqa: A001 - TF's name
    """``data`` moved from a loop's frame to the enclosing one.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     exit(tf.constant(1.0)).op.type
        'Exit'
    """
    data = convert_to_tensor(data) if not isinstance(data, Tensor) else data
    op_type = "RefExit" if data.is_ref else "Exit"
    return make_op(op_type, [data], {"T": data.dtype}, name=name or "Exit").outputs[0]


def next_iteration(data: Any, name: str | None = None) -> Tensor:
    """``data`` made available to the next iteration of its loop.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     next_iteration(tf.constant(1.0)).op.type
        'NextIteration'
    """
    data = convert_to_tensor(data) if not isinstance(data, Tensor) else data
    op_type = "RefNextIteration" if data.is_ref else "NextIteration"
    return make_op(op_type, [data], {"T": data.dtype}, name=name or "NextIteration").outputs[0]


def loop_cond(pred: Any, name: str | None = None) -> Tensor:
    """Marks ``pred`` as a loop's condition (the ``Switch``\\ es of the loop variables take it).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     loop_cond(tf.constant(True), name="LoopCond").name
        'LoopCond:0'
    """
    return make_op("LoopCond", [convert_to_tensor(pred, dtype=dtypes.bool)], name=name or "LoopCond").outputs[0]
