"""Queue-based input pipeline benchmark: throughput of TF1 reader/queue pipelines and the seeds' MLP step rate with
and without one, here and in TensorFlow, in one process and on a 1 ps + 1 worker cluster.

Run: ``python benchmarks/bench_input_pipeline.py [--windows N] [--seconds S] [--only dtf|tf] [--no-cluster]``

Each library runs in a child process of its own (``--lib dtf`` / ``--lib tf``, TensorFlow as ``tf.compat.v1`` in
graph mode), alternately, ``--windows`` times; every figure is the median over the windows of a timed loop of at
least ``--seconds`` seconds after a warm-up. The data: the 1,438 training digits of
:func:`dtf_notebook.datasets.load_digits_784` as ``tf.train.Example`` records (784 floats ``x``, int64 ``y``) in
one TFRecord file. Measured:

* examples/s dequeued in batches of 100 from ``shuffle_batch(capacity=2000, min_after_dequeue=500)`` fed by

  - ``single_t1`` / ``single_t2``: ``string_input_producer`` -> ``TFRecordReader.read`` -> ``parse_single_example``,
    one example per enqueue, 1 or 2 enqueue threads;
  - ``many_t1`` / ``many_t2``: ``read_up_to(100)`` -> ``parse_example`` -> ``enqueue_many``, 100 per enqueue;

* MLP training steps/s (784-100-10, Adam, batch 100): ``feed_dict`` from numpy batches against the model reading
  ``shuffle_batch`` of the ``many_t2`` and ``single_t2`` pipelines (no ``feed_dict``), and the shuffle queue's fill
  above ``min_after_dequeue`` at those steps (median and 10th percentile over 200 steps; TF's
  ``fraction_over_500_of_1500_full`` summary): near 1 the pipeline keeps ahead of training, near 0 training waits
  for it;
* with the cluster (default): the same on a 1 ps + 1 worker cluster, variables on the ps, the model and the whole
  pipeline on the worker, the session on the worker. Here the tasks are ``LocalCluster`` processes and the client
  (which runs the queue runners' threads, each enqueue a step of the worker) is this process; TensorFlow's tasks
  are two in-process ``tf.train.Server``s.

Prints one JSON object: ``{"dtf": {...}, "tf": {...}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

BATCH = 100
FILL_STEPS = 200  # training steps over which the shuffle queue's fill is sampled
PIPELINES = ("single_t1", "single_t2", "many_t1", "many_t2")


def _library(name: str) -> Any:
    if name == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        tf.logging.set_verbosity(tf.logging.ERROR)
        return tf
    import dtf_notebook.compat.v1 as tf

    return tf


def write_records(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    """One ``tf.train.Example`` per digit: ``x`` (784 floats) and ``y`` (int64)."""
    import dtf_notebook.compat.v1 as dtf

    with dtf.python_io.TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            feature = {
                "x": dtf.train.Feature(float_list=dtf.train.FloatList(value=image)),
                "y": dtf.train.Feature(int64_list=dtf.train.Int64List(value=[int(label)])),
            }
            writer.write(dtf.train.Example(features=dtf.train.Features(feature=feature)).SerializeToString())


def _rate(run: Callable[[], Any], seconds: float, per_call: int) -> float:
    for _ in range(10):
        run()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        run()
        calls += 1
    return calls * per_call / (time.perf_counter() - start)


def pipeline(tf: Any, records: str, kind: str) -> tuple[Any, Any]:
    """``(x, y)`` batches of 100 from a shuffle_batch fed by the pipeline ``kind`` (see the module docstring)."""
    mode, threads = kind.split("_t")
    files = tf.train.string_input_producer([records])
    reader = tf.TFRecordReader()
    features = {"x": tf.FixedLenFeature([784], tf.float32), "y": tf.FixedLenFeature([], tf.int64)}
    if mode == "single":
        _, record = reader.read(files)
        parsed = tf.parse_single_example(record, features)
        many = False
    else:
        _, chunk = reader.read_up_to(files, BATCH)
        parsed = tf.parse_example(chunk, features)
        many = True
    return tf.train.shuffle_batch(
        [parsed["x"], parsed["y"]],
        BATCH,
        capacity=2000,
        min_after_dequeue=500,
        num_threads=int(threads),
        enqueue_many=many,
    )


def model(tf: Any, xs: Any, ys: Any, ps: str | None, worker: str | None) -> Any:
    """The seeds' 784-100-10 network (variables on ``ps``, the rest on ``worker``); returns its Adam train op."""
    with tf.device(ps):
        w1 = tf.get_variable("weights_1", [784, 100])
        b1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
        w2 = tf.get_variable("weights_2", [100, 10])
        b2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())
    with tf.device(worker):
        logits = tf.matmul(tf.nn.relu(tf.matmul(xs, w1) + b1), w2) + b2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=logits))
        return tf.train.AdamOptimizer(1e-3).minimize(loss)


