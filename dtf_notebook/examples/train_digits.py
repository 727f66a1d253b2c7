"""Main job: train the classic TF1 784-100-10 network on scikit-learn's bundled digits.

This is a plain TensorFlow 1.x script. The only difference from one written for TensorFlow itself is the import
line, ``import dtf_notebook.compat.v1 as tf``: the graph is built with the TF1 API and every op is executed by
PyTorch.

The network: ``x`` (batch x 784) -> ``relu(x @ weights_1 + biases_1)`` (100 units) -> ``logits`` (10 classes),
trained on mean sparse softmax cross-entropy with Adam (default), plain SGD or momentum. The data are the 1,797
8x8 digits that ship inside scikit-learn, up-sampled to MNIST's 28x28 (see
:func:`dtf_notebook.datasets.load_digits_784`), split 80/20 into train and test sets.

Run it::

    python3 -m dtf_notebook.examples.train_digits                  # 600 steps of Adam, batch 100
    python3 -m dtf_notebook.examples.train_digits --optimizer sgd --learning-rate 0.1 --steps 1000
    python3 -m dtf_notebook.examples.train_digits --local-cluster   # ps + worker processes, session on the worker

It prints ``step  loss  train-acc`` every 100 steps (loss and accuracy of that step's batch), then the loss and
accuracy on the held-out test split, and exits with status 1 if the test accuracy is below ``--min-accuracy``
(default 0.85; the defaults reach about 0.95). From Python, :func:`main` returns the final metrics::

    from dtf_notebook.examples import train_digits
    metrics = train_digits.main(["--steps", "200"])
    metrics["test_accuracy"]
"""

from __future__ import annotations

import argparse
import sys
import time

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784
from dtf_notebook.examples.common import print_test_metrics, run_cli

