"""SyncReplicasOptimizer in one process: two replicas of one graph trained by two threads and one Session."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

CONFIG = tf.ConfigProto(operation_timeout_in_ms=20000)  # a bug fails the test instead of hanging it


def build_replicas(slopes, replicas_to_aggregate, total_num_replicas=None, learning_rate=0.1):
    """One shared ``w`` and global step; replica i minimises ``slopes[i] * sum(w)`` with its own optimizer."""
    w = tf.Variable([1.0, 2.0], name="w")
    global_step = tf.train.get_or_create_global_step()
    replicas = []
    for i, slope in enumerate(slopes):
        with tf.name_scope(f"replica_{i}"):
            opt = tf.train.SyncReplicasOptimizer(
                tf.train.GradientDescentOptimizer(learning_rate),
                replicas_to_aggregate=replicas_to_aggregate,
                total_num_replicas=total_num_replicas,
            )
            train_op = opt.minimize(slope * tf.reduce_sum(w), global_step=global_step)
        replicas.append((opt, train_op))
    return w, global_step, replicas


def start(sess, replicas, num_tokens=-1):
    """Runs what a monitored session would: initializers, then each replica's hook (replica 0 is the chief)."""
    hooks = [opt.make_session_run_hook(is_chief=(i == 0), num_tokens=num_tokens) for i, (opt, _) in enumerate(replicas)]
    for hook in hooks:
        hook.begin()
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    for hook in hooks:
        hook.after_create_session(sess, coord)
    return coord


def run_replicas(sess, train_ops, steps, barrier=None):
    failures = []

    def replica(train_op):
        try:
            for _ in range(steps):
                sess.run(train_op)
                if barrier is not None:
                    barrier.wait(timeout=20)
        except Exception as e:  # noqa: BLE001 - reported by the test below
            failures.append(e)

    threads = [threading.Thread(target=replica, args=(op,), daemon=True) for op in train_ops]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a replica hung"
    assert not failures, failures


def test_graph_structure_follows_tf():
    w, global_step, [(opt, train_op)] = build_replicas([1.0], replicas_to_aggregate=1)
    graph = tf.get_default_graph()
    ops = {op.name: op for op in graph.get_operations()}
    assert train_op.op.type == "Assign" and train_op.op.inputs[0].op.name == "replica_0/sync_rep_local_step"
    assert ops["sync_token_q"].get_attr("shared_name") == "sync_token_q"
    assert ops["sync_token_q"].get_attr("capacity") == -1
    assert ops["dummy_queue"].get_attr("capacity") == 1
    accumulators = [op for op in graph.get_operations() if op.type == "ResourceConditionalAccumulator"]
    assert [op.get_attr("shared_name") for op in accumulators] == ["w:0/grad_accum"]
    assert tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES)[0].op.name == "replica_0/sync_rep_local_step"
    assert opt.get_chief_queue_runner().enqueue_ops[0].type == "QueueEnqueueManyV2"
    assert opt.get_init_tokens_op(num_tokens=0).name == "no_init_tokens"


def test_too_few_init_tokens():
    _, _, [(opt, _)] = build_replicas([1.0], replicas_to_aggregate=3, total_num_replicas=1)
    with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 1 \(given\) vs 2 \(needed\)"):
        opt.get_init_tokens_op(1)
    assert opt.get_init_tokens_op(2).type == "QueueEnqueueManyV2"


def test_argument_errors():
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
    with pytest.raises(ValueError, match="after apply_gradients"):
        opt.get_chief_queue_runner()
    with pytest.raises(ValueError, match="should be called before using the hook"):
        opt.make_session_run_hook(True).begin()
    w = tf.Variable(1.0)
    with pytest.raises(ValueError, match="Global step is required"):
        opt.apply_gradients([(tf.constant(1.0), w)])
    with pytest.raises(ValueError, match="Must supply at least one variable"):
        opt.apply_gradients([], global_step=tf.train.get_or_create_global_step())


def test_two_replicas_in_lockstep_apply_the_average_gradient_once_per_step():
    steps, lr = 4, 0.1
    w, global_step, replicas = build_replicas([1.0, 3.0], replicas_to_aggregate=2, learning_rate=lr)
    with tf.Session(config=CONFIG) as sess:
        coord = start(sess, replicas, num_tokens=0)
        # A barrier after each step keeps one replica from taking both tokens of a step.
        run_replicas(sess, [op for _, op in replicas], steps, threading.Barrier(2))
        assert sess.run(global_step) == steps
        np.testing.assert_allclose(sess.run(w), np.array([1.0, 2.0]) - steps * lr * (1.0 + 3.0) / 2, rtol=1e-6)
        local_steps = [v for v in tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES) if "sync_rep_local_step" in v.op.name]
        assert sess.run(local_steps) == [steps, steps]
        coord.request_stop()


