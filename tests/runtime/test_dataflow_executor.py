"""The executor as a dataflow: ops run when their inputs are ready, blocking kernels never hold the step hostage,
an op error aborts the step, control inputs and value releases hold under parallel execution; plain while loops
run serially with TF1's results, errors, deadlines and cancellation; closing a session cancels its steps."""

from __future__ import annotations

import importlib.util
import os
import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime import dataflow, executor
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
    real.disable_control_flow_v2()  # TF1's Switch/Merge/Enter/Exit loops, as here
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
    names = {n.node_name for dev in metadata.step_stats.dev_stats for n in dev.node_stats}
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


# ---- plain while loops run serially ------------------------------------------------------------------------------


@pytest.fixture(params=["serial", "general"])
def loop_mode(request, monkeypatch):
    """Each loop test runs twice: plain loops compiled to serial sub-plans, and every frame run step by step."""
    if request.param == "general":
        monkeypatch.setattr(dataflow, "plan_serial_loops", lambda *args, **kwargs: {})
    return request.param


def _serial_frames(sess) -> set[str]:
    """The frames that the session's compiled plans run serially."""
    return {name for _, plan in sess._backend._plans.values() if plan._flow for name in plan._flow.loops}


def _plain(lib):
    n = lib.placeholder(lib.int32, [], name="n")
    return lib.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 1.0001 + 0.5), [0, lib.zeros([4])]), n


def _with_invariants(lib):
    w = lib.constant([[0.5, 0.1], [0.2, 0.3]])
    x0 = lib.constant([[1.0, 2.0]])
    body = lambda i, x: [i + 1, lib.matmul(x, w) + 1.0]  # noqa: E731
    return lib.while_loop(lambda i, x: i < 10, body, [0, x0], maximum_iterations=5), None


def _nested(lib):
    def outer(i, total):
        inner = lib.while_loop(lambda j, s: j < i + 2, lambda j, s: (j + 1, s + j), [0, total])
        return i + 1, inner[1]

    return lib.while_loop(lambda i, total: i < 3, outer, [0, 0]), None


def _cond_in_body(lib):
    def body(i, x):
        return i + 1, lib.cond(lib.equal(i % 2, 0), lambda: x + 1.0, lambda: x * 2.0)

    return lib.while_loop(lambda i, x: i < 6, body, [0, lib.constant(1.0)]), None


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    ("build", "feeds", "serial"),
    [
        (_plain, [1000, 0, 1], {"while/while_context"}),
        (_with_invariants, [None], {"while/while_context"}),
        (_nested, [None], {"while/while/while_context"}),
        (_cond_in_body, [None], set()),
    ],
    ids=["plain", "invariants", "nested", "cond_in_body"],
)
def test_loops_match_tf_whether_run_serially_or_step_by_step(build, feeds, serial, loop_mode):
    real = _real_tf()
    results = []
    for lib in (tf, real):
        with lib.Graph().as_default():
            fetch, holder = build(lib)
            with lib.Session() as sess:
                results.append([sess.run(fetch, {holder: v} if holder is not None else None) for v in feeds])
                if lib is tf:
                    assert _serial_frames(sess) == (serial if loop_mode == "serial" else set())
    ours, theirs = results
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5)


def _side_effects(lib):
    v = lib.Variable(0.0, name="v")
    u = lib.Variable(1.0, name="u")

    def body(i):
        add = lib.assign_add(v, lib.cast(i, lib.float32))
        double = lib.assign(u, u.read_value() * 2.0 + lib.cast(i, lib.float32))  # depends on the order of iterations
        with lib.control_dependencies([add, double]):
            return i + 1

    return lib.while_loop(lambda i: i < 5, body, [0], parallel_iterations=1), v, u


@pytest.mark.tf_oracle
def test_side_effects_run_once_per_iteration_in_order_as_in_tf(loop_mode):
    results = []
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            out, v, u = _side_effects(lib)
            with lib.Session() as sess:
                sess.run(lib.global_variables_initializer())
                results.append([(int(sess.run(out)), *map(float, sess.run([v, u]))) for _ in range(2)])
    assert results[0] == results[1] == [(5, 10.0, 58.0), (5, 20.0, 1882.0)]


