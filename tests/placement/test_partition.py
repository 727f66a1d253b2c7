"""Partitioner and pruner: pure functions over node dicts, no processes (TF's oracle test starts in-process servers)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import dtf_notebook as tf
from dtf_notebook.distributed.local_process import free_port
from dtf_notebook.framework import op_registry
from dtf_notebook.placement.partition import partition, prune, rendezvous_key, task_of
from dtf_notebook.placement.placer import PlacementNode, place

PS0 = "/job:ps/replica:0/task:0"
W0 = "/job:worker/replica:0/task:0"
W1 = "/job:worker/replica:0/task:1"
CPU = "/device:CPU:0"
CLUSTER = [PS0 + CPU, W0 + CPU, W0 + "/device:GPU:0", W0 + "/device:GPU:1", W1 + CPU]
SEND_RECV = ("_Send", "_Recv")


def node(name, op="Identity", inputs=(), **attr):
    return {"name": name, "op": op, "input": list(inputs), "device": "", "attr": attr}


def floats(*names):
    return {n: ["float32"] for n in names}


def graph_types(g):
    return {op.name: [(t.dtype.name, t.shape.as_tuple()) for t in op.outputs] for op in g.get_operations()}


def by_op(part, op):
    return [n for n in part if n["op"] == op]


def by_name(parts):
    return {n["name"]: n for part in parts.values() for n in part}


def base(ref):
    return ref.lstrip("^").split(":")[0]


def assert_self_contained(parts):
    for task, part in parts.items():
        seen = set()
        for n in part:
            for ref in n["input"]:
                assert base(ref) in seen, f"{n['name']} on {task} uses {ref}, not earlier in its partition"
            seen.add(n["name"])
            assert task_of(n["device"]) == task


def assert_pairs_match(parts):
    sends = {rendezvous_key(n["attr"]): (t, n) for t, p in parts.items() for n in by_op(p, "_Send")}
    recvs = {rendezvous_key(n["attr"]): (t, n) for t, p in parts.items() for n in by_op(p, "_Recv")}
    assert sends.keys() == recvs.keys()
    for key, (send_task, send) in sends.items():
        recv_task, recv = recvs[key]
        assert send_task != recv_task
        assert send["device"] == send["attr"]["send_device"] and recv["device"] == recv["attr"]["recv_device"]
        assert send["attr"]["T"] == recv["attr"]["tensor_type"]
    return sends, recvs


def seed_example():
    """Seed 000: a on the ps CPU, b = a + 2 on worker 0's GPU 1, c = a + b left to the master (worker 1)."""
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0/cpu:0"):
            a = tf.constant(1.0, name="a")
        with tf.device("/job:worker/task:0/gpu:1"):
            b = tf.add(a, 2.0, name="b")
        tf.add(a, b, name="c")
    nodes = g.as_graph_def_dict()["node"]
    placed, errs = place(
        [PlacementNode(n["name"], n["op"], n["device"]) for n in nodes], CLUSTER, default_job="worker", default_task=1
    )
    assert not errs
    return g, nodes, placed


def test_seed_example_gives_three_partitions_with_send_recv_pairs():
    g, nodes, placed = seed_example()
    parts = partition(nodes, placed, graph_types(g))
    assert list(parts) == [PS0, W0, W1]
    assert [n["op"] for n in parts[PS0]] == ["Const", "_Send", "_Send"]
    assert sorted(n["op"] for n in parts[W0]) == ["Add", "Const", "_Recv", "_Send"]
    assert [n["op"] for n in parts[W1]] == ["_Recv", "_Recv", "Add"]
    assert_self_contained(parts)
    sends, _ = assert_pairs_match(parts)
    assert len(sends) == 3

    send_a_w0 = next(n for n in by_op(parts[PS0], "_Send") if n["attr"]["recv_device"].startswith(W0))
    assert send_a_w0["input"] == ["a:0"]
    assert send_a_w0["attr"] == {
        "tensor_name": "a:0",
        "send_device": PS0 + CPU,
        "recv_device": W0 + "/device:GPU:1",  # the consumer's device, not just its task
        "send_device_incarnation": 0,
        "client_terminated": False,
        "T": "float32",
    }
    (recv_a,) = by_op(parts[W0], "_Recv")
    assert recv_a["input"] == [] and recv_a["attr"]["shape"] == () and recv_a["attr"]["tensor_type"] == "float32"
    b = by_name(parts)["b"]
    assert b["input"] == [recv_a["name"] + ":0", "b/y"] and b["device"] == W0 + "/device:GPU:1"
    c = by_name(parts)["c"]
    assert [by_name(parts)[base(r)]["attr"]["tensor_name"] for r in c["input"]] == ["a:0", "b:0"]
    assert c["device"] == W1 + CPU


