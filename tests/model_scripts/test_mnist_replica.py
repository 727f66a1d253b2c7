"""mnist_replica.py (this folder), TF1's between-graph replica trainer, run as a whole program: one process per task
(a ps and two workers on loopback ports), with --job_name/--task_index flags as its authors intended, under real
TensorFlow (its own servers) and under dtf_notebook, in async mode and in sync mode (SyncReplicasOptimizer).

The two workers race each other, so the steps each one runs and the final model differ from run to run even
under one library: the comparison is of what is deterministic -- in sync mode the validation cross entropy of the
initial model, which the chief prints before it hands out the first tokens (both libraries start from the same
values, saved from TF's chief and loaded into ours), to 1e-5 -- and of outcomes: both workers finish, the global
step reaches --train_steps, the variables live on the ps task, and training cuts the validation cross entropy to
a fraction of its start under both, to within a factor of TF's (in async mode only when the two runs' workers split
the steps alike: how they interleave moves the result as much under either library). In sync mode the other worker
may stay blocked on the token queue once the chief has finished and left, as it does under TF (nobody hands out
tokens any more); the test then stops it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from task_processes import run_tasks

STEPS = 60
DEADLINE = 240  # seconds for a whole run; a hang fails the test instead of blocking it
SYNC_GRACE = 30  # seconds a sync-mode worker gets to finish once the chief has


def _run_cluster(lib: str, sync: bool, tmp: str, chief_options: list[str]) -> dict[str, str]:
    """Runs the ps and both workers as processes; returns the workers' stdout (``chief``, and ``worker1`` unless it
    blocked in sync mode) and the chief's stderr (``chief_err``)."""
    args = [f"--train_steps={STEPS}", f"--data_dir={tmp}", *(["--sync_replicas"] if sync else [])]
    # TF's sync mode: once the chief has left, nobody fills the token queue, so a worker whose last gradients came
    # too late blocks in it forever (TF's own servers do this too).
    chief, other = run_tasks(
        lib,
        "mnist_replica.py",
        tmp,
        2,
        args,
        deadline=DEADLINE,
        runner_options={0: chief_options},
        may_block={1: SYNC_GRACE} if sync else None,
    )
    result = {"chief": chief.out, "chief_err": chief.err}
    if other.out is not None:
        result["worker1"] = other.out
    return result


def _floats(pattern: str, text: str) -> list[float]:
    return [float(v) for v in re.findall(pattern, text)]


def _steps_of_other_worker(run: dict[str, str]) -> int:
    """How many steps the non-chief worker ran (it prints a line per step it runs)."""
    return len(_floats(r"global step: (\d+)\)", run["worker1"]))


def _check_run(run: dict[str, str]) -> float:
    """The workers (both, or in sync mode the chief alone when the other one blocked) trained until the global step
    reached STEPS; returns the chief's final validation cross entropy."""
    finals = []
    for name in ("chief", "worker1")[: len(run) - 1]:
        steps = _floats(r"global step: (\d+)\)", run[name])
        assert steps and steps[-1] >= STEPS, run[name][-2000:]
        finals += _floats(r"step\(s\), validation cross entropy = (\S+)", run[name])
    assert len(finals) == len(run) - 1 and np.isfinite(finals).all()
    devices = re.search(r"run_script: variable devices (\[.*\])", run["chief_err"])
    assert devices and all(d.startswith("/job:ps/task:0") for d in eval(devices.group(1), {})), run["chief_err"]
    return finals[0]


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.tf_oracle
@pytest.mark.parametrize("mode", ["async", "sync"])
def test_mnist_replica_trains_as_under_tf(mode, tmp_path):
    pytest.importorskip("tensorflow")
    sync, tmp, init = mode == "sync", str(tmp_path), str(tmp_path / "init.pkl")
    theirs = _run_cluster("tf", sync, tmp, ["--save-init", init, "--seed", "1"])
    mine = _run_cluster("dtf", sync, tmp, ["--load-init", init])
    tf_final, final = _check_run(theirs), _check_run(mine)
    if sync:
        (tf_start,), (start,) = (
            _floats(r"Initial validation cross entropy = (\S+)", r["chief"]) for r in (theirs, mine)
        )
        np.testing.assert_allclose(start, tf_start, rtol=1e-5, err_msg="initial validation cross entropy")
    else:
        # 200 validation images: an untrained model's summed cross entropy is about 200 * ln(10).
        tf_start = start = 200 * np.log(10)
    if sync:
        assert tf_final < 0.25 * tf_start and final < 0.25 * start, (tf_final, final)
        assert 0.5 < final / tf_final < 2.0, (tf_final, final)
    else:
        # Async workers interleave their updates as the scheduler lets them, in TF as here, and how they split the
        # steps moves the final cross entropy by up to 3x under either library (stale gradients). Measured on
        # 2026-11-27: with the chief running nearly every step, TF ended at 36-42 and this at 33-47 (5 and 12 runs);
        # with the other worker running 11-37 of the 60 steps, TF at 52-58 and this at 47-85, once 115. So both
        # must have trained, and the two are compared only when their workers split the steps alike.
        assert tf_final < 0.4 * tf_start and final < 0.4 * start, (tf_final, final)
        split, tf_split = (_steps_of_other_worker(r) for r in (mine, theirs))
        if abs(split - tf_split) <= 5:
            assert final / tf_final < 2.0, (tf_final, final, tf_split, split)
