"""``tf.train.import_meta_graph``: a graph saved with its checkpoint is rebuilt in a fresh graph, its collections
and variables restored, and its Saver reused -- the way TF1 scripts resume or serve a model from files alone."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train.meta_graph import export_meta_graph


def _train_and_save(directory: str) -> tuple[str, np.ndarray]:
    """The seeds' kind of model trained a few steps; returns the checkpoint path and the saved weights."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.device("/cpu:0"):
            w = tf.Variable(tf.ones([3, 1]), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        step = tf.Variable(0, trainable=False, name="step")
        prediction = tf.add(tf.matmul(x, w), b, name="prediction")
        loss = tf.reduce_mean(tf.square(prediction - y), name="loss")
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step, name="train")
        tf.add_to_collection("train_op", train_op)
        tf.add_to_collection("prediction", prediction)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {x: [[1, 2, 3]], y: [[1]]})
            path = saver.save(sess, f"{directory}/model", global_step=step)
            return path, sess.run(w)


def test_a_saved_model_is_rebuilt_restored_and_trained_from_its_files(tmp_path):
    path, saved_w = _train_and_save(str(tmp_path))
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(path + ".meta")
        assert [v.name for v in tf.trainable_variables()] == ["w:0", "b:0"]
        assert [v.name for v in tf.global_variables()] == ["w:0", "b:0", "step:0"]
        assert graph.get_operation_by_name("w").device.endswith("CPU:0")
        prediction = tf.get_collection("prediction")[0]
        train_op = tf.get_collection("train_op")[0]
        x, y = graph.get_tensor_by_name("x:0"), graph.get_tensor_by_name("y:0")
        with tf.Session() as sess:
            saver.restore(sess, path)
            w = tf.trainable_variables()[0]
            np.testing.assert_array_equal(sess.run(w), saved_w)
            expected = np.array([[1, 2, 3]], np.float32) @ saved_w + sess.run("b:0")
            np.testing.assert_allclose(sess.run(prediction, {x: [[1, 2, 3]]}), expected)
            sess.run(train_op, {x: [[1, 2, 3]], y: [[1]]})
            assert sess.run("step:0") == 4  # training goes on from the restored step
            # The imported saver writes checkpoints again, with the saved graph's own save ops.
            again = saver.save(sess, str(tmp_path / "again"))
            assert tf.train.load_variable(again, "step") == 4


def test_import_scope_prefixes_every_name_and_clear_devices_drops_requests(tmp_path):
    path, saved_w = _train_and_save(str(tmp_path))
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(path + ".meta", import_scope="restored", clear_devices=True)
        assert [v.name for v in tf.global_variables()] == ["restored/w:0", "restored/b:0", "restored/step:0"]
        assert graph.get_operation_by_name("restored/w").device == ""
        assert tf.get_collection("prediction")[0].name == "restored/prediction:0"
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run("restored/w:0"), saved_w)


def test_a_graph_without_a_saver_gets_a_new_one_or_none():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        tf.add_to_collection("double", v * 2.0)
        with_variables = export_meta_graph()
    constant_only = tf.MetaGraphDef()
    constant_only.graph_def.node.extend(n for n in with_variables.graph_def.node if n.name == "mul/y")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(with_variables)
        assert isinstance(saver, tf.train.Saver)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(tf.get_collection("double")[0]).tolist() == [2.0, 4.0]
    with tf.Graph().as_default():
        assert tf.train.import_meta_graph(constant_only) is None


def test_bad_meta_graph_input_is_named(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(OSError, match="nowhere.meta does not exist"):
            tf.train.import_meta_graph(str(tmp_path / "nowhere.meta"))
        (tmp_path / "broken.meta").write_text("{not json")
        with pytest.raises(OSError, match="Cannot parse file .*broken.meta"):
            tf.train.import_meta_graph(str(tmp_path / "broken.meta"))
        with pytest.raises(ValueError, match="does not support input_map"):
            tf.train.import_meta_graph({"graph_def": {"node": []}}, input_map={"x:0": 1.0})
