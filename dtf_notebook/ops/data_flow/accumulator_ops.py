"""Accumulator ops and ``tf.ConditionalAccumulator`` / ``tf.SparseConditionalAccumulator``.

An accumulator sums gradients until ``take_grad(n)`` finds at least ``n`` of them, then returns their
average and advances its global step; gradients computed at an older ``local_step`` are dropped
(see :mod:`dtf_notebook.runtime.accumulators`). ``SyncReplicasOptimizer`` keeps one per variable on the
variable's task. Op types and default names follow TF1 (1.13 and later): a dense accumulator is a
``ResourceConditionalAccumulator`` used by ``ResourceAccumulatorApplyGradient``,
``ResourceAccumulatorTakeGradient``, ``ResourceAccumulatorNumAccumulated`` and
``ResourceAccumulatorSetGlobalStep``; being a standard ps op, it is placed on a ps task by
``replica_device_setter``. A sparse one stays reference-typed, as in TF: ``SparseConditionalAccumulator``
with ``SparseAccumulatorApplyGradient``, ``SparseAccumulatorTakeGradient``, ``AccumulatorNumAccumulated``
and ``AccumulatorSetGlobalStep``, left with the worker by the device setter unless pinned. The older
reference-typed dense ops (``ConditionalAccumulator``, ``AccumulatorApplyGradient``, ...) still run,
for graph defs written by older TF versions. Every handle here is this project's string reference
(see :mod:`~dtf_notebook.ops.data_flow.common`), the ``Resource`` ops' included.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     acc = ConditionalAccumulator(tf.float32, shape=[2])
    ...     apply = [acc.apply_grad([1.0, 2.0]), acc.apply_grad([3.0, 6.0])]
    ...     avg = acc.take_grad(2)
    ...     with tf.Session() as sess:
    ...         _ = sess.run(apply)
    ...         print(sess.run(avg))
    [2. 4.]
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.data_flow.common import (
    HANDLE_SPEC,
    expect_resource,
    handle_attr,
    handle_kernel,
    register_handle_op,
    register_handle_user,
    using_handle,
)
from dtf_notebook.ops.math.cast import cast
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.accumulators import (
    REDUCTION_TYPES,
    AccumulatorBase,
    ConditionalAccumulatorResource,
    SparseConditionalAccumulatorResource,
)

__all__ = ["ConditionalAccumulatorBase", "ConditionalAccumulator", "SparseConditionalAccumulator"]

_ACCUMULATOR_OPS = ("ResourceConditionalAccumulator", "ConditionalAccumulator", "SparseConditionalAccumulator")
_NUMBER_TYPES = (
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.float64,
    dtypes.int8,
    dtypes.int16,
    dtypes.int32,
    dtypes.int64,
    dtypes.uint8,
)

#: What ``SparseConditionalAccumulator.take_grad`` returns (and fetching it gives): TF's output names.
SparseAccumulatorTakeGradient = namedtuple("SparseAccumulatorTakeGradient", ["indices", "values", "shape"])


def _check_dtype(dtype: Any) -> dtypes.DType:
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _NUMBER_TYPES:
        allowed = ", ".join(d.name for d in _NUMBER_TYPES)
        raise TypeError(
            f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed values: {allowed}"
        )
    return dtype


# ---- the handle ops --------------------------------------------------------------------------------
def _accumulator_infer(op: Operation) -> list:
    _check_dtype(op.get_attr("dtype"))
    if op.get_attr("reduction_type") not in REDUCTION_TYPES:
        raise ValueError(f"reduction_type of '{op.name}' must be MEAN or SUM, got {op.get_attr('reduction_type')!r}")
    TensorShape(op.get_attr("shape"))
    return [HANDLE_SPEC]


def _maker(kind: type):
    def make(op: Operation, container: str, name: str, mgr: Any, device: str) -> Any:
        shape = TensorShape(op.get_attr("shape"))
        return kind(name, op.get_attr("dtype"), shape, op.get_attr("reduction_type"), container, mgr, device)

    def verify(op: Operation, resource: Any) -> None:
        expect_resource(resource, kind, op).verify(
            op.get_attr("dtype"), op.get_attr("shape"), op.get_attr("reduction_type")
        )

    return handle_kernel(make, verify)


register_handle_op("ResourceConditionalAccumulator", _accumulator_infer, _maker(ConditionalAccumulatorResource))
register_handle_op("ConditionalAccumulator", _accumulator_infer, _maker(ConditionalAccumulatorResource))
register_handle_op("SparseConditionalAccumulator", _accumulator_infer, _maker(SparseConditionalAccumulatorResource))


# ---- ops using the handle --------------------------------------------------------------------------
def _apply_run(op: Operation):
    def run(acc: Any, local_step: Any, grad: Any) -> None:
        expect_resource(acc, ConditionalAccumulatorResource, op).apply_grad(int(local_step), grad)

    return run


def _take_run(op: Operation):
    def run(step: Any, acc: Any, num_required: Any) -> Any:
        return expect_resource(acc, ConditionalAccumulatorResource, op).take_grad(int(num_required), step)

    return run


def _sparse_apply_run(op: Operation):
    known = bool(op.get_attr("has_known_shape"))

    def run(acc: Any, local_step: Any, indices: Any, values: Any, shape: Any) -> None:
        expect_resource(acc, SparseConditionalAccumulatorResource, op).apply_grad(
            int(local_step), indices, values, shape if known else None
        )

    return run


def _sparse_take_run(op: Operation):
    def run(step: Any, acc: Any, num_required: Any) -> Any:
        return expect_resource(acc, SparseConditionalAccumulatorResource, op).take_grad(int(num_required), step)

    return run


def _num_accumulated_run(op: Operation):
    return lambda acc: torch.tensor(expect_resource(acc, AccumulatorBase, op).num_accumulated(), dtype=torch.int32)


def _set_global_step_run(op: Operation):
    return lambda acc, new_step: expect_resource(acc, AccumulatorBase, op).set_global_step(int(new_step))


def _accumulator_shape(op: Operation) -> TensorShape:
    shape = handle_attr(op.inputs[0], _ACCUMULATOR_OPS, "shape")
    return unknown_shape() if shape is None else TensorShape(shape)


def _apply_infer(values_input: int):
    """No outputs; the gradient's dtype must be the accumulator's (checked again when a graph def is imported)."""

    def infer(op: Operation) -> list:
        dtype = handle_attr(op.inputs[0], _ACCUMULATOR_OPS, "dtype")
        given = op.inputs[values_input].dtype
        if dtype is not None and dtype != given:
            raise ValueError(
                f"Accumulator '{op.inputs[0].op.name}' holds {dtype.name} gradients, {op.name} gives {given.name}"
            )
        return []

    return infer


def _sparse_take_infer(op: Operation) -> list:
    shape = _accumulator_shape(op)
    rows = unknown_shape() if shape.ndims is None or shape.ndims == 0 else TensorShape([None]).concatenate(shape[1:])
    rank = shape.ndims if shape.ndims else None
    return [(dtypes.int64, TensorShape([None])), (op.get_attr("dtype"), rows), (dtypes.int64, TensorShape([rank]))]


# The dense ops come twice: TF's resource variants (what ConditionalAccumulator builds) and the older
# reference-typed ones, which run the same kernels.
for _prefix in ("Resource", ""):
    register_handle_user(f"{_prefix}AccumulatorApplyGradient", _apply_infer(2), _apply_run)
    register_handle_user(
        f"{_prefix}AccumulatorTakeGradient",
        lambda op: [(op.get_attr("dtype"), _accumulator_shape(op))],
        _take_run,
        needs_step=True,
    )
    register_handle_user(
        f"{_prefix}AccumulatorNumAccumulated", lambda op: [(dtypes.int32, scalar())], _num_accumulated_run
    )
    register_handle_user(f"{_prefix}AccumulatorSetGlobalStep", lambda op: [], _set_global_step_run)
register_handle_user("SparseAccumulatorApplyGradient", _apply_infer(3), _sparse_apply_run)
register_handle_user("SparseAccumulatorTakeGradient", _sparse_take_infer, _sparse_take_run, needs_step=True)


# ---- Python API ------------------------------------------------------------------------------------
class ConditionalAccumulatorBase:
    """What dense and sparse accumulators share: the handle, ``num_accumulated`` and ``set_global_step``.

    Args:
        dtype: Type of the gradients.
        shape: Shape of the gradients (None: unknown).
        accumulator_ref: The accumulator's handle tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     acc = ConditionalAccumulator(tf.float32, name="acc")
        >>> isinstance(acc, ConditionalAccumulatorBase), acc.name, acc.dtype
        (True, 'acc', tf.float32)
    """

    #: Prefix of the op types using the handle: ``"Resource"`` for the dense accumulator (TF's resource ops),
    #: empty for the reference-typed sparse one.
    _op_prefix = ""

    def __init__(self, dtype: Any, shape: Any, accumulator_ref: Tensor) -> None:
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = TensorShape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self) -> Tensor:
        """The accumulator's handle."""
        return self._accumulator_ref

    @property
    def name(self) -> str:
        """The name of the accumulator op."""
        return self._accumulator_ref.op.name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    def _use(self, op_type: str, inputs: list[Any], attrs: dict[str, Any], name: str | None, default: str) -> Operation:
        """Creates an op using the handle, colocated with it; ``inputs`` are ``(value, dtype, name)`` triples."""
        with using_handle(self._accumulator_ref, name, default) as scope:
            tensors = [_as_tensor(v, d, n) for v, d, n in inputs]
            return make_op(op_type, [self._accumulator_ref, *tensors], attrs, name=scope)

    def num_accumulated(self, name: str | None = None) -> Tensor:
        """An int32 scalar: how many gradients were added since the last ``take_grad``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = ConditionalAccumulator(tf.float32, name="acc")
            ...     with tf.Session() as sess:
            ...         print(sess.run(acc.num_accumulated()))
            0
        """
        op_type = f"{self._op_prefix}AccumulatorNumAccumulated"
        return self._use(op_type, [], {}, name, f"{self._name}_NumAccumulated").outputs[0]

    def set_global_step(self, new_global_step: Any, name: str | None = None) -> Operation:
        """An op setting the accumulator's global step: later gradients of older steps are dropped.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = ConditionalAccumulator(tf.float32, name="acc")
            ...     acc.set_global_step(5).type
            'ResourceAccumulatorSetGlobalStep'
        """
        inputs = [(new_global_step, dtypes.int64, "new_global_step")]
        op_type = f"{self._op_prefix}AccumulatorSetGlobalStep"
        return self._use(op_type, inputs, {}, name, op_type)


