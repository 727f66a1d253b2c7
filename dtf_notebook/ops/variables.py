"""``tf.Variable`` (TF1 reference variables) and the variable initializer helpers.

A ``Variable`` is a handle: the ``VariableV2`` op names a resource in the
runtime's containers, ``initializer`` assigns the initial value, and the
``read`` snapshot gives its value to other ops. The value itself never lives
in the Python object, so sessions that share containers share the variable.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.Variable(0.0, name="x")
    ...     inc = tf.assign(x, x + 1)
    ...     with tf.Session() as sess:
    ...         _ = sess.run(x.initializer)
    ...         _ = sess.run(inc)
    ...         print(x.eval())
    1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtf_notebook.framework.default_session import get_default_session
from dtf_notebook.framework.graph import (
    GraphKeys,
    add_to_collections,
    get_collection,
    get_default_graph,
    name_scope,
)
from dtf_notebook.framework.meta_graph import register_proto_function, strip_name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import OVERLOADABLE_OPERATORS, Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import identity_ops, state_ops
from dtf_notebook.ops.variable_creator import VariableMeta
from dtf_notebook.protos.graph_pb import VariableDef

__all__ = [
    "Variable",
    "VariableV1",
    "global_variables",
    "all_variables",
    "local_variables",
    "trainable_variables",
    "model_variables",
    "moving_average_variables",
    "variables_initializer",
    "global_variables_initializer",
    "initialize_all_variables",
    "local_variables_initializer",
    "initialize_local_variables",
    "is_variable_initialized",
    "assert_variables_initialized",
    "report_uninitialized_variables",
]


class _SaveSliceInfo:
    """How a part maps into its full variable, for savers (TF's ``Variable.SaveSliceInfo``)."""

    def __init__(
        self, full_name: str, full_shape: Sequence[int], var_offset: Sequence[int], var_shape: Sequence[int]
    ) -> None:
        self.full_name = full_name
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)
        self.var_shape = list(var_shape)

    @property
    def spec(self) -> str:
        """TF's slice spec string, e.g. ``"4 3 0,2:0,3"``."""
        full = " ".join(str(d) for d in self.full_shape) + " "
        return full + ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))


