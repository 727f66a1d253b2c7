"""Graphs TF 2 writes with resource variables (``VarHandleOp``, ``ReadVariableOp``, ``ResourceApply*``, what
``tf.compat.v1.get_variable`` makes there) import and run here: their training steps give TF's losses, their
``.meta`` rebuilds a Saver that restores TF's checkpoint and saves one TF reads, and on a cluster the handles stay
with the variables on the ps task."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.ops.resource_variables import ResourceVariable

pytestmark = pytest.mark.tf_oracle

_RNG = np.random.default_rng(0)
_W = _RNG.normal(size=(4, 3)).astype(np.float32)
_EMB = _RNG.normal(size=(10, 4)).astype(np.float32)
_FEED = {
    "x:0": _RNG.normal(size=(8, 4)).astype(np.float32),
    "y:0": _RNG.integers(0, 3, 8),
    "ids:0": _RNG.integers(0, 10, 8),
}
_OPTIMIZERS = {
    "sgd": lambda t: t.train.GradientDescentOptimizer(0.1),
    "adam": lambda t: t.train.AdamOptimizer(0.1),
    "momentum": lambda t: t.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adagrad": lambda t: t.train.AdagradOptimizer(0.1),
    "rmsprop": lambda t: t.train.RMSPropOptimizer(0.1, momentum=0.5),
    "ftrl": lambda t: t.train.FtrlOptimizer(0.1),
}


@pytest.fixture(scope="module")
def real():
    # (use_resource=True everywhere: another test may have switched TF's default back to reference variables)
    return pytest.importorskip("tensorflow").compat.v1


def _tf_graph(real, optimizer: str, setter=None):
    """TF's build of a small model with an embedding (a sparse update) and a dense layer: resource variables."""
    graph = real.Graph()
    with graph.as_default(), real.device(setter):
        x = real.placeholder(real.float32, [None, 4], name="x")
        y = real.placeholder(real.int64, [None], name="y")
        ids = real.placeholder(real.int64, [None], name="ids")
        w = real.get_variable("w", initializer=_W, use_resource=True)
        b = real.get_variable("b", [3], initializer=real.zeros_initializer(), use_resource=True)
        emb = real.get_variable("emb", initializer=_EMB, use_resource=True)
        logits = real.matmul(x + real.nn.embedding_lookup(emb, ids), w) + b
        loss = real.reduce_mean(real.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits), name="loss")
        step = real.train.get_or_create_global_step()
        train = _OPTIMIZERS[optimizer](real).minimize(loss, global_step=step, name="train")
        real.add_to_collection("train_op", train)
        real.global_variables_initializer()  # "init"
    assert w.op.type == "VarHandleOp" and "ResourceGather" in {op.type for op in graph.get_operations()}
    return graph


def _steps(sess, count: int) -> list[float]:
    out = []
    for _ in range(count):
        sess.run("train", _FEED)
        out.append(float(sess.run("loss:0", _FEED)))
    return out


@pytest.mark.parametrize("optimizer", sorted(_OPTIMIZERS))
def test_a_tf_graph_of_resource_variables_trains_here_as_in_tf(real, optimizer):
    graph = _tf_graph(real, optimizer)
    with real.Session(graph=graph) as sess:
        sess.run("init")
        theirs = _steps(sess, 4)
    with tf.Graph().as_default() as ours_graph:
        tf.import_graph_def(tf.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
        with tf.Session() as sess:
            sess.run("init")
            ours = _steps(sess, 4)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5)
    # And back: the graph as written here imports into TF and trains the same.
    with real.Graph().as_default():
        real.import_graph_def(real.GraphDef.FromString(ours_graph.as_graph_def().SerializeToString()), name="")
        with real.Session() as sess:
            sess.run("init")
            np.testing.assert_allclose(_steps(sess, 4), theirs, rtol=2e-5)


def test_a_tf_meta_of_resource_variables_restores_trains_and_saves_for_tf(real, tmp_path):
    graph = _tf_graph(real, "adam")
    with graph.as_default():
        saver = real.train.Saver()
    with real.Session(graph=graph) as sess:
        sess.run("init")
        _steps(sess, 2)
        path = saver.save(sess, str(tmp_path / "tf" / "model"), global_step=2)
        theirs = _steps(sess, 3)
    with tf.Graph().as_default():
        imported = tf.train.import_meta_graph(path + ".meta")
        w = tf.global_variables()[0]
        assert isinstance(w, ResourceVariable) and (w.name, w.dtype, w.shape.as_list()) == ("w:0", tf.float32, [4, 3])
        assert repr(w) == "<tf.Variable 'w:0' shape=(4, 3) dtype=float32>"
        assert len(tf.trainable_variables()) == 3 and tf.train.get_global_step().name == "global_step:0"
        with tf.Session() as sess:
            assert set(sess.run(tf.report_uninitialized_variables())) >= {b"w", b"emb"}
            imported.restore(sess, path)
            assert sess.run(tf.report_uninitialized_variables()).size == 0
            assert sess.run(tf.train.get_global_step()) == 2
            ours = _steps(sess, 3)
            (tmp_path / "ours").mkdir()  # (as TF's, a save wants its folder to exist)
            ours_path = imported.save(sess, str(tmp_path / "ours" / "model"), global_step=5)
            values = {v.op.name: sess.run(v) for v in tf.global_variables()}
            # Writes through the variable objects: assign, assign_add, load.
            np.testing.assert_array_equal(sess.run(w.assign(np.ones([4, 3], np.float32))), np.ones([4, 3]))
            np.testing.assert_array_equal(sess.run(w.assign_add(np.ones([4, 3], np.float32))), np.full([4, 3], 2.0))
            w.load(np.zeros([4, 3], np.float32), sess)
            np.testing.assert_array_equal(sess.run(w), np.zeros([4, 3]))
    np.testing.assert_allclose(ours, theirs, rtol=2e-5)
    reader = real.train.load_checkpoint(ours_path)
    for name, value in values.items():
        np.testing.assert_array_equal(reader.get_tensor(name), value, err_msg=name)


