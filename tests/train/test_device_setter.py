"""``tf.train.replica_device_setter`` and the ps strategies: devices of every op, checked against TF1 as well."""

from __future__ import annotations

import hashlib
import logging

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train.device_setter import STANDARD_PS_OPS


# ---- the seeds' snippets --------------------------------------------------------------------------
def test_seed_000_round_robin_and_inner_device_blocks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        v1 = tf.Variable(1.0)  # pinned to /job:ps/task:0 (+ defaults to /cpu:0)
        v2 = tf.Variable(2.0)  # pinned to /job:ps/task:1 (+ defaults to /cpu:0)
        v3 = tf.Variable(3.0)  # pinned to /job:ps/task:0 (+ defaults to /cpu:0)
        v4 = tf.Variable(4.0)
        v5 = tf.Variable(5.0)
        s = v1 + v2  # pinned to /job:worker (+ defaults to task:0/gpu:0)
        with tf.device("/gpu:1"):
            p1 = 2 * s  # pinned to /job:worker/gpu:1 (+ defaults to /task:0)
            with tf.device("/task:1"):
                p2 = 3 * s  # pinned to /job:worker/task:1/gpu:1
    assert [v.device for v in (v1, v2, v3, v4, v5)] == ["/job:ps/task:0", "/job:ps/task:1"] * 2 + ["/job:ps/task:0"]
    assert s.device == "/job:worker"
    assert p1.device == "/job:worker/device:GPU:1"
    assert p2.device == "/job:worker/task:1/device:GPU:1"
    # The variables' initial values and initializers stay with the worker / with the variable.
    assert v1.initial_value.device == "/job:worker"
    assert v1.initializer.device == "/job:ps/task:0"


def test_seed_002_cluster_spec_counts_the_ps_tasks():
    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        variables = [tf.Variable(float(i)) for i in range(5)]
    assert [v.device for v in variables] == ["/job:ps/task:0", "/job:ps/task:1"] * 2 + ["/job:ps/task:0"]


def test_seed_003_round_robin_variables():
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100])
        weights_2 = tf.get_variable("weights_2", [100, 10])
        biases_2 = tf.get_variable("biases_2", [10])
    devices = [v.device for v in (weights_1, biases_1, weights_2, biases_2)]
    assert devices == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2", "/job:ps/task:0"]


def test_seed_003_greedy_load_balancing():
    greedy = tf.contrib.training.GreedyLoadBalancingStrategy(3, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=greedy)):
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100])
        weights_2 = tf.get_variable("weights_2", [100, 10])
        biases_2 = tf.get_variable("biases_2", [10])
    assert weights_1.device == "/job:ps/task:0"
    assert biases_1.device == biases_2.device == "/job:ps/task:1"
    assert weights_2.device == "/job:ps/task:2"


def test_seed_003_partitioned_embedding_parts_go_one_per_ps():
    greedy = tf.contrib.training.GreedyLoadBalancingStrategy(3, tf.contrib.training.byte_size_load_fn)
    with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=greedy)):
        embedding = tf.get_variable("embedding", [1000000000, 20], partitioner=tf.fixed_size_partitioner(3))
    assert [(p.op.name, p.device) for p in embedding] == [
        (f"embedding/part_{i}", f"/job:ps/task:{i}") for i in range(3)
    ]


# ---- arguments ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cluster",
    [
        {"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]},
        tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]}),
        tf.train.ClusterSpec({"ps": ["a:1", "b:1", "c:1"], "worker": ["w:1"]}).as_cluster_def(),
        {"ps": {0: "a:1", 1: "b:1", 5: "c:1"}},
    ],
    ids=["dict", "ClusterSpec", "cluster_def", "sparse"],
)
def test_cluster_forms(cluster):
    with tf.device(tf.train.replica_device_setter(ps_tasks=7, cluster=cluster)):
        variables = [tf.Variable(0.0) for _ in range(4)]
    assert [v.device for v in variables] == [f"/job:ps/task:{i}" for i in (0, 1, 2, 0)]


def test_no_ps_job_gives_no_device_function():
    assert tf.train.replica_device_setter() is None
    assert tf.train.replica_device_setter(ps_tasks=0) is None
    assert tf.train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    assert tf.train.replica_device_setter(cluster={"chief": ["c:1"]}, ps_device="/job:chief/cpu:0") is not None
    with tf.device(tf.train.replica_device_setter(cluster={"worker": ["w:1"]})):
        v = tf.Variable(0.0)
    assert v.device == ""


def test_bad_arguments():
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        tf.train.replica_device_setter(ps_tasks=2, ps_strategy=3)
    with pytest.raises(TypeError, match="cluster must be a ClusterSpec"):
        tf.train.replica_device_setter(cluster=["ps0:1"])
    with pytest.raises(TypeError, match="tasks of job 'ps'"):
        tf.train.replica_device_setter(cluster={"ps": "ps0:1"})