def test_added_names_are_valid_node_names_and_unique():
    g, nodes, placed = seed_example()
    parts = partition(nodes, placed, graph_types(g))
    names = [n["name"] for part in parts.values() for n in part]
    assert len(names) == len(set(names))
    with tf.Graph().as_default() as check:
        for name in names:
            # create_op rejects invalid names: the added nodes must re-import under their own names.
            assert check.create_op("NoOp", [], name=name).name == name


def test_rendezvous_key_has_tf_layout():
    attrs = {"send_device": "/s", "recv_device": "/r", "tensor_name": "x:1", "send_device_incarnation": -1}
    assert rendezvous_key(attrs) == "/s;ffffffffffffffff;/r;x:1;0:0"


def test_consumers_on_one_task_share_one_recv():
    nodes = [
        node("a", "Const"),
        node("x", "Mul", ["a", "a:0"]),  # the same tensor twice in one consumer
        node("y", "Neg", ["a"]),
        node("z", "Neg", ["a:0"]),
        node("w", "Neg", ["a"]),
    ]
    placement = {"a": PS0 + CPU, "x": W0 + "/device:GPU:0", "y": W0 + CPU, "z": W0 + CPU, "w": W1 + CPU}
    parts = partition(nodes, placement, floats(*placement))
    assert len(by_op(parts[PS0], "_Send")) == 2
    (recv,) = by_op(parts[W0], "_Recv")
    assert recv["device"] == W0 + "/device:GPU:0"  # where its first consumer runs
    names = by_name(parts)
    assert names["x"]["input"] == [recv["name"] + ":0"] * 2
    assert names["y"]["input"] == names["z"]["input"] == [recv["name"] + ":0"]
    assert len(by_op(parts[W1], "_Recv")) == 1
    assert_pairs_match(parts)


def test_each_output_of_a_node_gets_its_own_pair():
    nodes = [node("s", "Split"), node("u", "AddN", ["s:1", "s", "s:1"])]
    types = {"s": [("float32", (None, 2)), ("int64", None)], "u": ["float32"]}
    parts = partition(nodes, {"s": PS0 + CPU, "u": W0 + CPU}, types)
    sends = {n["attr"]["tensor_name"]: n for n in by_op(parts[PS0], "_Send")}
    assert sorted(sends) == ["s:0", "s:1"] and sends["s:1"]["attr"]["T"] == "int64"
    recvs = {n["attr"]["tensor_name"]: n for n in by_op(parts[W0], "_Recv")}
    assert recvs["s:0"]["attr"]["shape"] == (None, 2) and recvs["s:1"]["attr"]["shape"] is None
    u = by_name(parts)["u"]
    assert u["input"] == [recvs["s:1"]["name"] + ":0", recvs["s:0"]["name"] + ":0", recvs["s:1"]["name"] + ":0"]


