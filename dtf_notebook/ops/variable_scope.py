"""``tf.variable_scope`` and ``tf.get_variable``: named, shareable variables (TF1 semantics).

Each graph has one variable store (``graph._extra["variable_store"]``) that
maps full names to the variables ``get_variable`` created, and a per-thread
scope store (``graph._extra["variable_scope_store"]``) holding the current
:class:`VariableScope` and how often each scope name was opened (for
``default_name`` uniquification). Variable names depend only on variable
scopes; op names also get the name scope a ``variable_scope`` opens, which is
uniquified like any name scope (``foo``, ``foo_1``, ...).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     with tf.variable_scope("layer"):
    ...         w = tf.get_variable("w", [2, 3])
    ...     with tf.variable_scope("layer", reuse=True):
    ...         w2 = tf.get_variable("w")
    >>> w.name, w2 is w
    ('layer/w:0', True)
"""

from __future__ import annotations

import enum
import functools
import inspect
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtf_notebook.framework.graph import Graph, GraphKeys, get_collection, get_default_graph
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape
from dtf_notebook.ops import array_ops, identity_ops, init_ops
from dtf_notebook.ops.variables import Variable

__all__ = [
    "AUTO_REUSE", "VariableScope", "variable_scope", "variable_op_scope", "get_variable_scope", "get_variable",
    "get_local_variable", "no_regularizer",
]


class _ReuseMode(enum.Enum):
    """Reuse modes besides True/None: ``AUTO_REUSE`` creates missing variables and returns existing ones."""

    AUTO_REUSE = 1


#: ``reuse=tf.AUTO_REUSE``: get_variable returns the variable when it exists and creates it otherwise.
AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_: Any) -> None:
    """A regularizer that adds no loss: turns off a scope's default regularizer for one variable.

    Example:
        >>> no_regularizer(None) is None
        True
    """
    return None


# ---- partitioned variables -------------------------------------------------------------------
class _PartitionInfo:
    """Where one part lies in a partitioned variable (handed to initializers as ``partition_info``)."""

    def __init__(self, full_shape: Sequence[int], var_offset: Sequence[int]) -> None:
        if len(var_offset) != len(full_shape):
            raise ValueError(
                f"Expected equal length, but `var_offset` is of length {len(var_offset)} while "
                f"full_shape is of length {len(full_shape)}."
            )
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={var_offset}, shape={full_shape}")
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape: Sequence[int]) -> int:
        """The offset of this part along its partitioned axis."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape: Sequence[int]) -> int | None:
        """The one axis along which a part of ``shape`` differs from the full shape (None when it is whole)."""
        if len(shape) != len(self.full_shape):
            raise ValueError(
                f"Expected equal length, but received shape={shape} of length {len(shape)} while "
                f"self.full_shape={self.full_shape} is of length {len(self.full_shape)}."
            )
        dims = [i for i, (n, full) in enumerate(zip(shape, self.full_shape)) if n != full]
        if len(dims) > 1:
            raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and full_shape={self.full_shape}: "
                             "the part differs along more than one axis.")
        return dims[0] if dims else None


class _SaveSliceInfo:
    """How a part maps into its full variable, for savers (TF's ``Variable.SaveSliceInfo``)."""

    def __init__(self, full_name: str, full_shape: Sequence[int], var_offset: Sequence[int],
                 var_shape: Sequence[int]) -> None:
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self) -> str:
        """TF's slice spec string, e.g. ``"4 3 0,2:0,3"``."""
        full = " ".join(str(d) for d in self.full_shape) + " "
        return full + ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))


