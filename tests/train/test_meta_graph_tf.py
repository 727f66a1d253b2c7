"""``.meta`` files cross over: real TF's ``import_meta_graph`` loads one a Saver wrote here, trains the model to the
same numbers and saves a checkpoint with the saver it gets, which restores here; a ``.meta`` TF wrote (binary or
text) is imported here, its checkpoint restored and training continued as in TF; collections are written as TF
writes them; and the JSON ``.meta`` of earlier versions of this package still imports."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle

_FEED = {"x:0": [[1.0, 2.0, 3.0]], "y:0": [[1.0]]}


@pytest.fixture(scope="module")
def tf1():
    module = pytest.importorskip("tensorflow").compat.v1
    module.disable_eager_execution()
    return module


def _model(m, devices=("", ""), sharded=False):
    """A linear model with a step counter, a saver and collections, written once for both libraries (reference
    variables: TF's get_or_create_global_step would make a resource variable)."""
    x = m.placeholder(m.float32, [None, 3], name="x")
    y = m.placeholder(m.float32, [None, 1], name="y")
    with m.device(devices[0]):
        w = m.Variable(m.ones([3, 1]), name="w", use_resource=False)
    with m.device(devices[1]):
        b = m.Variable(m.zeros([1]), name="b", use_resource=False)
        step = m.Variable(0, name="step", trainable=False, dtype=m.int64, use_resource=False)
    m.add_to_collection(m.GraphKeys.GLOBAL_STEP, step)
    prediction = m.add(m.matmul(x, w), b, name="prediction")
    loss = m.reduce_mean(m.square(prediction - y), name="loss")
    train_op = m.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
    m.add_to_collection("train_op", train_op)
    m.add_to_collection("prediction", prediction)
    m.add_to_collection("learning_rates", 0.1)
    m.add_to_collection("epochs", 3)
    m.add_to_collection("labels", "cat")
    return m.train.Saver(sharded=sharded, max_to_keep=3)


def _steps(sess, count=3):
    return [sess.run(["loss:0", "train"], _FEED)[0] for _ in range(count)]


def test_tf_loads_a_meta_written_here_trains_and_its_checkpoint_restores_here(tf1, tmp_path):
    for name in ("ours", "tf", "again"):
        (tmp_path / name).mkdir()
    with tf.Graph().as_default():
        saver = _model(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ours = _steps(sess)
            path = saver.save(sess, str(tmp_path / "ours" / "model"), global_step=3)
    with tf1.Graph().as_default() as graph:
        tf_saver = tf1.train.import_meta_graph(path + ".meta")
        assert [v.name for v in tf1.trainable_variables()] == ["w:0", "b:0"]
        assert tf1.train.get_global_step().name == "step:0"
        assert tf1.get_collection("prediction")[0] is graph.get_tensor_by_name("prediction:0")
        assert tf1.get_collection("train_op")[0].name == "train"
        # A float collection is TF's float_list: float32, in TF's own files too.
        assert (tf1.get_collection("learning_rates"), tf1.get_collection("epochs")) == (pytest.approx([0.1]), [3])
        assert tf1.get_collection("labels") == [b"cat"]
        assert tf_saver.saver_def.max_to_keep == 3
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            theirs = _steps(sess)
            tf_path = tf_saver.save(sess, str(tmp_path / "tf" / "model"), global_step=3)
            tf_values = sess.run(["w:0", "b:0", "step:0"])
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    with tf1.Graph().as_default():  # our checkpoint is TF's format: TF's own restore ops read it
        tf_saver = tf1.train.import_meta_graph(path + ".meta")
        with tf1.Session() as sess:
            tf_saver.restore(sess, path)
            for name in ("w", "b", "step"):
                np.testing.assert_array_equal(sess.run(f"{name}:0"), tf.train.load_variable(path, name))
            assert sess.run("step:0") == 3
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, tf_path)  # TF's checkpoint, through the saver rebuilt with this package's ops
            for got, expected in zip(sess.run(["w:0", "b:0", "step:0"]), tf_values):
                np.testing.assert_allclose(got, expected)
            again = saver.save(sess, str(tmp_path / "again" / "model"))
    assert tf.train.load_variable(again, "step") == 3


def test_a_sharded_saver_is_written_as_tfs_and_rebuilt_sharded(tf1, tmp_path):
    (tmp_path / "tf").mkdir()
    with tf.Graph().as_default():
        saver = _model(tf, ("/job:ps/task:0", "/job:ps/task:1"), sharded=True)
        meta_file = str(tmp_path / "sharded.meta")
        meta = saver.export_meta_graph(meta_file)
    ops = {n.op for n in meta.graph_def.node if n.name.startswith("save/")}
    assert {"SaveV2", "ShardedFilename", "MergeV2Checkpoints", "RestoreV2"} <= ops
    assert not ops & {"SaveShard", "RestoreSlices", "MergeCheckpointShards"}
    with tf1.Graph().as_default():
        tf_saver = tf1.train.import_meta_graph(meta_file, clear_devices=True)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            _steps(sess, 2)
            tf_path = tf_saver.save(sess, str(tmp_path / "tf" / "model"))
            expected = sess.run(["w:0", "b:0", "step:0"])
    written = set(os.listdir(tmp_path / "tf"))
    assert {"model.data-00000-of-00002", "model.data-00001-of-00002", "model.index"} <= written
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(meta_file, clear_devices=True)
        assert saver.saver_def.sharded and saver.saver_def.max_to_keep == 3
        assert graph.get_operation_by_name("save/restore_all").type == "NoOp"
        with tf.Session() as sess:
            saver.restore(sess, tf_path)
            for got, want in zip(sess.run(["w:0", "b:0", "step:0"]), expected):
                np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("as_text", [False, True], ids=["binary", "text"])
def test_a_meta_tf_wrote_imports_here_and_training_goes_on_as_in_tf(tf1, tmp_path, as_text):
    with tf1.Graph().as_default():
        tf_saver = _model(tf1)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            _steps(sess)
            path = tf_saver.save(sess, str(tmp_path / "model"), global_step=3, write_meta_graph=not as_text)
            if as_text:
                tf_saver.export_meta_graph(path + ".meta", as_text=True)
            theirs = _steps(sess, 2)
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(path + ".meta", import_scope="restored")
        assert [v.name for v in tf.global_variables()] == ["restored/w:0", "restored/b:0", "restored/step:0"]
        assert tf.get_collection("train_op")[0] is graph.get_operation_by_name("restored/train")
        assert tf.get_collection("labels") == [b"cat"]
        assert saver.saver_def.restore_op_name == "restored/save/restore_all"
        feed = {f"restored/{k}": v for k, v in _FEED.items()}
        with tf.Session() as sess:
            saver.restore(sess, path)
            assert sess.run("restored/step:0") == 3
            ours = [sess.run(["restored/loss:0", "restored/train"], feed)[0] for _ in range(2)]
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def test_collections_are_written_as_tf_writes_them(tf1):
    from google.protobuf import text_format

    def build(m):
        _model(m)
        queue = m.FIFOQueue(4, m.float32, name="queue")
        m.train.add_queue_runner(m.train.QueueRunner(queue, [queue.enqueue(1.0)]))
        m.summary.scalar("loss", m.get_default_graph().get_tensor_by_name("loss:0"))
        return m.train.export_meta_graph(saver_def=m.get_collection(m.GraphKeys.SAVERS) or None)

    with tf1.Graph().as_default():
        theirs = build(tf1)
    with tf.Graph().as_default():
        mine = build(tf)
    assert set(mine.collection_def) == set(theirs.collection_def)
    for key in sorted(theirs.collection_def):
        assert text_format.MessageToString(mine.collection_def[key]) == text_format.MessageToString(
            theirs.collection_def[key]
        ), key
    ops = [{op.name for op in meta.meta_info_def.stripped_op_list.op} for meta in (mine, theirs)]
    assert {"ApplyGradientDescent", "MatMul", "QueueEnqueueV2", "SaveV2", "RestoreV2"} <= ops[0] & ops[1]


def test_a_checkpoint_directory_with_the_json_meta_of_earlier_versions_still_works(tmp_path):
    """legacy_json_checkpoint/ was written by this package at b195843 (JSON .meta): a linear model trained one step
    with GradientDescent, a step counter, a queue runner and a Saver (its own SaveShard ops), saved as model-1. Those
    files named a queue runner by its queue only, so it is not rebuilt."""
    shutil.copytree(os.path.join(os.path.dirname(__file__), "legacy_json_checkpoint"), tmp_path / "old")
    prefix = str(tmp_path / "old" / "model-1")
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        assert graph.get_operation_by_name(saver.saver_def.restore_op_name).type == "NoOp"
        assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == []
        assert graph.get_operation_by_name("queue_enqueue").type == "QueueEnqueueV2"
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_allclose(sess.run("w:0"), [[0.4], [1.4]], rtol=1e-6)
            sess.run(tf.get_collection("train_op"), {"x:0": [[1.0, 1.0]]})
            assert sess.run("step:0") == 2
            again = saver.save(sess, str(tmp_path / "old" / "model"), global_step=2)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(again + ".meta")  # written now: TF's format
        with tf.Session() as sess:
            saver.restore(sess, again)
            assert sess.run("step:0") == 2


def test_a_tf_meta_with_a_while_loop_imports_without_its_contexts(tf1, tmp_path):
    tf1.disable_control_flow_v2()  # TF1's Enter/Exit loops, as built here
    with tf1.Graph().as_default():
        total = tf1.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + 2.0), [0, 0.0], name="loop")[1]
        tf1.add_to_collection("total", total)
        theirs = tf1.train.export_meta_graph()
        assert "while_context" in theirs.collection_def
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(theirs) is None
        assert tf.get_collection("while_context") == []
        with tf.Session() as sess:
            assert sess.run(tf.get_collection("total")[0]) == 8.0
