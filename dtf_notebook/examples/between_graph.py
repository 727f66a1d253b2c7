"""Between-graph replication: every worker is its own client, parameters on ps tasks, async or sync updates.

TF1's canonical distributed trainer. Every task of the cluster runs this same script. A ps task starts its
``tf.train.Server`` and ``join()``s. A worker starts its server, builds the 784-100-10 network under
``tf.device(tf.train.replica_device_setter(cluster=..., worker_device="/job:worker/task:%d" % task))`` -- the
variables go round-robin to the ps tasks, the computation stays on the worker -- and trains it in a
``tf.train.MonitoredTrainingSession`` on its own server; worker 0 is the chief, which initialises the
variables and, at the end, evaluates the test accuracy. Each worker reads the whole training set in an order
of its own (as TF's ``mnist_replica.py`` does): with asynchronous updates the workers rarely advance at the
same pace (the chief starts first, the other joins once the model is ready), and disjoint shards would then
weigh one half of the data more than the other. ``--mode async`` applies each worker's gradients as soon as they are
computed; ``--mode sync`` wraps the optimizer in ``tf.train.SyncReplicasOptimizer`` so that every update
averages 2 fresh gradients (one per worker while both run; a worker that is ahead, e.g. the chief before the
other worker has joined, may give both) and stale ones are dropped. Apart from its import line this is a
plain TensorFlow 1.x script.

On a real cluster, run one process per task (same ``--cluster`` everywhere), each with the cluster's key file
(made once with ``dtf-cluster keygen cluster.key`` and copied with owner-only permissions), which every
``tf.train.Server`` and session of the script takes from ``DTF_CLUSTER_KEY_FILE``::

    export DTF_CLUSTER_KEY_FILE=$HOME/cluster.key
    CLUSTER='{"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222"]}'
    python -m dtf_notebook.examples.between_graph --cluster "$CLUSTER" --job ps --task 0       # on ps0
    python -m dtf_notebook.examples.between_graph --cluster "$CLUSTER" --job ps --task 1       # on ps1
    python -m dtf_notebook.examples.between_graph --cluster "$CLUSTER" --job worker --task 0   # on w0 (chief)
    python -m dtf_notebook.examples.between_graph --cluster "$CLUSTER" --job worker --task 1   # on w1

(``python -m dtf_notebook.server --cluster "$CLUSTER" --job ps --task 0`` serves a ps task just as well.)
On this machine, ``--local-cluster`` does all of it: it starts the 2 ps tasks as server processes and the
2 workers as client processes of this script, all holding a new random key, prints their output, and stops
every process at the end::

    python -m dtf_notebook.examples.between_graph --local-cluster --mode async
    python -m dtf_notebook.examples.between_graph --local-cluster --mode sync

The chief prints the test loss and accuracy and a ``metrics {...}`` JSON line; the exit status is 1 when
the accuracy is below ``--min-accuracy``.
"""

from __future__ import annotations

import argparse
import json
import sys

import dtf_notebook.compat.v1 as tf
from dtf_notebook.datasets import batches, load_digits_784
from dtf_notebook.examples.common import run_cli

