"""TF1's eleven ``TensorArray*V3`` ops: registry entries (shape inference, kernel) and their raw builders.

``TensorArrayV3`` outputs a ``resource`` handle (taken by reference, so every op using it is placed with
it) and a float *flow* scalar. The ops that change the array take a flow and return a new one, and the
ops that read it take one too: chaining flows orders the reads after the writes, and gives gradients a
path to follow. The kernels work on :class:`~.storage.TensorArrayStorage`; each run of ``TensorArrayV3``
makes a fresh one on its device, so an array lives for one step, as in TF1.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     handle, flow = tensor_array_v3(tf.float32, 2)
    ...     flow = write_v3(handle, 0, tf.constant(1.5), flow)
    ...     value = read_v3(handle, 0, flow, tf.float32)
    ...     with tf.Session() as sess:
    ...         print(sess.run(value))
    1.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar, unknown_shape, vector
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.array.common import op_scope, to_list
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.tensor_array.storage import (
    TensorArrayStorage,
    concat_values,
    shape_string,
    stack_values,
    unique_name,
)
from dtf_notebook.runtime.values import torch_dtype

__all__ = [
    "tensor_array_v3",
    "grad_v3",
    "write_v3",
    "read_v3",
    "gather_v3",
    "scatter_v3",
    "concat_v3",
    "split_v3",
    "size_v3",
    "close_v3",
]

_HANDLE = (dtypes.resource, TensorShape([2]))
_FLOW = (dtypes.float32, scalar())
# Ops that pass a handle through unchanged: shape inference looks through them to the array's op.
_FORWARDING = frozenset(
    {"Identity", "RefIdentity", "Enter", "RefEnter", "Exit", "RefExit", "Switch", "RefSwitch", "Merge", "RefMerge"}
    | {"NextIteration", "RefNextIteration"}
)


# ---- shape inference ---------------------------------------------------------------------------------
def _with_rank(t: Tensor, rank: int, op: Operation, what: str) -> TensorShape:
    if t.shape.ndims not in (None, rank):
        raise ValueError(f"Shape must be rank {rank} but is rank {t.shape.ndims} for {what} of '{op.name}' ({op.type})")
    return t.shape if t.shape.ndims is not None else unknown_shape(rank)


def handle_element_shape(handle: Tensor) -> TensorShape | None:
    """The element shape a handle's array declares (TF's handle shape data), None when it declares none.

    TF records it when the array's ``element_shape`` is fully defined or its elements must all have one
    shape (``identical_element_shapes``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, _ = tensor_array_v3(tf.float32, 3, element_shape=[None, 2], identical_element_shapes=True)
        >>> handle_element_shape(handle)
        TensorShape([None, 2])
    """
    op = handle.op
    seen = 0
    while op.type in _FORWARDING and op.inputs and seen < 1000:
        op, seen = op.inputs[0].op, seen + 1
    if op.type == "TensorArrayGradV3":  # a gradient array's elements have the forward array's shape
        return handle_element_shape(op.inputs[0])
    if op.type != "TensorArrayV3":
        return None
    shape = TensorShape(op.get_attr("element_shape"))
    return shape if shape.is_fully_defined() or op.get_attr("identical_element_shapes") else None


def _tensor_array_infer(op: Operation) -> list:
    _with_rank(op.inputs[0], 0, op, "size")
    return [_HANDLE, _FLOW]


def _grad_infer(op: Operation) -> list:
    return [_HANDLE, _FLOW]


def _write_infer(op: Operation) -> list:
    _with_rank(op.inputs[1], 0, op, "index")
    _with_rank(op.inputs[3], 0, op, "flow_in")
    return [_FLOW]


def _read_infer(op: Operation) -> list:
    _with_rank(op.inputs[1], 0, op, "index")
    shape = handle_element_shape(op.inputs[0])
    return [(op.get_attr("dtype"), shape if shape is not None else unknown_shape())]


def _gather_infer(op: Operation) -> list:
    indices = _with_rank(op.inputs[1], 1, op, "indices")
    shape = handle_element_shape(op.inputs[0])
    if shape is None:
        shape = TensorShape(op.get_attr("element_shape"))
    return [(op.get_attr("dtype"), indices.concatenate(shape))]


def _scatter_infer(op: Operation) -> list:
    _with_rank(op.inputs[1], 1, op, "indices")
    if op.inputs[2].shape.ndims == 0:
        raise ValueError(f"Shape must be at least rank 1 but is rank 0 for value of '{op.name}' ({op.type})")
    return [_FLOW]


def _concat_infer(op: Operation) -> list:
    return [(op.get_attr("dtype"), unknown_shape()), (dtypes.int64, vector(None))]


def _split_infer(op: Operation) -> list:
    _with_rank(op.inputs[2], 1, op, "lengths")
    return [_FLOW]


# ---- kernels -----------------------------------------------------------------------------------------
def _tensor_array_kernel(op: Operation, ctx: Any) -> Callable[[Any], Any]:
    dtype = op.get_attr("dtype")
    element_shape = TensorShape(op.get_attr("element_shape"))
    identical = bool(op.get_attr("identical_element_shapes"))
    dynamic = bool(op.get_attr("dynamic_size"))
    clear = bool(op.get_attr("clear_after_read"))
    base = op.get_attr("tensor_array_name") or op.name
    device = ctx.device
    flow = torch.zeros((), dtype=torch.float32, device=device)

    def run(size: Any) -> tuple[TensorArrayStorage, Any]:
        if size.dim() != 0:
            raise errors.InvalidArgumentError(
                None, None, f"TensorArray size must be scalar, but had shape: {shape_string(size.shape)}"
            )
        n = int(size)
        if n < 0:
            raise errors.InvalidArgumentError(None, None, "Size should be >= 0.")
        array = TensorArrayStorage(unique_name(base), dtype, n, element_shape, identical, dynamic, clear, device)
        return array, flow

    return run


def _grad_kernel(op: Operation, ctx: Any) -> Callable[[Any, Any], Any]:
    source = op.get_attr("source")
    return lambda array, flow: (array.grad(source), flow)


def _write_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    value_dtype = op.get_attr("T")

    def run(array: TensorArrayStorage, index: Any, value: Any, flow: Any) -> Any:
        array.check_dtype(value_dtype, writing=True)
        array.write(int(index), value)
        return flow

    return run


def _read_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("dtype")

    def run(array: TensorArrayStorage, index: Any, flow: Any) -> Any:
        array.check_dtype(dtype, writing=False)
        return array.read_at(int(index))

    return run


def _empty(array: TensorArrayStorage, element_shape: TensorShape, what: str, action: str) -> Any:
    """The zero-element result of packing or concatenating nothing: needs a fully known element shape."""
    if not element_shape.is_fully_defined():
        raise errors.UnimplementedError(
            None,
            None,
            f"TensorArray has size zero, but {what} {shape_string(element_shape)} is not fully defined. Currently "
            f"only static shapes are supported when {action} zero-size TensorArrays.",
        )
    shape = (0, *element_shape.as_tuple())
    if array.dtype.is_string:
        return np.empty(shape, dtype=object)
    return torch.zeros(shape, dtype=torch_dtype(array.dtype), device=array.device)


def _gather_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("dtype")
    attr_shape = TensorShape(op.get_attr("element_shape"))

    def run(array: TensorArrayStorage, indices: Any, flow: Any) -> Any:
        array.check_dtype(dtype, writing=False)
        positions = to_list(indices)
        if not positions:  # only the op's own element shape counts, as in TF
            return _empty(array, attr_shape, "element shape", "packing")
        values = array.read_many(positions)
        first = tuple(values[0].shape)
        for i, value in enumerate(values[1:], 1):
            if tuple(value.shape) != first:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"TensorArray has inconsistent shapes.  Index 0 has shape: {shape_string(first)} but index {i} "
                    f"has shape: {shape_string(value.shape)}",
                )
        return stack_values(values)

    return run


def _scatter_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    value_dtype = op.get_attr("T")

    def run(array: TensorArrayStorage, indices: Any, value: Any, flow: Any) -> Any:
        array.check_dtype(value_dtype, writing=True)
        positions = to_list(indices)
        if len(positions) != value.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"Expected len(indices) == values.shape[0], but saw: {len(positions)} vs. {value.shape[0]}"
            )
        # Copies, as TF's kernel makes: the elements do not alias the scattered tensor.
        pieces = [
            value[i].clone() if isinstance(value, torch.Tensor) else np.array(value[i], dtype=object)
            for i in range(len(positions))
        ]
        array.write_many(positions, pieces)
        return flow

    return run


def _concat_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    dtype = op.get_attr("dtype")
    except0 = TensorShape(op.get_attr("element_shape_except0"))
    device = ctx.device

    def run(array: TensorArrayStorage, flow: Any) -> tuple[Any, Any]:
        array.check_dtype(dtype, writing=False)
        size = array.size()
        if size == 0:
            empty = _empty(array, except0, "element_shape_except0", "concatenating")
            return empty, torch.zeros(0, dtype=torch.int64, device=device)
        values = array.read_many(range(size))
        for i, value in enumerate(values):
            if value.ndim == 0:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Concat saw a scalar shape at index {i} but requires at least vectors.  Did you mean "
                    "to call pack?",
                )
        rest = tuple(values[0].shape[1:])
        for i, value in enumerate(values[1:], 1):
            if tuple(value.shape[1:]) != rest:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: "
                    f"{shape_string(rest)} but index {i} has (excepting dimension 0) shape: "
                    f"{shape_string(value.shape[1:])}",
                )
        lengths = torch.tensor([value.shape[0] for value in values], dtype=torch.int64, device=device)
        return concat_values(values), lengths

    return run


def _split_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    value_dtype = op.get_attr("T")

    def run(array: TensorArrayStorage, value: Any, lengths: Any, flow: Any) -> Any:
        array.check_dtype(value_dtype, writing=True)
        if value.ndim == 0:
            raise errors.InvalidArgumentError(
                None, None, f"Expected value to be at least a vector, but received shape: {shape_string(value.shape)}"
            )
        sizes = to_list(lengths)
        if sum(sizes) != value.shape[0]:
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is {sum(sizes)} and "
                f"value's shape is: {shape_string(value.shape)}",
            )
        current = array.size()
        if not array.dynamic_size and current != len(sizes):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"TensorArray's size is not equal to the size of lengths ({current} vs. {len(sizes)}), and the "
                "TensorArray is not marked as dynamically resizeable",
            )
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        pieces = [value[s : s + n] for s, n in zip(starts, sizes)]
        pieces = [p.clone() if isinstance(p, torch.Tensor) else p.copy() for p in pieces]
        array.write_many(range(len(sizes)), pieces)
        return flow

    return run


def _size_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    device = ctx.device
    return lambda array, flow: torch.tensor(array.size(), dtype=torch.int32, device=device)


def _close_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    return lambda array: array.close()


_NOT_DIFFERENTIABLE = ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3")
for _type, _infer, _kernel, _refs in (
    ("TensorArrayV3", _tensor_array_infer, _tensor_array_kernel, False),
    ("TensorArrayGradV3", _grad_infer, _grad_kernel, True),
    ("TensorArrayWriteV3", _write_infer, _write_kernel, True),
    ("TensorArrayReadV3", _read_infer, _read_kernel, True),
    ("TensorArrayGatherV3", _gather_infer, _gather_kernel, True),
    ("TensorArrayScatterV3", _scatter_infer, _scatter_kernel, True),
    ("TensorArrayConcatV3", _concat_infer, _concat_kernel, True),
    ("TensorArraySplitV3", _split_infer, _split_kernel, True),
    ("TensorArraySizeV3", lambda op: [(dtypes.int32, scalar())], _size_kernel, True),
    ("TensorArrayCloseV3", lambda op: [], _close_kernel, True),
):
    # The handle goes by reference: the placer keeps every op using an array with the op that made it. Reads
    # and writes get their gradients in .grads; the others have none (TF1's NotDifferentiable).
    op_registry.register_op(
        _type,
        infer=_infer,
        kernel=_kernel,
        grad=op_registry.NOT_DIFFERENTIABLE if _type in _NOT_DIFFERENTIABLE else None,
        ref_inputs=(0,) if _refs else (),
        ref_outputs=(0,) if _type in ("TensorArrayV3", "TensorArrayGradV3") else (),
        stateful=True,
    )


# ---- raw builders (TF's gen_data_flow_ops) -----------------------------------------------------------
def _index(value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    return convert_to_tensor(value, dtype=dtype, name=name)


def tensor_array_v3(
    dtype: Any,
    size: Any,
    element_shape: Any = None,
    identical_element_shapes: bool = False,
    dynamic_size: bool = False,
    clear_after_read: bool = True,
    tensor_array_name: str | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """A ``TensorArrayV3`` op: ``(handle, flow)`` of a new array of ``size`` elements.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 3, name="ta")
        >>> handle.dtype.name, handle.shape, flow.shape
        ('resource', TensorShape([2]), TensorShape([]))
    """
    with op_scope(name, "TensorArrayV3", [size]) as scope:
        size = _index(size, dtypes.int32, "size")
        attrs = {
            "dtype": dtypes.as_dtype(dtype),
            "element_shape": TensorShape(element_shape),
            "dynamic_size": bool(dynamic_size),
            "clear_after_read": bool(clear_after_read),
            "identical_element_shapes": bool(identical_element_shapes),
            "tensor_array_name": tensor_array_name or "",
        }
        op = make_op("TensorArrayV3", [size], attrs, name=scope)
    return op.outputs[0], op.outputs[1]


def grad_v3(handle: Tensor, flow_in: Any, source: str, name: str | None = None) -> tuple[Tensor, Tensor]:
    """A ``TensorArrayGradV3`` op: ``(grad_handle, flow_out)``, the gradient array of ``handle`` for ``source``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 3)
        ...     grad_handle, _ = grad_v3(handle, flow, "gradients")
        >>> grad_handle.op.get_attr("source")
        'gradients'
    """
    with op_scope(name, "TensorArrayGradV3", [handle, flow_in]) as scope:
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        op = make_op("TensorArrayGradV3", [handle, flow_in], {"source": source}, name=scope)
    return op.outputs[0], op.outputs[1]


def write_v3(handle: Tensor, index: Any, value: Tensor, flow_in: Any, name: str | None = None) -> Tensor:
    """A ``TensorArrayWriteV3`` op: writes ``value`` at ``index``; returns the new flow.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 3)
        ...     write_v3(handle, 0, tf.constant(1.0), flow).op.type
        'TensorArrayWriteV3'
    """
    with op_scope(name, "TensorArrayWriteV3", [handle, index, value, flow_in]) as scope:
        index = _index(index, dtypes.int32, "index")
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        op = make_op("TensorArrayWriteV3", [handle, index, value, flow_in], {"T": value.dtype}, name=scope)
    return op.outputs[0]


def read_v3(handle: Tensor, index: Any, flow_in: Any, dtype: Any, name: str | None = None) -> Tensor:
    """A ``TensorArrayReadV3`` op: the element at ``index``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 3, element_shape=[2])
        ...     read_v3(handle, 0, flow, tf.float32).shape
        TensorShape([2])
    """
    with op_scope(name, "TensorArrayReadV3", [handle, index, flow_in]) as scope:
        index = _index(index, dtypes.int32, "index")
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        op = make_op("TensorArrayReadV3", [handle, index, flow_in], {"dtype": dtypes.as_dtype(dtype)}, name=scope)
    return op.outputs[0]


def gather_v3(
    handle: Tensor, indices: Any, flow_in: Any, dtype: Any, element_shape: Any = None, name: str | None = None
) -> Tensor:
    """A ``TensorArrayGatherV3`` op: the elements at ``indices``, stacked.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 3)
        ...     gather_v3(handle, [0, 2], flow, tf.float32, element_shape=[4]).shape
        TensorShape([2, 4])
    """
    with op_scope(name, "TensorArrayGatherV3", [handle, indices, flow_in]) as scope:
        indices = _index(indices, dtypes.int32, "indices")
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        attrs = {"dtype": dtypes.as_dtype(dtype), "element_shape": TensorShape(element_shape)}
        op = make_op("TensorArrayGatherV3", [handle, indices, flow_in], attrs, name=scope)
    return op.outputs[0]


def scatter_v3(handle: Tensor, indices: Any, value: Tensor, flow_in: Any, name: str | None = None) -> Tensor:
    """A ``TensorArrayScatterV3`` op: writes ``value[i]`` at ``indices[i]``; returns the new flow.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 2)
        ...     scatter_v3(handle, [1, 0], tf.constant([[1.0], [2.0]]), flow).op.type
        'TensorArrayScatterV3'
    """
    with op_scope(name, "TensorArrayScatterV3", [handle, indices, value, flow_in]) as scope:
        indices = _index(indices, dtypes.int32, "indices")
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        op = make_op("TensorArrayScatterV3", [handle, indices, value, flow_in], {"T": value.dtype}, name=scope)
    return op.outputs[0]


def concat_v3(
    handle: Tensor, flow_in: Any, dtype: Any, element_shape_except0: Any = None, name: str | None = None
) -> tuple[Tensor, Tensor]:
    """A ``TensorArrayConcatV3`` op: ``(value, lengths)``, the elements joined along axis 0 and their lengths.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 2)
        ...     value, lengths = concat_v3(handle, flow, tf.float32)
        >>> lengths.dtype.name
        'int64'
    """
    with op_scope(name, "TensorArrayConcatV3", [handle, flow_in]) as scope:
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        attrs = {"dtype": dtypes.as_dtype(dtype), "element_shape_except0": TensorShape(element_shape_except0)}
        op = make_op("TensorArrayConcatV3", [handle, flow_in], attrs, name=scope)
    return op.outputs[0], op.outputs[1]


def split_v3(handle: Tensor, value: Tensor, lengths: Any, flow_in: Any, name: str | None = None) -> Tensor:
    """A ``TensorArraySplitV3`` op: writes consecutive pieces of ``value`` (``lengths`` rows each); the new flow.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 2)
        ...     split_v3(handle, tf.constant([1.0, 2.0, 3.0]), tf.constant([1, 2], tf.int64), flow).op.type
        'TensorArraySplitV3'
    """
    with op_scope(name, "TensorArraySplitV3", [handle, value, lengths, flow_in]) as scope:
        lengths = _index(lengths, dtypes.int64, "lengths")
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        op = make_op("TensorArraySplitV3", [handle, value, lengths, flow_in], {"T": value.dtype}, name=scope)
    return op.outputs[0]


def size_v3(handle: Tensor, flow_in: Any, name: str | None = None) -> Tensor:
    """A ``TensorArraySizeV3`` op: the array's current size (int32).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, flow = tensor_array_v3(tf.float32, 3, dynamic_size=True)
        ...     size = size_v3(handle, flow)
        ...     with tf.Session() as sess:
        ...         print(sess.run(size))
        3
    """
    with op_scope(name, "TensorArraySizeV3", [handle, flow_in]) as scope:
        flow_in = _index(flow_in, dtypes.float32, "flow_in")
        op = make_op("TensorArraySizeV3", [handle, flow_in], name=scope)
    return op.outputs[0]


def close_v3(handle: Tensor, name: str | None = None) -> Operation:
    """A ``TensorArrayCloseV3`` op: drops the array's elements; later uses fail.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     handle, _ = tensor_array_v3(tf.float32, 3)
        ...     close_v3(handle).type
        'TensorArrayCloseV3'
    """
    with op_scope(name, "TensorArrayCloseV3", [handle]) as scope:
        return make_op("TensorArrayCloseV3", [handle], name=scope)