def test_control_edges_send_a_dummy_constant():
    nodes = [
        node("a", "NoOp"),
        node("b", "Const"),
        node("c", "Identity", ["b", "^a"]),
        node("d", "NoOp", ["^a", "^b"]),
        node("e", "NoOp", ["^a"]),
    ]
    placement = {"a": PS0 + CPU, "b": W1 + CPU, "c": W1 + CPU, "d": W1 + CPU, "e": PS0 + CPU}
    parts = partition(nodes, placement, floats("b", "c") | {"a": [], "d": [], "e": []})
    (dummy,) = by_op(parts[PS0], "Const")
    assert dummy["input"] == ["^a"] and dummy["device"] == PS0 + CPU
    assert dummy["attr"]["dtype"] == tf.int32 and dummy["attr"]["value"] == np.array(0, np.int32)
    (send,) = by_op(parts[PS0], "_Send")
    assert send["input"] == [dummy["name"] + ":0"] and send["attr"]["T"] == "int32"
    (recv,) = by_op(parts[W1], "_Recv")
    assert recv["attr"]["shape"] == () and recv["attr"]["tensor_name"] == dummy["name"] + ":0"
    names = by_name(parts)
    assert names["c"]["input"] == ["b", "^" + recv["name"]]
    assert names["d"]["input"] == ["^" + recv["name"], "^b"]  # same-task control edges stay as they were
    assert names["e"]["input"] == ["^a"]
    assert_self_contained(parts)
    assert_pairs_match(parts)


def test_chain_across_three_tasks():
    nodes = [node("a", "Const"), node("b", "Neg", ["a"]), node("c", "Neg", ["b"]), node("d", "Neg", ["c", "a"])]
    placement = {"a": PS0 + CPU, "b": W0 + CPU, "c": W1 + CPU, "d": PS0 + CPU}
    parts = partition(nodes, placement, floats(*placement))
    assert [n["op"] for n in parts[PS0]] == ["Const", "_Send", "_Recv", "Neg"]
    assert [n["op"] for n in parts[W0]] == ["_Recv", "Neg", "_Send"]
    assert [n["op"] for n in parts[W1]] == ["_Recv", "Neg", "_Send"]
    assert by_name(parts)["d"]["input"] == [parts[PS0][2]["name"] + ":0", "a"]  # a is local to d
    assert_self_contained(parts)
    assert len(assert_pairs_match(parts)[0]) == 3


def test_step_key_prefix_reaches_tensor_names():
    nodes = [node("a", "Const"), node("b", "Neg", ["a"])]
    parts = partition(nodes, {"a": PS0 + CPU, "b": W0 + CPU}, floats("a", "b"), step_key_prefix="g7/")
    assert parts[W0][0]["attr"]["tensor_name"] == "g7/a:0"
    assert ";g7/a:0;" in rendezvous_key(parts[PS0][1]["attr"])


def test_inputs_are_not_mutated_and_requested_device_is_ignored():
    nodes = [node("a", "Const"), node("b", "Neg", ["a"])]
    nodes[1]["device"] = "/job:ps/task:0"
    partition(nodes, {"a": PS0 + CPU, "b": W0 + CPU}, floats("a", "b"))
    assert nodes[1] == {"name": "b", "op": "Neg", "input": ["a"], "device": "/job:ps/task:0", "attr": {}}


def test_unsorted_nodes_come_out_in_topological_order():
    nodes = [node("c", "Neg", ["b"]), node("b", "Neg", ["a"]), node("a", "Const")]
    parts = partition(nodes, dict.fromkeys("abc", W0 + CPU), floats("a", "b", "c"))
    assert [n["name"] for n in parts[W0]] == ["a", "b", "c"]


def test_reference_edge_across_tasks_raises_naming_it():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(1.0, name="v")
        tf.assign(v, 2.0, name="set_v")
        tf.identity(v, name="read_v")
    nodes = [n for n in g.as_graph_def_dict()["node"] if n["name"] != "v/Assign"]
    placement = {n["name"]: W0 + CPU for n in nodes} | {"v": PS0 + CPU, "v/initial_value": PS0 + CPU}
    with pytest.raises(ValueError, match=r"'set_v'.*'v'.*by reference"):
        partition(nodes, placement, graph_types(g))
    placement["set_v"] = placement["set_v/value"] = PS0 + CPU
    parts = partition(nodes, placement, graph_types(g))  # reading by value may cross tasks
    assert by_op(parts[W0], "_Recv")[0]["attr"]["tensor_name"] == "v:0"