class PartitionedVariable:
    """A variable split into parts along one axis; converts to the concatenation of its parts.

    Created by ``get_variable(..., partitioner=...)``; iterating gives the
    part variables in offset order.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.get_variable("v", [4, 3], partitioner=lambda shape, dtype: [2, 1])
        >>> [p.name for p in v], v.get_shape().as_list()
        (['v/part_0:0', 'v/part_1:0'], [4, 3])
    """

    def __init__(self, name: str, shape: TensorShape, dtype: dtypes.DType, variable_list: list[Variable],
                 partitions: Sequence[int]) -> None:
        if not isinstance(variable_list, list | tuple) or not variable_list:
            raise ValueError(f"variable_list must be a non-empty list of variables, got {variable_list!r}")
        self._variable_list = sorted(variable_list, key=lambda v: v._save_slice_info.var_offset)
        self._name = name
        self._shape = shape
        self._dtype = dtype
        self._partitions = list(partitions)

    def __iter__(self) -> Iterator[Variable]:
        return iter(self._variable_list)

    def __len__(self) -> int:
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length of {len(axes)} tensors")
        return len(self._variable_list)

    def _partition_axes(self) -> list[int]:
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def as_tensor(self) -> Tensor:
        """The parts concatenated along the partitioned axis (named like the variable).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     v = tf.get_variable("v", [4], partitioner=lambda shape, dtype: [2])
            ...     v.as_tensor().name
            'v:0'
        """
        graph = self._variable_list[0].graph
        with graph.as_default(), graph.control_dependencies(None):
            if len(self._variable_list) == 1:
                with graph.name_scope(None):
                    return identity_ops.identity(self._variable_list[0], name=self._name)
            with graph.name_scope(self._name + "/ConcatPartitions/"):
                concatenated = array_ops.concat(self._variable_list, self._partition_axes()[0])
            with graph.name_scope(None):
                return identity_ops.identity(concatenated, name=self._name)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def graph(self) -> Graph:
        return self._variable_list[0].graph

    def get_shape(self) -> TensorShape:
        """The full (unpartitioned) shape."""
        return self._shape

    def _get_variable_list(self) -> list[Variable]:
        return self._variable_list

    def _get_partitions(self) -> list[int]:
        return self._partitions

    def __repr__(self) -> str:
        return f"<PartitionedVariable '{self._name}' shape={self._shape} parts={len(self._variable_list)}>"


def _partitioned_to_tensor(v: PartitionedVariable, dtype: Any = None, name: str | None = None,
                           as_ref: bool = False) -> Tensor:
    if as_ref:
        raise TypeError("PartitionedVariable doesn't support being used as a reference.")
    return v.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_to_tensor, priority=10)