def test_backup_replica_and_stale_gradients_never_hang():
    steps, lr, slope = 6, 0.05, 2.0
    w, global_step, replicas = build_replicas(
        [slope, slope], replicas_to_aggregate=1, total_num_replicas=2, learning_rate=lr
    )
    with tf.Session(config=CONFIG) as sess:
        coord = start(sess, replicas)
        run_replicas(sess, [op for _, op in replicas], steps)
        aggregated = int(sess.run(global_step))
        # Every aggregated step applies exactly one average gradient (all gradients are equal here).
        assert 1 <= aggregated <= 2 * steps
        np.testing.assert_allclose(sess.run(w), np.array([1.0, 2.0]) - aggregated * lr * slope, rtol=1e-6)
        coord.request_stop()


def test_sparse_gradients_are_averaged_per_row():
    table = tf.Variable(np.zeros((4, 2), np.float32), name="table")
    global_step = tf.train.get_or_create_global_step()
    replicas = []
    for i, rows in enumerate(([0, 1], [1, 3])):
        with tf.name_scope(f"replica_{i}"):
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate=2)
            loss = tf.reduce_sum(tf.gather(table, rows)) * float(i + 1)
            replicas.append((opt, opt.minimize(loss, global_step=global_step)))
    with tf.Session(config=CONFIG) as sess:
        coord = start(sess, replicas, num_tokens=0)
        run_replicas(sess, [op for _, op in replicas], 1)
        # Row 1 had gradients 1 and 2 (average 1.5); rows 0 and 3 only one each.
        np.testing.assert_allclose(sess.run(table), [[-1, -1], [-1.5, -1.5], [0, 0], [-2, -2]])
        assert sess.run(global_step) == 1
        coord.request_stop()


def test_chief_queue_runner_ends_when_the_session_closes():
    w, global_step, replicas = build_replicas([1.0], replicas_to_aggregate=1)
    sess = tf.Session()
    coord = start(sess, replicas)
    sess.run(replicas[0][1])
    runner_threads = [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread-dummy_queue")]
    assert runner_threads
    coord.request_stop()
    sess.close()  # the sync thread waits in take_grad: closing the session cancels it
    for t in runner_threads:
        t.join(5)
    assert not any(t.is_alive() for t in runner_threads)


def _one_replica_takes_both_initial_tokens(framework) -> tuple[int, list[float]]:
    """One replica of two runs its train op twice while the other never does (as a worker descheduled under load):
    its two gradients fill the step's aggregate of two. Returns (global step, w) once that step is applied."""
    with framework.Graph().as_default():
        global_step = framework.train.get_or_create_global_step()
        w = framework.Variable([1.0, 2.0], name="w")
        opt = framework.train.SyncReplicasOptimizer(
            framework.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=2, total_num_replicas=2
        )
        train_op = opt.minimize(2.0 * framework.reduce_sum(w), global_step=global_step)
        hook = opt.make_session_run_hook(is_chief=True)
        config = framework.ConfigProto(operation_timeout_in_ms=20000)
        with framework.train.MonitoredTrainingSession(is_chief=True, hooks=[hook], config=config) as sess:
            sess.run(train_op)
            sess.run(train_op)  # the second initial token: returns whether or not the step was applied yet
            deadline = time.monotonic() + 20
            while sess.run(global_step) < 1 and time.monotonic() < deadline:
                time.sleep(0.01)  # the chief's queue runner applies the step on its own thread
            return int(sess.run(global_step)), [float(v) for v in sess.run(w)]


@pytest.mark.tf_oracle
def test_one_replica_can_supply_every_gradient_of_a_step_as_in_tensorflow():
    # A worker is not guaranteed a gradient in each step: the aggregate counts gradients, not workers.
    import tensorflow.compat.v1 as real_tf

    real_tf.disable_eager_execution()
    expected = _one_replica_takes_both_initial_tokens(real_tf)
    assert expected == (1, pytest.approx([0.8, 1.8]))
    assert _one_replica_takes_both_initial_tokens(tf) == expected
