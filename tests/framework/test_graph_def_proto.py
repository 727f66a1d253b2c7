"""``Graph.as_graph_def()`` is TF's ``GraphDef``: real TF parses its bytes and text, imports it and trains the same
model to the same numbers; its nodes carry the attrs TF's own ``as_graph_def()`` writes for the same program; and
the bytes come back here, this package's own attrs included."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest
from google.protobuf import text_format

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework.tf_op_defs import tf_op_def

pytestmark = pytest.mark.tf_oracle

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def tf1():
    module = pytest.importorskip("tensorflow").compat.v1
    module.disable_eager_execution()
    return module


def _mlp(m, optimizer):
    """A two-layer classifier with a global step, written once for both libraries (reference variables)."""
    x = m.placeholder(m.float32, [None, 4], name="x")
    labels = m.placeholder(m.int64, [None], name="labels")
    w1 = m.get_variable("w1", initializer=np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), use_resource=False)
    b1 = m.get_variable("b1", [3], initializer=m.zeros_initializer(), use_resource=False)
    w2 = m.Variable(np.linspace(1, -1, 6, dtype=np.float32).reshape(3, 2), name="w2", use_resource=False)
    hidden = m.nn.relu(m.matmul(x, w1) + b1, name="hidden")
    logits = m.add(m.matmul(hidden, w2), 0.5, name="logits")
    loss = m.reduce_mean(m.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits), name="loss")
    # TF makes get_or_create_global_step's a resource variable, which this package does not have.
    step = m.Variable(0, name="global_step", trainable=False, dtype=m.int64, use_resource=False)
    m.add_to_collection(m.GraphKeys.GLOBAL_STEP, step)
    train = optimizer(m).minimize(loss, global_step=step, name="train")
    m.summary.scalar("loss", loss)
    m.global_variables_initializer()
    return train


_FEED = {"x:0": np.arange(12, dtype=np.float32).reshape(3, 4) / 10, "labels:0": np.array([0, 1, 1])}


def _train(m, session, steps=3):
    session.run("init")
    losses = [session.run(["loss:0", "train"], _FEED)[0] for _ in range(steps)]
    return losses, session.run(["w1:0", "w2:0", "global_step:0"])


@pytest.mark.parametrize(
    "optimizer",
    [
        lambda m: m.train.GradientDescentOptimizer(0.5),
        lambda m: m.train.AdamOptimizer(0.1),
        lambda m: m.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    ],
    ids=["sgd", "adam", "momentum"],
)
def test_tf_imports_our_graph_def_and_trains_it_as_we_do(tf1, optimizer):
    with tf.Graph().as_default() as graph:
        _mlp(tf, optimizer)
    graph_def = graph.as_graph_def()
    assert isinstance(graph_def, tf.GraphDef)
    with tf1.Graph().as_default(), tf1.Session() as sess:
        tf1.import_graph_def(tf1.GraphDef.FromString(graph_def.SerializeToString()), name="")
        theirs = _train(tf1, sess)
    with tf.Session(graph=graph) as sess:
        mine = _train(tf, sess)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-5)
    for a, b in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def _attrs(tf1, node):
    """A node's attrs as comparable Python values (tensors as arrays, so both encodings compare)."""
    out = {}
    for key, value in node.attr.items():
        if value.HasField("tensor"):
            out[key] = tf1.make_ndarray(value.tensor).tolist()
        else:
            out[key] = text_format.MessageToString(value, as_one_line=True)
    return out


def test_nodes_carry_the_attrs_tf_writes_for_the_same_program(tf1):
    def build(m):
        x = m.placeholder(m.float32, [None, 3], name="x")
        w = m.Variable(m.ones([3, 2]), name="w", use_resource=False)
        y = m.nn.relu(m.matmul(x, w, transpose_b=False), name="y")
        s = m.reduce_sum(y, axis=1, keepdims=True, name="s")
        c = m.cast(s, m.int32, name="c")
        n = m.add_n([y, y, y], name="n")
        p = m.concat([y, n], 1, name="p")
        m.reshape(p, [-1, 2, 2], name="r")
        m.shape(c, out_type=m.int64, name="shape")
        m.identity(c, name="out")

    with tf1.Graph().as_default() as theirs_graph:
        build(tf1)
    with tf.Graph().as_default() as graph:
        build(tf)
    theirs = {n.name: n for n in theirs_graph.as_graph_def().node}
    mine = {n.name: n for n in tf1.GraphDef.FromString(graph.as_graph_def().SerializeToString()).node}
    compared = 0
    for name in sorted(set(mine) & set(theirs)):
        if mine[name].op != theirs[name].op:
            continue
        assert _attrs(tf1, mine[name]) == _attrs(tf1, theirs[name]), name
        assert list(mine[name].input) == list(theirs[name].input), name
        compared += 1
    assert compared >= 12


