"""TF's ``tf.import_graph_def``: the ops of a graph def added to the default graph under a name scope (``import/``
by default), inputs remapped to existing tensors (``input_map``), and chosen ops or tensors returned
(``return_elements``).

A graph def is a ``GraphDef`` protobuf message (``Graph.as_graph_def()``, ``tf.GraphDef``, or TF's own class:
anything with ``SerializeToString``), whose attribute values are read back into this package's forms (types,
shapes, tensors, strings), or the plain node dicts of ``Graph.as_graph_def_dict()``. A GraphDef written by TF
imports when its op types and attributes are ones this package has.

An input of ``input_map`` replaces every use of the graph def's tensor (which is still imported, as in TF). Static
shapes inferred while importing stay as the graph def's tensors gave them; the replacement must be compatible.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as source:
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     y = tf.multiply(x, 2.0, name="y")
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     (out,) = import_graph_def(source.as_graph_def(), {"x:0": tf.constant([1.0, 5.0])}, ["y:0"])
    ...     out.name, sess.run(out).tolist()
    ('import/y:0', [2.0, 10.0])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.attr_values import node_attr_dict
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.graph_import import import_graph_def as _import_nodes
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor

__all__ = ["import_graph_def"]


def graph_def_as_dict(graph_def: Any) -> dict[str, Any]:
    """A graph def as plain node dicts: a dict is returned as is, a ``GraphDef`` message is read (TF's class through
    its bytes), its attrs as :func:`dtf_notebook.framework.attr_values.node_attr_dict` gives them (``_output_shapes``
    annotations are dropped, ``_dtf_`` attrs get their names back).

    Raises:
        TypeError: ``graph_def`` is neither.

    Example:
        >>> from dtf_notebook.protos.graph_pb import GraphDef, NodeDef
        >>> graph_def_as_dict(GraphDef(node=[NodeDef(name="n", op="NoOp", input=["^m"])]))["node"][0]["input"]
        ['^m']
    """
    if isinstance(graph_def, dict):
        return graph_def
    if not hasattr(graph_def, "SerializeToString"):
        raise TypeError(f"graph_def must be a GraphDef proto (or a graph def dict), got {type(graph_def).__name__}")
    from dtf_notebook.protos.graph_pb import GraphDef

    proto = graph_def if isinstance(graph_def, GraphDef) else GraphDef.FromString(graph_def.SerializeToString())
    nodes = []
    for node in proto.node:
        nodes.append(
            {
                "name": node.name,
                "op": node.op,
                "input": list(node.input),
                "device": node.device,
                "attr": node_attr_dict(node.attr),
            }
        )
    return {"node": nodes, "versions": {"producer": proto.versions.producer}}


def _tensor_key(name: str) -> str:
    if name.startswith("^"):
        return name
    return name if ":" in name else name + ":0"


def import_graph_def(
    graph_def: Any,
    input_map: dict[str, Any] | None = None,
    return_elements: list[str] | None = None,
    name: str | None = None,
    op_dict: Any = None,
    producer_op_list: Any = None,
) -> list[Any] | None:
    """Adds the ops of ``graph_def`` to the default graph (TF's ``tf.import_graph_def``).

    Args:
        graph_def: A ``GraphDef`` message (``Graph.as_graph_def()``, or TF's) or plain node dicts
            (``Graph.as_graph_def_dict()``).
        input_map: ``{"name:index": tensor, "^name": op}``: uses of the graph def's tensors (control uses of its
            ops) replaced by tensors (ops) of the default graph.
        return_elements: Names in the graph def (``"op"`` for an op, ``"op:0"`` for a tensor) to return.
        name: The name scope of the imported ops (default ``"import"``, made unique; ``""`` for none).
        op_dict: Unused (deprecated in TF).
        producer_op_list: Unused here (TF strips default attrs with it; this package writes none).

    Returns:
        The imported objects named by ``return_elements`` (None when it is None).

    Raises:
        TypeError: ``graph_def`` or ``input_map`` of the wrong kind.
        ValueError: a name of ``input_map`` or ``return_elements`` is not in the graph def, or a replacement's dtype
            or static shape does not fit.
        InvalidArgumentError: a node of the graph def is malformed (see ``framework.graph_import``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as source:
        ...     _ = tf.constant(3.0, name="three")
        >>> with tf.Graph().as_default():
        ...     tf.import_graph_def(source.as_graph_def(), return_elements=["three"], name="copy")[0].name
        'copy/three'
    """
    del op_dict, producer_op_list
    plain = graph_def_as_dict(graph_def)
    input_map = dict(input_map or {})
    if not all(isinstance(k, str) for k in input_map):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    names = {node.get("name") for node in plain["node"]}
    missing = [k for k in input_map if _tensor_key(k).lstrip("^").rsplit(":", 1)[0] not in names]
    if missing:
        raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(missing)}]")
    graph = get_default_graph()
    if name == "":
        prefix = ""
    else:
        with name_scope(name, "import", list(input_map.values())) as scope:
            prefix = scope[:-1]
    before = len(graph.get_operations())
    _import_nodes(plain, graph, name_prefix=prefix)
    imported = graph.get_operations()[before:]
    _remap(imported, input_map, prefix, graph)
    if return_elements is None:
        return None
    return [_element(graph, prefix, element) for element in return_elements]


def _qualified(prefix: str, key: str) -> str:
    return f"{prefix}/{key}" if prefix else key


def _remap(ops: list[Operation], input_map: dict[str, Any], prefix: str, graph: Any) -> None:
    if not input_map:
        return
    tensors: dict[str, Tensor] = {}
    controls: dict[str, Operation] = {}
    for key, value in input_map.items():
        key = _tensor_key(key)
        if key.startswith("^"):
            controls[_qualified(prefix, key[1:])] = value if isinstance(value, Operation) else value.op
            continue
        original = graph.get_tensor_by_name(_qualified(prefix, key))
        replacement = convert_to_tensor(value)
        if replacement.dtype is not original.dtype:
            raise ValueError(
                f"Input {key} of the graph def is {original.dtype.name}, but input_map gives it {replacement.name} of "
                f"type {replacement.dtype.name}."
            )
        if not replacement.shape.is_compatible_with(original.shape):
            raise ValueError(
                f"Input {key} of the graph def has shape {original.shape}, incompatible with {replacement.name}'s "
                f"{replacement.shape} given in input_map."
            )
        tensors[original.name] = replacement
    for op in ops:
        for i, t in enumerate(op.inputs):
            if t.name in tensors:
                op._update_input(i, tensors[t.name])
        if controls and any(c.name in controls for c in op.control_inputs):
            kept = [controls.get(c.name, c) for c in op.control_inputs]
            op._remove_all_control_inputs()
            op._add_control_inputs(kept)


def _element(graph: Any, prefix: str, element: str) -> Any:
    try:
        if ":" in element:
            return graph.get_tensor_by_name(_qualified(prefix, element))
        return graph.get_operation_by_name(_qualified(prefix, element))
    except KeyError:
        raise ValueError(f"Requested return_element {element!r} not found in graph_def.") from None
