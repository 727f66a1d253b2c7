"""A master session's registered partitions: one set per step signature, replaced (never piled up) as the graph
grows, all deregistered when the session closes; idle sessions of dead clients collected when configured."""

from __future__ import annotations

import threading
import time

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.transport import Client
from tests.distributed.cluster_util import eventually

pytestmark = pytest.mark.cluster


@pytest.fixture
def two_tasks():
    """A ps and a worker in this process, so the test can look at what each worker holds."""
    from tests.distributed.cluster_util import free_port

    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
    ps = tf.train.Server(spec, job_name="ps", task_index=0)
    worker = tf.train.Server(spec, job_name="worker", task_index=0)
    yield ps, worker
    worker.stop()
    ps.stop()


def _registered(*servers) -> int:
    return sum(len(s.worker._graphs) for s in servers)


def test_graph_extensions_keep_one_registration_per_signature_and_close_drops_all(two_tasks):
    ps, worker = two_tasks
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(0.0, name="grown")
    inc = tf.assign_add(v, 1.0)
    doubled = v * 2.0  # placed on the worker: a partition on each task
    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        sess.run(inc)
        sess.run(doubled)
        first = _registered(ps, worker)
        handles = set(ps.worker._graphs) | set(worker.worker._graphs)
        for i in range(20):
            tf.constant(float(i), name=f"unrelated_{i}")  # the graph grows; these signatures do not change
            sess.run(inc)
            sess.run(doubled)
        assert _registered(ps, worker) == first
        assert set(ps.worker._graphs) | set(worker.worker._graphs) == handles  # reused, not re-registered
        assert sess.run(v) == 21.0
    assert eventually(lambda: _registered(ps, worker) == 0)
    # The workers' compiled plans of those partitions went with them (nothing keeps the graphs alive).
    assert not ps.worker.backend._plans and not worker.worker.backend._plans
    assert not ps.worker._timings and not worker.worker._timings


def test_a_changed_partition_replaces_the_old_registration_once_no_step_runs_it(two_tasks):
    ps, worker = two_tasks
    with tf.device("/job:ps/task:0"):
        v = tf.Variable(3.0, name="replaced")
    doubled = v * 2.0

    def handles() -> set[str]:
        return set(ps.worker._graphs) | set(worker.worker._graphs)

    with tf.Session(worker.target) as sess:
        sess.run(v.initializer)
        assert sess.run(doubled) == 6.0
        before = handles()  # the initializer's plan and this one
        (session,) = worker.master._sessions.values()
        fetches = [doubled.name]
        held = session.plan([], fetches, [])  # a step still running the current plan
        old = set(held.handles.values())
        assert len(old) == 2 and old <= before
        # Extending never changes a pruned graph's nodes; pretend it did, so the next step recompiles.
        held.fingerprint = ("stale",)
        tf.constant(0.0, name="extension")
        assert sess.run(doubled) == 6.0
        assert handles() > before and len(handles()) == len(before) + 2  # the held plan stays registered
        session.release(held)
        assert eventually(lambda: not old & handles())
        assert len(handles()) == len(before)
        for i in range(10):
            session._plans[((), tuple(fetches), ())].fingerprint = ("stale",)
            tf.constant(float(i), name=f"more_{i}")
            assert sess.run(doubled) == 6.0
        assert eventually(lambda: len(handles()) == len(before))  # bounded: one plan per signature
    assert eventually(lambda: not handles())


def test_close_during_a_step_cancels_it_and_deregisters_when_it_ends(two_tasks):
    ps, worker = two_tasks
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(1, tf.float32, shared_name="close_during_step")
    taken = queue.dequeue() + 1.0
    sess = tf.Session(worker.target)
    results = []

    def run():
        try:
            results.append(sess.run(taken))
        except tf.errors.CancelledError as e:
            results.append(e)

    runner = threading.Thread(target=run)
    runner.start()
    assert eventually(lambda: len(worker.master._sessions) == 1)
    (session,) = worker.master._sessions.values()
    assert eventually(lambda: session.active == 1 and _registered(ps, worker) == 2)
    session.close()  # what CloseSession does: the blocked step is cancelled on every task, as in TF1
    runner.join(30)
    assert len(results) == 1 and isinstance(results[0], tf.errors.CancelledError), results
    assert "was closed while this step ran" in results[0].message
    assert eventually(lambda: _registered(ps, worker) == 0)  # once the step ended
    sess.close()


