"""Model parallelism: the network's layers live and compute on different worker tasks.

The hidden layer of the 784-100-10 network (its variables and its computation) is on worker 0, the output
layer and the loss are on worker 1: every step sends the 100-wide hidden activations from worker 0 to worker 1
and their gradient back. ``minimize(..., colocate_gradients_with_ops=True)`` keeps each layer's backward pass
on the task of its forward pass, and the optimizer updates each variable where it lives. One client drives it
all in one session. Apart from its import line this is a plain TensorFlow 1.x script.

On a real cluster, start one server per task and run this one client against any of them::

    CLUSTER='{"worker": ["w0:2222", "w1:2222"]}'
    python -m dtf_notebook.server --cluster "$CLUSTER" --job worker --task 0   # on w0
    python -m dtf_notebook.server --cluster "$CLUSTER" --job worker --task 1   # on w1
    python -m dtf_notebook.examples.model_parallel --target grpc://w0:2222

On this machine, ``--local-cluster`` starts the two tasks as processes and stops them at the end::

    python -m dtf_notebook.examples.model_parallel --local-cluster

It prints where each variable lives, then the test loss and accuracy, and exits with status 1 when the
accuracy is below ``--min-accuracy``.
"""

from __future__ import annotations

import argparse
import sys

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784
from dtf_notebook.examples.common import on_target_or_local_cluster, run_cli, train_and_evaluate

HIDDEN_DEVICE = "/job:worker/task:0"
OUTPUT_DEVICE = "/job:worker/task:1"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring).

    Example:
        >>> parse_args(["--local-cluster", "--steps", "10"]).steps
        10
    """
    parser = argparse.ArgumentParser(
        prog="python -m dtf_notebook.examples.model_parallel", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--target", default="", help="session target of a running cluster (zmq:// or grpc://)")
    parser.add_argument("--local-cluster", action="store_true", help="run the 2 worker tasks on this machine")
    parser.add_argument("--steps", type=int, default=300, help="training steps (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per step (default: %(default)s)")
    parser.add_argument("--learning-rate", type=float, default=0.002, help="Adam's (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="graph-level and data seed (default: %(default)s)")
    parser.add_argument("--min-accuracy", type=float, default=0.85, help="exit 1 below this (default: 0.85)")
    args = parser.parse_args(argv)
    if not args.local_cluster and not args.target:
        parser.error("give --target of a running cluster, or --local-cluster")
    return args


def build_graph(args: argparse.Namespace) -> dict:
    """Hidden layer on worker 0, output layer and loss on worker 1.

    Example:
        >>> with tf.Graph().as_default():
        ...     model = build_graph(parse_args(["--local-cluster"]))
        ...     [v.device for v in model["variables"]], model["loss"].device
        (['/job:worker/task:0', '/job:worker/task:0', '/job:worker/task:1', '/job:worker/task:1'], '/job:worker/task:1')
    """
    tf.set_random_seed(args.seed)
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.device(HIDDEN_DEVICE):
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
        global_step = tf.train.get_or_create_global_step()
    with tf.device(OUTPUT_DEVICE):
        weights_2 = tf.get_variable("weights_2", [100, 10])
        biases_2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(hidden, weights_2) + biases_2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    train_op = tf.train.AdamOptimizer(args.learning_rate).minimize(
        loss, global_step=global_step, colocate_gradients_with_ops=True
    )
    return {
        "x": x,
        "y": y,
        "train_op": train_op,
        "loss": loss,
        "accuracy": accuracy,
        "global_step": global_step,
        "variables": [weights_1, biases_1, weights_2, biases_2],
        "init_op": tf.global_variables_initializer(),
    }


def train(args: argparse.Namespace, target: str) -> dict:
    """Trains in one session on ``target`` and evaluates on the test split; returns the metrics."""
    x_train, y_train, x_test, y_test = load_digits_784(seed=args.seed)
    stream = batches(x_train, y_train, args.batch_size, seed=args.seed)
    graph = tf.Graph()
    with graph.as_default():
        model = build_graph(args)
    print(f"Model parallelism: Adam lr={args.learning_rate:g}, batch {args.batch_size}, {args.steps} steps")
    for variable in model["variables"]:
        print(f"  {variable.op.name:<10} {str(variable.shape):<10} on {variable.device}")
    with tf.Session(target, graph=graph) as sess:
        sess.run(model["init_op"])
        metrics = train_and_evaluate(sess, model, stream, args.steps, (x_test, y_test))
    metrics["devices"] = {v.op.name: v.device for v in model["variables"]}
    return metrics


def main(argv: list[str] | None = None) -> dict:
    """Trains on ``--target`` or on a local cluster of two worker processes."""
    args = parse_args(argv)
    return on_target_or_local_cluster(train, args, {"worker": 2})


def cli(argv: list[str] | None = None) -> int:
    """Command-line entry point: 1 when the test accuracy is below ``--min-accuracy``."""
    return run_cli(main, parse_args, argv)


if __name__ == "__main__":
    sys.exit(cli())
