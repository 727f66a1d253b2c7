"""The placement graph as plain data: nodes grouped by name scope and device, coloured by device, and its DOT.

:func:`build_model` turns plain node records (:class:`PlacedNode`: name, op type, requested and
assigned device, inputs) into what the picture shows: one box per task holding one box per device,
name scopes collapsed into one node per scope and device (unless expanded), edges merged between
those nodes, and edges between tasks (where a step inserts ``_Send``/``_Recv``) marked ``transfer``
with the bytes they moved when a traced run measured them. :func:`to_dot` writes it as a
``graphviz.Digraph`` (the ``graphviz`` package is imported only there);
:mod:`~dtf_notebook.notebook.placement_render` draws it.

Example:
    >>> ps, wk = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"
    >>> nodes = [PlacedNode("w", "VariableV2", "/job:ps", ps, kind="variable"),
    ...          PlacedNode("w/read", "Identity", "/job:ps", ps, inputs=("w",)),
    ...          PlacedNode("loss", "Square", "", wk, inputs=("w/read",))]
    >>> model = build_model(nodes)
    >>> [(n["name"], n["kind"], n["members"]) for n in model.nodes]
    [('w', 'variable', 2), ('loss', 'op', 1)]
    >>> [(e["src_name"], e["dst_name"], e["kind"]) for e in model.edges]
    [('w', 'loss', 'transfer')]
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dtf_notebook.framework.device_spec import DeviceSpec

__all__ = [
    "PALETTE",
    "PlacedNode",
    "PlacementModel",
    "build_model",
    "colour_key",
    "device_colours",
    "edge_attrs",
    "scope_key",
    "to_dot",
]

#: Fill colours for devices (light enough for black text), picked per device by a hash of its name.
PALETTE = (
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#dbdb8d",
    "#9edae5",
    "#ffe680",
    "#b3e2cd",
    "#80b1d3",
)
#: Where nodes go that request no device: the session decides (its master task's default device).
DEFAULT_TASK = "(session default)"
ANY_DEVICE = "(any device)"
_SHAPES = {"op": "box", "variable": "cylinder", "resource": "box3d", "scope": "folder"}
# Over this many drawn nodes dot's layout passes are bounded (see to_dot).
_MEDIUM = 100


@dataclass(frozen=True)
class PlacedNode:
    """One graph node as the placement picture needs it.

    Attributes:
        name: Node name (``scope/sub/op``).
        op: Op type.
        requested: The device as written in the graph (may be partial or empty).
        device: The assigned full device name ("" when not placed yet, or when placement failed).
        inputs: Names of the nodes whose outputs it reads.
        control_inputs: Names of the nodes it must run after.
        kind: ``"op"``, ``"variable"`` (holds a variable) or ``"resource"`` (holds other state: a queue...).
        error: Why it could not be placed, if it could not.

    Example:
        >>> node = PlacedNode("w", "VariableV2", requested="/job:ps/task:0", kind="variable")
        >>> node.device, node.inputs, node.error  # not placed yet
        ('', (), None)
    """

    name: str
    op: str
    requested: str = ""
    device: str = ""
    inputs: tuple[str, ...] = ()
    control_inputs: tuple[str, ...] = ()
    kind: str = "op"
    error: str | None = None


@dataclass
class PlacementModel:
    """What the placement picture shows, as plain data (also what widgets and tests read).

    Attributes:
        nodes: One dict per drawn node: ``id``, ``name`` (node or scope name), ``label``, ``kind`` (``op``,
            ``variable``, ``resource`` or ``scope``), ``op``, ``task``, ``device`` (task + device),
            ``device_label`` (the device within its task),
            ``requested`` (the distinct requested devices of its members), ``colour``, ``members`` (how many
            graph nodes it stands for), ``error``.
        edges: One dict per drawn edge: ``src``/``dst`` (node ids), ``src_name``/``dst_name``, ``kind``
            (``data``, ``control``, ``cross_device`` within a task, ``transfer`` between tasks), ``control``
            (the edge only orders), ``count`` (graph edges merged), ``tensors`` (sent between tasks),
            ``bytes`` (measured per step, None when not measured), ``types`` (dtype and shape sent).
        clusters: Task → its device labels, in drawing order.
        scopes: Collapsed scopes that can be expanded.
        colours: Device → fill colour.

    Example:
        >>> model = build_model([PlacedNode("a", "Const"), PlacedNode("b", "Identity", inputs=("a",))])
        >>> [n["name"] for n in model.nodes], [(e["src_name"], e["dst_name"]) for e in model.edges]
        (['a', 'b'], [('a', 'b')])
    """

    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    clusters: dict[str, list[str]] = field(default_factory=dict)
    scopes: list[str] = field(default_factory=list)
    colours: dict[str, str] = field(default_factory=dict)


# A device keeps the colour it first got for the life of this process (a kernel): the pictures before and
# after a run, or of two graphs, agree however many devices each one shows.
_colour_of: dict[str, str] = {}
_colour_lock = threading.Lock()


def colour_key(device: str) -> str:
    """The name a device's colour is kept under: the same device however it was written.

    ``/job:ps/task:0`` (requested: any device of the task, which the placer makes its CPU) and the assigned
    ``/job:ps/replica:0/task:0/device:CPU:0`` are one device; so are ``gpu:0`` and ``device:GPU:0``.

    Example:
        >>> colour_key("/job:ps/task:0") == colour_key("/job:ps/replica:0/task:0/device:CPU:0")
        True
        >>> colour_key("/job:worker/task:1/gpu:0")
        '/job:worker/replica:0/task:1/device:GPU:0'
    """
    try:
        spec = DeviceSpec.from_string(device)
    except ValueError:
        return device
    if spec.job is not None and spec.task is not None:
        spec = spec.replace(replica=spec.replica or 0)
    if spec.device_type is None:
        spec = spec.replace(device_type="CPU", device_index=0)
    elif spec.device_index is None:
        spec = spec.replace(device_index=0)
    return spec.to_string()


def device_colours(devices: Iterable[str]) -> dict[str, str]:
    """A fill colour per device, kept for the device (see :func:`colour_key`) for the life of this process.

    A device new to this process takes the colour a hash of its name picks, or the next one no device has
    yet, so the colours of the first twelve devices differ and none changes from one picture to the next.

    Example:
        >>> colours = device_colours(["/job:ps/task:0/device:CPU:0", "/job:worker/task:0/device:CPU:0"])
        >>> len(set(colours.values())), all(c in PALETTE for c in colours.values())
        (2, True)
        >>> device_colours(["/job:ps/task:0"])["/job:ps/task:0"] == colours["/job:ps/task:0/device:CPU:0"]
        True
    """
    colours: dict[str, str] = {}
    with _colour_lock:
        for device in sorted(set(devices)):
            key = colour_key(device)
            colour = _colour_of.get(key)
            if colour is None:
                index = zlib.crc32(key.encode()) % len(PALETTE)
                taken = set(_colour_of.values())
                if len(taken) < len(PALETTE):
                    while PALETTE[index] in taken:
                        index = (index + 1) % len(PALETTE)
                colour = _colour_of[key] = PALETTE[index]
            colours[device] = colour
    return colours


def scope_key(name: str, expanded: Iterable[str] = ()) -> str:
    """The scope a node is drawn in: its first name component, one level deeper for each expanded scope.

    Example:
        >>> scope_key("model/dense/MatMul"), scope_key("model/dense/MatMul", {"model"})
        ('model', 'model/dense')
        >>> scope_key("model/dense/MatMul", {"model", "model/dense"})
        'model/dense/MatMul'
    """
    expanded = set(expanded)
    parts = name.split("/")
    key, depth = parts[0], 1
    while depth < len(parts) and key in expanded:
        key, depth = f"{key}/{parts[depth]}", depth + 1
    return key


def location(node: PlacedNode) -> tuple[str, str]:
    """``(task, device)`` labels of where a node is drawn: its assigned device, else the requested one.

    Example:
        >>> location(PlacedNode("a", "Const", requested="/job:ps/task:1"))
        ('/job:ps/replica:0/task:1', '(any device)')
        >>> location(PlacedNode("a", "Const", device="/job:w/replica:0/task:0/device:GPU:1"))
        ('/job:w/replica:0/task:0', 'GPU:1')
    """
    text = node.device or node.requested
    try:
        spec = DeviceSpec.from_string(text)
    except ValueError:
        return "(invalid device)", text
    if spec.job is not None and spec.task is not None:
        # The same task however it was written ("/job:ps/task:0" or with its replica).
        spec = spec.replace(replica=spec.replica or 0)
    task = spec.replace(device_type=None, device_index=None).to_string() or DEFAULT_TASK
    if spec.device_type is None:
        return task, ANY_DEVICE
    return task, f"{spec.device_type}:{'*' if spec.device_index is None else spec.device_index}"


def _device_name(group: dict[str, Any]) -> str:
    """The device a group of nodes is drawn on, as a device name (partial when only requested)."""
    assigned = group["members"][0].device
    if assigned:
        return assigned
    task, device = group["task"], group["device"]
    task = "" if task == DEFAULT_TASK else task
    return task if device == ANY_DEVICE else f"{task}/device:{device}"


def _different_tasks(a: str, b: str) -> bool:
    """Whether two task labels surely name different tasks (an edge between them crosses tasks).

    Example:
        >>> _different_tasks("/job:ps/replica:0/task:0", "/job:worker"), _different_tasks("/job:ps", "/job:ps/task:1")
        (True, False)
    """
    if a == b or not (a.startswith("/job:") and b.startswith("/job:")):
        return False
    sa, sb = DeviceSpec.from_string(a), DeviceSpec.from_string(b)
    return sa.job != sb.job or (sa.task is not None and sb.task is not None and sa.task != sb.task)


def build_model(
    nodes: Sequence[PlacedNode],
    transfers: Sequence[Mapping[str, Any]] = (),
    sent_bytes: Mapping[tuple[str, str], int] | None = None,
    collapse: bool = True,
    expand: Iterable[str] = (),
) -> PlacementModel:
    """Groups, colours and connects ``nodes`` for drawing.

    Args:
        nodes: The graph's nodes (inputs naming nodes not listed are left out: fed or pruned).
        transfers: Tensors a step sends between tasks (rows of ``Session.placement``): their dtype and
            shape label the edges, and ``sent_bytes`` is looked up by their ``tensor_name``/``recv_device``.
        sent_bytes: ``(tensor_name, recv_device)`` → bytes sent in a traced step.
        collapse: Draw one node per name scope and device (False: every node).
        expand: Scopes drawn open (their sub-scopes still collapsed).

    Returns:
        A :class:`PlacementModel`.

    Example:
        >>> cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
        >>> nodes = [PlacedNode(f"m/op{i}", "Add", device=cpu) for i in range(3)]
        >>> build_model(nodes).scopes, len(build_model(nodes, expand=["m"]).nodes)
        (['m'], 3)
    """
    expanded = set(expand)
    groups: dict[str, dict[str, Any]] = {}
    group_of: dict[str, dict[str, Any]] = {}
    for node in nodes:
        key = scope_key(node.name, expanded) if collapse else node.name
        task, device = location(node)
        gid = f"{key}@{task}/{device}"
        group = groups.get(gid)
        if group is None:
            group = groups[gid] = {"key": key, "task": task, "device": device, "members": []}
        group["members"].append(node)
        group_of[node.name] = group

    model = PlacementModel()
    full_devices = {gid: _device_name(g) for gid, g in groups.items()}
    model.colours = device_colours(full_devices.values())
    clusters: dict[str, set[str]] = {}
    for index, (gid, group) in enumerate(groups.items()):
        group["id"] = f"n{index}"
        clusters.setdefault(group["task"], set()).add(group["device"])
        model.nodes.append(_node_record(group, model.colours[full_devices[gid]], full_devices[gid]))
    model.clusters = {task: sorted(devices) for task, devices in sorted(clusters.items())}
    model.scopes = sorted({n["name"] for n in model.nodes if n["kind"] == "scope" or n["members"] > 1})
    model.edges = _edges(nodes, group_of, transfers, sent_bytes or {})
    return model


def _node_record(group: dict[str, Any], colour: str, device: str) -> dict[str, Any]:
    members: list[PlacedNode] = group["members"]
    key = group["key"]
    head = next((m for m in members if m.name == key), None)
    requested = sorted({m.requested for m in members if m.requested})
    errors = [m.error for m in members if m.error]
    if len(members) == 1 and head is not None:
        kind, op = head.kind, head.op
        body = op
    elif head is not None and head.kind in ("variable", "resource"):
        # A variable drawn with its helper ops (initial value, Assign, read).
        kind, op = head.kind, head.op
        body = f"{op} (+{len(members) - 1} op{'s' * (len(members) > 2)})"
    else:
        kind, op = "scope", ""
        state = sum(m.kind == "variable" for m in members)
        body = f"{len(members)} op{'s' * (len(members) > 1)}" + (
            f", {state} variable{'s' * (state > 1)}" if state else ""
        )
    lines = [key, body]
    if len(requested) == 1:
        lines.append(f"req {requested[0]}")
    elif requested:
        lines.append(f"req {len(requested)} devices")
    return {
        "id": group["id"],
        "name": key,
        "label": "\n".join(lines),
        "kind": kind,
        "op": op,
        "task": group["task"],
        "device": device,
        "device_label": group["device"],
        "requested": requested,
        "colour": colour,
        "members": len(members),
        "error": errors[0] if errors else None,
    }


def _edges(
    nodes: Sequence[PlacedNode],
    group_of: Mapping[str, dict[str, Any]],
    transfers: Sequence[Mapping[str, Any]],
    sent_bytes: Mapping[tuple[str, str], int],
) -> list[dict[str, Any]]:
    edges: dict[tuple[str, str, bool], dict[str, Any]] = {}

    def edge(src: str, dst: str, control: bool) -> dict[str, Any] | None:
        gs, gd = group_of.get(src), group_of.get(dst)
        if gs is None or gd is None or gs is gd:
            return None
        found = edges.get((gs["id"], gd["id"], control))
        if found is None:
            if _different_tasks(gs["task"], gd["task"]):
                kind = "transfer"
            elif gs["task"] == gd["task"] and gs["device"] != gd["device"]:
                kind = "cross_device"
            else:
                kind = "control" if control else "data"
            found = edges[(gs["id"], gd["id"], control)] = {
                "src": gs["id"],
                "dst": gd["id"],
                "src_name": gs["key"],
                "dst_name": gd["key"],
                "kind": kind,
                "control": control,
                "count": 0,
                "tensors": [],
                "bytes": None,
                "types": None,
            }
        return found

    for node in nodes:
        for src in node.inputs:
            if (e := edge(src, node.name, False)) is not None:
                e["count"] += 1
        for src in node.control_inputs:
            if (e := edge(src, node.name, True)) is not None:
                e["count"] += 1
    for row in transfers:
        control = row.get("output", 0) < 0
        measured = sent_bytes.get((row.get("tensor_name", ""), row.get("recv_device", "")))
        for dst in row.get("dst", ()):
            e = edge(row["src"], dst, control)
            if e is None or row["tensor_name"] in e["tensors"]:
                continue
            e["kind"] = "transfer"
            e["tensors"].append(row["tensor_name"])
            if not control and e["types"] is None:
                shape = row.get("shape")
                e["types"] = f"{row.get('dtype', '')}{'[?]' if shape is None else list(shape)}"
            if measured is not None:
                e["bytes"] = (e["bytes"] or 0) + measured
    return list(edges.values())


def _size(nbytes: int) -> str:
    """Bytes for a label.

    Example:
        >>> _size(400), _size(3 << 20)
        ('400 B', '3.0 MiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes} {unit}" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")


def to_dot(model: PlacementModel, engine: str | None = None, edges: Sequence[dict[str, Any]] | None = None) -> Any:
    """The model as a ``graphviz.Digraph``: a box per task, a filled box per device inside it, nodes filled
    with their device's colour (variables as cylinders, scopes as folders, failed placements outlined red),
    edges between tasks red and bold with bytes per step (or dtype and shape) on them.

    ``engine`` is the Graphviz program it is meant for (default ``dot``); ``edges`` draws only those of the
    model's edges (default: all). Over 100 nodes, dot's ranking, crossing minimisation and positioning passes
    are bounded (``nslimit``, ``nslimit1``, ``mclimit``, ``remincross``) and edges are straight segments,
    trading a few more crossings for a layout in seconds. ``sfdp`` and ``fdp`` draw without layers; only
    ``sfdp`` ignores the boxes.

    Example:
        >>> cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
        >>> dot = to_dot(build_model([PlacedNode("a", "Const", device=cpu)]))
        >>> "cluster_t0_d0" in dot.source and 'fillcolor="#' in dot.source
        True
    """
    import graphviz

    engine = engine or "dot"
    graph = graphviz.Digraph("placement", engine=engine)
    graph.attr(rankdir="TB", fontname="Helvetica", fontsize="11", nodesep="0.15", ranksep="0.35", newrank="true")
    if engine in ("sfdp", "fdp"):
        graph.attr(overlap="scale", splines="false", outputorder="edgesfirst")
    elif len(model.nodes) > _MEDIUM:
        # Measured on deep training graphs of 560 to 5,240 nodes: these passes take about half the time that
        # nslimit=2, mclimit=0.2 did, for a picture of the same kind.
        graph.attr(nslimit="0.1", nslimit1="0.1", mclimit="0.1", remincross="false", splines="line")
    graph.attr("node", shape="box", style="rounded,filled", fontname="Helvetica", fontsize="9", height="0.3")
    graph.attr("edge", color="#888888", arrowsize="0.6", fontname="Helvetica", fontsize="8")
    by_place: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for node in model.nodes:
        by_place.setdefault((node["task"], node["device_label"]), []).append(node)
    for t, (task, devices) in enumerate(model.clusters.items()):
        with graph.subgraph(name=f"cluster_t{t}") as task_box:
            task_box.attr(label=task, style="rounded", color="#555555", fontsize="11")
            for d, device in enumerate(devices):
                members = by_place.get((task, device), [])
                with task_box.subgraph(name=f"cluster_t{t}_d{d}") as device_box:
                    colour = members[0]["colour"] if members else "#dddddd"
                    device_box.attr(label=device, style="rounded,filled", fillcolor="#fafafa", color=colour)
                    for node in members:
                        device_box.node(node["id"], **_node_attrs(node))
    for e in model.edges if edges is None else edges:
        graph.edge(e["src"], e["dst"], **edge_attrs(e))
    return graph


def _node_attrs(node: dict[str, Any]) -> dict[str, str]:
    shape = _SHAPES.get(node["kind"], "box")
    attrs = {
        "label": node["label"],
        "fillcolor": node["colour"],
        "shape": shape,
        "style": "rounded,filled" if shape == "box" else "filled",
        "tooltip": f"{node['name']} on {node['device']}" + (f" ({node['op']})" if node["op"] else ""),
    }
    if node["error"]:
        attrs.update(color="#d62728", penwidth="2.5", tooltip=node["error"])
    return attrs


def edge_attrs(edge: dict[str, Any]) -> dict[str, str]:
    """Graphviz attributes of a drawn edge: dashed when it only orders, red and bold between tasks (with its
    bytes per step, or dtype and shape), orange between devices of a task.

    Example:
        >>> ps, wk = "/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:0/device:CPU:0"
        >>> model = build_model([PlacedNode("w", "VariableV2", device=ps), PlacedNode("y", "Neg", device=wk,
        ...                                                                         inputs=("w",))])
        >>> edge_attrs(model.edges[0])["color"]
        '#d62728'
    """
    attrs: dict[str, str] = {}
    if edge["control"]:
        attrs["style"] = "dashed"
    if edge["kind"] == "transfer":
        attrs.update(color="#d62728", penwidth="2.2")
        if edge["bytes"] is not None:
            attrs["label"] = f"{_size(edge['bytes'])}/step"
        elif edge["types"]:
            attrs["label"] = edge["types"]
        attrs["tooltip"] = ", ".join(edge["tensors"]) or "crosses tasks"
    elif edge["kind"] == "cross_device":
        attrs.update(color="#ff7f0e", penwidth="1.5")
    return attrs