@pytest.mark.parametrize(
    ("nodes", "placement", "types", "message"),
    [
        ([node("a", "Const")], {}, {}, r"No device placement for node\(s\): 'a'"),
        ([node("a"), node("a")], {"a": W0 + CPU}, {}, r"Duplicate node name in graph: 'a'"),
        ([node("b", "Neg", ["x:1"])], {"b": W0 + CPU}, {}, r"'b' has input 'x:1'"),
        ([node("a", "Neg", ["b"]), node("b", "Neg", ["a"])], {"a": W0 + CPU, "b": W0 + CPU}, {}, r"cycle"),
        ([node("a", "Const")], {"a": "/cpu:0"}, {}, r"'/cpu:0' names no job and task"),
        (
            [node("a", "Const"), node("b", "Neg", ["a"])],
            {"a": PS0 + CPU, "b": W0 + CPU},
            {},
            r"No output type for tensor 'a:0'",
        ),
        (
            [node("a", "Const"), node("b", "Neg", ["a"])],
            {"a": PS0 + CPU, "b": W0 + CPU},
            {"a": ["complex256"]},
            r"'complex256' of tensor 'a:0'",
        ),
    ],
)
def test_bad_input_is_named(nodes, placement, types, message):
    with pytest.raises(ValueError, match=message):
        partition(nodes, placement, types)


def test_output_types_may_be_a_callable():
    nodes = [node("a", "Const"), node("b", "Neg", ["a"])]
    parts = partition(nodes, {"a": PS0 + CPU, "b": W0 + CPU}, lambda name: [tf.float64])
    assert parts[W0][0]["attr"]["tensor_type"] == "float64"


# ---- prune ----------------------------------------------------------------------------------------
PRUNE_NODES = [
    node("x", "Placeholder"),
    node("a", "Neg", ["x"]),
    node("b", "Neg", ["a"]),
    node("s", "Split", ["b"]),
    node("c", "Add", ["s", "s:1"]),
    node("t", "NoOp", ["^b"]),
    node("u", "NoOp", ["^s"]),
    node("unused", "Neg", ["x"]),
]


def names(nodes):
    return [n["name"] for n in nodes]


def test_prune_keeps_what_fetches_and_targets_need_in_order():
    assert names(prune(PRUNE_NODES, ["c:0"], [])) == ["x", "a", "b", "s", "c"]
    assert names(prune(PRUNE_NODES, ["a"], ["t"])) == ["x", "a", "b", "t"]


def test_fed_tensors_cut_the_graph():
    assert names(prune(PRUNE_NODES, ["c:0"], [], feed_names=["b:0"])) == ["s", "c"]
    assert names(prune(PRUNE_NODES, ["c:0"], [], feed_names=["s:0", "s:1"])) == ["c"]
    assert names(prune(PRUNE_NODES, ["b:0"], [], feed_names=["b:0"])) == []  # a fed fetch needs nothing
    # A node reached by a control edge is skipped only when every one of its outputs is fed.
    assert names(prune(PRUNE_NODES, [], ["t"], feed_names=["b"])) == ["t"]
    assert names(prune(PRUNE_NODES, [], ["u"], feed_names=["s:0", "s:1"])) == ["u"]
    assert names(prune(PRUNE_NODES, [], ["u"], feed_names=["s:0"])) == ["x", "a", "b", "s", "u"]
    three = {"s": ["float32"] * 3}  # output 2 is used nowhere, yet it is not fed: s still runs
    assert names(prune(PRUNE_NODES, [], ["u"], ["s:0", "s:1"], output_types=three)) == ["x", "a", "b", "s", "u"]