class Variable(metaclass=VariableMeta):
    """A TF1 variable: state kept in the runtime's resource containers across ``run`` calls.

    Args:
        initial_value: A value or tensor, or a callable returning one (then its ops are colocated with the variable).
        trainable: Add to ``TRAINABLE_VARIABLES`` (optimizers' default var_list).
        collections: Collections to add to (default ``[GLOBAL_VARIABLES]``).
        validate_shape: Require the initial value to have a fully known shape.
        caching_device: Device for the ``read`` snapshot (default: with the variable).
        name: Variable name (made unique).
        variable_def: Instead of creating ops, wrap the ones already in the graph that this ``VariableDef`` names
            (what ``to_proto()`` returns; the dict of its fields is taken too); used when a meta graph is
            imported. Not added to any collection.
        import_scope: Name scope the ``variable_def`` names sit under.
        dtype: Convert the initial value to this dtype.
        expected_shape: Ignored beyond a compatibility check (TF1 API).
        shape: Declared shape (defaults to the initial value's).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(tf.zeros([2, 3]), name="w")
        >>> w.name, w.shape.as_list(), w.op.type
        ('w:0', [2, 3], 'VariableV2')
    """

    def __init__(
        self,
        initial_value: Any = None,
        trainable: bool = True,
        collections: Any = None,
        validate_shape: bool = True,
        caching_device: Any = None,
        name: str | None = None,
        variable_def: Any = None,
        dtype: Any = None,
        expected_shape: Any = None,
        import_scope: Any = None,
        constraint: Any = None,
        use_resource: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
        shape: Any = None,
    ) -> None:
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_def(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        collections = [GraphKeys.GLOBAL_VARIABLES] if collections is None else list(collections)
        if isinstance(collections, str):
            raise ValueError(
                f"collections argument to Variable constructor must be a list, tuple, or set. Got {collections!r}"
            )
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections = collections + [GraphKeys.TRAINABLE_VARIABLES]
        graph = get_default_graph()
        self._constraint = constraint
        self._trainable = trainable
        self._save_slice_info: Any = None
        self._partition_info: Any = None
        # Like TF's init_scope: a variable never depends on the control context it is created in, nor lives in
        # the while loop or cond it is created in (an RNN cell's first call inside dynamic_rnn's loop).
        outer_flow_context = graph._get_control_flow_context()
        graph._set_control_flow_context(None)
        try:
            self._init_in_outer_scope(graph, initial_value, name, dtype, shape, validate_shape, caching_device)
        finally:
            graph._set_control_flow_context(outer_flow_context)
        self._graph = graph
        add_to_collections(collections, self)

    def _init_in_outer_scope(
        self,
        graph: Any,
        initial_value: Any,
        name: Any,
        dtype: Any,
        shape: Any,
        validate_shape: bool,
        caching_device: Any,
    ) -> None:
        with (
            graph.control_dependencies(None),
            name_scope(name, "Variable", [] if callable(initial_value) else [initial_value]) as scope,
        ):
            var_name = scope[:-1]
            if callable(initial_value):
                first_new = len(graph._ops)
                with graph.name_scope("Initializer"), graph.device(None):
                    self._initial_value = convert_to_tensor(initial_value(), name="initial_value", dtype=dtype)
                for op in graph._ops[first_new:]:
                    op._set_attr("_class", [f"loc:@{var_name}"])
            else:
                self._initial_value = convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
            init_shape = self._initial_value.shape
            if shape is not None:
                declared = TensorShape(shape)
                if validate_shape and not declared.is_compatible_with(init_shape):
                    raise ValueError(f"Shape of the initial value {init_shape} is incompatible with shape {declared}")
            else:
                declared = init_shape
            if validate_shape and not declared.is_fully_defined():
                raise ValueError(f"initial_value must have a shape specified: {self._initial_value!r}")
            self._variable = state_ops.variable_op_v2(
                declared if validate_shape else TensorShape(None), self._initial_value.dtype, name=scope
            )
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, self._initial_value, validate_shape=validate_shape, name="Assign"
                ).op
            if caching_device is not None:
                with graph.device(caching_device):
                    self._snapshot = identity_ops.identity(self._variable, name="read")
            else:
                with graph.colocate_with(self._variable.op):
                    self._snapshot = identity_ops.identity(self._variable, name="read")

    def _init_from_def(self, variable_def: Any, import_scope: str | None) -> None:
        """Wraps ops already in the default graph (an imported meta graph), as a ``VariableDef`` (``to_proto()``)
        or its dict form (the JSON meta graphs of earlier versions) names them."""
        graph = get_default_graph()
        fields = variable_def if isinstance(variable_def, dict) else _variable_def_fields(variable_def)
        scope = import_scope.rstrip("/") + "/" if import_scope else ""

        def element(key: str) -> Any:
            name = fields.get(key)
            if not isinstance(name, str) or not name:
                raise ValueError(f"variable_def needs a string {key!r}, got {name!r}")
            return graph.as_graph_element(scope + name)

        self._variable = element("variable_name")
        self._initializer_op = element("initializer_name")
        self._snapshot = element("snapshot_name")
        if self._variable.op.type == "VarHandleOp":  # a resource variable TF 2 wrote: its own subclass
            self.__class__ = _resource_variable_class[0]
        elif self._variable.op.type not in ("VariableV2", "Variable"):
            raise ValueError(f"variable_def names {self._variable.name}, a {self._variable.op.type}, not a variable")
        # Without its name, the initial value is what the initializer assigns (its second input).
        initial = fields.get("initial_value_name")
        self._initial_value = element("initial_value_name") if initial else self._initializer_op.inputs[1]
        self._trainable = bool(fields.get("trainable", True))
        self._constraint = None
        info = fields.get("save_slice_info_def")
        self._save_slice_info = (
            _SaveSliceInfo(scope + info["full_name"], info["full_shape"], info["var_offset"], info["var_shape"])
            if info
            else None
        )
        self._partition_info = None
        self._graph = graph

    # ---- identity ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self) -> Operation:
        return self._variable.op

    @property
    def graph(self) -> Any:
        return self._graph

    @property
    def dtype(self) -> dtypes.DType:
        return self._variable.dtype

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self) -> Any:
        return self._constraint

    @property
    def initializer(self) -> Operation:
        """The op that assigns the initial value."""
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    def value(self) -> Tensor:
        """The ``read`` snapshot: this variable's value as a tensor."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the current value (an Identity op)."""
        return identity_ops.identity(self._variable, name="read")

    def _ref(self) -> Tensor:
        return self._variable

    def _as_graph_element(self) -> Tensor:
        return self._variable

    def initialized_value(self) -> Tensor:
        """The value, initialising the variable first if it is not yet initialised."""
        with self._graph.control_dependencies(None):
            return state_ops.value_or_initial(self._variable, self._initial_value)

    # ---- updates ----------------------------------------------------------------------------
    def assign(self, value: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True) -> Any:
        """``tf.assign(self, value)``; returns the new value (or the op when ``read_value`` is False)."""
        t = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_add(
        self, delta: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        """``tf.assign_add(self, delta)``."""
        t = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_sub(
        self, delta: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        """``tf.assign_sub(self, delta)``."""
        t = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def count_up_to(self, limit: int) -> Tensor:
        """``tf.count_up_to(self, limit)``: increments this int variable until it reaches ``limit``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     Variable(0).count_up_to(3).op.type
            'CountUpTo'
        """
        from dtf_notebook.ops.io.input_ops import count_up_to  # the op lives with the input pipeline ops

        return count_up_to(self._variable, limit)

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        """Subtracts ``IndexedSlices`` from this variable."""
        return state_ops.scatter_sub(self._variable, sparse_delta.indices, sparse_delta.values, use_locking, name)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        """Adds ``IndexedSlices`` to this variable."""
        return state_ops.scatter_add(self._variable, sparse_delta.indices, sparse_delta.values, use_locking, name)

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        """Writes ``IndexedSlices`` into this variable."""
        return state_ops.scatter_update(self._variable, sparse_delta.indices, sparse_delta.values, use_locking, name)

    def eval(self, session: Any = None) -> Any:
        """This variable's value in ``session`` (default: the default session)."""
        return self._variable.eval(session=session)

    def load(self, value: Any, session: Any = None) -> None:
        """Writes ``value`` into the variable through ``session`` without adding ops per call."""
        session = session or get_default_session()
        if session is None:
            raise ValueError("Either session argument should be provided or default session should be established")
        session.run(self._initializer_op, {self._initial_value: value})

    def set_shape(self, shape: Any) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}_ref>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        return self is other

    def __iter__(self):
        raise TypeError("'Variable' object is not iterable.")

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Variable` as a Python `bool` is not allowed.")

    def to_proto(self, export_scope: str | None = None) -> Any:
        """The ``VariableDef`` naming this variable's ops (TF's), None when the variable lies outside
        ``export_scope``; names are relative to ``export_scope``.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     proto = tf.Variable(1.0, name="w").to_proto()
            >>> proto.variable_name, proto.initializer_name, proto.snapshot_name, proto.trainable
            ('w:0', 'w/Assign', 'w/read:0', True)
        """
        from dtf_notebook.protos.graph_pb import SaveSliceInfoDef

        if export_scope and not self._variable.name.startswith(export_scope):
            return None

        def strip(name: str) -> str:
            return strip_name_scope(name, export_scope)

        proto = VariableDef(
            variable_name=strip(self._variable.name),
            initial_value_name=strip(self._initial_value.name),
            initializer_name=strip(self._initializer_op.name),
            snapshot_name=strip(self._snapshot.name),
            trainable=self._trainable,
        )
        info = self._save_slice_info
        if info is not None:
            proto.save_slice_info_def.CopyFrom(
                SaveSliceInfoDef(
                    full_name=strip(info.full_name),
                    full_shape=info.full_shape,
                    var_offset=info.var_offset,
                    var_shape=info.var_shape,
                )
            )
        return proto

    @staticmethod
    def from_proto(variable_def: Any, import_scope: str | None = None) -> Variable:
        """The variable a ``VariableDef`` names in the default graph (TF's ``Variable.from_proto``).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(1.0, name="w")
            ...     Variable.from_proto(w.to_proto()).op is w.op
            True
        """
        return Variable(variable_def=variable_def, import_scope=import_scope)


#: The Variable subclass that wraps a ``VariableDef`` of a ``VarHandleOp`` (set by
#: :func:`register_resource_variable_class`, from ``dtf_notebook.ops.resource_variables``).
_resource_variable_class: list[type] = [Variable]


def register_resource_variable_class(cls: type) -> None:
    """Makes ``cls`` (a :class:`Variable` subclass) the class of the resource variables an imported graph defines.

    Example:
        >>> import dtf_notebook  # registers ResourceVariable
        >>> _resource_variable_class[0].__name__
        'ResourceVariable'
    """
    _resource_variable_class[0] = cls


def _variable_def_fields(proto: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {f.name: v for f, v in proto.ListFields()}
    if "save_slice_info_def" in fields:
        info = fields["save_slice_info_def"]
        fields["save_slice_info_def"] = {
            "full_name": info.full_name,
            "full_shape": list(info.full_shape),
            "var_offset": list(info.var_offset),
            "var_shape": list(info.var_shape),
        }
    fields.setdefault("trainable", proto.trainable)
    return fields


def _run_operator(name: str):
    def method(self: Variable, *args: Any) -> Any:
        return getattr(self.value(), name)(*args)

    method.__name__ = name
    return method


for _operator in OVERLOADABLE_OPERATORS:
    setattr(Variable, _operator, _run_operator(_operator))
Variable.__array_priority__ = 100


def _variable_to_tensor(v: Variable, dtype: Any = None, name: str | None = None, as_ref: bool = False) -> Tensor:
    t = v._ref() if as_ref else v.value()
    if dtype is not None and dtypes.as_dtype(dtype) is not t.dtype:
        raise ValueError(
            f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for variable "
            f"of type '{t.dtype.name}'"
        )
    return t


register_tensor_conversion_function(Variable, _variable_to_tensor, priority=10)

VariableV1 = Variable
RefVariable = Variable


# ---- collections and initializers ---------------------------------------------------------
def global_variables(scope: str | None = None) -> list[Any]:
    """Variables in ``GLOBAL_VARIABLES`` (optionally filtered by a name-scope regex).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.Variable(1.0, name="a")
        ...     b = tf.Variable(2.0, name="b", trainable=False)
        ...     [v.op.name for v in tf.global_variables()]
        ['a', 'b']
    """
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


all_variables = global_variables


def local_variables(scope: str | None = None) -> list[Any]:
    """Variables in ``LOCAL_VARIABLES``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     n = tf.Variable(0, name="n", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        ...     [v.op.name for v in tf.local_variables()]
        ['n']
    """
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope: str | None = None) -> list[Any]:
    """Variables in ``TRAINABLE_VARIABLES``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(1.0, name="w")
        ...     step = tf.Variable(0, name="step", trainable=False)
        ...     [v.op.name for v in tf.trainable_variables()]
        ['w']
    """
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Any]:
    """Variables in ``MODEL_VARIABLES``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     keys = [tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES]
        ...     m = tf.Variable(3.0, name="m", collections=keys)
        ...     [v.op.name for v in tf.model_variables()]
        ['m']
    """
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: str | None = None) -> list[Any]:
    """Variables in ``MOVING_AVERAGE_VARIABLES``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0, name="v")
        ...     tf.add_to_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES, v)
        ...     [x.op.name for x in tf.moving_average_variables()]
        ['v']
    """
    return get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def _initializers_of(var_list: Any) -> list[Operation]:
    ops: list[Operation] = []
    for v in var_list:
        # Partitioned variables initialise each of their parts.
        parts = list(v) if hasattr(v, "_get_variable_list") else [v]
        ops.extend(p.initializer for p in parts)
    return ops


def variables_initializer(var_list: Any, name: str = "init") -> Operation:
    """An op that runs the initializers of ``var_list`` (a no-op when the list is empty).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.Variable(1.0)
        ...     tf.variables_initializer([a]).type
        'NoOp'
    """
    inits = _initializers_of(var_list)
    if not inits:
        return identity_ops.no_op(name=name)
    return identity_ops.group(*inits, name=name)


def global_variables_initializer() -> Operation:
    """An op that initialises every global variable (``tf.global_variables_initializer``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 2.0])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(w))
        [1. 2.]
    """
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer() -> Operation:
    """An op that initialises every local variable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     n = tf.Variable(5, name="n", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        ...     with tf.Session() as sess:
        ...         _ = sess.run(tf.local_variables_initializer())
        ...         print(sess.run(n))
        5
    """
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable: Any) -> Tensor:
    """A bool scalar telling whether ``variable`` is initialised.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.Variable(1.0)
        ...     with tf.Session() as sess:
        ...         before = sess.run(tf.is_variable_initialized(a))
        ...         _ = sess.run(a.initializer)
        ...         print(before, sess.run(tf.is_variable_initialized(a)))
        False True
    """
    return state_ops.is_variable_initialized(variable)


def assert_variables_initialized(var_list: Any = None) -> Tensor | None:
    """A tensor whose evaluation fails with FailedPreconditionError when any of ``var_list`` is uninitialised.

    TF1's layout: the ``Rank`` of each variable (reading it), stacked when there are several; ``None`` when there are
    no variables (``var_list`` defaults to the global and local variables).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     print(tf.assert_variables_initialized())
        ...     a = tf.Variable(1.0)
        ...     check = tf.assert_variables_initialized([a])
        ...     with tf.Session() as sess:
        ...         try:
        ...             sess.run(check)
        ...         except tf.errors.FailedPreconditionError:
        ...             print("a is not initialised")
        None
        a is not initialised
    """
    from dtf_notebook.ops import array_ops
    from dtf_notebook.ops.op_helpers import make_op

    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:  # TF's fallback for variable ops kept out of the collections
        kinds = ("Variable", "VariableV2", "AutoReloadVariable")
        var_list = [op.outputs[0] for op in get_default_graph().get_operations() if op.type in kinds]
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with get_default_graph().colocate_with(var.op):
            # A Rank op even where the rank is known (TF's ``optimize=False``): running it reads the variable.
            ranks.append(make_op("Rank", [convert_to_tensor(var)], name="Rank").outputs[0])
    return ranks[0] if len(ranks) == 1 else array_ops.stack(ranks)


def report_uninitialized_variables(var_list: Any = None, name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string tensor naming the variables (of ``var_list``, default all) not yet initialised.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.Variable(1.0, name="a")
        ...     b = tf.Variable(2.0, name="b")
        ...     with tf.Session() as sess:
        ...         sess.run(a.initializer)
        ...         print(sess.run(tf.report_uninitialized_variables()))
        [b'b']
    """
    from dtf_notebook.ops import array_ops, math_ops
    from dtf_notebook.ops.constant_op import constant

    if var_list is None:
        var_list = global_variables() + local_variables()
    graph = get_default_graph()
    with graph.name_scope(name):
        if not var_list:
            return constant([], dtype=dtypes.string, name="Const")
        flags = array_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
        names = constant([v.op.name for v in var_list], dtype=dtypes.string, name="Const")
        return array_ops.boolean_mask(names, math_ops.logical_not(flags), name="boolean_mask")


def _variable_to_proto(v: Variable, export_scope: str | None = None) -> Any:
    return v.to_proto(export_scope=export_scope)


# The collections whose variables a meta graph stores as ``VariableDef`` messages (TF's list).
for _key in (
    GraphKeys.GLOBAL_VARIABLES,
    GraphKeys.TRAINABLE_VARIABLES,
    GraphKeys.MOVING_AVERAGE_VARIABLES,
    GraphKeys.LOCAL_VARIABLES,
    GraphKeys.MODEL_VARIABLES,
    GraphKeys.GLOBAL_STEP,
    GraphKeys.METRIC_VARIABLES,
):
    register_proto_function(_key, VariableDef, _variable_to_proto, Variable.from_proto)
