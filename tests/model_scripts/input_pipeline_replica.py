# ruff: noqa: UP031  (TF1 program style, printf-formatted as its models)
"""Distributed linear regression trained from CSV or TFRecord files, through queues or through tf.data.

A program in the shape of TensorFlow 1's "Reading data" how-to and the "Reading data" examples of Hands-on Machine
Learning (chapter 12), run between-graph as one process per task like TF's mnist_replica.py: --job_name,
--task_index, --ps_hosts and --worker_hosts flags, the model's variables put on the ps task by
replica_device_setter, and the input pipeline on the worker's own CPU:

- queues (--input=queue): string_input_producer over the files, a TextLineReader and decode_csv (CSV with a header
  line) or a TFRecordReader and parse_single_example (tf.train.Example records), then tf.train.batch (no shuffling)
  or tf.train.shuffle_batch, run by queue runners under a Coordinator until the epochs run out;
- tf.data (--input=dataset): TextLineDataset(...).skip(1).map(decode_csv) per file, or
  TFRecordDataset.map(parse_single_example), sharded by worker, optionally shuffled with a seed, batched and
  repeated, read through a one-shot iterator until OutOfRangeError.

Task 0 (the chief) initialises the model; the other workers wait for it (SessionManager) and initialise only their
local variables (the epoch counters of their producers). Each worker prints its loss every --log_every steps and the
model's final weights and bias. Written against ``tensorflow.compat.v1``; for the test, this file imports
dtf_notebook (the test runs it with ``import tensorflow.compat.v1 as tf`` too), and the files are small synthetic
ones the test writes.
"""

import glob

import dtf_notebook.compat.v1 as tf

tf.disable_v2_behavior()

