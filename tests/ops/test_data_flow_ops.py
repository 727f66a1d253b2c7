"""Queues and conditional accumulators in one process: TF1 semantics, blocking with deadlines, errors."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

import dtf_notebook.compat.v1 as tf
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.accumulators import SparseConditionalAccumulatorResource
from dtf_notebook.runtime.executor import StepContext
from dtf_notebook.runtime.queues import FIFOQueueResource
from dtf_notebook.runtime.rendezvous import Rendezvous

SHORT = tf.ConfigProto(operation_timeout_in_ms=300)


def run_later(fn, delay=0.15):
    """Runs ``fn`` in a thread after ``delay`` seconds; join the returned thread."""
    thread = threading.Thread(target=lambda: (time.sleep(delay), fn()), daemon=True)
    thread.start()
    return thread


# ---- FIFOQueue: building ----------------------------------------------------------------------
def test_graph_structure_names_and_static_shapes():
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []], name="myq")
    assert (q.name, q.dtypes, [s.as_list() for s in q.shapes]) == ("myq", [tf.float32, tf.int32], [[2], []])
    assert q.queue_ref.op.type == "FIFOQueueV2" and q.queue_ref.is_ref
    e = q.enqueue(([1.0, 2.0], 5))
    assert (e.name, e.type) == ("myq_enqueue", "QueueEnqueueV2")
    assert [t.name for t in e.inputs] == ["myq:0", "myq_enqueue/component_0:0", "myq_enqueue/component_1:0"]
    assert q.enqueue_many(([[1.0, 2.0]], [6])).name == "myq_EnqueueMany"
    d = q.dequeue()
    assert [t.name for t in d] == ["myq_Dequeue:0", "myq_Dequeue:1"]
    assert [t.shape.as_list() for t in q.dequeue_many(2)] == [[2, 2], [2]]
    assert [t.shape.as_list() for t in q.dequeue_up_to(2)] == [[None, 2], [None]]
    assert (q.close().name, q.close(True).name, q.size().name, q.is_closed().name) == (
        "myq_Close",
        "myq_Close_1",
        "myq_Size:0",
        "myq_Is_Closed:0",
    )
    # Every op using the queue runs where the queue lives, whatever device block it is built in.
    with tf.device("/cpu:0"):
        assert q.size().op.colocation_groups() == ["loc:@myq"]


def test_build_errors():
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue(([1.0, 2.0, 3.0], 5))
    with pytest.raises((TypeError, ValueError)):
        q.enqueue((["a", "b"], 5))
    with pytest.raises(ValueError, match="has 2 components, got 1"):
        q.enqueue([1.0, 2.0][:1])
    with pytest.raises(ValueError, match="must have names to enqueue a dictionary"):
        q.enqueue({"a": [1.0, 2.0], "b": 1})
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, tf.float32, shapes=[[None]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2]])


def test_ops_check_dtypes_against_the_handle_even_when_built_directly():
    # What a forged or hand-written graph def would hold: the op's inference rejects it.
    q = tf.FIFOQueue(2, tf.float32)
    acc = tf.ConditionalAccumulator(tf.float32)
    with pytest.raises(ValueError, match=r"holds \['float32'\], but QueueEnqueueV2 gives \['int32'\]"):
        make_op("QueueEnqueueV2", [q.queue_ref, tf.constant(1)], {"Tcomponents": [tf.int32]})
    with pytest.raises(ValueError, match="other component types"):
        make_op("QueueDequeueV2", [q.queue_ref], {"component_types": [tf.int32]})
    with pytest.raises(ValueError, match="holds float32 gradients"):
        make_op(
            "AccumulatorApplyGradient", [acc.accumulator_ref, tf.constant(0, tf.int64), tf.constant(1.0, tf.float64)]
        )


def test_shapes_argument_forms():
    assert [s.as_list() for s in tf.FIFOQueue(1, tf.int32, shapes=()).shapes] == [[]]
    assert [s.as_list() for s in tf.FIFOQueue(1, tf.int32, shapes=[2, 3]).shapes] == [[2, 3]]
    assert tf.FIFOQueue(1, tf.int32).shapes[0].ndims is None


# ---- FIFOQueue: running -----------------------------------------------------------------------
def test_fifo_order_and_multiple_components():
    q = tf.FIFOQueue(10, [tf.int32, tf.string, tf.float32], shapes=[[], [], [2]])
    push = [q.enqueue((i, f"s{i}", [i, -i])) for i in range(3)]
    pop = q.dequeue()
    with tf.Session() as sess:
        for one in push:  # enqueues of one run have no order (as in TF): one run each
            sess.run(one)
        got = [sess.run(pop) for _ in range(3)]
        assert sess.run(q.size()) == 0
    for i, (n, s, v) in enumerate(got):
        assert (int(n), s) == (i, f"s{i}".encode())
        np.testing.assert_array_equal(v, [i, -i])


def test_named_components_are_dicts():
    q = tf.FIFOQueue(2, [tf.int32, tf.float32], names=["a", "b"], shapes=[[], []])
    push = q.enqueue({"a": 1, "b": 2.5})
    out = q.dequeue()
    assert sorted(out) == ["a", "b"]
    with tf.Session() as sess:
        sess.run(push)
        assert sess.run(out) == {"a": 1, "b": 2.5}


def test_enqueue_many_dequeue_many_and_up_to():
    q = tf.FIFOQueue(10, [tf.float32, tf.int64], shapes=[[2], []])
    push = q.enqueue_many(([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [7, 8, 9]))
    with tf.Session() as sess:
        sess.run(push)
        rows, ids = sess.run(q.dequeue_many(2))
        np.testing.assert_array_equal(rows, [[1.0, 2.0], [3.0, 4.0]])
        assert ids.tolist() == [7, 8] and ids.dtype == np.int64
        sess.run(q.close())
        rows, ids = sess.run(q.dequeue_up_to(5))  # a closed queue gives what it has left
        assert rows.shape == (1, 2) and ids.tolist() == [9]
        with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 5, current size 0"):
            sess.run(q.dequeue_up_to(5))
        empty = sess.run(q.dequeue_many(0))
        assert empty[0].shape == (0, 2)


def test_dequeue_many_larger_than_capacity_takes_elements_as_they_arrive():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    push = q.enqueue(x)
    with tf.Session() as sess:
        feeder = threading.Thread(target=lambda: [sess.run(push, {x: i}) for i in range(5)], daemon=True)
        feeder.start()
        assert sess.run(q.dequeue_many(5)).tolist() == [0, 1, 2, 3, 4]
        feeder.join(5)


def test_full_queue_enqueue_times_out():
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    push = q.enqueue(1.0)
    with tf.Session(config=SHORT) as sess:
        sess.run(push)
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="room in queue"):
            sess.run(push)
        assert time.monotonic() - start < 3
    with tf.Session() as sess:
        sess.run(push)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(push, options=tf.RunOptions(timeout_in_ms=200))


def test_empty_queue_dequeue_times_out_and_waits_for_an_enqueue():
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    pop = q.dequeue()
    with tf.Session(config=SHORT) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="an element of queue"):
            sess.run(pop)
    with tf.Session() as sess:
        push = q.enqueue(4.0)
        feeder = run_later(lambda: sess.run(push))
        assert sess.run(pop) == 4.0
        feeder.join()


def test_close_semantics():
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]], name="q")
    push, pop = q.enqueue(1), q.dequeue()
    with tf.Session() as sess:
        sess.run(push)
        assert not sess.run(q.is_closed())
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="FIFOQueue 'q' is closed."):
            sess.run(push)
        with pytest.raises(tf.errors.CancelledError, match="Queue 'q' is already closed."):
            sess.run(q.close())
        assert sess.run(pop) == 1  # what is left can still be dequeued
        with pytest.raises(tf.errors.OutOfRangeError, match=r"closed and has insufficient elements \(requested 1"):
            sess.run(pop)


def test_close_wakes_blocked_dequeue_and_cancels_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    pop, push = q.dequeue(), q.enqueue(3)
    with tf.Session() as sess:
        closer = run_later(lambda: sess.run(q.close()))
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(pop)
        closer.join()
    with tf.Session() as sess:
        sess.run(push)
        closer = run_later(lambda: sess.run(q.close(cancel_pending_enqueues=True)))
        with pytest.raises(tf.errors.CancelledError, match="cancelled"):
            sess.run(push)
        closer.join()
    with tf.Session() as sess:  # without cancelling, a waiting enqueue still gets in once there is room
        sess.run(push)
        waiting = threading.Thread(target=lambda: sess.run(push), daemon=True)
        waiting.start()
        time.sleep(0.15)
        sess.run(q.close())
        assert sess.run(pop) == 3
        waiting.join(5)
        assert sess.run(pop) == 3


def test_runtime_shape_errors_and_unspecified_shapes():
    x = tf.placeholder(tf.float32)
    q = tf.FIFOQueue(5, tf.float32, shapes=[[2]])
    loose = tf.FIFOQueue(5, tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[2\], got \[3\]"):
            sess.run(q.enqueue(x), {x: [1.0, 2.0, 3.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[1,2\], got \[1,3\]"):
            sess.run(q.enqueue_many(x), {x: [[1.0, 2.0, 3.0]]})
        sess.run(loose.enqueue(x), {x: [[1.0], [2.0]]})  # any shape goes in a queue without shapes
        np.testing.assert_array_equal(sess.run(loose.dequeue()), [[1.0], [2.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have specified shapes"):
            sess.run(loose.dequeue_many(1))


def test_enqueued_values_are_copies_of_variables():
    v = tf.Variable([1.0, 2.0])
    q = tf.FIFOQueue(2, tf.float32, shapes=[[2]])
    push = q.enqueue(v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(push)
        sess.run(tf.assign_add(v, [10.0, 10.0]))
        np.testing.assert_array_equal(sess.run(q.dequeue()), [1.0, 2.0])


def test_shared_name_shares_and_mismatches_fail():
    a = tf.FIFOQueue(5, tf.float32, shared_name="shared_q", name="a")
    b = tf.FIFOQueue(5, tf.float32, shared_name="shared_q", name="b")
    wrong_type = tf.FIFOQueue(5, tf.int32, shared_name="shared_q")
    wrong_capacity = tf.FIFOQueue(6, tf.float32, shared_name="shared_q")
    with tf.Session() as sess:
        sess.run(a.enqueue(1.0))
        assert sess.run(b.size()) == 1
        with pytest.raises(tf.errors.InvalidArgumentError, match="has component types float32 but requested"):
            sess.run(wrong_type.size())
        with pytest.raises(tf.errors.InvalidArgumentError, match="has capacity 5 but requested capacity was 6"):
            sess.run(wrong_capacity.size())
        assert sess.run(a.queue_ref).tolist() == [b"", b"shared_q"]
        assert sess.run(tf.FIFOQueue(1, tf.float32, name="own").queue_ref).tolist() == [b"", b"own"]


def test_closing_the_session_cancels_a_blocked_dequeue():
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    pop = q.dequeue()
    sess = tf.Session()
    errors: list[BaseException] = []

    def blocked():
        try:
            sess.run(pop)
        except tf.errors.OpError as e:
            errors.append(e)

    thread = threading.Thread(target=blocked, daemon=True)
    thread.start()
    time.sleep(0.2)
    sess.close()
    thread.join(5)
    assert not thread.is_alive()
    assert isinstance(errors[0], tf.errors.CancelledError) and "session was closed or reset" in str(errors[0])


def test_aborted_step_ends_a_blocked_wait():
    queue = FIFOQueueResource("q", [tf.float32], [()], capacity=1)
    rendezvous = Rendezvous()
    step = StepContext(1, None, {"rendezvous": rendezvous})
    aborter = run_later(lambda: rendezvous.abort(tf.errors.AbortedError(None, None, "peer task died")))
    with pytest.raises(tf.errors.AbortedError, match="peer task died"):
        queue.dequeue(step)
    aborter.join()
    queue.enqueue((torch.tensor(1.0),), None)
    with pytest.raises(tf.errors.AbortedError):  # an aborted step never waits again
        queue.enqueue((torch.tensor(2.0),), step)


# ---- ConditionalAccumulator -------------------------------------------------------------------
def test_accumulator_graph_structure():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="acc")
    assert (acc.name, acc.dtype, acc.accumulator_ref.op.type) == (
        "conditional_accumulator",
        tf.float32,
        "ResourceConditionalAccumulator",
    )
    apply = acc.apply_grad([1.0, 2.0], local_step=0)
    assert apply.type == "ResourceAccumulatorApplyGradient" and apply.inputs[1].dtype == tf.int64
    take = acc.take_grad(2)
    assert (take.shape.as_list(), take.op.type) == ([2], "ResourceAccumulatorTakeGradient")
    num = acc.num_accumulated()
    assert (num.name, num.op.type) == ("conditional_accumulator_NumAccumulated:0", "ResourceAccumulatorNumAccumulated")
    assert acc.set_global_step(1).type == "ResourceAccumulatorSetGlobalStep"
    # The sparse accumulator stays reference-typed, as in TF.
    sparse = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 1])
    assert sparse.accumulator_ref.op.type == "SparseConditionalAccumulator"
    assert sparse.num_accumulated().op.type == "AccumulatorNumAccumulated"
    assert sparse.set_global_step(1).type == "AccumulatorSetGlobalStep"
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="DataType string not in list of allowed values"):
        tf.ConditionalAccumulator(tf.string)
    with pytest.raises(ValueError, match="MEAN or SUM"):
        tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")


def test_accumulator_average_stale_drop_and_global_step():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
    step = tf.placeholder(tf.int64, [])
    grad = tf.placeholder(tf.float32, [2])
    apply = acc.apply_grad(grad, local_step=step)
    take = acc.take_grad(2)
    with tf.Session(config=SHORT) as sess:
        sess.run(apply, {step: 0, grad: [1.0, 2.0]})
        sess.run(apply, {step: 0, grad: [3.0, 4.0]})
        sess.run(apply, {step: 0, grad: [5.0, 6.0]})  # more than required: all are averaged
        assert sess.run(acc.num_accumulated()) == 3
        np.testing.assert_allclose(sess.run(take), [3.0, 4.0])
        # take_grad advanced the accumulator to step 1: a gradient computed at step 0 is stale.
        sess.run(apply, {step: 0, grad: [9.0, 9.0]})
        assert sess.run(acc.num_accumulated()) == 0
        with pytest.raises(tf.errors.DeadlineExceededError, match="2 gradients in accumulator"):
            sess.run(take)
        sess.run(acc.set_global_step(5))
        sess.run(apply, {step: 4, grad: [1.0, 1.0]})
        sess.run(apply, {step: 5, grad: [2.0, 2.0]})
        sess.run(apply, {step: 7, grad: [4.0, 4.0]})
        np.testing.assert_allclose(sess.run(take), [3.0, 3.0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_required must be positive, but was 0"):
            sess.run(acc.take_grad(0))


def test_accumulator_take_waits_for_gradients_from_another_thread():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[], reduction_type="SUM")
    apply = acc.apply_grad(2.0)
    with tf.Session() as sess:
        feeder = run_later(lambda: [sess.run(apply) for _ in range(2)])
        assert sess.run(acc.take_grad(2)) == 4.0
        feeder.join()


def test_accumulator_runtime_shape_errors_and_shared_mismatch():
    acc = tf.ConditionalAccumulator(tf.float32, shape=[2], shared_name="a")
    loose = tf.ConditionalAccumulator(tf.float32, shared_name="b")
    x = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Shape mismatch: expected \[2\], got \[3\]"):
            sess.run(acc.apply_grad(x), {x: [1.0, 2.0, 3.0]})
        sess.run(loose.apply_grad(x), {x: [1.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"expected \[1\], got \[2\]"):
            sess.run(loose.apply_grad(x), {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Shared accumulator 'a' holds float32"):
            sess.run(tf.ConditionalAccumulator(tf.float64, shape=[2], shared_name="a").num_accumulated())


def test_sparse_accumulator_averages_per_row():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=(), shared_name="sacc")
    g1 = tf.IndexedSlices(
        tf.constant([[1.0, 1.0], [2.0, 2.0]]), tf.constant([0, 2], tf.int64), tf.constant([4, 2], tf.int64)
    )
    g2 = tf.IndexedSlices(
        tf.constant([[3.0, 3.0], [5.0, 5.0]]), tf.constant([2, 3], tf.int64), tf.constant([4, 2], tf.int64)
    )
    applies = [acc.apply_indexed_slices_grad(g1, local_step=0), acc.apply_indexed_slices_grad(g2, local_step=0)]
    assert applies[0].type == "SparseAccumulatorApplyGradient" and applies[0].get_attr("has_known_shape")
    taken = acc.take_indexed_slices_grad(2)
    assert isinstance(taken, tf.IndexedSlices) and taken.indices.dtype == tf.int64
    with tf.Session() as sess:
        sess.run(applies)
        value = sess.run(taken)
    assert value.indices.tolist() == [0, 2, 3]
    np.testing.assert_allclose(value.values, [[1.0, 1.0], [2.5, 2.5], [5.0, 5.0]])
    assert value.dense_shape.tolist() == [-1, 2]


def test_sparse_accumulator_known_shape_checks_and_duplicate_rows():
    acc = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
    assert acc.take_indexed_slices_grad(1).values.shape.as_list() == [None, 2]
    idx = tf.placeholder(tf.int64)
    with tf.Session(config=SHORT) as sess:
        # Rows repeated inside one gradient add up and count once for the average.
        sess.run(acc.apply_grad([1, 0, 1], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], local_step=0))
        sess.run(acc.apply_grad([1], [[6.0, 6.0]], local_step=0))
        out = sess.run(acc.take_grad(2))
        assert out.indices.tolist() == [0, 1] and out.shape.tolist() == [4, 2]
        np.testing.assert_allclose(out.values, [[2.0, 2.0], [5.0, 5.0]])
        with pytest.raises(tf.errors.InvalidArgumentError, match="index is 7 exceeded 4"):
            sess.run(acc.apply_grad(idx, [[1.0, 1.0]], local_step=1), {idx: [7]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="expected shape dim 0 to be 4, got 5"):
            sess.run(acc.apply_grad([1], [[1.0, 1.0]], grad_shape=[5, 2], local_step=1))
        sess.run(acc.apply_grad([0], [[1.0, 1.0]], local_step=0))  # stale: dropped without checks
        assert sess.run(acc.num_accumulated()) == 0


def test_sparse_accumulator_resource_sum():
    acc = SparseConditionalAccumulatorResource("s", tf.float32, tf.TensorShape(None), "SUM")
    acc.apply_grad(0, torch.tensor([3, 1]), torch.tensor([1.0, 2.0]))
    acc.apply_grad(0, torch.tensor([1]), torch.tensor([5.0]))
    indices, values, shape = acc.take_grad(2, None)
    assert (indices.tolist(), values.tolist(), shape.tolist()) == ([1, 3], [7.0, 1.0], [-1])


@pytest.mark.tf_oracle
def test_accumulators_match_tensorflow():
    tf1 = pytest.importorskip("tensorflow.compat.v1")

    def build(lib):
        dense = lib.ConditionalAccumulator(lib.float32, shape=[2])
        sparse = lib.SparseConditionalAccumulator(lib.float32, shape=[4, 1])
        ops = [
            dense.apply_grad([1.0, 2.0], local_step=0),
            dense.apply_grad([2.0, 5.0], local_step=0),
            sparse.apply_grad([0, 2], [[1.0], [2.0]], local_step=0),
            sparse.apply_grad([2, 3], [[4.0], [8.0]], local_step=0),
        ]
        return ops, [dense.take_grad(2), sparse.take_grad(2)]

    with tf1.Graph().as_default():
        ops, outs = build(tf1)
        with tf1.Session() as sess:
            sess.run(ops)
            want_dense, want_sparse = sess.run(outs)
    ops, outs = build(tf)
    with tf.Session() as sess:
        sess.run(ops)
        got_dense, got_sparse = sess.run(outs)
    np.testing.assert_allclose(got_dense, want_dense)
    for got, want in zip(got_sparse, want_sparse):
        np.testing.assert_allclose(got, want)


@pytest.mark.tf_oracle
def test_accumulator_op_types_and_names_match_tensorflow():
    tf1 = pytest.importorskip("tensorflow.compat.v1")

    def build(lib):
        made = []
        for acc in (lib.ConditionalAccumulator(lib.float32, [2]), lib.SparseConditionalAccumulator(lib.float32, [2])):
            made += [acc.accumulator_ref.op, acc.num_accumulated().op, acc.set_global_step(1)]
        dense = lib.ConditionalAccumulator(lib.float32, [2], name="d")
        made += [dense.apply_grad([1.0, 2.0]), dense.take_grad(1).op]
        return [(op.name, op.type) for op in made]

    with tf1.Graph().as_default():
        want = build(tf1)
    assert build(tf) == want
