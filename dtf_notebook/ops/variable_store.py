"""The variable store: one per graph, the variables ``get_variable`` created, by full name.

``_VariableStore.get_variable`` implements TF1's sharing rules (``reuse`` True, False or
``AUTO_REUSE``; shape and dtype checks against the existing variable, with TF's messages), default
initializers, regularizers, custom getters and partitioned variables. Scopes
(:mod:`dtf_notebook.ops.variable_scope`) fill in the name prefix and defaults before calling it.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     v = _get_default_variable_store().get_variable("w", [2])
    ...     _get_default_variable_store() is g._extra["variable_store"], v.name
    (True, 'w:0')
"""

from __future__ import annotations

import functools
import inspect
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import as_shape
from dtf_notebook.frontend import ipython_shell
from dtf_notebook.ops import array_ops, init_ops
from dtf_notebook.ops.partitioned_variables import (
    PartitionedVariable,
    _PartitionInfo,
    call_partitioner,
    iter_slices,
    slice_dim_and_count,
)
from dtf_notebook.ops.variables import Variable, _SaveSliceInfo


def _accepts(fn: Callable[..., Any], arg: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return arg in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _needs_no_arguments(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _rerun_hint() -> str:
    """The line a notebook learner needs after TF1's "already exists" message (nothing outside IPython)."""
    if not ipython_shell():
        return ""
    return (
        "\nRe-running a cell adds its variables to the same graph again: build the graph inside "
        "`with tf.Graph().as_default():` in the cell, or call `tf.reset_default_graph()` at the top of the cell."
    )


def _definition_site(var: Variable) -> str:
    frames = list(var.op.traceback)[::-1][:5]
    return "".join(traceback.format_list(frames))


class _VariableStore:
    """The variables of one graph by full name (and partitioned variables by their name)."""

    def __init__(self) -> None:
        self._vars: dict[str, Variable] = {}
        self._partitioned_vars: dict[str, PartitionedVariable] = {}
        self._lock = threading.RLock()

    def get_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = dtypes.float32,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
        trainable: bool | None = None,
        collections: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        validate_shape: bool = True,
        use_resource: Any = None,
        custom_getter: Any = None,
        constraint: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
    ) -> Any:
        """Gets the variable ``name`` or creates it (see :func:`get_variable`)."""
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtype
        trainable = True if trainable is None else trainable

        def true_getter(
            name: str,
            shape: Any = None,
            dtype: Any = dtypes.float32,
            initializer: Any = None,
            regularizer: Any = None,
            reuse: Any = None,
            trainable: bool | None = None,
            collections: Any = None,
            caching_device: Any = None,
            partitioner: Any = None,
            validate_shape: bool = True,
            use_resource: Any = None,
            constraint: Any = None,
            synchronization: Any = None,
            aggregation: Any = None,
        ) -> Any:
            trainable = True if trainable is None else trainable
            dtype = dtypes.as_dtype(dtype)
            is_scalar = shape is not None and isinstance(shape, Sequence) and not shape
            with self._lock:
                if partitioner is not None and not is_scalar:
                    if not callable(partitioner):
                        raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
                    with get_default_graph().name_scope(None):
                        return self._get_partitioned_variable(
                            name,
                            partitioner,
                            shape,
                            dtype,
                            initializer,
                            regularizer,
                            reuse,
                            trainable,
                            collections,
                            caching_device,
                            validate_shape,
                            constraint,
                        )
                if reuse is True and partitioner is None and name in self._partitioned_vars:
                    return self._get_partitioned_variable(
                        name,
                        None,
                        shape,
                        dtype,
                        initializer,
                        regularizer,
                        reuse,
                        trainable,
                        collections,
                        caching_device,
                        validate_shape,
                        constraint,
                    )
                if f"{name}/part_0" in self._vars:
                    raise ValueError(
                        f"No partitioner was provided, but a partitioned version of the variable was found: "
                        f"{name}/part_0. Perhaps a variable of the same name was already created with partitioning?"
                    )
                return self._get_single_variable(
                    name,
                    shape,
                    dtype,
                    initializer,
                    regularizer,
                    None,
                    reuse,
                    trainable,
                    collections,
                    caching_device,
                    validate_shape,
                    constraint,
                )

        kwargs = {
            "name": name,
            "shape": shape,
            "dtype": dtype,
            "initializer": initializer,
            "regularizer": regularizer,
            "reuse": reuse,
            "trainable": trainable,
            "collections": collections,
            "caching_device": caching_device,
            "partitioner": partitioner,
            "validate_shape": validate_shape,
            "use_resource": use_resource,
            "synchronization": synchronization,
            "aggregation": aggregation,
        }
        if custom_getter is None:
            return true_getter(constraint=constraint, **kwargs)
        # Getters written before `constraint` existed do not take it (TF passes it only when accepted).
        if _accepts(custom_getter, "constraint"):
            kwargs["constraint"] = constraint
        return custom_getter(getter=true_getter, **kwargs)

    def _get_single_variable(
        self,
        name: str,
        shape: Any,
        dtype: dtypes.DType,
        initializer: Any,
        regularizer: Any,
        partition_info: _PartitionInfo | None,
        reuse: Any,
        trainable: bool,
        collections: Any,
        caching_device: Any,
        validate_shape: bool,
        constraint: Any,
    ) -> Variable:
        initializing_from_value = initializer is not None and not callable(initializer)
        if shape is not None and initializing_from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        if shape is not None:
            shape = as_shape(shape)

        if name in self._vars:
            found = self._vars[name]
            if reuse is False:
                raise ValueError(
                    f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                    f"reuse=tf.AUTO_REUSE in VarScope? Originally defined at:\n\n{_definition_site(found)}"
                    + _rerun_hint()
                )
            if shape is not None and not shape.is_compatible_with(found.get_shape()):
                raise ValueError(
                    f"Trying to share variable {name}, but specified shape {shape} and found shape {found.get_shape()}."
                )
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(
                    f"Trying to share variable {name}, but specified dtype {dtype.name} and found dtype "
                    f"{found.dtype.name}."
                )
            return found

        if reuse is True:
            raise ValueError(
                f"Variable {name} does not exist, or was not created with tf.get_variable(). Did you mean to set "
                "reuse=tf.AUTO_REUSE in VarScope?"
            )
        if initializer is None:
            if shape is None:
                raise ValueError(
                    f"Variable {name} did not get an initializer, so its `shape` argument must be specified."
                )
            initializer = _default_initializer(name, dtype)

        variable_dtype: dtypes.DType | None
        if initializing_from_value:
            init_val: Any = initializer
            variable_dtype = None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape is not None and shape.is_fully_defined():
                dims = shape.as_list()
                if _accepts(initializer, "partition_info"):
                    init_val = functools.partial(initializer, dims, dtype=dtype, partition_info=partition_info)
                else:
                    init_val = functools.partial(initializer, dims, dtype=dtype)
                variable_dtype = dtype
            elif _needs_no_arguments(initializer):
                init_val = initializer
                variable_dtype = None
            else:
                raise ValueError(
                    "The initializer passed is not valid. It should be a callable with no arguments and the shape "
                    "should not be provided or an instance of `tf.keras.initializers.*' and `shape` should be "
                    "fully defined."
                )

        v = Variable(
            initial_value=init_val,
            name=name,
            trainable=trainable,
            collections=collections,
            caching_device=caching_device,
            dtype=variable_dtype,
            validate_shape=validate_shape,
            constraint=constraint,
            shape=shape,
        )
        self._vars[name] = v

        if regularizer:
            graph = v.graph
            # TF's init_scope: the loss lives outside any while loop or cond the variable was made in.
            flow_context = graph._get_control_flow_context()
            graph._set_control_flow_context(None)
            try:
                with (
                    graph.colocate_with(v.op),
                    graph.name_scope(name + "/Regularizer/"),
                    graph.control_dependencies(None),
                ):
                    loss = regularizer(v)
            finally:
                graph._set_control_flow_context(flow_context)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    def _get_partitioned_variable(
        self,
        name: str,
        partitioner: Any,
        shape: Any,
        dtype: dtypes.DType,
        initializer: Any,
        regularizer: Any,
        reuse: Any,
        trainable: bool,
        collections: Any,
        caching_device: Any,
        validate_shape: bool,
        constraint: Any,
    ) -> PartitionedVariable:
        initializing_from_value = isinstance(initializer, Tensor)
        if name in self._vars:
            raise ValueError(
                f"A partitioner was provided, but an unpartitioned version of the variable was found: {name}.  "
                "Perhaps a variable of the same name was already created without partitioning?"
            )
        shape = as_shape(shape)
        if initializing_from_value:
            shape = shape.merge_with(initializer.get_shape())

        partitions = None
        if not reuse or partitioner:
            partitions = call_partitioner(partitioner, shape, dtype)

        if name in self._partitioned_vars:
            if reuse is False:
                raise ValueError(
                    f"Partitioned variable with name {name} already exists. Did you mean to set reuse=True or "
                    "reuse=tf.AUTO_REUSE in VarScope?" + _rerun_hint()
                )
            existing = self._partitioned_vars[name]
            if not shape.is_compatible_with(existing.get_shape()):
                raise ValueError(
                    f"Trying to reuse partitioned variable {name}, but specified shape {shape} and found shape "
                    f"{existing.get_shape()}."
                )
            if not dtype.is_compatible_with(existing.dtype):
                raise ValueError(
                    f"Trying to reuse partitioned variable {name}, but specified dtype {dtype.name} and found dtype "
                    f"{existing.dtype.name}."
                )
            if partitions is not None and existing._get_partitions() != partitions:
                raise ValueError(
                    f"Trying to reuse partitioned variable {name}, but specified partitions {partitions} and found "
                    f"partitions {existing._get_partitions()}."
                )
            return existing

        if reuse is True:
            raise ValueError(
                f"PartitionedVariable {name} does not exist, or was not created with tf.get_variable(). Did you mean "
                "to set reuse=False or reuse=tf.AUTO_REUSE in VarScope?"
            )

        slice_dim, num_slices = slice_dim_and_count(partitions)
        if f"{name}/part_0" in self._vars:
            if f"{name}/part_{num_slices - 1}" not in self._vars:
                raise ValueError(
                    f"Partitioner returned a different partitioning than what was already found.  Partitioner "
                    f"returned {num_slices} shards, and shard {name}/part_0 was found, but "
                    f"{name}/part_{num_slices - 1} was not."
                )
            if f"{name}/part_{num_slices}" in self._vars:
                raise ValueError(
                    f"Partitioner returned a different partitioning than what was already found.  Partitioner "
                    f"returned {num_slices} shards, and shard {name}/part_0 was found, but so was the extra shard "
                    f"{name}/part_{num_slices}."
                )

        graph = get_default_graph()
        parts = []
        full_shape = shape.as_list()
        for i, (var_offset, var_shape) in enumerate(iter_slices(full_shape, num_slices, slice_dim)):
            partition_info = _PartitionInfo(full_shape=full_shape, var_offset=var_offset)
            part_name = f"{name}/part_{i}"
            part_dtype = dtype
            with graph.name_scope(part_name + "/PartitionedInitializer"):
                if initializer is None:
                    init: Any = _default_initializer(name, dtype)
                    init_shape: list[int] | None = var_shape
                elif callable(initializer):
                    init, init_shape = initializer, var_shape
                else:
                    value = initializer if isinstance(initializer, Tensor) else convert_to_tensor(initializer, dtype)
                    init = array_ops.slice(value, var_offset, var_shape)
                    part_dtype = init.dtype
                    init_shape = None
            with graph.name_scope(None):
                var = self._get_single_variable(
                    part_name,
                    init_shape,
                    part_dtype,
                    init,
                    regularizer,
                    partition_info,
                    reuse,
                    trainable,
                    collections,
                    caching_device,
                    validate_shape,
                    constraint,
                )
            # Savers write each part as a slice of the full variable.
            var._save_slice_info = _SaveSliceInfo(name, full_shape, var_offset, var_shape)
            parts.append(var)
        partitioned = PartitionedVariable(name, shape, dtype, parts, partitions)
        self._partitioned_vars[name] = partitioned
        return partitioned


def _default_initializer(name: str, dtype: dtypes.DType) -> init_ops.Initializer:
    """Glorot-uniform for floats, zeros for integers, bools and strings (TF1's defaults)."""
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool or dtype.is_string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype} is required")


def _get_default_variable_store(graph: Graph | None = None) -> _VariableStore:
    graph = graph or get_default_graph()
    store = graph._extra.get("variable_store")
    if store is None:
        store = graph._extra.setdefault("variable_store", _VariableStore())
    return store
