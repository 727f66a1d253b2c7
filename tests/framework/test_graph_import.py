"""import_graph_def: exact rebuilding of graphs from node dicts, after the wire codec, and its errors (one process)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.framework.graph_import import import_graph_def
from dtf_notebook.framework.importer import graph_def_as_dict

STEPS = 5


def build_mlp() -> tf.Graph:
    """A 4-16-3 MLP trained by Adam, with fixed initial values, scopes, a device, strings and colocation."""
    rng = np.random.default_rng(0)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        with tf.variable_scope("hidden"):
            w1 = tf.get_variable("w", initializer=tf.constant(rng.standard_normal((4, 16)).astype(np.float32)))
            b1 = tf.get_variable("b", [16], initializer=tf.zeros_initializer())
        with tf.device("/cpu:0"):
            h = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.variable_scope("out"):
            w2 = tf.Variable(rng.standard_normal((16, 3)).astype(np.float32), name="w")
        logits = tf.matmul(h, w2, name="logits")
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        loss = tf.reduce_mean(xent, name="loss")
        step = tf.train.get_or_create_global_step()
        tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step, name="train")
        tf.global_variables_initializer()
        tf.constant([b"first", b"", b"\xff"], name="tags")
    return g


def feeds(prefix: str = "") -> dict:
    rng = np.random.default_rng(1)
    return {f"{prefix}x:0": rng.standard_normal((8, 4)).astype(np.float32), f"{prefix}y:0": rng.integers(0, 3, 8)}


def train(graph: tf.Graph, prefix: str = "") -> list:
    """Runs the init op and STEPS training steps; returns the losses, final weights, step and the string constant."""
    with tf.Session(graph=graph) as sess:
        sess.run(prefix + "init")
        losses = [sess.run([prefix + "loss:0", prefix + "train"], feeds(prefix))[0] for _ in range(STEPS)]
        names = ["hidden/w:0", "hidden/b:0", "out/w:0", "global_step:0", "tags:0"]
        return [losses, *sess.run([prefix + n for n in names])]


def assert_same_results(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def node_defs_by_name(graph: tf.Graph) -> dict:
    return {op.name: op.node_def for op in graph.get_operations()}


def assert_same_node_defs(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for name in a:
        for key in ("name", "op", "input", "device"):
            assert a[name][key] == b[name][key], (name, key)
        assert list(a[name]["attr"]) == list(b[name]["attr"]), name
        for attr, value in a[name]["attr"].items():
            other = b[name]["attr"][attr]
            assert type(value) is type(other), (name, attr)
            if isinstance(value, np.ndarray):
                assert value.dtype == other.dtype and value.tolist() == other.tolist(), (name, attr)
            else:
                assert value == other, (name, attr)


def through_the_wire(graph_def: dict) -> dict:
    plain, tensors = wire.encode_graph_def(graph_def)
    frames = [bytes(f) for f in wire.encode_message({"graph": plain}, tensors)]
    header, arrays = wire.decode_message(frames)
    return wire.decode_graph_def(header["graph"], arrays)


def test_wire_round_trip_rebuilds_an_identical_graph_that_trains_identically():
    original = build_mlp()
    imported = import_graph_def(through_the_wire(original.as_graph_def_dict()))
    assert [op.name for op in imported.get_operations()] == [op.name for op in original.get_operations()]
    assert_same_node_defs(node_defs_by_name(imported), node_defs_by_name(original))
    assert imported.get_tensor_by_name("x:0").shape.as_list() == [None, 4]
    assert imported.get_operation_by_name("hidden/w/read").get_attr("_class") == ["loc:@hidden/w"]
    assert imported.get_tensor_by_name("hidden/w:0").is_ref
    assert imported.get_operation_by_name("MatMul").device == "/device:CPU:0"
    expected, got = train(original), train(imported)
    assert_same_results(got, expected)
    assert got[0][-1] < got[0][0] and got[4] == STEPS and list(got[5]) == [b"first", b"", b"\xff"]


def test_nodes_in_any_order():
    original = build_mlp()
    nodes = original.as_graph_def_dict()["node"]
    for seed in range(3):
        shuffled = list(nodes)
        random.Random(seed).shuffle(shuffled)
        imported = import_graph_def({"node": shuffled})
        assert dict(sorted(node_defs_by_name(imported).items())) == dict(sorted(node_defs_by_name(original).items()))
    reversed_graph = import_graph_def({"node": nodes[::-1]})
    assert_same_results(train(reversed_graph), train(original))


def test_extending_a_graph_piece_by_piece():
    original = build_mlp()
    nodes = original.as_graph_def_dict()["node"]
    graph = import_graph_def({"node": nodes[:20]})
    assert import_graph_def({"node": nodes[20:]}, graph=graph) is graph  # inputs may name ops already in the graph
    assert_same_node_defs(node_defs_by_name(graph), node_defs_by_name(original))
    assert_same_results(train(graph), train(original))


def test_name_prefix_renames_nodes_inputs_and_colocation_groups():
    original = build_mlp()
    graph = import_graph_def(original.as_graph_def_dict(), name_prefix="replica_1/")
    read = graph.get_operation_by_name("replica_1/hidden/w/read")
    assert [t.name for t in read.inputs] == ["replica_1/hidden/w:0"]
    assert read.get_attr("_class") == ["loc:@replica_1/hidden/w"]
    assert_same_results(train(graph, "replica_1/"), train(original))


def test_imported_names_are_kept_exactly_and_reserved():
    with tf.Graph().as_default() as source:
        tf.constant(1.0, name="x")
        tf.constant(2.0, name="x_1")
        tf.constant(3.0, name="layer/w/read")
    graph = import_graph_def(source.as_graph_def_dict())
    assert [op.name for op in graph.get_operations()] == ["x", "x_1", "layer/w/read"]
    with graph.as_default():
        later = tf.constant(4.0, name="x")
    assert later.op.name not in ("x", "x_1")
    assert graph.get_operation_by_name("x").get_attr("value") == 1.0


def test_the_target_graphs_scopes_do_not_leak_into_imported_ops():
    source = build_mlp()
    with tf.Graph().as_default() as graph:
        gate = tf.no_op(name="gate")
        with (
            tf.name_scope("outer"),
            tf.device("/job:ps/task:3"),
            tf.control_dependencies([gate]),
            tf.container("elsewhere"),
            tf.colocate_with(gate),
        ):
            import_graph_def(source.as_graph_def_dict(), graph=graph)
    imported = {name: nd for name, nd in node_defs_by_name(graph).items() if name != "gate"}
    assert_same_node_defs(imported, node_defs_by_name(source))


def test_runtime_internal_names_may_start_with_an_underscore():
    graph = import_graph_def({"node": [{"name": "_dtf/feed/x", "op": "NoOp"}]})
    assert graph.get_operation_by_name("_dtf/feed/x").type == "NoOp"


def noop(name: str, *inputs: str, **extra) -> dict:
    return {"name": name, "op": "NoOp", "input": list(inputs), "device": "", "attr": {}, **extra}


def const(name: str) -> dict:
    return {"name": name, "op": "Const", "attr": {"value": np.float32(1), "dtype": tf.float32}}


@pytest.mark.parametrize(
    "graph_def, match",
    [
        ([], "must be a dict with a 'node' list"),
        ({"node": [], "library": {}}, "unknown keys \\['library'\\]"),
        ({"node": [{"name": "n", "op": "Foo"}]}, "Op type not registered 'Foo' in node 'n'"),
        ({"node": [noop("n", "^missing")]}, "Node 'n': input 'missing' names a node that is not in the graph"),
        ({"node": [const("a"), noop("n", "a:x")]}, "input 'a:x' is not of the form"),
        ({"node": [const("a"), noop("n", ":0")]}, "input ':0' is not of the form"),
        ({"node": [const("a"), noop("n", "")]}, "input '' is not a node"),
        ({"node": [const("a"), const("b"), noop("n", "^a", "b")]}, "data input 'b' comes after a control input"),
        (
            {"node": [noop("a", "^b"), noop("b", "^c"), noop("c", "^a"), noop("d")]},
            "cycle through nodes \\['a', 'b', 'c'\\]",
        ),
        ({"node": [noop("self", "^self")]}, "cycle"),
        ({"node": [noop("n"), noop("n")]}, "Duplicate node name in graph def: 'n'"),
        ({"node": [{"op": "NoOp"}]}, "non-empty string 'name'"),
        ({"node": ["n"]}, "non-empty string 'name'"),
        ({"node": [{"name": "n"}]}, "missing keys \\['op'\\]"),
        ({"node": [noop("n", extra=1)]}, "unknown keys \\['extra'\\]"),
        ({"node": [{"name": "n", "op": 5}]}, "'op' must be a string"),
        ({"node": [noop("n", device=3)]}, "'device' must be a string"),
        ({"node": [{"name": "n", "op": "NoOp", "input": "a"}]}, "'input' must be a list"),
        ({"node": [{"name": "n", "op": "NoOp", "input": [3]}]}, "input 3 is not a node"),
        ({"node": [{"name": "n", "op": "NoOp", "attr": []}]}, "'attr' must be a dict"),
        ({"node": [{"name": "n", "op": "NoOp", "attr": {1: 2}}]}, "'attr' must be a dict with string keys"),
        ({"node": [noop("bad name!")]}, "Node name 'bad name!' is not a valid op name"),
    ],
)
def test_structural_errors_name_the_node_and_leave_the_graph_unchanged(graph_def, match):
    graph = tf.Graph()
    with pytest.raises(errors.InvalidArgumentError, match=match):
        import_graph_def(graph_def, graph=graph)
    assert graph.get_operations() == []


def test_errors_found_while_building_ops():
    with pytest.raises(errors.InvalidArgumentError, match="asks for output 3 of 'a', which has 1 outputs"):
        import_graph_def({"node": [const("a"), {"name": "n", "op": "Identity", "input": ["a:3"]}]})
    with pytest.raises(errors.InvalidArgumentError, match="Node 'c' \\(op Const\\)"):
        import_graph_def({"node": [{"name": "c", "op": "Const", "attr": {"dtype": tf.float32}}]})
    with pytest.raises(errors.InvalidArgumentError, match="Node 'c' \\(op Const\\)"):
        import_graph_def({"node": [{**const("c"), "device": "/job:ps/nonsense:zz"}]})
    existing = import_graph_def({"node": [noop("n")]})
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate node name in graph: 'n'"):
        import_graph_def({"node": [noop("m"), noop("n")]}, graph=existing)
    assert [op.name for op in existing.get_operations()] == ["n"]
    existing.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        import_graph_def({"node": [noop("m")]}, graph=existing)


def test_fuzzed_graph_defs_only_ever_raise_invalid_argument():
    nodes = build_mlp().as_graph_def_dict()["node"]
    names = [n["name"] for n in nodes]
    junk = [None, 3, "x", "x:9", "^nope", [], {}, (1,), tf.int64, np.zeros(2), np.array([b"s"], dtype=object)]
    rng = random.Random(7)
    outcomes = {"ok": 0, "rejected": 0}
    for _ in range(300):
        mutated = [dict(n, attr=dict(n["attr"]), input=list(n["input"])) for n in nodes]
        for _ in range(rng.randrange(1, 4)):
            index = rng.randrange(len(mutated))
            victim = mutated[index]
            kind = rng.randrange(5)
            if kind == 0 and isinstance(victim["attr"], dict) and victim["attr"]:
                victim["attr"][rng.choice(sorted(victim["attr"]))] = rng.choice(junk)
            elif kind == 1 and isinstance(victim["input"], list) and victim["input"]:
                victim["input"][rng.randrange(len(victim["input"]))] = rng.choice(names + junk[2:5])
            elif kind == 2:
                victim["op"] = rng.choice(["Identity", "Add", "MatMul", "Const", "Assign", "NoOp", "Foo"])
            elif kind == 3:
                del mutated[index]  # by index: dicts holding arrays do not compare
            else:
                victim[rng.choice(["name", "device", "input", "attr"])] = rng.choice(junk + names)
        try:
            import_graph_def({"node": mutated})
            outcomes["ok"] += 1
        except errors.InvalidArgumentError:
            outcomes["rejected"] += 1
    assert outcomes["rejected"] > 150, outcomes


@pytest.mark.tf_oracle
def test_name_reservation_and_order_match_tensorflow():
    tf_real = pytest.importorskip("tensorflow")
    v1 = tf_real.compat.v1

    def build_and_extend(lib, import_fn):
        with lib.Graph().as_default() as source:
            a = lib.constant(1.0, name="x")
            lib.constant(2.0, name="x_1")
            lib.identity(a, name="layer/w/read")
        graph_def = source.as_graph_def()
        with lib.Graph().as_default() as graph:
            import_fn(graph_def, graph)
            imported = [op.name for op in graph.get_operations()]
            lib.constant(4.0, name="x")
            with lib.name_scope("layer"):
                lib.constant(5.0, name="w")
        return imported, [op.name for op in graph.get_operations()]

    def tf_import(graph_def, graph):
        reordered = type(graph_def)()
        reordered.node.extend(list(graph_def.node)[::-1])
        v1.import_graph_def(reordered, name="")

    def our_import(graph_def, graph):
        reordered = type(graph_def)()
        reordered.node.extend(list(graph_def.node)[::-1])
        import_graph_def(graph_def_as_dict(reordered), graph=graph)

    assert build_and_extend(tf, our_import) == build_and_extend(v1, tf_import)
