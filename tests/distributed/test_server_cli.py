"""``dtf-server`` under SLURM: the cluster from SLURM's variables, and GPUs shared out per task with
``--gpus-per-node`` / ``--gpus-per-task`` (``CUDA_VISIBLE_DEVICES``, as TF's SlurmClusterResolver sets it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dtf_notebook.server import parse_args, resolve

# Two nodes, two tasks each; this process is rank 3 (node2, local rank 1).
SLURM = {
    "SLURM_PROCID": "3",
    "SLURM_STEP_NODELIST": "node[1-2]",
    "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
    "SLURM_STEP_NUM_TASKS": "4",
}


@pytest.fixture
def slurm_env(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "untouched")  # restored after the test
    for name, value in SLURM.items():
        monkeypatch.setenv(name, value)
    return monkeypatch


def test_gpus_per_node_gives_each_task_its_share(slurm_env):
    cluster, job, task = resolve(parse_args(["--gpus-per-node", "4"]))
    assert cluster.as_dict() == {"ps": ["node1:8888"], "worker": ["node1:8889", "node2:8888", "node2:8889"]}
    assert (job, task) == ("worker", 2)
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "2,3"  # local rank 1 of 2 tasks on a 4-GPU node


def test_gpus_per_task(slurm_env):
    slurm_env.setenv("SLURM_PROCID", "2")  # node2, local rank 0
    resolve(parse_args(["--gpus-per-task", "1", "--slurm-jobs", "worker=4"]))
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0"
    slurm_env.setenv("SLURM_PROCID", "1")  # node1, local rank 1
    _, job, task = resolve(parse_args(["--gpus-per-task", "1", "--slurm-jobs", "worker=4"]))
    assert (job, task, os.environ["CUDA_VISIBLE_DEVICES"]) == ("worker", 1, "1")


def test_without_gpu_flags_gpus_are_left_alone(slurm_env):
    resolve(parse_args([]))
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "untouched"


def test_more_gpus_than_a_node_has_is_refused(slurm_env):
    with pytest.raises(SystemExit, match="gpus_per_task=3 > gpus_per_node=4"):
        resolve(parse_args(["--gpus-per-node", "4", "--gpus-per-task", "3"]))


def test_gpu_flags_outside_slurm_are_refused(monkeypatch):
    monkeypatch.delenv("SLURM_PROCID", raising=False)
    args = ["--cluster", '{"ps": ["127.0.0.1:2222"]}', "--job", "ps", "--task", "0", "--gpus-per-task", "1"]
    with pytest.raises(SystemExit, match="only apply under SLURM"):
        resolve(parse_args(args))


def test_task_process_sees_only_its_gpus():
    """A task started under (fake) SLURM as local rank 1 with one GPU per task sees CUDA device 1 only."""
    from dtf_notebook.distributed.transport import Client
    from tests.distributed.cluster_util import free_port, task_env

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    gpus = torch.cuda.device_count()
    port = free_port()
    env = task_env()
    env.pop("TF_CONFIG", None)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update(
        {
            "SLURM_PROCID": "1",
            "SLURM_STEP_NODELIST": "127.0.0.1",
            "SLURM_STEP_TASKS_PER_NODE": "2",
            "SLURM_STEP_NUM_TASKS": "2",
        }
    )
    args = ["--slurm-jobs", "worker=2", "--slurm-port-base", str(port - 1), "--gpus-per-task", "1"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dtf_notebook.server", *args], env=env, stdout=subprocess.PIPE, text=True
    )
    client = Client(dead_after=10.0)
    try:
        assert proc.stdout.readline().split()[:4] == ["ready", "worker", "1", f"127.0.0.1:{port}"]
        reply, _ = client.call(f"127.0.0.1:{port}", "GetStatus", {}, timeout=60)
        seen = [d["name"] for d in reply["devices"] if d["device_type"] == "GPU" and not d.get("virtual")]
        # CUDA_VISIBLE_DEVICES=1: one GPU when the machine has two or more, none when it has one.
        assert seen == (["/job:worker/replica:0/task:1/device:GPU:0"] if gpus >= 2 else [])
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