@pytest.mark.cluster
def test_on_a_cluster_the_handles_and_their_updates_stay_on_the_ps_task(real):
    from tests.distributed.cluster_util import LocalCluster

    with real.Session(graph=_tf_graph(real, "momentum")) as sess:  # (TF's local session has no ps task)
        sess.run("init")
        theirs = _steps(sess, 3)
    graph = _tf_graph(real, "momentum", real.train.replica_device_setter(ps_tasks=1))
    graph_def = tf.GraphDef.FromString(graph.as_graph_def().SerializeToString())
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run("init")
            ours = _steps(sess, 3)
            metadata = tf.RunMetadata()
            sess.run("train", _FEED, options=tf.RunOptions(output_partition_graphs=True), run_metadata=metadata)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5)
    on_ps = {n.name: n.op for g in metadata.partition_graphs for n in g.node if "/job:ps/" in n.device}
    assert {"w", "b", "emb", "w/Momentum"} <= set(on_ps)
    assert {"ResourceApplyMomentum", "ResourceSparseApplyMomentum", "ResourceGather"} <= set(on_ps.values())


def test_row_updates_shape_and_initialized_answer_as_tf(real):
    """TF's raw resource ops, duplicate indices included, give TF's values here."""
    graph = real.Graph()
    with graph.as_default():
        v = real.get_variable("v", initializer=np.arange(1.0, 13.0, dtype=np.float32).reshape(4, 3), use_resource=True)
        idx = real.constant([2, 0, 2])
        rows = real.constant(np.array([[2.0, 3.0, 4.0], [5.0, 6.0, 7.0], [0.5, 2.0, 8.0]], np.float32))
        outs = {"shape": real.raw_ops.VariableShape(input=v.handle, out_type=real.int64, name="shape")}
        for kind in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update"):
            with real.control_dependencies(
                [
                    getattr(real.raw_ops, f"ResourceScatter{kind}")(
                        resource=v.handle, indices=idx, updates=rows, name=f"scatter_{kind}"
                    )
                ]
            ):
                outs[kind] = real.identity(v.read_value(), name=f"after_{kind}")
        outs["gather"] = real.raw_ops.ResourceGather(resource=v.handle, indices=[[3, 1]], dtype=real.float32, name="g")
        outs["initialized"] = real.raw_ops.VarIsInitializedOp(resource=v.handle, name="initialized")
        init = v.initializer
    names = {key: t.name for key, t in outs.items()}
    theirs, ours = {}, {}
    with real.Session(graph=graph) as sess:
        theirs["before"] = sess.run(names["initialized"])
        for key, name in names.items():
            sess.run(init)
            theirs[key] = sess.run(name)
    with tf.Graph().as_default():
        tf.import_graph_def(tf.GraphDef.FromString(graph.as_graph_def().SerializeToString()), name="")
        with tf.Session() as sess:
            ours["before"] = sess.run(names["initialized"])
            for key, name in names.items():
                sess.run(init.name)
                ours[key] = sess.run(name)
    assert theirs["before"] == ours["before"] == False  # noqa: E712 - numpy booleans
    for key in names:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-6, err_msg=key)


def test_tf1_functions_on_an_imported_resource_variable_use_its_own_ops(real, tmp_path):
    """``tf.assign``, ``tf.assign_add``, ``tf.scatter_*`` and ``initialized_value`` on a ``ResourceVariable`` write
    through ``Resource*`` ops, and ``initialized_value`` never assigns (it reads, or gives the initial value)."""
    graph = real.Graph()
    with graph.as_default():
        real.get_variable("v", initializer=np.array([1.0, 2.0], np.float32), use_resource=True)
        real.train.export_meta_graph(str(tmp_path / "v.meta"))
    with tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "v.meta"))
        (v,) = tf.global_variables()
        initialized = v.initialized_value()
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(initialized), [1.0, 2.0])  # not initialized: the initial value
            sess.run(v.initializer)
            v.load(np.array([7.0, 8.0], np.float32), sess)
            np.testing.assert_array_equal(sess.run(initialized), [7.0, 8.0])
            np.testing.assert_array_equal(sess.run(v), [7.0, 8.0])  # still: reading it assigned nothing
            np.testing.assert_array_equal(sess.run(tf.assign(v, [3.0, 4.0])), [3.0, 4.0])
            np.testing.assert_array_equal(sess.run(tf.assign_add(v, [1.0, 1.0])), [4.0, 5.0])
            np.testing.assert_array_equal(sess.run(tf.scatter_div(v, [0, 0], [2.0, 2.0])), [1.0, 5.0])
            np.testing.assert_array_equal(sess.run(tf.scatter_mul(v, [1], [3.0])), [1.0, 15.0])
        writes = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"AssignVariableOp", "AssignAddVariableOp", "ResourceScatterDiv", "ResourceScatterMul"} <= writes
    assert not writes & {"Assign", "AssignAdd", "ScatterDiv", "ScatterMul"}
