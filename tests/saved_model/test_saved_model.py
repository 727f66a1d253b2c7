"""SavedModels written here load in real TF (``tf.saved_model.loader.load``) and give the same outputs, and the
reverse; tag sets, assets and main ops, sharded variables from a cluster, and the builder's and loader's errors."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

_X = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)


@pytest.fixture(scope="module")
def real():
    return pytest.importorskip("tensorflow").compat.v1


def _model(lib, device=None):
    """A small trained-looking classifier: x -> softmax(relu(x W1) W2), its variables on ``device``."""
    rng = np.random.default_rng(1)
    x = lib.placeholder(lib.float32, [None, 4], name="x")
    with lib.device(device):
        # (resource variables in TF, whatever its default; reference variables here, as always)
        w1 = lib.get_variable("w1", initializer=rng.normal(size=(4, 8)).astype(np.float32), use_resource=True)
        w2 = lib.get_variable("w2", initializer=rng.normal(size=(8, 3)).astype(np.float32), use_resource=True)
    probabilities = lib.nn.softmax(lib.matmul(lib.nn.relu(lib.matmul(x, w1)), w2), name="probabilities")
    return x, probabilities


def _serve(lib, sess, export_dir: str) -> np.ndarray:
    """Loads ``export_dir`` with ``lib``'s loader into ``sess`` and runs its serving signature on ``_X``."""
    meta = lib.saved_model.loader.load(sess, [lib.saved_model.tag_constants.SERVING], export_dir)
    signature = meta.signature_def[lib.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    assert signature.method_name == "tensorflow/serving/predict"
    return sess.run(signature.outputs["probabilities"].name, {signature.inputs["x"].name: _X})


@pytest.mark.tf_oracle
def test_tf_serves_a_simple_save_written_here(real, tmp_path):
    export_dir = str(tmp_path / "ours")
    with tf.Graph().as_default():
        x, probabilities = _model(tf)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign_add(tf.global_variables()[0], tf.ones([4, 8])))  # a value no initializer gives
            ours = sess.run(probabilities, {x: _X})
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probabilities": probabilities})
    assert sorted(os.listdir(export_dir)) == ["saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00001",
        "variables.index",
    ]
    with real.Graph().as_default(), real.Session() as sess:
        np.testing.assert_allclose(_serve(real, sess, export_dir), ours, rtol=1e-6)
    with tf.Graph().as_default(), tf.Session() as sess:  # and here
        np.testing.assert_allclose(_serve(tf, sess, export_dir), ours, rtol=1e-6)


@pytest.mark.tf_oracle
def test_a_saved_model_tf_wrote_serves_here(real, tmp_path):
    """TF 2's graphs hold resource variables: those load too."""
    export_dir = str(tmp_path / "theirs")
    with real.Graph().as_default():
        x, probabilities = _model(real)
        with real.Session() as sess:
            sess.run(real.global_variables_initializer())
            theirs = sess.run(probabilities, {x: _X})
            real.saved_model.simple_save(sess, export_dir, {"x": x}, {"probabilities": probabilities})
    with tf.Graph().as_default(), tf.Session() as sess:
        np.testing.assert_allclose(_serve(tf, sess, export_dir), theirs, rtol=1e-6)


