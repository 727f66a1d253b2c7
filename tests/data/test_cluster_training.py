"""The seeds' 784-100-10 MLP trained from a TFRecord file through ``tf.data`` on a 1 ps + 1 worker local cluster:
the iterator, and so the file reading and parsing, live on the worker task (the client only fetches the loss)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import load_digits_784
from dtf_notebook.lib.io.tf_record import TFRecordWriter
from tests.distributed.cluster_util import LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

BATCH = 100


def write_digit_records(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    """One ``tf.train.Example`` per digit: its 784 float32 pixels as raw bytes and its int64 label."""
    with TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            feature = {
                "image_raw": tf.train.Feature(
                    bytes_list=tf.train.BytesList(value=[image.astype(np.float32).tobytes()])
                ),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
            }
            writer.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())


def parse_record(record):
    """A record back to (784 float32 pixels, int64 label), inside the pipeline (vectorized per batch)."""
    features = tf.parse_single_example(
        record, {"image_raw": tf.FixedLenFeature([], tf.string), "label": tf.FixedLenFeature([], tf.int64)}
    )
    return tf.reshape(tf.decode_raw(features["image_raw"], tf.float32), [784]), features["label"]


def build_model(train_files, seed=0):
    """The MLP with its parameters on ps and its input pipeline and computation on the worker."""
    tf.set_random_seed(seed)
    with tf.device("/job:ps/task:0"):
        w1 = tf.get_variable("weights_1", [784, 100])
        b1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("weights_2", [100, 10])
        b2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())
        global_step = tf.train.get_or_create_global_step()
    with tf.device("/job:worker/task:0"):
        dataset = (
            tf.data.TFRecordDataset(train_files)
            .map(parse_record, num_parallel_calls=2)
            .shuffle(500, seed=seed)
            .repeat()
            .batch(BATCH)
            .prefetch(2)
        )
        iterator = dataset.make_one_shot_iterator()
        x, y = iterator.get_next()
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=global_step)
    return {"iterator": iterator, "x": x, "loss": loss, "train_op": train_op, "logits": logits}


def test_mlp_trains_from_tfrecords_with_the_iterator_on_the_worker(tmp_path):
    x_train, y_train, x_test, y_test = load_digits_784(seed=0)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    path = str(data_dir / "train.tfrecord")
    write_digit_records(path, x_train, y_train)

    # The tasks may read only the data directory: the records are read by the worker itself.
    with LocalCluster(jobs={"ps": 1, "worker": 1}, file_roots=[str(data_dir)]) as cluster, tf.Graph().as_default():
        model = build_model([path])
        assert model["iterator"]._iterator_resource.op.device.startswith("/job:worker/task:0")
        assert model["x"].op.device == model["iterator"]._iterator_resource.op.device
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([model["train_op"], model["loss"]])[1] for _ in range(150)]
            test_logits = sess.run(model["logits"], {model["x"]: x_test})
    assert np.mean(losses[-20:]) < 0.5 * np.mean(losses[:5])
    accuracy = float(np.mean(np.argmax(test_logits, 1) == y_test))
    assert accuracy > 0.8


def test_a_worker_cannot_read_records_outside_its_file_roots(tmp_path):
    (tmp_path / "allowed").mkdir()
    outside = str(tmp_path / "outside.tfrecord")
    with TFRecordWriter(outside) as writer:
        writer.write(b"7")
    with LocalCluster(jobs={"worker": 1}, file_roots=[str(tmp_path / "allowed")]) as cluster, tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            record = tf.data.TFRecordDataset(outside).make_one_shot_iterator().get_next()
        with tf.Session(cluster.target("worker", 0)) as sess, pytest.raises(tf.errors.PermissionDeniedError):
            sess.run(record)


def test_initializable_and_feedable_iterators_keep_their_place_on_the_worker():
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:0")):
            n = tf.placeholder(tf.int64, [])
            offset = tf.get_variable("offset", [], tf.int64, initializer=tf.constant_initializer(100))
            it = tf.data.Dataset.range(n).map(lambda x: x + offset).make_initializable_iterator()
            x = it.get_next()
            handle = tf.placeholder(tf.string, [])
            y = tf.data.Iterator.from_string_handle(handle, tf.int64, tf.TensorShape([])).get_next()
        assert offset.op.device.startswith("/job:ps") and it._iterator_resource.op.device.startswith("/job:worker")
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(it.initializer, {n: 3})  # the fed size and the ps variable's value travel to the worker
            h = sess.run(it.string_handle())
            assert [int(sess.run(x)), int(sess.run(y, {handle: h})), int(sess.run(x))] == [100, 101, 102]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(x)


def test_sparse_features_are_parsed_and_batched_on_the_worker(tmp_path):
    """VarLenFeature tags parsed and batched by the worker's pipeline reach the client as a SparseTensorValue, and
    the same graph gives the same values in a local session."""
    path = str(tmp_path / "tags.tfrecord")
    with TFRecordWriter(path) as writer:
        for i in range(5):
            tags = tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(i % 3))))
            example = tf.train.Example(features=tf.train.Features(feature={"tags": tags}))
            writer.write(example.SerializeToString())

    def read(target):
        with tf.Graph().as_default():
            with tf.device("/job:worker/task:0" if target else None):
                features = {"tags": tf.VarLenFeature(tf.int64)}
                ds = tf.data.TFRecordDataset(path).map(lambda r: tf.parse_single_example(r, features)["tags"])
                tags = ds.batch(2).make_one_shot_iterator().get_next()
                total = tf.reduce_sum(tf.sparse.to_dense(tags), axis=1)
            with tf.Session(target) as sess:
                return [sess.run([tags, total]) for _ in range(3)]

    with LocalCluster(jobs={"worker": 1}, file_roots=[str(tmp_path)]) as cluster:
        remote = read(cluster.target("worker", 0))
    local = read("")
    assert type(remote[0][0]).__name__ == "SparseTensorValue"
    assert remote[0][0].dense_shape.tolist() == [2, 1]
    for (sparse_r, total_r), (sparse_l, total_l) in zip(remote, local):
        for a, b in zip(sparse_r, sparse_l):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(total_r, total_l)