def test_merge_devices_false_keeps_any_inner_device(caplog):
    with caplog.at_level(logging.WARNING):
        setter = tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)
    assert "merge_devices=true" in caplog.text
    with tf.device(setter):
        a = tf.Variable(0.0, name="a")
        with tf.device("/cpu:0"):
            b = tf.Variable(0.0, name="b")
            c = tf.constant(1.0, name="c")
        d = tf.constant(1.0, name="d")
    assert (a.device, b.device, c.device, d.device) == (
        "/job:ps/task:0",
        "/device:CPU:0",
        "/device:CPU:0",
        "/job:worker",
    )


def test_custom_ps_ops_devices_and_strategy():
    def always_last(op):
        return 4

    setter = tf.train.replica_device_setter(
        ps_tasks=5,
        ps_device="/job:param/cpu:0",
        worker_device="/job:trainer/task:2",
        ps_ops=["VariableV2", "Const"],
        ps_strategy=always_last,
    )
    with tf.device(setter):
        v = tf.Variable(1.0, name="v")
        c = tf.constant(2.0, name="c")
        total = tf.add(v, c, name="total")
    assert v.device == c.device == "/job:param/task:4/device:CPU:0"
    assert total.device == "/job:trainer/task:2"


def test_inner_job_wins_and_skips_the_strategy():
    calls = []

    def strategy(op):
        calls.append(op.name)
        return 1

    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        with tf.device("/job:moon"):
            moon = tf.Variable(0.0, name="moon")
        with tf.device("/job:ps/task:0"):
            pinned = tf.Variable(0.0, name="pinned")
        free = tf.Variable(0.0, name="free")
    assert (moon.device, pinned.device, free.device) == ("/job:moon", "/job:ps/task:0", "/job:ps/task:1")
    # As in TF, an op pinned inside the ps job still asks the strategy (its answer is then overridden).
    assert calls == ["pinned", "free"]


def test_standard_ps_ops_are_tf1s():
    assert "VariableV2" in STANDARD_PS_OPS and "VarHandleOp" in STANDARD_PS_OPS
    assert "ResourceConditionalAccumulator" in STANDARD_PS_OPS
    for not_state in ("FIFOQueueV2", "ConditionalAccumulator", "SparseConditionalAccumulator", "Const"):
        assert not_state not in STANDARD_PS_OPS


# ---- strategies ---------------------------------------------------------------------------------
class _Op:
    def __init__(self, name: str) -> None:
        self.name = name


def test_random_strategy_hashes_the_name_with_the_seed():
    strategy = tf.contrib.training.RandomStrategy(5, seed=3)
    for name in ("weights_1", "biases_1", "embedding/part_0"):
        expected = int(hashlib.md5(f"{name}_3".encode()).hexdigest(), 16) % 5
        assert strategy(_Op(name)) == expected
    spread = {tf.contrib.training.RandomStrategy(4)(_Op(f"v{i}")) for i in range(40)}
    assert spread == {0, 1, 2, 3}


def test_random_strategy_in_the_setter_is_deterministic():
    def devices():
        with tf.Graph().as_default():
            strategy = tf.contrib.training.RandomStrategy(3)
            with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=strategy)):
                return [tf.get_variable(f"v{i}", [2]).device for i in range(6)]

    assert devices() == devices()


def test_byte_size_load_fn():
    load = tf.contrib.training.byte_size_load_fn
    w = tf.get_variable("w", [784, 100], dtype=tf.float64)
    assert load(w.op) == 784 * 100 * 8
    loose = tf.Variable(tf.placeholder_with_default([1, 2, 3], [None]), validate_shape=False, name="loose")
    with pytest.raises(ValueError, match="'loose' is not fully defined"):
        load(loose.op)
    pair = tf.unique([1, 2])[0].op
    with pytest.raises(ValueError, match="must have a single output"):
        load(pair)