def test_prune_agrees_with_the_executor():
    from dtf_notebook.runtime.executor import needed_ops

    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        parts = tf.split(x, [1, 3], axis=1)
        v = tf.Variable(np.ones((3, 1), np.float32), name="v")
        y = tf.matmul(parts[1], v) + parts[0]
        with tf.control_dependencies([parts[0].op]):
            tf.identity(y * 2.0, name="z")
        tf.global_variables_initializer()
    ops = {op.name: op for op in g.get_operations()}
    nodes, types = g.as_graph_def_dict()["node"], graph_types(g)
    tensors = [t for op in ops.values() for t in op.outputs]
    rng = random.Random(0)
    for _ in range(100):
        feeds = set(rng.sample(tensors, rng.randint(0, 4)))
        fetches = [t for t in rng.sample(tensors, rng.randint(1, 3)) if t not in feeds]
        targets = rng.sample([ops["init"], ops["z"], ops["v/Assign"]], rng.randint(0, 2))
        expected = [op.name for op in needed_ops([t.op for t in fetches] + targets, feeds)]
        got = prune(nodes, [t.name for t in fetches], [op.name for op in targets], [t.name for t in feeds], types)
        assert names(got) == expected


def test_prune_names_unknown_names():
    with pytest.raises(ValueError, match="'nope:0' refers to no node"):
        prune(PRUNE_NODES, ["nope:0"], [])
    with pytest.raises(ValueError, match="'gone' refers to no node"):
        prune(PRUNE_NODES, [], ["gone"])


def test_prune_then_partition():
    nodes = prune(PRUNE_NODES, ["c:0"], ["t"])
    placement = {n["name"]: (PS0 if n["name"] in "xab" else W1) + CPU for n in nodes}
    parts = partition(nodes, placement, {"s": ["float32", "float32"]} | floats("x", "a", "b", "c"))
    assert names(parts[PS0]) == [
        "x",
        "a",
        "b",
        "b/_send_0_to_worker_0_1",
        "b/_ctrl_to_worker_0_1",
        "b/_send_ctrl_to_worker_0_1",
    ]
    assert names(parts[W1]) == ["b/_recv_0_on_worker_0_1", "s", "c", "b/_recv_ctrl_on_worker_0_1", "t"]


# ---- a real graph re-imports ----------------------------------------------------------------------
def test_partitions_of_a_real_graph_are_importable():
    g = tf.Graph()
    with g.as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(np.ones((3, 2), np.float32), name="w")
            bias = tf.Variable(np.zeros(2, np.float32), name="bias")
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.matmul(x, w) + bias
        loss = tf.reduce_sum(y * y, name="loss")
        with tf.control_dependencies([loss]):
            step = tf.assign(bias, bias - 0.1, name="step")
        tf.global_variables_initializer()
    nodes = g.as_graph_def_dict()["node"]
    on_ps = {n["name"] for n in nodes if n["name"].startswith(("w", "bias", "step", "sub"))}
    placement = {n["name"]: (PS0 + CPU if n["name"] in on_ps else W1 + CPU) for n in nodes}
    kept = prune(nodes, [], [step.op.name, "init"])
    parts = partition(kept, placement, graph_types(g))
    assert set(parts) == {PS0, W1}
    assert_self_contained(parts)
    assert_pairs_match(parts)
    for part in parts.values():
        for n in part:
            assert n["op"] in SEND_RECV or n["op"] in op_registry.registered_types(), n["op"]
    w1_recvs = {n["attr"]["tensor_name"] for n in by_op(parts[W1], "_Recv")}
    assert w1_recvs == {
        "w/read:0",
        "bias/read:0",
        "w/Assign/_ctrl_to_worker_0_1:0",
        "bias/Assign/_ctrl_to_worker_0_1:0",
    }
    # The control dependency on the loss reaches the ps through the constant of "bias - 0.1": as in TF1, an op
    # fed by another op of the control_dependencies block gets no control inputs of its own.
    assert by_name(parts)["sub/y"]["input"][-1] == "^" + by_op(parts[PS0], "_Recv")[0]["name"]


