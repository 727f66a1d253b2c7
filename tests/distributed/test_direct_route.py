"""Steps of one partition run on their task straight from the client (issue 13): one round trip instead of two, with
the master still in charge of the session (closing, resets, a master that went down, a partition it replaced)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import remote_session
from dtf_notebook.distributed.transport import Client

pytestmark = pytest.mark.cluster


def _eventually(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def sockets(monkeypatch):
    """A ps and a worker in this process, reached over their sockets as a client process would (not called
    directly), with the worker's master counting the steps it serves."""
    from tests.distributed.cluster_util import free_port

    monkeypatch.setattr(remote_session, "local_server", lambda address: None)
    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    ps = tf.train.Server(spec, job_name="ps", task_index=0)
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    served = []
    handle, start_run_step = worker.master.handle, worker.master.start_run_step

    def counted_handle(method, header, tensors):
        served.append(method)
        return handle(method, header, tensors)

    def counted_start(header, *args):
        taken = start_run_step(header, *args)
        if taken:
            served.append("RunStep")
        return taken

    monkeypatch.setattr(worker.master, "handle", counted_handle)
    monkeypatch.setattr(worker.master, "start_run_step", counted_start)
    yield ps, worker, served
    worker.stop()
    ps.stop()


def _steps(served) -> int:
    return served.count("RunStep")


def test_a_one_partition_step_goes_straight_to_its_task_after_the_master_named_the_route(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="v")
        x = tf.placeholder(tf.float32, name="x")
        scaled = x * v
    increment = tf.assign_add(v, 1.0)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        assert [float(sess.run(increment)) for _ in range(3)] == [1.0, 2.0, 3.0]  # the master names the route
        time.sleep(0.1)  # the task's address answers its probe
        before = _steps(served)
        assert [float(sess.run(increment)) for _ in range(20)] == [float(i) for i in range(4, 24)]
        assert _steps(served) == before  # none of the 20 reached the master
        # Feeds, a fed tensor fetched back, several fetches in the session's order.
        assert float(sess.run(scaled, {x: np.float32(0.5)})) == 0.5 * 23
        before = _steps(served)
        fed, out, current = sess.run([x, scaled, v], {x: 2.0})
        assert (float(fed), float(out), float(current)) == (2.0, 46.0, 23.0)
        assert float(sess.run(scaled, {x: np.float32(0.25)})) == 0.25 * 23
        assert _steps(served) == before + 1  # the new signature's first step


def test_a_step_across_tasks_always_goes_through_the_master(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(3.0, name="v")
    with tf.device("/job:worker/task:0"):
        doubled = v * 2.0
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        before = _steps(served)
        assert [float(sess.run(doubled)) for _ in range(5)] == [6.0] * 5
        assert _steps(served) == before + 5


def test_the_master_hears_from_the_client_every_refresh_period(sockets, monkeypatch):
    ps, worker, served = sockets
    monkeypatch.setattr(remote_session, "REFRESH_SECS", 0.0)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="v")
    increment = tf.assign_add(v, 1.0)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        before = _steps(served)
        for _ in range(5):
            sess.run(increment)
        assert _steps(served) == before + 5


def test_closing_the_session_cancels_a_step_running_on_its_task_directly(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name="direct_close")
    take = queue.dequeue()
    sess = tf.Session(worker.target)
    sess.run(queue.enqueue_many([[1.0, 2.0, 3.0]]))
    results = []

    def take_four():  # from one thread: the route is used by a thread that heard from the master lately
        for _ in range(4):
            _record(results, sess.run, take)

    runner = threading.Thread(target=take_four, daemon=True)
    runner.start()
    assert _eventually(lambda: len(results) == 3 and len(ps.worker._running) == 1)  # blocked on the empty queue
    assert _steps(served) == 2  # the enqueue and the first dequeue: the master never saw the blocked step
    sess.close()
    runner.join(15)
    assert not runner.is_alive()
    assert results[:3] == [1.0, 2.0, 3.0] and isinstance(results[3], tf.errors.CancelledError), results
    assert "was closed while this step ran" in results[3].message
    assert _eventually(lambda: not ps.worker._graphs and not ps.worker._running)


