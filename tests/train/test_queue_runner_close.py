"""A QueueRunner thread whose session is closed under it (after its coordinator was joined) ends quietly."""

from __future__ import annotations

import threading

import dtf_notebook.compat.v1 as tf


def test_a_thread_blocked_when_its_session_closes_ends_without_an_uncaught_error(monkeypatch):
    uncaught: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: uncaught.append(args.exc_value))
    with tf.Graph().as_default():
        queue = tf.FIFOQueue(1, tf.float32, shapes=[])
        source = tf.FIFOQueue(1, tf.float32, shapes=[])  # stays empty, as an accumulator nobody feeds
        # Like SyncReplicasOptimizer's chief thread: it blocks on another resource than its own queue.
        runner = tf.train.QueueRunner(queue, [queue.enqueue(source.dequeue())])
        sess = tf.Session()
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        # The monitored session's way of closing: stop, give the threads a grace period, close the session.
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=0.2, ignore_live_threads=True)
        sess.close()  # frees the session's resources, which cancels the blocked dequeue
        for thread in threads:
            thread.join(10)
    assert not any(t.is_alive() for t in threads)
    assert uncaught == []
