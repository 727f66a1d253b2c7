"""Sums of many parts: ``AddN`` (a list of same-shaped tensors) and ``UnsortedSegmentSum`` (rows by segment id).

The gradient machinery uses both: ``add_n`` adds the gradients reaching one tensor,
``unsorted_segment_sum`` turns IndexedSlices into dense rows.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     rows = tf.constant([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    ...     print(sess.run(add_n([unsorted_segment_sum(rows, [1, 0, 1], 2), tf.ones([2, 2])])))
    [[3. 3.]
     [5. 5.]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.identity_ops import identity
from dtf_notebook.ops.math._common import INDEX, REAL, array_ops, dense, fmt_shape
from dtf_notebook.ops.math.binary import maximum
from dtf_notebook.ops.math.compare import greater_equal
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op


# ---- add_n ---------------------------------------------------------------------------------------------
def _add_n_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    shape = unknown_shape()
    for t in op.inputs:
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            shapes = ", ".join(fmt_shape(i.shape) for i in op.inputs)
            raise ValueError(f"Shapes must all be equal for AddN, got input shapes: {shapes}.") from None
    return [(op.inputs[0].dtype, shape)]


def _add_n_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    if len(op.inputs) == 2:
        return torch.add

    def run(*values: torch.Tensor) -> torch.Tensor:
        total = torch.add(values[0], values[1])
        for v in values[2:]:
            total.add_(v)  # `total` is this kernel's own buffer, never an input
        return total

    return run


op_registry.register_op("AddN", infer=_add_n_infer, kernel=_add_n_kernel, grad=lambda op, grad: [grad] * len(op.inputs))


def add_n(inputs: Sequence[Any], name: str | None = None) -> Tensor:
    """Sums a list of tensors of one dtype and shape (IndexedSlices are made dense first).

    Raises:
        ValueError: ``inputs`` is empty, or shapes differ.
        TypeError: dtypes differ.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.add_n([[1, 2], [3, 4], [5, 6]])))
        [ 9 12]
    """
    if not isinstance(inputs, list | tuple) or not inputs:
        raise ValueError(
            "Inputs must be an iterable of at least one Tensor/IndexedSlices with the same dtype and shape."
        )
    tensors = [convert_to_tensor(t) for t in inputs]
    kinds = {t.dtype for t in tensors}
    if len(kinds) > 1:
        names = ", ".join(t.dtype.name for t in tensors)
        raise TypeError(f"Tensors in list passed to 'inputs' of 'AddN' Op have types [{names}] that don't all match.")
    if len(tensors) == 1:
        return identity(tensors[0], name=name) if name else tensors[0]
    check_dtype(tensors[0], REAL + (dtypes.complex64, dtypes.complex128), "AddN", "inputs")  # complex: gradient sums
    return make_op("AddN", tensors, {"N": len(tensors)}, name=name or "AddN").outputs[0]


# ---- unsorted_segment_sum ------------------------------------------------------------------------------
def _segment_sum_infer(op: Operation) -> list[tuple[dtypes.DType, TensorShape]]:
    data, ids, num = op.inputs
    n = constant_value(num)
    first = int(n) if n is not None else None
    if data.shape.ndims is None or ids.shape.ndims is None:
        return [(data.dtype, unknown_shape())]
    k = ids.shape.ndims
    if not data.shape[:k].is_compatible_with(ids.shape):
        raise ValueError(
            f"data.shape = {fmt_shape(data.shape)} does not start with segment_ids.shape = {fmt_shape(ids.shape)}"
        )
    return [(data.dtype, TensorShape([first] + data.shape.as_list()[k:]))]


def _segment_sum_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    fixed = constant_value(op.inputs[2])
    fixed = int(fixed) if fixed is not None else None

    def run(data: torch.Tensor, ids: torch.Tensor, num: torch.Tensor) -> torch.Tensor:
        n = fixed if fixed is not None else int(num)
        k = ids.dim()
        if tuple(data.shape[:k]) != tuple(ids.shape):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"data.shape = {list(data.shape)} does not start with segment_ids.shape = {list(ids.shape)}",
            )
        inner = tuple(data.shape[k:])
        flat_ids = ids.reshape(-1).to(torch.int64)
        rows = data.reshape((flat_ids.numel(),) + inner)
        out = torch.zeros((n,) + inner, dtype=data.dtype, device=data.device)
        if flat_ids.numel():
            low, high = (int(v) for v in torch.aminmax(flat_ids))
            if high >= n:
                i = int(torch.nonzero(flat_ids >= n)[0, 0])
                raise errors.InvalidArgumentError(
                    None, None, f"segment_ids[{i}] = {int(flat_ids[i])} is out of range [0, {n})"
                )
            if low < 0:  # TF drops entries with a negative segment id
                keep = flat_ids >= 0
                flat_ids, rows = flat_ids[keep], rows[keep]
            out.index_add_(0, flat_ids, rows)
        return out

    return run


def _segment_sum_grad(op: Operation, grad: Any) -> list[Any]:
    grad = dense(grad)
    ids = op.inputs[1]
    ao = array_ops()
    static_ids = constant_value(ids)
    if static_ids is not None and (static_ids >= 0).all():
        return [ao.gather(grad, ids), None, None]
    # Rows whose segment id is negative were dropped, so their gradient is zero. A vector condition
    # selects whole rows, so the ids are flattened for the select and the result reshaped back.
    flat_ids = ids if ids.shape.ndims == 1 else ao.reshape(ids, [-1])
    gathered = ao.gather(grad, maximum(flat_ids, 0))
    picked = where(greater_equal(flat_ids, 0), gathered, ao.zeros_like(gathered))
    if ids.shape.ndims == 1:
        return [picked, None, None]
    return [ao.reshape(picked, ao.concat([ao.shape(ids), ao.shape(grad)[1:]], 0)), None, None]


op_registry.register_op(
    "UnsortedSegmentSum", infer=_segment_sum_infer, kernel=_segment_sum_kernel, grad=_segment_sum_grad
)


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Tensor:
    """Row ``i`` of the result is the sum of the rows of ``data`` whose ``segment_ids`` entry is ``i``.

    ``segment_ids`` has the shape of a prefix of ``data``'s shape; negative ids are dropped.

    Raises:
        InvalidArgumentError: (at run time) an id is ``>= num_segments``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 2, 0], 3)))
        [4. 0. 2.]
    """
    with name_scope(name, "UnsortedSegmentSum", [data, segment_ids, num_segments]) as scope:
        data = convert_to_tensor(data, name="data")
        check_dtype(data, REAL, "UnsortedSegmentSum", "data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        check_dtype(ids, INDEX, "UnsortedSegmentSum", "segment_ids")
        num = convert_to_tensor(num_segments, name="num_segments")
        check_dtype(num, INDEX, "UnsortedSegmentSum", "num_segments")
        return make_op("UnsortedSegmentSum", [data, ids, num], name=scope).outputs[0]