# ---- random graphs --------------------------------------------------------------------------------
TASKS = {PS0: [CPU], "/job:ps/replica:0/task:1": [CPU], W0: [CPU, "/device:GPU:0", "/device:GPU:1"], W1: [CPU]}


def random_graph(rng):
    nodes, outputs, placement, types = [], [], {}, {}
    for i in range(rng.randint(1, 40)):
        name = f"scope_{i % 3}/n{i}" if i % 2 else f"n{i}"
        inputs = [rng.choice(outputs) for _ in range(rng.randint(0, 3))] if outputs else []
        controls = sorted({"^" + base(rng.choice(outputs)) for _ in range(rng.randint(0, 2))}) if outputs else []
        n_out = rng.randint(1, 2)
        nodes.append(node(name, "Op", inputs + controls))
        outputs += [name if k == 0 and rng.random() < 0.5 else f"{name}:{k}" for k in range(n_out)]
        task = rng.choice(list(TASKS))
        placement[name] = task + rng.choice(TASKS[task])
        types[name] = [("float32", (k + 1,)) for k in range(n_out)]
    rng.shuffle(nodes)
    return nodes, placement, types


def canonical(ref):
    return ref if ref.startswith("^") or ":" in ref else ref + ":0"


def simulate(parts, values_of):
    """Runs each partition strictly in list order, blocking at a ``_Recv`` until its send ran, round-robin.

    Values pass between partitions only through rendezvous keys. A stall means the lists can deadlock
    a task executor that runs its partition in order. Returns the values and the global run order.
    """
    rendezvous, values, order, done = {}, {}, [], set()
    pending = {task: list(part) for task, part in parts.items()}
    while any(pending.values()):
        progressed = False
        for part in pending.values():
            while part:
                n = part[0]
                if n["op"] == "_Recv":
                    key = rendezvous_key(n["attr"])
                    if key not in rendezvous:
                        break
                    values[n["name"] + ":0"] = rendezvous.pop(key)
                else:
                    values.update(values_of(n, [values[canonical(r)] for r in n["input"] if r[0] != "^"]))
                    if n["op"] == "_Send":
                        rendezvous[rendezvous_key(n["attr"])] = values[canonical(n["input"][0])]
                assert all(base(r) in done for r in n["input"])
                done.add(n["name"])
                order.append(n["name"])
                part.pop(0)
                progressed = True
        assert progressed, "partitions deadlocked"
    assert not rendezvous, "a send had no recv"
    return values, order


def op_values(n, ins):
    # Each output is a function of the node's name and its input values, so any mixed-up edge shows.
    if n["op"] == "Op":
        return {f"{n['name']}:{k}": hash((n["name"], k, *ins)) for k in range(2)}
    return {n["name"] + ":0": ins[0] if ins else 0}


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs_keep_their_edges(seed):
    rng = random.Random(seed)
    nodes, placement, types = random_graph(rng)
    parts = partition(nodes, placement, types, step_key_prefix="k/")
    assert_self_contained(parts)
    sends, recvs = assert_pairs_match(parts)
    everything = by_name(parts)

    crossing = set()
    for n in nodes:
        for ref in n["input"]:
            dst_task, src_task = task_of(placement[n["name"]]), task_of(placement[base(ref)])
            if dst_task != src_task:
                crossing.add((canonical(ref) if ref[0] != "^" else ref, dst_task))
    assert len(sends) == len(recvs) == len(crossing)  # one pair per (tensor or ^source, destination task)
    added_ops = [n["op"] for part in parts.values() for n in part if n["name"] not in placement]
    assert added_ops.count("_Send") == added_ops.count("_Recv") == len(crossing)

    def original(ref):
        n = everything[base(ref)]
        if n["op"] != "_Recv":
            return canonical(ref)
        if ref[0] != "^":
            return n["attr"]["tensor_name"].removeprefix("k/")
        dummy = everything[base(sends[rendezvous_key(n["attr"])][1]["input"][0])]
        return dummy["input"][0]

    for n in nodes:
        copy = everything[n["name"]]
        assert copy["device"] == placement[n["name"]]
        assert [original(r) for r in copy["input"]] == [r if r[0] == "^" else canonical(r) for r in n["input"]]
    added = [x for x in everything.values() if x["name"] not in placement]
    assert all(x["op"] in SEND_RECV or x["attr"]["dtype"] == tf.int32 for x in added)

    values, order = simulate(parts, op_values)
    direct, _ = simulate({"all": prune(nodes, [], list(placement), [])}, op_values)
    assert {k: v for k, v in values.items() if base(k) in placement} == direct
    position = {name: i for i, name in enumerate(order)}
    for n in nodes:
        assert all(position[base(r)] < position[n["name"]] for r in n["input"])


