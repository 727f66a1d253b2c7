"""In-graph replication: one client builds one graph whose towers run on several worker tasks.

The 784-100-10 network's variables live on the ps task. Each training batch is cut with ``tf.split`` into one
slice per worker task; under ``tf.device("/job:worker/task:%d" % i)`` each tower computes its slice's loss and
its gradients, and the per-tower gradients are averaged and applied once, on the ps task, in the same step.
This is the in-graph replication snippet of the TF1 distributed talk (and the multi-tower pattern of TF1's
multi-GPU examples) with the whole training loop around it. Apart from its import line this is a plain
TensorFlow 1.x script.

On a real cluster, start one server per task and run this one client against any of them::

    CLUSTER='{"ps": ["ps0:2222"], "worker": ["w0:2222", "w1:2222"]}'
    python -m dtf_notebook.server --cluster "$CLUSTER" --job ps --task 0       # on ps0
    python -m dtf_notebook.server --cluster "$CLUSTER" --job worker --task 0   # on w0
    python -m dtf_notebook.server --cluster "$CLUSTER" --job worker --task 1   # on w1
    python -m dtf_notebook.examples.in_graph --target grpc://w0:2222 --num-workers 2

On this machine, ``--local-cluster`` starts those three tasks as processes and stops them at the end::

    python -m dtf_notebook.examples.in_graph --local-cluster

It prints the test loss and accuracy and exits with status 1 when the accuracy is below ``--min-accuracy``.
"""

from __future__ import annotations

