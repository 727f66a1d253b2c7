"""Stateful variable ops: ``VariableV2``, ``Assign``, ``AssignAdd``, ``AssignSub``, scatter updates.

A ``VariableV2`` node outputs a *reference* to a :class:`VariableResource`
held in the runtime's resource containers (looked up by container and
shared name), never a value. Ops listed with ``ref_inputs`` receive the
reference; every other consumer receives the current value, and reading an
uninitialised variable raises ``FailedPreconditionError``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0, name="v")
    ...     inc = tf.assign_add(v, 2.0)
    ...     with tf.Session() as sess:
    ...         sess.run(v.initializer)
    ...         print(sess.run(inc))
    3.0
"""

from __future__ import annotations

import contextlib
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.runtime.resources import VariableResource

__all__ = [
    "assign",
    "assign_add",
    "assign_sub",
    "scatter_update",
    "scatter_add",
    "scatter_sub",
    "is_variable_initialized",
]


def variable_op_v2(
    shape: Any, dtype: Any, name: str = "Variable", container: str = "", shared_name: str = ""
) -> Tensor:
    """Creates a ``VariableV2`` op and returns its reference output.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     variable_op_v2([2], tf.float32, name="raw").is_ref
        True
    """
    attrs = {
        "shape": TensorShape(shape).as_tuple(),
        "dtype": dtypes.as_dtype(dtype),
        "container": container,
        "shared_name": shared_name,
    }
    return make_op("VariableV2", [], attrs, name=name).outputs[0]


def _variable_kernel(op: Any, ctx: Any):
    container = op.get_attr("container")
    shared_name = op.get_attr("shared_name") or op.name
    dtype, shape = op.get_attr("dtype"), TensorShape(op.get_attr("shape"))
    resources = ctx.resources
    device = ctx.device_name

    def create() -> VariableResource:
        return VariableResource(shared_name, dtype, shape, device, container)

    return lambda: resources.lookup_or_create(container, shared_name, create)


op_registry.register_op(
    "VariableV2",
    infer=lambda op: [(op.get_attr("dtype"), TensorShape(op.get_attr("shape")))],
    kernel=_variable_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_outputs=(0,),
    stateful=True,
)


def as_ref(ref: Any, op_type: str) -> Tensor:
    """``ref`` as the reference tensor a variable-writing op ``op_type`` takes; a TypeError for anything else.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     as_ref(tf.Variable(1.0), "Assign").is_ref
        True
    """
    t = convert_to_tensor(ref, as_ref=True)
    if not t.is_ref:
        raise TypeError(f"Input 'ref' of '{op_type}' Op requires l-value input")
    return t


def locked(resource: VariableResource, use_locking: bool) -> Any:
    """The variable's lock when ``use_locking`` (a do-nothing context otherwise), for kernels that write it.

    Example:
        >>> from dtf_notebook.runtime.resources import VariableResource
        >>> with locked(VariableResource("v", None, None), False):
        ...     pass
    """
    return resource.lock if use_locking else contextlib.nullcontext()


def assign(
    ref: Any, value: Any, validate_shape: bool | None = None, use_locking: bool | None = None, name: str | None = None
) -> Tensor:
    """Stores ``value`` in the variable ``ref``; the result reads the new value.

    Args:
        ref: A variable (or its reference tensor).
        value: The new value, converted to the variable's dtype.
        validate_shape: Require ``value``'s shape to equal the variable's (default True).
        use_locking: Hold the variable's lock while writing.
        name: Op name.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.assign(v, [5.0, 6.0])))
        [5. 6.]
    """
    if hasattr(ref, "_assign_override"):
        return ref._assign_override(value, use_locking, name)
    ref_t = as_ref(ref, "Assign")
    value_t = convert_to_tensor(value, dtype=ref_t.dtype)
    validate = True if validate_shape is None else bool(validate_shape)
    attrs = {"validate_shape": validate, "use_locking": True if use_locking is None else bool(use_locking)}
    return make_op("Assign", [ref_t, value_t], attrs, name=name or "Assign").outputs[0]


