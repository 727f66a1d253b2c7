"""Resource variables as TF 2's graphs hold them: ``VarHandleOp`` and the ops that take its handle.

TF 2's ``tf.compat.v1`` makes every ``get_variable`` a resource variable (unless ``disable_resource_variables``), so
its graphs and ``.meta`` files name ``VarHandleOp``, ``ReadVariableOp``, ``AssignVariableOp``,
``ResourceApplyAdam``, ``ResourceGather``, ... instead of ``VariableV2``, ``Identity``, ``Assign`` and ``ApplyAdam``.
Here they run on the same variables (:class:`~dtf_notebook.runtime.resources.VariableResource`, in the same
containers) and the same kernels: a handle is passed by reference as a ``VariableV2``'s output is, so placement
keeps every op that takes it with the variable, and each ``Resource*`` update runs its ``*`` counterpart's kernel
(the optimizers' ``ResourceApply*`` and ``ResourceSparseApply*`` are registered with theirs, in
:mod:`dtf_notebook.ops.training.op_specs`).
Graphs built here still make reference variables (``use_resource=True`` too); these ops let graphs TF wrote import
and run (``tf.import_graph_def``, ``tf.train.import_meta_graph``).

A read is a snapshot, as TF's ``ReadVariableOp``: later updates in the same step do not change a value already
read.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops.op_helpers import make_op
    >>> with tf.Graph().as_default():
    ...     handle = make_op("VarHandleOp", [], {"dtype": tf.float32, "shape": [2], "shared_name": "w"},
    ...                      name="w").outputs[0]
    ...     init = make_op("AssignVariableOp", [handle, tf.constant([1.0, 2.0])], {"dtype": tf.float32})
    ...     bump = make_op("AssignAddVariableOp", [handle, tf.constant([1.0, 1.0])], {"dtype": tf.float32})
    ...     read = make_op("ReadVariableOp", [handle], {"dtype": tf.float32}).outputs[0]
    ...     with tf.Session() as sess:
    ...         sess.run(init); sess.run(bump)
    ...         print(sess.run(read))
    [2. 3.]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.tensor_shape import TensorShape, scalar
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import state_ops as _state_ops  # noqa: F401 - registers ScatterAdd & co.
from dtf_notebook.ops.array import scatter_variables as _scatter_variables  # noqa: F401 - registers Scatter*
from dtf_notebook.runtime.resources import VariableResource

__all__ = ["VARIABLE_HANDLE_OP"]

#: The op type that owns a resource variable (placed with the variables, as ``VariableV2``).
VARIABLE_HANDLE_OP = "VarHandleOp"


def _handle_shape(handle: Any) -> TensorShape:
    """The variable's static shape, from the ``VarHandleOp`` the handle comes from (unknown otherwise)."""
    op = handle.op
    return TensorShape(op.get_attr("shape")) if op.type == VARIABLE_HANDLE_OP else TensorShape(None)


def _register(op_type: str, infer: Any, kernel: Any, handles: int = 1, stateful: bool = True) -> None:
    op_registry.register_op(
        op_type,
        infer=infer,
        kernel=kernel,
        grad=op_registry.NOT_DIFFERENTIABLE,
        ref_inputs=range(handles),
        stateful=stateful,
    )


# ---- the handle ---------------------------------------------------------------------------------
def _handle_kernel(op: Any, ctx: Any):
    container = _attr(op, "container", "")
    shared_name = _attr(op, "shared_name", "") or op.name
    dtype, shape = op.get_attr("dtype"), TensorShape(op.get_attr("shape"))
    resources, device = ctx.resources, ctx.device_name

    def create() -> VariableResource:
        return VariableResource(shared_name, dtype, shape, device, container)

    def run() -> VariableResource:
        found = resources.lookup_or_create(container, shared_name, create)
        if not isinstance(found, VariableResource) or found.dtype is not dtype:
            raise errors.InvalidArgumentError(
                None, op, f"Resource {container}/{shared_name} is {found!r}, not a {dtype.name} variable"
            )
        return found

    return run


def _attr(op: Any, name: str, default: Any) -> Any:
    try:
        return op.get_attr(name)
    except ValueError:
        return default


op_registry.register_op(
    VARIABLE_HANDLE_OP,
    infer=lambda op: [(dtypes.resource, scalar())],
    kernel=_handle_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_outputs=(0,),
    stateful=True,
)