def _overflow(lib):
    def body(i, x):
        return i + 1, lib.check_numerics(x * 1e10, "x overflowed", name="checked")

    return lib.while_loop(lambda i, x: i < 10, body, [0, lib.constant(1.0)])


@pytest.mark.tf_oracle
def test_an_error_inside_the_body_names_its_node_as_in_tf(loop_mode):
    caught = {}
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            out = _overflow(lib)
            with lib.Session() as sess, pytest.raises(lib.errors.OpError) as error:
                sess.run(out)
            caught[lib] = error.value
    ours, theirs = caught.values()
    assert type(ours).__name__ == type(theirs).__name__ == "InvalidArgumentError"
    assert "x overflowed" in ours.message and "while/checked" in ours.message
    assert ours.op is not None and ours.op.name == "while/checked"


_LONG = 3_000_000  # iterations: seconds of work for either runtime


def _long_loop(lib):
    return lib.while_loop(lambda i, x: i < _LONG, lambda i, x: (i + 1, x * 1.0001 + 0.5), [0, lib.zeros([4])])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("where", ["run_options", "config"])
def test_a_long_loop_stops_at_the_deadline_as_in_tf(where, loop_mode):
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            out = _long_loop(lib)
            config = lib.ConfigProto(operation_timeout_in_ms=200) if where == "config" else None
            options = lib.RunOptions(timeout_in_ms=200) if where == "run_options" else None
            with lib.Session(config=config) as sess:
                start = time.monotonic()
                with pytest.raises(lib.errors.DeadlineExceededError):
                    sess.run(out, options=options)
                assert time.monotonic() - start < 2.0


def _close_while_running(lib, fetch, after: float = 0.3) -> tuple[str, float]:
    """Runs ``fetch`` and closes the session from another thread ``after`` seconds in: (error class, seconds the run
    went on after the close)."""
    sess = lib.Session()
    closed = []

    def close():
        closed.append(time.monotonic())
        sess.close()

    timer = threading.Timer(after, close)
    timer.start()
    try:
        sess.run(fetch)
        return "no error", 0.0
    except lib.errors.OpError as e:
        return type(e).__name__, time.monotonic() - closed[0]
    finally:
        timer.join()


@pytest.mark.tf_oracle
def test_closing_the_session_cancels_a_long_loop_as_in_tf(loop_mode):
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            name, late = _close_while_running(lib, _long_loop(lib))
            assert (name, late < 0.5) == ("CancelledError", True), lib


@pytest.mark.tf_oracle
def test_closing_the_session_cancels_a_blocked_dequeue_as_in_tf():
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            q = lib.FIFOQueue(2, lib.float32)
            name, late = _close_while_running(lib, q.dequeue())
            assert (name, late < 0.5) == ("CancelledError", True), lib


@pytest.mark.tf_oracle
@pytest.mark.parametrize("where", ["run_options", "config"])
def test_a_blocked_dequeue_times_out_as_in_tf(where):
    for lib in (tf, _real_tf()):
        with lib.Graph().as_default():
            q = lib.FIFOQueue(2, lib.float32)
            config = lib.ConfigProto(operation_timeout_in_ms=200) if where == "config" else None
            options = lib.RunOptions(timeout_in_ms=200) if where == "run_options" else None
            with lib.Session(config=config) as sess:
                start = time.monotonic()
                with pytest.raises(lib.errors.DeadlineExceededError):
                    sess.run(q.dequeue(), options=options)
                assert 0.15 < time.monotonic() - start < 2.0


def test_a_plain_loop_runs_as_one_task_of_its_frame():
    with tf.Graph().as_default():
        out = tf.while_loop(lambda i: i < 100, lambda i: i + 1, [0])
        with tf.Session() as sess:
            assert sess.run(out) == 100
            (loop,) = next(plan for _, plan in sess._backend._plans.values())._flow.loops.values()
    # The body is one Add: its Identity became a move, its Const is hoisted, the LoopCond is read through.
    assert [len(loop.head), len(loop.body), len(loop.hoisted)] == [1, 1, 2]