import argparse
import sys

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784
from dtf_notebook.examples.common import on_target_or_local_cluster, run_cli, train_and_evaluate


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring).

    Example:
        >>> parse_args(["--local-cluster"]).num_workers
        2
    """
    parser = argparse.ArgumentParser(
        prog="python -m dtf_notebook.examples.in_graph", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--target", default="", help="session target of a running cluster (zmq:// or grpc://)")
    parser.add_argument("--num-workers", type=int, default=2, help="worker tasks, one tower each (default: 2)")
    parser.add_argument("--local-cluster", action="store_true", help="run 1 ps + the workers on this machine")
    parser.add_argument("--steps", type=int, default=300, help="training steps (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per step, all towers (default: 100)")
    parser.add_argument("--learning-rate", type=float, default=0.002, help="Adam's (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="graph-level and data seed (default: %(default)s)")
    parser.add_argument("--min-accuracy", type=float, default=0.85, help="exit 1 below this (default: 0.85)")
    args = parser.parse_args(argv)
    if not args.local_cluster and not args.target:
        parser.error("give --target of a running cluster, or --local-cluster")
    if args.num_workers < 1 or args.batch_size % args.num_workers:
        parser.error("--batch-size must be a multiple of --num-workers (>= 1): tf.split cuts equal slices")
    return args


def logits_of(x, params):
    """The network's forward pass on ``x`` with ``params = (weights_1, biases_1, weights_2, biases_2)``.

    Example:
        >>> with tf.Graph().as_default():
        ...     params = (tf.zeros([784, 100]), tf.zeros([100]), tf.zeros([100, 10]), tf.zeros([10]))
        ...     logits_of(tf.zeros([3, 784]), params).shape.as_list()
        [3, 10]
    """
    weights_1, biases_1, weights_2, biases_2 = params
    hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
    return tf.matmul(hidden, weights_2) + biases_2


def loss_of(logits, labels):
    """Mean softmax cross-entropy of ``logits`` against integer ``labels``.

    Example:
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     round(float(sess.run(loss_of(tf.zeros([2, 10]), tf.constant([1, 2], tf.int64)))), 4)
        2.3026
    """
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def average_gradients(tower_grads):
    """Averages each variable's gradient over the towers: ``tower_grads[i]`` is tower i's (grad, var) list.

    Example:
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(0.0, name="v")
        ...     averaged = average_gradients([[(tf.constant(1.0), v)], [(tf.constant(3.0), v)]])
        ...     with tf.Session() as sess:
        ...         float(sess.run(averaged[0][0])), averaged[0][1] is v
        (2.0, True)
    """
    averaged = []
    for grads_and_var in zip(*tower_grads):
        grads = [g for g, _ in grads_and_var]
        averaged.append((tf.add_n(grads) / float(len(grads)), grads_and_var[0][1]))
    return averaged


def build_graph(args: argparse.Namespace) -> dict:
    """Variables on ps, one tower per worker task, averaged gradients applied once on ps.

    Example:
        >>> with tf.Graph().as_default():
        ...     model = build_graph(parse_args(["--local-cluster"]))
        ...     model["train_op"].device, sorted({v.device for v in tf.global_variables()})
        ('/job:ps/task:0', ['/job:ps/task:0'])
    """
    tf.set_random_seed(args.seed)
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    with tf.device("/job:ps/task:0"):
        params = (
            tf.get_variable("weights_1", [784, 100]),
            tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer()),
            tf.get_variable("weights_2", [100, 10]),
            tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer()),
        )
        global_step = tf.train.get_or_create_global_step()
    optimizer = tf.train.AdamOptimizer(args.learning_rate)

    x_slices = tf.split(x, args.num_workers)
    y_slices = tf.split(y, args.num_workers)
    tower_grads, tower_losses = [], []
    for i in range(args.num_workers):
        with tf.device(f"/job:worker/task:{i}"), tf.name_scope(f"tower_{i}"):
            tower_loss = loss_of(logits_of(x_slices[i], params), y_slices[i])
            tower_losses.append(tower_loss)
            # Under this device scope the gradient ops run on this tower's worker too.
            tower_grads.append(optimizer.compute_gradients(tower_loss, var_list=list(params)))

    with tf.device("/job:ps/task:0"):
        train_op = optimizer.apply_gradients(average_gradients(tower_grads), global_step=global_step)
        loss = tf.add_n(tower_losses) / float(args.num_workers)

    # Evaluation of any number of examples (tf.split needs equal slices): the whole batch on worker 0.
    with tf.device("/job:worker/task:0"):
        eval_logits = logits_of(x, params)
        eval_loss = loss_of(eval_logits, y)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(eval_logits, 1), y), tf.float32))
    return {
        "x": x,
        "y": y,
        "train_op": train_op,
        "loss": loss,
        "eval_loss": eval_loss,
        "accuracy": accuracy,
        "global_step": global_step,
        "init_op": tf.global_variables_initializer(),
    }


def train(args: argparse.Namespace, target: str) -> dict:
    """Trains in one session on ``target`` and evaluates on the test split; returns the metrics."""
    x_train, y_train, x_test, y_test = load_digits_784(seed=args.seed)
    stream = batches(x_train, y_train, args.batch_size, seed=args.seed, drop_remainder=True)
    graph = tf.Graph()
    with graph.as_default():
        model = build_graph(args)
    print(
        f"In-graph replication: {args.num_workers} towers of {args.batch_size // args.num_workers} examples, "
        f"Adam lr={args.learning_rate:g}, {args.steps} steps, session on {target}"
    )
    with tf.Session(target, graph=graph) as sess:
        sess.run(model["init_op"])
        return train_and_evaluate(sess, model, stream, args.steps, (x_test, y_test))


def main(argv: list[str] | None = None) -> dict:
    """Trains on ``--target`` or on a local cluster of 1 ps and ``--num-workers`` worker processes."""
    args = parse_args(argv)
    return on_target_or_local_cluster(train, args, {"ps": 1, "worker": args.num_workers})


def cli(argv: list[str] | None = None) -> int:
    """Command-line entry point: 1 when the test accuracy is below ``--min-accuracy``."""
    return run_cli(main, parse_args, argv)


if __name__ == "__main__":
    sys.exit(cli())
