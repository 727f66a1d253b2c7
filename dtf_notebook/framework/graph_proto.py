"""The ``GraphDef`` protobuf of a graph (``Graph.as_graph_def()``, TensorBoard's graph view, ``write_graph``), and
the ``RunMetadata`` protobuf of a traced run.

The messages are TF's (:mod:`dtf_notebook.protos.graph_pb`, :mod:`dtf_notebook.protos.config_pb`). Each op's plain
node (``Operation.node_def``) becomes a ``NodeDef`` whose attrs are written as TF writes them, completed from TF's
signature of the op type (:mod:`dtf_notebook.framework.attr_values`), so real TF imports the bytes. With
``add_shapes`` each node also gets ``_output_shapes`` from the static shapes, as TF's
``as_graph_def(add_shapes=True)`` does, so TensorBoard labels edges with shapes.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     y = tf.identity(tf.placeholder(tf.float32, [None, 3], name="x"), name="y")
    >>> proto = graph_def_proto(g, add_shapes=True)
    >>> [(n.name, n.op, list(n.input)) for n in proto.node]
    [('x', 'Placeholder', []), ('y', 'Identity', ['x'])]
    >>> [d.size for d in proto.node[1].attr["_output_shapes"].list.shape[0].dim], proto.node[1].attr["T"].type
    ([-1, 3], 1)
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.attr_values import node_attrs
from dtf_notebook.framework.tensor_proto import shape_proto
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.framework.versions import GRAPH_DEF_VERSION
from dtf_notebook.protos.config_pb import RunMetadata
from dtf_notebook.protos.graph_pb import GraphDef, MetaGraphDef, NodeDef, TensorShapeProto, VersionDef


def run_metadata_proto(run_metadata: Any) -> RunMetadata:
    """The ``RunMetadata`` protobuf of a session's :class:`~dtf_notebook.runtime.config.RunMetadata` (a protobuf
    is returned as it is).

    The bytes a traced cluster run sent between tasks (the runtime's ``cost_graph["node"]`` rows) become two
    ``CostGraphDef.Node`` each: the ``_Send`` node on the sending device, and the received tensor, named by its
    tensor name, on the receiving device, its ``input_info`` the ``_Send`` node and its ``output_info`` size the
    bytes (:func:`sent_bytes` reads them back).

    Example:
        >>> from dtf_notebook.runtime.config import NodeExecStats as Stats, RunMetadata as Metadata
        >>> meta = Metadata()
        >>> meta.step_stats.dev_stats["/cpu:0"] = [Stats("a", "NoOp", "/cpu:0", 10, 3)]
        >>> run_metadata_proto(meta).step_stats.dev_stats[0].node_stats[0].timeline_label
        'a = NoOp()'
    """
    if isinstance(run_metadata, RunMetadata):
        return run_metadata
    proto = RunMetadata()
    for device, stats in run_metadata.step_stats.dev_stats.items():
        device_stats = proto.step_stats.dev_stats.add(device=device)
        for s in stats:
            device_stats.node_stats.add(
                node_name=s.node_name,
                all_start_micros=s.all_start_micros,
                op_end_rel_micros=s.all_end_rel_micros,
                all_end_rel_micros=s.all_end_rel_micros,
                timeline_label=f"{s.node_name} = {s.op}()",
            )
    for graph in run_metadata.partition_graphs:
        proto.partition_graphs.append(graph_def_proto(graph))
    for row in run_metadata.cost_graph.get("node", []):
        send = proto.cost_graph.node.add(name=row["name"], device=row["device"], id=len(proto.cost_graph.node))
        send.output_info.add(size=row["bytes"])
        recv = proto.cost_graph.node.add(
            name=row["tensor_name"], device=row["recv_device"], id=len(proto.cost_graph.node)
        )
        recv.input_info.add(preceding_node=send.id)
        recv.output_info.add(size=row["bytes"])
    return proto


def sent_bytes(run_metadata: Any) -> dict[tuple[str, str], int]:
    """``(tensor_name, recv_device)`` → bytes sent between tasks in a traced cluster run, from its RunMetadata
    (the protobuf, or the runtime's, whose ``cost_graph["node"]`` rows RemoteBackend.run fills).

    Example:
        >>> from dtf_notebook.runtime.config import RunMetadata as Metadata
        >>> meta = Metadata(cost_graph={"node": [{"name": "a/_send", "device": "/job:ps/task:0", "tensor_name": "a:0",
        ...     "recv_device": "/job:worker/task:0", "bytes": 8}]})
        >>> sent_bytes(run_metadata_proto(meta)) == sent_bytes(meta) == {("a:0", "/job:worker/task:0"): 8}
        True
    """
    sent: dict[tuple[str, str], int] = {}
    if run_metadata is None:
        return sent
    if isinstance(run_metadata, RunMetadata):
        rows = [
            {"tensor_name": n.name, "recv_device": n.device, "bytes": n.output_info[0].size}
            for n in run_metadata.cost_graph.node
            if n.input_info and n.output_info
        ]
    else:
        rows = (getattr(run_metadata, "cost_graph", None) or {}).get("node", [])
    for row in rows:
        if "tensor_name" in row and "bytes" in row:
            key = (row["tensor_name"], row.get("recv_device", ""))
            sent[key] = sent.get(key, 0) + int(row["bytes"])
    return sent


def node_def_proto(
    node: dict[str, Any],
    output_shapes: list[TensorShape] | None = None,
    input_dtypes: list[Any] | None = None,
    output_dtypes: list[Any] | None = None,
) -> NodeDef:
    """The ``NodeDef`` of a plain-dict node (``{"name", "op", "input", "device", "attr"}``), its attrs written as
    TF writes them (:func:`dtf_notebook.framework.attr_values.node_attrs`).

    Args:
        node: The node.
        output_shapes: Static shapes recorded in ``_output_shapes`` (TF's ``add_shapes``).
        input_dtypes, output_dtypes: The node's data input and output element types, for the type attrs TF's
            signature of the op names and the node does not hold (``T``, ``N``, ...).

    Example:
        >>> node_def_proto({"name": "c", "op": "NoOp", "input": ["^a"], "device": "/cpu:0", "attr": {}}).input[:]
        ['^a']
    """
    proto = NodeDef(name=node["name"], op=node["op"], input=list(node.get("input", ())), device=node.get("device", ""))
    for key, value in node_attrs(node["op"], node.get("attr", {}), input_dtypes, output_dtypes).items():
        proto.attr[key].CopyFrom(value)
    if output_shapes is not None:
        proto.attr["_output_shapes"].list.shape.extend(_shape(s) for s in output_shapes)
    return proto


def _shape(shape: TensorShape) -> TensorShapeProto:
    return shape_proto(shape.as_list() if shape.ndims is not None else None)


def graph_def_proto(graph: Any, add_shapes: bool = False, from_version: int | None = None) -> GraphDef:
    """The ``GraphDef`` of a ``Graph`` or of a plain-dict graph def (``Graph.as_graph_def_dict()``).

    Args:
        graph: The graph or graph def.
        add_shapes: Record each node's static output shapes in ``_output_shapes`` (a ``Graph`` only), as TF's
            ``as_graph_def(add_shapes=True)`` does; TensorBoard labels edges with them.
        from_version: Only the nodes added to the ``Graph`` since its ``version`` had this value.

    Raises:
        TypeError: ``graph`` is neither.

    Example:
        >>> graph_def_proto({"node": [{"name": "a", "op": "NoOp"}], "versions": {"producer": 1}}).versions.producer
        1
    """
    if hasattr(graph, "get_operations") and hasattr(graph, "as_graph_def_dict"):
        ops = graph._operations_since(from_version)
        nodes = [
            node_def_proto(
                op.node_def,
                [t.shape for t in op.outputs] if add_shapes else None,
                [t.dtype for t in op.inputs],
                [t.dtype for t in op.outputs],
            )
            for op in ops
        ]
        versions: dict[str, Any] = {"producer": GRAPH_DEF_VERSION}
    elif isinstance(graph, dict) and "node" in graph:
        nodes = [node_def_proto(n) for n in graph["node"]]
        versions = graph.get("versions") or {}
    else:
        raise TypeError(f"The passed graph must be a Graph or a graph def, got {type(graph).__name__}")
    proto = GraphDef(node=nodes)
    proto.versions.CopyFrom(
        VersionDef(producer=int(versions.get("producer", 0)), min_consumer=int(versions.get("min_consumer", 0)))
    )
    return proto


__all__ = [
    "RunMetadata",
    "run_metadata_proto",
    "sent_bytes",
    "GraphDef",
    "MetaGraphDef",
    "NodeDef",
    "VersionDef",
    "graph_def_proto",
    "node_def_proto",
]
