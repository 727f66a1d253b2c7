"""tf.train.Supervisor: defaults, chief init/restore, services, managed_session's stop semantics, waiting workers.

Most tests run one scenario under this library and under real TensorFlow (``tf.compat.v1`` in graph mode, the
``tf_oracle`` marker) and compare what the scenario observed.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest

import dtf_notebook.compat.v1 as dtf


def _real_tf() -> Any:
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    return tf1


def _both(scenario: Any, tmp_path: Any) -> tuple[Any, Any]:
    """``scenario(m, dir)`` under dtf_notebook and real TF, each in a fresh graph and directory of its own."""
    results = []
    for name, m in (("dtf", dtf), ("tf", _real_tf())):
        directory = tmp_path / name
        directory.mkdir()
        with m.Graph().as_default():
            results.append(scenario(m, str(directory)))
    return results[0], results[1]


def _events(tf1: Any, logdir: str) -> list[tuple[str, Any]]:
    """(kind, detail) of every event in ``logdir``'s event files, read with real TF's reader."""
    found = []
    for name in sorted(os.listdir(logdir)):
        if not name.startswith("events.out.tfevents"):
            continue
        for event in tf1.train.summary_iterator(os.path.join(logdir, name)):
            kind = event.WhichOneof("what")
            if kind == "session_log":
                found.append((kind, (event.session_log.status, event.step)))
            elif kind == "summary":
                found.append((kind, tuple(v.tag for v in event.summary.value)))
            elif kind in ("graph_def", "file_version"):
                found.append((kind, None))
    return found


def _checkpoint_logged(tf1: Any, logdir: str) -> bool:
    """Whether ``logdir``'s events hold a CHECKPOINT session log yet (a record still being written reads as not)."""
    try:
        return any(kind == "session_log" and detail[0] == 3 for kind, detail in _events(tf1, logdir))
    except tf1.errors.DataLossError:
        return False


@pytest.mark.tf_oracle
def test_defaults_come_from_the_graph_as_in_tf(tmp_path):
    def scenario(m: Any, _: str) -> dict[str, Any]:
        m.train.get_or_create_global_step()
        m.Variable(1.0, name="v")
        m.Variable(0.0, name="lv", collections=[m.GraphKeys.LOCAL_VARIABLES])
        m.summary.scalar("loss", m.constant(1.0))
        sv = m.train.Supervisor()
        g = m.get_default_graph()
        return {
            "init_op": (sv.init_op.name, sv.init_op.type),
            "ready_op": sv.ready_op.name,
            "ready_for_local_init_op": sv.ready_for_local_init_op,
            "local_init_op": sorted(op.name for op in sv._local_init_op.control_inputs),
            "saver": type(sv.saver).__name__,
            "summary_op": sv.summary_op.name,
            "global_step": sv.global_step.name,
            "collections": {
                key: [getattr(x, "name", None) for x in g.get_collection(key)]
                for key in ("init_op", "ready_op", "local_init_op", "summary_op")
            },
            "chief only": (sv.is_chief, sv.save_path, sv.summary_writer, sv.save_summaries_secs, sv.save_model_secs),
            "finalized": g.finalized,
        }

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs


@pytest.mark.tf_oracle
def test_an_empty_graph_has_no_saver_summary_or_step_and_a_float_step_is_ignored(tmp_path):
    def scenario(m: Any, _: str) -> Any:
        empty = m.train.Supervisor()
        with m.Graph().as_default():
            with m.device("/cpu:0"):
                m.Variable(0.0, name="global_step")
            worker = m.train.Supervisor(is_chief=False, logdir="/unused")
        return empty.saver, empty.summary_op, empty.global_step, worker.global_step, worker.save_path

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs == (None, None, None, None, None)


def test_a_worker_whose_variables_have_no_device_is_refused():
    dtf.Variable(1.0, name="weights")
    with pytest.raises(ValueError, match="all Variables must have their device set: variable 'weights'"):
        dtf.train.Supervisor(is_chief=False)


def _train_then_save(m: Any, logdir: str, steps: int) -> dict[str, Any]:
    step = m.train.get_or_create_global_step()
    w = m.Variable(10.0, name="w")
    train_op = m.group(m.assign_add(step, 1), m.assign_sub(w, 1.0))
    initialised = []
    sv = m.train.Supervisor(
        # No timer thread: its first save would race with the one below.
        logdir=logdir,
        save_summaries_secs=0,
        save_model_secs=0,
        init_fn=lambda sess: initialised.append(1),
    )
    with sv.managed_session() as sess:
        first = sess.run([step, w])
        for _ in range(steps):
            sess.run(train_op)
        sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    return {
        "first": [float(x) for x in first],
        "initialised": len(initialised),
        # Checkpoint prefixes, not file names: the checkpoint files' formats differ.
        "files": sorted({f.split(".data")[0].split(".index")[0] for f in os.listdir(logdir) if "events" not in f}),
        "latest": os.path.basename(m.train.latest_checkpoint(logdir)),
    }


