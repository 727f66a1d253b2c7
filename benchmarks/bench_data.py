"""tf.data benchmark: pipeline throughput and the seeds' MLP step rate with and without a pipeline, against TF.

Run: ``python benchmarks/bench_data.py [--windows N] [--seconds S] [--only dtf|tf]``

Each library runs in a child process of its own (``--lib dtf`` / ``--lib tf``, TensorFlow as ``tf.compat.v1`` in
graph mode), alternately, ``--windows`` times; every figure is the median over those windows of a timed loop of
at least ``--seconds`` seconds after a warm-up. Measured, in one session (``tf.Session("")``), on the 1,438
training digits of :func:`dtf_notebook.datasets.load_digits_784` (784 floats, int64 label):

* pipeline throughput, elements/s read through ``get_next`` (batch 100):

  - ``slices_map_batch_prefetch``: ``from_tensor_slices((x, y)).repeat().map(scale).batch(100).prefetch(2)``,
    the map vectorized here (one run per batch);
  - ``slices_shuffle_map_batch_prefetch``: the same with ``shuffle(1000)`` before ``repeat``;
  - ``slices_map_per_element``: a map that cannot be vectorized (noise from ``tf.random_uniform``), run per
    element;
  - ``tfrecord_example_map_batch_prefetch``: a TFRecord file of ``tf.train.Example`` records (784 float32 pixels
    as raw bytes, an int64 label) read by ``parse_single_example`` + ``decode_raw``, ``batch(100)``,
    ``prefetch(2)`` (vectorized here: one parse per batch);
  - ``tfrecord_png_map_batch_prefetch``: a TFRecord file of the digits as PNG records (label byte + PNG), parsed
    by ``decode_png`` per element with ``num_parallel_calls=2``, ``batch(100)``, ``prefetch(2)``;

* MLP training steps/s (784-100-10, Adam, batch 100): ``feed_dict`` from numpy batches, against the same model
  fed by ``get_next`` of the shuffled slices pipeline and of the TFRecord ``Example`` pipeline.

Prints one JSON object: ``{"dtf": {...}, "tf": {...}}``.
"""

from __future__ import annotations

import argparse
import io
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


def _library(name: str) -> Any:
    if name == "tf":
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        tf.logging.set_verbosity(tf.logging.ERROR)
        return tf
    import dtf_notebook.compat.v1 as tf

    return tf


