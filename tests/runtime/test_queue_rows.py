"""Queues of fully defined shapes keep their elements as rows (runtime/queue_rows.py): the same values and order
as before, strings included, bounded memory, and no Python objects per element."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework import dtypes
from dtf_notebook.runtime.queue_kinds import PriorityQueueResource, RandomShuffleQueueResource
from dtf_notebook.runtime.queue_rows import RowStore
from dtf_notebook.runtime.queues import FIFOQueueResource, PaddingFIFOQueueResource


def test_which_queues_keep_rows():
    assert FIFOQueueResource("a", [dtypes.float32, dtypes.string], [(2,), ()], 5)._rows is not None
    assert FIFOQueueResource("b", [dtypes.float32], [], 5)._rows is None  # no shapes: any shape per element
    assert FIFOQueueResource("c", [dtypes.bfloat16], [(2,)], 5)._rows is None
    assert PaddingFIFOQueueResource("d", [dtypes.int32], [(None,)], 5)._rows is None
    assert PriorityQueueResource("e", [dtypes.int64, dtypes.float32], [(), (2,)], 5)._rows is None


def test_fifo_order_values_and_strings_survive_row_reuse():
    q = FIFOQueueResource("q", [dtypes.int64, dtypes.string], [(2,), ()], capacity=3)
    for i in range(20):  # rows are freed and reused many times over
        q.enqueue((torch.tensor([i, -i]), np.array(b"s%d" % i, dtype=object)), step=None)
        if i % 2:
            q.enqueue_many((torch.tensor([[100 + i, 0]]), np.array([b"m"], dtype=object)), step=None)
        ids, names = q.dequeue_many(2 if i % 2 else 1, step=None)
        expected = [[i, -i]] + ([[100 + i, 0]] if i % 2 else [])
        assert ids.tolist() == expected and ids.dtype == torch.int64
        assert names.dtype == object and names.tolist() == [b"s%d" % i] + ([b"m"] if i % 2 else [])
    q.enqueue((torch.tensor([7, 8]), np.array(b"last", dtype=object)), step=None)
    single_ids, single_name = q.dequeue(step=None)
    assert single_ids.tolist() == [7, 8] and single_name.shape == () and single_name.item() == b"last"


def test_a_dequeued_batch_is_a_private_copy():
    q = FIFOQueueResource("q", [dtypes.float32], [(2,)], capacity=2)
    source = torch.zeros(2, 2)
    q.enqueue_many((source,), step=None)
    source += 5.0  # the enqueued value changes afterwards (a variable's buffer, say)
    (first,) = q.dequeue_many(2, step=None)
    q.enqueue_many((torch.ones(2, 2),), step=None)  # reuses the rows just read
    assert first.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_a_shuffle_queue_of_thousands_of_elements_holds_no_python_object_per_element():
    q = RandomShuffleQueueResource("q", [dtypes.float32, dtypes.int64], [(16,), ()], capacity=5000, seed=3)
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(40):
        q.enqueue_many((torch.rand(100, 16), torch.arange(100)), step=None)
    gc.collect()
    assert len(gc.get_objects()) - before < 100  # 4,000 elements: ints in a list, no tuples or tensors
    _, labels = q.dequeue_many(4000, step=None)
    assert sorted(labels.tolist()) == sorted(list(range(100)) * 40)


def test_storage_grows_to_the_capacity_and_no_further():
    store = RowStore([dtypes.float32], [(3,)], capacity=100)
    for _ in range(10):
        store.put((torch.zeros(10, 3),), 0, 10)
    assert store.in_use == 100 and len(store._columns[0]) == 100


@pytest.mark.tf_oracle
def test_shuffle_batch_pipeline_matches_tensorflows_multiset():
    real = pytest.importorskip("tensorflow").compat.v1
    results = []
    for lib in (tf, real):
        with lib.Graph().as_default():
            x = lib.constant(np.arange(60, dtype=np.float32).reshape(20, 3))
            y = lib.constant([b"e%d" % i for i in range(20)])
            xb, yb = lib.train.shuffle_batch(
                [x, y], 5, capacity=30, min_after_dequeue=10, enqueue_many=True, num_threads=1
            )
            with lib.Session() as sess:
                coord = lib.train.Coordinator()
                threads = lib.train.start_queue_runners(sess, coord)
                got = [sess.run([xb, yb]) for _ in range(8)]
                coord.request_stop()  # (the runner's close-on-stop thread cancels its pending enqueue)
                coord.join(threads)
        rows = sorted((tuple(r), n) for xs, ys in got for r, n in zip(xs.tolist(), ys.tolist()))
        results.append(rows)
    # Each row keeps its label (x[i] with e<i>), in both libraries.
    for rows in results:
        assert all(int(r[0]) // 3 == int(n[1:]) for r, n in rows)
        assert len(rows) == 40


def test_a_queue_of_unknown_rank_keeps_tuples():
    from dtf_notebook.framework.tensor_shape import unknown_shape

    assert FIFOQueueResource("q", [dtypes.float32], [unknown_shape()], capacity=2)._rows is None


def test_an_enqueue_that_waits_for_room_keeps_the_value_it_was_given():
    import threading

    q = FIFOQueueResource("q", [dtypes.float32], [(2,)], capacity=1)
    q.enqueue((torch.zeros(2),), step=None)
    value = torch.ones(2)
    waiting = threading.Thread(target=q.enqueue, args=((value,), None))
    waiting.start()
    while waiting.is_alive() and not q._cond._waiters:  # the enqueue is waiting for room
        pass
    value += 10.0  # the enqueued tensor (a variable's buffer, say) changes while the enqueue waits
    assert q.dequeue(step=None)[0].tolist() == [0.0, 0.0]
    waiting.join(5)
    assert q.dequeue(step=None)[0].tolist() == [1.0, 1.0]


def test_big_rows_start_small_and_freed_string_rows_hold_nothing():
    store = RowStore([dtypes.float32], [(1 << 20,)], capacity=100)  # 4 MiB rows
    store.put((torch.zeros(1, 1 << 20),), 0, 1)
    assert len(store._columns[0]) == 1
    strings = RowStore([dtypes.string], [()])
    rows = strings.put((np.array([b"x" * 1000, b"y"], dtype=object),), 0, 2)
    strings.take(rows)
    assert all(v is None for v in strings._columns[0])
