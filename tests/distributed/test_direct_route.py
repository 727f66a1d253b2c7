"""Steps of one partition run on their task straight from the client (issue 13): one round trip instead of two, with
the master still in charge of the session (closing, resets, a master that went down, a partition it replaced)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import remote_session
from dtf_notebook.distributed.transport import Client
from tests.distributed.cluster_util import eventually

pytestmark = pytest.mark.cluster


@pytest.fixture
def sockets(monkeypatch):
    """A ps and a worker in this process, reached over their sockets as a client process would (not called
    directly), with the worker's master counting the steps it serves and the client the steps it sends directly
    (``served`` gets "RunStep" and "direct"). A route stays usable for a minute after the master was heard (not
    a second), so that a loaded machine does not change which way a step goes."""
    from tests.distributed.cluster_util import free_port

    monkeypatch.setattr(remote_session, "local_server", lambda address: None)
    monkeypatch.setattr(remote_session, "REFRESH_SECS", 60.0)
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

    run_direct = remote_session.RemoteBackend._run_direct

    def counted_direct(backend, *args):
        served.append("direct")
        return run_direct(backend, *args)

    monkeypatch.setattr(worker.master, "handle", counted_handle)
    monkeypatch.setattr(worker.master, "start_run_step", counted_start)
    monkeypatch.setattr(remote_session.RemoteBackend, "_run_direct", counted_direct)
    yield ps, worker, served
    worker.stop()
    ps.stop()


def _steps(served) -> int:
    return served.count("RunStep")


def _probed(sess) -> bool:
    """Whether every task address a route of ``sess`` named has answered its probe."""
    return eventually(lambda: all(probe.done() for probe in sess._backend._probes.values()))


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
        assert _probed(sess)
        before, direct = _steps(served), served.count("direct")
        assert [float(sess.run(increment)) for _ in range(20)] == [float(i) for i in range(4, 24)]
        assert _steps(served) == before and served.count("direct") == direct + 20  # none reached the master
        # Feeds, a fed tensor fetched back, several fetches in the session's order.
        assert float(sess.run(scaled, {x: np.float32(0.5)})) == 0.5 * 23
        before = _steps(served)
        assert [float(sess.run(scaled, {x: np.float32(f)})) for f in (0.25, 2.0)] == [0.25 * 23, 46.0]
        assert _steps(served) == before
        # A fed value fetched back is a copy, never the caller's own array: such a step keeps the master's path.
        fed_array = np.array(2.0, np.float32)
        for _ in range(3):
            fed, out, current = sess.run([x, scaled, v], {x: fed_array})
            assert fed is not fed_array and (float(fed), float(out), float(current)) == (2.0, 46.0, 23.0)
        assert _steps(served) == before + 3


def test_a_step_across_tasks_runs_on_every_task_straight_from_the_client(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(3.0, name="v")
        scale = tf.placeholder(tf.float32, name="scale")
        scaled_on_ps = v * scale
    with tf.device("/job:worker/task:0"):
        offset = tf.placeholder(tf.float32, name="offset")
        on_worker = scaled_on_ps + offset
    increment = tf.assign_add(v, on_worker)  # ps -> worker -> ps within one step
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        feeds = {scale: np.float32(2.0), offset: np.float32(1.0)}
        expected = 3.0

        def step():
            nonlocal expected
            worker_value, ps_value = expected * 2.0 + 1.0, expected * 2.0
            got = sess.run([on_worker, scaled_on_ps, increment], feeds)
            expected += worker_value
            assert [float(x) for x in got] == [worker_value, ps_value, expected]  # fetches from both, in order

        for _ in range(3):  # through the master, which names the route
            step()
        assert _probed(sess)
        before, direct = _steps(served), served.count("direct")
        for _ in range(5):
            step()
        assert _steps(served) == before and served.count("direct") == direct + 5  # none reached the master
        assert float(sess.run(v)) == expected


def test_a_failing_partition_aborts_the_step_on_every_task_at_once(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
        checked = tf.check_numerics(tf.log(v), "log of v")  # fails on the ps once v is negative
    with tf.device("/job:worker/task:0"):
        x = tf.placeholder(tf.float32, name="x")
        waits_for_ps = checked + x
    negative, positive = v.assign(-1.0), v.assign(1.0)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        for _ in range(3):
            assert float(sess.run(waits_for_ps, {x: np.float32(1.0)})) == 1.0
        assert _probed(sess)
        direct = served.count("direct")
        sess.run(negative)
        started = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError, match="log of v"):
            sess.run(waits_for_ps, {x: np.float32(1.0)})
        assert time.monotonic() - started < 2.0
        assert served.count("direct") == direct + 1
        # The worker's partition, which waited for the ps, was aborted: nothing is left running on either task.
        assert eventually(lambda: not worker.worker._running and not ps.worker._running)
        sess.run(positive)
        assert float(sess.run(waits_for_ps, {x: np.float32(2.0)})) == 2.0


def test_a_step_across_tasks_past_its_deadline_is_aborted_everywhere(sockets):
    ps, worker, served = sockets
    queue, doubled = _queue_across_tasks("split_deadline")
    with tf.Session(worker.target) as sess:
        sess.run(queue.enqueue_many([[1.0, 2.0, 3.0]]))
        assert [float(sess.run(doubled)) for _ in range(2)] == [2.0, 4.0]
        assert _probed(sess)
        assert float(sess.run(doubled)) == 6.0
        direct = served.count("direct")
        started = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(doubled, options=tf.RunOptions(timeout_in_ms=300))  # the queue is empty
        assert time.monotonic() - started < 5.0 and served.count("direct") == direct + 1
        assert eventually(lambda: not worker.worker._running and not ps.worker._running)


def test_a_client_interrupted_in_a_step_across_tasks_aborts_it_on_every_task(sockets, monkeypatch):
    ps, worker, served = sockets
    queue, doubled = _queue_across_tasks("split_interrupted")
    with tf.Session(worker.target) as sess:
        sess.run(queue.enqueue_many([[1.0, 2.0]]))
        assert float(sess.run(doubled)) == 2.0
        assert _probed(sess)
        call_all = Client.call_all
        monkeypatch.setattr(Client, "call_all", _interrupted(call_all))
        direct = served.count("direct")
        assert float(sess.run(doubled)) == 4.0
        with pytest.raises(KeyboardInterrupt):
            sess.run(doubled)  # the queue is empty: both partitions wait, the ps for an element, the worker for it
        assert served.count("direct") == direct + 2
        # Neither task knows a deadline: only the client's abort ends them.
        assert eventually(lambda: not worker.worker._running and not ps.worker._running)
        monkeypatch.setattr(Client, "call_all", call_all)
        sess.run(queue.enqueue(5.0))
        assert float(sess.run(doubled)) == 10.0


def test_the_master_hears_from_the_client_every_refresh_period(sockets, monkeypatch):
    ps, worker, served = sockets
    monkeypatch.setattr(remote_session, "REFRESH_SECS", -1.0)  # every step is past it
    _five_increments_all_through_the_master(worker, served)


def test_closing_the_session_cancels_a_step_running_on_its_task_directly(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name="direct_close")
    take = queue.dequeue()
    sess = tf.Session(worker.target)
    sess.run(queue.enqueue_many([[1.0, 2.0, 3.0]]))
    results = []
    probed = threading.Event()

    def take_four():  # from one thread: the route is used by a thread that heard from the master lately
        _record(results, sess.run, take)
        probed.wait(30)
        for _ in range(3):
            _record(results, sess.run, take)

    runner = threading.Thread(target=take_four, daemon=True)
    runner.start()
    assert eventually(lambda: len(results) == 1) and _probed(sess)
    probed.set()
    assert eventually(lambda: len(results) == 3 and len(ps.worker._running) == 1)  # blocked on the empty queue
    assert _steps(served) == 2 and served.count("direct") == 3  # the master never saw the blocked step
    sess.close()
    runner.join(15)
    assert not runner.is_alive()
    assert results[:3] == [1.0, 2.0, 3.0] and isinstance(results[3], tf.errors.CancelledError), results
    assert "was closed while this step ran" in results[3].message
    assert eventually(lambda: not ps.worker._graphs and not ps.worker._running)


def test_a_replaced_partition_sends_the_step_back_to_the_master(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        sess.run(v)
        assert _probed(sess)
        sess.run(v)
        assert served.count("direct") == 1
        # The partition goes away behind the client's back (as when its master replaced the plan).
        (session,) = worker.master._sessions.values()
        (plan,) = [p for p in session._live if p.route is not None and p.route["fetches"]]
        ps.worker.handle("DeregisterGraph", {"graph_handle": plan.handles["/job:ps/replica:0/task:0"]}, [])
        before = _steps(served)
        with pytest.raises(tf.errors.AbortedError, match="is not registered"):
            sess.run(v)  # tried directly, then the master, whose answer this is (its task lost the partition)
        assert served.count("direct") == 2 and _steps(served) == before + 1
        with pytest.raises(tf.errors.AbortedError, match="is not registered"):
            sess.run(v)
        assert served.count("direct") == 2 and _steps(served) == before + 2  # the route was dropped


def test_a_reset_by_another_session_aborts_the_next_step_as_through_the_master(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(1.0, name="v")
    sess = tf.Session(worker.target)
    sess.run(v.initializer)
    sess.run(v)
    assert _probed(sess)
    sess.run(v)
    assert served.count("direct") == 1
    tf.Session.reset(worker.target)
    with pytest.raises(tf.errors.AbortedError, match="not known to this master"):
        sess.run(v)
    assert served.count("direct") == 2  # tried directly first: the task no longer held the partition
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
    _five_increments_all_through_the_master(worker, served)


def test_a_partition_deregistered_with_cancel_ends_its_running_steps_and_without_lets_them_finish(sockets):
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name="deregistered")
    with tf.Session(worker.target) as sess, tf.Session(worker.target) as feeder:
        for cancel in (False, True):
            take = queue.dequeue(name=f"take_{cancel}")  # a partition of its own
            feeder.run(queue.enqueue(1.0))
            results, probed = [], threading.Event()
            runner = threading.Thread(target=_take_twice, args=(results, sess, take, probed), daemon=True)
            runner.start()
            assert eventually(lambda r=results: len(r) == 1) and _probed(sess)
            direct = served.count("direct")
            probed.set()
            assert eventually(lambda: len(ps.worker._running) == 1)
            assert served.count("direct") == direct + 1  # the blocked step went straight to the ps
            (handle,) = ps.worker._running
            ps.worker.handle("DeregisterGraph", {"graph_handle": handle, "cancel": cancel}, [])
            if not cancel:
                time.sleep(0.2)
                assert runner.is_alive()  # still waiting for an element
                feeder.run(queue.enqueue(7.0))
            runner.join(15)
            assert not runner.is_alive()
            if cancel:
                assert isinstance(results[1], tf.errors.CancelledError), results
            else:
                assert results == [1.0, 7.0]
            assert not ps.worker._running


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


@pytest.mark.slow
def test_a_step_waiting_on_its_task_directly_ends_when_the_master_restarts():
    """The task pings the step's master while it waits: a master restarted on its address answers, but with another
    incarnation, so the step gives up (through the master it would fail when the client's connection broke)."""
    from tests.distributed.cluster_util import LocalCluster

    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            queue = tf.FIFOQueue(10, tf.float32, shared_name="master_restarts")
        take = queue.dequeue()
        sess = tf.Session(cluster.target("worker", 0))
        sess.run(queue.enqueue(1.0))
        results, probed = [], threading.Event()
        runner = threading.Thread(target=_take_twice, args=(results, sess, take, probed), daemon=True)
        runner.start()
        assert eventually(lambda: len(results) == 1) and _probed(sess)
        probed.set()
        time.sleep(0.5)  # the second take waits on the ps
        cluster.restart("worker", 0)
        restarted = time.monotonic()
        runner.join(30)
        sess.close()
        assert not runner.is_alive()
        assert results[0] == 1.0 and isinstance(results[1], tf.errors.UnavailableError), results
        assert "restarted" in results[1].message
        assert time.monotonic() - restarted < 15.0


# A client process that runs a step which waits on an empty queue and prints "blocking" just before it; the test
# kills it there. argv[2] says which way the step goes: straight to the tasks ("direct"), or through the master as
# the first step of its kind (served on one of its threads: "master-split" of two partitions, "master-ps" of one on the
# ps, "master-own" of one on the master's own task, run in that very thread), or as a later one ("master-loop",
# served on its event loop).
_BLOCKED_CLIENT = """
import sys, time
import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import remote_session

target, way = sys.argv[1], sys.argv[2]
remote_session.REFRESH_SECS = 60.0 if way == "direct" else -1.0  # -1: every step through the master
run_direct = remote_session.RemoteBackend._run_direct

def told(backend, *args):
    print("direct", flush=True)
    return run_direct(backend, *args)

remote_session.RemoteBackend._run_direct = told
with tf.device("/job:ps/task:0"):
    queue = tf.FIFOQueue(10, tf.float32, shared_name="killed_client")
with tf.device("/job:worker/task:0"):
    doubled = queue.dequeue() * 2.0
    own = tf.FIFOQueue(10, tf.float32, shared_name="killed_client_own")
sess = tf.Session(target)
if way == "direct":
    sess.run(queue.enqueue_many([[1.0, 2.0, 3.0]]))
    sess.run(doubled)
    deadline = time.monotonic() + 30
    while not all(p.done() for p in sess._backend._probes.values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    sess.run(doubled), sess.run(doubled)
elif way == "master-loop":
    sess.run(queue.enqueue(1.0))
    sess.run(doubled)  # its plan is compiled: the next step of its kind is served on the master's loop
print("blocking", flush=True)
if way in ("direct", "master-split", "master-loop"):
    sess.run(doubled)
else:
    sess.run((queue if way == "master-ps" else own).dequeue())
"""


@pytest.mark.slow
@pytest.mark.parametrize("way", ["direct", "master-split", "master-ps", "master-own", "master-loop"])
def test_a_step_of_a_killed_client_is_given_up_and_takes_no_later_element(sockets, way):
    """A client process killed while its step waits on an empty queue stops pinging; the tasks give the step up
    within seconds, so an element enqueued after that is not taken by a step nobody will read."""
    ps, worker, _ = sockets
    client = subprocess.Popen(
        [sys.executable, "-c", _BLOCKED_CLIENT, worker.target, way],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    waiting_task = worker if way == "master-own" else ps
    try:
        lines = []
        for line in iter(client.stdout.readline, ""):  # ends at "blocking", or when the script failed and exited
            lines.append(line.strip())
            if lines[-1] == "blocking":
                break
        assert lines[-1:] == ["blocking"], lines
        if way == "direct":
            assert client.stdout.readline().strip() == "direct", lines  # the blocked step went straight to the tasks
        assert eventually(lambda: waiting_task.worker._running, timeout=30), lines
        time.sleep(0.5)  # the step waits on the queue's task (and on the other task, for two partitions)
    finally:
        client.kill()
        client.wait(10)
        client.stdout.close()
    killed = time.monotonic()
    assert eventually(lambda: not ps.worker._running and not worker.worker._running, timeout=30)
    assert time.monotonic() - killed < 15.0
    with tf.Graph().as_default():
        own = way == "master-own"
        device, name = ("/job:worker/task:0", "killed_client_own") if own else ("/job:ps/task:0", "killed_client")
        with tf.device(device):
            queue = tf.FIFOQueue(10, tf.float32, shared_name=name)
        with tf.Session(worker.target) as sess:
            sess.run(queue.enqueue(5.0))
            assert float(sess.run(queue.dequeue(), options=tf.RunOptions(timeout_in_ms=10000))) == 5.0


def test_a_client_interrupted_in_a_step_of_one_partition_aborts_it_on_its_task(sockets, monkeypatch):
    """Ctrl-C in a dequeue that went straight to the ps ends it there at once (the client's connection stays up and
    keeps being heard, so only the abort can end it), and the next element goes to the next reader."""
    ps, worker, served = sockets
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name="interrupted_one")
    take = queue.dequeue()
    with tf.Session(worker.target) as sess:
        sess.run(queue.enqueue_many([[1.0, 2.0]]))
        assert float(sess.run(take)) == 1.0
        assert _probed(sess)
        call = Client.call
        monkeypatch.setattr(Client, "call", _interrupted(call, only=lambda address, method, *_: method == "RunGraph"))
        direct = served.count("direct")
        assert float(sess.run(take)) == 2.0
        with pytest.raises(KeyboardInterrupt):
            sess.run(take)  # the queue is empty: the ps's partition waits
        assert served.count("direct") == direct + 2
        assert eventually(lambda: not ps.worker._running, timeout=5)
        monkeypatch.setattr(Client, "call", call)
        sess.run(queue.enqueue(5.0))
        assert float(sess.run(take)) == 5.0


def _interrupted(method, only=lambda *args: True):
    """A ``Client`` method (``call``, ``call_all``) whose waits for the calls ``only`` picks end after 0.3 s with a
    KeyboardInterrupt, as Ctrl-C in a step that waits."""

    def interrupted(self, *args, timeout=None, **kwargs):
        if not only(*args):
            return method(self, *args, timeout=timeout, **kwargs)
        try:
            return method(self, *args, timeout=0.3, **kwargs)
        except tf.errors.DeadlineExceededError:
            raise KeyboardInterrupt from None

    return interrupted


def _queue_across_tasks(name):
    """A queue on the ps and its dequeued element doubled on the worker: a step of two partitions that waits on
    both tasks while the queue is empty."""
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name=name)
    with tf.device("/job:worker/task:0"):
        doubled = queue.dequeue() * 2.0
    return queue, doubled


