"""MonitoredSession, MonitoredTrainingSession, Scaffold, CheckpointSaverHook and Coordinator, in one process."""

from __future__ import annotations

import os
import threading
import time

import pytest

import dtf_notebook.compat.v1 as tf


def _counter_model():
    step = tf.train.get_or_create_global_step()
    return step, tf.assign_add(step, 1)


class RecordingHook(tf.train.SessionRunHook):
    """Records the calls it gets; fetches the global step and stops after ``stop_after`` runs."""

    def __init__(self, stop_after=None):
        self.calls = []
        self.results = []
        self.stop_after = stop_after

    def begin(self):
        self.calls.append("begin")
        self.step = tf.train.get_global_step()

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        assert isinstance(coord, tf.train.Coordinator)

    def before_run(self, run_context):
        self.calls.append("before_run")
        return tf.train.SessionRunArgs(self.step)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(int(run_values.results))
        if self.stop_after is not None and len(self.results) >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


# ---- the training loop ------------------------------------------------------------------------------
def test_stop_at_step_hook_drives_the_loop():
    step, train_op = _counter_model()
    seen = []
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=4)]) as sess:
        while not sess.should_stop():
            seen.append(int(sess.run(train_op)))
    assert seen == [1, 2, 3, 4]
    assert sess.should_stop()


def test_hooks_are_called_in_order_and_see_their_fetches():
    _, train_op = _counter_model()
    hook = RecordingHook(stop_after=2)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert hook.calls == ["begin", "after_create_session"]
        while not sess.should_stop():
            sess.run(train_op)
    assert hook.calls[2:] == ["before_run", "after_run", "before_run", "after_run", "end"]
    assert len(hook.results) == 2
    with pytest.raises(RuntimeError, match="already closed"):
        sess.close()


def test_hook_feeds_are_merged_and_conflicts_named():
    x = tf.placeholder(tf.float32, [], name="x")
    y = tf.placeholder(tf.float32, [], name="y")
    total = x + y

    class FeedY(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(fetches=None, feed_dict={y: 10.0})

    with tf.train.MonitoredSession(hooks=[FeedY()]) as sess:
        assert sess.run(total, feed_dict={x: 1.0}) == 11.0
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(total, feed_dict={x: 1.0, y: 2.0})


def test_hook_run_options_merge_into_the_callers():
    seen = []

    class WantsTimeout(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, options=tf.RunOptions(timeout_in_ms=5000))

        def after_run(self, run_context, run_values):
            seen.append(run_values.options.timeout_in_ms)

    one = tf.constant(1.0)
    options = tf.RunOptions(timeout_in_ms=100)
    with tf.train.MonitoredSession(hooks=[WantsTimeout()]) as sess:
        sess.run(one, options=options)
    assert seen == [5000] and options.timeout_in_ms == 100


def test_out_of_range_ends_the_loop_cleanly_and_other_errors_skip_end():
    _counter_model()
    hook = RecordingHook()
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        raise tf.errors.OutOfRangeError(None, None, "End of sequence")
    assert hook.calls[-1] == "end"

    hook = RecordingHook()
    with pytest.raises(ValueError, match="boom"):
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            raise ValueError("boom")
    assert "end" not in hook.calls
    assert sess._is_closed()


def test_run_after_stop_requested_is_an_error():
    _, train_op = _counter_model()
    with tf.train.MonitoredSession(hooks=[RecordingHook(stop_after=1)]) as sess:
        sess.run(train_op)
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="should_stop"):
            sess.run(train_op)


def test_graph_is_finalized_while_open_and_unfinalized_after(fresh_graph):
    _counter_model()
    with tf.train.MonitoredSession() as sess:
        assert fresh_graph.finalized
        assert sess.graph is fresh_graph
        with pytest.raises(RuntimeError, match="finalized"):
            tf.constant(1.0)
    assert not fresh_graph.finalized
    assert sess.graph is None


def test_run_step_fn_runs_with_and_without_hooks_and_can_stop():
    step, train_op = _counter_model()
    hook = RecordingHook()

    def step_fn(step_context):
        value = step_context.session.run(step)  # no hooks
        if value >= 2:
            step_context.request_stop()
        return step_context.run_with_hooks(train_op)

    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        values = []
        while not sess.should_stop():
            values.append(int(sess.run_step_fn(step_fn)))
    assert values == [1, 2]
    assert hook.calls.count("before_run") == 2 and hook.calls[-1] == "end"

    with tf.train.MonitoredSession() as sess:
        with pytest.raises(ValueError, match="step_context"):
            sess.run_step_fn(lambda ctx: None)