# ---- reads and writes -------------------------------------------------------------------------
def _checked(op: Any, resource: VariableResource) -> VariableResource:
    if resource.dtype is not op.get_attr("dtype"):
        raise errors.InvalidArgumentError(
            None,
            op,
            f"Trying to read variable {resource.name} with wrong dtype. Expected {resource.dtype.name} got "
            f"{op.get_attr('dtype').name}",
        )
    return resource


def _read_kernel(op: Any, ctx: Any):
    def run(resource: VariableResource) -> Any:
        with _checked(op, resource).lock:  # (never half of an update: TF's reads wait for writers too)
            value = resource.read()
            return value.clone() if isinstance(value, torch.Tensor) else value.copy()  # a snapshot

    return run


_register("ReadVariableOp", lambda op: [(op.get_attr("dtype"), _handle_shape(op.inputs[0]))], _read_kernel)


def _assign_kernel(op: Any, ctx: Any):
    def run(resource: VariableResource, value: Any) -> None:
        resource = _checked(op, resource)
        with resource.lock:
            current = resource.value
            if not isinstance(value, torch.Tensor):
                resource.value = value.copy()
            elif current is None or current.shape != value.shape or current.device != value.device:
                resource.value = value.clone()  # never alias the input (it may be a cached constant)
            else:
                current.copy_(value)

    return run


_register("AssignVariableOp", lambda op: [], _assign_kernel)


def _update_kernel(update: Any):
    def factory(op: Any, ctx: Any):
        def run(resource: VariableResource, value: Any) -> None:
            with _checked(op, resource).lock:  # TF always holds the variable's lock for these
                current = resource.read()
                if tuple(value.shape) != tuple(current.shape):
                    raise errors.InvalidArgumentError(
                        None,
                        op,
                        f"Cannot update variable with shape {list(current.shape)} using a Tensor with shape "
                        f"{list(value.shape)}, shapes must be equal.",
                    )
                update(current, value)

        return run

    return factory


_register("AssignAddVariableOp", lambda op: [], _update_kernel(lambda current, value: current.add_(value)))
_register("AssignSubVariableOp", lambda op: [], _update_kernel(lambda current, value: current.sub_(value)))


def _is_initialized_kernel(op: Any, ctx: Any):
    true, false = torch.tensor(True), torch.tensor(False)
    return lambda resource: true if resource.is_initialized else false


_register("VarIsInitializedOp", lambda op: [(dtypes.bool, scalar())], _is_initialized_kernel)


def _shape_infer(op: Any) -> list:
    shape = _handle_shape(op.inputs[0])
    return [(_attr(op, "out_type", dtypes.int32), TensorShape([shape.ndims]))]


def _shape_kernel(op: Any, ctx: Any):
    dtype = _attr(op, "out_type", dtypes.int32).as_numpy_dtype
    return lambda resource: torch.from_numpy(np.asarray(resource.read().shape, dtype=dtype))


_register("VariableShape", _shape_infer, _shape_kernel)


# ---- rows: gathers and scatters ---------------------------------------------------------------------
def _gather_infer(op: Any) -> list:
    params, indices = _handle_shape(op.inputs[0]), op.inputs[1].shape
    if params.ndims is None or indices.ndims is None:
        return [(op.get_attr("dtype"), TensorShape(None))]
    return [(op.get_attr("dtype"), TensorShape(indices.as_list() + params.as_list()[1:]))]


def _gather_kernel(op: Any, ctx: Any):
    if _attr(op, "batch_dims", 0):
        raise errors.UnimplementedError(None, op, "ResourceGather with batch_dims is not supported here")

    def run(resource: VariableResource, indices: Any) -> Any:
        params = _checked(op, resource).read()
        idx = indices.long().to(params.device)
        limit = params.shape[0]
        if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= limit):
            bad = int(idx[(idx < 0) | (idx >= limit)].reshape(-1)[0])
            raise errors.InvalidArgumentError(None, op, f"indices = {bad} is not in [0, {limit})")
        return params.index_select(0, idx.reshape(-1)).reshape(tuple(idx.shape) + tuple(params.shape[1:]))

    return run


_register("ResourceGather", _gather_infer, _gather_kernel)


def _register_scatters() -> None:
    """``ResourceScatter<kind>`` runs ``Scatter<kind>``'s kernel (no output); TF always locks these updates, and
    the kernel locks when the op has no ``use_locking`` attr."""
    for kind in ("Update", "Add", "Sub", "Mul", "Div", "Min", "Max"):
        _register(f"ResourceScatter{kind}", lambda op: [], op_registry.get(f"Scatter{kind}").kernel)


_register_scatters()