def _five_increments_all_through_the_master(worker, served):
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="v")
    increment = tf.assign_add(v, 1.0)
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        before = _steps(served)
        assert [float(sess.run(increment)) for _ in range(5)] == [1.0, 2.0, 3.0, 4.0, 5.0]
        assert _steps(served) == before + 5


def _take_twice(results, sess, take, probed):
    _record(results, sess.run, take)
    probed.wait(30)
    _record(results, sess.run, take)


def _record(results, fn, *args):
    try:
        results.append(fn(*args))
    except tf.errors.OpError as e:
        results.append(e)


@pytest.mark.parametrize("kind", ["first", "later"])
def test_a_client_interrupted_in_a_step_through_the_master_cancels_it_there(sockets, monkeypatch, kind):
    """Ctrl-C in a dequeue the master serves (on a thread as the first step of its kind, on its loop later) cancels
    it by the step's token at once; the client's connection stays up and keeps being heard, and the silence watch
    is made too long to matter here, so only the cancel can end it."""
    from dtf_notebook.distributed import client_watch

    ps, worker, served = sockets
    monkeypatch.setattr(remote_session, "REFRESH_SECS", -1.0)  # every step through the master
    monkeypatch.setattr(client_watch, "MIN_SILENT_SECS", 3600.0)
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(10, tf.float32, shared_name=f"cancelled_{kind}")
    take = queue.dequeue()
    with tf.Session(worker.target) as sess:
        if kind == "later":
            sess.run(queue.enqueue(1.0))
            assert float(sess.run(take)) == 1.0  # compiles its plan: the next one is served on the master's loop
        call = Client.call
        monkeypatch.setattr(Client, "call", _interrupted(call, only=lambda address, method, *_: method == "RunStep"))
        with pytest.raises(KeyboardInterrupt):
            sess.run(take)  # the queue is empty: the ps's partition waits
        sessions = list(worker.master._sessions.values())
        assert eventually(lambda: not ps.worker._running and not any(s._running for s in sessions), timeout=5)
        monkeypatch.setattr(Client, "call", call)
        sess.run(queue.enqueue(5.0))
        assert float(sess.run(take)) == 5.0
        assert "direct" not in served