def _call_partitioner(partitioner: Callable[..., Any], shape: TensorShape, dtype: dtypes.DType) -> list[int]:
    """The partitioner's slicing of ``shape``, validated: one entry per axis, at most one above 1."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    slicing = [int(p) for p in slicing]
    if len(slicing) != shape.ndims:
        raise ValueError(
            f"Partitioner returned a partition list that does not match the Variable's rank: {slicing} vs. {shape}"
        )
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, partitioning: {slicing}")
    return slicing


def _slice_dim_and_count(slicing: Sequence[int]) -> tuple[int, int]:
    for dim, count in enumerate(slicing):
        if count > 1:
            return dim, count
    return 0, 1


def _iter_slices(full_shape: list[int], num_slices: int, slice_dim: int) -> Iterator[tuple[list[int], list[int]]]:
    """(offset, shape) of each part; the first ``full % num_slices`` parts get one extra row (TF's split)."""
    extra = full_shape[slice_dim] % num_slices
    base = full_shape[slice_dim] // num_slices
    offset = [0] * len(full_shape)
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = base + (1 if i < extra else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


# ---- the variable store -----------------------------------------------------------------------
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
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


def _definition_site(var: Variable) -> str:
    frames = list(var.op.traceback)[::-1][:5]
    return "".join(traceback.format_list(frames))


class _VariableStore:
    """The variables of one graph by full name (and partitioned variables by their name)."""

    def __init__(self) -> None:
        self._vars: dict[str, Variable] = {}
        self._partitioned_vars: dict[str, PartitionedVariable] = {}
        self._lock = threading.RLock()

    def get_variable(self, name: str, shape: Any = None, dtype: Any = dtypes.float32, initializer: Any = None,
                     regularizer: Any = None, reuse: Any = None, trainable: bool | None = None,
                     collections: Any = None, caching_device: Any = None, partitioner: Any = None,
                     validate_shape: bool = True, use_resource: Any = None, custom_getter: Any = None,
                     constraint: Any = None, synchronization: Any = None, aggregation: Any = None) -> Any:
        """Gets the variable ``name`` or creates it (see :func:`get_variable`)."""
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtype
        trainable = True if trainable is None else trainable

        def true_getter(name: str, shape: Any = None, dtype: Any = dtypes.float32, initializer: Any = None,
                        regularizer: Any = None, reuse: Any = None, trainable: bool | None = None,
                        collections: Any = None, caching_device: Any = None, partitioner: Any = None,
                        validate_shape: bool = True, use_resource: Any = None, constraint: Any = None,
                        synchronization: Any = None, aggregation: Any = None) -> Any:
            trainable = True if trainable is None else trainable
            dtype = dtypes.as_dtype(dtype)
            is_scalar = shape is not None and isinstance(shape, Sequence) and not shape
            with self._lock:
                if partitioner is not None and not is_scalar:
                    if not callable(partitioner):
                        raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
                    with get_default_graph().name_scope(None):
                        return self._get_partitioned_variable(
                            name, partitioner, shape, dtype, initializer, regularizer, reuse, trainable,
                            collections, caching_device, validate_shape, constraint)
                if reuse is True and partitioner is None and name in self._partitioned_vars:
                    return self._get_partitioned_variable(
                        name, None, shape, dtype, initializer, regularizer, reuse, trainable, collections,
                        caching_device, validate_shape, constraint)
                if f"{name}/part_0" in self._vars:
                    raise ValueError(
                        f"No partitioner was provided, but a partitioned version of the variable was found: "
                        f"{name}/part_0. Perhaps a variable of the same name was already created with partitioning?"
                    )
                return self._get_single_variable(
                    name, shape, dtype, initializer, regularizer, None, reuse, trainable, collections,
                    caching_device, validate_shape, constraint)

        kwargs = {
            "name": name, "shape": shape, "dtype": dtype, "initializer": initializer, "regularizer": regularizer,
            "reuse": reuse, "trainable": trainable, "collections": collections, "caching_device": caching_device,
            "partitioner": partitioner, "validate_shape": validate_shape, "use_resource": use_resource,
            "synchronization": synchronization, "aggregation": aggregation,
        }
        if custom_getter is None:
            return true_getter(constraint=constraint, **kwargs)
        # Getters written before `constraint` existed do not take it (TF passes it only when accepted).
        if _accepts(custom_getter, "constraint"):
            kwargs["constraint"] = constraint
        return custom_getter(getter=true_getter, **kwargs)

    def _get_single_variable(self, name: str, shape: Any, dtype: dtypes.DType, initializer: Any, regularizer: Any,
                             partition_info: _PartitionInfo | None, reuse: Any, trainable: bool, collections: Any,
                             caching_device: Any, validate_shape: bool, constraint: Any) -> Variable:
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
            initial_value=init_val, name=name, trainable=trainable, collections=collections,
            caching_device=caching_device, dtype=variable_dtype, validate_shape=validate_shape,
            constraint=constraint, shape=shape,
        )
        self._vars[name] = v

        if regularizer:
            graph = v.graph
            with graph.colocate_with(v.op), graph.name_scope(name + "/Regularizer/"), \
                    graph.control_dependencies(None):
                loss = regularizer(v)
            if loss is not None:
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    def _get_partitioned_variable(self, name: str, partitioner: Any, shape: Any, dtype: dtypes.DType,
                                  initializer: Any, regularizer: Any, reuse: Any, trainable: bool, collections: Any,
                                  caching_device: Any, validate_shape: bool, constraint: Any) -> PartitionedVariable:
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
            partitions = _call_partitioner(partitioner, shape, dtype)

        if name in self._partitioned_vars:
            if reuse is False:
                raise ValueError(
                    f"Partitioned variable with name {name} already exists. Did you mean to set reuse=True or "
                    "reuse=tf.AUTO_REUSE in VarScope?"
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

        slice_dim, num_slices = _slice_dim_and_count(partitions)
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
        for i, (var_offset, var_shape) in enumerate(_iter_slices(full_shape, num_slices, slice_dim)):
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
                    part_name, init_shape, part_dtype, init, regularizer, partition_info, reuse, trainable,
                    collections, caching_device, validate_shape, constraint)
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


# ---- scopes -------------------------------------------------------------------------------------
class VariableScope:
    """The defaults ``get_variable`` uses inside a ``variable_scope``: name prefix, reuse, initializer, ...

    Attributes:
        name: The scope's name, the prefix of variable names (no trailing slash).
        original_name_scope: The name scope opened when the scope was first entered (ends in ``/``).
        reuse: True, False (only the root scope), or ``AUTO_REUSE``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("enc", initializer=tf.zeros_initializer()) as scope:
        ...         pass
        >>> scope.name, scope.original_name_scope, scope.reuse
        ('enc', 'enc/', False)
    """

    def __init__(self, reuse: Any, name: str = "", initializer: Any = None, regularizer: Any = None,
                 caching_device: Any = None, partitioner: Any = None, custom_getter: Any = None,
                 name_scope: str = "", dtype: Any = dtypes.float32, use_resource: Any = None,
                 constraint: Any = None) -> None:
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        """Makes ``get_variable`` in this scope (and scopes opened inside it) reuse existing variables."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        """Sets the default initializer."""
        self._initializer = initializer

    def set_dtype(self, dtype: Any) -> None:
        """Sets the default dtype."""
        self._dtype = dtype

    def set_use_resource(self, use_resource: Any) -> None:
        """Recorded for API compatibility: variables here are always TF1 reference variables."""
        self._use_resource = use_resource

    def set_regularizer(self, regularizer: Any) -> None:
        """Sets the default regularizer."""
        self._regularizer = regularizer

    def set_caching_device(self, caching_device: Any) -> None:
        """Sets the default caching device."""
        self._caching_device = caching_device

    def set_partitioner(self, partitioner: Any) -> None:
        """Sets the default partitioner."""
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter: Any) -> None:
        """Sets the default custom getter."""
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list[Any]:
        """Items of collection ``name`` whose names start with this scope's name."""
        return get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self) -> list[Any]:
        """This scope's trainable variables."""
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list[Any]:
        """This scope's global variables."""
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list[Any]:
        """This scope's local variables."""
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store: _VariableStore, name: str, shape: Any = None, dtype: Any = None,
                     initializer: Any = None, regularizer: Any = None, reuse: Any = None,
                     trainable: bool | None = None, collections: Any = None, caching_device: Any = None,
                     partitioner: Any = None, validate_shape: bool = True, use_resource: Any = None,
                     custom_getter: Any = None, constraint: Any = None, synchronization: Any = None,
                     aggregation: Any = None) -> Any:
        """Gets or creates ``<scope name>/<name>`` in ``var_store`` with this scope's defaults filled in."""
        regularizer = self._regularizer if regularizer is None else regularizer
        caching_device = self._caching_device if caching_device is None else caching_device
        partitioner = self._partitioner if partitioner is None else partitioner
        custom_getter = self._custom_getter if custom_getter is None else custom_getter
        reuse = self._reuse if reuse is None else reuse
        use_resource = self._use_resource if use_resource is None else use_resource
        full_name = f"{self._name}/{name}" if self._name else name
        # Variable names depend on variable scopes only, so the name scope is reset while creating.
        with get_default_graph().name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = convert_to_tensor(initializer).dtype
                if init_dtype is not dtypes.as_dtype(dtype):
                    raise ValueError(
                        f"Initializer type '{init_dtype}' and explicit dtype '{dtypes.as_dtype(dtype)}' don't match."
                    )
            initializer = self._initializer if initializer is None else initializer
            constraint = self._constraint if constraint is None else constraint
            dtype = self._dtype if dtype is None else dtype
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                trainable=trainable, collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)

    def __repr__(self) -> str:
        return f"<VariableScope name={self._name!r} reuse={self._reuse!r}>"