MODULE = "dtf_notebook.examples.between_graph"
LOG_EVERY = 50
STOP_GRACE_SECS = 3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options (see the module docstring).

    Example:
        >>> parse_args(["--local-cluster", "--mode", "sync"]).mode
        'sync'
    """
    parser = argparse.ArgumentParser(prog=f"python -m {MODULE}", description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["async", "sync"], default="async", help="(default: %(default)s)")
    parser.add_argument("--cluster", help="cluster spec as JSON: {job: [host:port, ...]}")
    parser.add_argument("--job", choices=["ps", "worker"], help="this task's job")
    parser.add_argument("--task", type=int, default=0, help="this task's index in its job (default: 0)")
    parser.add_argument(
        "--local-cluster", action="store_true", help="run 2 ps tasks and 2 worker processes on this machine"
    )
    parser.add_argument("--steps", type=int, default=400, help="last global step (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per worker step (default: 100)")
    parser.add_argument("--learning-rate", type=float, default=0.002, help="Adam's (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="graph-level and data seed (default: %(default)s)")
    parser.add_argument("--min-accuracy", type=float, default=0.85, help="exit 1 below this (default: 0.85)")
    args = parser.parse_args(argv)
    if not args.local_cluster and (args.cluster is None or args.job is None):
        parser.error("give --cluster JSON --job ps|worker --task N, or --local-cluster")
    return args


def build_model(cluster, task_index: int, args: argparse.Namespace) -> dict:
    """The network, its optimizer and its train op, variables on the ps tasks, ops on this worker.

    Example:
        >>> cluster = tf.train.ClusterSpec({"ps": ["h0:1", "h1:1"], "worker": ["h2:1", "h3:1"]})
        >>> args = parse_args(["--cluster", "{}", "--job", "worker", "--task", "1"])
        >>> with tf.Graph().as_default():
        ...     model = build_model(cluster, 1, args)
        ...     [v.device for v in tf.trainable_variables()], model["loss"].device
        (['/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:0', '/job:ps/task:1'], '/job:worker/task:1')
    """
    num_workers = cluster.num_tasks("worker")
    tf.set_random_seed(args.seed)
    with tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device=f"/job:worker/task:{task_index}")):
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100], initializer=tf.zeros_initializer())
        weights_2 = tf.get_variable("weights_2", [100, 10])
        biases_2 = tf.get_variable("biases_2", [10], initializer=tf.zeros_initializer())
        hidden = tf.nn.relu(tf.matmul(x, weights_1) + biases_1)
        logits = tf.matmul(hidden, weights_2) + biases_2
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

        global_step = tf.train.get_or_create_global_step()
        optimizer = tf.train.AdamOptimizer(args.learning_rate)
        if args.mode == "sync":
            # Every update averages num_workers fresh gradients; stale ones are dropped.
            optimizer = tf.train.SyncReplicasOptimizer(
                optimizer, replicas_to_aggregate=num_workers, total_num_replicas=num_workers
            )
        train_op = optimizer.minimize(loss, global_step=global_step)
        release_tokens = optimizer.get_init_tokens_op(num_workers - 1) if args.mode == "sync" else None
    return {
        "x": x,
        "y": y,
        "loss": loss,
        "accuracy": accuracy,
        "global_step": global_step,
        "optimizer": optimizer,
        "train_op": train_op,
        "release_tokens": release_tokens,
    }


def run_worker(server, cluster, args: argparse.Namespace) -> dict:
    """Trains on the training set (in this worker's order) until the global step reaches ``--steps``; the chief
    then evaluates."""
    task_index = args.task
    is_chief = task_index == 0
    x_train, y_train, x_test, y_test = load_digits_784(seed=args.seed)
    stream = batches(x_train, y_train, args.batch_size, seed=args.seed + task_index)

    model = build_model(cluster, task_index, args)
    x, y = model["x"], model["y"]
    hooks = [tf.train.StopAtStepHook(last_step=args.steps)]
    # The chief evaluates on the held-out split once training has stopped, before its session closes.
    evaluation = tf.train.FinalOpsHook(
        [model["loss"], model["accuracy"], model["global_step"]], final_ops_feed_dict={x: x_test, y: y_test}
    )
    chief_hooks = [evaluation]
    if args.mode == "sync":
        hooks.append(model["optimizer"].make_session_run_hook(is_chief))
        # A worker may be waiting for the token of a step that will never be aggregated once the chief
        # stops: one token each lets it finish its run, see the last global step and stop too.
        chief_hooks.append(tf.train.FinalOpsHook(model["release_tokens"]))
    print(
        f"worker {task_index}{' (chief)' if is_chief else ''}: {len(x_train)} training examples, "
        f"{args.mode} Adam lr={args.learning_rate:g}, batch {args.batch_size}, until global step {args.steps}",
        flush=True,
    )
    local_steps = 0
    # This worker's sessions see the ps tasks and this worker only: workers never wait for one another (nor
    # for one that has already finished).
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{task_index}"])
    with tf.train.MonitoredTrainingSession(
        master=server.target,
        is_chief=is_chief,
        config=config,
        hooks=hooks,
        chief_only_hooks=chief_hooks if is_chief else None,
        # In sync mode the chief's aggregation thread ends up waiting for gradients no worker sends any
        # more; don't wait TF's default 120 s for it to stop.
        stop_grace_period_secs=STOP_GRACE_SECS,
    ) as sess:
        while not sess.should_stop():
            xb, yb = next(stream)
            _, loss, step = sess.run([model["train_op"], model["loss"], model["global_step"]], {x: xb, y: yb})
            local_steps += 1
            if local_steps % LOG_EVERY == 0:
                print(f"worker {task_index}: local step {local_steps}  global step {step}  loss {loss:.4f}", flush=True)

    metrics = {"task": task_index, "local_steps": local_steps}
    if is_chief:
        test_loss, test_accuracy, global_step = evaluation.final_ops_values
        metrics.update(test_loss=float(test_loss), test_accuracy=float(test_accuracy), global_step=int(global_step))
        print(f"test loss {test_loss:.4f}  test accuracy {test_accuracy:.4f}  (global step {global_step})")
    print("metrics " + json.dumps(metrics), flush=True)
    return metrics


def run_task(args: argparse.Namespace) -> dict:
    """One task of the cluster given by ``--cluster``: a ps task serves forever, a worker trains."""
    cluster = tf.train.ClusterSpec(json.loads(args.cluster))
    server = tf.train.Server(cluster, job_name=args.job, task_index=args.task)
    if args.job == "ps":
        server.join()
        return {}
    try:
        return run_worker(server, cluster, args)
    finally:
        server.stop()


def run_local_cluster(args: argparse.Namespace) -> dict:
    """2 ps server processes and 2 worker client processes on this machine; returns the chief's metrics."""
    from dtf_notebook.examples.local_cluster import run_task_clients, serving

    forwarded = ["--mode", args.mode, "--steps", str(args.steps), "--batch-size", str(args.batch_size)]
    forwarded += ["--learning-rate", repr(args.learning_rate), "--seed", str(args.seed)]
    with serving({"ps": 2, "worker": 2}, serve=["ps"]) as cluster:
        outputs = run_task_clients(MODULE, cluster.spec, "worker", forwarded, env=cluster.client_env())
    per_task = [
        json.loads(line[len("metrics ") :])
        for out in outputs
        for line in out.splitlines()
        if line.startswith("metrics ")
    ]
    metrics = dict(per_task[0])
    metrics["local_steps"] = [m["local_steps"] for m in per_task]
    print(
        f"{args.mode} training on 2 ps + 2 workers: test accuracy {metrics['test_accuracy']:.4f} "
        f"after global step {metrics['global_step']} (local steps per worker: {metrics['local_steps']})"
    )
    return metrics


def main(argv: list[str] | None = None) -> dict:
    """Runs this task (or the whole local cluster) and returns the metrics (the chief's include the accuracy)."""
    args = parse_args(argv)
    return run_local_cluster(args) if args.local_cluster else run_task(args)


def cli(argv: list[str] | None = None) -> int:
    """Command-line entry point: 1 when the chief's test accuracy is below ``--min-accuracy``."""
    return run_cli(main, parse_args, argv)


if __name__ == "__main__":
    sys.exit(cli())
