"""The ``GraphDef`` protobuf of a graph, for TensorBoard's graph view (``FileWriter.add_graph``).

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
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.summary.messages import DATA_TYPE_NAMES, TensorProto, TensorShapeProto
from dtf_notebook.summary.proto import Field, Message
from dtf_notebook.summary.tensor_proto import make_tensor_proto, shape_proto


class AttrValue(Message):
    """One node attribute: a string, int, float, bool, dtype, shape, tensor or a list of those.

    Example:
        >>> AttrValue(i=3).WhichOneof("value")
        'i'
        >>> print(AttrValue(list=AttrValue.ListValue(i=[1, 2])), end="")
        list {
          i: 1
          i: 2
        }
    """

    class ListValue(Message):
        """A list-valued attribute."""

        FIELDS = (
            Field("s", 2, "bytes", repeated=True),
            Field("i", 3, "int64", repeated=True),
            Field("f", 4, "float", repeated=True),
            Field("b", 5, "bool", repeated=True),
            Field("type", 6, "enum", repeated=True, enum_names=DATA_TYPE_NAMES),
            Field("shape", 7, "message", repeated=True, message=TensorShapeProto),
            Field("tensor", 8, "message", repeated=True, message=TensorProto),
        )

    FIELDS = (
        Field("list", 1, "message", message=ListValue, oneof="value"),
        Field("s", 2, "bytes", oneof="value"),
        Field("i", 3, "int64", oneof="value"),
        Field("f", 4, "float", oneof="value"),
        Field("b", 5, "bool", oneof="value"),
        Field("type", 6, "enum", oneof="value", enum_names=DATA_TYPE_NAMES),
        Field("shape", 7, "message", message=TensorShapeProto, oneof="value"),
        Field("tensor", 8, "message", message=TensorProto, oneof="value"),
        Field("placeholder", 9, "string", oneof="value"),
    )


class NodeDef(Message):
    """One node: ``name``, ``op``, ``input`` (``"^name"`` for control inputs), ``device`` and ``attr``.

    Example:
        >>> print(NodeDef(name="y", op="Identity", input=["x"]), end="")
        name: "y"
        op: "Identity"
        input: "x"
    """

    FIELDS = (
        Field("name", 1, "string"),
        Field("op", 2, "string"),
        Field("input", 3, "string", repeated=True),
        Field("device", 4, "string"),
        Field("attr", 5, "map", message=AttrValue),
    )


class VersionDef(Message):
    """The graph's format version.

    Example:
        >>> VersionDef(producer=27).producer, VersionDef().min_consumer
        (27, 0)
    """

    FIELDS = (
        Field("producer", 1, "int32"),
        Field("min_consumer", 2, "int32"),
        Field("bad_consumers", 3, "int32", repeated=True),
    )


class GraphDef(Message):
    """A graph's nodes and version.

    Example:
        >>> graph = GraphDef(node=[NodeDef(name="a", op="NoOp")], versions=VersionDef(producer=1))
        >>> GraphDef.FromString(graph.SerializeToString()).node[0].op
        'NoOp'
    """

    FIELDS = (
        Field("node", 1, "message", repeated=True, message=NodeDef),
        Field("version", 3, "int32"),
        Field("versions", 4, "message", message=VersionDef),
    )


class MetaGraphDef(Message):
    """A graph with what is needed to resume it; here the ``graph_def`` and the ``meta_info_def`` tags.

    Example:
        >>> meta = MetaGraphDef(meta_info_def=MetaGraphDef.MetaInfoDef(tags=["serve"]), graph_def=GraphDef())
        >>> list(meta.meta_info_def.tags)
        ['serve']
    """

    class MetaInfoDef(Message):
        """Free-form information about the meta graph."""

        FIELDS = (
            Field("meta_graph_version", 1, "string"),
            Field("tags", 4, "string", repeated=True),
            Field("tensorflow_version", 5, "string"),
            Field("tensorflow_git_version", 6, "string"),
        )

    FIELDS = (
        Field("meta_info_def", 1, "message", message=MetaInfoDef),
        Field("graph_def", 2, "message", message=GraphDef),
    )


class NodeExecStats(Message):
    """How one node ran in a traced step (times in microseconds).

    Example:
        >>> print(NodeExecStats(node_name="a", all_start_micros=10, all_end_rel_micros=3), end="")
        node_name: "a"
        all_start_micros: 10
        all_end_rel_micros: 3
    """

    FIELDS = (
        Field("node_name", 1, "string"),
        Field("all_start_micros", 2, "int64"),
        Field("op_start_rel_micros", 3, "int64"),
        Field("op_end_rel_micros", 4, "int64"),
        Field("all_end_rel_micros", 5, "int64"),
        Field("timeline_label", 8, "string"),
    )


class DeviceStepStats(Message):
    """The traced nodes of one device.

    Example:
        >>> stats = DeviceStepStats(device="/cpu:0")
        >>> stats.node_stats.add(node_name="a").node_name
        'a'
    """

    FIELDS = (Field("device", 1, "string"), Field("node_stats", 2, "message", repeated=True, message=NodeExecStats))


class StepStats(Message):
    """Per-device timings of a traced step.

    Example:
        >>> step = StepStats()
        >>> step.dev_stats.add(device="/cpu:0").device, len(step.dev_stats)
        ('/cpu:0', 1)
    """

    FIELDS = (Field("dev_stats", 1, "message", repeated=True, message=DeviceStepStats),)


class RunMetadata(Message):
    """What a traced run reports: ``step_stats`` and the ``partition_graphs`` that ran.

    Example:
        >>> meta = RunMetadata()
        >>> meta.step_stats.dev_stats.add(device="/cpu:0").device
        '/cpu:0'
        >>> meta.HasField("step_stats"), len(meta.partition_graphs)
        (True, 0)
    """

    FIELDS = (
        Field("step_stats", 1, "message", message=StepStats),
        Field("partition_graphs", 3, "message", repeated=True, message=GraphDef),
    )


def run_metadata_proto(run_metadata: Any) -> RunMetadata:
    """The ``RunMetadata`` protobuf of a session's :class:`~dtf_notebook.runtime.config.RunMetadata`.

    Example:
        >>> from dtf_notebook.runtime.config import NodeExecStats as Stats, RunMetadata as Metadata
        >>> meta = Metadata()
        >>> meta.step_stats.dev_stats["/cpu:0"] = [Stats("a", "NoOp", "/cpu:0", 10, 3)]
        >>> run_metadata_proto(meta).step_stats.dev_stats[0].node_stats[0].timeline_label
        'a = NoOp()'
    """
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
    return proto


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
        return AttrValue(s=value)
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
            items.s.append(v)
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
    attrs = {}
    for key, value in node.get("attr", {}).items():
        converted = attr_value(key, value)
        if converted is not None:
            attrs[key] = converted
    if output_shapes is not None:
        attrs["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[_shape(s) for s in output_shapes]))
    proto.attr = attrs
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
    proto.versions = VersionDef(
        producer=int(versions.get("producer", 0)), min_consumer=int(versions.get("min_consumer", 0))
    )
    return proto


__all__ = [
    "RunMetadata",
    "run_metadata_proto",
    "AttrValue",
    "GraphDef",
    "MetaGraphDef",
    "NodeDef",
    "VersionDef",
    "attr_value",
    "graph_def_proto",
    "node_def_proto",
]
