"""show_placement: the placement model (pure), a local session, a 2-task cluster, and the widget's state."""

from __future__ import annotations

import html
import re
import shutil
import zlib

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.placement_graph import PlacementView, placement_view, show_placement
from dtf_notebook.notebook.placement_layout import (
    PALETTE,
    PlacedNode,
    build_model,
    device_colours,
    to_dot,
)
from dtf_notebook.notebook.placement_render import layers, render_svg, split_edges
from dtf_notebook.runtime.config import RunMetadata, RunOptions

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")

PS = "/job:ps/replica:0/task:0"
WORKER = "/job:worker/replica:0/task:0"


def _model_graph() -> tuple[tf.Graph, tf.Operation, tf.Tensor, tf.Variable]:
    graph = tf.Graph()
    with graph.as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(tf.ones([100]), name="w")
        with tf.device("/job:worker/task:0"):
            with tf.name_scope("model"):
                loss = tf.reduce_sum(tf.square(w * 2.0), name="loss")
            train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return graph, train, loss, w


# ---- pure: the model ----------------------------------------------------------------------------------------
def test_scopes_collapse_into_one_node_per_scope_and_device() -> None:
    cpu0, cpu1 = f"{PS}/device:CPU:0", f"{WORKER}/device:CPU:0"
    nodes = [PlacedNode(f"layer/op{i}", "Add", device=cpu0 if i < 2 else cpu1) for i in range(5)]
    model = build_model(nodes)
    assert sorted((n["name"], n["members"], n["kind"]) for n in model.nodes) == [
        ("layer", 2, "scope"),
        ("layer", 3, "scope"),
    ]
    assert model.scopes == ["layer"]
    assert len(build_model(nodes, collapse=False).nodes) == 5
    assert len(build_model(nodes, expand=["layer"]).nodes) == 5


def test_expanding_opens_one_level_at_a_time() -> None:
    names = ["a/b/c1", "a/b/c2", "a/d", "e"]
    nodes = [PlacedNode(n, "NoOp") for n in names]
    assert [n["name"] for n in build_model(nodes).nodes] == ["a", "e"]
    assert [n["name"] for n in build_model(nodes, expand=["a"]).nodes] == ["a/b", "a/d", "e"]
    assert [n["name"] for n in build_model(nodes, expand=["a", "a/b"]).nodes] == ["a/b/c1", "a/b/c2", "a/d", "e"]


def test_a_variable_collapses_with_its_helper_ops() -> None:
    cpu = f"{PS}/device:CPU:0"
    nodes = [
        PlacedNode("w", "VariableV2", device=cpu, kind="variable"),
        PlacedNode("w/Assign", "Assign", device=cpu, inputs=("w", "w/initial_value")),
        PlacedNode("w/initial_value", "Const", device=cpu),
    ]
    (node,) = build_model(nodes).nodes
    assert (node["name"], node["kind"], node["members"]) == ("w", "variable", 3)
    assert "+2 ops" in node["label"]


def test_colours_are_stable_and_distinct() -> None:
    devices = [f"/job:worker/replica:0/task:{i}/device:CPU:0" for i in range(6)]
    first = device_colours(devices)
    assert first == device_colours(list(reversed(devices)))
    assert len(set(first.values())) == 6 and set(first.values()) <= set(PALETTE)
    # A device keeps its colour when others come and go, unless it collided with one of them.
    alone = device_colours(devices[:1])
    assert alone[devices[0]] == PALETTE[zlib.crc32(devices[0].encode()) % len(PALETTE)]


def test_requested_placement_marks_edges_between_tasks() -> None:
    graph, train, loss, _ = _model_graph()
    view = show_placement(loss, widget=False)
    assert not view.placed
    assert {(n["name"], n["task"]) for n in view.nodes} == {("w", PS), ("model", WORKER)}
    (edge,) = view.edges
    assert (edge["src_name"], edge["dst_name"], edge["kind"], edge["bytes"]) == ("w", "model", "transfer", None)
    requested = {n["name"]: n["requested"] for n in view.nodes}
    assert requested == {"w": ["/job:ps/task:0"], "model": ["/job:worker/task:0"]}


