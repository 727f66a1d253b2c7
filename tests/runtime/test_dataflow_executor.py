"""The executor as a dataflow: ops run when their inputs are ready, blocking kernels never hold the step hostage,
an op error aborts the step, control inputs and value releases hold under parallel execution."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime import executor
from dtf_notebook.runtime.dataflow import NORMAL, FlowRun, build_flow_graph

#: Long enough that a deadlock shows as a DeadlineExceededError instead of a hung suite.
_TIMEOUT_MS = 20_000


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


@pytest.fixture
def always_parallel(monkeypatch):
    """Plans too short to gain from threads run serially; these tests want the dataflow path anyway."""
    monkeypatch.setattr(executor, "_PARALLEL_MIN_SECS", 0.0, raising=False)


def _real_tf():
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    return real


def _dequeue_before_enqueue(lib, target: str = "", threads: int = 0):
    with lib.Graph().as_default():
        q = lib.FIFOQueue(2, lib.float32)
        taken = q.dequeue()  # created first: a fixed creation-order schedule would wait here forever
        put = q.enqueue(1.0)
        config = lib.ConfigProto(inter_op_parallelism_threads=threads, operation_timeout_in_ms=_TIMEOUT_MS)
        with lib.Session(target, config=config) as sess:
            return sess.run([taken, put])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("threads", [0, 1, 2])
def test_dequeue_created_before_its_enqueue_runs_as_in_tf(threads):
    real = _real_tf()
    assert _dequeue_before_enqueue(tf, threads=threads) == _dequeue_before_enqueue(real, threads=threads)
    assert _dequeue_before_enqueue(tf, threads=threads) == [1.0, None]


@pytest.mark.tf_oracle
def test_dequeue_created_before_its_enqueue_on_a_server_runs_as_in_tf():
    real = _real_tf()
    ours = tf.train.Server.create_local_server()
    theirs = real.train.Server.create_local_server()
    try:
        assert _dequeue_before_enqueue(tf, ours.target) == _dequeue_before_enqueue(real, theirs.target) == [1.0, None]
    finally:
        ours.stop()


def _error_beside_blocked_dequeue(lib):
    with lib.Graph().as_default():
        q = lib.FIFOQueue(2, lib.float32)
        taken = q.dequeue()  # never gets an element
        x = lib.placeholder(lib.float32, [None])
        bad = lib.reshape(x, [2])
        with lib.Session(config=lib.ConfigProto(operation_timeout_in_ms=_TIMEOUT_MS)) as sess:
            start = time.monotonic()
            with pytest.raises(lib.errors.OpError) as caught:
                sess.run([taken, bad], feed_dict={x: [1.0, 2.0, 3.0]})
            return type(caught.value).__name__, caught.value.message, time.monotonic() - start


@pytest.mark.tf_oracle
def test_an_op_error_aborts_the_step_and_wakes_a_blocked_kernel_as_in_tf():
    real = _real_tf()
    ours_type, ours_message, ours_secs = _error_beside_blocked_dequeue(tf)
    theirs_type, _, _ = _error_beside_blocked_dequeue(real)
    assert ours_type == theirs_type == "InvalidArgumentError"
    assert "Reshape" in ours_message  # wrapped by node_error: names the failing node
    assert ours_secs < _TIMEOUT_MS / 1000 / 2  # gave up on the error, not on the deadline


@pytest.mark.tf_oracle
@pytest.mark.usefixtures("always_parallel")
def test_control_inputs_order_a_read_after_the_assign_as_in_tf():
    real = _real_tf()

    def run(lib):
        with lib.Graph().as_default():
            v = lib.Variable(1.0)
            other = lib.constant(np.ones((64, 64), np.float32))
            busy = lib.matmul(other, other)  # a sibling branch, so that two steps are ready at once
            assign = lib.assign_add(v, 1.0)
            with lib.control_dependencies([assign]):
                read = lib.identity(v)
            config = lib.ConfigProto(inter_op_parallelism_threads=2)
            with lib.Session(config=config) as sess:
                sess.run(lib.global_variables_initializer())
                return [float(sess.run([read, busy])[0]) for _ in range(20)]

    assert run(tf) == run(real) == [float(i) for i in range(2, 22)]


@pytest.mark.usefixtures("always_parallel")
def test_independent_branches_run_in_parallel_and_agree_with_serial():
    a = tf.constant(np.arange(16, dtype=np.float32).reshape(4, 4))
    outs = [tf.reduce_sum(tf.matmul(a + float(i), a)) for i in range(6)]
    total = tf.add_n(outs)
    results = {}
    for threads in (1, 2, 4):
        with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=threads)) as sess:
            results[threads] = [sess.run([total, *outs]) for _ in range(3)]
    assert results[1] == results[2] == results[4]


@pytest.mark.usefixtures("always_parallel")
def test_parallel_run_traces_every_node():
    a = tf.constant([1.0, 2.0], name="a")
    b, c = tf.multiply(a, 2.0, name="b"), tf.add(a, 1.0, name="c")
    total = tf.add(b, c, name="total")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    metadata = tf.RunMetadata()
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        assert sess.run(total, options=options, run_metadata=metadata).tolist() == [4.0, 7.0]
    names = {n.node_name for stats in metadata.step_stats.dev_stats.values() for n in stats}
    assert {"a", "b", "c", "total"} <= names


def test_dataflow_reports_the_first_error_and_stops_scheduling():
    ran = []

    def fail(vals):
        raise ValueError("boom")

    def later(vals):
        ran.append("later")

    flow = build_flow_graph([fail, later], [NORMAL, NORMAL], [(), ()], [(1,), ()], [(), (0,)], [False, False], {})
    index, error = FlowRun(flow, [None, None], None, None, threads=2, step_ops=[None, None]).run()
    assert (index, str(error), ran) == (0, "boom", [])
