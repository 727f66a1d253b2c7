"""``Operation``: one node of a graph.

An operation has a unique name, a type naming its registry entry, input
tensors, control inputs, a requested device string, attributes and output
tensors. It records where in user code it was created, so runtime errors can
point there.

Example:
    >>> import dtf_notebook as tf
    >>> g = tf.Graph()
    >>> with g.as_default():
    ...     c = tf.constant(1.0, name="c")
    >>> c.op.name, c.op.type, c.op.outputs[0].name
    ('c', 'Const', 'c:0')
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

from dtf_notebook.framework import op_registry
from dtf_notebook.framework.default_session import run_in_default_session
from dtf_notebook.framework.tensor import Tensor

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_traceback(limit: int = 8) -> traceback.StackSummary:
    """The creating call stack, innermost user frames only (package frames are skipped)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return traceback.StackSummary()
    summary = traceback.StackSummary.extract(traceback.walk_stack(frame), limit=limit, lookup_lines=False)
    summary.reverse()
    return summary


class Operation:
    """A node in a Graph. Create ops through the op functions (``tf.add``, ...), not directly.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = tf.add(1.0, 2.0, name="s")
        ...     [t.op.name for t in s.op.inputs]
        ['s/x', 's/y']
    """

    __slots__ = (
        "_graph",
        "_name",
        "_type",
        "_inputs",
        "_control_inputs",
        "_outputs",
        "_device",
        "_attrs",
        "_id",
        "_traceback",
        "_op_def",
        "_control_outputs",
        "_control_flow_context",
        "__weakref__",
    )

    def __init__(
        self,
        graph: Any,
        name: str,
        op_type: str,
        inputs: list[Tensor],
        attrs: dict[str, Any],
        control_inputs: list[Operation],
        op_id: int,
        capture_traceback: bool = True,
    ) -> None:
        self._graph = graph
        self._name = name
        self._type = op_type
        self._op_def = op_registry.get(op_type)
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._control_outputs: list[Operation] = []
        self._attrs = dict(attrs)
        self._device = ""
        self._id = op_id
        self._traceback = _user_traceback() if capture_traceback else traceback.StackSummary()
        self._outputs: list[Tensor] = []
        self._control_flow_context: Any = None  # the cond or while context the op was built in

    # ---- identity and structure -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._type

    @property
    def graph(self) -> Any:
        return self._graph

    @property
    def op_def(self) -> op_registry.OpDef:
        """The registry entry of this op's type."""
        return self._op_def

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return tuple(self._inputs)

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        """The requested device string (may be partial or empty)."""
        return self._device

    @device.setter
    def device(self, value: str) -> None:
        # Device scopes set this while the op is being created (see apply_device_stack).
        self._device = value

    @property
    def traceback(self) -> traceback.StackSummary:
        """Where this op was created in user code, outermost first."""
        return self._traceback

    @property
    def node_def(self) -> dict[str, Any]:
        """A plain-dict NodeDef: name, op, input (``"^name"`` for control inputs), device, attr."""
        return {
            "name": self._name,
            "op": self._type,
            "input": [t._as_node_def_input() for t in self._inputs] + ["^" + c.name for c in self._control_inputs],
            "device": self._device,
            "attr": dict(self._attrs),
        }

    def values(self) -> tuple[Tensor, ...]:
        """The outputs as a tuple."""
        return tuple(self._outputs)

    # ---- attrs ------------------------------------------------------------------------------
    @property
    def attrs(self) -> dict[str, Any]:
        return dict(self._attrs)

    def get_attr(self, name: str) -> Any:
        """Returns attribute ``name``.

        Raises:
            ValueError: the op has no such attribute (TF's behaviour).
        """
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation {self._name!r} has no attr named {name!r}.") from None

    def _set_attr(self, name: str, value: Any) -> None:
        self._attrs[name] = value

    def colocation_groups(self) -> list[str]:
        """The ``loc:@name`` groups this op must be placed with (itself when none was requested)."""
        groups = self._attrs.get("_class")
        return list(groups) if groups else [f"loc:@{self._name}"]

    # ---- mutation used while building ---------------------------------------------------------
    def _set_device(self, device: Any) -> None:
        from dtf_notebook.framework.device_spec import canonical_name

        self._device = canonical_name(device)

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._bump_version()

    def _add_control_inputs(self, ops: list[Operation]) -> None:
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self) -> None:
        for op in self._control_inputs:
            op._control_outputs.remove(self)
        self._control_inputs = []
        self._graph._bump_version()

    def _get_control_flow_context(self) -> Any:
        """The cond or while context this op was built in (None outside control flow)."""
        return self._control_flow_context

    def _set_control_flow_context(self, context: Any) -> None:
        self._control_flow_context = context

    def _update_input(self, index: int, tensor: Tensor) -> None:
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs[index] = tensor
        tensor._consumers.append(self)
        self._graph._bump_version()

    # ---- running ------------------------------------------------------------------------------
    def run(self, feed_dict: Any = None, session: Any = None) -> None:
        """Runs this op in ``session`` (default: the default session).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Session():
            ...     tf.no_op().run()
        """
        run_in_default_session(self, feed_dict, session)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self._type}>"

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:
        return self is other