def test_unrequested_nodes_go_to_the_session_default() -> None:
    with tf.Graph().as_default():
        c = tf.add(tf.constant(1.0), 2.0, name="c")
        view = placement_view(c)
    assert {n["task"] for n in view.nodes} == {"(session default)"}
    assert "(session default)" in view.legend_html()


def test_expand_rejects_an_unknown_scope() -> None:
    _, train, _, _ = _model_graph()
    view = placement_view(train)
    with pytest.raises(ValueError, match="No collapsed scope named 'nope'"):
        view.expand("nope")
    assert "gradients" in view.scopes
    opened = view.expand("gradients")
    assert len(opened.nodes) > len(view.nodes) and "gradients" not in opened.scopes


# ---- a local session -------------------------------------------------------------------------------------
def test_local_session_shows_assigned_devices() -> None:
    with tf.Graph().as_default():
        with tf.name_scope("model"):
            w = tf.Variable([1.0, 2.0], name="w")
            y = tf.reduce_sum(w * 3.0, name="y")
        with tf.Session() as sess:
            view = show_placement(y, session=sess, widget=False)
            answer = sess.placement(y)
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert view.placed and {n["device"] for n in view.nodes} == {cpu}
    assert len({n["colour"] for n in view.nodes}) == 1
    assert answer["transfers"] == [] and {r["device"] for r in answer["nodes"]} == {cpu}
    assert [n["name"] for n in view.nodes] == ["model"] and view.scopes == ["model"]


def test_local_session_with_two_devices_has_cross_device_edges() -> None:
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant([1.0, 2.0], name="a")
        with tf.device("/gpu:0"):
            b = tf.multiply(a, 2.0, name="b")
        with tf.Session(config=tf.ConfigProto(virtual_gpus=1)) as sess:
            view = show_placement(b, session=sess, collapse=False, widget=False)
    devices = {n["name"]: n["device"] for n in view.nodes}
    assert devices["a"].endswith("CPU:0") and devices["b"].endswith("GPU:0")
    assert len({n["colour"] for n in view.nodes if n["name"] in ("a", "b")}) == 2
    assert [e["kind"] for e in view.edges if e["src_name"] == "a"] == ["cross_device"]


def test_placement_errors_are_shown_not_raised() -> None:
    with tf.Graph().as_default():
        with tf.device("/gpu:7"):
            c = tf.constant(1.0, name="c")
        with tf.Session() as sess:
            view = show_placement(c, session=sess, widget=False)
    (node,) = view.nodes
    assert "Cannot assign a device for operation c" in node["error"]


@needs_dot
def test_views_render_svg_and_text() -> None:
    _, train, _, _ = _model_graph()
    view = placement_view(train)
    svg = view.svg()
    assert svg.startswith("<svg") and "cluster_t0" in view.dot_source
    assert "<svg" in view._repr_html_() and view._repr_svg_() == svg
    text = repr(view)
    assert text.startswith(view.summary()) and "gradients" in text


def test_without_graphviz_the_html_falls_back_to_a_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import graphviz

    def missing(*args, **kwargs):
        raise graphviz.ExecutableNotFound(["dot"])

    monkeypatch.setattr(graphviz.Digraph, "pipe", missing)
    _, train, _, _ = _model_graph()
    view = placement_view(train)
    assert view.svg() is None and "not installed" in view.render_error
    assert "Cannot draw the graph" in view._repr_html_() and "gradients" in view._repr_html_()


# ---- the widget ------------------------------------------------------------------------------------------
def test_widget_expands_and_collapses_through_its_controls() -> None:
    from dtf_notebook.notebook.placement_widget import PlacementWidget

    _, train, _, _ = _model_graph()
    widget = show_placement(train, widget=True)
    assert isinstance(widget, PlacementWidget)
    collapsed = len(widget.nodes)
    assert "gradients" in widget.scope_picker.options
    widget.scope_picker.value = "gradients"
    assert len(widget.nodes) > collapsed and "gradients" not in widget.scopes
    assert widget.scope_picker.value == widget.scope_picker.options[0]
    widget.collapse_toggle.value = False
    assert not widget.view.collapse and widget.scopes == [] and widget.scope_picker.disabled
    widget.collapse_all.click()
    assert widget.view.collapse and len(widget.nodes) == collapsed
    assert widget.edges == widget.view.edges and widget.picture.value


