"""RunConfig's reading of TF_CONFIG, against TF 1's rules (its messages and derived properties)."""

from __future__ import annotations

import json

import pytest

from dtf_notebook.estimator import RunConfig
from dtf_notebook.estimator.learn import RunConfig as LearnRunConfig

CLUSTER = {"chief": ["h:0"], "worker": ["h:1", "h:2"], "ps": ["h:3", "h:4"]}


def _config(monkeypatch, task, cluster=CLUSTER, cls=RunConfig):
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": task}))
    return cls()


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ({"type": "chief", "index": 0}, ("grpc://h:0", True, 2, 3, 0)),
        ({"type": "worker", "index": 1}, ("grpc://h:2", False, 2, 3, 2)),
        ({"type": "ps", "index": 1}, ("grpc://h:4", False, 2, 3, 4)),
        ({"type": "evaluator", "index": 0}, ("", False, 0, 0, None)),
    ],
)
def test_tasks_of_a_cluster(monkeypatch, task, expected):
    config = _config(monkeypatch, task)
    got = (config.master, config.is_chief, config.num_ps_replicas, config.num_worker_replicas,
           config.global_id_in_cluster)  # fmt: skip
    assert got == expected
    assert config.task_type == task["type"] and config.task_id == task["index"]
    assert bool(config.cluster_spec.jobs) == (task["type"] != "evaluator")


def test_local_without_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = RunConfig()
    assert (config.task_type, config.task_id, config.master, config.is_chief) == ("worker", 0, "", True)
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)


@pytest.mark.parametrize(
    ("tf_config", "message"),
    [
        ({"cluster": {"worker": ["h:1"]}, "task": {"type": "worker", "index": 0}}, 'must have one "chief" node'),
        ({"cluster": CLUSTER, "task": {"type": "worker"}}, 'must have one "task_id" set'),
        ({"cluster": CLUSTER, "task": {"type": "worker", "index": 5}}, "5 is not a valid task_id"),
        ({"cluster": CLUSTER, "task": {"type": "master", "index": 0}}, "master is not a valid task_type"),
        ({"task": {"type": "ps", "index": 0}}, "task type must be WORKER"),
    ],
)
def test_bad_tf_config(monkeypatch, tf_config, message):
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    with pytest.raises(ValueError, match=message):
        RunConfig()


def test_both_checkpoint_intervals_refused():
    with pytest.raises(ValueError, match="Can not provide both"):
        RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)


def test_contrib_learn_config_chief_is_master_or_first_worker(monkeypatch):
    assert _config(monkeypatch, {"type": "master", "index": 0}, {"master": ["h:0"], "ps": ["h:1"]},
                   LearnRunConfig).is_chief  # fmt: skip
    assert _config(monkeypatch, {"type": "worker", "index": 0}, {"worker": ["h:0", "h:2"]}, LearnRunConfig).is_chief
    assert not _config(monkeypatch, {"type": "worker", "index": 1}, {"worker": ["h:0", "h:2"]},
                       LearnRunConfig).is_chief  # fmt: skip
