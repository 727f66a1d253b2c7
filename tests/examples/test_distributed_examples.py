"""The distributed training examples: where their graphs put things (no processes), and each one training on a
local cluster of real task processes to single-process accuracy, with every process stopped afterwards."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.examples import between_graph, hyperparameter_sweep, in_graph, model_parallel, train_digits
from dtf_notebook.examples.local_cluster import TaskClientError, run_task_clients

# Short runs with a larger learning rate than the examples' defaults: single-process training reaches ~0.94
# in 200 Adam steps of 100 examples (train_digits.py reaches ~0.95 in 600).
QUICK = ["--steps", "200", "--learning-rate", "0.003"]
# The sweep's networks train with plain SGD; 0.1 is its good learning rate.
SWEEP_STEPS = ["--steps", "200"]
# Distributed training matches single-process training to within a few test examples (of 359).
MARGIN = 0.02
# Between-graph runs use the example's defaults (400 Adam steps at 0.002): asynchronous updates make the final
# accuracy a random variable, and at 200 steps with 0.003 it still swings widely (0.914-0.953 in 8 runs against
# 0.944 in one process). At the defaults, 16 async runs gave 0.942-0.967 against 0.964, and sync 0.961-0.967;
# 8 more async runs (2026-11-26, clusters locked with a key) 0.947-0.967, and one in a full suite run 0.933 (3.1
# below): the tail is wider than 0.03, and 0.04 still fails a run that learns a few dozen examples worse.
BETWEEN_GRAPH = ["--steps", "400", "--learning-rate", "0.002"]
ASYNC_MARGIN = 0.04


@pytest.fixture(scope="module")
def single_process_accuracy() -> dict[str, float]:
    """Test accuracy of the same network trained in one process (train_digits.py) with the same steps and
    learning rates as the distributed runs: Adam as in QUICK and as in BETWEEN_GRAPH, and SGD at the sweep's
    good learning rate."""
    with contextlib.redirect_stdout(io.StringIO()):
        adam = train_digits.main(QUICK)["test_accuracy"]
        adam_long = train_digits.main(BETWEEN_GRAPH)["test_accuracy"]
        sgd = train_digits.main([*SWEEP_STEPS, "--optimizer", "sgd", "--learning-rate", "0.1"])["test_accuracy"]
    return {"adam": adam, "adam_long": adam_long, "sgd": sgd}


def child_pids() -> set[int]:
    """Processes whose parent is this test process (the examples must leave none behind)."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended while we looked
        if int(fields[1]) == os.getpid():
            pids.add(int(entry))
    return pids


@pytest.fixture
def no_leftover_processes():
    before = child_pids()
    yield
    assert child_pids() - before == set(), "an example left task processes running"


def ops_by_scope(graph) -> dict[str, set[str]]:
    """Top-level name scope -> devices of its ops (initializers are left out: they are placed by colocation
    with their variable, not by a device of their own)."""
    devices: dict[str, set[str]] = {}
    for op in graph.get_operations():
        if "/Initializer/" in op.name:
            continue
        devices.setdefault(op.name.split("/")[0], set()).add(op.device)
    return devices


# ---- graphs (pure, no processes) ----------------------------------------------------------------
def test_between_graph_puts_variables_round_robin_on_ps_and_ops_on_its_worker():
    cluster = tf.train.ClusterSpec({"ps": ["h:1", "h:2"], "worker": ["h:3", "h:4"]})
    args = between_graph.parse_args(["--cluster", json.dumps(cluster.as_dict()), "--job", "worker", "--task", "1"])
    with tf.Graph().as_default():
        model = between_graph.build_model(cluster, 1, args)
        variables = {v.op.name: v.device for v in tf.global_variables()}
    assert variables["weights_1"] == "/job:ps/task:0"
    assert variables["biases_1"] == "/job:ps/task:1"
    assert variables["weights_2"] == "/job:ps/task:0"
    assert variables["biases_2"] == "/job:ps/task:1"
    assert model["loss"].device == "/job:worker/task:1"
    assert model["release_tokens"] is None


def test_between_graph_sync_mode_wraps_the_optimizer():
    cluster = tf.train.ClusterSpec({"ps": ["h:1", "h:2"], "worker": ["h:3", "h:4"]})
    args = between_graph.parse_args(["--cluster", "{}", "--job", "worker", "--mode", "sync"])
    with tf.Graph().as_default():
        model = between_graph.build_model(cluster, 0, args)
    assert isinstance(model["optimizer"], tf.train.SyncReplicasOptimizer)
    assert model["release_tokens"] is not None


def test_in_graph_builds_one_tower_per_worker_and_applies_on_ps():
    args = in_graph.parse_args(["--local-cluster", "--num-workers", "3", "--batch-size", "90"])
    with tf.Graph().as_default() as graph:
        model = in_graph.build_graph(args)
        variables = tf.global_variables()
    devices = ops_by_scope(graph)
    for i in range(3):
        assert devices[f"tower_{i}"] == {f"/job:worker/task:{i}"}
    # The gradients of each tower's loss are computed by that tower's worker.
    assert graph.get_operation_by_name("tower_1/gradients/tower_1/MatMul_grad/MatMul_1").device == "/job:worker/task:1"
    assert model["train_op"].device == "/job:ps/task:0"
    assert {v.device for v in variables} == {"/job:ps/task:0"}  # the model's, the global step, Adam's