DEFAULT_LEARNING_RATES = {"sgd": 0.1, "momentum": 0.05, "adam": 1e-3}
MOMENTUM = 0.9
LOG_EVERY = 100


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring).

    Example:
        >>> args = parse_args(["--optimizer", "sgd", "--steps", "50"])
        >>> args.optimizer, args.steps, args.learning_rate, args.batch_size
        ('sgd', 50, None, 100)
    """
    parser = argparse.ArgumentParser(
        prog="python3 -m dtf_notebook.examples.train_digits",
        description="Train a 784-100-10 TF1-style network on the bundled digits data set.",
    )
    parser.add_argument("--steps", type=int, default=600, help="training steps (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per step (default: %(default)s)")
    parser.add_argument(
        "--optimizer", choices=sorted(DEFAULT_LEARNING_RATES), default="adam", help="(default: %(default)s)"
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=None,
        help="default: " + ", ".join(f"{k} {v:g}" for k, v in DEFAULT_LEARNING_RATES.items()),
    )
    parser.add_argument("--seed", type=int, default=0, help="graph-level and data seed (default: %(default)s)")
    parser.add_argument(
        "--local-cluster",
        action="store_true",
        help="start a ps task and a worker task as separate processes on this machine and train on them",
    )
    parser.add_argument(
        "--target", default="", help="train on a running cluster through this task (zmq://host:port or grpc://...)"
    )
    parser.add_argument(
        "--min-accuracy",
        type=float,
        default=0.85,
        help="exit with status 1 when the final test accuracy is below this (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error("--steps must be >= 0")
    if args.batch_size <= 0:
        parser.error("--batch-size must be > 0")
    return args


def make_optimizer(name: str, learning_rate: float):
    """The TF1 optimizer named ``name`` (``sgd``, ``momentum`` or ``adam``) at ``learning_rate``.

    Example:
        >>> type(make_optimizer("momentum", 0.05)).__name__
        'MomentumOptimizer'
    """
    if name == "sgd":
        return tf.train.GradientDescentOptimizer(learning_rate)
    if name == "momentum":
        return tf.train.MomentumOptimizer(learning_rate, momentum=MOMENTUM)
    if name == "adam":
        return tf.train.AdamOptimizer(learning_rate)
    raise ValueError(f"unknown optimizer {name!r}")


def main(argv: list[str] | None = None) -> dict:
    """Build the graph, train, evaluate on the test split and return the final metrics.

    Returns a dict with ``test_loss``, ``test_accuracy``, ``train_loss`` and ``train_accuracy`` (of the last
    training batch), ``global_step``, ``steps``, ``optimizer``, ``learning_rate`` and ``seconds`` (training time).

    Example:
        >>> metrics = main(["--steps", "0"])  # doctest: +ELLIPSIS
        Training 784-100-10 on digits: 1438 train / 359 test examples, adam lr=0.001, batch 100, 0 steps, seed 0
        ...
        >>> metrics["global_step"], metrics["optimizer"], 0.0 <= metrics["test_accuracy"] <= 1.0
        (0, 'adam', True)
    """
    args = parse_args(argv)
    learning_rate = args.learning_rate if args.learning_rate is not None else DEFAULT_LEARNING_RATES[args.optimizer]
    x_train, y_train, x_test, y_test = load_digits_784(seed=args.seed)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)

        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")

        # On a cluster the parameters live on the ps task and the model computes on the worker task.
        distributed = bool(args.target or args.local_cluster)
        with tf.device("/job:ps/task:0" if distributed else None):
            weights_1 = tf.get_variable("weights_1", [784, 100])
            biases_1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
            weights_2 = tf.get_variable("weights_2", [100, 10])
            biases_2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())

        with tf.device("/job:worker/task:0" if distributed else None):
            hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
            logits = tf.matmul(hidden, weights_2) + biases_2

        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

        global_step = tf.train.get_or_create_global_step()
        train_op = make_optimizer(args.optimizer, learning_rate).minimize(loss, global_step=global_step)
        init_op = tf.global_variables_initializer()

    print(
        f"Training 784-100-10 on digits: {len(x_train)} train / {len(x_test)} test examples, "
        f"{args.optimizer} lr={learning_rate:g}, batch {args.batch_size}, {args.steps} steps, seed {args.seed}"
    )
    stream = batches(x_train, y_train, args.batch_size, seed=args.seed)
    model = {"x": x, "y": y, "train_op": train_op, "loss": loss, "accuracy": accuracy, "global_step": global_step}
    cluster = None
    target = args.target
    if args.local_cluster:
        from dtf_notebook.notebook.local_cluster import LocalCluster

        cluster = LocalCluster(jobs={"ps": 1, "worker": 1}).start()
        target = cluster.target("worker", 0)
        pids = ", ".join(f"{t.job}:{t.task} pid {t.pid}" for t in cluster.tasks)
        print(f"Local cluster: {cluster.spec} ({pids}); session on {target}")
    try:
        metrics = _train(args, graph, target, init_op, model, stream, (x_test, y_test))
    finally:
        if cluster is not None:
            cluster.stop()
    metrics.update(optimizer=args.optimizer, learning_rate=float(learning_rate), steps=args.steps)
    print_test_metrics(metrics)
    return metrics


def _train(args, graph, target, init_op, model, stream, test_set) -> dict:
    """Runs the training loop in a session on ``target`` ("" = this process) and evaluates on ``test_set``."""
    x, y, loss, accuracy = model["x"], model["y"], model["loss"], model["accuracy"]
    train_loss = train_acc = float("nan")
    with tf.Session(target, graph=graph) as sess:
        sess.run(init_op)
        print(f"{'step':>6}  {'loss':>8}  {'train-acc':>9}")
        start = time.perf_counter()
        for step in range(1, args.steps + 1):
            xb, yb = next(stream)
            _, train_loss, train_acc = sess.run([model["train_op"], loss, accuracy], feed_dict={x: xb, y: yb})
            if step % LOG_EVERY == 0 or step == args.steps:
                print(f"{step:>6}  {float(train_loss):>8.4f}  {float(train_acc):>9.4f}")
        seconds = time.perf_counter() - start
        test_loss, test_acc, final_step = sess.run(
            [loss, accuracy, model["global_step"]], feed_dict={x: test_set[0], y: test_set[1]}
        )

    return {
        "test_loss": float(test_loss),
        "test_accuracy": float(test_acc),
        "train_loss": float(train_loss),
        "train_accuracy": float(train_acc),
        "global_step": int(final_step),
        "seconds": seconds,
    }


def cli(argv: list[str] | None = None) -> int:
    """Command-line entry point: run :func:`main`, return 1 if the test accuracy is below ``--min-accuracy``.

    Example:
        >>> cli(["--steps", "0", "--min-accuracy", "0"])  # doctest: +ELLIPSIS
        Training 784-100-10 on digits: ...
        0
    """
    return run_cli(main, parse_args, argv)


if __name__ == "__main__":
    sys.exit(cli())