class _VariableScopeStore(threading.local):
    """One thread's current variable scope and the open counts of scope names (for unique default names)."""

    def __init__(self) -> None:
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name: str | None) -> None:
        # Sub-scopes of a closed scope restart their count when the scope is opened again.
        prefix = None if scope_name is None else scope_name + "/"
        for key in self.variable_scopes_count:
            if prefix is None or key.startswith(prefix):
                self.variable_scopes_count[key] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _get_variable_scope_store(graph: Graph | None = None) -> _VariableScopeStore:
    graph = graph or get_default_graph()
    store = graph._extra.get("variable_scope_store")
    if store is None:
        store = graph._extra.setdefault("variable_scope_store", _VariableScopeStore())
    return store


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph (in this thread).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("a"):
        ...         with tf.variable_scope("b"):
        ...             print(tf.get_variable_scope().name)
        a/b
    """
    return _get_variable_scope_store().current_scope


def get_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None, regularizer: Any = None,
                 trainable: bool | None = None, collections: Any = None, caching_device: Any = None,
                 partitioner: Any = None, validate_shape: bool = True, use_resource: Any = None,
                 custom_getter: Any = None, constraint: Any = None, synchronization: Any = None,
                 aggregation: Any = None) -> Any:
    """Gets an existing variable ``<scope>/<name>`` or creates a new one, following the scope's ``reuse``.

    Args:
        name: Name within the current variable scope.
        shape: Shape of a new variable (or checked against an existing one).
        dtype: Element type (default: the scope's, float32).
        initializer: An initializer (called with shape, dtype, partition_info), an initializer class, or a
            Tensor/value (then ``shape`` must be None and comes from the value). Default: the scope's, else
            glorot-uniform for floats and zeros for ints, bools and strings.
        regularizer: ``fn(variable) -> loss tensor or None``; the loss goes to ``REGULARIZATION_LOSSES``.
        trainable: Add to ``TRAINABLE_VARIABLES`` (default True).
        collections: Collections of a new variable (default ``[GLOBAL_VARIABLES]``).
        caching_device: Device of the variable's read snapshot.
        partitioner: ``fn(shape=, dtype=) -> partitions per axis``: creates a :class:`PartitionedVariable`.
        validate_shape: Require a fully known initial-value shape.
        use_resource: Accepted for compatibility; variables are TF1 reference variables.
        custom_getter: ``fn(getter, name, *args, **kwargs)`` wrapping the creation.
        constraint: Projection applied by optimizers after updates.
        synchronization: Accepted for compatibility.
        aggregation: Accepted for compatibility.

    Raises:
        ValueError: creating an existing variable without reuse, reusing a missing one, a shape or dtype that
            does not match the existing variable, no shape for a new variable, or a shape with a value initializer.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
        ...         a = tf.get_variable("b", [3], initializer=tf.ones_initializer())
        ...         b = tf.get_variable("b", [3])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(a is b, sess.run(b))
        True [1. 1. 1.]
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
        aggregation=aggregation)