# ---- TF1 as the oracle ----------------------------------------------------------------------------
def _graph_devices(tf_mod, **setter_args):
    """Builds one graph under a replica_device_setter and returns every op's device by name."""
    with tf_mod.Graph().as_default() as g:
        with tf_mod.device(tf_mod.train.replica_device_setter(**setter_args)):
            v1 = tf_mod.Variable(1.0, name="v1", use_resource=False)
            v2 = tf_mod.Variable(2.0, name="v2", use_resource=False)
            tf_mod.Variable(3.0, name="v3", use_resource=False)
            s = tf_mod.add(v1, v2, name="s")
            with tf_mod.device("/gpu:1"):
                tf_mod.multiply(2.0, s, name="p1")
                with tf_mod.device("/task:1"):
                    tf_mod.multiply(3.0, s, name="p2")
            with tf_mod.device("/job:moon"):
                m = tf_mod.Variable(0.0, name="m", use_resource=False)
                tf_mod.identity(m, name="mm")
            with tf_mod.device("/cpu:0"):
                tf_mod.Variable(0.0, name="c", use_resource=False)
            with tf_mod.device("/job:ps/task:2"):
                tf_mod.Variable(0.0, name="d", use_resource=False)
            tf_mod.get_variable("w", [4, 3], use_resource=False)
            tf_mod.get_variable("e", [10, 2], partitioner=tf_mod.fixed_size_partitioner(3), use_resource=False)
            with tf_mod.device(None):
                tf_mod.constant(1.0, name="n")
        return {op.name: op.device for op in g.get_operations()}


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "setter_args",
    [
        {"ps_tasks": 3},
        {"ps_tasks": 2, "merge_devices": False},
        {"cluster": {"ps": ["a:1", "b:1"], "worker": ["c:1"]}, "worker_device": "/job:worker/task:0/cpu:0"},
        {"ps_tasks": 2, "ps_device": "/job:ps/cpu:0", "worker_device": ""},
        {"ps_tasks": 4, "ps_device": "/cpu:0"},
    ],
)
def test_every_op_device_matches_tensorflow(setter_args):
    tf_real = pytest.importorskip("tensorflow").compat.v1
    expected = _graph_devices(tf_real, **setter_args)
    got = _graph_devices(tf, **setter_args)
    assert got == expected


@pytest.mark.tf_oracle
def test_accumulators_are_placed_as_tensorflow_places_them():
    # TF builds a dense accumulator as ResourceConditionalAccumulator, a standard ps op (so it also takes a
    # round-robin turn); the sparse one stays reference-typed and is left with the worker.
    tf_real = pytest.importorskip("tensorflow").compat.v1

    def handles(tf_mod):
        with tf_mod.Graph().as_default():
            with tf_mod.device(tf_mod.train.replica_device_setter(ps_tasks=2)):
                tf_mod.Variable(1.0, name="v1", use_resource=False)
                dense = tf_mod.ConditionalAccumulator(tf_mod.float32, shape=[2], name="dense")
                sparse = tf_mod.SparseConditionalAccumulator(tf_mod.float32, shape=[2], name="sparse")
                v2 = tf_mod.Variable(2.0, name="v2", use_resource=False)
            ops = [dense.accumulator_ref.op, sparse.accumulator_ref.op, v2.op]
            return [(op.name, op.type, op.device) for op in ops]

    want = handles(tf_real)
    assert want[0] == ("dense", "ResourceConditionalAccumulator", "/job:ps/task:1")
    assert handles(tf) == want


def test_ops_taking_a_variable_by_reference_are_built_on_the_variables_device():
    # TF1 colocates ops with their ref inputs at creation, overriding device functions and device blocks.
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
            v = tf.Variable(0.0, name="v")
            inc = tf.assign_add(v, 1.0)
            ready = tf.is_variable_initialized(v)
            with tf.device("/job:worker/task:1"):
                inc2 = tf.assign_add(v, 2.0)
            total = v + 1.0
    assert {inc.device, ready.device, inc2.device} == {"/job:ps/task:0"}
    assert inc.op.colocation_groups() == inc2.op.colocation_groups() == ["loc:@v"]
    assert total.device == "/job:worker"  # reading by value is an ordinary op


def test_an_optimizer_groups_ps_updates_on_the_ps_as_tf_does():
    # tf.group follows its inputs' devices, so the update group and the global step increment stay on the ps:
    # no control message goes back to the worker and forth again each step.
    with tf.Graph().as_default() as graph:
        with tf.device(tf.train.replica_device_setter(ps_tasks=1)):
            w = tf.Variable(tf.zeros([3]), name="w")
            b = tf.Variable(tf.zeros([3]), name="b")
            gs = tf.train.get_or_create_global_step()
            tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(w * b), global_step=gs)
        update = graph.get_operation_by_name("GradientDescent/update")
        step = graph.get_operation_by_name("GradientDescent")
    value = step.inputs[1].op  # the increment's constant runs after the updates (TF: the AssignAdd is dominated)
    assert update.device == step.device == value.device == "/job:ps/task:0"
    assert update in value.control_inputs and not step.control_inputs
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.no_op(name="a")
        with tf.device("/job:ps/task:1"):
            c = tf.no_op(name="c")
        with tf.device("/job:worker"):
            both = tf.group(a, c, name="both")
    assert both.device == "/job:worker"
    assert sorted(op.device for op in both.control_inputs) == ["/job:ps/task:0", "/job:ps/task:1"]