def test_in_graph_rejects_a_batch_the_towers_cannot_share(capsys):
    with pytest.raises(SystemExit):
        in_graph.parse_args(["--local-cluster", "--num-workers", "3", "--batch-size", "100"])
    assert "multiple of --num-workers" in capsys.readouterr().err


def test_model_parallel_keeps_each_layer_and_its_gradients_on_its_task():
    args = model_parallel.parse_args(["--local-cluster"])
    with tf.Graph().as_default() as graph:
        model = model_parallel.build_graph(args)
    devices = {v.op.name: v.device for v in model["variables"]}
    assert devices == {
        "weights_1": "/job:worker/task:0",
        "biases_1": "/job:worker/task:0",
        "weights_2": "/job:worker/task:1",
        "biases_2": "/job:worker/task:1",
    }
    grad_of = {op.name: op.device for op in graph.get_operations() if op.name.startswith("gradients/")}
    assert grad_of["gradients/MatMul_grad/MatMul_1"] == "/job:worker/task:0"  # d weights_1
    assert grad_of["gradients/MatMul_1_grad/MatMul_1"] == "/job:worker/task:1"  # d weights_2


def test_hyperparameter_sweep_puts_network_i_on_worker_i():
    args = hyperparameter_sweep.parse_args(["--target", "zmq://h:1", "--learning-rates", "0.1,0.2,0.3"])
    with tf.Graph().as_default() as graph:
        hyperparameter_sweep.build_graph(args)
    devices = ops_by_scope(graph)
    assert [devices[f"net_{i}"] for i in range(3)] == [{f"/job:worker/task:{i}"} for i in range(3)]


@pytest.mark.parametrize("module", [between_graph, in_graph, model_parallel, hyperparameter_sweep])
def test_examples_need_a_cluster_to_run_on(module, capsys):
    with pytest.raises(SystemExit):
        module.parse_args([])
    assert "--local-cluster" in capsys.readouterr().err


# ---- on local clusters of real processes ---------------------------------------------------------
@pytest.mark.cluster
def test_a_failing_task_client_is_named_with_its_exit_code_and_output(no_leftover_processes, capsys):
    spec = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    # Both task processes reject --mode at once; the first seen to fail is reported, the other stopped.
    with pytest.raises(TaskClientError, match=r"Task worker:\d exited with code 2") as failure:
        run_task_clients(between_graph.MODULE, spec, "worker", ["--mode", "bogus"], timeout=120)
    assert "invalid choice: 'bogus'" in str(failure.value)
    assert re.search(r"\[worker:\d\] ", capsys.readouterr().out)  # whichever failed first is named


@pytest.mark.cluster
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_between_graph_training_reaches_single_process_accuracy(
    mode, single_process_accuracy, no_leftover_processes, capsys
):
    metrics = between_graph.main(["--local-cluster", "--mode", mode, *BETWEEN_GRAPH])
    margin = ASYNC_MARGIN if mode == "async" else MARGIN
    assert metrics["test_accuracy"] >= single_process_accuracy["adam_long"] - margin, (
        metrics,
        single_process_accuracy,
    )
    assert metrics["global_step"] >= 400
    assert all(steps > 0 for steps in metrics["local_steps"])  # both workers trained
    out = capsys.readouterr().out
    assert "[worker:0] worker 0 (chief)" in out and "[worker:1] worker 1:" in out
    if mode == "async":
        # Asynchronous updates: the global step counts every worker's steps. The chief reads it for its final
        # evaluation while the other worker may still have one step in flight.
        assert metrics["global_step"] <= sum(metrics["local_steps"]) <= metrics["global_step"] + 1


@pytest.mark.cluster
def test_in_graph_training_on_a_local_cluster(single_process_accuracy, no_leftover_processes):
    metrics = in_graph.main(["--local-cluster", *QUICK])
    assert metrics["global_step"] == 200
    assert metrics["test_accuracy"] >= single_process_accuracy["adam"] - MARGIN, (metrics, single_process_accuracy)


@pytest.mark.cluster
def test_model_parallel_training_on_a_local_cluster(single_process_accuracy, no_leftover_processes):
    metrics = model_parallel.main(["--local-cluster", *QUICK])
    assert metrics["global_step"] == 200
    assert metrics["test_accuracy"] >= single_process_accuracy["adam"] - MARGIN, (metrics, single_process_accuracy)


@pytest.mark.cluster
def test_hyperparameter_sweep_trains_every_network_on_a_local_cluster(
    single_process_accuracy, no_leftover_processes, capsys
):
    metrics = hyperparameter_sweep.main(["--local-cluster", *SWEEP_STEPS, "--learning-rates", "0.001,0.1"])
    low, good = metrics["test_accuracies"]
    assert good >= single_process_accuracy["sgd"] - MARGIN, (metrics, single_process_accuracy)
    assert low < good  # the networks really differ: each trained with its own learning rate
    assert metrics["best_learning_rate"] == 0.1
    out = capsys.readouterr().out
    assert "/job:worker/task:0" in out and "/job:worker/task:1" in out