# ---- TF's partitioner as the oracle ---------------------------------------------------------------
def _cross_edges(parts_nodes, sends):
    """(sent tensor or ^control source, send task, recv task) for each send of a partitioned graph."""
    by = {n["name"]: n for n in parts_nodes}
    edges = set()
    for s in sends:
        src = by[base(s["input"][0])]
        sent = "^" + base(src["input"][0]) if src["op"] == "Const" and src["input"] else canonical(s["input"][0])
        edges.add((sent, task_of(s["attr"]["send_device"]), task_of(s["attr"]["recv_device"])))
    return edges


@pytest.mark.tf_oracle
def test_cross_task_edges_match_tensorflow():
    real_tf = pytest.importorskip("tensorflow")
    tf1 = real_tf.compat.v1
    cluster = real_tf.train.ClusterSpec(
        {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    )
    servers = [
        tf1.train.Server(cluster, job_name=j, task_index=i) for j, i in (("ps", 0), ("worker", 0), ("worker", 1))
    ]

    def build(lib):
        with lib.device("/job:ps/task:0/cpu:0"):
            # An Identity, not a Const: TF would copy a small Const into each task instead of sending it.
            a = lib.identity(lib.constant(1.0, name="a0"), name="a")
        with lib.device("/job:worker/task:0/cpu:0"):
            b = lib.add(a, 2.0, name="b")
            e = lib.multiply(b, a, name="e")
        with lib.device("/job:worker/task:1/cpu:0"):
            c = lib.add(a, b, name="c")
            with lib.control_dependencies([e.op]):
                return lib.identity(c, name="d")

    g = tf1.Graph()
    with g.as_default():
        d = build(tf1)
        config = tf1.ConfigProto()
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
        config.graph_options.optimizer_options.do_constant_folding = False
        with tf1.Session(servers[2].target, config=config) as sess:
            meta = tf1.RunMetadata()
            sess.run(d, options=tf1.RunOptions(output_partition_graphs=True), run_metadata=meta)
    tf_nodes, tf_sends = [], []
    for pg in meta.partition_graphs:
        for n in pg.node:
            tf_nodes.append({"name": n.name, "op": n.op, "input": list(n.input)})
            if n.op == "_Send" and not n.attr["client_terminated"].b:
                attr = {k: n.attr[k].s.decode() for k in ("send_device", "recv_device")}
                tf_sends.append({"name": n.name, "input": list(n.input), "attr": attr})

    ours = tf.Graph()
    with ours.as_default():
        build(tf)
    nodes = ours.as_graph_def_dict()["node"]
    placement = {n["name"]: n["device"].replace("/task:", "/replica:0/task:") for n in nodes}
    parts = partition(nodes, placement, graph_types(ours))
    our_sends = [n for p in parts.values() for n in by_op(p, "_Send")]
    assert _cross_edges([n for p in parts.values() for n in p], our_sends) == _cross_edges(tf_nodes, tf_sends)