def _assign_infer(op: Any) -> list:
    ref, value = op.inputs
    if op.get_attr("validate_shape") and not ref.shape.is_compatible_with(value.shape):
        raise ValueError(f"Shapes {ref.shape} and {value.shape} are incompatible")
    shape = ref.shape.merge_with(value.shape) if op.get_attr("validate_shape") else value.shape
    return [(ref.dtype, shape)]


def _assign_kernel(op: Any, ctx: Any):
    validate, use_locking = op.get_attr("validate_shape"), op.get_attr("use_locking")

    def run(resource: VariableResource, value: Any) -> VariableResource:
        with locked(resource, use_locking):
            current = resource.value
            if validate:
                declared = resource.shape
                if current is not None and current.shape != value.shape:
                    raise errors.InvalidArgumentError(
                        None,
                        op,
                        f"Assign requires shapes of both tensors to match. lhs shape= {list(current.shape)} "
                        f"rhs shape= {list(value.shape)}",
                    )
                if current is None and declared is not None and not declared.is_compatible_with(tuple(value.shape)):
                    raise errors.InvalidArgumentError(
                        None,
                        op,
                        f"Assign requires shapes of both tensors to match. lhs shape= {declared.as_list()} "
                        f"rhs shape= {list(value.shape)}",
                    )
            if not isinstance(value, torch.Tensor):
                resource.value = value.copy()  # string tensors: numpy object arrays
            elif current is None or current.shape != value.shape or current.device != value.device:
                # A fresh buffer: never alias the input (it may be a cached constant).
                resource.value = value.clone()
            else:
                current.copy_(value)
        return resource

    return run


op_registry.register_op(
    "Assign",
    infer=_assign_infer,
    kernel=_assign_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_inputs=(0,),
    ref_outputs=(0,),
    stateful=True,
)


def _update_kernel(update):
    def factory(op: Any, ctx: Any):
        use_locking = op.get_attr("use_locking")

        def run(resource: VariableResource, value: Any) -> VariableResource:
            with locked(resource, use_locking):
                current = resource.read()
                if not _broadcastable_to(value.shape, current.shape):
                    raise errors.InvalidArgumentError(
                        None,
                        op,
                        f"Must have updates.shape = ref.shape: updates shape {list(value.shape)} does not "
                        f"match variable shape {list(current.shape)}",
                    )
                update(current, value)
            return resource

        return run

    return factory


def _broadcastable_to(src: Any, dst: Any) -> bool:
    return tuple(src) == tuple(dst)


def _assign_update(op_type: str, update):
    op_registry.register_op(
        op_type,
        infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        kernel=_update_kernel(update),
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=(0,),
        ref_outputs=(0,),
        stateful=True,
    )


_assign_update("AssignAdd", lambda current, value: current.add_(value))
_assign_update("AssignSub", lambda current, value: current.sub_(value))


def _dense_update(op_type: str, ref: Any, value: Any, use_locking: bool | None, name: str | None) -> Tensor:
    if hasattr(ref, "_resource_update"):  # an imported resource variable writes with its own ops, as TF's
        return ref._resource_update(op_type, (value,), name)
    ref_t = as_ref(ref, op_type)
    value_t = convert_to_tensor(value, dtype=ref_t.dtype)
    return make_op(op_type, [ref_t, value_t], {"use_locking": bool(use_locking)}, name=name or op_type).outputs[0]


def assign_add(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None) -> Tensor:
    """Adds ``value`` to the variable ``ref`` in place; the result reads the new value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0)
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.assign_add(v, 0.5)))
        1.5
    """
    return _dense_update("AssignAdd", ref, value, use_locking, name)


def assign_sub(ref: Any, value: Any, use_locking: bool | None = None, name: str | None = None) -> Tensor:
    """Subtracts ``value`` from the variable ``ref`` in place; the result reads the new value.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0)
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.assign_sub(v, 0.25)))
        0.75
    """
    return _dense_update("AssignSub", ref, value, use_locking, name)


