"""What the example scripts share around their TF1 code: the training loop, the report, the command line.

Each example builds its own graph, opens its own ``tf.Session`` and initialises the variables itself (the TF1
code it is there to show). The steps that are the same in every one-client example live here:
:func:`train_and_evaluate` runs the training steps and the final test-set evaluation in that session,
:func:`on_target_or_local_cluster` runs the example on ``--target`` or on task processes of this machine, and
:func:`run_cli` turns the final test accuracy into the exit status.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

__all__ = ["LOG_EVERY", "on_target_or_local_cluster", "print_test_metrics", "run_cli", "train_and_evaluate"]

#: Steps between two printed training losses.
LOG_EVERY = 100


def train_and_evaluate(
    sess: Any,
    model: dict[str, Any],
    stream: Iterator[tuple[np.ndarray, np.ndarray]],
    steps: int,
    test_set: tuple[np.ndarray, np.ndarray],
    log_every: int = LOG_EVERY,
) -> dict[str, Any]:
    """Runs ``steps`` training steps in ``sess``, then evaluates on ``test_set`` and prints the result.

    Args:
        sess: An open session whose variables are initialised.
        model: The graph's tensors: placeholders ``x`` and ``y``, ``train_op``, ``loss`` (printed every
            ``log_every`` steps), ``accuracy`` and ``global_step``; ``eval_loss`` when the test loss is
            another tensor than ``loss`` (default: ``loss``).
        stream: Training batches ``(x_batch, y_batch)``, e.g. :func:`dtf_notebook.datasets.batches`.
        steps: Training steps to run.
        test_set: ``(x_test, y_test)``, fed whole to the evaluation.
        log_every: Steps between two printed losses.

    Returns:
        ``test_loss``, ``test_accuracy``, ``global_step`` (after training) and ``seconds`` (of training).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> from dtf_notebook.datasets import batches
        >>> xs, ys = np.eye(2, dtype=np.float32), np.array([0, 1])
        >>> with tf.Graph().as_default():  # doctest: +ELLIPSIS
        ...     x, y = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.int64, [None])
        ...     logits = tf.matmul(x, tf.get_variable("w", [2, 2], initializer=tf.zeros_initializer()))
        ...     loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        ...     accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        ...     step = tf.train.get_or_create_global_step()
        ...     train_op = tf.train.GradientDescentOptimizer(1.0).minimize(loss, global_step=step)
        ...     model = {"x": x, "y": y, "train_op": train_op, "loss": loss, "accuracy": accuracy, "global_step": step}
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         metrics = train_and_evaluate(sess, model, batches(xs, ys, 2), 4, (xs, ys), log_every=2)
        step     2  loss 0.4...
        step     4  loss 0.2...
        test loss 0.2...  test accuracy 1.0000  (global step 4, ... s)
        >>> metrics["test_accuracy"], metrics["global_step"]
        (1.0, 4)
    """
    x, y = model["x"], model["y"]
    start = time.perf_counter()
    for step in range(1, steps + 1):
        xb, yb = next(stream)
        _, loss = sess.run([model["train_op"], model["loss"]], {x: xb, y: yb})
        if step % log_every == 0:
            print(f"step {step:>5}  loss {loss:.4f}", flush=True)
    seconds = time.perf_counter() - start
    test_loss, test_accuracy, global_step = sess.run(
        [model.get("eval_loss", model["loss"]), model["accuracy"], model["global_step"]],
        {x: test_set[0], y: test_set[1]},
    )
    metrics = {
        "test_loss": float(test_loss),
        "test_accuracy": float(test_accuracy),
        "global_step": int(global_step),
        "seconds": seconds,
    }
    print_test_metrics(metrics)
    return metrics


def print_test_metrics(metrics: dict[str, Any]) -> None:
    """Prints the final line of a training run: test loss and accuracy, global step and training seconds.

    Example:
        >>> print_test_metrics({"test_loss": 0.25, "test_accuracy": 0.9, "global_step": 300, "seconds": 4.21})
        test loss 0.2500  test accuracy 0.9000  (global step 300, 4.2 s)
    """
    print(
        f"test loss {metrics['test_loss']:.4f}  test accuracy {metrics['test_accuracy']:.4f}  "
        f"(global step {metrics['global_step']}, {metrics['seconds']:.1f} s)"
    )


def on_target_or_local_cluster(
    train: Callable[[argparse.Namespace, str], dict],
    args: argparse.Namespace,
    local_jobs: dict[str, int],
) -> dict:
    """``train(args, target)`` on ``args.target``, or, with ``args.local_cluster``, on a cluster of this machine.

    The local cluster has one server process per task of ``local_jobs``; the session goes to worker 0, and
    every process is stopped when ``train`` returns or fails.

    Example:
        >>> args = argparse.Namespace(target="zmq://h:1", local_cluster=False)
        >>> on_target_or_local_cluster(lambda args, target: {"target": target}, args, {"worker": 2})
        {'target': 'zmq://h:1'}
    """
    if not args.local_cluster:
        return train(args, args.target)
    # Imported here: a run against a real cluster needs no process launcher.
    from dtf_notebook.examples.local_cluster import serving

    with serving(local_jobs) as cluster:
        return train(args, cluster.target("worker", 0))


def run_cli(
    main: Callable[[list[str]], dict],
    parse_args: Callable[[list[str]], argparse.Namespace],
    argv: Sequence[str] | None = None,
    what: str = "test accuracy",
) -> int:
    """Runs an example's ``main(argv)``; the exit status is 1 when its test accuracy is below ``--min-accuracy``.

    A run that returns no ``test_accuracy`` (a task that does not evaluate, e.g. a ps task or a worker
    other than the chief) exits with 0.

    Args:
        main: The example's ``main``; returns its metrics.
        parse_args: The example's option parser (it knows ``--min-accuracy``).
        argv: The command-line arguments (default: ``sys.argv[1:]``).
        what: How the failure message names the accuracy.

    Example:
        >>> parse = lambda argv: argparse.Namespace(min_accuracy=float(argv[0]))
        >>> run_cli(lambda argv: {"test_accuracy": 0.9}, parse, ["0.85"])
        0
        >>> run_cli(lambda argv: {"test_accuracy": 0.8}, parse, ["0.85"], what="best test accuracy")
        1
        >>> run_cli(lambda argv: {}, parse, ["0.85"])
        0
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    metrics = main(argv)
    threshold = parse_args(argv).min_accuracy
    if "test_accuracy" in metrics and metrics["test_accuracy"] < threshold:
        print(f"FAILED: {what} {metrics['test_accuracy']:.4f} < {threshold}", file=sys.stderr)
        return 1
    return 0