# ---- parallel branches and value release ---------------------------------------------------------------------------


def test_small_branched_plans_stay_on_one_thread(monkeypatch):
    runs = []
    monkeypatch.setattr(executor, "FlowRun", lambda *args, **kwargs: runs.append(args) or FlowRun(*args, **kwargs))
    a = tf.constant([1.0, 2.0])
    total = tf.add(a * 2.0, a + 1.0)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(5):
            assert sess.run(total).tolist() == [4.0, 7.0]
    assert runs == []  # microseconds per step: handing steps to threads would cost more than it saves


def test_heavy_independent_branches_run_at_once():
    """Two matmul chains on two inter-op threads overlap: each thread's kernel releases the GIL."""
    rng = np.random.default_rng(0)
    sums = []
    for _ in range(2):
        y = tf.constant(rng.standard_normal((512, 512), dtype=np.float32))
        for _link in range(4):
            y = tf.matmul(y, y) * 1e-3
        sums.append(tf.reduce_sum(y))
    active, most = [0], [0]
    lock = threading.Lock()
    original = FlowRun._run_step

    def counting(self, i, it):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            time.sleep(0.002)  # long enough for the other branch to start beside this step
            return original(self, i, it)
        finally:
            with lock:
                active[0] -= 1

    config = tf.ConfigProto(inter_op_parallelism_threads=2, intra_op_parallelism_threads=1)
    with tf.Session(config=config) as sess:
        for _ in range(3):  # the first runs tell the plan its steps are heavy
            serial = sess.run(sums)
        FlowRun._run_step = counting
        try:
            parallel = sess.run(sums)
        finally:
            FlowRun._run_step = original
    np.testing.assert_allclose(parallel, serial, rtol=1e-5)
    assert most[0] == 2


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("bench_local", os.path.join(_ROOT, "benchmarks", "bench_local.py"))


@pytest.mark.slow
def test_peak_memory_of_a_chain_run_as_a_dataflow_stays_flat():
    """A cond in the chain makes the whole step a dataflow: values still go after their last reader."""
    bench = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(bench)
    short, long = bench.peak_mib("dtf", 2, flow=True), bench.peak_mib("dtf", 40, flow=True)
    # Kept all, the 40-link chain would hold 76 more values of 16 MiB (1.2 GiB); dropped, a few at most.
    assert long - short < 5 * 16, f"peak {short:.0f} MiB for 2 links, {long:.0f} MiB for 40"


# ---- dequeues that wait on the calling thread ----------------------------------------------------------------------
def _plan(fetches):
    from dtf_notebook.runtime.devices import LocalDevice
    from dtf_notebook.runtime.executor import ExecutionState, Plan

    cpu = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, __import__("torch").device("cpu"))
    ops = tf.get_default_graph().get_operations()
    return Plan(fetches, [], [], {op.name: cpu for op in ops}, ExecutionState())


def test_a_step_reading_a_queue_that_nothing_in_it_fills_runs_serially_dequeue_last():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[2]])
    batch = q.dequeue_many(2)
    w = tf.constant([[1.0], [2.0]])  # made after the dequeue, independent of it
    y = tf.matmul(batch, w)
    plan = _plan([y])
    assert plan._flow is None and not plan.resumable  # serial, but never run on a task's event loop
    names = [op.name for op in plan.ops]
    assert names.index(w.op.name) < names.index(batch.op.name) < names.index(y.op.name)

    with tf.Session() as sess:
        sess.run(q.enqueue_many([[[1.0, 1.0], [2.0, 2.0]]]))
        np.testing.assert_allclose(sess.run(y), [[3.0], [6.0]])


def test_a_step_that_also_fills_the_queue_stays_a_dataflow():
    q = tf.FIFOQueue(4, tf.float32, shapes=[])
    plan = _plan([q.dequeue(), q.enqueue(1.0)])
    assert plan._flow is not None


