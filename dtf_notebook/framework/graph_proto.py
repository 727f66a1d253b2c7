"""The ``GraphDef`` protobuf of a graph, for TensorBoard's graph view (``FileWriter.add_graph``), and the
``RunMetadata`` protobuf of a traced run.

The messages are TF's (:mod:`dtf_notebook.protos.graph_pb`, :mod:`dtf_notebook.protos.config_pb`).
A graph's plain-data ``as_graph_def()`` becomes ``NodeDef`` messages (name, op, inputs, device and
the attributes a ``AttrValue`` can hold); each node also gets ``_output_shapes`` from the static
shapes, as TF's ``as_graph_def(add_shapes=True)`` does, so TensorBoard labels edges with shapes.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     y = tf.identity(tf.placeholder(tf.float32, [None, 3], name="x"), name="y")
    >>> proto = graph_def_proto(g)
    >>> [(n.name, n.op, list(n.input)) for n in proto.node]
    [('x', 'Placeholder', []), ('y', 'Identity', ['x'])]
    >>> [d.size for d in proto.node[1].attr["_output_shapes"].list.shape[0].dim]
    [-1, 3]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_proto import make_tensor_proto, shape_proto
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.protos.config_pb import RunMetadata
from dtf_notebook.protos.graph_pb import AttrValue, GraphDef, MetaGraphDef, NodeDef, TensorShapeProto, VersionDef


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


def _is_shape_attr(name: str) -> bool:
    return name == "shape" or name.endswith("_shape") or name in ("shapes", "output_shapes")


def attr_value(name: str, value: Any) -> AttrValue | None:
    """The ``AttrValue`` of one plain-data attribute, or None when it has no protobuf form.

    Example:
        >>> attr_value("dtype", dtypes.float32).type, attr_value("strides", (1, 2)).list.i[:]
        (1, [1, 2])
    """
    if isinstance(value, dtypes.DType):
        return AttrValue(type=value.as_datatype_enum)
    if isinstance(value, TensorShape):
        return AttrValue(shape=shape_proto(value.as_list() if value.ndims is not None else None))
    if isinstance(value, bool | np.bool_):
        return AttrValue(b=bool(value))
    if isinstance(value, int | np.integer):
        return AttrValue(i=int(value))
    if isinstance(value, float | np.floating):
        return AttrValue(f=float(value))
    if isinstance(value, str | bytes):
        return AttrValue(s=value.encode("utf-8") if isinstance(value, str) else value)
    if isinstance(value, np.ndarray):
        return AttrValue(tensor=make_tensor_proto(value))
    if isinstance(value, list | tuple):
        if _is_shape_attr(name) and all(v is None or isinstance(v, int) for v in value):
            return AttrValue(shape=shape_proto(value))
        return _list_attr(value)
    return None


def _list_attr(values: list | tuple) -> AttrValue | None:
    items = AttrValue.ListValue()
    for v in values:
        if isinstance(v, dtypes.DType):
            items.type.append(v.as_datatype_enum)
        elif isinstance(v, TensorShape):
            items.shape.append(shape_proto(v.as_list() if v.ndims is not None else None))
        elif isinstance(v, bool):
            items.b.append(v)
        elif isinstance(v, int):
            items.i.append(v)
        elif isinstance(v, float):
            items.f.append(v)
        elif isinstance(v, str | bytes):
            items.s.append(v.encode("utf-8") if isinstance(v, str) else v)
        else:
            return None
    return AttrValue(list=items)


def node_def_proto(node: dict[str, Any], output_shapes: list[TensorShape] | None = None) -> NodeDef:
    """The ``NodeDef`` of a plain-dict node (``{"name", "op", "input", "device", "attr"}``).

    Example:
        >>> node_def_proto({"name": "c", "op": "NoOp", "input": ["^a"], "device": "/cpu:0", "attr": {}}).input[:]
        ['^a']
    """
    proto = NodeDef(name=node["name"], op=node["op"], input=list(node.get("input", ())), device=node.get("device", ""))
    for key, value in node.get("attr", {}).items():
        converted = attr_value(key, value)
        if converted is not None:
            proto.attr[key].CopyFrom(converted)
    if output_shapes is not None:
        proto.attr["_output_shapes"].list.shape.extend(_shape(s) for s in output_shapes)
    return proto


def _shape(shape: TensorShape) -> TensorShapeProto:
    return shape_proto(shape.as_list() if shape.ndims is not None else None)


def graph_def_proto(graph: Any) -> GraphDef:
    """The ``GraphDef`` of a ``Graph`` (with ``_output_shapes``) or of a plain-dict graph def.

    Raises:
        TypeError: ``graph`` is neither.

    Example:
        >>> graph_def_proto({"node": [{"name": "a", "op": "NoOp"}], "versions": {"producer": 1}}).versions.producer
        1
    """
    if hasattr(graph, "get_operations") and hasattr(graph, "as_graph_def"):
        plain = graph.as_graph_def()
        shapes = {op.name: [t.shape for t in op.outputs] for op in graph.get_operations()}
    elif isinstance(graph, dict) and "node" in graph:
        plain, shapes = graph, {}
    else:
        raise TypeError(f"The passed graph must be a Graph or a graph def, got {type(graph).__name__}")
    proto = GraphDef(node=[node_def_proto(n, shapes.get(n["name"])) for n in plain["node"]])
    versions = plain.get("versions") or {}
    proto.versions.CopyFrom(
        VersionDef(producer=int(versions.get("producer", 0)), min_consumer=int(versions.get("min_consumer", 0)))
    )
    return proto


__all__ = [
    "RunMetadata",
    "run_metadata_proto",
    "sent_bytes",
    "AttrValue",
    "GraphDef",
    "MetaGraphDef",
    "NodeDef",
    "VersionDef",
    "attr_value",
    "graph_def_proto",
    "node_def_proto",
]
