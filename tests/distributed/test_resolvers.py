"""Cluster resolvers: SimpleClusterResolver, TF_CONFIG, SLURM, hostlists, and TF as oracle."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.resolvers import (
    ClusterResolver,
    SimpleClusterResolver,
    SlurmClusterResolver,
    TFConfigClusterResolver,
    expand_hostlist,
    expand_tasks_per_node,
    format_master_url,
    resolve_from_environment,
)

CLUSTER = {"chief": ["c0:2222"], "worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]}
SLURM_VARIABLES = [
    "SLURM_PROCID",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_NTASKS",
    "SLURM_STEP_NODELIST",
    "SLURM_JOB_NODELIST",
    "SLURM_STEP_TASKS_PER_NODE",
    "SLURM_TASKS_PER_NODE",
]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """os.environ without TF_CONFIG or SLURM variables; CUDA_VISIBLE_DEVICES restored afterwards."""
    for name in ["TF_CONFIG", *SLURM_VARIABLES]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "untouched")
    return monkeypatch


def set_tf_config(monkeypatch: pytest.MonkeyPatch, **config: Any) -> None:
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))


def set_slurm(monkeypatch: pytest.MonkeyPatch, rank: int, **overrides: str) -> None:
    """Two nodes x two tasks, as `srun -N2 --ntasks-per-node=2` sets them."""
    variables = {
        "SLURM_PROCID": str(rank),
        "SLURM_STEP_NUM_TASKS": "4",
        "SLURM_STEP_NODELIST": "node[01-02]",
        "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
        **overrides,
    }
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


# --- format_master_url and the base class ------------------------------------------------------


@pytest.mark.parametrize(
    "master, rpc_layer, expected",
    [
        ("h:1", "zmq", "zmq://h:1"),
        ("h:1", "grpc", "grpc://h:1"),
        ("h:1", None, "h:1"),
        ("", "zmq", ""),
        ("grpc://h:1", "zmq", "grpc://h:1"),
    ],
)
def test_format_master_url(master: str, rpc_layer: str | None, expected: str):
    assert format_master_url(master, rpc_layer) == expected


def test_cluster_resolver_is_abstract():
    with pytest.raises(TypeError):
        ClusterResolver()  # type: ignore[abstract]


# --- SimpleClusterResolver --------------------------------------------------------------------


def test_simple_resolver_own_task():
    resolver = SimpleClusterResolver(ClusterSpec(CLUSTER), task_type="worker", task_id=1)
    assert resolver.cluster_spec() == ClusterSpec(CLUSTER)
    assert (resolver.task_type, resolver.task_id, resolver.rpc_layer) == ("worker", 1, "zmq")
    assert resolver.master() == "zmq://w1:2222"
    assert resolver.master(rpc_layer="grpc") == "grpc://w1:2222"
    assert resolver.master("ps", 0) == "zmq://p0:2222"
    assert resolver.master(task_id=0) == "zmq://w0:2222"


def test_simple_resolver_explicit_master_and_no_task():
    cluster = ClusterSpec(CLUSTER)
    assert SimpleClusterResolver(cluster).master() == ""
    assert SimpleClusterResolver(cluster, "h:9").master() == "zmq://h:9"
    assert SimpleClusterResolver(cluster, "h:9", rpc_layer="grpc").master() == "grpc://h:9"
    with_task = SimpleClusterResolver(cluster, "h:9", task_type="chief", task_id=0)
    assert with_task.master() == "zmq://h:9"
    assert with_task.master("chief", 0) == "zmq://c0:2222"


def test_simple_resolver_accepts_a_dict_and_extras():
    resolver = SimpleClusterResolver(CLUSTER, environment="google", num_accelerators={"GPU": 8})
    assert resolver.cluster_spec() == ClusterSpec(CLUSTER)
    assert resolver.environment == "google"
    assert resolver.num_accelerators() == {"GPU": 8}
    resolver.num_accelerators()["GPU"] = 0
    assert resolver.num_accelerators() == {"GPU": 8}


def test_simple_resolver_setters():
    resolver = SimpleClusterResolver(CLUSTER)
    resolver.task_type, resolver.task_id, resolver.rpc_layer = "ps", 0, "grpc"
    assert resolver.master() == "grpc://p0:2222"


def test_simple_resolver_errors():
    with pytest.raises(TypeError, match="master must be a string, not 3"):
        SimpleClusterResolver(CLUSTER, 3)  # type: ignore[arg-type]
    # TF's argument order puts master second; a positional task is caught.
    with pytest.raises(TypeError, match="task_type must be a job name string, not 0"):
        SimpleClusterResolver(CLUSTER, "worker", 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="task_id must be an integer, not '1'"):
        SimpleClusterResolver(CLUSTER, task_type="worker", task_id="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="No task with index 5 in job 'worker'"):
        SimpleClusterResolver(CLUSTER, task_type="worker", task_id=5).master()
    with pytest.raises(ValueError, match="No such job in cluster: 'evaluator'"):
        SimpleClusterResolver(CLUSTER).master("evaluator", 0)


# --- TFConfigClusterResolver ------------------------------------------------------------------


def test_tf_config_worker(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster=CLUSTER, task={"type": "worker", "index": 1})
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == ClusterSpec(CLUSTER)
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.rpc_layer == "zmq"
    assert resolver.master() == "zmq://w1:2222"
    assert resolver.master("ps", 0, "grpc") == "grpc://p0:2222"
    assert resolver.environment == ""
    assert resolver.num_accelerators() == {}


def test_tf_config_chief_with_grpc_rpc_layer(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster=CLUSTER, task={"type": "chief", "index": "0"}, rpc_layer="grpc")
    resolver = TFConfigClusterResolver()
    assert (resolver.task_type, resolver.task_id, resolver.rpc_layer) == ("chief", 0, "grpc")
    assert resolver.master() == "grpc://c0:2222"


def test_tf_config_evaluator_is_outside_the_cluster(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster=CLUSTER, task={"type": "evaluator", "index": 0})
    resolver = TFConfigClusterResolver()
    assert resolver.task_type == "evaluator"
    assert "evaluator" not in resolver.cluster_spec().jobs
    with pytest.raises(ValueError, match="No such job in cluster: 'evaluator'"):
        resolver.master()
    assert resolver.master("chief", 0) == "zmq://c0:2222"


def test_tf_config_session_master_wins(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster=CLUSTER, task={"type": "worker", "index": 0}, session_master="zmq://m:1")
    assert TFConfigClusterResolver().master() == "zmq://m:1"


def test_tf_config_single_task_cluster_runs_in_process(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster={"worker": ["w0:1"]}, task={"type": "worker", "index": 0})
    assert TFConfigClusterResolver().master() == ""


def test_tf_config_overrides(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster=CLUSTER, task={"type": "worker", "index": 1}, rpc_layer="grpc")
    resolver = TFConfigClusterResolver(task_type="ps", task_id=0, rpc_layer="zmq")
    assert resolver.master() == "zmq://p0:2222"
    resolver.task_type, resolver.task_id = None, None
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)


def test_tf_config_is_read_at_call_time(clean_env: pytest.MonkeyPatch):
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == ClusterSpec({})
    assert (resolver.task_type, resolver.task_id) == (None, None)
    assert resolver.master() == ""
    set_tf_config(clean_env, cluster={"worker": ["a:1", "b:1"]}, task={"type": "worker", "index": 1})
    assert resolver.master() == "zmq://b:1"
    set_tf_config(clean_env, cluster={"worker": ["c:1", "d:1"]}, task={"type": "worker", "index": 0})
    assert resolver.master() == "zmq://c:1"


def test_tf_config_from_an_environ_mapping():
    env = {"TF_CONFIG": json.dumps({"cluster": {"ps": {"1": "p1:1"}, "worker": ["w0:1"]}})}
    resolver = TFConfigClusterResolver(environ=env)
    assert resolver.cluster_spec().as_dict() == {"ps": {1: "p1:1"}, "worker": ["w0:1"]}
    assert resolver.master("ps", 1) == "zmq://p1:1"


def test_tf_config_without_task_cannot_name_a_master(clean_env: pytest.MonkeyPatch):
    set_tf_config(clean_env, cluster=CLUSTER)
    with pytest.raises(RuntimeError, match="task_type=None, task_id=None"):
        TFConfigClusterResolver().master()


@pytest.mark.parametrize(
    "text, match",
    [
        ("{cluster: 1}", r"TF_CONFIG is not valid JSON .*'\{cluster: 1\}'"),
        ("[1, 2]", r"TF_CONFIG must be a JSON object, not '\[1, 2\]'"),
        ('{"cluster": ["a:1"]}', r"TF_CONFIG 'cluster' is invalid: cluster must be a dictionary"),
        ('{"cluster": {"worker": "a:1"}}', r"TF_CONFIG 'cluster' is invalid: The tasks for job 'worker'"),
        ('{"cluster": {"bad-job": ["a:1"]}}', r"TF_CONFIG 'cluster' is invalid: Job name 'bad-job'"),
    ],
)
def test_tf_config_malformed_cluster(clean_env: pytest.MonkeyPatch, text: str, match: str):
    clean_env.setenv("TF_CONFIG", text)
    with pytest.raises(ValueError, match=match):
        TFConfigClusterResolver().cluster_spec()


@pytest.mark.parametrize(
    "task, match",
    [
        ("worker", r"TF_CONFIG 'task' must be an object"),
        ({"type": "worker", "index": "one"}, r"TF_CONFIG task index 'one' is not an integer"),
    ],
)
def test_tf_config_malformed_task(clean_env: pytest.MonkeyPatch, task: Any, match: str):
    set_tf_config(clean_env, cluster=CLUSTER, task=task)
    with pytest.raises(ValueError, match=match):
        TFConfigClusterResolver().task_id  # noqa: B018


# --- SLURM: hostlists ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hostlist, hosts",
    [
        ("node1", ["node1"]),
        ("node1,node2", ["node1", "node2"]),
        ("node[1-3]", ["node1", "node2", "node3"]),
        ("node[01-03,07],gpu-a[1-2]", ["node01", "node02", "node03", "node07", "gpu-a1", "gpu-a2"]),
        ("n[8-11]", ["n8", "n9", "n10", "n11"]),
        ("n[008-010]", ["n008", "n009", "n010"]),
        ("n[3]", ["n3"]),
        ("n[1-2]-ib", ["n1-ib", "n2-ib"]),
        ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]),
        ("a.example.com,b[1-2].example.com", ["a.example.com", "b1.example.com", "b2.example.com"]),
        (" n[1-2] ", ["n1", "n2"]),
        ("n1,n1", ["n1", "n1"]),
    ],
)
def test_expand_hostlist(hostlist: str, hosts: list[str]):
    assert expand_hostlist(hostlist) == hosts


@pytest.mark.parametrize(
    "hostlist, reason",
    [
        ("", "empty"),
        ("n[1-2", "'[' without ']'"),
        ("n1-2]", "']' without '['"),
        ("n[1-[2]]", "nested"),
        ("n1,,n2", "empty host name"),
        ("n[2-1]", "runs backwards"),
        ("n[a-b]", "bad range 'a-b'"),
        ("n[]", "bad range ''"),
        ("n[1-2-3]", "bad range '1-2-3'"),
    ],
)
def test_expand_hostlist_errors(hostlist: str, reason: str):
    with pytest.raises(
        ValueError, match=re.escape(f"Invalid SLURM host list {hostlist!r}: ") + ".*" + re.escape(reason)
    ):
        expand_hostlist(hostlist)


@pytest.mark.parametrize(
    "tasks_per_node, counts",
    [("2", [2]), ("2(x3),1", [2, 2, 2, 1]), ("1,2,3", [1, 2, 3]), ("4(x1)", [4])],
)
def test_expand_tasks_per_node(tasks_per_node: str, counts: list[int]):
    assert expand_tasks_per_node(tasks_per_node) == counts


@pytest.mark.parametrize("tasks_per_node", ["", "2(x)", "x", "2(3)", "2,,1"])
def test_expand_tasks_per_node_errors(tasks_per_node: str):
    with pytest.raises(ValueError, match=re.escape(f"Invalid SLURM tasks-per-node list {tasks_per_node!r}")):
        expand_tasks_per_node(tasks_per_node)


# --- SLURM: the resolver (2 nodes x 2 tasks) ----------------------------------------------------


@pytest.mark.parametrize(
    "rank, task, master, gpus",
    [
        (0, ("ps", 0), "zmq://node01:8888", "0,1"),
        (1, ("worker", 0), "zmq://node01:8889", "2,3"),
        (2, ("worker", 1), "zmq://node02:8888", "0,1"),
        (3, ("worker", 2), "zmq://node02:8889", "2,3"),
    ],
)
def test_slurm_two_nodes_two_tasks(clean_env: pytest.MonkeyPatch, rank: int, task: tuple, master: str, gpus: str):
    set_slurm(clean_env, rank)
    resolver = SlurmClusterResolver(jobs={"worker": 3, "ps": 1}, gpus_per_node=4)
    assert resolver.get_task_info() == task
    assert (resolver.task_type, resolver.task_id) == task
    assert resolver.cluster_spec().as_dict() == {
        "ps": ["node01:8888"],
        "worker": ["node01:8889", "node02:8888", "node02:8889"],
    }
    assert os.environ["CUDA_VISIBLE_DEVICES"] == gpus
    assert resolver.master() == master
    assert resolver.master("ps", 0, rpc_layer="grpc") == "grpc://node01:8888"
    assert resolver.num_accelerators() == {"GPU": 2}


def test_slurm_default_jobs_and_no_gpus(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 2)
    resolver = SlurmClusterResolver(port_base=7000)
    assert resolver.cluster_spec().as_dict() == {"worker": ["node01:7000", "node01:7001", "node02:7000", "node02:7001"]}
    assert resolver.get_task_info() == ("worker", 2)
    assert resolver.num_accelerators() == {}
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "untouched"


def test_slurm_job_wide_fallbacks(clean_env: pytest.MonkeyPatch):
    for name, value in [("SLURM_PROCID", "1"), ("SLURM_NTASKS", "3"), ("SLURM_JOB_NODELIST", "a,b")]:
        clean_env.setenv(name, value)
    clean_env.setenv("SLURM_TASKS_PER_NODE", "2,1")
    resolver = SlurmClusterResolver()
    assert resolver.cluster_spec().as_dict() == {"worker": ["a:8888", "a:8889", "b:8888"]}
    assert resolver.master() == "zmq://a:8889"


def test_slurm_follows_node_list_order(clean_env: pytest.MonkeyPatch):
    # TF sorts host names, putting node10 first although SLURM gave rank 0 to node9.
    set_slurm(
        clean_env, 0, SLURM_STEP_NODELIST="node[9-10]", SLURM_STEP_TASKS_PER_NODE="1(x2)", SLURM_STEP_NUM_TASKS="2"
    )
    assert SlurmClusterResolver().cluster_spec().as_dict() == {"worker": ["node9:8888", "node10:8888"]}


def test_slurm_gpus_per_task_and_auto_set_gpu(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 3)
    resolver = SlurmClusterResolver(gpus_per_task=1)
    resolver.cluster_spec()
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "1"
    assert resolver.num_accelerators() == {"GPU": 1}
    clean_env.setenv("CUDA_VISIBLE_DEVICES", "untouched")
    SlurmClusterResolver(gpus_per_task=1, auto_set_gpu=False).cluster_spec()
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "untouched"


def test_slurm_too_few_gpus_for_one_each_gives_none(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 1)
    resolver = SlurmClusterResolver(gpus_per_node=1)
    resolver.cluster_spec()
    assert os.environ["CUDA_VISIBLE_DEVICES"] == ""
    assert resolver.num_accelerators() == {"GPU": 0}


def test_slurm_tasks_per_node_argument(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 1, SLURM_STEP_TASKS_PER_NODE="garbage")
    resolver = SlurmClusterResolver(tasks_per_node=2)
    assert resolver.cluster_spec().num_tasks("worker") == 4
    clean_env.delenv("SLURM_STEP_NODELIST")
    resolver = SlurmClusterResolver(jobs={"ps": 1, "worker": 2}, tasks_per_node={"x": 1, "y": 2})
    assert resolver.cluster_spec().as_dict() == {"ps": ["x:8888"], "worker": ["y:8888", "y:8889"]}
    assert resolver.get_task_info() == ("worker", 0)


def test_slurm_environ_mapping_gets_cuda_visible_devices():
    env = {"SLURM_PROCID": "1", "SLURM_STEP_NODELIST": "n1", "SLURM_STEP_TASKS_PER_NODE": "2"}
    resolver = SlurmClusterResolver({"worker": 2}, gpus_per_node=2, environ=env)
    assert resolver.master() == "zmq://n1:8889"
    assert env["CUDA_VISIBLE_DEVICES"] == "1"


@pytest.mark.parametrize(
    "missing, match",
    [
        ("SLURM_PROCID", r"^SLURM_PROCID not found in environment"),
        ("SLURM_STEP_NODELIST", r"^SLURM_STEP_NODELIST or SLURM_JOB_NODELIST not found"),
        ("SLURM_STEP_TASKS_PER_NODE", r"^SLURM_STEP_TASKS_PER_NODE or SLURM_TASKS_PER_NODE not found"),
        ("SLURM_STEP_NUM_TASKS", r"^SLURM_STEP_NUM_TASKS or SLURM_NTASKS not found"),
    ],
)
def test_slurm_missing_variable_is_named(clean_env: pytest.MonkeyPatch, missing: str, match: str):
    set_slurm(clean_env, 0)
    clean_env.delenv(missing)
    with pytest.raises(RuntimeError, match=match):
        SlurmClusterResolver()


@pytest.mark.parametrize(
    "overrides, jobs, error, match",
    [
        ({}, {"worker": 3}, RuntimeError, r"Requested 3 tasks \(\{'worker': 3\}\) but SLURM assigned 4"),
        ({"SLURM_STEP_NUM_TASKS": "5"}, None, RuntimeError, r"Requested 5 tasks"),
        ({"SLURM_PROCID": "4"}, None, RuntimeError, r"SLURM_PROCID=4 is outside the 4 tasks"),
        ({"SLURM_PROCID": "x"}, None, RuntimeError, r"SLURM_PROCID='x' is not an integer"),
        ({"SLURM_STEP_TASKS_PER_NODE": "2"}, None, RuntimeError, r"gives 1 task counts for 2 nodes"),
        ({"SLURM_STEP_NODELIST": "node[1-"}, None, ValueError, r"Invalid SLURM host list 'node\[1-'"),
        ({}, {"ps": -1, "worker": 5}, ValueError, r"jobs must map job names to task counts"),
        ({}, {"bad-job": 4}, ValueError, r"Job name 'bad-job' is not valid"),
    ],
)
def test_slurm_errors(clean_env: pytest.MonkeyPatch, overrides: dict, jobs: Any, error: type, match: str):
    set_slurm(clean_env, 0, **overrides)
    with pytest.raises(error, match=match):
        SlurmClusterResolver(jobs)


def test_slurm_more_gpus_than_the_node_has(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 0)
    with pytest.raises(RuntimeError, match=r"2 tasks x gpus_per_task=3 > gpus_per_node=4"):
        SlurmClusterResolver(gpus_per_node=4, gpus_per_task=3)


# --- resolve_from_environment -------------------------------------------------------------------


def test_resolve_nothing(clean_env: pytest.MonkeyPatch):
    assert resolve_from_environment() is None
    clean_env.setenv("TF_CONFIG", "  ")
    assert resolve_from_environment() is None


def test_resolve_prefers_tf_config(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 0)
    set_tf_config(clean_env, cluster=CLUSTER, task={"type": "ps", "index": 0})
    resolver = resolve_from_environment()
    assert isinstance(resolver, TFConfigClusterResolver)
    assert resolver.master() == "zmq://p0:2222"


def test_resolve_slurm(clean_env: pytest.MonkeyPatch):
    set_slurm(clean_env, 1)
    resolver = resolve_from_environment(jobs={"ps": 2, "worker": 2}, port_base=5000)
    assert isinstance(resolver, SlurmClusterResolver)
    assert resolver.get_task_info() == ("ps", 1)
    assert resolver.master() == "zmq://node01:5001"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "untouched"


# --- oracle: TensorFlow's resolvers on the same environment ---------------------------------------


@pytest.fixture(scope="module")
def tf_resolvers():
    pytest.importorskip("tensorflow")
    import tensorflow as tf
    from tensorflow.python.distribute.cluster_resolver import slurm_cluster_resolver

    return tf.distribute.cluster_resolver, slurm_cluster_resolver


TF_CONFIGS = [
    {"cluster": CLUSTER, "task": {"type": "worker", "index": 1}},
    {"cluster": CLUSTER, "task": {"type": "chief", "index": 0}, "rpc_layer": "grpc"},
    {"cluster": {"worker": ["w0:1"]}, "task": {"type": "worker", "index": 0}},
    {"cluster": {"worker": {"1": "w1:1"}, "ps": ["p0:1"]}, "task": {"type": "worker", "index": "1"}},
    {"cluster": CLUSTER, "task": {"type": "ps", "index": 0}, "session_master": "grpc://m:1"},
    {},
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("config", TF_CONFIGS)
def test_tf_config_matches_tensorflow(tf_resolvers: Any, clean_env: pytest.MonkeyPatch, config: dict):
    tf_cluster_resolver, _ = tf_resolvers
    clean_env.setenv("TF_CONFIG", json.dumps(config))
    ours, theirs = TFConfigClusterResolver(), tf_cluster_resolver.TFConfigClusterResolver()
    assert ours.cluster_spec().as_dict() == theirs.cluster_spec().as_dict()
    assert (ours.task_type, ours.task_id) == (theirs.task_type, theirs.task_id)
    assert ours.master(rpc_layer="grpc") == theirs.master(rpc_layer="grpc")
    if "rpc_layer" in config:
        assert ours.master() == theirs.master()


@pytest.mark.tf_oracle
@pytest.mark.parametrize("rank", range(4))
@pytest.mark.parametrize("jobs", [None, {"ps": 1, "worker": 3}, {"worker": 2, "chief": 1, "evaluator": 1}])
def test_slurm_matches_tensorflow(tf_resolvers: Any, clean_env: pytest.MonkeyPatch, rank: int, jobs: Any):
    tf_cluster_resolver, _ = tf_resolvers
    set_slurm(clean_env, rank)
    theirs = tf_cluster_resolver.SlurmClusterResolver(jobs=jobs, gpus_per_node=4)
    their_cluster = theirs.cluster_spec().as_dict()
    their_gpus = os.environ["CUDA_VISIBLE_DEVICES"]
    clean_env.setenv("CUDA_VISIBLE_DEVICES", "untouched")
    ours = SlurmClusterResolver(jobs=jobs, gpus_per_node=4, rpc_layer="grpc")
    assert ours.cluster_spec().as_dict() == their_cluster
    assert os.environ["CUDA_VISIBLE_DEVICES"] == their_gpus
    assert ours.get_task_info() == theirs.get_task_info()
    assert ours.master() == theirs.master()
    assert ours.num_accelerators() == theirs.num_accelerators()


@pytest.mark.tf_oracle
@pytest.mark.parametrize("hostlist", ["n1", "n[1-3]", "node[01-03,07],gpu-a[1-2]", "n[8-11],m5,o[3-4,6,7-9]"])
def test_hostlist_matches_tensorflow(tf_resolvers: Any, hostlist: str):
    _, slurm = tf_resolvers
    assert expand_hostlist(hostlist) == slurm.expand_hostlist(hostlist)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("tasks_per_node", ["2", "3(x2),2,1", "1(x4)"])
def test_tasks_per_node_matches_tensorflow(tf_resolvers: Any, tasks_per_node: str):
    _, slurm = tf_resolvers
    assert expand_tasks_per_node(tasks_per_node) == slurm.expand_tasks_per_node(tasks_per_node)