def test_closing_the_session_cancels_a_serial_dequeue_waiting_in_another_thread():
    q = tf.FIFOQueue(4, tf.float32, shapes=[])
    taken = q.dequeue() * 2.0
    sess = tf.Session()
    caught = []

    def run():
        try:
            sess.run(taken)
        except tf.errors.OpError as exc:
            caught.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    start = time.monotonic()
    sess.close()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - start < 1.0
    assert isinstance(caught[0], tf.errors.CancelledError)


def test_a_queue_runners_read_parse_enqueue_step_runs_serially(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(4):
            writer.write(b"record %d" % i)
    files = tf.train.string_input_producer([path], shuffle=False)
    _, records = tf.TFRecordReader().read_up_to(files, 4)
    out = tf.FIFOQueue(10, tf.string, shapes=[[]])
    enqueue = out.enqueue_many([records])
    plan = _plan([enqueue])
    assert plan._flow is None and not plan.resumable
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        sess.run(enqueue)
        assert sess.run(out.dequeue_many(4)).tolist() == [b"record %d" % i for i in range(4)]
        coord.request_stop()
        coord.join(threads)


def test_two_queue_ops_of_one_shared_name_are_one_queue_to_the_decision():
    a = tf.FIFOQueue(4, tf.float32, shapes=[], shared_name="same")
    b = tf.FIFOQueue(4, tf.float32, shapes=[], shared_name="same")
    other = tf.FIFOQueue(4, tf.float32, shapes=[])
    assert _plan([b.enqueue(a.dequeue())])._flow is not None  # the enqueue may end the dequeue's wait
    serial = _plan([other.enqueue(a.dequeue())])
    assert serial._flow is None
    with tf.Session() as sess:
        sess.run(b.enqueue(5.0))
        sess.run(other.enqueue(a.dequeue()))
        assert sess.run(other.dequeue()) == 5.0


def test_two_independent_queue_waits_linked_by_another_thread_finish_as_in_tf():
    # A server thread answers each request: resp.enqueue(req.dequeue() * 2). The client's one step waits for the
    # answer and sends the request; run serially in plan order it would wait for an answer to a request never sent.
    req = tf.FIFOQueue(4, tf.float32, shapes=[])
    resp = tf.FIFOQueue(4, tf.float32, shapes=[])
    serve = resp.enqueue(req.dequeue() * 2.0)
    answer = resp.dequeue()
    ask = req.enqueue(3.0)
    assert _plan([answer, ask])._flow is not None
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=10000)) as sess:
        server = threading.Thread(target=sess.run, args=(serve,))
        server.start()
        assert sess.run([answer, ask]) == [6.0, None]
        server.join(5)


def test_a_serial_plan_starts_each_run_with_its_constants_in_place(fresh_graph):
    """Constants without control inputs leave a serial plan's steps; runs, errors and traces see no difference."""
    import torch

    from dtf_notebook.runtime.devices import LocalDevice
    from dtf_notebook.runtime.executor import ExecutionState, Plan, StepContext

    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.add(tf.multiply(x, tf.constant(3.0, name="three")), tf.constant([1.0, 2.0], name="one_two"), name="y")
    with tf.control_dependencies([y]):
        z = tf.constant(7.0, name="after_y")  # keeps its step: it runs after y
    cpu = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, torch.device("cpu"))
    ops = fresh_graph.get_operations()
    plan = Plan([y, z], [], [x], {op.name: cpu for op in ops}, ExecutionState(), inter_op_threads=1)
    assert plan.resumable
    assert [op.name for op in plan.step_ops] == ["Mul", "y", "after_y"]
    for _ in range(2):  # each run starts from the constants, not from what the last run left
        out = plan.run([torch.tensor([1.0, 2.0])], StepContext())
        assert out[0].tolist() == [4.0, 8.0] and float(out[1]) == 7.0
        assert plan.start([torch.tensor([0.0, 1.0])], StepContext()).resume()[0].tolist() == [1.0, 5.0]
    trace: list = []
    plan.run([torch.tensor([1.0, 2.0])], StepContext(), trace)
    assert sorted(op.name for op, *_ in trace) == ["Mul", "after_y", "one_two", "three", "y"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="'y'"):
        plan.run([torch.tensor([1.0, 2.0, 3.0])], StepContext())  # the failing node is still named