def _measure_target(tf: Any, target: str, records: str, seconds: float, distributed: bool) -> dict[str, float]:
    from dtf_notebook.datasets import batches, load_digits_784

    ps, worker = ("/job:ps/task:0", "/job:worker/task:0") if distributed else (None, None)
    out: dict[str, float] = {}

    def with_runners(graph: Any, fn: Callable[[Any], None]) -> None:
        with tf.Session(target, graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                fn(sess)
            finally:
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)

    for kind in PIPELINES:
        graph = tf.Graph()
        with graph.as_default(), tf.device(worker):
            xb, _ = pipeline(tf, records, kind)
        with_runners(
            graph,
            lambda sess, t=xb, k=kind: out.__setitem__(
                f"{k}_examples_per_s", _rate(lambda: sess.run(t.op), seconds, BATCH)
            ),
        )

    x, y, _, _ = load_digits_784(seed=0)
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        xs, ys = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.int64, [None])
        train = model(tf, xs, ys, ps, worker)
    stream = batches(x, y, BATCH, seed=0)

    def feed_steps(sess: Any) -> None:
        def step() -> None:
            xb, yb = next(stream)
            sess.run(train, {xs: xb, ys: yb})

        out["mlp_feed_dict_steps_per_s"] = _rate(step, seconds, 1)

    with_runners(graph, feed_steps)
    for kind in ("many_t2", "single_t2"):
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(0)
            with tf.device(worker):
                xb, yb = pipeline(tf, records, kind)
            train_op = model(tf, xb, yb, ps, worker)
        fill = _fill_tensor(graph)

        def pipeline_steps(sess: Any, t: Any = train_op, k: str = kind, fill: Any = fill) -> None:
            out[f"mlp_pipeline_{k}_steps_per_s"] = _rate(lambda: sess.run(t), seconds, 1)
            fills = [sess.run([t, fill])[1] for _ in range(FILL_STEPS)]
            out[f"mlp_pipeline_{k}_fill_median"] = float(np.median(fills))
            out[f"mlp_pipeline_{k}_fill_p10"] = float(np.percentile(fills, 10))

        with_runners(graph, pipeline_steps)
    return out


def _fill_tensor(graph: Any) -> Any:
    """The shuffle queue's fill above ``min_after_dequeue`` (0: a dequeue waits for the pipeline, 1: full), the value
    TF's ``shuffle_batch`` summarises as ``fraction_over_<min>_of_<rest>_full``: TF's own measure of whether the
    input pipeline keeps up."""
    (summary,) = [op for op in graph.get_operations() if op.type == "ScalarSummary" and "fraction_over" in op.name]
    return summary.inputs[1]


def _tf_cluster(tf: Any) -> tuple[str, Any]:
    from dtf_notebook.distributed.local_process import free_port

    spec = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]})
    servers = [tf.train.Server(spec, job_name=job, task_index=0) for job in ("ps", "worker")]
    return servers[1].target, servers


def measure(lib: str, seconds: float, records: str, cluster: bool) -> dict[str, float]:
    """Every figure of one window, for library ``lib``."""
    tf = _library(lib)
    out = {f"local_{k}": v for k, v in _measure_target(tf, "", records, seconds, False).items()}
    if not cluster:
        return out
    if lib == "tf":
        target, servers = _tf_cluster(tf)
        out.update({f"cluster_{k}": v for k, v in _measure_target(tf, target, records, seconds, True).items()})
        del servers
        return out
    from dtf_notebook.notebook.local_cluster import LocalCluster

    local = LocalCluster(jobs={"ps": 1, "worker": 1}).start()
    try:
        target = local.target("worker", 0)
        out.update({f"cluster_{k}": v for k, v in _measure_target(tf, target, records, seconds, True).items()})
    finally:
        local.stop()
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=2, help="alternating windows per library (default 2)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per timed loop (default 2)")
    parser.add_argument("--only", choices=["dtf", "tf"], help="measure one library only")
    parser.add_argument("--no-cluster", action="store_true", help="skip the 1 ps + 1 worker figures")
    parser.add_argument("--lib", choices=["dtf", "tf"], help=argparse.SUPPRESS)  # a child's one window
    parser.add_argument("--records", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.lib:
        figures = measure(args.lib, args.seconds, args.records, not args.no_cluster)
        print(json.dumps(figures))
        return figures
    from dtf_notebook.datasets import load_digits_784

    libs = [args.only] if args.only else ["dtf", "tf"]
    results: dict[str, list[dict[str, float]]] = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory() as tmp:
        records = os.path.join(tmp, "digits.tfrecord")
        x, y, _, _ = load_digits_784(seed=0)
        write_records(records, x, y)
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        for _ in range(args.windows):
            for lib in libs:
                command = [sys.executable, __file__, "--lib", lib, "--records", records, "--seconds", str(args.seconds)]
                if args.no_cluster:
                    command.append("--no-cluster")
                done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
                if done.returncode != 0:
                    raise RuntimeError(f"{lib} window failed:\n{done.stderr[-3000:]}")
                results[lib].append(json.loads(done.stdout.strip().splitlines()[-1]))
    summary = {
        lib: {k: round(statistics.median(w[k] for w in windows), 1) for k in windows[0]}
        for lib, windows in results.items()
    }
    print(json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
