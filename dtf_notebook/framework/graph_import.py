"""``import_graph_def``: rebuild a Graph from plain node dicts (a graph def that crossed the wire).

Nodes may come in any order: they are created in a topological order that keeps the given order
wherever the dependencies allow, so importing ``g.as_graph_def_dict()`` recreates ``g``'s ops in the
same order. Node names, attrs (``_class`` colocation lists included) and requested devices are
kept exactly; nothing of the target graph's current scopes (name scope, device stack, control
dependencies, container, colocation) is applied to the imported ops.

Everything that can be checked without building ops is checked before the first op is created:
the structure of every node dict, duplicate names, registered op types, inputs that name no node,
and cycles. Errors are ``InvalidArgumentError`` naming the node. A while loop's back edge (a
``NextIteration`` into a ``Merge``) is no cycle: the ``Merge`` is created first, with a stand-in
for that input, which is set once the ``NextIteration`` exists.

Example:
    >>> import numpy as np
    >>> import dtf_notebook as tf
    >>> nodes = [  # "input", "device" and "attr" may be left out
    ...     {"name": "sum", "op": "Add", "input": ["a", "b"], "device": "", "attr": {"T": tf.float32}},
    ...     {"name": "a", "op": "Const", "attr": {"value": np.float32(1.5), "dtype": tf.float32}},
    ...     {"name": "b", "op": "Const", "attr": {"value": np.float32(2), "dtype": tf.float32}},
    ... ]
    >>> g = import_graph_def({"node": nodes})
    >>> [op.name for op in g.get_operations()]
    ['a', 'b', 'sum']
"""

from __future__ import annotations

import heapq
import re
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import op_registry
from dtf_notebook.framework.graph import _VALID_OP_NAME, Graph
from dtf_notebook.framework.operation import Operation

_NODE_KEYS = frozenset(("name", "op", "input", "device", "attr"))
_GRAPH_DEF_KEYS = frozenset(("node", "versions"))
_OUTPUT_INDEX = re.compile(r"[0-9]+", re.ASCII)
_MERGES = frozenset(("Merge", "RefMerge"))
_NEXT_ITERATIONS = frozenset(("NextIteration", "RefNextIteration"))


def import_graph_def(graph_def: dict[str, Any], graph: Graph | None = None, name_prefix: str = "") -> Graph:
    """Creates the ops of ``graph_def`` in ``graph`` (a new Graph when None) and returns the graph.

    Args:
        graph_def: ``{"node": [node_def, ...], "versions": {...}}`` as built by ``Graph.as_graph_def_dict()``;
            each node is ``{"name", "op", "input", "device", "attr"}`` (only name and op are required).
            An input is ``"op"``, ``"op:index"`` or ``"^op"`` (control input, after all data inputs).
        graph: The graph to add to. Inputs that name no node of ``graph_def`` refer to ops already
            in ``graph``, so a graph can be extended piece by piece.
        name_prefix: Prepended as ``prefix/`` to every imported name, its inputs and its ``loc:@``
            colocation groups (``""`` keeps names exactly).

    Returns:
        ``graph``, or the new graph.

    Raises:
        InvalidArgumentError: a node is malformed, its op type is not registered, its name is
            taken, an input names a missing node or output, the nodes form a cycle, or building
            the op fails. Checks that need the built ops (output indices, output inference) can fail
            after earlier nodes were added.
        RuntimeError: ``graph`` is finalized.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     x = tf.placeholder(tf.float32, [None, 2], name="x")
        ...     y = tf.identity(x * 2.0, name="y")
        >>> copy = import_graph_def(g.as_graph_def_dict(), name_prefix="copy")
        >>> copy.get_tensor_by_name("copy/y:0").shape.as_list()
        [None, 2]
    """
    graph = Graph() if graph is None else graph
    graph._check_not_finalized()
    prefix = name_prefix.rstrip("/") + "/" if name_prefix else ""
    nodes = _parse_nodes(graph_def, prefix)
    order = _topological_order(nodes, graph)
    # A while loop's Merge comes before its NextIteration: it is created with a stand-in for that input.
    back_edges: list[tuple[Operation, int, str, int]] = []
    to_create = {node.name for node in nodes}
    with graph.control_dependencies(None), graph.container(""), graph.name_scope(None):
        for index in order:
            _create(nodes[index], graph, to_create, back_edges)
            to_create.discard(nodes[index].name)
    for merge, position, op_name, index in back_edges:
        outputs = graph.get_operation_by_name(op_name).outputs
        if index >= len(outputs):
            raise _fail(None, f"Node '{merge.name}': input '{op_name}:{index}' names no output of '{op_name}'")
        merge._update_input(position, outputs[index])
    return graph


