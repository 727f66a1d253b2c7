"""A ``Dataset`` as plain data: the pipeline an iterator op carries to whichever task runs it.

TF builds one graph op per dataset and passes ``variant`` tensors between them. Here a dataset stays a Python
description until an iterator is made; then :func:`serialize` turns the chain into a *pipeline*::

    {"nodes": [{"op": "RangeDataset", "inputs": [0, 1, 2], "children": [], "attrs": {...}, "functions": {}},
               {"op": "MapDataset", "inputs": [], "children": [0], "attrs": {...},
                "functions": {"f": {"graph": graph_def, "args": [...], "captures": [...], "outputs": [...],
                                    "capture_inputs": [3]}}}],
     "output": 1}

``inputs`` and ``capture_inputs`` index the pipeline's input tensors: the tensors the dataset was built from
(file names, batch sizes, sliced arrays, tensors its functions capture). They become the inputs of ``MakeIterator``
(evaluated, feeds included, when the initializer runs), or, for a one-shot iterator, outputs of a factory graph
copied into the op (TF's ``dataset_factory`` function). Only data crosses the wire: graph defs, names and arrays.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.data.dataset_ops import Dataset
    >>> with tf.Graph().as_default() as g:
    ...     pipeline, inputs = serialize(Dataset.range(3).map(lambda x: x + 1), g)
    >>> [n["op"] for n in pipeline["nodes"]], [t.op.name for t in inputs]
    (['RangeDataset', 'MapDataset'], ['start', 'stop', 'step'])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.data import structure
from dtf_notebook.data.function import TracedFunction, capture_into
from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.tensor import Tensor

__all__ = ["PipelineBuilder", "serialize", "factory_graph"]


class PipelineBuilder:
    """Collects a dataset chain's nodes and input tensors (see the module text).

    Args:
        graph: The graph the pipeline's inputs must belong to (tensors of enclosing graphs are captured into it
            when it is a function graph).

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.dataset_ops import Dataset
        >>> with tf.Graph().as_default() as g:
        ...     builder = PipelineBuilder(g)
        ...     index = builder.node(Dataset.range(4).take(2))
        >>> index, [n["op"] for n in builder.nodes], len(builder.inputs)
        (1, ['RangeDataset', 'TakeDataset'], 4)
    """

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.inputs: list[Tensor] = []
        self._index: dict[Tensor, int] = {}
        self.nodes: list[dict[str, Any]] = []
        self._memo: dict[int, int] = {}
        self._keep: list[Any] = []  # the datasets memoized by id stay alive while building

    def input(self, tensor: Tensor) -> int:
        """The index of ``tensor`` among the pipeline's inputs (added on first use)."""
        tensor = capture_into(self.graph, tensor)
        found = self._index.get(tensor)
        if found is None:
            found = self._index[tensor] = len(self.inputs)
            self.inputs.append(tensor)
        return found

    def function(self, fn: TracedFunction) -> dict[str, Any]:
        """``fn``'s plain-data form with where its captured tensors come from."""
        return {**fn.to_spec(), "capture_inputs": [self.input(t) for t in fn.captured]}

    def node(self, dataset: Any) -> int:
        """The index of ``dataset``'s node (its inputs first), added on first use."""
        key = id(dataset)
        found = self._memo.get(key)
        if found is not None:
            return found
        node = dataset._build(self)
        self.nodes.append(node)
        self._keep.append(dataset)
        self._memo[key] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def add(
        self,
        op: str,
        inputs: list[Tensor] = (),  # type: ignore[assignment]
        children: list[Any] = (),  # type: ignore[assignment]
        attrs: dict[str, Any] | None = None,
        functions: dict[str, TracedFunction | dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A node dict (children and inputs registered); :meth:`node` appends it."""
        child_ids = [self.node(c) for c in children]
        return {
            "op": op,
            "inputs": [self.input(t) for t in inputs],
            "children": child_ids,
            "attrs": dict(attrs or {}),
            "functions": {
                name: (self.function(fn) if isinstance(fn, TracedFunction) else fn)
                for name, fn in (functions or {}).items()
            },
        }


def serialize(dataset: Any, graph: Graph) -> tuple[dict[str, Any], list[Tensor]]:
    """``(pipeline, input tensors)`` for ``dataset``, its inputs being tensors of ``graph``.

    Raises:
        ValueError: a tensor the dataset uses belongs to an unrelated graph.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.data.dataset_ops import Dataset
        >>> with tf.Graph().as_default() as g:
        ...     pipeline, inputs = serialize(Dataset.from_tensors("a"), g)
        >>> pipeline["types"], pipeline["output"]
        ([tf.string], 0)
    """
    builder = PipelineBuilder(graph)
    output = builder.node(dataset)
    spec = dataset._element_structure
    pipeline = {
        "nodes": builder.nodes,
        "output": output,
        "types": [s.dtype for s in structure.components(spec)],
        "shapes": [s.shape for s in structure.components(spec)],
    }
    return pipeline, builder.inputs


def factory_graph(tensors: list[Tensor], why: str) -> dict[str, Any]:
    """A graph def holding copies of the ops that compute ``tensors`` (TF's ``dataset_factory`` function), so a
    one-shot iterator needs no inputs at run time.

    Raises:
        ValueError: one of them depends on a placeholder or a stateful op (a variable, a random op), which a
            copy cannot capture by value (TF's messages, with ``why`` appended).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     t = tf.constant([1, 2], name="c") * 2
        ...     [n["op"] for n in factory_graph([t], "")["node"]]
        ['Const', 'Const', 'Mul']
    """
    seen: set[Any] = set()
    order: list[Any] = []
    stack = [(t.op, False) for t in reversed(tensors)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if op in seen:
            continue
        seen.add(op)
        if op.type in ("Placeholder", "PlaceholderWithDefault"):
            raise ValueError(f"Cannot capture a placeholder (name:{op.name}, type:{op.type}) by value.{why}")
        if op.op_def.stateful:
            raise ValueError(f"Cannot capture a stateful node (name:{op.name}, type:{op.type}) by value.{why}")
        stack.append((op, True))
        for c in reversed(op.control_inputs):
            stack.append((c, False))
        for t in reversed(op.inputs):
            stack.append((t.op, False))
    nodes = []
    for op in sorted(order, key=lambda o: o._id):
        node = op.node_def
        node["device"] = ""
        node["attr"] = {k: v for k, v in node["attr"].items() if k != "_class"}
        nodes.append(node)
    return {"node": nodes, "versions": {"producer": 1}}
