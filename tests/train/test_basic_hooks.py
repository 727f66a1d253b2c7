"""The standard session-run hooks, driven through the hook protocol by a small in-test loop.

``_drive`` does what a monitored session does: ``begin``, create and initialise a session,
``after_create_session``, then per step ``before_run`` → one ``run`` with the hooks' extra fetches
and feeds → ``after_run``, until a hook requests a stop, and ``end``.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.summary.messages import SessionLog
from dtf_notebook.train import basic_session_run_hooks as hooks_lib
from dtf_notebook.train import training_util

HOOKS_LOGGER = "dtf_notebook.train.basic_session_run_hooks"


def _drive(hooks, train_op, max_steps=50, feed_dict=None, init_step=0):
    """Runs ``train_op`` under ``hooks`` until one requests a stop; returns the number of runs."""
    for hook in hooks:
        hook.begin()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if init_step:
            sess.run(tf.assign(tf.train.get_global_step(), init_step))
        for hook in hooks:
            hook.after_create_session(sess, None)
        runs = 0
        while runs < max_steps:
            ctx = tf.train.SessionRunContext(tf.train.SessionRunArgs(train_op, feed_dict), sess)
            requests = {i: hook.before_run(ctx) for i, hook in enumerate(hooks)}
            fetches = {i: r.fetches for i, r in requests.items() if r is not None and r.fetches is not None}
            feeds = dict(feed_dict or {})
            for r in requests.values():
                feeds.update(r.feed_dict or {} if r is not None else {})
            _, results = sess.run([train_op, fetches], feeds)
            runs += 1
            for i, hook in enumerate(hooks):
                hook.after_run(ctx, tf.train.SessionRunValues(results.get(i), None, None))
            if ctx.stop_requested:
                break
        for hook in hooks:
            hook.end(sess)
        return runs


def _train_op():
    """Increments the global step after the hooks' read of it (as an optimizer's minimize does)."""
    tf.train.get_or_create_global_step()
    return training_util._increment_global_step(1)


def _memory_dir():
    return f"memory://hooks/{uuid.uuid4().hex}"


def _events(writer):
    writer.flush()
    return list(tf.train.summary_iterator(writer.event_writer.filename))


# ---- SecondOrStepTimer --------------------------------------------------------------------------


def test_timer_needs_exactly_one_period():
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


def test_timer_by_seconds(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(hooks_lib.time, "time", lambda: now[0])
    timer = tf.train.SecondOrStepTimer(every_secs=10)
    assert timer.should_trigger_for_step(1) and timer.update_last_triggered_step(1) == (None, None)
    now[0] += 5
    assert not timer.should_trigger_for_step(2)
    now[0] += 5
    assert timer.should_trigger_for_step(3) and timer.update_last_triggered_step(3) == (10.0, 2)
    assert not timer.should_trigger_for_step(3) and timer.last_triggered_step() == 3


# ---- StopAtStepHook -----------------------------------------------------------------------------


def test_stop_at_last_step_and_after_num_steps():
    with tf.Graph().as_default():
        train_op = _train_op()
        hook = tf.train.StopAtStepHook(last_step=5)
        assert _drive([hook], train_op) == 5
    with tf.Graph().as_default():
        train_op = _train_op()
        assert _drive([tf.train.StopAtStepHook(num_steps=3)], train_op, init_step=10) == 3


def test_stop_at_step_with_an_optimizer_counts_real_steps():
    with tf.Graph().as_default():
        w = tf.Variable(1.0)
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(w * w, global_step=step)
        hook = tf.train.StopAtStepHook(last_step=4)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            hook.after_create_session(sess, None)
            ctx = tf.train.SessionRunContext(tf.train.SessionRunArgs(train_op), sess)
            while not ctx.stop_requested:
                _, stale = sess.run([train_op, hook.before_run(ctx).fetches])
                hook.after_run(ctx, tf.train.SessionRunValues(stale, None, None))
            assert sess.run(step) == 4


def test_stop_at_step_arguments_and_missing_global_step():
    with pytest.raises(ValueError, match="One of num_steps or last_step"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=1)
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="Global step should be created"):
        tf.train.StopAtStepHook(last_step=1).begin()


# ---- StepCounterHook ----------------------------------------------------------------------------


def test_step_counter_writes_global_step_per_second(caplog):
    with tf.Graph().as_default():
        train_op = _train_op()
        writer = tf.summary.FileWriter(_memory_dir())
        hook = tf.train.StepCounterHook(every_n_steps=2, summary_writer=writer)
        with caplog.at_level(logging.INFO, logger=HOOKS_LOGGER):
            _drive([hook, tf.train.StopAtStepHook(last_step=7)], train_op)
    summaries = [e for e in _events(writer) if e.WhichOneof("what") == "summary"]
    assert [e.step for e in summaries] == [3, 5, 7]
    assert all(e.summary.value[0].tag == "global_step/sec" and e.summary.value[0].simple_value > 0 for e in summaries)
    assert sum("global_step/sec: " in r.getMessage() for r in caplog.records) == 3
    writer.close()


def test_step_counter_uses_the_writer_cache_and_warns_when_the_step_is_stuck(caplog):
    logdir = _memory_dir()
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        hook = tf.train.StepCounterHook(every_n_steps=None, every_n_secs=0.001, output_dir=logdir)
        with caplog.at_level(logging.WARNING, logger=HOOKS_LOGGER):
            _drive([hook], tf.no_op(), max_steps=8)
    assert hook._summary_writer is tf.summary.FileWriterCache.get(logdir)
    assert sum("has not been increased" in r.getMessage() for r in caplog.records) == 5
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)
    tf.summary.FileWriterCache.clear()


# ---- LoggingTensorHook --------------------------------------------------------------------------


def test_logging_tensor_hook_logs_every_n_iterations(caplog):
    with tf.Graph().as_default():
        train_op = _train_op()
        loss = tf.constant(0.5, name="loss")
        step = training_util._get_or_create_global_step_read()  # the value before the run's increment
        hook = tf.train.LoggingTensorHook({"step": step, "loss": loss}, every_n_iter=2)
        with caplog.at_level(logging.INFO, logger=HOOKS_LOGGER):
            _drive([hook], train_op, max_steps=5)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 3 and lines[0] == "loss = 0.5, step = 0"
    assert lines[1].startswith("loss = 0.5, step = 2 (") and lines[1].endswith(" sec)")


def test_logging_tensor_hook_names_formatter_and_at_end(caplog):
    with tf.Graph().as_default():
        train_op = _train_op()
        tf.constant([1.0, 2.0], name="w")
        seen = []
        at_end = tf.train.LoggingTensorHook(["w"], at_end=True, formatter=lambda v: seen.append(v) or "custom")
        timed = tf.train.LoggingTensorHook(["w:0"], every_n_secs=3600)
        with caplog.at_level(logging.INFO, logger=HOOKS_LOGGER):
            _drive([at_end, timed], train_op, max_steps=3)
    assert len(seen) == 1 and list(seen[0]) == ["w"]
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["w:0 = [1. 2.]", "custom"]
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        tf.train.LoggingTensorHook(["w"])
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook(["w"], every_n_iter=0)


# ---- NanTensorHook ------------------------------------------------------------------------------


def test_nan_tensor_hook_fails_or_stops():
    with tf.Graph().as_default():
        train_op = _train_op()
        x = tf.placeholder(tf.float32, [])
        loss = tf.identity(x)
        assert _drive([tf.train.NanTensorHook(loss)], train_op, max_steps=3, feed_dict={x: 1.0}) == 3
        with pytest.raises(tf.train.NanLossDuringTrainingError, match="NaN loss during training"):
            _drive([tf.train.NanTensorHook(loss)], train_op, feed_dict={x: np.nan})
        hook = tf.train.NanTensorHook(loss, fail_on_nan_loss=False)
        assert _drive([hook], train_op, feed_dict={x: np.nan}) == 1


# ---- FinalOpsHook, FeedFnHook --------------------------------------------------------------------


def test_final_ops_hook_evaluates_at_end_with_its_feed():
    with tf.Graph().as_default():
        train_op = _train_op()
        x = tf.placeholder(tf.float32, [])
        hook = tf.train.FinalOpsHook({"step": tf.train.get_global_step(), "twice": x * 2}, {x: 4.0})
        assert hook.final_ops_values is None
        _drive([hook, tf.train.StopAtStepHook(last_step=3)], train_op)
    assert hook.final_ops_values == {"step": 3, "twice": 8.0}


def test_feed_fn_hook_feeds_every_run():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        total = tf.Variable(0.0)
        tf.train.get_or_create_global_step()
        with tf.control_dependencies([tf.assign_add(total, x)]):
            train_op = training_util._increment_global_step(1)
        values = iter([1.0, 2.0, 3.0])
        hook = tf.train.FeedFnHook(lambda: {x: next(values)})
        final = tf.train.FinalOpsHook(total)
        _drive([hook, final], train_op, max_steps=3)
    assert final.final_ops_values == 6.0


# ---- SummarySaverHook ---------------------------------------------------------------------------


def test_summary_saver_hook_saves_every_n_steps():
    logdir = _memory_dir()
    with tf.Graph().as_default():
        train_op = _train_op()
        tf.summary.scalar("step_value", tf.cast(tf.train.get_global_step(), tf.float32))
        hook = tf.train.SummarySaverHook(save_steps=2, output_dir=logdir, summary_op=tf.summary.merge_all())
        _drive([hook, tf.train.StopAtStepHook(last_step=6)], train_op)
    events = _events(tf.summary.FileWriterCache.get(logdir))
    logs = [e for e in events if e.WhichOneof("what") == "session_log"]
    assert [(e.session_log.status, e.step) for e in logs] == [(SessionLog.START, 1)]
    summaries = [e for e in events if e.WhichOneof("what") == "summary"]
    assert [e.step for e in summaries] == [1, 3, 5]
    assert all(e.summary.value[0].tag == "step_value" for e in summaries)
    tf.summary.FileWriterCache.clear()


def test_summary_saver_hook_takes_the_scaffold_summary_op_and_checks_arguments():
    class Scaffold:
        summary_op = None

    with tf.Graph().as_default():
        train_op = _train_op()
        scaffold = Scaffold()
        scaffold.summary_op = tf.summary.scalar("one", 1.0)
        writer = tf.summary.FileWriter(_memory_dir())
        hook = tf.train.SummarySaverHook(save_secs=3600, summary_writer=writer, scaffold=scaffold)
        _drive([hook, tf.train.StopAtStepHook(last_step=3)], train_op)
    summaries = [e for e in _events(writer) if e.WhichOneof("what") == "summary"]
    assert [(e.step, e.summary.value[0].tag) for e in summaries] == [(1, "one")]
    writer.close()
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.SummarySaverHook(summary_op="s:0")


# ---- GlobalStepWaiterHook -----------------------------------------------------------------------


def test_global_step_waiter_waits_for_the_step():
    with tf.Graph().as_default():
        train_op = _train_op()
        hook = tf.train.GlobalStepWaiterHook(wait_until_step=2)
        hook.begin()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            ctx = tf.train.SessionRunContext(tf.train.SessionRunArgs(train_op), sess)

            def other_worker():
                for _ in range(2):
                    time.sleep(0.1)
                    sess.run(train_op)

            thread = threading.Thread(target=other_worker)
            thread.start()
            assert hook.before_run(ctx) is None
            thread.join()
            assert sess.run(tf.train.get_global_step()) >= 2
            assert hook.before_run(ctx) is None  # started: never waits again
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        hook = tf.train.GlobalStepWaiterHook(wait_until_step=0)
        hook.begin()
        assert hook.before_run(None) is None
