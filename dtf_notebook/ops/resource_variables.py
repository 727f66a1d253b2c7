"""``ResourceVariable``: a variable of an imported graph that TF 2 wrote with resource variables.

``tf.train.import_meta_graph`` (and ``Variable.from_proto``) wraps each ``VariableDef`` of a ``VarHandleOp`` in
this :class:`~dtf_notebook.ops.variables.Variable`: its value is a ``ReadVariableOp`` snapshot, and its writes are
``AssignVariableOp``, ``AssignAddVariableOp``, ``AssignSubVariableOp`` and ``ResourceScatter*``, so initializers,
fetches, ``assign``/``load`` and a ``Saver`` work as on TF's. Variables made here are always reference variables
(TF1's graph-mode default); building new gradients or optimizer updates on an imported resource variable is not
supported (its graph's own training ops run).

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.ops.op_helpers import make_op
    >>> from dtf_notebook.protos.graph_pb import VariableDef
    >>> with tf.Graph().as_default():
    ...     handle = make_op("VarHandleOp", [], {"dtype": tf.float32, "shape": [2], "shared_name": "w"},
    ...                      name="w").outputs[0]
    ...     _ = make_op("AssignVariableOp", [handle, tf.constant([1.0, 2.0])], {"dtype": tf.float32}, name="w/Assign")
    ...     _ = make_op("ReadVariableOp", [handle], {"dtype": tf.float32}, name="w/Read/ReadVariableOp")
    ...     w = tf.Variable.from_proto(VariableDef(variable_name="w:0", initializer_name="w/Assign",
    ...                                            snapshot_name="w/Read/ReadVariableOp:0", is_resource=True))
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(type(w).__name__, w.dtype, sess.run(w.assign_add([1.0, 1.0])))
    ResourceVariable <dtype: 'float32'> [2. 3.]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.ops.variables import Variable, register_resource_variable_class

__all__ = ["ResourceVariable"]


class ResourceVariable(Variable):
    """A ``VarHandleOp`` variable of an imported graph (see the module docstring)."""

    @property
    def dtype(self) -> Any:
        return self._variable.op.get_attr("dtype")

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._variable.op.get_attr("shape"))

    def get_shape(self) -> TensorShape:
        return self.shape

    def _read(self, name: str = "Read/ReadVariableOp") -> Tensor:
        with get_default_graph().colocate_with(self._variable.op):
            return make_op("ReadVariableOp", [self._variable], {"dtype": self.dtype}, name=name).outputs[0]

    def read_value(self) -> Tensor:
        """A new read of the current value (a ``ReadVariableOp``)."""
        return self._read()

    def _as_graph_element(self) -> Tensor:
        return self._snapshot

    def initialized_value(self) -> Tensor:
        """The value when the variable is initialized, else its initial value (never assigns, as TF's)."""
        from dtf_notebook.ops.control_flow.cond import cond

        with get_default_graph().control_dependencies(None), get_default_graph().colocate_with(self._variable.op):
            initialized = make_op("VarIsInitializedOp", [self._variable], {}, name="IsInitialized").outputs[0]
            return cond(initialized, self._read, lambda: self._initial_value, name="initialized_value")

    def _write(self, op_type: str, value: Any, name: str | None, read_value: bool) -> Any:
        value_t = convert_to_tensor(value, dtype=self.dtype)
        with get_default_graph().colocate_with(self._variable.op):
            write = make_op(op_type, [self._variable, value_t], {"dtype": self.dtype}, name=name or op_type)
        if not read_value:
            return write
        with get_default_graph().control_dependencies([write]):
            return self._read()

    def assign(self, value: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True) -> Any:
        """An ``AssignVariableOp``; the new value (a read after it), or the op when ``read_value`` is False."""
        return self._write("AssignVariableOp", value, name, read_value)

    def assign_add(
        self, delta: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        """An ``AssignAddVariableOp`` (see :meth:`assign`)."""
        return self._write("AssignAddVariableOp", delta, name, read_value)

    def assign_sub(
        self, delta: Any, use_locking: bool = False, name: str | None = None, read_value: bool = True
    ) -> Any:
        """An ``AssignSubVariableOp`` (see :meth:`assign`)."""
        return self._write("AssignSubVariableOp", delta, name, read_value)

    def _scatter(self, op_type: str, indices: Any, updates: Any, name: str | None) -> Tensor:
        with get_default_graph().colocate_with(self._variable.op):
            inputs = [self._variable, convert_to_tensor(indices), convert_to_tensor(updates, dtype=self.dtype)]
            write = make_op(op_type, inputs, {"dtype": self.dtype}, name=name or op_type)
        with get_default_graph().control_dependencies([write]):
            return self._read()

    def _assign_override(self, value: Any, use_locking: Any, name: str | None) -> Tensor:
        """``tf.assign(self, value)``: this variable's own write (see ``state_ops.assign``)."""
        return self.assign(value, name=name)

    def _resource_update(self, op_type: str, args: tuple, name: str | None) -> Tensor:
        """``tf.assign_add``, ``tf.scatter_*`` & co. on this variable: TF's ``Resource*`` op of ``op_type``."""
        if op_type in ("AssignAdd", "AssignSub"):
            return self._write(op_type + "VariableOp", args[0], name, True)
        if op_type.startswith("Scatter"):
            return self._scatter("Resource" + op_type, *args, name)
        raise TypeError(f"{op_type} cannot update the resource variable {self.name}")

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        """A ``ResourceScatterSub`` of ``IndexedSlices``; the value after it."""
        return self._scatter("ResourceScatterSub", sparse_delta.indices, sparse_delta.values, name)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        """A ``ResourceScatterAdd`` of ``IndexedSlices``; the value after it."""
        return self._scatter("ResourceScatterAdd", sparse_delta.indices, sparse_delta.values, name)

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: str | None = None) -> Tensor:
        """A ``ResourceScatterUpdate`` of ``IndexedSlices``; the value after it."""
        return self._scatter("ResourceScatterUpdate", sparse_delta.indices, sparse_delta.values, name)

    def eval(self, session: Any = None) -> Any:
        """This variable's value in ``session`` (default: the default session)."""
        return self._snapshot.eval(session=session)

    def set_shape(self, shape: Any) -> None:
        self._snapshot.set_shape(shape)

    def to_proto(self, export_scope: str | None = None) -> Any:
        proto = super().to_proto(export_scope)
        if proto is not None:
            proto.is_resource = True
        return proto

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


register_resource_variable_class(ResourceVariable)