def test_idle_sessions_of_dead_clients_are_collected_when_configured():
    server = tf.train.Server.create_local_server(config=tf.ConfigProto(session_gc_secs=1.0))
    client = Client()
    try:
        # A client that creates a session, runs a step, and dies without closing it.
        graph = tf.Graph()
        with graph.as_default():
            tf.constant(2.0, name="two")
        plain, tensors = wire.encode_graph_def(graph.as_graph_def_dict())
        reply, _ = client.call(server.address, "CreateSession", {"graph": plain}, tensors, timeout=30)
        handle = reply["session_handle"]
        run = {"session_handle": handle, "feeds": [], "fetches": ["two:0"], "targets": []}
        assert float(client.call(server.address, "RunStep", run, timeout=30)[1][0]) == 2.0
        assert len(server.worker._graphs) == 1
        assert eventually(lambda: not server.master._sessions and not server.worker._graphs, timeout=15)
        with pytest.raises(tf.errors.AbortedError, match="collected after being idle"):
            client.call(server.address, "RunStep", run, timeout=30)
    finally:
        client.close()
        server.stop()


def test_a_session_running_a_step_is_never_idle():
    server = tf.train.Server.create_local_server(config=tf.ConfigProto(session_gc_secs=3600.0))
    try:
        queue = tf.FIFOQueue(1, tf.float32, shared_name="never_idle")
        sess = tf.Session(server.target)
        results = []
        runner = threading.Thread(target=lambda: results.append(sess.run(queue.dequeue())))
        runner.start()
        assert eventually(lambda: len(server.master._sessions) == 1)
        (session,) = server.master._sessions.values()
        assert eventually(lambda: session.active == 1)
        assert server.master.collect_idle(now=time.monotonic() + 7200) == []
        with tf.Session(server.target) as other:
            other.run(queue.enqueue(4.0))
        runner.join(30)
        assert results == [4.0]
        assert server.master.collect_idle(now=time.monotonic() + 7200) == [session.handle]
        with pytest.raises(tf.errors.AbortedError, match="not known to this master"):
            sess.run(queue.size())
    finally:
        server.stop()


def test_no_collection_by_default():
    server = tf.train.Server.create_local_server()
    try:
        sess = tf.Session(server.target)
        sess.run(tf.constant(1.0))
        assert server.master.session_gc_secs == 0
        assert server.master.collect_idle(now=time.monotonic() + 1e9) == []
        assert sess.run(tf.constant(5.0)) == 5.0
        sess.close()
    finally:
        server.stop()


def _reset_story(lib, ps_and_worker) -> list:
    """What TF1 programs see around ``Session.reset``: the default container is named after each task's job, and
    every open session of the master is aborted."""
    from tests.distributed.cluster_util import free_port

    if ps_and_worker is None:
        spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}"]}
        servers = [lib.train.Server(spec, job_name=j, task_index=0) for j in ("ps", "worker")]
    else:
        servers = list(ps_and_worker)
    target, seen = servers[1].target, []

    def state(sess, *variables):
        out = []
        for v in variables:
            try:
                out.append(float(sess.run(v)))
            except lib.errors.FailedPreconditionError:
                out.append("uninitialized")
        return out

    with lib.Graph().as_default():
        with lib.device("/job:ps/task:0"):
            on_ps = lib.Variable(1.0, name="on_ps")
        with lib.device("/job:worker/task:0"):
            on_worker = lib.Variable(2.0, name="on_worker")
            with lib.container("exp"):
                in_exp = lib.Variable(3.0, name="in_exp")
        init = lib.global_variables_initializer()
        old = lib.Session(target)
        old.run(init)
        lib.Session.reset(target, [""])  # names no container
        try:
            old.run(on_ps)
            seen.append("old session still runs")
        except lib.errors.AbortedError:
            seen.append("old session aborted")
        with lib.Session(target) as sess:
            seen.append(state(sess, on_ps, on_worker, in_exp))
        lib.Session.reset(target, ["worker"])  # the worker tasks' default container
        with lib.Session(target) as sess:
            seen.append(state(sess, on_ps, on_worker, in_exp))
            sess.run(init)
        lib.Session.reset(target)  # None: every task's default container, not the others
        with lib.Session(target) as sess:
            seen.append(state(sess, on_ps, on_worker, in_exp))
        try:
            old.close()  # TF1 raises the AbortedError again here; closing an aborted session is quiet here
        except lib.errors.AbortedError:
            pass
    if ps_and_worker is None:
        for server in servers:
            getattr(server, "stop", lambda: None)()
    return seen


@pytest.mark.tf_oracle
def test_reset_names_default_containers_after_jobs_and_aborts_open_sessions_as_tf1(two_tasks):
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    ours = _reset_story(tf, two_tasks)
    assert ours == [
        "old session aborted",
        [1.0, 2.0, 3.0],
        [1.0, "uninitialized", 3.0],
        ["uninitialized", "uninitialized", 3.0],
    ]
    assert ours == _reset_story(real, None)


