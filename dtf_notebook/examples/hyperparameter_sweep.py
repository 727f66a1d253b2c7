"""Hyperparameter sweep: one network per device, each with its own learning rate, all trained at once.

"One neural network per device": network ``i`` (the 784-100-10 network in its own variable scope) lives and
trains on worker task ``i`` with learning rate ``i`` of ``--learning-rates``. One client builds all of them in
one graph and runs every network's train op in the same ``sess.run`` call, so the tasks train concurrently
on the same batches; at the end it evaluates each network on the test split and prints one line per learning
rate. Apart from its import line this is a plain TensorFlow 1.x script.

On a real cluster with one worker task per learning rate::

    CLUSTER='{"worker": ["w0:2222", "w1:2222", "w2:2222"]}'
    python -m dtf_notebook.server --cluster "$CLUSTER" --job worker --task 0   # on w0, likewise w1, w2
    python -m dtf_notebook.examples.hyperparameter_sweep --target grpc://w0:2222 --learning-rates 0.01,0.1,0.5

On this machine, ``--local-cluster`` starts one worker process per learning rate and stops them at the end::

    python -m dtf_notebook.examples.hyperparameter_sweep --local-cluster

The exit status is 1 when the best network's accuracy is below ``--min-accuracy``.
"""

from __future__ import annotations

import argparse
import sys
import time

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784
from dtf_notebook.examples.common import on_target_or_local_cluster, run_cli


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring).

    Example:
        >>> parse_args(["--local-cluster", "--learning-rates", "0.1,0.5"]).learning_rates
        [0.1, 0.5]
    """
    parser = argparse.ArgumentParser(
        prog="python -m dtf_notebook.examples.hyperparameter_sweep", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--target", default="", help="session target of a running cluster (zmq:// or grpc://)")
    parser.add_argument("--local-cluster", action="store_true", help="one worker process per learning rate")
    parser.add_argument(
        "--learning-rates",
        type=lambda text: [float(v) for v in text.split(",")],
        default=[0.01, 0.1, 0.5],
        help="comma-separated plain SGD learning rates, one network (and worker task) each (default: 0.01,0.1,0.5)",
    )
    parser.add_argument("--steps", type=int, default=300, help="training steps (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per step (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="graph-level and data seed (default: %(default)s)")
    parser.add_argument("--min-accuracy", type=float, default=0.85, help="exit 1 if the best is below this")
    args = parser.parse_args(argv)
    if not args.local_cluster and not args.target:
        parser.error("give --target of a running cluster, or --local-cluster")
    return args


def build_network(x, y, learning_rate: float) -> dict:
    """One 784-100-10 network and its SGD train op, in the current variable scope and device.

    Example:
        >>> with tf.Graph().as_default():
        ...     x, y = tf.placeholder(tf.float32, [None, 784]), tf.placeholder(tf.int64, [None])
        ...     with tf.variable_scope("net"):
        ...         net = build_network(x, y, learning_rate=0.1)
        ...     [v.op.name for v in tf.trainable_variables()]
        ['net/weights_1', 'net/biases_1', 'net/weights_2', 'net/biases_2']
    """
    weights_1 = tf.get_variable("weights_1", [784, 100])
    biases_1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
    weights_2 = tf.get_variable("weights_2", [100, 10])
    biases_2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())
    hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
    logits = tf.matmul(hidden, weights_2) + biases_2
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
    return {"loss": loss, "accuracy": accuracy, "train_op": train_op}


def build_graph(args: argparse.Namespace) -> dict:
    """Network ``i`` in scope ``net_i`` on ``/job:worker/task:i``; the inputs are shared.

    Example:
        >>> with tf.Graph().as_default():
        ...     model = build_graph(parse_args(["--target", "zmq://h:1", "--learning-rates", "0.1,0.5"]))
        ...     [net["train_op"].device for net in model["networks"]]
        ['/job:worker/task:0', '/job:worker/task:1']
    """
    tf.set_random_seed(args.seed)
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    networks = []
    for i, learning_rate in enumerate(args.learning_rates):
        with tf.device(f"/job:worker/task:{i}"), tf.variable_scope(f"net_{i}"):
            networks.append(build_network(x, y, learning_rate))
    return {"x": x, "y": y, "networks": networks, "init_op": tf.global_variables_initializer()}


def train(args: argparse.Namespace, target: str) -> dict:
    """Trains every network at once in one session on ``target``; returns each learning rate's accuracy."""
    x_train, y_train, x_test, y_test = load_digits_784(seed=args.seed)
    stream = batches(x_train, y_train, args.batch_size, seed=args.seed)
    graph = tf.Graph()
    with graph.as_default():
        model = build_graph(args)
    x, y, networks = model["x"], model["y"], model["networks"]
    train_ops = [net["train_op"] for net in networks]
    rates = ", ".join(f"{lr:g}" for lr in args.learning_rates)
    print(f"Sweep: {len(networks)} networks (SGD lr {rates}), one per worker task, {args.steps} steps each")
    with tf.Session(target, graph=graph) as sess:
        sess.run(model["init_op"])
        start = time.perf_counter()
        for _ in range(args.steps):
            xb, yb = next(stream)
            sess.run(train_ops, {x: xb, y: yb})  # one step of every network, each on its own task
        seconds = time.perf_counter() - start
        results = sess.run([(net["loss"], net["accuracy"]) for net in networks], {x: x_test, y: y_test})
    print(f"{'learning rate':>13}  {'device':<20}  {'test loss':>9}  {'test accuracy':>13}")
    for i, (learning_rate, (loss, accuracy)) in enumerate(zip(args.learning_rates, results)):
        print(f"{learning_rate:>13g}  {'/job:worker/task:' + str(i):<20}  {loss:>9.4f}  {accuracy:>13.4f}")
    accuracies = [float(accuracy) for _, accuracy in results]
    best = max(range(len(accuracies)), key=accuracies.__getitem__)
    print(f"best learning rate {args.learning_rates[best]:g}: test accuracy {accuracies[best]:.4f} ({seconds:.1f} s)")
    return {
        "learning_rates": list(args.learning_rates),
        "test_accuracies": accuracies,
        "best_learning_rate": args.learning_rates[best],
        "test_accuracy": accuracies[best],
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> dict:
    """Sweeps on ``--target`` or on a local cluster with one worker process per learning rate."""
    args = parse_args(argv)
    return on_target_or_local_cluster(train, args, {"worker": len(args.learning_rates)})


def cli(argv: list[str] | None = None) -> int:
    """Command-line entry point: 1 when the best test accuracy is below ``--min-accuracy``."""
    return run_cli(main, parse_args, argv, what="best test accuracy")


if __name__ == "__main__":
    sys.exit(cli())