@needs_dot
def test_widget_fits_the_notebook_width_zooms_and_keeps_a_static_copy() -> None:
    _, train, _, _ = _model_graph()
    widget = show_placement(train, widget=True)
    # Fitted: a wide picture shrinks to the output's width, a small one keeps its size.
    assert re.search(r'<svg style="width:[\d.]+pt;max-width:100%;height:auto"', widget.picture.value)
    assert widget.picture.layout.width == "100%" and widget.layout.width == "100%"
    natural = float(re.search(r"width:([\d.]+)pt", widget.picture.value).group(1))
    widget.zoom.value = "200%"
    zoomed = re.search(r'<svg style="width:([\d.]+)pt;max-width:none', widget.picture.value)
    assert zoomed and float(zoomed.group(1)) == pytest.approx(2 * natural)
    # What a saved notebook keeps: the fitted picture, its legend and summary, as static HTML.
    static = widget.static_html()
    assert "max-width:100%" in static and "<svg" in static and "(requested devices)" in static
    assert widget.view.summary() in static


# ---- big graphs ------------------------------------------------------------------------------------------
def _big_graph(ops: int) -> tf.Graph:
    graph = tf.Graph()
    with graph.as_default(), tf.device(tf.train.replica_device_setter(ps_tasks=4)):
        h = tf.placeholder(tf.float32, [None, 8], name="x")
        layer = 0
        while len(graph.get_operations()) < ops * 0.8:
            with tf.variable_scope(f"layer{layer}"):
                h = tf.nn.relu(tf.matmul(h, tf.get_variable("w", [8, 8])) + tf.get_variable("b", [8]))
            layer += 1
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_mean(tf.square(h)))
    return graph


def _boxes(svg: str) -> list[str]:
    """The titles of an SVG's clusters (Graphviz writes one <g class="cluster"> per box)."""
    return re.findall(r'<g id="clust\d+" class="cluster">\s*<title>([^<]*)</title>', svg)


def test_a_5000_node_graph_builds_and_draws_with_its_boxes() -> None:
    graph = _big_graph(5000)
    count = len(graph.get_operations())
    assert count >= 5000
    full = placement_view(graph, collapse=False)
    assert len(full.nodes) == count
    collapsed = placement_view(graph)
    assert len(collapsed.nodes) < count / 4
    source = to_dot(full.model).source
    assert source.count("->") == len(full.edges)
    routed, straight = split_edges(full.model)
    assert straight and len(routed) + len(straight) == len(full.edges)  # dot alone would take minutes
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    svg = full.svg()
    tasks = list(full.model.clusters)
    assert len(tasks) == 6  # 4 ps tasks, /job:worker (the device setter's) and the session's default
    expected = [f"cluster_t{t}" for t in range(len(tasks))]
    expected += [
        f"cluster_t{t}_d{d}" for t, devices in enumerate(full.model.clusters.values()) for d in range(len(devices))
    ]
    assert sorted(_boxes(svg)) == sorted(expected)  # one box per task and one per device, as in small graphs
    for task in tasks:
        assert f">{html.escape(task)}</text>" in svg
    assert svg.count('class="node"') == len(full.nodes) and svg.count('class="edge"') == len(full.edges)


@needs_dot
def test_long_edges_are_drawn_straight_over_the_layout_with_their_labels() -> None:
    cpu = "/job:ps/replica:0/task:0/device:CPU:0"
    other = "/job:worker/replica:0/task:0/device:CPU:0"
    nodes = [PlacedNode("w", "VariableV2", device=cpu, kind="variable")]
    nodes += [PlacedNode(f"op{i}", "Neg", device=other, inputs=(f"op{i - 1}" if i else "w",)) for i in range(6)]
    nodes.append(PlacedNode("sum", "AddN", device=other, inputs=("w", "op5")))
    model = build_model(nodes, transfers=[{"src": "w", "dst": ["sum"], "tensor_name": "w:0", "dtype": "float32"}])
    assert layers(model)[model.nodes[-1]["id"]] == 7
    routed, straight = split_edges(model, work=len(model.nodes))  # no room for virtual nodes
    assert [(e["src_name"], e["dst_name"]) for e in straight] == [("w", "sum")]
    svg = render_svg(model, work=len(model.nodes))
    assert sorted(_boxes(svg)) == ["cluster_t0", "cluster_t0_d0", "cluster_t1", "cluster_t1_d0"]
    assert svg.count('class="edge"') == len(model.edges) and "<title>n0&#45;&gt;n7</title>" in svg
    assert ">float32[?]</text>" in svg  # the moved edge between tasks keeps its label
    assert svg.count('class="node"') == len(model.nodes)
    assert render_svg(model).count('class="edge"') == len(model.edges)  # within the budget: dot draws them all


