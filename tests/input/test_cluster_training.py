"""The seeds' MLP (784-100-10) trained on a 1 ps + 1 worker cluster from a TFRecord file, through a queue-based input
pipeline on the worker: no ``feed_dict`` in training, and no training data passing through the client."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import load_digits_784
from dtf_notebook.framework.graph_proto import sent_bytes
from tests.distributed.cluster_util import LocalCluster

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

PS, WORKER = "/job:ps/task:0", "/job:worker/task:0"


def _write_digits(path: str, images, labels) -> None:
    with tf.python_io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            features = tf.train.Features(
                feature={
                    "x": tf.train.Feature(float_list=tf.train.FloatList(value=image)),
                    "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
                }
            )
            writer.write(tf.train.Example(features=features).SerializeToString())


def test_mlp_trains_on_a_cluster_from_a_tfrecord_file_through_shuffle_batch(tmp_path):
    x_train, y_train, x_test, y_test = load_digits_784(seed=0)
    records = str(tmp_path / "digits.tfrecord")
    _write_digits(records, x_train, y_train)

    with tf.Graph().as_default() as graph:
        tf.set_random_seed(0)
        with tf.device(WORKER):  # the whole pipeline lives on the worker, as its queues' and readers' state
            files = tf.train.string_input_producer([records], seed=1)
            reader = tf.TFRecordReader()
            _, chunk = reader.read_up_to(files, 100)
            parsed = tf.parse_example(
                chunk, {"x": tf.FixedLenFeature([784], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}
            )
            xb, yb = tf.train.shuffle_batch(
                [parsed["x"], parsed["y"]],
                100,
                capacity=2000,
                min_after_dequeue=500,
                num_threads=2,
                enqueue_many=True,
                seed=2,
            )
        with tf.device(PS):
            w1 = tf.get_variable("weights_1", [784, 100])
            b1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
            w2 = tf.get_variable("weights_2", [100, 10])
            b2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())

        def logits(x):
            return tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2

        with tf.device(WORKER):
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=logits(xb)))
            x_eval, y_eval = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.int64, [None])
            accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits(x_eval), 1), y_eval), tf.float32))
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()

    cluster = LocalCluster(jobs={"ps": 1, "worker": 1}).start()
    try:
        with tf.Session(cluster.target("worker", 0), graph=graph) as sess:
            sess.run(init)
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                losses = [sess.run([train_op, loss])[1] for _ in range(300)]  # no feed_dict
                # A read and parse of the pipeline (its enqueue would wait: the queue is full), traced: it runs on
                # the worker, sending no tensor between tasks and none to the client.
                options, metadata = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), tf.RunMetadata()
                sess.run(parsed["x"].op, options=options, run_metadata=metadata)
                pipeline_devices = {
                    s.node_name.split("/")[-1]: dev.device
                    for dev in metadata.step_stats.dev_stats
                    for s in dev.node_stats
                }
                sent = list(sent_bytes(metadata))
                # A training step: the batch comes out of the queue on the worker; only parameters and their
                # updates cross between ps and worker.
                metadata = tf.RunMetadata()
                sess.run(train_op, options=options, run_metadata=metadata)
                step_sends = {tensor_name for tensor_name, _ in sent_bytes(metadata)}
                test_accuracy = sess.run(accuracy, {x_eval: x_test, y_eval: y_test})
                produced = sess.run(reader.num_records_produced())
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=30)
    finally:
        cluster.stop()

    assert sum(losses[-20:]) / 20 < 0.5 < losses[0]
    assert test_accuracy > 0.85
    assert produced >= 300 * 100  # every example the model saw was read by the worker's reader
    assert {"ReaderReadUpToV2", "ParseExampleV2"} <= set(pipeline_devices)
    assert all(d.startswith("/job:worker/") for d in pipeline_devices.values())
    assert sent == []
    # The step moves parameters to the worker and gradients to the ps; no example crosses between tasks.
    assert {t for t in step_sends if t.endswith("/read:0")} == {
        f"{v}/read:0" for v in ("weights_1", "biases_1", "weights_2", "biases_2")
    }
    assert not [t for t in step_sends if any(k in t for k in ("shuffle_batch", "Parse", "Reader", "input_producer"))]