def _privacy_story(lib, target) -> list:
    """A variable of a session that isolates its state, and an unnamed queue, as other sessions see them."""
    seen = []
    with lib.Graph().as_default():
        v = lib.Variable(5.0, name="isolated_v")
        q = lib.FIFOQueue(4, lib.float32, name="unnamed_q")
        shared = lib.FIFOQueue(4, lib.float32, shared_name="named_q", name="named_q")
        with lib.Session(target, config=lib.ConfigProto(isolate_session_state=True)) as alone:
            alone.run(v.initializer)
            alone.run([q.enqueue(1.0), shared.enqueue(2.0)])
            with lib.Session(target) as other:
                try:
                    seen.append(float(other.run(v)))
                except lib.errors.FailedPreconditionError:
                    seen.append("other session: v uninitialized")
                seen.append(int(other.run(q.size())))  # the unnamed queue is the session's own
                seen.append(int(other.run(shared.size())))  # isolated: even a shared_name is the session's own
            seen.append(float(alone.run(v)))
            seen.append(int(alone.run(q.size())))
    return seen


@pytest.mark.tf_oracle
def test_isolated_session_state_and_unnamed_queues_are_private_as_in_tf1(two_tasks):
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    ours = _privacy_story(tf, two_tasks[1].target)
    assert ours == ["other session: v uninitialized", 0, 0, 5.0, 1]
    server = real.train.Server.create_local_server()
    assert ours == _privacy_story(real, server.target)
    # Without isolation, two sessions share the task's variables and named queues, never unnamed queues.
    with tf.Graph().as_default():
        q = tf.FIFOQueue(4, tf.float32, name="q")
        named = tf.FIFOQueue(4, tf.float32, shared_name="q2", name="q2")
        with tf.Session(two_tasks[1].target) as one, tf.Session(two_tasks[1].target) as two:
            one.run([q.enqueue(1.0), named.enqueue(1.0)])
            assert two.run([q.size(), named.size()]) == [0, 1]


def test_a_closed_sessions_private_state_leaves_the_task(two_tasks):
    ps, worker = two_tasks
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.Session(worker.target, config=tf.ConfigProto(isolate_session_state=True)) as sess:
            sess.run(v.initializer)
            assert any(s.backend.state.resources is not ps.worker.state.resources for s in ps.worker._sessions.values())
    assert eventually(lambda: not ps.worker._sessions and not worker.worker._sessions)


@pytest.mark.tf_oracle
def test_each_session_starts_a_seeded_random_sequence_afresh_as_in_tf1(two_tasks):
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()

    def twice(lib, target):
        with lib.Graph().as_default():
            lib.set_random_seed(7)
            r = lib.random_uniform([2], seed=3)
            runs = []
            for _ in range(2):
                with lib.Session(target) as sess:
                    runs.append([sess.run(r).tolist(), sess.run(r).tolist()])
            return runs[0] == runs[1], runs[0][0] != runs[0][1]

    server = real.train.Server.create_local_server()
    assert twice(tf, two_tasks[1].target) == twice(real, server.target) == (True, True)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("where", ["local", "server"])
def test_close_cancels_a_step_blocked_in_another_thread_as_in_tf1(two_tasks, where):
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()

    def blocked_then_closed(lib, target):
        with lib.Graph().as_default():
            take = lib.FIFOQueue(2, lib.float32).dequeue()
            sess = lib.Session(target)
            outcome = {}

            def run():
                try:
                    sess.run(take)
                except lib.errors.OpError as e:
                    outcome["error"] = type(e).__name__

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            time.sleep(0.3)
            closed = time.monotonic()
            sess.close()
            thread.join(10)
            return outcome.get("error"), time.monotonic() - closed < 5

    real_target = "" if where == "local" else real.train.Server.create_local_server().target
    ours_target = "" if where == "local" else two_tasks[1].target
    assert blocked_then_closed(tf, ours_target) == blocked_then_closed(real, real_target) == ("CancelledError", True)


def test_a_collected_session_is_closed_without_holding_up_the_thread_that_collected_it(monkeypatch):
    """The finaliser of a session nobody closed queues its CloseSession: the thread that happened to collect it (a
    training loop, a task's event loop) does not wait on a master that is slow or gone."""
    import gc

    from dtf_notebook.distributed import remote_session
    from dtf_notebook.distributed.service_socket import ServiceSocket

    closing, release, closers = threading.Event(), threading.Event(), []
    close = remote_session._close_master_session
    monkeypatch.setattr(
        remote_session,
        "_close_master_session",
        lambda *a: (closers.append(threading.current_thread().name), close(*a)),
    )

    def master(method, header, tensors):
        if method == "CloseSession":
            closing.set()
            release.wait(30)  # a master that takes its time
        return {"session_handle": "s1"}, []

    server = ServiceSocket("127.0.0.1:0", master)
    try:
        sess = tf.Session(f"zmq://{server.address}", graph=tf.Graph())
        sess._backend._sync_graph()  # the master session exists
        del sess
        gc.collect()
        assert closing.wait(10)
        assert closers == ["dtf-session-closer"]  # not this thread, which collected the session
    finally:
        release.set()
        server.close()
