"""MonitoredTrainingSession on a real multi-process cluster: recovery from a parameter-server crash (one chief;
and a chief plus another worker training with GradientDescent), and a non-chief worker waiting for the chief.

Clients run in their own processes (as training scripts do) and print one line per event, which the tests read.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.distributed.cluster_util import LocalCluster

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


def _start_client(cluster: LocalCluster, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", TRAINER, *args],
        env=cluster.client_env(),
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
    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster:
        proc = _start_client(cluster, cluster.target("worker", 0), "chief", str(last_step), str(tmp_path))
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
    with LocalCluster(jobs={"ps": 1, "worker": 2}) as cluster:
        worker = _start_client(cluster, cluster.target("worker", 1), "worker", str(last_step))
        try:
            time.sleep(3.0)  # the worker is polling the uninitialised model meanwhile
            chief = _start_client(cluster, cluster.target("worker", 0), "chief", str(last_step))
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


# Two workers train one model with a real optimizer; each prints the global step and loss of its steps.
SGD_TRAINER = """
import logging, sys, time
import numpy as np
import dtf_notebook.compat.v1 as tf

target, task, last_step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
checkpoint_dir = sys.argv[4] if task == 0 else None
logging.basicConfig(level=logging.INFO, stream=sys.stderr)
x_data = np.random.default_rng(task).normal(size=(64, 4)).astype(np.float32)
y_data = x_data @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)

with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device="/job:worker/task:%d" % task)):
    w = tf.get_variable("w", [4, 1], initializer=tf.zeros_initializer())
    global_step = tf.train.get_or_create_global_step()
    loss = tf.reduce_mean(tf.square(tf.matmul(x_data, w) - y_data))
    train_op = tf.train.GradientDescentOptimizer(0.02).minimize(loss, global_step=global_step)

class Report(tf.train.SessionRunHook):
    def after_create_session(self, session, coord):
        print("session", int(session.run(global_step)), flush=True)

hooks = [tf.train.StopAtStepHook(last_step=last_step), Report()]
with tf.train.MonitoredTrainingSession(
    target, task == 0, checkpoint_dir=checkpoint_dir, save_checkpoint_steps=10, hooks=hooks
) as sess:
    while not sess.should_stop():
        _, step, value = sess.run([train_op, global_step, loss])
        print("step", step, value, flush=True)
        time.sleep(0.03)
print("done", flush=True)
"""


class _Trainer:
    """A client process whose stdout and stderr lines are collected as they come (neither pipe can fill up)."""

    def __init__(self, cluster: LocalCluster, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SGD_TRAINER, *args],
            env=cluster.client_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [
            threading.Thread(target=self._drain, args=(self.proc.stdout, self.out), daemon=True),
            threading.Thread(target=self._drain, args=(self.proc.stderr, self.err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _drain(pipe, lines: list[str]) -> None:
        for line in pipe:
            lines.append(line.rstrip("\n"))

    def wait_for(self, found, timeout: float = 90) -> None:
        """Waits until ``found(self)`` holds (fails early, with the output, if the process ends first)."""
        deadline = time.monotonic() + timeout
        while not found(self):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting ({self.proc.poll()}):\n" + "\n".join(self.err[-40:]))
            time.sleep(0.02)

    def finish(self, timeout: float = 90) -> None:
        try:
            self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for reader in self._readers:
                reader.join(10)
        assert self.proc.returncode == 0, "\n".join(self.err[-40:])

    def sessions(self) -> list[int]:
        return [int(line.split()[1]) for line in self.out if line.startswith("session")]

    def steps_after(self, session: int) -> list[tuple[int, float]]:
        """(global step, loss) of the steps run in this worker's ``session``-th session (0 = the first)."""
        starts = [i for i, line in enumerate(self.out) if line.startswith("session")]
        if session >= len(starts):
            return []
        end = starts[session + 1] if session + 1 < len(starts) else len(self.out)
        return [
            (int(p[1]), float(p[2]))
            for p in (line.split() for line in self.out[starts[session] : end])
            if p[0] == "step"
        ]


def test_both_workers_recover_from_a_parameter_server_restart_and_training_continues(tmp_path):
    last_step = 120
    with LocalCluster(jobs={"ps": 1, "worker": 2}) as cluster:
        chief = _Trainer(cluster, cluster.target("worker", 0), "0", str(last_step), str(tmp_path))
        other = _Trainer(cluster, cluster.target("worker", 1), "1", str(last_step))
        try:
            # Both train; the chief has checkpointed (every 10 steps) by global step 30.
            chief.wait_for(lambda t: any(s >= 30 for s, _ in t.steps_after(0)))
            other.wait_for(lambda t: bool(t.steps_after(0)))
            # The chief is held back while the ps comes back, so the other worker must wait for the model.
            os.kill(chief.proc.pid, signal.SIGSTOP)
            try:
                cluster.kill("ps", 0)  # SIGKILL: w and the global step die with it
                cluster.restart("ps", 0)  # same port, empty containers
                other.wait_for(lambda t: any("Waiting for model to be ready" in line for line in t.err))
            finally:
                os.kill(chief.proc.pid, signal.SIGCONT)
            chief.finish()
            other.finish()
        finally:
            for trainer in (chief, other):
                if trainer.proc.poll() is None:
                    trainer.proc.kill()
    restored = [int(n) for n in re.findall(r"Restored model from \S*model\.ckpt-(\d+)", "\n".join(chief.err))]
    # The chief started fresh (the other worker, waiting for the model, may step between the chief's initialisation
    # and its hook's read, but never as far as the first checkpoint), then restored its last checkpoint: global
    # step and w continue from there.
    assert chief.sessions()[0] < 10 and len(chief.sessions()) == 2, chief.out
    assert len(restored) == 1 and restored[0] >= 10, chief.err[-20:]
    # The other worker, polling for the model, may step between the chief's restore and its hook's read.
    assert restored[0] <= chief.sessions()[1] <= restored[0] + 5, (restored, chief.sessions())
    before, after = chief.steps_after(0), chief.steps_after(1)
    assert after and all(s > restored[0] for s, _ in after)
    first_loss = before[0][1]
    assert after[0][1] < 0.5 * first_loss  # the trained w came back, not zeros
    # The other worker recovered too: its new session saw the restored model (it never initialises one).
    assert len(other.sessions()) == 2 and other.sessions()[1] >= restored[0], other.out
    assert other.steps_after(1) and all(s > restored[0] for s, _ in other.steps_after(1))
    # Training ran to the last step and both finished.
    assert max(s for t in (chief, other) for s, _ in t.steps_after(1)) >= last_step
    assert chief.out[-1] == other.out[-1] == "done"