def test_a_replaced_partition_sends_the_step_back_to_the_master(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        for _ in range(3):
            sess.run(v)
        # The partition goes away behind the client's back (as when its master replaced the plan).
        (session,) = worker.master._sessions.values()
        (plan,) = [p for p in session._live if p.route is not None and p.route["fetches"]]
        ps.worker.handle("DeregisterGraph", {"graph_handle": plan.handles["/job:ps/replica:0/task:0"]}, [])
        with pytest.raises(tf.errors.AbortedError, match="is not registered"):
            sess.run(v)  # the master's own answer for a partition its task lost
        before = _steps(served)
        with pytest.raises(tf.errors.AbortedError, match="is not registered"):
            sess.run(v)
        assert _steps(served) == before + 1  # asked the master, which the direct step never reached


def test_a_reset_by_another_session_aborts_the_next_step_as_through_the_master(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    sess = tf.Session(worker.target)
    sess.run(v.initializer)
    for _ in range(3):
        sess.run(v)
    tf.Session.reset(worker.target)
    with pytest.raises(tf.errors.AbortedError, match="not known to this master"):
        sess.run(v)
    sess.close()


def test_a_route_whose_task_does_not_answer_the_probe_is_never_taken(sockets, monkeypatch):
    ps, worker, served = sockets
    call_async = Client.call_async

    def refuse_probes(self, address, method, *args, **kwargs):
        if method == "GetStatus" and address == ps.address:
            failed: Future = Future()
            failed.set_exception(tf.errors.UnavailableError(None, None, "not from here"))
            return failed
        return call_async(self, address, method, *args, **kwargs)

    monkeypatch.setattr(Client, "call_async", refuse_probes)
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="v")
    increment = tf.assign_add(v, 1.0)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        before = _steps(served)
        assert [float(sess.run(increment)) for _ in range(5)] == [1.0, 2.0, 3.0, 4.0, 5.0]
        assert _steps(served) == before + 5


def test_a_partition_deregistered_with_cancel_ends_its_running_steps_and_without_lets_them_finish(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name="deregistered")
    with tf.Session(worker.target) as sess, tf.Session(worker.target) as feeder:
        for cancel in (False, True):
            take = queue.dequeue(name=f"take_{cancel}")  # a partition of its own
            results = []
            runner = threading.Thread(target=_record, args=(results, sess.run, take), daemon=True)
            runner.start()
            assert _eventually(lambda: len(ps.worker._running) == 1)
            (handle,) = ps.worker._running
            ps.worker.handle("DeregisterGraph", {"graph_handle": handle, "cancel": cancel}, [])
            if not cancel:
                time.sleep(0.2)
                assert runner.is_alive()  # still waiting for an element
                feeder.run(queue.enqueue(7.0))
            runner.join(15)
            assert not runner.is_alive()
            if cancel:
                assert isinstance(results[0], tf.errors.CancelledError), results
            else:
                assert results == [7.0]


@pytest.mark.slow
def test_a_master_that_went_down_fails_the_next_one_partition_step_within_seconds(tmp_path):
    from tests.distributed.cluster_util import LocalCluster

    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="v")
        increment = tf.assign_add(v, 1.0)
        sess = tf.Session(cluster.target("worker", 0))
        sess.run(v.initializer)
        for _ in range(20):
            sess.run(increment)
        cluster.kill("worker", 0)
        time.sleep(0.5)
        started = time.monotonic()
        with pytest.raises(tf.errors.UnavailableError):
            sess.run(increment)
        assert time.monotonic() - started < 10.0


def _record(results, fn, *args):
    try:
        results.append(fn(*args))
    except tf.errors.OpError as e:
        results.append(e)
