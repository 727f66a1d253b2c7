"""Control flow across the tasks of a real multi-process cluster, checked against TF1 servers running the same graph.

A loop whose ops sit on several tasks runs a control loop on each of them (TF's ``AddControlFlow``), values cross
inside a frame under per-iteration rendezvous keys, and a dead value (a branch not taken) crosses as dead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.distributed.worker_service import WorkerService
from dtf_notebook.runtime.config import ConfigProto
from dtf_notebook.runtime.dataflow import DEAD
from tests.distributed.cluster_util import LocalCluster, free_port

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PS, W0, W1 = "/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(jobs={"ps": 1, "worker": 2}) as c:
        yield c


@pytest.fixture(scope="module")
def real_tf():
    """TF1 (graph mode, control flow v1) and servers of a cluster like ``cluster``'s, or a skip without it."""
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    tf1.disable_control_flow_v2()
    tf1.disable_resource_variables()  # TF1's reference variables, as dtf_notebook's
    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}" for _ in range(2)]}
    servers = [tf1.train.Server(spec, job_name=job, task_index=i) for job in spec for i in range(len(spec[job]))]
    return tf1, servers[1].target  # TF servers cannot be stopped; they go with the test process


def _on_both(cluster, real_tf, build: Callable[[Any], Any], run: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
    """``run(session, build(lib))`` with TF on its servers and with dtf_notebook on the cluster: (theirs, ours)."""
    tf1, target = real_tf
    with tf1.Graph().as_default():
        built = build(tf1)
        with tf1.Session(target) as sess:
            theirs = run(sess, built)
    with tf.Graph().as_default():
        built = build(tf)
        with tf.Session(cluster.target("worker", 0)) as sess:
            ours = run(sess, built)
    return theirs, ours


def _tree_close(theirs: Any, ours: Any, rtol: float = 1e-6, atol: float = 0.0) -> None:
    if isinstance(theirs, list | tuple):
        assert len(theirs) == len(ours)
        for a, b in zip(theirs, ours):
            _tree_close(a, b, rtol, atol)
    else:
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol)


# ---- loops whose frame spans tasks ---------------------------------------------------------------------------
def test_loop_on_a_worker_reads_a_ps_variable_every_iteration(cluster, real_tf):
    def build(lib):
        with lib.device(PS):
            v = lib.Variable(1.0, name="v_read")
        with lib.device(W0):

            def body(i, x):
                with lib.device(PS):
                    read = lib.identity(v)  # on the ps, in the loop's frame: the frame spans ps and worker
                return i + 1, x + read

            out = lib.while_loop(lambda i, x: i < 5, body, [lib.constant(0), lib.constant(0.0)])
        return v, out

    def run(sess, built):
        v, out = built
        sess.run(v.initializer)
        first = sess.run(out)
        sess.run(v.assign(2.5))  # seen by the next run
        return first, sess.run(out)

    theirs, ours = _on_both(cluster, real_tf, build, run)
    _tree_close(theirs, ours)
    assert ours[1][1] == 12.5


def test_loop_updates_a_ps_variable_each_iteration(cluster, real_tf):
    def build(lib):
        with lib.device(PS):
            v = lib.Variable(1.0, name="v_update")
        with lib.device(W0):

            def body(i, y):
                with lib.device(PS):
                    step = lib.assign_add(v, 1.0)
                return i + 1, y * 10.0 + step

            # One iteration at a time, so each reads the variable after its own update only (with more, TF's and
            # ours alike may read it after a later iteration's update too).
            loop_vars = [lib.constant(0), lib.constant(0.0)]
            out = lib.while_loop(lambda i, y: i < 5, body, loop_vars, parallel_iterations=1)
        return v, out

    def run(sess, built):
        v, out = built
        sess.run(v.initializer)
        first = sess.run(out)[1]
        return first, sess.run(out)[1], sess.run(v)

    theirs, ours = _on_both(cluster, real_tf, build, run)
    _tree_close(theirs, ours)
    assert ours == (23456.0, 79011.0, 11.0)


def test_loop_body_spans_two_workers(cluster, real_tf):
    def build(lib):
        with lib.device(W0):

            def body(i, x):
                with lib.device(W1):
                    y = x * 2.0 + lib.cast(i, lib.float32)
                return i + 1, y - 1.0

            return lib.while_loop(lambda i, x: i < 7, body, [lib.constant(0), lib.constant(1.0)])

    theirs, ours = _on_both(cluster, real_tf, build, lambda sess, out: sess.run(out))
    _tree_close(theirs, ours)