@pytest.mark.tf_oracle
def test_chief_initialises_then_restores_from_its_logdir(tmp_path):
    def scenario(m: Any, logdir: str) -> list[dict[str, Any]]:
        first = _train_then_save(m, logdir, 3)
        with m.Graph().as_default():
            second = _train_then_save(m, logdir, 2)
        return [first, second]

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs
    assert ours[1]["first"] == [3.0, 7.0] and ours[1]["initialised"] == 0
    assert ours[0]["files"] == ["checkpoint", "graph.pbtxt", "model.ckpt-3", "model.ckpt-3.meta"]


@pytest.mark.tf_oracle
def test_events_of_a_chief_session_match_tf(tmp_path):
    tf1 = _real_tf()

    def scenario(m: Any, logdir: str) -> list[tuple[str, Any]]:
        step = m.train.get_or_create_global_step()
        train_op = m.assign_add(step, 1)
        m.summary.scalar("step_value", m.cast(step, m.float32))
        sv = m.train.Supervisor(logdir=logdir, save_summaries_secs=0, save_model_secs=3600)
        with sv.managed_session() as sess:
            # The checkpoint thread saves once as it starts, then reads the global step for its CHECKPOINT event:
            # wait for that event (in TF as here), so that the steps run below cannot race into it.
            deadline = time.monotonic() + 60
            while not _checkpoint_logged(tf1, logdir):
                assert time.monotonic() < deadline, "no CHECKPOINT event within 60 s"
                sv.summary_writer.flush()
                time.sleep(0.01)
            for _ in range(2):
                sess.run(train_op)
            sv.summary_computed(sess, sess.run(sv.summary_op))
        events = [e for e in _events(tf1, logdir) if e[0] != "file_version"]
        # The checkpoint thread logs its save after the checkpoint exists: that event may come before or after
        # the summary, so the events after the graph are compared as a set.
        return events[:1] + sorted(events[1:], key=repr)

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs
    assert ours[0] == ("graph_def", None) and ("summary", ("step_value",)) in ours


@pytest.mark.tf_oracle
def test_a_chief_writes_graph_pbtxt_and_the_graph_and_meta_graph_events_as_tf(tmp_path):
    """TF reads back both files: graph.pbtxt (text GraphDef with shapes) and the meta graph event with the saver."""
    tf1 = _real_tf()
    from google.protobuf import text_format

    def scenario(m: Any, logdir: str) -> tuple[Any, ...]:
        w = m.Variable([1.0, 2.0], name="w", use_resource=False)
        m.assign_add(w, [1.0, 1.0], name="train")
        sv = m.train.Supervisor(logdir=logdir, save_summaries_secs=3600, save_model_secs=3600)
        with sv.managed_session():
            pass
        with open(os.path.join(logdir, "graph.pbtxt")) as f:
            graph_def = text_format.Parse(f.read(), tf1.GraphDef())
        nodes = {n.name: n for n in graph_def.node}
        events = [
            e
            for name in os.listdir(logdir)
            if name.startswith("events.out")
            for e in tf1.train.summary_iterator(os.path.join(logdir, name))
        ]
        (meta,) = [
            tf1.MetaGraphDef.FromString(e.meta_graph_def) for e in events if e.WhichOneof("what") == "meta_graph_def"
        ]
        (graph_event,) = [tf1.GraphDef.FromString(e.graph_def) for e in events if e.WhichOneof("what") == "graph_def"]
        assert {n.name for n in graph_event.node} == set(nodes)
        return (
            nodes["w"].op,
            [d.size for d in nodes["w"].attr["_output_shapes"].list.shape[0].dim],
            meta.saver_def.restore_op_name,
            {n.name for n in meta.graph_def.node} >= {"w", "train"},
        )

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs == ("VariableV2", [2], "save/restore_all", True)


def test_summary_and_step_counter_threads_write_on_their_timer(tmp_path):
    tf1 = _real_tf()
    logdir = str(tmp_path)
    step = dtf.train.get_or_create_global_step()
    train_op = dtf.assign_add(step, 1)
    dtf.summary.scalar("loss", dtf.constant(0.5))
    sv = dtf.train.Supervisor(logdir=logdir, save_summaries_secs=0.05, save_model_secs=0)
    with sv.managed_session() as sess:
        tags: set[str] = set()
        while not {"loss", "global_step/sec"} <= tags:
            sess.run(train_op)
            sv.summary_writer.flush()
            tags = {tag for kind, detail in _events(tf1, logdir) if kind == "summary" for tag in detail}
    assert dtf.train.latest_checkpoint(logdir) is None  # save_model_secs=0: no checkpoint thread


