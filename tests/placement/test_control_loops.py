"""Partitioning graphs with control flow: frames, control loops for loops that span tasks, dead-carrying control
edges, and rendezvous keys per frame iteration. Pure functions over node dicts: no processes."""

from __future__ import annotations

import pytest

import dtf_notebook as tf
from dtf_notebook.framework.graph_import import import_graph_def
from dtf_notebook.placement.control_loops import find_frames
from dtf_notebook.placement.partition import frame_iter, partition, prune, rendezvous_key, task_of
from dtf_notebook.runtime.executor import needed_ops

PS = "/job:ps/replica:0/task:0"
W0 = "/job:worker/replica:0/task:0"
W1 = "/job:worker/replica:0/task:1"
CPU = "/device:CPU:0"


def _split(g, placement=None):
    """Partitions of ``g`` placed by each op's requested device (``/job:x/task:n`` -> that task's CPU)."""
    nodes = g.as_graph_def_dict()["node"]
    placement = placement or {n["name"]: n["device"].replace("/task:", "/replica:0/task:") + CPU for n in nodes}
    types = {op.name: [(t.dtype.name, t.shape.as_tuple()) for t in op.outputs] for op in g.get_operations()}
    return partition(nodes, placement, types)


def _loop_reading_ps():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:0"):

            def body(i, x):
                with tf.device("/job:ps/task:0"):
                    read = tf.identity(v, name="read")
                return i + 1, x + read

            tf.while_loop(lambda i, x: i < 5, body, [tf.constant(0), tf.constant(0.0)], name="loop")
    return g


def _by_name(parts):
    return {n["name"]: n for part in parts.values() for n in part}


def test_frames_follow_enters_and_exits():
    g = _loop_reading_ps()
    frames = find_frames(g.as_graph_def_dict()["node"])
    assert frames.frame_of["loop/Merge"] == frames.frame_of["loop/read"] == "loop/while_context"
    assert frames.frame_of["loop/Enter"] == "" and frames.output_frame("loop/Enter") == "loop/while_context"
    assert frames.frame_of["loop/Exit"] == "loop/while_context" and frames.output_frame("loop/Exit") == ""
    assert frames.loop_cond == {"loop/while_context": "loop/LoopCond"}


def test_a_loop_spanning_tasks_gets_a_control_loop_on_each():
    parts = _split(_loop_reading_ps())
    nodes = _by_name(parts)
    for task, short in ((PS, "ps_0_0"), (W0, "worker_0_0")):
        stem = f"_cloop/loop/while_context/{short}"
        ops = {n["name"]: n for n in parts[task] if n["name"].startswith(stem)}
        assert {name.rsplit("/", 1)[1]: n["op"] for name, n in ops.items()} == {
            "start": "Const",
            "enter": "Enter",
            "merge": "Merge",
            "switch": "Switch",
            "next": "NextIteration",
        }
        assert ops[f"{stem}/enter"]["attr"]["frame_name"] == "loop/while_context"
        assert ops[f"{stem}/merge"]["input"] == [f"{stem}/enter", f"{stem}/next"]
        # Every transfer inside the loop waits on its task's control loop, once per iteration.
        for n in parts[task]:
            if n["op"] in ("_Send", "_Recv"):  # all inside the loop here
                assert f"^{stem}/merge" in n["input"], n
    # The ps's control loop is driven by the worker's LoopCond, received every iteration.
    (cond_recv,) = [n for n in parts[PS] if n["op"] == "_Recv" and n["attr"]["tensor_name"] == "loop/LoopCond:0"]
    assert nodes["_cloop/loop/while_context/ps_0_0/switch"]["input"] == [
        "_cloop/loop/while_context/ps_0_0/merge",
        cond_recv["name"] + ":0",
    ]
    sends = {rendezvous_key(n["attr"]) for n in nodes.values() if n["op"] == "_Send"}
    recvs = {rendezvous_key(n["attr"]) for n in nodes.values() if n["op"] == "_Recv"}
    assert sends == recvs


def test_partitions_with_loops_reimport():
    for part in _split(_loop_reading_ps()).values():
        imported = import_graph_def({"node": part})
        merges = [op for op in imported.get_operations() if op.type == "Merge"]
        assert merges and all(op.inputs[1].op.type == "NextIteration" for op in merges)


def test_a_loop_on_one_task_gets_no_control_loop():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(1.0, name="v")
        with tf.device("/job:worker/task:0"):
            tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x + v), [tf.constant(0), tf.constant(0.0)])
    parts = _split(g)
    assert not [n for part in parts.values() for n in part if n["name"].startswith("_cloop")]
    (recv,) = [n for n in parts[W0] if n["op"] == "_Recv"]
    assert recv["attr"]["tensor_name"] == "v/read:0" and recv["input"] == []  # read once, outside the loop