# ---- scatter updates (sparse writes, used by optimizers' sparse paths) -------------------------
def current_value(resource: VariableResource) -> torch.Tensor:
    """The variable's value as a contiguous tensor that row views can write into (made so in place).

    Example:
        >>> import torch
        >>> from dtf_notebook.runtime.resources import VariableResource
        >>> r = VariableResource("v", None, None)
        >>> r.value = torch.zeros(2, 3).t()
        >>> current_value(r).is_contiguous(), r.value.is_contiguous()
        (True, True)
    """
    value = resource.read()
    if not value.is_contiguous():
        resource.value = value = value.contiguous()
    return value


_NEGATE_FROM_ROWS = 128  # see subtract_rows


def subtract_rows(target: torch.Tensor, index: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``target[index[i]] -= rows[i]`` along axis 0, in place (repeated indices accumulate); returns ``target``.

    Bit for bit ``index_add_(0, index, rows, alpha=-1)``, which torch runs on a slow path for more than a few rows
    (1.6x slower for 341 rows of 20, 17x for 4,096 scalar rows): from 128 rows on, the negated rows are added
    instead (``a + (-b)`` is ``a - b`` in IEEE arithmetic).

    Example:
        >>> import torch
        >>> subtract_rows(torch.zeros(3), torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0]))
        tensor([-4.,  0., -2.])
    """
    if index.numel() >= _NEGATE_FROM_ROWS:
        return target.index_add_(0, index, rows.neg())
    return target.index_add_(0, index, rows, alpha=-1)


def row_scatter_kernel(combine: Any) -> Any:
    """The kernel factory of a ``Scatter*`` op on rows of a variable's first axis: ``combine(current, idx, rows)``
    writes ``rows`` (updates shaped ``indices.shape + ref.shape[1:]``, a scalar broadcast) into the variable at
    ``idx``, under the variable's lock when ``use_locking``; an index out of range is an InvalidArgumentError.

    Example:
        >>> callable(row_scatter_kernel(lambda cur, idx, rows: cur.index_copy_(0, idx, rows)))
        True
    """

    def factory(op: Any, ctx: Any):
        # ResourceScatter* have no use_locking attr: TF always locks them.
        use_locking = op.get_attr("use_locking") if "use_locking" in op.node_def["attr"] else True

        def run(resource: VariableResource, indices: Any, updates: Any) -> VariableResource:
            with locked(resource, use_locking):
                current = current_value(resource)
                idx = indices.reshape(-1).long().to(current.device)
                limit = current.shape[0]
                if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= limit):
                    bad = int(idx[(idx < 0) | (idx >= limit)][0])
                    message = f"indices[{bad}] is out of range [0, {limit}) in {op.type}"
                    raise errors.InvalidArgumentError(None, op, message)
                shape = (idx.numel(),) + tuple(current.shape[1:])
                rows = updates.to(current.dtype).expand(shape) if updates.dim() == 0 else updates.reshape(shape)
                if idx.numel():
                    combine(current, idx, rows.to(current.device))
            return resource

        return run

    return factory


def register_scatter(op_type: str, infer: Any, kernel: Any) -> None:
    """Registers a ``Scatter*`` op: a stateful write through its ref input 0, returned as its ref output.

    Example:
        >>> from dtf_notebook.framework import op_registry
        >>> op_registry.get("ScatterAdd").stateful
        True
    """
    op_registry.register_op(
        op_type,
        infer=infer,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=(0,),
        ref_outputs=(0,),
        stateful=True,
    )


def _scatter_op(op_type: str, update: Any) -> None:
    register_scatter(op_type, lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)], row_scatter_kernel(update))


_scatter_op("ScatterUpdate", lambda cur, idx, rows: cur.index_copy_(0, idx, rows))
_scatter_op("ScatterAdd", lambda cur, idx, rows: cur.index_add_(0, idx, rows))
_scatter_op("ScatterSub", subtract_rows)


def build_scatter(op_type: str, ref: Any, indices: Any, updates: Any, use_locking: bool, name: str | None) -> Tensor:
    """Builds the ``Scatter*`` op ``op_type`` on the variable ``ref`` as TF does: int32/int64 ``indices`` and
    ``updates`` of the variable's dtype, converted inside the op's name scope (``ScatterAdd/indices``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     t = build_scatter("ScatterAdd", tf.Variable([1.0, 2.0]), [1], [3.0], False, None)
        ...     t.op.name, [i.op.name for i in t.op.inputs]
        ('ScatterAdd', ['Variable', 'ScatterAdd/indices', 'ScatterAdd/updates'])
    """
    if hasattr(ref, "_resource_update"):  # an imported resource variable writes with its own ops, as TF's
        return ref._resource_update(op_type, (indices, updates), name)
    ref_t = as_ref(ref, op_type)
    with name_scope(name, op_type, [ref_t, indices, updates]) as scope:
        indices_t = convert_to_tensor(indices, name="indices")
        check_dtype(indices_t, (dtypes.int32, dtypes.int64), op_type, "indices")
        updates_t = convert_to_tensor(updates, dtype=ref_t.dtype, name="updates")
        attrs = {"use_locking": bool(use_locking)}
        return make_op(op_type, [ref_t, indices_t, updates_t], attrs, name=scope).outputs[0]


def scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: str | None = None) -> Tensor:
    """Writes ``updates`` into rows ``indices`` of the variable ``ref``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0, 3.0])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_update(v, [2], [9.0])))
        [1. 2. 9.]
    """
    return build_scatter("ScatterUpdate", ref, indices, updates, use_locking, name)


def scatter_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Adds ``updates`` to rows ``indices`` of ``ref`` (repeated indices accumulate).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_add(v, [0, 0], [1.0, 1.0])))
        [3. 2.]
    """
    return build_scatter("ScatterAdd", ref, indices, updates, use_locking, name)