def test_coordinator_error_from_a_thread_is_raised_from_run():
    class FailingThreadHook(tf.train.SessionRunHook):
        def after_create_session(self, session, coord):
            def work():
                with coord.stop_on_exception():
                    raise tf.errors.InvalidArgumentError(None, None, "reader thread failed")

            thread = threading.Thread(target=work)
            coord.register_thread(thread)
            thread.start()
            thread.join()

    noop = tf.no_op()
    with pytest.raises(tf.errors.InvalidArgumentError, match="reader thread failed"):
        with tf.train.MonitoredSession(hooks=[FailingThreadHook()]) as sess:
            while not sess.should_stop():
                sess.run(noop)


def test_queue_runners_feed_the_loop_and_end_of_input_stops_it_cleanly():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    counter = tf.Variable(0.0)
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1.0))]))
    x = q.dequeue()
    with tf.train.MonitoredSession() as sess:
        assert [float(sess.run(x)) for _ in range(5)] == [1.0, 2.0, 3.0, 4.0, 5.0]

    finite = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    # Two runs: ops of one run without a dependency between them run in no fixed order (the close could win).
    fill = [finite.enqueue_many([[1.0, 2.0]]), finite.close()]
    item = finite.dequeue()
    ended = []

    class EndHook(tf.train.SessionRunHook):
        def end(self, session):
            ended.append(session)

    seen = []
    with tf.train.MonitoredSession(hooks=[EndHook()]) as sess:
        for op in fill:
            sess._tf_sess().run(op)
        while not sess.should_stop():
            seen.append(float(sess.run(item)))
    assert seen == [1.0, 2.0] and len(ended) == 1


# ---- MonitoredTrainingSession defaults --------------------------------------------------------------
def _hook_types(sess):
    return [type(h).__name__ for h in sess._hooks]


def test_chief_default_hooks_follow_tf1s_rules(tmp_path):
    _counter_model()
    mine = RecordingHook()
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=[mine]) as sess:
        assert _hook_types(sess) == ["StepCounterHook", "SummarySaverHook", "CheckpointSaverHook", "RecordingHook"]
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_checkpoint_secs=None, save_summaries_steps=None, log_step_count_steps=0
    ) as sess:
        assert _hook_types(sess) == []
    with tf.train.MonitoredTrainingSession(summary_dir=str(tmp_path), save_checkpoint_steps=5) as sess:
        assert _hook_types(sess) == ["StepCounterHook", "SummarySaverHook"]


def test_non_chief_gets_only_its_hooks(tmp_path):
    server = tf.train.Server.create_local_server()
    try:
        step, _ = _counter_model()
        with tf.Session(server.target) as init_sess:
            init_sess.run(step.initializer)
        with tf.train.MonitoredTrainingSession(
            server.target,
            is_chief=False,
            checkpoint_dir=str(tmp_path),
            hooks=[RecordingHook()],
            chief_only_hooks=[RecordingHook()],
        ) as sess:
            assert _hook_types(sess) == ["RecordingHook"]
            assert sess.run(step) == 0
    finally:
        server.stop()


def test_non_chief_gives_up_naming_the_uninitialized_variables(fresh_graph):
    _counter_model()
    tf.Variable(0.0, name="weights")
    start = time.monotonic()
    with pytest.raises(tf.errors.DeadlineExceededError, match="Variables not initialized: global_step, weights"):
        tf.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=0.5)
    assert time.monotonic() - start < 5
    assert not fresh_graph.finalized  # the failed session leaves the graph editable


# ---- checkpoints, restore and recovery --------------------------------------------------------------
def _checkpoint_steps(directory):
    state = tf.train.get_checkpoint_state(directory)
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def test_checkpoint_saver_hook_saves_at_start_every_n_steps_and_at_end(tmp_path):
    _, train_op = _counter_model()
    events = []

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            events.append("begin")

        def before_save(self, session, global_step_value):
            events.append(("before", global_step_value))

        def after_save(self, session, global_step_value):
            events.append(("after", global_step_value))

        def end(self, session, global_step_value):
            events.append(("end", global_step_value))

    saver_hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=3, listeners=[Listener()])
    hooks = [saver_hook, tf.train.StopAtStepHook(last_step=7)]
    with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert _checkpoint_steps(str(tmp_path)) == [0, 3, 6, 7]
    saved = [s for kind, s in events[1:-1] if kind == "after"]
    assert events[0] == "begin" and saved == [0, 3, 6, 7] and events[-1] == ("end", 7)


def test_listener_returning_true_stops_training(tmp_path):
    _, train_op = _counter_model()

    class StopAfterSecondSave(tf.train.CheckpointSaverListener):
        saves = 0

        def after_save(self, session, global_step_value):
            self.saves += 1
            return self.saves == 2

    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[StopAfterSecondSave()])
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            last = sess.run(train_op)
    assert last == 2