def write_png_records(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    """One TFRecord per digit: its label as an ASCII digit, then the 28x28 image as a grey PNG."""
    from PIL import Image

    from dtf_notebook.lib.io.tf_record import TFRecordWriter

    with TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            pixels = np.clip(np.rint(image.reshape(28, 28) * (255 / 16)), 0, 255).astype(np.uint8)
            png = io.BytesIO()
            Image.fromarray(pixels).save(png, format="PNG")
            writer.write(str(int(label)).encode() + png.getvalue())


def write_example_records(path: str, images: np.ndarray, labels: np.ndarray) -> None:
    """One ``tf.train.Example`` per digit: 784 float32 pixels as raw bytes and an int64 label."""
    import dtf_notebook.compat.v1 as dtf
    from dtf_notebook.lib.io.tf_record import TFRecordWriter

    with TFRecordWriter(path) as writer:
        for image, label in zip(images, labels):
            pixels = image.astype(np.float32).tobytes()
            feature = {
                "image_raw": dtf.train.Feature(bytes_list=dtf.train.BytesList(value=[pixels])),
                "label": dtf.train.Feature(int64_list=dtf.train.Int64List(value=[int(label)])),
            }
            writer.write(dtf.train.Example(features=dtf.train.Features(feature=feature)).SerializeToString())


def _rate(run: Callable[[], Any], seconds: float, per_call: int) -> float:
    """Calls per second times ``per_call``, over at least ``seconds`` after a warm-up."""
    for _ in range(20):
        run()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        run()
        calls += 1
    return calls * per_call / (time.perf_counter() - start)


def measure(lib: str, seconds: float, records: str) -> dict[str, float]:
    """Every figure of one window, for library ``lib``."""
    from dtf_notebook.datasets import batches, load_digits_784

    tf = _library(lib)
    x, y, _, _ = load_digits_784(seed=0)

    def scale(a, b):
        return a * (1 / 16.0), b

    def per_element(a, b):  # a random op per element: it cannot be vectorized
        return a * (1 / 16.0) + tf.random_uniform([784], maxval=0.01), b

    def parse_example(record):
        features = tf.parse_single_example(
            record, {"image_raw": tf.FixedLenFeature([], tf.string), "label": tf.FixedLenFeature([], tf.int64)}
        )
        return tf.reshape(tf.decode_raw(features["image_raw"], tf.float32), [784]), features["label"]

    def parse_png(record):
        label = tf.strings.to_number(tf.strings.substr(record, 0, 1), tf.int64)
        image = tf.image.decode_png(tf.strings.substr(record, 1, 1 << 20), channels=1)
        return tf.reshape(tf.cast(image, tf.float32) * (16 / 255), [784]), label

    pipelines = {
        "slices_map_batch_prefetch": lambda: (
            tf.data.Dataset.from_tensor_slices((x, y)).repeat().map(scale).batch(BATCH).prefetch(2)
        ),
        "slices_shuffle_map_batch_prefetch": lambda: (
            tf.data.Dataset.from_tensor_slices((x, y))
            .shuffle(1000, seed=1)
            .repeat()
            .map(scale)
            .batch(BATCH)
            .prefetch(2)
        ),
        "slices_map_per_element": lambda: (
            tf.data.Dataset.from_tensor_slices((x, y)).repeat().map(per_element).batch(BATCH).prefetch(2)
        ),
        "tfrecord_example_map_batch_prefetch": lambda: (
            tf.data.TFRecordDataset(records + ".examples").repeat().map(parse_example).batch(BATCH).prefetch(2)
        ),
        "tfrecord_png_map_batch_prefetch": lambda: (
            tf.data.TFRecordDataset(records + ".png")
            .repeat()
            .map(parse_png, num_parallel_calls=2)
            .batch(BATCH)
            .prefetch(2)
        ),
    }
    out: dict[str, float] = {}
    for name, build in pipelines.items():
        with tf.Graph().as_default():
            next_batch = build().make_one_shot_iterator().get_next()
            with tf.Session() as sess:
                out[f"{name}_elements_per_s"] = _rate(lambda t=next_batch: sess.run(t), seconds, BATCH)

    def model(tf: Any, xs: Any, ys: Any) -> Any:
        from _layout import mlp_loss  # (benchmarks/ is on the path of a script run from it)

        return tf.train.AdamOptimizer(1e-3).minimize(mlp_loss(tf, xs, ys))

    with tf.Graph().as_default():
        tf.set_random_seed(0)
        xs, ys = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.int64, [None])
        train = model(tf, xs, ys)
        stream = batches(x, y, BATCH, seed=0)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())

            def step() -> None:
                xb, yb = next(stream)
                sess.run(train, {xs: xb, ys: yb})

            out["mlp_feed_dict_steps_per_s"] = _rate(step, seconds, 1)
    for name in ("slices_shuffle_map_batch_prefetch", "tfrecord_example_map_batch_prefetch"):
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            xs, ys = pipelines[name]().make_one_shot_iterator().get_next()
            train = model(tf, xs, ys)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out[f"mlp_{name}_steps_per_s"] = _rate(lambda t=train: sess.run(t), seconds, 1)
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=3, help="alternating windows per library (default 3)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per timed loop (default 2)")
    parser.add_argument("--only", choices=["dtf", "tf"], help="measure one library only")
    parser.add_argument("--lib", choices=["dtf", "tf"], help=argparse.SUPPRESS)  # a child's one window
    parser.add_argument("--records", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.lib:
        print(json.dumps(measure(args.lib, args.seconds, args.records)))
        return {}
    from dtf_notebook.datasets import load_digits_784

    libs = [args.only] if args.only else ["dtf", "tf"]
    windows: dict[str, list[dict[str, float]]] = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory() as tmp:
        records = os.path.join(tmp, "digits.tfrecord")
        x, y, _, _ = load_digits_784(seed=0)
        write_example_records(records + ".examples", x, y)
        write_png_records(records + ".png", x, y)
        for _ in range(args.windows):
            for lib in libs:
                command = [sys.executable, __file__, "--lib", lib, "--seconds", str(args.seconds), "--records", records]
                result = subprocess.run(command, capture_output=True, text=True, check=True)
                windows[lib].append(json.loads(result.stdout.strip().splitlines()[-1]))
    report = {
        lib: {key: round(statistics.median(w[key] for w in runs), 1) for key in runs[0]}
        for lib, runs in windows.items()
    }
    report["cpus"] = os.cpu_count()
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