def _as_tensor(value: Any, dtype: dtypes.DType, name: str) -> Tensor:
    """``value`` as a ``dtype`` tensor; an integer tensor of another width (a step, indices) is cast, as TF does."""
    t = convert_to_tensor(value, name=name, preferred_dtype=dtype)
    if t.dtype is not dtype and dtype.is_integer and t.dtype.is_integer:
        return cast(t, dtype)
    return convert_to_tensor(t, dtype=dtype, name=name)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of one variable (TF1's ``tf.ConditionalAccumulator``).

    Built as TF builds it: a ``ResourceConditionalAccumulator`` op, which ``replica_device_setter`` places on
    a ps task.

    Args:
        dtype: Type of the gradients (a number type).
        shape: Shape of the gradients, or None.
        shared_name: Name under which it is shared (default: the op's name).
        name: Name of the accumulator op.
        reduction_type: ``"MEAN"`` (average, default) or ``"SUM"``.

    Raises:
        TypeError: ``dtype`` is not a number type.
        ValueError: ``reduction_type`` is neither MEAN nor SUM.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     acc = tf.ConditionalAccumulator(tf.float32, shape=[], reduction_type="SUM")
        ...     ops = [acc.apply_grad(1.0, local_step=0), acc.apply_grad(2.0, local_step=0)]
        ...     with tf.Session() as sess:
        ...         _ = sess.run(ops)
        ...         print(sess.run(acc.take_grad(2)))
        3.0
    """

    _op_prefix = "Resource"

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "conditional_accumulator",
        reduction_type: str = "MEAN",
    ) -> None:
        ref = _accumulator_op("ResourceConditionalAccumulator", dtype, shape, shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad: Any, local_step: Any = 0, name: str | None = None) -> Operation:
        """An op adding ``grad`` unless ``local_step`` is older than the accumulator's global step.

        Raises:
            ValueError: ``grad``'s static shape does not match the accumulator's.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
            ...     acc.apply_grad([1.0, 2.0], local_step=3).type
            'ResourceAccumulatorApplyGradient'
        """
        grad_t = convert_to_tensor(grad, dtype=self._dtype)
        grad_t.shape.assert_is_compatible_with(self._shape)
        inputs = [(local_step, dtypes.int64, "local_step"), (grad_t, self._dtype, "gradient")]
        op_type = "ResourceAccumulatorApplyGradient"
        return self._use(op_type, inputs, {"dtype": self._dtype}, name, op_type)

    def take_grad(self, num_required: Any, name: str | None = None) -> Tensor:
        """Waits for ``num_required`` gradients and returns their average; the accumulator starts over.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     tf.ConditionalAccumulator(tf.float32, shape=[3]).take_grad(2)
            <tf.Tensor 'ResourceAccumulatorTakeGradient:0' shape=(3,) dtype=float32>
        """
        inputs = [(num_required, dtypes.int32, "num_required")]
        op_type = "ResourceAccumulatorTakeGradient"
        op = self._use(op_type, inputs, {"dtype": self._dtype}, name, op_type)
        out = op.outputs[0]
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients (``IndexedSlices``) of one variable (TF1's ``tf.SparseConditionalAccumulator``).

    Rows are averaged per index over the gradients that had them.

    Args:
        dtype: Type of the gradients' values (a number type).
        shape: Shape of the dense gradient, or None.
        shared_name: Name under which it is shared (default: the op's name).
        name: Name of the accumulator op.
        reduction_type: ``"MEAN"`` (default) or ``"SUM"``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 1])
        ...     a = acc.apply_grad([0, 3], [[1.0], [2.0]])
        ...     b = acc.apply_grad([3], [[4.0]])
        ...     with tf.Session() as sess:
        ...         _ = sess.run([a, b])
        ...         print(sess.run(acc.take_indexed_slices_grad(2)).values.tolist())
        [[1.0], [3.0]]
    """

    def __init__(
        self,
        dtype: Any,
        shape: Any = None,
        shared_name: str | None = None,
        name: str = "sparse_conditional_accumulator",
        reduction_type: str = "MEAN",
    ) -> None:
        ref = _accumulator_op("SparseConditionalAccumulator", dtype, shape, shared_name, name, reduction_type)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad: IndexedSlices, local_step: Any = 0, name: str | None = None) -> Operation:
        """An op adding the ``IndexedSlices`` ``grad`` (see :meth:`apply_grad`).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = tf.SparseConditionalAccumulator(tf.float32)
            ...     grad = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([4]), tf.constant([8, 1]))
            ...     acc.apply_indexed_slices_grad(grad).get_attr("has_known_shape")
            True
        """
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name)

    def apply_grad(
        self,
        grad_indices: Any,
        grad_values: Any,
        grad_shape: Any = None,
        local_step: Any = 0,
        name: str | None = None,
    ) -> Operation:
        """An op adding rows ``grad_values`` at ``grad_indices`` unless ``local_step`` is stale.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = tf.SparseConditionalAccumulator(tf.float32)
            ...     acc.apply_grad([1], [[2.0]]).get_attr("has_known_shape")
            False
        """
        values = convert_to_tensor(grad_values, dtype=self._dtype)
        inputs = [
            (local_step, dtypes.int64, "local_step"),
            (grad_indices, dtypes.int64, "gradient_indices"),
            (values, self._dtype, "gradient_values"),
            ([] if grad_shape is None else grad_shape, dtypes.int64, "gradient_shape"),
        ]
        attrs = {"dtype": self._dtype, "has_known_shape": grad_shape is not None}
        return self._use("SparseAccumulatorApplyGradient", inputs, attrs, name, "SparseAccumulatorApplyGradient")

    def take_grad(self, num_required: Any, name: str | None = None) -> SparseAccumulatorTakeGradient:
        """Waits for ``num_required`` gradients; returns ``(indices, values, shape)`` of their average.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2])
            ...     apply = acc.apply_grad([2], [[1.0, 3.0]])
            ...     with tf.Session() as sess:
            ...         sess.run(apply)
            ...         print(sess.run(acc.take_grad(1)).shape)
            [3 2]
        """
        inputs = [(num_required, dtypes.int32, "num_required")]
        op = self._use(
            "SparseAccumulatorTakeGradient", inputs, {"dtype": self._dtype}, name, "SparseAccumulatorTakeGradient"
        )
        return SparseAccumulatorTakeGradient(*op.outputs)

    def take_indexed_slices_grad(self, num_required: Any, name: str | None = None) -> IndexedSlices:
        """Like :meth:`take_grad`, as an ``IndexedSlices``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     acc = tf.SparseConditionalAccumulator(tf.float32, shape=[10, 3])
            ...     acc.take_indexed_slices_grad(1).values.shape.as_list()
            [None, 3]
        """
        taken = self.take_grad(num_required, name)
        return IndexedSlices(values=taken.values, indices=taken.indices, dense_shape=taken.shape)


def _accumulator_op(
    op_type: str, dtype: Any, shape: Any, shared_name: str | None, name: str, reduction_type: str
) -> Tensor:
    dtype = _check_dtype(dtype)
    if reduction_type not in REDUCTION_TYPES:
        raise ValueError(f"reduction_type must be MEAN or SUM, got {reduction_type!r}")
    attrs = {
        "dtype": dtype,
        "shape": TensorShape(shape).as_tuple() if shape is not None else None,
        "container": "",
        "shared_name": shared_name or "",
        "reduction_type": reduction_type,
    }
    graph = get_default_graph()
    with graph.as_default(), graph.control_dependencies(None):
        return make_op(op_type, [], attrs, name=name).outputs[0]
