"""Drawing a placement model as SVG in seconds, keeping its task and device boxes, however big the graph.

Graphviz's ``dot`` draws the boxes (clusters) and the layers of a graph well, but its cost grows with the
edges that span many layers: it threads each through one virtual node per layer it crosses, and a deep
training graph (a forward pass, then its gradients, with summing and update ops reading every layer) has
hundreds of thousands of them. Engines that skip that work (``sfdp``) drop the boxes. So
:func:`render_svg` lets ``dot`` lay out the graph with its short edges, up to a budget of work
(:data:`WORK`: drawn nodes plus the virtual nodes of the edges it routes), and draws the longer edges
afterwards as straight lines over the finished layout (``neato -n2``, which keeps every position and box).
Graphs within the budget, which include most graphs below a thousand nodes, are drawn by ``dot`` alone.

Example:
    >>> from dtf_notebook.notebook.placement_layout import PlacedNode, build_model
    >>> nodes = [PlacedNode("a", "Const"), PlacedNode("b", "Neg", inputs=("a",)),
    ...          PlacedNode("c", "Neg", inputs=("b",)), PlacedNode("d", "Add", inputs=("c", "a"))]
    >>> model = build_model(nodes)
    >>> layers(model)
    {'n0': 0, 'n1': 1, 'n2': 2, 'n3': 3}
    >>> routed, straight = split_edges(model, work=len(model.nodes) + 1)  # room for one virtual node
    >>> [(e["src_name"], e["dst_name"]) for e in straight]  # a -> d spans 3 layers: 2 virtual nodes
    [('a', 'd')]
"""

from __future__ import annotations

from collections import deque
from typing import Any

from dtf_notebook.notebook.placement_layout import PlacementModel, edge_attrs, to_dot

__all__ = ["WORK", "layers", "render_svg", "split_edges"]

#: The layout work ``dot`` is given: drawn nodes plus one virtual node per layer an edge crosses. About
#: 3 s for a 5,240-node training graph on 2 busy cores (most of it dot's positioning of the nodes).
WORK = 10_000


def layers(model: PlacementModel) -> dict[str, int]:
    """Node id → its layer: the longest path to it from a node without inputs (cycles broken in node order).

    Example:
        >>> from dtf_notebook.notebook.placement_layout import PlacedNode, build_model
        >>> cycle = build_model([PlacedNode("a", "Neg", inputs=("b",)), PlacedNode("b", "Neg", inputs=("a",))])
        >>> layers(cycle)
        {'n0': 0, 'n1': 1}
    """
    successors: dict[str, list[str]] = {n["id"]: [] for n in model.nodes}
    waiting = dict.fromkeys(successors, 0)  # inputs not yet placed in a layer
    for e in model.edges:
        successors[e["src"]].append(e["dst"])
        waiting[e["dst"]] += 1
    layer = dict.fromkeys(successors, 0)
    done: set[str] = set()
    ready = deque(node for node, count in waiting.items() if count == 0)
    unplaced = iter(successors)  # where a cycle blocks every node left, start from the first in order
    while len(done) < len(successors):
        if not ready:
            ready.append(next(node for node in unplaced if node not in done))
        node = ready.popleft()
        if node in done:
            continue
        done.add(node)
        for successor in successors[node]:
            if successor in done:
                continue  # an edge closing a cycle
            layer[successor] = max(layer[successor], layer[node] + 1)
            waiting[successor] -= 1
            if waiting[successor] == 0:
                ready.append(successor)
    return layer


def split_edges(model: PlacementModel, work: int = WORK) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The edges ``dot`` routes (the shortest first, while the work lasts) and those drawn straight after.

    Example:
        >>> from dtf_notebook.notebook.placement_layout import PlacedNode, build_model
        >>> model = build_model([PlacedNode("a", "Const"), PlacedNode("b", "Neg", inputs=("a",))])
        >>> [len(edges) for edges in split_edges(model)]
        [1, 0]
        >>> [len(edges) for edges in split_edges(model, work=1)]  # fewer than the nodes: neighbours still routed
        [1, 0]
    """
    layer = layers(model)
    spans = sorted((max(abs(layer[e["dst"]] - layer[e["src"]]) - 1, 0), index) for index, e in enumerate(model.edges))
    # Edges between neighbouring layers cost dot no virtual nodes: they are always routed, so even a graph with
    # more nodes than the budget keeps its layers.
    budget, routed = max(work - len(model.nodes), 0), set()
    for virtual, index in spans:
        if virtual > budget:
            break
        budget -= virtual
        routed.add(index)
    return (
        [e for index, e in enumerate(model.edges) if index in routed],
        [e for index, e in enumerate(model.edges) if index not in routed],
    )


def render_svg(model: PlacementModel, engine: str | None = None, work: int = WORK) -> str:
    """The model drawn as an SVG document (with its XML prolog).

    Args:
        model: What to draw.
        engine: None draws with ``dot``, the edges beyond ``work`` straight over its layout (see above);
            a Graphviz program name (``dot``, ``fdp``, ``sfdp``, ``osage``, ...) draws everything with it.
        work: ``dot``'s budget (see :data:`WORK`).

    Raises:
        graphviz.ExecutableNotFound: Graphviz's programs are not installed.

    Example:
        >>> import shutil
        >>> from dtf_notebook.notebook.placement_layout import PlacedNode, build_model
        >>> model = build_model([PlacedNode("a", "Const", device="/job:ps/task:0/device:CPU:0")])
        >>> shutil.which("dot") is None or 'class="cluster"' in render_svg(model)
        True
    """
    import graphviz

    if engine is not None:
        return to_dot(model, engine).pipe(format="svg", encoding="utf-8", quiet=True)
    routed, straight = split_edges(model, work)
    graph = to_dot(model, "dot", edges=routed)
    if not straight:
        return graph.pipe(format="svg", encoding="utf-8", quiet=True)
    graph.attr(outputorder="edgesfirst")  # the straight edges cross many nodes: draw the nodes over them
    positioned = graph.pipe(format="dot", encoding="utf-8", quiet=True)
    extra = graphviz.Digraph()
    for e in straight:
        extra.edge(e["src"], e["dst"], **edge_attrs(e))
    # The positioned graph, with the other edges added before its closing brace; neato -n2 keeps every node,
    # box and routed edge where dot put them and draws the added edges as straight lines.
    end = positioned.rstrip().rfind("}")
    data = positioned[:end] + "".join(extra.body) + "}\n"
    return graphviz.pipe("neato", "svg", data.encode(), neato_no_op=2, quiet=True).decode()