def test_nested_loops_stack_their_control_loops():
    g = tf.Graph()
    with g.as_default(), tf.device("/job:worker/task:0"):

        def outer(i, total):
            def inner(j, acc):
                with tf.device("/job:worker/task:1"):
                    term = tf.cast(i + j, tf.float32)
                return j + 1, acc + term

            return i + 1, total + tf.while_loop(lambda j, a: j < i, inner, [tf.constant(0), tf.constant(0.0)])[1]

        tf.while_loop(lambda i, t: i < 3, outer, [tf.constant(0), tf.constant(0.0)], name="outer")
    nodes = _by_name(_split(g))
    enters = {
        n["attr"]["frame_name"]: n for name, n in nodes.items() if name.startswith("_cloop/") and n["op"] == "Enter"
    }
    inner_frame = next(f for f in enters if f != "outer/while_context")
    inner_enter = [n for n in nodes.values() if n["op"] == "Enter" and n["name"].startswith("_cloop/" + inner_frame)]
    # On worker 1, the inner control loop is entered from the outer one's Merge, once per outer iteration.
    on_w1 = next(n for n in inner_enter if task_of(n["device"]) == W1)
    assert on_w1["input"] == ["_cloop/outer/while_context/worker_0_1/merge"]


def test_a_control_edge_carries_deadness_through_an_identity():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:worker/task:0"):
            pred = tf.placeholder(tf.bool, [], name="pred")
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")

        def taken():
            with tf.device("/job:ps/task:0"):
                return tf.assign_add(v, 1.0)  # its constant runs after the pivot, on the worker: a control edge

        with tf.device("/job:worker/task:0"):
            tf.cond(pred, taken, lambda: tf.constant(0.0))
    parts = _split(g)
    nodes = _by_name(parts)
    (recv,) = [n for n in parts[PS] if n["op"] == "_Recv" and "_ctrl_to_" in n["attr"]["tensor_name"]]
    (identity,) = [n for n in parts[PS] if n["input"] == [recv["name"] + ":0"]]
    assert identity["op"] == "Identity"
    # The branch's constant, on the ps, runs only when the pivot on the worker is live.
    (constant,) = [n for n in nodes.values() if f"^{identity['name']}" in n["input"]]
    assert constant["op"] == "Const" and task_of(constant["device"]) == PS


def test_a_next_iteration_goes_to_its_merge():
    g = _loop_reading_ps()
    nodes = g.as_graph_def_dict()["node"]
    placement = {n["name"]: n["device"].replace("/task:", "/replica:0/task:") + CPU for n in nodes}
    placement["loop/NextIteration_1"] = W1 + CPU
    parts = _split(g, placement)
    assert "loop/NextIteration_1" in {n["name"] for n in parts[W0]}


def test_a_loop_across_tasks_needs_its_loop_cond():
    g = _loop_reading_ps()
    nodes = [dict(n, op="Identity") if n["op"] == "LoopCond" else n for n in g.as_graph_def_dict()["node"]]
    placement = {n["name"]: n["device"].replace("/task:", "/replica:0/task:") + CPU for n in nodes}
    types = {op.name: [(t.dtype.name, t.shape.as_tuple()) for t in op.outputs] for op in g.get_operations()}
    with pytest.raises(ValueError, match="no LoopCond"):
        partition(nodes, placement, types)


def test_prune_follows_loops_like_the_executor():
    g = _loop_reading_ps()
    exit_op = g.get_operation_by_name("loop/Exit_1")
    kept = prune(g.as_graph_def_dict()["node"], ["loop/Exit_1:0"], [])
    assert [n["name"] for n in kept] == [op.name for op in needed_ops([exit_op], set())]


def test_rendezvous_keys_name_the_frame_iteration():
    attrs = {"send_device": "/s", "recv_device": "/r", "tensor_name": "x:0", "send_device_incarnation": 1}
    assert rendezvous_key(attrs).endswith(";x:0;0:0")
    first, second = frame_iter(";0;loop", 0), frame_iter(";0;loop", 1)
    assert first.endswith(":0") and second.endswith(":1") and first.split(":")[0] == second.split(":")[0]
    assert frame_iter(";1;loop", 0) != first  # the same loop entered in another iteration of an outer one
    assert rendezvous_key(attrs, second) == "/s;0000000000000001;/r;x:0;" + second