@pytest.mark.tf_oracle
@pytest.mark.parametrize("error", ["RuntimeError", "OutOfRangeError"])
def test_managed_session_stops_closes_and_reraises_all_but_out_of_range(tmp_path, error):
    def scenario(m: Any, _: str) -> tuple[str | None, bool, str]:
        v = m.Variable(1.0)
        sv = m.train.Supervisor()
        raised = None
        try:
            with sv.managed_session() as sess:
                if error == "RuntimeError":
                    raise RuntimeError("boom")
                raise m.errors.OutOfRangeError(None, None, "input exhausted")
        except Exception as e:  # noqa: BLE001 -- what escapes is what is compared
            raised = type(e).__name__
        try:
            sess.run(v)
            closed = "open"
        except RuntimeError as e:
            closed = str(e)
        return raised, sv.should_stop(), closed

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs
    assert ours[0] == (None if error == "OutOfRangeError" else "RuntimeError")


@pytest.mark.tf_oracle
def test_a_service_thread_error_is_raised_when_the_block_ends(tmp_path):
    def scenario(m: Any, _: str) -> str | None:
        m.Variable(1.0)
        sv = m.train.Supervisor()

        def fail() -> None:
            raise ValueError("service failed")

        try:
            with sv.managed_session():
                sv.loop(None, fail)
                sv.wait_for_stop()
        except ValueError as e:
            return str(e)
        return None

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs == "service failed"


@pytest.mark.tf_oracle
def test_loop_calls_its_target_until_a_stop_and_stop_joins_it(tmp_path):
    def scenario(m: Any, _: str) -> tuple[int, bool]:
        sv = m.train.Supervisor()
        calls: list[int] = []

        def tick(n: int) -> None:
            calls.append(n)
            if len(calls) == 3:
                sv.request_stop()

        thread = sv.loop(0.01, tick, args=(7,))
        sv.wait_for_stop()
        sv.stop()
        return len(calls), thread.is_alive()

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs == (3, False)


@pytest.mark.tf_oracle
def test_a_waiting_worker_gives_up_with_deadline_exceeded(tmp_path):
    def scenario(m: Any, _: str) -> str:
        with m.device("/cpu:0"):
            m.Variable(1.0, name="weights")
        sv = m.train.Supervisor(is_chief=False, recovery_wait_secs=0.02)
        with pytest.raises(m.errors.DeadlineExceededError) as caught:
            sv.prepare_or_wait_for_session("", max_wait_secs=0.1)
        return str(caught.value)

    ours, theirs = _both(scenario, tmp_path)
    assert theirs.startswith("Session was not ready after waiting 0 secs.")
    assert ours == "Session was not ready after waiting 0.1 secs. Variables not initialized: weights"


@pytest.mark.tf_oracle
def test_a_worker_waits_for_the_chief_on_a_shared_server(tmp_path):
    def scenario(m: Any, _: str) -> tuple[float, float]:
        server = m.train.Server.create_local_server()
        seen: dict[str, float] = {}

        def build(is_chief: bool) -> tuple[Any, Any, Any]:
            with m.Graph().as_default() as g:
                with m.device("/job:localhost/replica:0/task:0"):
                    w = m.Variable(5.0, name="w")
                    local = m.Variable(0.0, name="local", collections=[m.GraphKeys.LOCAL_VARIABLES])
                ready_for_local = m.report_uninitialized_variables(m.global_variables())
                sv = m.train.Supervisor(
                    graph=g,
                    is_chief=is_chief,
                    ready_for_local_init_op=ready_for_local,
                    local_init_op=m.variables_initializer([local]),
                    recovery_wait_secs=0.05,
                )
            return sv, w, local

        def worker() -> None:
            sv, w, local = build(False)
            sess = sv.prepare_or_wait_for_session(server.target, max_wait_secs=30)
            seen["worker"] = float(sess.run(w)) + float(sess.run(local))
            sess.close()

        thread = threading.Thread(target=worker)
        thread.start()
        time.sleep(0.3)  # the worker polls a model nobody has initialised yet
        sv, w, _ = build(True)
        sess = sv.prepare_or_wait_for_session(server.target)
        seen["chief"] = float(sess.run(w))
        thread.join(30)
        sv.stop()
        sess.close()
        return seen["chief"], seen["worker"]

    ours, theirs = _both(scenario, tmp_path)
    assert ours == theirs == (5.0, 5.0)


def test_camel_case_aliases_are_the_methods():
    sv = dtf.train.Supervisor
    assert sv.PrepareSession is sv.prepare_or_wait_for_session and sv.Stop is sv.stop
    assert sv.ShouldStop is sv.should_stop and sv.SummaryComputed is sv.summary_computed


def test_summary_computed_needs_a_writer():
    sv = dtf.train.Supervisor()
    with pytest.raises(RuntimeError, match="requires a summary writer"):
        sv.summary_computed(None, b"")