def test_nested_loops_across_tasks(cluster, real_tf):
    def build(lib):
        with lib.device(PS):
            scale = lib.Variable(0.5, name="scale_nested")
        with lib.device(W0):

            def outer(i, total):
                def inner(j, acc):
                    with lib.device(W1):
                        term = lib.cast(i * 10 + j, lib.float32)
                    with lib.device(PS):
                        scaled = term * scale
                    return j + 1, acc + scaled

                _, inner_sum = lib.while_loop(lambda j, acc: j < i + 1, inner, [lib.constant(0), lib.constant(0.0)])
                return i + 1, total + inner_sum

            out = lib.while_loop(lambda i, t: i < 4, outer, [lib.constant(0), lib.constant(0.0)])
        return scale, out

    def run(sess, built):
        scale, out = built
        sess.run(scale.initializer)
        return sess.run(out)

    theirs, ours = _on_both(cluster, real_tf, build, run)
    _tree_close(theirs, ours)
    assert ours[1] == 0.5 * sum(i * 10 + j for i in range(4) for j in range(i + 1))


# ---- cond with branches on different tasks ------------------------------------------------------------------
def _cond_graph(lib):
    with lib.device(PS):
        on_ps = lib.Variable(0.0, name="taken_on_ps")
    with lib.device(W1):
        on_worker = lib.Variable(0.0, name="taken_on_worker")
    with lib.device(W0):
        pred = lib.placeholder(lib.bool, [], name="pred")

        def true_fn():
            with lib.device(PS):
                return lib.assign_add(on_ps, 1.0) * 2.0

        def false_fn():
            with lib.device(W1):
                return lib.assign_add(on_worker, 10.0) + 0.5

        out = lib.cond(pred, true_fn, false_fn)
    return pred, on_ps, on_worker, out


def test_cond_branches_on_different_tasks_run_only_the_branch_taken(cluster, real_tf):
    def run(sess, built):
        pred, on_ps, on_worker, out = built
        sess.run([on_ps.initializer, on_worker.initializer])
        seen = [sess.run(out, {pred: p}) for p in (True, True, False, True, False)]
        return seen, sess.run([on_ps, on_worker])

    theirs, ours = _on_both(cluster, real_tf, _cond_graph, run)
    _tree_close(theirs, ours)
    assert ours == ([2.0, 4.0, 10.5, 6.0, 20.5], [3.0, 20.0])


def _switch_merge(lib: Any) -> tuple[Callable, Callable]:
    if lib is tf:
        from dtf_notebook.ops.control_flow import primitives

        return primitives.switch, primitives.merge
    from tensorflow.python.ops import control_flow_ops

    return control_flow_ops.switch, control_flow_ops.merge


def test_a_dead_value_crosses_tasks_as_dead(cluster, real_tf):
    """A Switch's untaken output crosses worker -> ps -> worker dead: the Merge takes the other one, and fetching
    the dead one fails on both. TF's distributed master reports it as an InternalError ("The tensor returned for
    ... was not valid"); dtf_notebook, there as in a local session (and as TF's local sessions), as an
    InvalidArgumentError naming the tensor."""

    def build(lib):
        switch, merge = _switch_merge(lib)
        with lib.device(W0):
            pred = lib.placeholder(lib.bool, [], name="pred")
            when_false, when_true = switch(lib.constant(3.0), pred)
        with lib.device(PS):
            doubled = when_true * 2.0  # dead on the ps when pred is false
        with lib.device(W0):
            out = merge([when_false + 0.5, doubled])[0]
            back = doubled + 1.0  # received dead from the ps
        return pred, out, back

    def run(sess, built):
        pred, out, back = built
        values = [sess.run([out, back], {pred: True}), sess.run(out, {pred: False})]
        try:
            sess.run(back, {pred: False})
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            return values, type(e).__name__
        return values, None

    theirs, ours = _on_both(cluster, real_tf, build, run)
    assert (theirs[1], ours[1]) == ("InternalError", "InvalidArgumentError")
    _tree_close(theirs[0], ours[0])
    assert ours[0] == [[6.0, 7.0], 3.5]


def test_send_tensor_carries_dead_values_by_key():
    worker = WorkerService("worker", 0, ConfigProto(), peers=None)
    header = {"step_id": 3, "keys": ["live;0:0"], "dead_keys": ["dead;0:0"]}
    worker.handle("SendTensor", header, [np.float32(2.0)])
    rendezvous = worker.rendezvous.get(3)
    assert rendezvous.recv("dead;0:0", deadline=time.monotonic() + 1) is DEAD
    assert float(rendezvous.recv("live;0:0", deadline=time.monotonic() + 1)) == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="dead_keys"):
        worker.handle("SendTensor", {"step_id": 3, "keys": [], "dead_keys": "dead"}, [])


