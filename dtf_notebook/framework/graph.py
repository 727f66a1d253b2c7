"""``Graph``: a dataflow graph of operations, its scopes and the default-graph stack.

The graph owns op naming (``name_scope``, unique names), the device stack
(``device``), the resource ``container``, ``control_dependencies``,
``colocate_with`` and collections. Op creation goes through
:meth:`Graph.create_op`, which runs the op's registered output inference.

Example:
    >>> import dtf_notebook as tf
    >>> g = tf.Graph()
    >>> with g.as_default(), g.name_scope("layer"):
    ...     w = tf.constant(1.0, name="w")
    >>> w.op.name, g.get_tensor_by_name("layer/w:0") is w
    ('layer/w', True)
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from dtf_notebook.framework import device_spec, gradient_registry, op_registry
from dtf_notebook.framework.default_session import clear_default_session_stack
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.versions import GRAPH_DEF_VERSION

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


class GraphKeys:
    """Standard collection names (TF's ``tf.GraphKeys``).

    Example:
        >>> GraphKeys.TRAINABLE_VARIABLES
        'trainable_variables'
    """

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A TensorFlow-style computation graph.

    Example:
        >>> import dtf_notebook as tf
        >>> g = tf.Graph()
        >>> with g.as_default():
        ...     x = tf.constant(3.0) * 2.0
        >>> x.graph is g
        True
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._device_stack: list[Any] = []
        self._container = ""
        self._control_dependencies_stack: list[_ControlDependencies] = []
        self._colocation_stack: list[Operation] = []
        self._collections: dict[str, list[Any]] = {}
        self._finalized = False
        self._version = 0
        # Counts rewiring of existing ops (not additions), so remote sessions know to resend the graph.
        self._mutations = 0
        self._next_id = 1
        # The graph's version right after each op was added (``as_graph_def(from_version=...)``).
        self._op_versions: list[int] = []
        self.seed: int | None = None
        # Per-graph state other modules keep (variable scopes, global-step caches, ...).
        self._extra: dict[str, Any] = {}
        # The cond or while context ops are being built in (ops/control_flow/contexts.py), None outside.
        self._control_flow_context: Any = None

    # ---- default graph --------------------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        """Makes this graph the default graph inside the ``with`` block."""
        stack = _default_graph_stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    # ---- version, finalize ------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Grows whenever the graph changes (ops added or rewired)."""
        return self._version

    def _bump_version(self) -> None:
        self._version += 1
        self._mutations += 1

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        """Makes the graph read-only: creating ops afterwards raises RuntimeError."""
        self._finalized = True

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    # ---- op creation --------------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: list[Tensor],
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        control_inputs: list[Operation] | None = None,
        compute_device: bool = True,
    ) -> Operation:
        """Adds an op of a registered type and returns it.

        Args:
            op_type: A registered op type.
            inputs: Input tensors of this graph.
            attrs: Attribute values (plain data, DTypes, TensorShapes, numpy arrays).
            name: Requested name (made unique in the current name scope); defaults to the type.
            control_inputs: Extra control inputs.
            compute_device: Apply the device stack (False when importing a graph def).

        Raises:
            ValueError: an input belongs to another graph, or the name is invalid.
            RuntimeError: the graph is finalized.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default() as g:
            ...     op = g.create_op("NoOp", [], name="nothing")
            >>> op.name
            'nothing'
        """
        self._check_not_finalized()
        op_def = op_registry.get(op_type)
        for t in inputs:
            if not isinstance(t, Tensor):
                raise TypeError(f"Input to op {op_type!r} must be a Tensor, got {t!r}")
            if t.graph is not self:
                raise ValueError(f"Tensor {t.name!r} must be from the same graph as the op {name or op_type!r}.")
        with self._lock:
            if name and name.endswith("/"):
                full_name = name[:-1]  # a scope name used as is (TF: variables named after their scope)
                if full_name in self._ops_by_name:
                    raise ValueError(f"Duplicate node name in graph: '{full_name}'")
            else:
                full_name = self.unique_name(name or op_type)
            # Imported graphs may hold runtime-internal nodes ("_send/...", "_dtf/feed/..."), as TF's do.
            if not _VALID_OP_NAME.match(full_name) and (compute_device or not _VALID_OP_NAME.match(full_name[1:])):
                raise ValueError(f"'{full_name}' is not a valid node name")
            ctrl = list(control_inputs or [])
            input_ops = {t.op for t in inputs}
            for controller in self._control_dependencies_stack:
                # An op fed by an op built in the same block already runs after its control inputs (TF1).
                if any(op in controller.created_set for op in input_ops):
                    continue
                for c in controller.control_inputs:
                    if c not in input_ops and c not in ctrl:
                        ctrl.append(c)
            # Imported nodes (compute_device=False) were written elsewhere: no local call stack to record.
            op = Operation(self, full_name, op_type, inputs, attrs or {}, ctrl, self._next_id, compute_device)
            self._next_id += 1
            try:
                specs = op_def.infer(op)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{e} (while creating op {full_name!r} of type {op_type})") from None
            op._outputs = [
                Tensor(op, i, dtype, shape, is_ref=i in op_def.ref_outputs) for i, (dtype, shape) in enumerate(specs)
            ]
            for t in inputs:
                t._consumers.append(op)
            for c in ctrl:
                c._control_outputs.append(op)
            if compute_device:
                # TF1 builds an op that takes a variable by reference colocated with that variable, whatever
                # device blocks or device functions (replica_device_setter) are active.
                refs = [inputs[i].op for i in op_def.ref_inputs if i < len(inputs) and inputs[i].is_ref]
                self._apply_device_and_colocation(op, refs)
            if self._container and "container" in op._attrs and not op._attrs["container"]:
                op._attrs["container"] = self._container
            if self._extra.get("gradient_override_map"):
                override = gradient_registry.override_for(self, op_type)
                if override is not None:
                    op._attrs[gradient_registry.OVERRIDE_ATTR] = override
            for controller in self._control_dependencies_stack:
                controller.created_set.add(op)
            self._ops.append(op)
            self._ops_by_name[full_name] = op
            self._version += 1
            self._op_versions.append(self._version)
            context = self._control_flow_context
            if context is not None and compute_device:
                op._control_flow_context = context
                context.add_op(op)  # brings outside inputs in through Switch/Enter, guards input-less ops
        return op

    def _get_control_flow_context(self) -> Any:
        """The cond or while context ops are being built in (None outside control flow)."""
        return self._control_flow_context

    def _set_control_flow_context(self, context: Any) -> None:
        self._control_flow_context = context

    def _apply_device_and_colocation(self, op: Operation, refs: Sequence[Operation] = ()) -> None:
        if self._device_stack and not refs:
            op._device = device_spec.apply_device_stack(self._device_stack, op)
        if self._colocation_stack or refs:
            groups: set[str] = set()
            device_set = False
            for coloc in [*refs, *self._colocation_stack]:
                groups.update(coloc.colocation_groups())
                if coloc.device and not device_set:
                    op._device = coloc.device
                    device_set = True
            op._attrs["_class"] = sorted(groups)

    # ---- names --------------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """A unique op name for ``name`` under the current name scope (TF's rule: ``a``, ``a_1``, ...)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        name_key = name.lower()
        i = self._names_in_use.get(name_key, 0)
        if mark_as_used:
            self._names_in_use[name_key] = i + 1
        if i > 0:
            base_key = name_key
            while name_key in self._names_in_use:
                name_key = f"{base_key}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[name_key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        """The current name scope, without a trailing slash."""
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Opens a name scope; yields the scope prefix ending in ``/`` (TF1 semantics).

        ``None`` or ``""`` resets to the top level; a name ending in ``/`` is used as is.

        Raises:
            ValueError: the name has characters TF does not allow.
        """
        old = self._name_stack
        if not name:
            new_stack = ""
            scope = ""
        elif name.endswith("/"):
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new_stack = name[:-1]
            scope = name
        else:
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new_stack = self.unique_name(name)
            scope = new_stack + "/"
        self._name_stack = new_stack
        try:
            yield scope
        finally:
            self._name_stack = old

    def gradient_override_map(self, op_type_map: dict[str, str]) -> contextlib.AbstractContextManager[None]:
        """Ops of the map's types created in the block take their gradient from the function registered (with
        ``tf.RegisterGradient``) under the name the map gives their type (see ``framework.gradient_registry``)."""
        return gradient_registry.gradient_override_map(self, op_type_map)

    # ---- device, container, control deps, colocation ----------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function: Any) -> Iterator[None]:
        """Requests a device for ops created in the block (string, DeviceSpec, function of the op, or None)."""
        self._device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            self._device_stack.pop()

    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[str]:
        """Stateful ops created in the block keep their resources in ``container_name``."""
        old = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = old

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs: Any) -> Iterator[None]:
        """Ops created in the block run only after ``control_inputs`` (``None`` clears outer ones)."""
        if control_inputs is None:
            saved = self._control_dependencies_stack
            self._control_dependencies_stack = []
            try:
                yield
            finally:
                self._control_dependencies_stack = saved
            return
        ops = []
        for c in control_inputs:
            c = getattr(c, "_as_graph_element", lambda c=c: c)()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
            if c.graph is not self:
                raise ValueError(f"Control input {c.name!r} must be from the same graph.")
            if c not in ops:
                ops.append(c)
        controller = _ControlDependencies(ops)
        self._control_dependencies_stack.append(controller)
        try:
            yield
        finally:
            self._control_dependencies_stack.remove(controller)

    @contextlib.contextmanager
    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        """Ops created in the block are placed with ``op`` (its device wins over device blocks)."""
        if op is not None:
            op = getattr(op, "_as_graph_element", lambda: op)()
            if isinstance(op, Tensor):
                op = op.op
            if not isinstance(op, Operation):
                raise TypeError(f"colocate_with needs an Operation, Tensor or Variable, got {op!r}")
        saved_devices = self._device_stack
        saved_coloc = self._colocation_stack
        self._device_stack = []
        if ignore_existing:
            self._colocation_stack = []
        if op is not None:
            self._colocation_stack = self._colocation_stack + [op]
        try:
            yield
        finally:
            self._device_stack = saved_devices
            self._colocation_stack = saved_coloc

    # ---- lookup -------------------------------------------------------------------------------
    def get_operations(self) -> list[Operation]:
        """All ops, in creation order."""
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        """Returns the op called ``name``.

        Raises:
            KeyError: no such op.
            TypeError: ``name`` is not a string.
        """
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name: str) -> Tensor:
        """Returns the tensor called ``"op:index"``.

        Raises:
            KeyError: no such op or output.
            ValueError: the name is not of the form ``op:index``.
        """
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True) -> Any:
        """Resolves a Tensor, Operation, Variable-like object or name to an element of this graph."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError(f"Name '{obj}' appears to refer to a Tensor, not a Operation.")
                op_name, _, index = obj.rpartition(":")
                try:
                    idx = int(index)
                except ValueError:
                    raise ValueError(
                        f"The name '{obj}' looks a like a Tensor name, but is not a valid one. "
                        'Tensor names must be of the form "<op_name>:<output_index>".'
                    ) from None
                op = self._ops_by_name.get(op_name)
                if op is None:
                    raise KeyError(
                        f"The name '{obj}' refers to a Tensor which does not exist. "
                        f"The operation, '{op_name}', does not exist in the graph."
                    )
                if idx >= len(op._outputs):
                    raise KeyError(
                        f"The name '{obj}' refers to a Tensor which does not exist. The operation, "
                        f"'{op_name}', exists but only has {len(op._outputs)} outputs."
                    )
                return op._outputs[idx]
            if not allow_operation:
                raise ValueError(
                    f"The name '{obj}' looks like an (invalid) Operation name, not a Tensor. "
                    'Tensor names must be of the form "<op_name>:<output_index>".'
                )
            op = self._ops_by_name.get(obj)
            if op is None:
                raise KeyError(f"The name '{obj}' refers to an Operation not in the graph.")
            return op
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name!r} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name!r} is not an element of this graph.")
            return obj
        kinds = " or ".join(k for k, ok in (("Tensor", allow_tensor), ("Operation", allow_operation)) if ok)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {kinds}.")

    # ---- collections --------------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection(self, key: str, scope: str | None = None) -> list[Any]:
        """Items in collection ``key`` (a copy), filtered by ``scope`` as a regex matched on their names."""
        items = self._collections.get(key, [])
        if scope is None:
            return list(items)
        pattern = re.compile(scope)
        return [item for item in items if hasattr(item, "name") and pattern.match(item.name)]

    def get_collection_ref(self, key: str) -> list[Any]:
        """The live list behind collection ``key`` (created if missing)."""
        return self._collections.setdefault(key, [])

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # ---- serialisation ------------------------------------------------------------------------
    def as_graph_def(
        self, from_version: int | None = None, add_shapes: bool = False, use_pybind11_proto: bool = False
    ) -> Any:
        """The graph as TF's ``GraphDef`` protobuf (``tf.GraphDef``): its bytes parse in real TF, and
        ``tf.import_graph_def`` (TF's or this package's) rebuilds the graph from them.

        Each node carries the attrs TF's signature of its op type names, written as TF writes them (see
        :mod:`dtf_notebook.framework.attr_values`; attrs TF's op does not have keep a ``_dtf_`` name). Op types
        TF does not have (this package's save ops ``SaveShard``, ``MergeCheckpointShards`` and ``RestoreSlices``)
        are written as they are: TF imports a graph without them (a meta graph's saver is written with TF's own
        save ops, see ``tf.train.export_meta_graph``).

        Args:
            from_version: Only the nodes added since :attr:`version` had this value.
            add_shapes: Record each node's static output shapes in its ``_output_shapes`` attr.
            use_pybind11_proto: Accepted as in TF; the message is a ``protobuf`` one either way.

        Returns:
            A ``GraphDef`` message.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default() as g:
            ...     y = tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]), name="y")
            >>> node = g.as_graph_def().node[-1]
            >>> node.name, node.op, list(node.input), tf.as_dtype(node.attr["T"].type)
            ('y', 'MatMul', ['ones', 'ones_1'], tf.float32)
        """
        del use_pybind11_proto
        from dtf_notebook.framework.graph_proto import graph_def_proto

        return graph_def_proto(self, add_shapes=add_shapes, from_version=from_version)

    def as_graph_def_dict(self) -> dict[str, Any]:
        """The graph as plain data, ``{"node": [node_def, ...], "versions": {"producer": ...}}``: each node is
        ``Operation.node_def`` (attrs as the ops hold them). This is the form the wire format, placement,
        partitioning and ``import_graph_def`` here work on; :meth:`as_graph_def` is TF's protobuf.

        Example:
            >>> g = Graph()
            >>> g.as_graph_def_dict()
            {'node': [], 'versions': {'producer': 1}}
        """
        return {"node": [op.node_def for op in self._ops], "versions": {"producer": GRAPH_DEF_VERSION}}

    def _operations_since(self, from_version: int | None) -> list[Operation]:
        """The ops added after :attr:`version` had the value ``from_version`` (every op for None)."""
        if from_version is None:
            return list(self._ops)
        return [op for op, version in zip(self._ops, self._op_versions) if version > from_version]


class _ControlDependencies:
    __slots__ = ("control_inputs", "created_set")

    def __init__(self, control_inputs: list[Operation]) -> None:
        self.control_inputs = control_inputs
        self.created_set: set[Operation] = set()


# ---- the default graph stack ------------------------------------------------------------------
class _DefaultGraphState(threading.local):
    def __init__(self) -> None:
        self.stack: list[Graph] = []


_state = _DefaultGraphState()
_global_default_graph: Graph | None = None


def _default_graph_stack() -> list[Graph]:
    return _state.stack


def get_default_graph() -> Graph:
    """The innermost graph made default with ``as_default`` in this thread, else the global one.

    Example:
        >>> g = Graph()
        >>> with g.as_default():
        ...     get_default_graph() is g
        True
    """
    global _global_default_graph
    if _state.stack:
        return _state.stack[-1]
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph() -> None:
    """Replaces the global default graph with a new empty one.

    Raises:
        AssertionError: called inside a ``with graph.as_default()`` block (as TF does).

    Example:
        >>> import dtf_notebook as tf
        >>> old = tf.get_default_graph()
        >>> reset_default_graph()
        >>> tf.get_default_graph() is old, tf.get_default_graph().get_operations()
        (False, [])
    """
    global _global_default_graph
    if _state.stack:
        raise AssertionError(
            "Do not use tf.reset_default_graph() to clear nested graphs. If you need a cleared "
            "graph, exit the nesting and create a new graph."
        )
    clear_default_session_stack()
    _global_default_graph = Graph()


# ---- module-level scope helpers (tf.device, tf.name_scope, ...) -------------------------------
def device(device_name_or_function: Any) -> contextlib.AbstractContextManager[None]:
    """``tf.device``: requests a device for ops created in the block, in the default graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.device("/job:ps/task:0"):
        ...         v = tf.constant(1.0)
        ...     v.device
        '/job:ps/task:0'
    """
    return get_default_graph().device(device_name_or_function)


def container(container_name: str) -> contextlib.AbstractContextManager[str]:
    """``tf.container``: stateful ops in the block keep their resources in this container.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.container("experiment_1"):
        ...         v = tf.Variable(1.0)
        ...     v.op.get_attr("container")
        'experiment_1'
    """
    return get_default_graph().container(container_name)


def control_dependencies(control_inputs: Any) -> contextlib.AbstractContextManager[None]:
    """``tf.control_dependencies``: ops in the block run after ``control_inputs``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.no_op(name="a")
        ...     with tf.control_dependencies([a]):
        ...         b = tf.no_op(name="b")
        ...     [c.name for c in b.control_inputs]
        ['a']
    """
    return get_default_graph().control_dependencies(control_inputs)


def colocate_with(op: Any, ignore_existing: bool = False) -> contextlib.AbstractContextManager[None]:
    """``tf.colocate_with``: ops created in the block are placed with ``op``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.device("/job:ps/task:1"):
        ...         v = tf.constant(1.0, name="v")
        ...     with tf.colocate_with(v):
        ...         w = tf.identity(v)
        ...     w.device, w.op.get_attr("_class")
        ('/job:ps/task:1', ['loc:@v'])
    """
    return get_default_graph().colocate_with(op, ignore_existing)


class name_scope:  # noqa: N801 - TF's public name
    """``tf.name_scope(name, default_name=None, values=None)``: prefixes names of ops created inside.

    Yields the scope string (ending in ``/``). ``values`` picks the graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.name_scope("loss") as scope:
        ...         c = tf.constant(0.0, name="c")
        ...     scope, c.op.name
        ('loss/', 'loss/c')
    """

    def __init__(self, name: str | None, default_name: str | None = None, values: Any = None) -> None:
        if not name and default_name:
            name = default_name
        self._name = name
        self._values = values
        self._cm: Any = None

    def __enter__(self) -> str:
        graph = _graph_from_values(self._values)
        self._g_cm = graph.as_default()
        self._g_cm.__enter__()
        self._cm = graph.name_scope(self._name)
        return self._cm.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._cm.__exit__(*exc)
        self._g_cm.__exit__(*exc)


def _graph_from_values(values: Any) -> Graph:
    default = get_default_graph()
    if getattr(default, "building_function", False):
        return default  # a function being traced (tf.data) captures the enclosing graphs' tensors it uses, as TF's
    for v in values or ():
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            return g
    return default


def get_name_scope() -> str:
    """The default graph's current name scope.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.name_scope("outer"), tf.name_scope("inner"):
        ...     get_name_scope()
        'outer/inner'
    """
    return get_default_graph().get_name_scope()


def add_to_collection(name: str, value: Any) -> None:
    """Adds ``value`` to collection ``name`` of the default graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     add_to_collection("losses", 0.5)
        ...     tf.get_collection("losses")
        [0.5]
    """
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    """Adds ``value`` to each collection in ``names`` of the default graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     add_to_collections(["a", "b"], 1)
        ...     tf.get_collection("a"), tf.get_collection("b")
        ([1], [1])
    """
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: str | None = None) -> list[Any]:
    """Items of collection ``key`` of the default graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0, name="v")
        ...     [x.name for x in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)]
        ['v:0']
    """
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    """The live list behind collection ``key`` of the default graph.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     get_collection_ref("steps").append(1)   # editing the list edits the collection
        ...     tf.get_collection("steps")
        [1]
    """
    return get_default_graph().get_collection_ref(key)