flags = tf.app.flags
flags.DEFINE_string("job_name", None, "job name: worker or ps")
flags.DEFINE_integer("task_index", None, "Worker task index, >= 0; task 0 is the chief, which initialises")
flags.DEFINE_string("ps_hosts", "localhost:2222", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "localhost:2223", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("train_files", None, "Glob of the training files: *.csv (with a header line) or *.tfrecord")
flags.DEFINE_enum("input", "queue", ["queue", "dataset"], "Input pipeline: queue runners or tf.data")
flags.DEFINE_integer("num_features", 4, "Features per example (the CSV's last column is the target)")
flags.DEFINE_integer("batch_size", 10, "Training batch size")
flags.DEFINE_integer("num_epochs", 5, "Passes over each worker's files")
flags.DEFINE_float("learning_rate", 0.1, "Learning rate")
flags.DEFINE_boolean("shuffle", False, "Shuffle the files and the examples")
flags.DEFINE_integer("seed", 42, "Seed of the shuffles")
flags.DEFINE_integer("log_every", 5, "Print the loss every this many local steps")

FLAGS = flags.FLAGS


def decode_csv_line(line):
    record_defaults = [[0.0]] * (FLAGS.num_features + 1)
    columns = tf.decode_csv(line, record_defaults=record_defaults)
    return tf.stack(columns[:-1]), tf.stack(columns[-1:])


def parse_example(serialized):
    features = tf.parse_single_example(
        serialized,
        features={
            "x": tf.FixedLenFeature([FLAGS.num_features], tf.float32),
            "y": tf.FixedLenFeature([1], tf.float32),
        },
    )
    return features["x"], features["y"]


def queue_inputs(filenames):
    """TF1's queue-based reading: filenames -> reader -> decoder -> batching queue."""
    filename_queue = tf.train.string_input_producer(
        filenames, num_epochs=FLAGS.num_epochs, shuffle=FLAGS.shuffle, seed=FLAGS.seed
    )
    if filenames[0].endswith(".csv"):
        reader = tf.TextLineReader(skip_header_lines=1)
        _, value = reader.read(filename_queue)
        x, y = decode_csv_line(value)
    else:
        reader = tf.TFRecordReader()
        _, serialized = reader.read(filename_queue)
        x, y = parse_example(serialized)
    if FLAGS.shuffle:
        min_after_dequeue = 50
        return tf.train.shuffle_batch(
            [x, y],
            batch_size=FLAGS.batch_size,
            capacity=min_after_dequeue + 3 * FLAGS.batch_size,
            min_after_dequeue=min_after_dequeue,
            num_threads=2,
            seed=FLAGS.seed,
        )
    return tf.train.batch([x, y], batch_size=FLAGS.batch_size, num_threads=1, capacity=4 * FLAGS.batch_size)


def dataset_inputs(filenames, num_workers):
    """The same files through tf.data."""
    if filenames[0].endswith(".csv"):
        dataset = tf.data.Dataset.from_tensor_slices(filenames)
        dataset = dataset.flat_map(lambda filename: tf.data.TextLineDataset(filename).skip(1))
        dataset = dataset.map(decode_csv_line)
    else:
        dataset = tf.data.TFRecordDataset(filenames).map(parse_example, num_parallel_calls=2)
    dataset = dataset.shard(num_workers, FLAGS.task_index)
    if FLAGS.shuffle:
        dataset = dataset.shuffle(buffer_size=100, seed=FLAGS.seed)
    dataset = dataset.batch(FLAGS.batch_size).repeat(FLAGS.num_epochs).prefetch(1)
    return dataset.make_one_shot_iterator().get_next()


def main(unused_argv):
    if not FLAGS.job_name:
        raise ValueError("Must specify an explicit `job_name`")
    if FLAGS.task_index is None:
        raise ValueError("Must specify an explicit `task_index`")
    ps_spec = FLAGS.ps_hosts.split(",")
    worker_spec = FLAGS.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_spec, "worker": worker_spec})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()

    is_chief = FLAGS.task_index == 0
    worker_device = "/job:worker/task:%d/cpu:0" % FLAGS.task_index
    filenames = sorted(glob.glob(FLAGS.train_files))
    if not filenames:
        raise ValueError("No files match --train_files=%s" % FLAGS.train_files)

    # The input pipeline stays on this worker: its queues, readers and epoch counters are its own.
    with tf.device(worker_device):
        if FLAGS.input == "queue":
            # Each worker reads its own share of the files.
            x, y = queue_inputs(filenames[FLAGS.task_index :: len(worker_spec)])
        else:
            x, y = dataset_inputs(filenames, len(worker_spec))

    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        weights = tf.Variable(tf.zeros([FLAGS.num_features, 1]), name="weights")
        bias = tf.Variable(tf.zeros([1]), name="bias")
        predictions = tf.matmul(x, weights) + bias
        loss = tf.reduce_mean(tf.square(predictions - y), name="mse")
        optimizer = tf.train.GradientDescentOptimizer(FLAGS.learning_rate)
        train_op = optimizer.minimize(loss, global_step=global_step)
        init_op = tf.global_variables_initializer()
        local_init_op = tf.local_variables_initializer()

    session_manager = tf.train.SessionManager(
        local_init_op=local_init_op,
        ready_op=tf.report_uninitialized_variables(tf.global_variables()),
        recovery_wait_secs=1,
    )
    # A worker talks to the ps and to itself only, so it need not wait for the other workers (nor they for it).
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % FLAGS.task_index])
    if is_chief:
        sess = session_manager.prepare_session(server.target, init_op=init_op, config=config)
    else:
        sess = session_manager.wait_for_session(server.target, config=config)
    print("Worker %d: session ready" % FLAGS.task_index)

    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    local_step = 0
    try:
        while not coord.should_stop():
            _, loss_value = sess.run([train_op, loss])
            local_step += 1
            if local_step % FLAGS.log_every == 0:
                print("Worker %d: step %d, loss = %.7g" % (FLAGS.task_index, local_step, loss_value))
    except tf.errors.OutOfRangeError:
        print("Worker %d: done training, epoch limit reached after %d steps" % (FLAGS.task_index, local_step))
    finally:
        coord.request_stop()
    coord.join(threads)

    final_weights, final_bias, step = sess.run([weights, bias, global_step])
    print("Worker %d: global step %d" % (FLAGS.task_index, step))
    print("Worker %d: weights = %s" % (FLAGS.task_index, " ".join("%.7g" % w for w in final_weights.ravel())))
    print("Worker %d: bias = %.7g" % (FLAGS.task_index, final_bias[0]))
    sess.close()


if __name__ == "__main__":
    tf.app.run()
