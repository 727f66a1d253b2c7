"""``show_placement``: a picture of where each node of a graph runs, one box per task and device.

Before any session, it shows the placement the graph asks for (each op's device string as written).
Given a ``session``, it shows the placement that session's steps use: on a cluster the master's own
answer (``Session.placement``), including the tensors a step sends between tasks, drawn as red edges;
pass the ``run_metadata`` of a traced run (``RunOptions(trace_level=FULL_TRACE)``) and they carry the
bytes each moved. Name scopes are collapsed into one node per scope and device, expandable.

In a Jupyter kernel with ipywidgets, the result is a widget (the picture plus a scope picker); anywhere
else it is a :class:`PlacementView`, which shows as inline SVG in a notebook and as text in a terminal.
Drawing needs Graphviz's ``dot`` program (see :mod:`~dtf_notebook.notebook.placement_render` for how big
graphs keep their boxes and still draw in seconds); without it the view falls back to a table.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     with tf.device("/job:ps/task:0"):
    ...         w = tf.Variable(tf.ones([4]), name="w")
    ...     with tf.device("/job:worker/task:0"), tf.name_scope("model"):
    ...         loss = tf.reduce_sum(w * 2.0, name="loss")
    ...     view = show_placement(loss)
    >>> [(n["name"], n["kind"], n["task"]) for n in view.nodes]
    [('w', 'variable', '/job:ps/replica:0/task:0'), ('model', 'scope', '/job:worker/replica:0/task:0')]
    >>> [(e["src_name"], e["dst_name"], e["kind"]) for e in view.edges]
    [('w', 'model', 'transfer')]
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterable, Sequence
from typing import Any

from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.graph_proto import sent_bytes
from dtf_notebook.framework.operation import Operation
from dtf_notebook.notebook.placement_layout import DEFAULT_TASK, PlacedNode, PlacementModel, build_model, to_dot
from dtf_notebook.notebook.placement_publish import publish
from dtf_notebook.notebook.placement_render import render_svg
from dtf_notebook.notebook.widget_fallback import text_table, widgets_available
from dtf_notebook.runtime.executor import needed_ops
from dtf_notebook.runtime.fetches import flatten_fetches

__all__ = ["PlacementView", "placement_view", "show_placement"]


def _kind(op: Operation) -> str:
    op_def = op.op_def
    if not op_def.ref_outputs or op_def.ref_inputs:
        return "op"
    return "variable" if "Variable" in op.type or op.type == "VarHandleOp" else "resource"


def _graph_of(fetches: Any) -> Graph | None:
    """The graph of the first graph element found in a fetch structure."""
    if isinstance(fetches, dict):
        fetches = list(fetches.values())
    if isinstance(fetches, list | tuple):
        for item in fetches:
            graph = _graph_of(item)
            if graph is not None:
                return graph
        return None
    graph = getattr(fetches, "graph", None)
    return graph if isinstance(graph, Graph) else None


def _nodes(ops: Iterable[Operation], listing: dict[str, dict[str, Any]] | None) -> list[PlacedNode]:
    nodes = []
    for op in ops:
        row = listing.get(op.name, {}) if listing is not None else {}
        nodes.append(
            PlacedNode(
                name=op.name,
                op=op.type,
                requested=op.device,
                device=row.get("device", ""),
                inputs=tuple(t.op.name for t in op.inputs),
                control_inputs=tuple(c.name for c in op.control_inputs),
                kind=_kind(op),
                error=row.get("error"),
            )
        )
    return nodes


class PlacementView:
    """A placement picture: its model (``nodes``, ``edges``, ``scopes``), DOT source, SVG, and fallbacks.

    Build one with :func:`placement_view` (or :func:`show_placement`). Views are values: :meth:`expand`
    and :meth:`collapsed` return new views of the same placement.

    Attributes:
        placed: True when devices are the assigned ones (a session answered), False when only requested.
        collapse: Whether name scopes are collapsed.
        expanded: The scopes drawn open.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     with tf.device("/job:ps/task:0"):
        ...         w = tf.Variable(1.0, name="w")
        ...     y = tf.identity(w, name="y")
        >>> view = placement_view(g)
        >>> [n["name"] for n in view.nodes], view.placed
        (['w', 'y'], False)
        >>> [n["name"] for n in view.collapsed(False).nodes]
        ['w/initial_value', 'w', 'w/Assign', 'w/read', 'y']
    """

    def __init__(
        self,
        nodes: Sequence[PlacedNode],
        transfers: Sequence[dict[str, Any]] = (),
        sent_bytes: dict[tuple[str, str], int] | None = None,
        collapse: bool = True,
        expand: Iterable[str] = (),
        placed: bool = False,
        engine: str | None = None,
    ) -> None:
        self._nodes, self._transfers, self._sent = list(nodes), list(transfers), dict(sent_bytes or {})
        self.placed, self.collapse, self.expanded, self.engine = placed, collapse, tuple(expand), engine
        self.model: PlacementModel = build_model(self._nodes, self._transfers, self._sent, collapse, self.expanded)
        self._svg: str | None = None
        #: Why the picture could not be drawn (no Graphviz), else None.
        self.render_error: str | None = None

    # ---- the model ------------------------------------------------------------------------------
    @property
    def nodes(self) -> list[dict[str, Any]]:
        """Drawn nodes: ``name``, ``kind``, ``device``, ``colour``, ``requested``, ``members``, ... (see
        :class:`~dtf_notebook.notebook.placement_layout.PlacementModel`)."""
        return self.model.nodes

    @property
    def edges(self) -> list[dict[str, Any]]:
        """Drawn edges: ``src_name``, ``dst_name``, ``kind`` (``transfer`` between tasks), ``bytes``, ..."""
        return self.model.edges

    @property
    def scopes(self) -> list[str]:
        """Collapsed scopes that :meth:`expand` can open."""
        return self.model.scopes

    def expand(self, *scopes: str) -> PlacementView:
        """This placement with ``scopes`` also drawn open.

        Raises:
            ValueError: a scope is not one of the collapsed scopes (names them).
        """
        unknown = [s for s in scopes if s not in self.scopes]
        if unknown:
            raise ValueError(f"No collapsed scope named {unknown[0]!r}; collapsed scopes: {', '.join(self.scopes)}")
        return self._with(self.collapse, self.expanded + tuple(scopes))

    def collapsed(self, collapse: bool = True) -> PlacementView:
        """This placement with every scope collapsed (or, with False, every node drawn)."""
        return self._with(collapse, ())

    def _with(self, collapse: bool, expand: Iterable[str]) -> PlacementView:
        return PlacementView(
            self._nodes, self._transfers, self._sent, collapse, expand, placed=self.placed, engine=self.engine
        )

    # ---- drawing --------------------------------------------------------------------------------
    @property
    def dot_source(self) -> str:
        """The picture in Graphviz's DOT language, every edge routed by ``engine`` (default ``dot``; :meth:`svg`
        may draw the long edges of a big graph straight instead)."""
        return to_dot(self.model, self.engine).source

    def svg(self) -> str | None:
        """The picture as an SVG document (drawn once by Graphviz), or None when Graphviz is not installed."""
        if self._svg is None and self.render_error is None:
            try:
                import graphviz
            except ImportError:
                self.render_error = "the graphviz Python package is not installed (pip install graphviz)"
                return None
            try:
                drawn = render_svg(self.model, self.engine)
            except graphviz.ExecutableNotFound:
                self.render_error = "Graphviz's layout programs are not installed (apt-get install graphviz)"
                return None
            # Inline SVG must not carry an XML prolog or DOCTYPE.
            self._svg = drawn[drawn.find("<svg") :]
        return self._svg

    def legend_html(self) -> str:
        """A line of device colour swatches."""
        items = "".join(
            f'<span style="display:inline-block;margin-right:10px"><span style="display:inline-block;width:10px;'
            f'height:10px;background:{colour};border:1px solid #777"></span> '
            f"{html.escape(device or DEFAULT_TASK)}</span>"
            for device, colour in self.model.colours.items()
        )
        what = "assigned" if self.placed else "requested"
        edges = (
            '<span style="color:#d62728;font-weight:bold">&#x2192;</span> crosses tasks (a _Send/_Recv pair) &#xb7; '
            '<span style="color:#ff7f0e;font-weight:bold">&#x2192;</span> crosses devices of a task &#xb7; '
            "- - &#x2192; control dependency (only orders)"
        )
        return f'<div style="font:11px sans-serif">{items}<i>({what} devices)</i><br>{edges}</div>'

    def _repr_svg_(self) -> str | None:
        return self.svg()

    def picture_html(self) -> str:
        """The picture as inline SVG, or (without Graphviz) the reason and a table of the nodes."""
        picture = self.svg()
        if picture is None:
            picture = f"<p><i>Cannot draw the graph: {html.escape(self.render_error or '')}.</i></p>"
            picture += f"<pre>{html.escape(self._table())}</pre>"
        return picture

    def _repr_html_(self) -> str:
        return f'<div class="dtf-placement">{self.legend_html()}{self.picture_html()}</div>'

    def _table(self) -> str:
        rows = [[n["name"], n["kind"], n["members"], n["device"], ", ".join(n["requested"])] for n in self.nodes]
        return text_table(["name", "kind", "nodes", "device", "requested"], rows)

    def summary(self) -> str:
        """One line: how many nodes, scopes, tasks and edges between tasks are drawn.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     c = tf.constant(1.0, name="c")
            ...     print(placement_view(c).summary())
            1 node (0 collapsed scopes) on 1 task, 0 edges between tasks; requested devices
        """
        transfers = sum(e["kind"] == "transfer" for e in self.edges)
        n, tasks = len(self.nodes), len(self.model.clusters)
        return (
            f"{n} node{'s' * (n != 1)} ({len(self.scopes)} collapsed scopes) on {tasks} task{'s' * (tasks != 1)}, "
            f"{transfers} edge{'s' * (transfers != 1)} between tasks; {'assigned' if self.placed else 'requested'} "
            "devices"
        )

    def __repr__(self) -> str:
        return f"{self.summary()}\n{self._table()}"


def placement_view(
    fetches_or_graph: Any = None,
    session: Any = None,
    collapse: bool = True,
    expand: Iterable[str] = (),
    run_metadata: Any = None,
    feed_list: Sequence[Any] | None = None,
    engine: str | None = None,
) -> PlacementView:
    """The :class:`PlacementView` that :func:`show_placement` shows (never a widget).

    Raises:
        ValueError: ``session`` runs another graph than the fetches belong to.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     with tf.device("/job:ps/task:0"):
        ...         w = tf.Variable(1.0, name="w")
        ...     with tf.device("/job:worker/task:0"):
        ...         y = tf.identity(w, name="y")
        >>> placement_view(y).summary()
        '2 nodes (1 collapsed scopes) on 2 tasks, 1 edge between tasks; requested devices'
    """
    graph = fetches_or_graph if isinstance(fetches_or_graph, Graph) else None
    fetches = None if graph is not None else fetches_or_graph
    if graph is None:
        graph = _graph_of(fetches) or (session.graph if session is not None else get_default_graph())
    if session is not None and session.graph is not graph:
        raise ValueError("The session runs another graph than the one whose placement was asked for")
    transfers: list[dict[str, Any]] = []
    if session is not None:
        answer = session.placement(fetches, feed_list)
        listing = {row["name"]: row for row in answer["nodes"]}
        ops = [graph.get_operation_by_name(name) for name in listing]
        transfers = answer["transfers"]
    else:
        listing = None
        ops = graph.get_operations()
        if fetches is not None:
            elements = flatten_fetches(graph, fetches)[0]
            fed = {graph.as_graph_element(t, allow_tensor=True, allow_operation=False) for t in feed_list or ()}
            roots = [e if isinstance(e, Operation) else e.op for e in elements if e not in fed]
            ops = needed_ops(roots, fed)
    return PlacementView(
        _nodes(ops, listing),
        transfers,
        sent_bytes(run_metadata),
        collapse,
        expand,
        placed=session is not None,
        engine=engine,
    )


def show_placement(
    fetches_or_graph: Any = None,
    session: Any = None,
    collapse: bool = True,
    expand: Iterable[str] = (),
    run_metadata: Any = None,
    feed_list: Sequence[Any] | None = None,
    widget: bool | None = None,
    engine: str | None = None,
) -> Any:
    """Shows where the nodes needed for ``fetches_or_graph`` run (every node, for a graph or None).

    Args:
        fetches_or_graph: A fetch structure (tensors, ops, variables), a ``Graph``, or None (the default graph).
        session: Show this session's placement (on a cluster: the master's); None shows requested devices.
        collapse: One node per name scope and device (False: every node).
        expand: Scopes to draw open.
        run_metadata: RunMetadata of a traced ``session.run`` of these fetches: edges between tasks then
            show the bytes they moved in that step. On a local cluster, that step's placement is also published
            for the lab extension's placement panel (see :mod:`~dtf_notebook.notebook.placement_publish`).
        feed_list: Tensors that would be fed (what produces them is then not needed).
        widget: True for an ipywidgets widget, False for a :class:`PlacementView`; None picks a widget
            when running in a Jupyter kernel with ipywidgets installed.
        engine: Graphviz layout program; None draws with ``dot`` (layers, task and device boxes) and, on
            big graphs, adds the edges that span many layers as straight lines over its layout, so that
            thousands of nodes draw in seconds with their boxes. ``"dot"`` routes every edge through dot
            (slow on deep graphs); ``"fdp"`` keeps the boxes without layers; ``"sfdp"`` drops the boxes.

    Returns:
        A :class:`~dtf_notebook.notebook.placement_widget.PlacementWidget` or a :class:`PlacementView`;
        both expose ``nodes``, ``edges`` and ``scopes``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     c = tf.add(tf.constant(1.0), 2.0, name="c")
        ...     with tf.Session() as sess:
        ...         view = show_placement(c, session=sess, widget=False)
        >>> [(n["name"], n["device"]) for n in view.nodes][-1]
        ('c', '/job:localhost/replica:0/task:0/device:CPU:0')
    """
    view = placement_view(fetches_or_graph, session, collapse, expand, run_metadata, feed_list, engine)
    if session is not None and run_metadata is not None:
        # A traced step on a local cluster: the lab extension's placement panel shows it too.
        with contextlib.suppress(OSError):
            publish(view, session)
    if widgets_available() if widget is None else widget:
        from dtf_notebook.notebook.placement_widget import PlacementWidget

        return PlacementWidget(view)
    return view
