"""``tf.RandomShuffleQueue`` and ``tf.PriorityQueue`` against real TensorFlow: what comes out, in what order (as far
as TF fixes it), sizes, shapes, and the errors of closed, shared and misused queues."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.input.support import both, error_message, session


def _outcome(lib, sess, fetch, feed=None):
    try:
        return ("ok", _plain(sess.run(fetch, feed)))
    except lib.errors.OpError as e:
        return (type(e).__name__, error_message(e))


def _plain(value):
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value.tolist() if hasattr(value, "tolist") else value


@pytest.mark.tf_oracle
def test_priority_queue_dequeues_smallest_first_like_tensorflow():
    def run(lib):
        q = lib.PriorityQueue(10, [lib.string, lib.float32], shapes=[[], [2]])
        fill = q.enqueue_many(([5, 1, 3], ["e", "a", "c"], [[5.0, 5.5], [1.0, 1.5], [3.0, 3.5]]))
        one = q.enqueue((lib.constant(2, lib.int64), "b", [2.0, 2.5]))
        feed = lib.placeholder(lib.int64)
        bad = q.enqueue((feed, "x", [0.0, 0.0]))
        out = []
        with session(lib) as sess:
            sess.run(fill)
            sess.run(one)
            out.append(_outcome(lib, sess, q.dequeue_many(2)))
            out.append(_outcome(lib, sess, q.size()))
            out.append(_outcome(lib, sess, bad, {feed: [1, 2]}))
            sess.run(q.close())
            out.append(_outcome(lib, sess, q.dequeue_up_to(1)))
            # (after this failure TF's priority queue has lost the element it held; ours keeps it)
            out.append(_outcome(lib, sess, q.dequeue_many(3)))
        out.append([d.name for d in q.dtypes])
        out.append([s.as_list() for s in q.shapes])
        return out

    ours, theirs = both(run)
    assert ours[0] == theirs[0] == ("ok", [[1, 2], [b"a", b"b"], [[1.0, 1.5], [2.0, 2.5]]])
    assert ours[1:] == [theirs[1], theirs[2], theirs[3], _renamed(theirs[4])] + theirs[5:]
    assert ours[4] == (
        "OutOfRangeError",
        "PriorityQueue 'priority_queue' is closed and has insufficient elements (requested 3, current size 1)",
    )


def _renamed(outcome):
    """TF names a session-private queue ``_<n>_<op name>``; here it is the op's name."""
    kind, text = outcome
    import re

    return kind, re.sub(r"'_\d+_", "'", text)


@pytest.mark.tf_oracle
def test_random_shuffle_queue_keeps_min_after_dequeue_until_closed_like_tensorflow():
    def run(lib):
        q = lib.RandomShuffleQueue(20, 3, [lib.int32, lib.string], shapes=[[], []], seed=7, name="rsq")
        values = list(range(10))
        fill = q.enqueue_many((values, [str(v) for v in values]))
        out = []
        with session(lib) as sess:
            sess.run(fill)
            first = sess.run(q.dequeue_many(7))
            out.append(sess.run(q.size()))
            out.append(sorted(int(v) for v in first[0]))  # one of the 10, each with its own string
            out.append(all(s == str(v).encode() for v, s in zip(first[0], first[1])))
            sess.run(q.close())
            out.append(_outcome(lib, sess, q.dequeue_many(4)))
            rest = sess.run(q.dequeue_up_to(4))
            out.append(sorted(set(rest[0].tolist()) | set(first[0].tolist())) == values)
            out.append(_outcome(lib, sess, q.dequeue()))
        return out

    ours, theirs = both(run)
    assert ours[0] == theirs[0] == 3
    assert ours[2] and theirs[2] and ours[4] and theirs[4]
    assert ours[3] == _renamed(theirs[3])
    assert ours[5] == _renamed(theirs[5])