# ---- a 2-task cluster ------------------------------------------------------------------------------------
@pytest.mark.cluster
def test_cluster_placement_after_a_traced_run_shows_bytes_between_tasks(runtime_dir) -> None:
    graph, train, loss, w = _model_graph()
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, graph.as_default():
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(w.initializer)
            metadata = RunMetadata()
            sess.run(train, options=RunOptions(trace_level=RunOptions.FULL_TRACE), run_metadata=metadata)
            answer = sess.placement(train)
            widget = show_placement(train, session=sess, run_metadata=metadata, widget=True)
            plain = show_placement(loss, session=sess, widget=False)
    devices = {row["name"]: row["device"] for row in answer["nodes"]}
    assert devices["w"] == f"{PS}/device:CPU:0" and devices["model/loss"] == f"{WORKER}/device:CPU:0"
    # The worker reads w (400 bytes) from the ps, and sends the gradient (400 bytes) back.
    crossing = {(t["src"], t["send_device"].split("/device")[0]) for t in answer["transfers"]}
    assert ("w/read", PS) in crossing
    sent = {row["tensor_name"]: row["bytes"] for row in metadata.cost_graph["node"]}
    assert sent["w/read:0"] == 400
    assert any(dev.startswith(PS) for dev in metadata.step_stats.dev_stats)

    assert widget.view.placed
    colours = {n["task"]: n["colour"] for n in widget.nodes}
    assert colours[PS] != colours[WORKER]
    transfers = [e for e in widget.edges if e["kind"] == "transfer"]
    to_worker = [e for e in transfers if e["src_name"] == "w" and not e["control"]]
    assert to_worker and to_worker[0]["bytes"] == 400 and "w/read:0" in to_worker[0]["tensors"]
    assert any(e["dst_name"] == "GradientDescent" and e["bytes"] == 400 for e in transfers)
    # Without run metadata the edge between tasks is labelled by what it carries.
    (edge,) = [e for e in plain.edges if e["kind"] == "transfer"]
    assert edge["bytes"] is None and edge["types"] == "float32[100]"


@pytest.mark.cluster
def test_placement_of_a_whole_graph_on_a_cluster(runtime_dir) -> None:
    graph, train, loss, w = _model_graph()
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, graph.as_default():
        with tf.Session(cluster.target("ps", 0)) as sess:
            view = placement_view(graph, session=sess)
    assert isinstance(view, PlacementView) and view.placed
    assert sum(n["members"] for n in view.nodes) == len(graph.get_operations())


def test_a_device_keeps_its_colour_before_and_after_a_run():
    # Before a run the picture shows requested devices, after it assigned ones; other devices come and go.
    requested = [
        PlacedNode("w", "VariableV2", requested="/job:ps/task:0", kind="variable"),
        PlacedNode("y", "Identity", requested="/job:worker/task:0", inputs=("w",)),
    ]
    placed = [
        PlacedNode("w", "VariableV2", device="/job:ps/replica:0/task:0/device:CPU:0", kind="variable"),
        PlacedNode("y", "Identity", device="/job:worker/replica:0/task:0/device:CPU:0", inputs=("w",)),
        PlacedNode("z", "Neg", device="/job:worker/replica:0/task:1/device:GPU:0", inputs=("y",)),
        PlacedNode("v", "Neg", device="/job:worker/replica:0/task:2/device:CPU:0", inputs=("y",)),
    ]
    before = {n["name"]: n["colour"] for n in build_model(requested, collapse=False).nodes}
    after = {n["name"]: n["colour"] for n in build_model(placed, collapse=False).nodes}
    again = {n["name"]: n["colour"] for n in build_model(list(reversed(placed)), collapse=False).nodes}
    assert before["w"] == after["w"] == again["w"] and before["y"] == after["y"] == again["y"]
    assert after == again and len(set(after.values())) == 4