class _Node:
    __slots__ = ("name", "op", "inputs", "control", "device", "attrs", "raw")

    def __init__(self, raw: dict[str, Any], name: str, inputs: list[tuple[str, int]], control: list[str]) -> None:
        self.raw = raw
        self.name = name
        self.op = raw["op"]
        self.inputs = inputs
        self.control = control
        self.device = raw.get("device", "")
        self.attrs = dict(raw.get("attr", {}))


def _fail(node: Any, message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(node if isinstance(node, dict) else None, None, message)


def _parse_nodes(graph_def: Any, prefix: str) -> list[_Node]:
    if not isinstance(graph_def, dict) or not isinstance(graph_def.get("node"), list):
        raise _fail(None, f"A graph def must be a dict with a 'node' list, got {graph_def!r:.80}")
    unknown = set(graph_def) - _GRAPH_DEF_KEYS
    if unknown:
        raise _fail(None, f"Graph def has unknown keys {sorted(map(str, unknown))}")
    nodes, seen = [], set()
    for raw in graph_def["node"]:
        node = _parse_node(raw, prefix)
        if node.name in seen:
            raise _fail(raw, f"Duplicate node name in graph def: '{node.name}'")
        seen.add(node.name)
        nodes.append(node)
    return nodes


def _parse_node(raw: Any, prefix: str) -> _Node:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise _fail(None, f"A node def must be a dict with a non-empty string 'name', got {raw!r:.80}")
    name = raw["name"]
    full_name = prefix + name
    # create_op's rule for imported ops: runtime-internal names may start with "_" ("_send/...")
    if not (_VALID_OP_NAME.match(full_name) or _VALID_OP_NAME.match(full_name[1:])):
        raise _fail(raw, f"Node name '{full_name}' is not a valid op name")
    missing, unknown = {"name", "op"} - set(raw), set(raw) - _NODE_KEYS
    if missing or unknown:
        raise _fail(raw, f"Node '{name}' has missing keys {sorted(missing)} / unknown keys {sorted(map(str, unknown))}")
    if not isinstance(raw["op"], str):
        raise _fail(raw, f"Node '{name}': 'op' must be a string, got {raw['op']!r}")
    if not isinstance(raw.get("device", ""), str):
        raise _fail(raw, f"Node '{name}': 'device' must be a string, got {raw['device']!r}")
    attrs = raw.get("attr", {})
    if not isinstance(attrs, dict) or not all(isinstance(k, str) for k in attrs):
        raise _fail(raw, f"Node '{name}': 'attr' must be a dict with string keys")
    try:
        op_registry.get(raw["op"])
    except errors.NotFoundError:
        raise _fail(raw, f"Op type not registered '{raw['op']}' in node '{name}'") from None
    inputs, control = _parse_inputs(raw, name, prefix)
    node = _Node(raw, full_name, inputs, control)
    groups = node.attrs.get("_class")
    if prefix and isinstance(groups, list | tuple):
        node.attrs["_class"] = [
            "loc:@" + prefix + g[5:] if isinstance(g, str) and g.startswith("loc:@") else g for g in groups
        ]
    return node


def _parse_inputs(raw: dict[str, Any], name: str, prefix: str) -> tuple[list[tuple[str, int]], list[str]]:
    specs = raw.get("input", [])
    if not isinstance(specs, list | tuple):
        raise _fail(raw, f"Node '{name}': 'input' must be a list of strings, got {specs!r:.80}")
    inputs: list[tuple[str, int]] = []
    control: list[str] = []
    for spec in specs:
        if not isinstance(spec, str) or spec in ("", "^"):
            raise _fail(raw, f"Node '{name}': input {spec!r} is not a node or tensor name")
        if spec.startswith("^"):
            control.append(prefix + spec[1:])
            continue
        if control:
            raise _fail(raw, f"Node '{name}': data input '{spec}' comes after a control input")
        op_name, colon, index = spec.rpartition(":")
        if not colon:
            op_name, index = spec, "0"
        if not op_name or not _OUTPUT_INDEX.fullmatch(index):
            raise _fail(raw, f"Node '{name}': input '{spec}' is not of the form 'op' or 'op:index'")
        inputs.append((prefix + op_name, int(index)))
    return inputs, control


def _topological_order(nodes: list[_Node], graph: Graph) -> list[int]:
    """Node indices in dependency order, the smallest given index first among ready nodes."""
    index_of = {node.name: i for i, node in enumerate(nodes)}
    existing = {op.name for op in graph.get_operations()}
    consumers: list[list[int]] = [[] for _ in nodes]
    pending = [0] * len(nodes)
    for i, node in enumerate(nodes):
        if node.name in existing:
            raise _fail(node.raw, f"Duplicate node name in graph: '{node.name}'")
        deps = {op_name for op_name, _ in node.inputs} | set(node.control)
        if node.op in _MERGES:  # a while loop's back edge: the Merge is created first, its input set after
            deps -= {d for d in deps if d in index_of and nodes[index_of[d]].op in _NEXT_ITERATIONS}
        for dep in deps:
            if dep in index_of:
                consumers[index_of[dep]].append(i)
                pending[i] += 1
            elif dep not in existing:
                raise _fail(node.raw, f"Node '{node.name}': input '{dep}' names a node that is not in the graph")
    ready = [i for i, count in enumerate(pending) if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for consumer in consumers[i]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                heapq.heappush(ready, consumer)
    if len(order) < len(nodes):
        stuck = [nodes[i].name for i, count in enumerate(pending) if count][:5]
        raise _fail(None, f"Graph def has a cycle through nodes {stuck}")
    return order


def _create(
    node: _Node, graph: Graph, to_create: set[str], back_edges: list[tuple[Operation, int, str, int]]
) -> Operation:
    inputs = []
    later = []  # (position, producer, output) of back edges, from NextIteration ops not created yet
    for op_name, index in node.inputs:
        if op_name in to_create:  # only a Merge's NextIteration input is ordered after it
            later.append((len(inputs), op_name, index))
            inputs.append(None)
            continue
        producer = graph.get_operation_by_name(op_name)
        if index >= len(producer.outputs):
            raise _fail(
                node.raw,
                f"Node '{node.name}': input '{op_name}:{index}' asks for output {index} "
                f"of '{op_name}', which has {len(producer.outputs)} outputs",
            )
        inputs.append(producer.outputs[index])
    control = [graph.get_operation_by_name(c) for c in node.control]
    stand_in = next((t for t in inputs if t is not None), None)
    if later and stand_in is None:
        raise _fail(node.raw, f"Node '{node.name}' ({node.op}): every input is a back edge of a loop")
    inputs = [stand_in if t is None else t for t in inputs]
    try:
        # the "name/" form makes create_op use the name exactly instead of uniquifying it
        op = graph.create_op(node.op, inputs, node.attrs, node.name + "/", control, compute_device=False)
        if node.device:
            op._set_device(node.device)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
        raise _fail(node.raw, f"Node '{node.name}' (op {node.op}): {e}") from e
    graph.unique_name(node.name)  # marks the name as used, so ops created later never reuse it
    back_edges.extend((op, position, op_name, index) for position, op_name, index in later)
    return op
