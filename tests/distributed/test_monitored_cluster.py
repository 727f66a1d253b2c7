"""MonitoredTrainingSession on a real multi-process cluster: recovery from a parameter-server crash, and a
non-chief worker waiting for the chief.

Clients run in their own processes (as training scripts do) and print one line per event, which the tests read.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from tests.distributed.cluster_util import ProcessCluster, task_env

pytestmark = pytest.mark.cluster

# The seed's loop: variables on the ps, the chief restores or initialises, checkpoints every few steps.
TRAINER = """
import logging, sys, time
import dtf_notebook.compat.v1 as tf

target, is_chief, last_step = sys.argv[1], sys.argv[2] == "chief", int(sys.argv[3])
checkpoint_dir = sys.argv[4] if len(sys.argv) > 4 else None
logging.basicConfig(level=logging.INFO, stream=sys.stderr)

with tf.device("/job:ps/task:0"):
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0, name="w")
train_op = [tf.assign_add(step, 1), tf.assign_add(w, 1.0)]  # both return their new values

class Report(tf.train.SessionRunHook):
    def after_create_session(self, session, coord):
        print("session", int(session.run(step)), flush=True)

start = time.monotonic()
hooks = [tf.train.StopAtStepHook(last_step=last_step), Report()]
with tf.train.MonitoredTrainingSession(
    target, is_chief, checkpoint_dir=checkpoint_dir, save_checkpoint_steps=5, hooks=hooks, max_wait_secs=90
) as sess:
    print("ready after", round(time.monotonic() - start, 2), flush=True)
    while not sess.should_stop():
        print("step", *sess.run(train_op), flush=True)
        time.sleep(0.05)
print("done", flush=True)
"""


def _start_client(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", TRAINER, *args],
        env=task_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen, timeout: float = 180) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, f"client failed ({proc.returncode}):\n{err[-3000:]}"
    return out, err


def _steps(lines: list[str]) -> list[tuple[int, float]]:
    return [(int(p[1]), float(p[2])) for p in (line.split() for line in lines) if p and p[0] == "step"]


def test_chief_recovers_from_a_parameter_server_restart_by_restoring_the_checkpoint(tmp_path):
    last_step = 40
    with ProcessCluster({"ps": 1, "worker": 1}) as cluster:
        proc = _start_client(cluster.target("worker", 0), "chief", str(last_step), str(tmp_path))
        try:
            before = []
            for line in proc.stdout:
                before.append(line)
                if line.startswith("step") and int(line.split()[1]) >= 12:
                    break
            cluster.kill("ps", 0)  # its variables die with it
            time.sleep(0.5)
            cluster.restart("ps", 0)  # same port, empty containers
        except BaseException:
            proc.kill()
            raise
        out, err = _finish(proc)
    lines = before + out.splitlines()
    sessions = [int(line.split()[1]) for line in lines if line.startswith("session")]
    restored = [int(n) for n in re.findall(r"Restored model from \S*model\.ckpt-(\d+)", err)]
    steps = _steps(lines)
    # One fresh start at 0, then one session restored from a checkpoint taken before the crash (not from 0).
    assert sessions[0] == 0 and len(sessions) >= 2, lines
    assert restored and restored[-1] == sessions[-1] and restored[-1] >= 10 and restored[-1] % 5 == 0, err[-3000:]
    # The steps go on from the restored step to the last one, and w (also on the ps) was restored with them.
    last_session = max(i for i, line in enumerate(lines) if line.startswith("session"))
    after = _steps(lines[last_session:])
    assert [s for s, _ in after] == list(range(restored[-1] + 1, last_step + 1))
    assert all(s == w for s, w in steps)
    assert lines[-1] == "done"


def test_non_chief_worker_waits_for_the_chief_then_trains():
    last_step = 30
    with ProcessCluster({"ps": 1, "worker": 2}) as cluster:
        worker = _start_client(cluster.target("worker", 1), "worker", str(last_step))
        try:
            time.sleep(3.0)  # the worker is polling the uninitialised model meanwhile
            chief = _start_client(cluster.target("worker", 0), "chief", str(last_step))
        except BaseException:
            worker.kill()
            raise
        chief_out, _ = _finish(chief)
        worker_out, worker_err = _finish(worker)
    worker_lines = worker_out.splitlines()
    waited = float(worker_lines[1].split()[2])
    assert worker_lines[0].startswith("session") and waited >= 1.0, worker_lines
    assert "Waiting for model to be ready" in worker_err
    worker_steps = [s for s, _ in _steps(worker_lines)]
    chief_steps = [s for s, _ in _steps(chief_out.splitlines())]
    # Both advanced the one global step on the ps; together they reached the last step.
    assert worker_steps and worker_steps == sorted(worker_steps) and max(worker_steps + chief_steps) >= last_step
    # The chief initialised the model; the waiting worker may take a step or two before the chief's hook reads it.
    first = chief_out.splitlines()[0].split()
    assert first[0] == "session" and 0 <= int(first[1]) < last_step and worker_lines[-1] == "done"
