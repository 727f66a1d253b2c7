"""SyncReplicasOptimizer on a real cluster: 1 ps + 2 workers, each worker its own client process running
between-graph synchronous training through a MonitoredTrainingSession and the optimizer's hook."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.distributed.cluster_util import LocalCluster, run_client

pytestmark = pytest.mark.cluster

LEARNING_RATE, SLOPE = 0.1, 2.0
W0 = np.array([1.0, 2.0])

# Every worker's gradient is SLOPE for each element of w, so each aggregated step moves w by exactly
# LEARNING_RATE * SLOPE, however many (non-stale) gradients it averaged.
TRAINER = f"""
import sys
import dtf_notebook.compat.v1 as tf

target, task = sys.argv[1], int(sys.argv[2])
replicas, total, last_step, max_runs, timeout_ms, num_tokens = map(int, sys.argv[3:9])
is_chief = task == 0
with tf.device(tf.train.replica_device_setter(ps_tasks=1, worker_device=f"/job:worker/task:{{task}}")):
    global_step = tf.train.get_or_create_global_step()
    w = tf.Variable({W0.tolist()}, name="w")
    loss = {SLOPE} * tf.reduce_sum(w)
    opt = tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer({LEARNING_RATE}), replicas_to_aggregate=replicas, total_num_replicas=total
    )
    train_op = opt.minimize(loss, global_step=global_step)
# A start barrier shared through the ps: each worker checks in, the chief waits for both.
with tf.device("/job:ps/task:0"):
    started = tf.FIFOQueue(2, tf.int32, shapes=[], shared_name="started")
check_in, all_in = started.enqueue(task), started.dequeue_many(2)
sync_hook = opt.make_session_run_hook(is_chief, num_tokens=num_tokens)
config = tf.ConfigProto(operation_timeout_in_ms=timeout_ms)  # no step waits forever
with tf.train.MonitoredTrainingSession(
    target, is_chief, hooks=[sync_hook], config=config, stop_grace_period_secs=1, max_wait_secs=60
) as sess:
    sess.run(check_in)
    if is_chief:
        sess.run(all_in, options=tf.RunOptions(timeout_in_ms=60000))
    runs = 0
    while runs < max_runs:
        sess.run(train_op)  # returns once this worker got a token: a step it took part in was applied
        runs += 1
        if sess.run(global_step) >= last_step:
            break
    print("result", task, runs, int(sess.run(global_step)), *sess.run(w), flush=True)