def scatter_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
    """Subtracts ``updates`` from rows ``indices`` of ``ref``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(v.initializer)
        ...         print(sess.run(tf.scatter_sub(v, [1], [2.0])))
        [1. 0.]
    """
    return build_scatter("ScatterSub", ref, indices, updates, use_locking, name)


def is_variable_initialized(ref: Any, name: str | None = None) -> Tensor:
    """A bool scalar: has the variable been initialised?

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0)
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.is_variable_initialized(v)))
        False
    """
    ref_t = as_ref(ref, "IsVariableInitialized")
    return make_op("IsVariableInitialized", [ref_t], {}, name=name or "IsVariableInitialized").outputs[0]


def _is_initialized_kernel(op: Any, ctx: Any):
    device = ctx.device
    true, false = torch.tensor(True, device=device), torch.tensor(False, device=device)
    return lambda resource: true if resource.is_initialized else false


op_registry.register_op(
    "IsVariableInitialized",
    infer=lambda op: [(dtypes.bool, scalar())],
    kernel=_is_initialized_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_inputs=(0,),
    stateful=True,
)


def value_or_initial(ref: Any, initial_value: Any, name: str | None = None) -> Tensor:
    """The variable's value when it is initialised, else ``initial_value`` (``initialized_value()``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(3.0)
        ...     with tf.Session() as sess:
        ...         print(sess.run(v.initialized_value()))
        3.0
    """
    ref_t = as_ref(ref, "ValueOrInitial")
    value_t = convert_to_tensor(initial_value, dtype=ref_t.dtype)
    return make_op("ValueOrInitial", [ref_t, value_t], {}, name=name or "initialized_value").outputs[0]


op_registry.register_op(
    "ValueOrInitial",
    infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
    kernel=lambda op, ctx: lambda resource, initial: resource.value if resource.is_initialized else initial,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_inputs=(0,),
    stateful=True,
)
