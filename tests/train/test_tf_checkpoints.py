"""Checkpoints written by real TF (its V2 tensor-bundle format: ``.index`` table + ``.data-*`` shards) are read
here: restored with ``Saver.restore`` (whole, partitioned into other parts, or through the directory's
``checkpoint`` file), inspected with ``tf.train.load_checkpoint`` / ``NewCheckpointReader`` / ``list_variables``,
and mapped with ``init_from_checkpoint``; and what a ``Saver`` here writes (TF's format) TF reads and restores.
"""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.lib.io import tensor_bundle

pytestmark = pytest.mark.tf_oracle

_TABLE = np.arange(10, dtype=np.float32).reshape(5, 2)


@pytest.fixture(scope="module")
def tf1():
    return pytest.importorskip("tensorflow").compat.v1


def _build(lib, partitions: int | None = 2):
    """The same model in either library: a dense layer, a partitioned table, a string, a step and Adam's slots."""
    x = lib.constant([[1.0, 2.0, 3.0]])
    w = lib.get_variable("dense/w", [3, 2], initializer=lib.random_normal_initializer(seed=1))
    table = lib.get_variable(
        "table",
        initializer=lib.constant(_TABLE),
        partitioner=lib.fixed_size_partitioner(partitions) if partitions else None,
    )
    words = lib.get_variable("words", initializer=lib.constant([b"a", b"\x00\xffxyz", b""]), trainable=False)
    step = lib.train.get_or_create_global_step()
    loss = lib.reduce_sum(lib.matmul(x, w)) + lib.reduce_sum(lib.nn.embedding_lookup(table, [1, 4]))
    train = lib.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    return {"w": w, "table": table, "words": words, "step": step, "loss": loss, "train": train}


def _train_and_save(lib, sess, model, directory: str) -> str:
    """3 training steps of ``_build``'s model, then a ``Saver`` of every variable saves it in ``directory``."""
    saver = lib.train.Saver()
    sess.run(lib.global_variables_initializer())
    for _ in range(3):
        sess.run(model["train"])
    return saver.save(sess, directory + "/model.ckpt", global_step=model["step"])


@pytest.fixture(scope="module")
def tf_checkpoint(tf1, tmp_path_factory):
    """A checkpoint directory written by TF after 3 training steps, and TF's values of every saved tensor."""
    directory = str(tmp_path_factory.mktemp("tf_ckpt"))
    with tf1.Graph().as_default():
        model = _build(tf1)
        with tf1.Session() as sess:
            prefix = _train_and_save(tf1, sess, model, directory)
    reader = tf1.train.load_checkpoint(prefix)
    saved = {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}
    return directory, prefix, saved


def test_saver_restores_a_tf_checkpoint_and_training_continues(tf_checkpoint):
    directory, prefix, saved = tf_checkpoint
    with tf.Graph().as_default():
        model = _build(tf)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(directory))
            assert tf.train.latest_checkpoint(directory) == prefix
            np.testing.assert_array_equal(sess.run(model["w"]), saved["dense/w"])
            np.testing.assert_array_equal(sess.run(model["table"].as_tensor()), saved["table"])
            assert list(sess.run(model["words"])) == [b"a", b"\x00\xffxyz", b""]
            assert sess.run(model["step"]) == 3
            np.testing.assert_array_equal(sess.run("dense/w/Adam:0"), saved["dense/w/Adam"])
            sess.run(model["train"])
            assert sess.run(model["step"]) == 4


@pytest.mark.parametrize("partitions", [None, 3], ids=["whole", "three_parts"])
def test_a_partitioned_tf_variable_restores_into_other_parts(tf_checkpoint, partitions):
    _, prefix, saved = tf_checkpoint
    with tf.Graph().as_default():
        table = tf.get_variable(
            "table", [5, 2], partitioner=tf.fixed_size_partitioner(partitions) if partitions else None
        )
        with tf.Session() as sess:
            tf.train.Saver([table] if partitions is None else list(table)).restore(sess, prefix)
            value = sess.run(table if partitions is None else table.as_tensor())
    np.testing.assert_array_equal(value, saved["table"])


def test_checkpoint_reader_and_list_variables_answer_as_tfs(tf1, tf_checkpoint):
    directory, prefix, saved = tf_checkpoint
    ours, theirs = tf.train.load_checkpoint(directory), tf1.train.load_checkpoint(directory)
    assert ours.get_variable_to_shape_map() == theirs.get_variable_to_shape_map()
    assert {k: v.name for k, v in ours.get_variable_to_dtype_map().items()} == {
        k: v.name for k, v in theirs.get_variable_to_dtype_map().items()
    }
    for name, value in saved.items():
        got = tf.train.NewCheckpointReader(prefix).get_tensor(name)
        np.testing.assert_array_equal(got, value)
        assert np.asarray(got).dtype == np.asarray(value).dtype
    assert tf.train.list_variables(directory) == [tuple(v) for v in tf1.train.list_variables(directory)]
    assert tf.train.load_variable(directory, "global_step") == 3
    with pytest.raises(errors.NotFoundError, match="Key nothing not found"):
        ours.get_tensor("nothing")