def get_local_variable(name: str, shape: Any = None, dtype: Any = None, initializer: Any = None,
                       regularizer: Any = None, trainable: bool = False, collections: Any = None,
                       caching_device: Any = None, partitioner: Any = None, validate_shape: bool = True,
                       use_resource: Any = None, custom_getter: Any = None, constraint: Any = None,
                       synchronization: Any = None, aggregation: Any = None) -> Any:
    """Like :func:`get_variable`, but the variable goes to ``LOCAL_VARIABLES`` and is never trainable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     n = tf.get_local_variable("count", [], dtype=tf.int32)
        ...     [v.name for v in tf.local_variables()], tf.trainable_variables()
        (['count:0'], [])
    """
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(
        name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, trainable=False,
        collections=collections, caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource, custom_getter=custom_getter,
        constraint=constraint, synchronization=synchronization, aggregation=aggregation)


def _maybe_wrap_custom_getter(custom_getter: Any, old_getter: Any) -> Any:
    """An inner scope's getter calls the outer scope's getter, which calls the true getter."""
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter: Any, *args: Any, **kwargs: Any) -> Any:
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped_custom_getter


class _PureVariableScope:
    """Enters a VariableScope (no name scope): the scope store's current scope and counts, restored on exit."""

    def __init__(self, name_or_scope: str | VariableScope, reuse: Any = None, initializer: Any = None,
                 regularizer: Any = None, caching_device: Any = None, partitioner: Any = None,
                 custom_getter: Any = None, old_name_scope: str | None = None, dtype: Any = dtypes.float32,
                 use_resource: Any = None, constraint: Any = None) -> None:
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._initializer = initializer
        self._regularizer = regularizer
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._old_name_scope = old_name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        self._store = _get_variable_scope_store()

    def _apply_overrides(self, scope: VariableScope, outer_getter: Any) -> VariableScope:
        if self._initializer is not None:
            scope.set_initializer(self._initializer)
        if self._regularizer is not None:
            scope.set_regularizer(self._regularizer)
        if self._caching_device is not None:
            scope.set_caching_device(self._caching_device)
        if self._partitioner is not None:
            scope.set_partitioner(self._partitioner)
        if self._custom_getter is not None:
            scope.set_custom_getter(_maybe_wrap_custom_getter(self._custom_getter, outer_getter))
        if self._dtype is not None:
            scope.set_dtype(self._dtype)
        if self._use_resource is not None:
            scope.set_use_resource(self._use_resource)
        return scope

    def __enter__(self) -> VariableScope:
        store = self._store
        self._old = store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            given = self._name_or_scope
            self._new_name = given.name
            store.open_variable_scope(self._new_name)
            self._old_subscopes = dict(store.variable_scopes_count)
            # Jumping to a captured scope: a copy of it (reuse is the captured one's, not the parent's).
            scope = VariableScope(
                given.reuse if not self._reuse else self._reuse, name=self._new_name, initializer=given.initializer,
                regularizer=given.regularizer, caching_device=given.caching_device, partitioner=given.partitioner,
                dtype=given.dtype, custom_getter=given.custom_getter, name_scope=given.original_name_scope,
                use_resource=given.use_resource, constraint=self._constraint)
            scope = self._apply_overrides(scope, given.custom_getter)
        else:
            old = self._old
            self._new_name = f"{old.name}/{self._name_or_scope}" if old.name else self._name_or_scope
            reuse = self._reuse or old.reuse  # reuse is inherited by sub-scopes
            name_scope = self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            scope = VariableScope(
                reuse, name=self._new_name, initializer=old.initializer, regularizer=old.regularizer,
                caching_device=old.caching_device, partitioner=old.partitioner, dtype=old.dtype,
                use_resource=old.use_resource, custom_getter=old.custom_getter, name_scope=name_scope,
                constraint=self._constraint)
            scope = self._apply_overrides(scope, old.custom_getter)
            store.open_variable_scope(self._new_name)
        store.current_scope = scope
        self._entered = scope
        return scope

    def __exit__(self, *exc: Any) -> None:
        store = self._store
        if store.current_scope is not self._entered:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            store.variable_scopes_count = self._old_subscopes
        else:
            store.close_variable_subscopes(self._new_name)
        store.current_scope = self._old