def test_checkpoint_saver_hook_arguments_are_checked(tmp_path):
    with pytest.raises(ValueError):
        tf.train.CheckpointSaverHook(str(tmp_path))
    with pytest.raises(ValueError, match="both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=object(), scaffold=tf.train.Scaffold())


def test_chief_restores_the_latest_checkpoint_and_continues_the_global_step(tmp_path):
    step, train_op = _counter_model()
    w = tf.Variable(0.0, name="w")
    train = [train_op, tf.assign_add(w, 0.5)]
    ckpt = str(tmp_path)
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=ckpt, save_checkpoint_steps=2, hooks=[tf.train.StopAtStepHook(last_step=5)]
    ) as sess:
        while not sess.should_stop():
            sess.run(train)
    assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-5")

    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=ckpt, save_checkpoint_steps=2, hooks=[tf.train.StopAtStepHook(last_step=8)]
    ) as sess:
        assert sess.run([step, w]) == [5, 2.5]
        values = []
        while not sess.should_stop():
            values.append([float(x) for x in sess.run(train)])
    assert values == [[6, 3.0], [7, 3.5], [8, 4.0]]
    assert _checkpoint_steps(ckpt)[-3:] == [5, 7, 8]


class AbortOnce(tf.train.SessionCreator):
    """Wraps a creator; the sessions it makes raise AbortedError on the ``fail_at``-th run, once in all."""

    def __init__(self, inner, fail_at):
        self.inner = inner
        self.fail_at = fail_at
        self.runs = 0
        self.created = 0
        self.max_wait_secs = 30
        self.recovery_wait_secs = 0.01

    def create_session(self):
        self.created += 1
        creator = self

        class Flaky:
            def __init__(self, sess):
                self.sess = sess
                self.graph = sess.graph

            def run(self, *args, **kwargs):
                creator.runs += 1
                if creator.runs == creator.fail_at:
                    raise tf.errors.AbortedError(None, None, "The task at ps:0 restarted; the request was lost with it")
                return self.sess.run(*args, **kwargs)

            def close(self):
                self.sess.close()

        return Flaky(self.inner.create_session())


def test_recovery_after_aborted_error_restores_the_last_checkpoint(tmp_path):
    step, train_op = _counter_model()
    ckpt = str(tmp_path)
    scaffold = tf.train.Scaffold()
    creator = AbortOnce(tf.train.ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=ckpt), fail_at=0)
    hook = RecordingHook()
    saver_hook = tf.train.CheckpointSaverHook(ckpt, save_steps=3, scaffold=scaffold)
    with tf.train.MonitoredSession(creator, hooks=[saver_hook, hook]) as sess:
        values = [int(sess.run(train_op)) for _ in range(4)]
        creator.fail_at = creator.runs + 1  # the next run fails: the session's variables are lost with it
        values += [int(sess.run(train_op)) for _ in range(3)]
    # A fresh local session has fresh variables: the value comes back from the checkpoint of step 3.
    assert values == [1, 2, 3, 4, 4, 5, 6]
    assert creator.created == 2
    assert hook.calls.count("begin") == 1 and hook.calls.count("after_create_session") == 2
    assert hook.calls[-1] == "end"


def test_recovery_gives_up_after_max_wait_secs():
    class AlwaysUnavailable(tf.train.SessionCreator):
        max_wait_secs = 0.3
        recovery_wait_secs = 0.05
        attempts = 0

        def create_session(self):
            self.attempts += 1
            raise tf.errors.UnavailableError(None, None, "Task /job:ps/task:0 did not answer")

    creator = AlwaysUnavailable()
    start = time.monotonic()
    with pytest.raises(tf.errors.UnavailableError, match="ps/task:0"):
        tf.train.MonitoredSession(creator)
    assert time.monotonic() - start < 5 and creator.attempts > 1


class AbortOnceHook(tf.train.SessionRunHook):
    """Its first ``before_run`` raises AbortedError, as a run on a restarted task does."""

    raised = False

    def before_run(self, run_context):
        if not self.raised:
            self.raised = True
            raise tf.errors.AbortedError(None, None, "The task at ps:0 restarted; the request was lost with it")


def test_monitored_session_recovers_where_singular_monitored_session_raises():
    step, _ = _counter_model()
    with tf.train.MonitoredSession(hooks=[AbortOnceHook()]) as sess:
        assert sess.run(step) == 0
    with tf.train.SingularMonitoredSession(hooks=[AbortOnceHook()]) as sess:
        with pytest.raises(tf.errors.AbortedError, match="restarted"):
            sess.run(step)
        assert sess.raw_session().run(step) == 0