def test_servers_in_one_process_pass_dead_values_too():
    """Tasks in one process hand tensors over directly (no wire): a dead value goes over as it is."""
    spec = {"ps": [f"127.0.0.1:{free_port()}"], "worker": [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]}
    servers = [tf.train.Server(spec, job_name=job, task_index=i) for job in spec for i in range(len(spec[job]))]
    try:
        pred, on_ps, on_worker, out = _cond_graph(tf)
        with tf.Session(servers[1].target) as sess:
            sess.run([on_ps.initializer, on_worker.initializer])
            assert [sess.run(out, {pred: p}) for p in (False, True)] == [10.5, 2.0]
            assert sess.run([on_ps, on_worker]) == [1.0, 10.0]
    finally:
        for server in servers:
            server.stop()


# ---- gradients -----------------------------------------------------------------------------------------------
def test_gradients_through_a_cond_across_tasks(cluster, real_tf):
    def build(lib):
        with lib.device(PS):
            w = lib.Variable([1.0, -2.0, 3.0], name="w_cond_grad")
        with lib.device(W0):
            pred = lib.placeholder(lib.bool, [], name="pred")

            def true_fn():
                with lib.device(PS):
                    return lib.reduce_sum(w * w)

            def false_fn():
                with lib.device(W1):
                    return lib.reduce_sum(lib.tanh(w) * 3.0)

            loss = lib.cond(pred, true_fn, false_fn)
            (grad,) = lib.gradients(loss, [w])
        return pred, w, grad

    def run(sess, built):
        pred, w, grad = built
        sess.run(w.initializer)
        return [sess.run(grad, {pred: p}) for p in (True, False)]

    theirs, ours = _on_both(cluster, real_tf, build, run)
    _tree_close(theirs, ours, rtol=1e-5, atol=1e-6)  # tanh's last bits differ between torch and Eigen


def test_gradients_through_a_loop_across_tasks(cluster, real_tf):
    def build(lib):
        with lib.device(PS):
            w = lib.Variable(0.9, name="w_loop_grad")
        with lib.device(W0):
            x0 = lib.constant(1.5)

            def body(i, x):
                with lib.device(W1):
                    y = lib.tanh(x) * w
                with lib.device(PS):
                    z = y + w * 0.1
                return i + 1, z

            _, out = lib.while_loop(lambda i, x: i < 4, body, [lib.constant(0), x0])
            grads = lib.gradients(out, [w, x0])
        return w, out, grads

    def run(sess, built):
        w, out, grads = built
        sess.run(w.initializer)
        return sess.run([out, grads])

    theirs, ours = _on_both(cluster, real_tf, build, run)
    _tree_close(theirs, ours, rtol=1e-5, atol=1e-6)


# ---- failures ------------------------------------------------------------------------------------------------
def test_an_op_failing_mid_loop_on_another_task_fails_the_step(cluster, real_tf):
    def build(lib):
        with lib.device(W0):

            def body(i, x):
                with lib.device(W1):
                    check = lib.Assert(i < 3, [i], name="small_i")  # fails in the fourth iteration
                    with lib.control_dependencies([check]):
                        y = x + 1.0
                return i + 1, y

            return lib.while_loop(lambda i, x: i < 10, body, [lib.constant(0), lib.constant(0.0)])

    def run(sess, out):
        try:
            sess.run(out)
        except Exception as e:  # noqa: BLE001 - the class and the node are what is compared
            failed = (type(e).__name__, "while/small_i/Assert" in str(e))
        return failed, sess.run(out[0] * 0 + 1)  # the session still runs steps

    theirs, ours = _on_both(cluster, real_tf, build, run)
    assert theirs == ours == (("InvalidArgumentError", True), 1)


def test_a_task_dying_mid_loop_fails_the_step_within_seconds():
    with LocalCluster(jobs={"ps": 1, "worker": 2}) as doomed, tf.Graph().as_default():
        with tf.device(W0):

            def body(i, x):
                with tf.device(W1):
                    y = x + 1.0
                return i + 1, y

            out = tf.while_loop(lambda i, x: i < 10**9, body, [tf.constant(0), tf.constant(0.0)])
        failed: list[BaseException] = []
        with tf.Session(doomed.target("worker", 0)) as sess:

            def run():
                try:
                    sess.run(out)
                except tf.errors.OpError as e:
                    failed.append(e)

            runner = threading.Thread(target=run, daemon=True)
            runner.start()
            time.sleep(1.5)  # the loop is running, iterations crossing between the workers
            assert runner.is_alive()
            killed = time.monotonic()
            doomed.kill("worker", 1)
            runner.join(timeout=30)
            took = time.monotonic() - killed
    assert not runner.is_alive(), "the step still runs 30 s after a task it needs died"
    assert failed and isinstance(failed[0], tf.errors.UnavailableError | tf.errors.AbortedError), failed
    assert took < 15, f"the step failed {took:.1f} s after the task died"