def test_init_from_checkpoint_maps_tf_tensors_to_new_names(tf_checkpoint):
    directory, _, saved = tf_checkpoint
    with tf.Graph().as_default():
        with tf.variable_scope("finetune"):
            w = tf.get_variable("kernel", [3, 2])
            emb = tf.get_variable("emb", [5, 2], partitioner=tf.fixed_size_partitioner(2))
        tf.train.init_from_checkpoint(directory, {"dense/w": w, "table": emb})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(w), saved["dense/w"])
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), saved["table"])


def test_a_corrupt_tf_checkpoint_is_data_loss(tf_checkpoint, tmp_path):
    _, prefix, _ = tf_checkpoint
    copy = str(tmp_path / "model")
    for suffix in (".index", ".data-00000-of-00001"):
        data = bytearray(open(prefix + suffix, "rb").read())
        if suffix != ".index":
            data = bytearray(b ^ 0x40 for b in data)  # every tensor's bytes changed
        open(copy + suffix, "wb").write(bytes(data))
    with tf.Graph().as_default():
        w = tf.get_variable("dense/w", [3, 2])
        with tf.Session() as sess, pytest.raises(errors.DataLossError, match="Checksum does not match"):
            tf.train.Saver([w]).restore(sess, copy)


def test_tf_reads_a_bundle_written_here(tf1, tmp_path):
    prefix = str(tmp_path / "ours.ckpt")
    tensors = {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "step": np.int64(12),
        "names": np.array([b"x", b"", "ü".encode()], dtype=object),
        "mask": np.array([True, False]),
    }
    tensor_bundle.write_tensor_bundle(prefix, tensors, lambda path, data: open(path, "wb").write(data))
    reader = tf1.train.load_checkpoint(prefix)
    assert reader.get_variable_to_shape_map() == {"w": [2, 3], "step": [], "names": [3], "mask": [2]}
    for name, value in tensors.items():
        np.testing.assert_array_equal(reader.get_tensor(name), value)
    with tf1.Graph().as_default():
        w = tf1.get_variable("w", [2, 3])
        with tf1.Session() as sess:
            tf1.train.Saver([w]).restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(w), tensors["w"])


def test_tf_restores_what_a_saver_here_saved_and_trains_on(tf1, tmp_path):
    """The model trained here for 3 steps, saved by ``tf.train.Saver``; TF restores every tensor (the partitioned
    table, Adam's slots, the string, the step) into its own build of the model and its next step matches ours."""
    with tf.Graph().as_default():
        model = _build(tf)
        with tf.Session() as sess:
            prefix = _train_and_save(tf, sess, model, str(tmp_path))
            reader = tf.train.load_checkpoint(prefix)
            ours = {name: reader.get_tensor(name) for name, _ in tf.train.list_variables(prefix)}
            sess.run(model["train"])
            our_next_loss = sess.run(model["loss"])  # (fetched with the step, the loss may come before or after it)
    assert tf1.train.latest_checkpoint(str(tmp_path)) == prefix
    reader = tf1.train.load_checkpoint(prefix)
    assert reader.get_variable_to_shape_map() == {name: list(np.shape(v)) for name, v in ours.items()}
    assert reader.get_variable_to_dtype_map()["words"] == tf1.string
    for name, value in ours.items():
        np.testing.assert_array_equal(reader.get_tensor(name), value, err_msg=name)
    with tf1.Graph().as_default():
        model = _build(tf1, partitions=3)  # other parts than were saved: TF reads across the saved slices
        with tf1.Session() as sess:
            tf1.train.Saver().restore(sess, prefix)
            assert sess.run(model["step"]) == 3
            np.testing.assert_array_equal(sess.run(model["table"].as_tensor()), ours["table"])
            sess.run(model["train"])
            tf_next_loss = sess.run(model["loss"])
    np.testing.assert_allclose(tf_next_loss, our_next_loss, rtol=1e-6)


def test_tf_reads_every_dtype_a_saver_here_writes(tf1, tmp_path):
    values = {
        "f16": np.array([1.5, -2.0], np.float16),
        "f64": np.array([[1e300, -0.0]], np.float64),
        "i8": np.array([-128, 127], np.int8),
        "u8": np.array([0, 255], np.uint8),
        "i16": np.array([-3], np.int16),
        "i32": np.int32(-7),
        "i64": np.array([2**62], np.int64),
        "b": np.array([True, False, True]),
        "c64": np.array([1 + 2j], np.complex64),
        "c128": np.array([3 - 4j], np.complex128),
        "s": np.array([[b"a", b"\xff\x00"], [b"", "é".encode()]], dtype=object),
        "empty": np.zeros([0, 3], np.float32),
    }
    with tf.Graph().as_default():
        variables = [tf.Variable(v, name=name) for name, v in values.items()]
        variables.append(tf.Variable(tf.constant([1.0, 2.5], dtype=tf.bfloat16), name="bf16"))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "all"))
    reader = tf1.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    for name, value in values.items():
        assert dtypes[name].as_numpy_dtype == value.dtype or value.dtype == object, name
        np.testing.assert_array_equal(reader.get_tensor(name), value, err_msg=name)
    assert dtypes["bf16"] == tf1.bfloat16
    np.testing.assert_array_equal(reader.get_tensor("bf16").astype(np.float32), [1.0, 2.5])