def _unique_variable_scope(prefix: str) -> str:
    """``prefix``, or ``prefix_N`` with the first N whose scope was not opened yet in the current scope."""
    store = _get_variable_scope_store()
    current = store.current_scope
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


def _graph_from_values(values: Any) -> Graph:
    for v in values or ():
        graph = getattr(v, "graph", None)
        if isinstance(graph, Graph):
            return graph
    return get_default_graph()


class variable_scope:  # noqa: N801 - TF's public name
    """Opens a variable scope (and a name scope): a prefix and defaults for ``get_variable``.

    Args:
        name_or_scope: A name or a captured :class:`VariableScope` to re-enter.
        default_name: Used (made unique) when ``name_or_scope`` is None.
        values: Tensors passed to the op; they pick the graph.
        initializer, regularizer, caching_device, partitioner, custom_getter, dtype, constraint: Defaults for
            variables created inside (inherited by inner scopes).
        reuse: True (reuse, inherited by inner scopes), ``AUTO_REUSE``, or None/False (inherit).
        use_resource: Accepted for compatibility.
        auxiliary_name_scope: False re-enters the current name scope instead of opening a new one.

    Raises:
        TypeError: neither ``name_or_scope`` nor ``default_name`` is given, or ``name_or_scope`` has a wrong type.
        ValueError: ``reuse`` is not True/False/None/AUTO_REUSE, or ``reuse=True`` is used with ``default_name``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("foo") as scope:
        ...         v = tf.get_variable("v", [1])
        ...     with tf.variable_scope(scope, reuse=True):
        ...         c = tf.constant(1.0, name="c")
        ...         v1 = tf.get_variable("v", [1])
        >>> v1 is v, c.op.name
        (True, 'foo_1/c')
    """

    def __init__(self, name_or_scope: str | VariableScope | None, default_name: str | None = None,
                 values: Any = None, initializer: Any = None, regularizer: Any = None, caching_device: Any = None,
                 partitioner: Any = None, custom_getter: Any = None, reuse: Any = None, dtype: Any = None,
                 use_resource: Any = None, constraint: Any = None, auxiliary_name_scope: bool = True) -> None:
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # non-inheriting scopes do not exist: False means "inherit", like None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(f"The auxiliary_name_scope must be `True` or `False`, while get {auxiliary_name_scope}")
        if name_or_scope is not None and not isinstance(name_or_scope, VariableScope | str):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        if name_or_scope is None and reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._graph = _graph_from_values(values)
        self._auxiliary_name_scope = auxiliary_name_scope
        self._scope_args = {
            "initializer": initializer, "regularizer": regularizer, "caching_device": caching_device,
            "partitioner": partitioner, "custom_getter": custom_getter, "dtype": dtype,
            "use_resource": use_resource, "constraint": constraint,
        }
        self._reuse = reuse
        # One entry per active `with`, so the same object may be entered again while open.
        self._entered: list[tuple[Any, Any, Any]] = []

    def __enter__(self) -> VariableScope:
        graph_cm = self._graph.as_default()
        graph_cm.__enter__()
        name_cm = pure = None
        try:
            name_cm, scope_name = self._enter_name_scope()
            pure = self._pure_scope(scope_name)
            scope = pure.__enter__()
        except BaseException:
            if name_cm is not None:
                name_cm.__exit__(None, None, None)
            graph_cm.__exit__(None, None, None)
            raise
        self._entered.append((graph_cm, name_cm, pure))
        return scope

    def _enter_name_scope(self) -> tuple[Any, str | None]:
        """Opens the name scope of this block; returns its context manager (or None) and the scope string."""
        graph = self._graph
        if not self._auxiliary_name_scope:
            current = graph.get_name_scope()
            name_cm = graph.name_scope(current + "/" if current else "")
        elif isinstance(self._name_or_scope, str):
            name_cm = graph.name_scope(self._name_or_scope) if self._name_or_scope else None
        elif isinstance(self._name_or_scope, VariableScope):
            last = self._name_or_scope.name.split("/")[-1]
            name_cm = graph.name_scope(last) if last else None
        else:
            name_cm = graph.name_scope(self._default_name)
        if name_cm is None:
            return None, None
        return name_cm, name_cm.__enter__()

    def _pure_scope(self, scope_name: str | None) -> _PureVariableScope:
        args = self._scope_args
        if self._name_or_scope is None:
            unique = _unique_variable_scope(self._default_name)
            return _PureVariableScope(unique, old_name_scope=scope_name, **args)
        if scope_name is None:  # the root scope ("") re-entered: no name scope of its own
            return _PureVariableScope(self._name_or_scope, reuse=self._reuse, **args)
        if isinstance(self._name_or_scope, str):
            old_name_scope = scope_name
        else:
            old_name_scope = self._name_or_scope.original_name_scope
        return _PureVariableScope(self._name_or_scope, reuse=self._reuse, old_name_scope=old_name_scope, **args)

    def __exit__(self, *exc: Any) -> None:
        graph_cm, name_cm, pure = self._entered.pop()
        try:
            pure.__exit__(*exc)
        finally:
            try:
                if name_cm is not None:
                    name_cm.__exit__(*exc)
            finally:
                graph_cm.__exit__(*exc)


def variable_op_scope(values: Any, name_or_scope: str | VariableScope | None, default_name: str | None = None,
                      **kwargs: Any) -> variable_scope:
    """Deprecated TF1 spelling of ``variable_scope(name_or_scope, default_name, values, ...)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_op_scope([], None, default_name="op") as scope:
        ...         print(scope.name)
        op
    """
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)