@pytest.mark.tf_oracle
def test_random_shuffle_queue_errors_like_tensorflow():
    def run(lib):
        out = []
        for capacity, min_after in ((10, 10), (10, 11)):
            q = lib.RandomShuffleQueue(capacity, min_after, [lib.int32])
            with session(lib) as sess:
                out.append(_outcome(lib, sess, q.size()))
        unshaped = lib.RandomShuffleQueue(10, 0, [lib.int32])
        with session(lib) as sess:
            sess.run(unshaped.enqueue(1))
            out.append(_outcome(lib, sess, unshaped.dequeue_many(1)))
        try:
            lib.RandomShuffleQueue(10, 0, [lib.int32], shapes=[[None]])
        except ValueError as e:
            out.append(("ValueError", str(e).split(":")[0]))
        return out

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[0] == ("InvalidArgumentError", "min_after_dequeue 10 must be < capacity 10")


def test_random_shuffle_queue_mixes_elements_and_follows_its_seed():
    def order(seed, graph_seed=None):
        with tf.Graph().as_default():
            if graph_seed is not None:
                tf.set_random_seed(graph_seed)
            q = tf.RandomShuffleQueue(100, 0, tf.int32, shapes=[[]], seed=seed)
            with tf.Session() as sess:
                sess.run(q.enqueue_many([list(range(50))]))
                return sess.run(q.dequeue_many(50)).tolist()

    seeded = order(3)
    assert sorted(seeded) == list(range(50)) and seeded != list(range(50))
    assert order(3) == seeded  # op seed: the same order every time
    assert order(None, graph_seed=5) == order(None, graph_seed=5)
    assert order(None) != order(None)  # no seed at all: fresh entropy (50! orders: no collision in practice)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        a = tf.RandomShuffleQueue(5, 0, tf.int32, shared_name="shared_q")
        tf.constant(0)  # another op in between: seed2 still depends only on the graph seed and the name
        b = tf.RandomShuffleQueue(5, 0, tf.int32, shared_name="shared_q")
        assert a.queue_ref.op.get_attr("seed2") == b.queue_ref.op.get_attr("seed2")


def test_shared_queues_must_match_and_blocked_dequeues_wake_up():
    with tf.Graph().as_default():
        a = tf.RandomShuffleQueue(10, 2, tf.int32, shapes=[[]], shared_name="q")
        b = tf.RandomShuffleQueue(10, 3, tf.int32, shapes=[[]], shared_name="q")
        p = tf.PriorityQueue(4, [tf.int32], shapes=[[]], shared_name="p")
        with session(tf) as sess:
            sess.run(a.size())
            with pytest.raises(tf.errors.InvalidArgumentError, match="min_after_dequeue 2 but requested .* 3"):
                sess.run(b.size())
            got = []
            take = p.dequeue()
            waiter = threading.Thread(target=lambda: got.append(sess.run(take)))
            waiter.start()
            time.sleep(0.2)
            assert not got  # waiting on the empty queue
            sess.run(p.enqueue((tf.constant(9, tf.int64), 4)))
            waiter.join(10)
            assert [x.tolist() for x in got[0]] == [9, 4]


def test_priority_queue_without_shapes_and_names():
    with tf.Graph().as_default():
        # (TF 2.21 fails to build a PriorityQueue without shapes; TF1 allowed it)
        q = tf.PriorityQueue(5, [tf.string], names=["priority", "word"])
        push = q.enqueue({"priority": tf.constant(3, tf.int64), "word": "late"})
        push2 = q.enqueue({"priority": tf.constant(-1, tf.int64), "word": "early"})
        first = q.dequeue()
        with session(tf) as sess:
            sess.run([push])
            sess.run(push2)
            assert sess.run(first) == {"priority": -1, "word": b"early"}
            with pytest.raises(tf.errors.InvalidArgumentError, match="PriorityQueue's DequeueMany"):
                sess.run(q.dequeue_many(1))
        assert np.all([s.ndims is None for s in q.shapes])