"""


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(jobs={"ps": 1, "worker": 2}) as c:
        yield c


@pytest.fixture(autouse=True)
def reset_after(cluster):
    yield
    # Clears the ps containers; a chief's sync op still waiting for gradients there is cancelled with them.
    tf.Session.reset(cluster.target("worker", 0))


def train(cluster, replicas, total, last_step, max_runs, timeout_ms=30000, num_tokens=-1):
    """Runs both workers' clients at once; returns ({task: (runs, global_step, w)}, {task: failure})."""
    results: dict[int, tuple[int, int, np.ndarray]] = {}
    failures: dict[int, BaseException] = {}

    def worker(task):
        args = [cluster.target("worker", task), str(task)]
        args += [str(a) for a in (replicas, total, last_step, max_runs[task], timeout_ms, num_tokens)]
        try:
            out = run_client(TRAINER, *args, timeout=150, env=cluster.client_env())
        except RuntimeError as e:
            failures[task] = e
            return
        fields = [line.split() for line in out.splitlines() if line.startswith("result")][-1]
        results[task] = (int(fields[2]), int(fields[3]), np.array([float(v) for v in fields[4:]]))

    threads = [threading.Thread(target=worker, args=(task,)) for task in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, failures


def test_two_workers_average_their_gradients_each_step(cluster):
    last_step = 8
    results, failures = train(cluster, replicas=2, total=2, last_step=last_step, max_runs={0: 100, 1: 100})
    assert not failures, failures
    for task in (0, 1):
        runs, step, w = results[task]
        assert step == last_step  # stale gradients never make an extra step
        np.testing.assert_allclose(w, W0 - step * LEARNING_RATE * SLOPE, rtol=1e-5)
        assert runs >= 1
    # Each step averaged 2 fresh gradients, each from a run of its own; every run took a token, and there are 2 at
    # the start and 2 more per step. Which worker gave a step's gradients is not fixed: as in TF, a worker slowed
    # down (by a loaded machine) may leave both of a step's to the other (see test_sync_replicas.py's oracle test).
    total_runs = results[0][0] + results[1][0]
    assert 2 * last_step <= total_runs <= 2 * last_step + 2


def test_backup_worker_leaving_early_does_not_stop_training(cluster):
    last_step = 8
    # replicas_to_aggregate=1 of 2: worker 1 is a backup; it leaves after 2 runs and worker 0 goes on alone.
    results, failures = train(cluster, replicas=1, total=2, last_step=last_step, max_runs={0: 100, 1: 2})
    assert not failures, failures
    runs, step, w = results[0]
    assert step == last_step
    np.testing.assert_allclose(w, W0 - step * LEARNING_RATE * SLOPE, rtol=1e-5)
    assert results[1][0] == 2 and results[1][1] < last_step


def test_a_worker_left_alone_times_out_instead_of_hanging(cluster):
    # 2 gradients per step, no initial tokens, and worker 1 never trains: worker 0 pushes its gradient and
    # waits for a token that cannot come. Its step ends at the deadline (as does the chief's sync op).
    results, failures = train(
        cluster, replicas=2, total=2, last_step=5, max_runs={0: 5, 1: 0}, timeout_ms=3000, num_tokens=0
    )
    assert results[1][:2] == (0, 0) and 0 in failures
    # The error is the train op's (waiting for a token) or the chief's sync thread's (waiting for gradients).
    assert "DeadlineExceededError: Timed out waiting for" in str(failures[0])


# ---- queues on a ps, shared by sessions -----------------------------------------------------------
@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def ps_queue(name):
    with tf.device("/job:ps/task:0"):
        return tf.FIFOQueue(100, tf.float32, shapes=[[]], shared_name=name)


def test_blocked_dequeues_on_a_ps_neither_starve_it_nor_block_its_io_thread(cluster, graph):
    q = ps_queue("many_waiters")
    pop, push = q.dequeue(), q.enqueue_many([[float(i) for i in range(12)]])
    config = tf.ConfigProto(operation_timeout_in_ms=20000)
    sessions = [tf.Session(cluster.target("worker", i % 2), config=config) for i in range(12)]
    try:
        # Many fast dequeues first: a partition that can wait must still never run on the ps's I/O thread.
        sessions[0].run(q.enqueue_many([[0.0] * 30]))
        for _ in range(30):
            sessions[0].run(pop)
        got: list[float] = []
        waiters = [threading.Thread(target=lambda s=s: got.append(float(s.run(pop))), daemon=True) for s in sessions]
        for t in waiters:
            t.start()
        threading.Event().wait(0.5)  # let them block on the ps: 12 of its request threads wait
        with tf.Session(cluster.target("worker", 0)) as sess:
            sess.run(push)
        for t in waiters:
            t.join(30)
    finally:
        for s in sessions:
            s.close()
    assert sorted(got) == [float(i) for i in range(12)]


def test_blocked_dequeue_on_a_ps_times_out_and_ends_at_reset(cluster, graph):
    q = ps_queue("reset_me")
    pop = q.dequeue()
    with tf.Session(cluster.target("worker", 1), config=tf.ConfigProto(operation_timeout_in_ms=500)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="an element of queue 'reset_me'"):
            sess.run(pop)
    errors: list[BaseException] = []

    def blocked():
        with tf.Session(cluster.target("worker", 1), graph=graph) as sess:
            try:
                sess.run(pop)
            except tf.errors.OpError as e:
                errors.append(e)

    waiter = threading.Thread(target=blocked, daemon=True)
    waiter.start()
    threading.Event().wait(0.5)
    tf.Session.reset(cluster.target("worker", 0))
    waiter.join(10)
    assert not waiter.is_alive()
    assert isinstance(errors[0], tf.errors.CancelledError) and "reset_me" in str(errors[0])


def test_a_failing_partition_aborts_a_dequeue_blocked_on_a_ps(cluster, graph):
    q = ps_queue("aborted")
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32)
        bad = tf.reshape(x, [3])
    with tf.Session(cluster.target("worker", 0)) as sess:  # no deadline: only the abort can end the dequeue
        started = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run([q.dequeue(), bad], {x: [1.0, 2.0]})
        assert time.monotonic() - started < 10
        sess.run(q.enqueue(5.0))
        assert sess.run(q.dequeue()) == 5.0  # the aborted dequeue took nothing