def test_text_format_and_shapes_parse_in_tf(tf1):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        tf.reduce_sum(x * 2.0, axis=0, name="total")
        version = graph.version
        tf.identity(x, name="later")
    text = text_format.MessageToString(graph.as_graph_def(add_shapes=True))
    parsed = text_format.Parse(text, tf1.GraphDef())
    nodes = {n.name: n for n in parsed.node}
    assert [d.size for d in nodes["total"].attr["_output_shapes"].list.shape[0].dim] == [3]
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 3]
    assert parsed == tf1.GraphDef.FromString(graph.as_graph_def(add_shapes=True).SerializeToString())
    assert "_output_shapes" not in graph.as_graph_def().node[0].attr
    assert [n.name for n in graph.as_graph_def(from_version=version).node] == ["later"]
    with tf1.Graph().as_default():
        tf1.import_graph_def(parsed, name="")


def test_tf_graph_def_bytes_run_here(tf1):
    with tf1.Graph().as_default() as theirs:
        _mlp(tf1, lambda m: m.train.AdamOptimizer(0.1))
        with tf1.Session() as sess:
            expected = _train(tf1, sess)
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(tf.GraphDef.FromString(theirs.as_graph_def().SerializeToString()), name="")
        with tf.Session() as sess:
            got = _train(tf, sess)
    assert {n.name for n in graph.as_graph_def().node} == {n.name for n in theirs.as_graph_def().node}
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5)


def test_project_attrs_and_pipelines_survive_the_bytes():
    with tf.Graph().as_default() as graph:
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(6.0, dtype=np.float32)).map(lambda v: v * 2).batch(4)
        iterator = dataset.make_initializable_iterator()
        tf.identity(iterator.get_next(), name="batch")
        tf.while_loop(lambda i: i < 5, lambda i: i + 1, [tf.constant(0)], name="loop")
    graph_def = graph.as_graph_def()
    made = next(n for n in graph_def.node if n.op == "MakeIterator")
    assert "_dtf_json_dataset" in made.attr and "dataset" not in made.attr
    with tf.Graph().as_default() as copy:
        tf.import_graph_def(tf.GraphDef.FromString(graph_def.SerializeToString()), name="")
        with tf.Session() as sess:
            sess.run(iterator.initializer.name)
            assert sess.run("batch:0").tolist() == [0.0, 2.0, 4.0, 6.0]
            assert sess.run("loop/Exit:0") == 5
    assert [op.name for op in copy.get_operations()] == [op.name for op in graph.get_operations()]


def test_names_and_sessions_give_protobufs():
    assert tf.GraphDef.DESCRIPTOR.full_name == "tensorflow.GraphDef"
    for name in ("NodeDef", "AttrValue", "MetaGraphDef", "NameAttrList"):
        assert getattr(tf, name).DESCRIPTOR.full_name == f"tensorflow.{name}"
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="c")
        with tf.Session() as sess:
            assert isinstance(sess.graph_def, tf.GraphDef) and sess.graph_def.node[0].name == "c"
    assert graph.as_graph_def().versions.producer == tf.GRAPH_DEF_VERSION


def test_every_op_type_here_that_tf_has_has_tfs_signature(tf1):
    """tf_op_defs.pb is up to date: run `python scripts/tf_op_defs.py` after adding an op type TF has."""
    from tensorflow.python.framework import op_def_registry

    spec = importlib.util.spec_from_file_location("tf_op_defs_script", os.path.join(_REPO, "scripts", "tf_op_defs.py"))
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    missing, different = [], []
    for op_type in sorted(script.registered_op_types() | set(script.WRITTEN_FOR_TF)):
        theirs = op_def_registry.get(op_type)
        if theirs is None:
            continue
        ours = tf_op_def(op_type)
        if ours is None:
            missing.append(op_type)
            continue
        signature = [(a.name, a.type_attr, a.number_attr, a.type_list_attr, a.type) for a in theirs.input_arg]
        if [(a.name, a.type_attr, a.number_attr, a.type_list_attr, a.type) for a in ours.input_arg] != signature:
            different.append(op_type)
        if {a.name for a in ours.attr} != {a.name for a in theirs.attr}:
            different.append(op_type)
    assert not missing and not different, f"run python scripts/tf_op_defs.py: missing {missing}, differ {different}"


def test_write_graph_writes_the_files_tf_writes(tf1, tmp_path):
    with tf.Graph().as_default() as graph:
        tf.matmul(tf.placeholder(tf.float32, [None, 2], name="x"), tf.ones([2, 2]), name="y")
    theirs = tf1.GraphDef.FromString(graph.as_graph_def().SerializeToString())
    for as_text, name in ((True, "graph.pbtxt"), (False, "graph.pb")):
        ours = tf.train.write_graph(graph, str(tmp_path / "ours"), name, as_text=as_text)
        expected = tf1.train.write_graph(theirs, str(tmp_path / "tf"), name, as_text=as_text)
        with open(ours, "rb") as mine, open(expected, "rb") as tf_file:
            assert mine.read() == tf_file.read(), name
    meta = tf.train.write_graph(tf.train.export_meta_graph(graph=graph), str(tmp_path), "m.pbtxt")
    with open(meta) as f:
        parsed = text_format.Parse(f.read(), tf1.MetaGraphDef()).graph_def
    assert [n.name for n in parsed.node] == [n.name for n in theirs.node] and "_output_shapes" in parsed.node[0].attr