# ---- Scaffold ---------------------------------------------------------------------------------------
def test_scaffold_fills_defaults_from_and_into_collections(fresh_graph):
    tf.Variable(1.0, name="g")
    tf.Variable(2.0, name="l", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    scaffold = tf.train.Scaffold().finalize()
    assert fresh_graph.finalized
    assert tf.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
    assert tf.get_collection(tf.GraphKeys.READY_OP) == [scaffold.ready_op]
    assert tf.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
    assert scaffold.summary_op is None
    fresh_graph._unsafe_unfinalize()
    again = tf.train.Scaffold().finalize()
    assert again.init_op is scaffold.init_op and again.saver is scaffold.saver
    with tf.Session() as sess:
        assert sorted(sess.run(scaffold.ready_op)) == [b"g", b"l"]
        assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"g"]
        sess.run(scaffold.init_op)
        sess.run(scaffold.local_init_op)
        assert sess.run(scaffold.ready_op).size == 0


def test_scaffold_copy_and_init_fn_and_duplicate_collection_items():
    v = tf.Variable(1.0, name="v")
    called = []
    base = tf.train.Scaffold(init_fn=lambda scaffold, sess: called.append(scaffold), init_feed_dict={})
    copy = tf.train.Scaffold(copy_from_scaffold=base, init_op=tf.no_op(name="custom_init"))
    assert copy.init_op.name == "custom_init" and copy.init_feed_dict == {}
    copy.init_fn(None)
    assert called == [copy]
    with pytest.raises(TypeError, match="Scaffold instance"):
        tf.train.Scaffold(copy_from_scaffold=object())
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.report_uninitialized_variables([v]))
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.report_uninitialized_variables([v]))
    with pytest.raises(RuntimeError, match='"ready_op".*tf.Scaffold\\(ready_op=item to use\\)'):
        tf.train.Scaffold().finalize()


# ---- Coordinator ------------------------------------------------------------------------------------
def test_coordinator_clean_stop_types_and_stragglers():
    coord = tf.train.Coordinator()
    coord.request_stop(tf.errors.OutOfRangeError(None, None, "done"))
    coord.join()  # a clean stop: nothing raised

    coord = tf.train.Coordinator()
    release = threading.Event()
    slow = threading.Thread(target=release.wait, name="slow_reader")
    slow.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="slow_reader"):
        coord.join([slow], stop_grace_period_secs=0.05)
    release.set()
    slow.join()
    with pytest.raises(ValueError, match="after join"):
        try:
            raise ValueError("reported after join")
        except ValueError as e:
            coord.request_stop(e)


def test_looper_thread_reports_errors_to_the_coordinator():
    coord = tf.train.Coordinator()

    def fail():
        raise KeyError("missing shard")

    tf.train.LooperThread.loop(coord, None, target=fail)
    with pytest.raises(KeyError, match="missing shard"):
        coord.join(stop_grace_period_secs=5)
    with pytest.raises(ValueError, match="Coordinator"):
        tf.train.LooperThread(object(), 1.0)


def test_checkpoint_files_land_in_checkpoint_dir(tmp_path):
    _, train_op = _counter_model()
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), save_checkpoint_steps=1, hooks=[tf.train.StopAtStepHook(last_step=1)]
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    names = os.listdir(tmp_path)
    assert "checkpoint" in names and any(n.startswith("model.ckpt-1") for n in names)


# ---- TF1 as the oracle ------------------------------------------------------------------------------
def _train_twice(tf_module, checkpoint_dir):
    """A TF1 script: train to step 7 saving every 3 steps, then resume to step 11; what it sees and saves."""
    seen = []
    for last_step in (7, 11):
        with tf_module.Graph().as_default():
            step = tf_module.train.get_or_create_global_step()
            w = tf_module.Variable(0.0, name="w", use_resource=False)
            train = [tf_module.assign_add(step, 1), tf_module.assign_add(w, 0.25)]
            with tf_module.train.MonitoredTrainingSession(
                checkpoint_dir=checkpoint_dir,
                save_checkpoint_steps=3,
                save_summaries_steps=None,
                log_step_count_steps=None,
                hooks=[tf_module.train.StopAtStepHook(last_step=last_step)],
            ) as sess:
                while not sess.should_stop():
                    seen.append([float(x) for x in sess.run(train)])
        state = tf_module.train.get_checkpoint_state(checkpoint_dir)
        seen.append([int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths])
    return seen


@pytest.mark.tf_oracle
def test_training_and_resuming_match_tensorflow(tmp_path):
    import tensorflow.compat.v1 as real_tf

    real_tf.disable_eager_execution()
    expected = _train_twice(real_tf, str(tmp_path / "tf"))
    assert _train_twice(tf, str(tmp_path / "dtf")) == expected