@pytest.mark.tf_oracle
def test_tag_sets_assets_and_the_main_op_as_tf_loads_them(real, tmp_path):
    """Two tag sets over one checkpoint, a vocabulary asset the main op initializes a lookup table from, a text
    ``saved_model.pbtxt``: TF's loader finds the asset where the builder copied it."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("cat\ndog\nemu\n")
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        words = tf.placeholder(tf.string, [None], name="words")
        asset = tf.constant(str(vocab), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        table = tf.contrib.lookup.index_table_from_file(asset, default_value=-1)
        scale = tf.Variable(10, dtype=tf.int64, name="scale")
        ids = tf.identity(table.lookup(words) * scale, name="ids")
        signature = tf.saved_model.signature_def_utils.predict_signature_def({"words": words}, {"ids": ids})
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        with tf.Session() as sess:
            sess.run(scale.initializer)
            builder.add_meta_graph_and_variables(
                sess,
                [tf.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": signature},
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.saved_model.main_op.main_op(),
            )
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(None, ["other"])
        # (the main op is in the graph's collection now: this meta graph needs the asset too)
        builder.add_meta_graph(
            [tf.saved_model.tag_constants.TRAINING, "extra"],
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
        )
        assert builder.save(as_text=True).endswith(b"saved_model.pbtxt")
    assert sorted(os.listdir(export_dir)) == ["assets", "saved_model.pbtxt", "variables"]
    assert os.listdir(os.path.join(export_dir, "assets")) == ["vocab.txt"]
    vocab.unlink()  # the loaders must read the SavedModel's own copy
    feed_words = [b"dog", b"yak", b"cat"]
    for lib in (real, tf):
        with lib.Graph().as_default(), lib.Session() as sess:
            meta = lib.saved_model.loader.load(sess, ["serve"], export_dir)
            signature = meta.signature_def["serving_default"]
            got = sess.run(signature.outputs["ids"].name, {signature.inputs["words"].name: feed_words})
            np.testing.assert_array_equal(got, [10, -10, 0])
        with lib.Graph().as_default(), lib.Session() as sess:
            meta = lib.saved_model.loader.load(sess, ["extra", "train"], export_dir)
            assert sorted(meta.meta_info_def.tags) == ["extra", "train"]
            assert sess.run("scale:0") == 10
    with tf.Graph().as_default(), tf.Session() as sess, pytest.raises(RuntimeError, match="available_tags"):
        tf.saved_model.loader.load(sess, ["gpu"], export_dir)


def test_the_builder_refuses_a_used_directory_and_a_meta_graph_before_the_variables(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("")
    with pytest.raises(AssertionError, match="already exists"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "used"))
    with tf.Graph().as_default():
        builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "new"))
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["serve"])
    assert not tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path / "new"))
    with tf.Graph().as_default(), tf.Session() as sess, pytest.raises(OSError, match="does not exist"):
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "new"))


@pytest.mark.cluster
@pytest.mark.tf_oracle
def test_a_cluster_s_variables_are_saved_by_their_ps_tasks_and_tf_serves_them(real, tmp_path):
    from tests.distributed.cluster_util import LocalCluster

    export_dir = str(tmp_path / "cluster")
    with LocalCluster(jobs={"ps": 2, "worker": 1}) as cluster, tf.Graph().as_default():
        x, probabilities = _model(tf, tf.train.replica_device_setter(ps_tasks=2))
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            ours = sess.run(probabilities, {x: _X})
            tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probabilities": probabilities})
    # The builder's saver is sharded, as TF's: one data file per ps task.
    assert sorted(os.listdir(os.path.join(export_dir, "variables"))) == [
        "variables.data-00000-of-00002",
        "variables.data-00001-of-00002",
        "variables.index",
    ]
    with real.Graph().as_default(), real.Session() as sess:  # simple_save clears devices: TF serves it locally
        np.testing.assert_allclose(_serve(real, sess, export_dir), ours, rtol=1e-6)


def test_assets_of_one_name_and_different_bytes_keep_both(tmp_path):
    """Two vocabulary files both called ``vocab.txt`` (TF's rule: the second becomes ``vocab.txt_1``)."""
    for folder, text in (("a", "cat\n"), ("b", "dog\nemu\n")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "vocab.txt").write_text(text)
    export_dir = str(tmp_path / "model")
    with tf.Graph().as_default():
        words = tf.placeholder(tf.string, [None], name="words")
        paths = [tf.constant(str(tmp_path / f / "vocab.txt"), name=f"path_{f}") for f in ("a", "b")]
        for p in paths:
            tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, p)
        tables = [tf.contrib.lookup.index_table_from_file(p, default_value=-1) for p in paths]
        out = {f: tf.identity(t.lookup(words), name=f"ids_{f}") for f, t in zip("ab", tables)}
        with tf.Session() as sess:
            tf.saved_model.simple_save(sess, export_dir, {"words": words}, out, legacy_init_op=tf.tables_initializer())
    assert sorted(os.listdir(export_dir + "/assets")) == ["vocab.txt", "vocab.txt_1"]
    (tmp_path / "a" / "vocab.txt").unlink()
    (tmp_path / "b" / "vocab.txt").unlink()
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta.signature_def["serving_default"]
        fetch = {k: v.name for k, v in signature.outputs.items()}
        got = sess.run(fetch, {signature.inputs["words"].name: [b"cat", b"emu"]})
    assert got["a"].tolist() == [0, -1] and got["b"].tolist() == [-1, 1]
