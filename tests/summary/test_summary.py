"""Summary ops, the event messages (protobuf classes), TFRecord framing, FileWriter and summary_iterator.

The ``tf_oracle`` tests check the bytes against real TensorFlow: our summaries parse with TF's
``Summary``, equal what TF's ops produce for the same graph, our event files read back with TF's
``summary_iterator``, and ours reads TF's.
"""

from __future__ import annotations

import io
import os
import re
import socket
import time
import warnings

import numpy as np
import pytest
from google.protobuf.message import DecodeError

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.framework.graph_proto import GraphDef, MetaGraphDef
from dtf_notebook.framework.tensor_proto import make_ndarray, make_tensor_proto
from dtf_notebook.summary.histogram import DEFAULT_BUCKETS, histogram_proto
from dtf_notebook.summary.messages import Event, HistogramProto, SessionLog, Summary, TensorProto
from dtf_notebook.summary.record_writer import encode_record, read_records

# ---- event messages -----------------------------------------------------------------------------


def test_message_defaults_oneof_and_presence():
    value = Summary.Value(tag="a")
    assert value.simple_value == 0.0 and value.WhichOneof("value") is None
    assert not value.HasField("histo")
    value.histo.num = 3  # setting a field of a default sub-message makes it present
    assert value.WhichOneof("value") == "histo" and value.HasField("histo")
    value.simple_value = 0.0
    assert value.WhichOneof("value") == "simple_value" and value.histo.num == 0.0
    assert Summary.Value.FromString(value.SerializeToString()) == value


def test_nested_default_marks_every_parent_present():
    event = Event(step=4)
    event.summary.value.add(tag="x", simple_value=1.5)
    assert event.WhichOneof("what") == "summary"
    decoded = Event.FromString(event.SerializeToString())
    assert decoded.step == 4 and decoded.summary.value[0].simple_value == 1.5


def test_unknown_fields_survive_a_round_trip():
    known = Summary.Value(tag="t").SerializeToString()
    extra = bytes([0xD0, 0x02, 7])  # field 42 as a varint key (42 << 3 = 336), then the varint 7
    value = Summary.Value.FromString(known + extra)
    assert value.tag == "t" and value.SerializeToString().endswith(extra)


def test_bad_values_and_bad_bytes_are_reported():
    with pytest.raises(TypeError):
        Summary.Value(simple_value="high")
    with pytest.raises(ValueError, match='no "colour" field'):
        Summary.Value(colour=1)
    with pytest.raises(DecodeError, match="Error parsing message"):
        Summary.FromString(b"\x0a\x05ab")  # claims 5 bytes, has 2


def test_tensor_proto_round_trip():
    for array in (np.arange(6, dtype=np.float32).reshape(2, 3), np.array(True), np.array([b"a", b""], dtype=object)):
        back = make_ndarray(TensorProto.FromString(make_tensor_proto(array).SerializeToString()))
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)


# ---- TFRecord framing ---------------------------------------------------------------------------


def test_records_round_trip_and_corruption_is_data_loss():
    data = encode_record(b"first") + encode_record(b"") + encode_record(b"x" * 1000)
    assert list(read_records(io.BytesIO(data))) == [b"first", b"", b"x" * 1000]
    corrupted = bytearray(data)
    corrupted[14] ^= 0xFF  # inside the first record's data
    with pytest.raises(errors.DataLossError, match="Corrupted record data at offset 0"):
        list(read_records(io.BytesIO(bytes(corrupted))))
    with pytest.raises(errors.DataLossError, match="Truncated record"):
        list(read_records(io.BytesIO(data[:-3])))


# ---- histograms ---------------------------------------------------------------------------------


def test_default_buckets_shape():
    assert DEFAULT_BUCKETS[0] == -np.finfo(np.float64).max and DEFAULT_BUCKETS[-1] == np.finfo(np.float64).max
    middle = len(DEFAULT_BUCKETS) // 2
    assert DEFAULT_BUCKETS[middle] == 0.0 and DEFAULT_BUCKETS[middle + 1] == 1e-12
    np.testing.assert_array_equal(DEFAULT_BUCKETS[:middle], -DEFAULT_BUCKETS[middle + 1 :][::-1])


def test_histogram_counts_every_value_once():
    values = np.random.default_rng(0).normal(0, 100, 1000)
    h = histogram_proto(values)
    assert h.num == 1000 and sum(h.bucket) == 1000
    assert h.min == values.min() and h.max == values.max()
    limits = np.array(h.bucket_limit)
    assert np.all(np.diff(limits) > 0)
    for limit, count in zip(h.bucket_limit, h.bucket):
        if count:  # a non-empty bucket ends at the first limit above its values
            index = np.searchsorted(DEFAULT_BUCKETS, limit)
            lower = DEFAULT_BUCKETS[index - 1]
            assert count == np.sum((values >= lower) & (values < limit))


# ---- summary ops --------------------------------------------------------------------------------


def _run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def test_scalar_tags_follow_name_scopes_and_families():
    with tf.Graph().as_default():
        with tf.name_scope("train"):
            a = tf.summary.scalar("loss", tf.constant(1.0))
            b = tf.summary.scalar("loss", 2)
        c = tf.summary.scalar("acc", tf.constant(0.5, tf.float64), family="eval")
        d = tf.summary.scalar("bad name!", 1.0)
        assert [s.op.name for s in (a, b, c, d)] == ["train/loss", "train/loss_1", "eval/acc", "bad_name_"]
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [a, b, c, d]
        tags = [v.tag for v in Summary.FromString(_run(tf.summary.merge_all())).value]
        assert tags == ["train/loss", "train/loss_1", "eval/eval/acc", "bad_name_"]


def test_scalar_values_and_type_checks():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int64, [])
        s = tf.summary.scalar("x", x, collections=["mine"])
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [] and tf.get_collection("mine") == [s]
        assert Summary.FromString(_run(s, {x: 7})).value[0].simple_value == 7.0
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.summary.scalar("flag", tf.constant(True))
        vector = tf.summary.scalar("v", tf.constant([1.0, 2.0]))
        with pytest.raises(errors.InvalidArgumentError, match=r"tags and values not the same shape: \[\] != \[2\]"):
            _run(vector)


def test_histogram_rejects_nan_naming_the_node():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        h = tf.summary.histogram("weights", x)
        histo = Summary.FromString(_run(h, {x: [1.0, -1.0, 3.0]})).value[0].histo
        assert (histo.num, histo.min, histo.max, histo.sum) == (3.0, -1.0, 3.0, 3.0)
        with pytest.raises(errors.InvalidArgumentError, match="Nan in summary histogram for: weights"):
            _run(h, {x: [np.nan]})
        with pytest.raises(errors.InvalidArgumentError, match="Infinity in summary histogram for: weights"):
            _run(h, {x: [np.inf]})


def test_merge_rejects_duplicate_tags_and_merge_all_can_be_empty():
    with tf.Graph().as_default():
        assert tf.summary.merge_all() is None
        a = tf.summary.scalar("a", 1.0)
        with tf.name_scope("s"):
            b = tf.summary.histogram("b", [1.0, 2.0])
        merged = tf.summary.merge([a, b], collections=["merged"])
        assert merged.op.name == "Merge/MergeSummary" and tf.get_collection("merged") == [merged]
        assert [v.tag for v in Summary.FromString(_run(merged)).value] == ["a", "s/b"]
        assert tf.summary.merge_all(scope="s") is not None
        twice = tf.summary.merge([a, a])
        with pytest.raises(errors.InvalidArgumentError, match="Duplicate tag a found in summary inputs"):
            _run(twice)
        with pytest.raises(ValueError, match="shorter than minimum length 1"):
            tf.summary.merge([])


def test_text_and_tensor_summaries():
    with tf.Graph().as_default():
        t = tf.summary.text("notes", tf.constant(["line 1", "line 2"]))
        value = Summary.FromString(_run(t)).value[0]
        assert value.metadata.plugin_data.plugin_name == "text"
        np.testing.assert_array_equal(make_ndarray(value.tensor), np.array([b"line 1", b"line 2"], dtype=object))
        with pytest.raises(ValueError, match="to have dtype string"):
            tf.summary.text("n", tf.constant(1.0))
        m = tf.summary.tensor_summary("m", tf.constant([[1.5, 2.5]]), summary_description="a matrix")
        value = Summary.FromString(_run(m)).value[0]
        assert value.metadata.summary_description == "a matrix"
        np.testing.assert_array_equal(make_ndarray(value.tensor), np.array([[1.5, 2.5]], dtype=np.float32))


# ---- FileWriter and summary_iterator ------------------------------------------------------------


def _events(path):
    return list(tf.train.summary_iterator(path))


def _event_files(logdir):
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir) if "tfevents" in f)


def test_file_writer_writes_a_tensorboard_event_file(tmp_path):
    logdir = str(tmp_path / "logs")
    with tf.Graph().as_default() as graph:
        loss = tf.summary.scalar("loss", 0.5)
        before = time.time()
        with tf.summary.FileWriter(logdir, graph) as writer:
            for step in range(3):
                writer.add_summary(_run(loss), global_step=step)
            writer.add_session_log(SessionLog(status=SessionLog.STOP), global_step=3)
    assert writer.get_logdir() == logdir
    (path,) = _event_files(logdir)
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\." + re.escape(socket.gethostname()), os.path.basename(path))
    events = _events(path)
    assert events[0].file_version == "brain.Event:2" and events[0].wall_time >= int(before)
    kinds = [e.WhichOneof("what") for e in events]
    assert kinds == ["file_version", "graph_def", "meta_graph_def", "summary", "summary", "summary", "session_log"]
    nodes = {n.name: n for n in GraphDef.FromString(events[1].graph_def).node}
    assert nodes["loss"].op == "ScalarSummary" and list(nodes["loss"].input) == ["loss/tags", "loss/values"]
    assert MetaGraphDef.FromString(events[2].meta_graph_def).graph_def.node[0].name == "loss/values"
    assert [(e.step, e.summary.value[0].simple_value) for e in events[3:6]] == [(0, 0.5), (1, 0.5), (2, 0.5)]
    assert all(e.wall_time >= before for e in events[1:])
    assert events[6].session_log.status == SessionLog.STOP and events[6].step == 3


def test_background_flushes_after_max_queue_events_and_after_flush_secs(tmp_path):
    logdir = str(tmp_path)
    summary = Summary(value=[Summary.Value(tag="x", simple_value=1.0)])
    writer = tf.summary.FileWriter(logdir, max_queue=3, flush_secs=1000)
    path = writer.event_writer.filename
    for step in range(3):
        writer.add_summary(summary, step)
    _wait_for(lambda: len(_events(path)) == 4)
    timed = tf.summary.FileWriter(str(tmp_path / "timed"), max_queue=100, flush_secs=0.2)
    timed.add_summary(summary, 1)
    _wait_for(lambda: len(_events(timed.event_writer.filename)) == 2)
    writer.close()
    timed.close()


def _wait_for(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the event file was not flushed in time"
        time.sleep(0.05)


def test_closed_writer_warns_ignores_events_and_reopens_to_a_new_file(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), filename_suffix=".v1")
    writer.add_summary(Summary(value=[Summary.Value(tag="a", simple_value=1.0)]), 1)
    writer.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        writer.add_summary(Summary(value=[Summary.Value(tag="b", simple_value=2.0)]), 2)
    assert "closed FileWriter" in str(caught[0].message)
    writer.reopen()
    writer.add_summary(Summary(value=[Summary.Value(tag="c", simple_value=3.0)]), 3)
    writer.close()
    first, second = _event_files(str(tmp_path))
    assert first.endswith(".v1") and second.endswith(".v1")
    tags = [[v.tag for e in _events(p) for v in e.summary.value] for p in (first, second)]
    assert sorted(tags) == [["a"], ["c"]]


def test_metadata_is_kept_only_for_the_first_value_of_a_tag():
    with tf.Graph().as_default():
        text = _run(tf.summary.text("t", tf.constant("hi")))
    with tf.summary.FileWriter("memory://metadata_once") as writer:
        writer.add_summary(text, 1)
        writer.add_summary(text, 2)
    values = [e.summary.value[0] for e in _events(writer.event_writer.filename)[1:]]
    assert [v.HasField("metadata") for v in values] == [True, False]


def test_file_writer_cache_shares_one_writer_per_logdir():
    tf.summary.FileWriterCache.clear()
    a = tf.summary.FileWriterCache.get("memory://cache/a")
    assert tf.summary.FileWriterCache.get("memory://cache/a") is a
    assert tf.summary.FileWriterCache.get("memory://cache/b") is not a
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get("memory://cache/a") is not a
    tf.summary.FileWriterCache.clear()


def test_run_metadata_tags_are_unique_and_graph_types_checked():
    with tf.Graph().as_default():
        x = tf.constant(1.0) + 2.0
        meta = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(x, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
    with tf.summary.FileWriter("memory://run_meta") as writer:
        writer.add_run_metadata(meta, "step_1", global_step=1)
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(meta, "step_1")
        with pytest.raises(TypeError, match="must be an instance of `Graph`"):
            writer.add_graph("not a graph")
    (event,) = [e for e in _events(writer.event_writer.filename) if e.WhichOneof("what") == "tagged_run_metadata"]
    assert event.tagged_run_metadata.tag == "step_1" and event.step == 1


def test_summary_iterator_names_a_missing_file(tmp_path):
    with pytest.raises(errors.NotFoundError, match="nothing_here"):
        _events(str(tmp_path / "nothing_here"))


# ---- TensorFlow as the oracle -------------------------------------------------------------------


def _summaries_graph(lib, values):
    """The same summary graph built with ``lib`` (TF's compat.v1 or ours); returns its merged summary op."""
    with lib.name_scope("train"):
        lib.summary.scalar("loss", lib.constant(0.25))
        lib.summary.scalar("loss", lib.constant(3, lib.int64))
        lib.summary.histogram("weights", lib.constant(values))
    lib.summary.scalar("acc", lib.constant(0.75), family="eval")
    lib.summary.text("notes", lib.constant(["a", "bc"]))
    return lib.summary.merge_all()


_VALUES = np.concatenate(
    [np.random.default_rng(3).normal(0, 10, 200), [0.0, 0.0, -1e-13, 1e-12, 5e20, -7.5, 1.1e-12]]
).astype(np.float32)


@pytest.mark.tf_oracle
def test_summary_bytes_equal_tensorflow():
    import tensorflow.compat.v1 as real

    with real.Graph().as_default():
        merged = _summaries_graph(real, _VALUES)
        with real.Session() as sess:
            expected = sess.run(merged)
    with tf.Graph().as_default():
        ours = _run(_summaries_graph(tf, _VALUES))
    assert real.Summary.FromString(ours) == real.Summary.FromString(expected)
    assert ours == expected


@pytest.mark.tf_oracle
def test_histogram_buckets_equal_tensorflow():
    import tensorflow.compat.v1 as real

    data = [np.arange(-50, 50, dtype=np.int32), np.random.default_rng(1).lognormal(0, 8, 500), np.zeros(4)]
    for values in data:
        with real.Graph().as_default():
            summary = real.summary.histogram("h", real.constant(values))
            with real.Session() as sess:
                expected = real.Summary.FromString(sess.run(summary)).value[0].histo
        ours = histogram_proto(values)
        assert list(ours.bucket_limit) == list(expected.bucket_limit)
        assert list(ours.bucket) == list(expected.bucket)
        assert (ours.min, ours.max, ours.num, ours.sum, ours.sum_squares) == (
            expected.min,
            expected.max,
            expected.num,
            expected.sum,
            expected.sum_squares,
        )


@pytest.mark.tf_oracle
def test_tensorflow_reads_our_event_files(tmp_path):
    import tensorflow.compat.v1 as real
    from tensorflow.core.framework import graph_pb2

    with tf.Graph().as_default() as graph:
        merged = _summaries_graph(tf, _VALUES)
        with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path), graph) as writer:
            for step in (1, 5):
                writer.add_summary(sess.run(merged), step)
            writer.add_session_log(SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path="/ckpt"), 5)
    (path,) = _event_files(str(tmp_path))
    events = list(real.train.summary_iterator(path))
    assert events[0].file_version == "brain.Event:2"
    graph_def = graph_pb2.GraphDef.FromString(events[1].graph_def)
    assert {n.name for n in graph_def.node} == {op.name for op in graph.get_operations()}
    summaries = [e for e in events if e.HasField("summary")]
    assert [e.step for e in summaries] == [1, 5]
    tags = [v.tag for v in summaries[0].summary.value]
    assert tags == ["train/loss", "train/loss_1", "train/weights", "eval/eval/acc", "notes"]
    assert summaries[1].summary.value[1].simple_value == 3.0
    assert summaries[1].summary.value[2].histo.num == len(_VALUES)
    assert events[-1].session_log.status == real.SessionLog.CHECKPOINT
    assert events[-1].session_log.checkpoint_path == "/ckpt"


@pytest.mark.tf_oracle
def test_our_summary_iterator_reads_tensorflow_event_files(tmp_path):
    import tensorflow.compat.v1 as real

    with real.Graph().as_default() as graph:
        merged = _summaries_graph(real, _VALUES)
        with real.Session() as sess:
            writer = real.summary.FileWriter(str(tmp_path), graph)
            writer.add_summary(sess.run(merged), 7)
            writer.add_session_log(real.SessionLog(status=real.SessionLog.START), 7)
            writer.close()
    (path,) = _event_files(str(tmp_path))
    events = _events(path)
    assert events[0].file_version == "brain.Event:2"
    kinds = [e.WhichOneof("what") for e in events]
    assert "graph_def" in kinds and kinds[-2:] == ["summary", "session_log"]
    graph_def = GraphDef.FromString(next(e for e in events if e.WhichOneof("what") == "graph_def").graph_def)
    assert "train/loss" in {n.name for n in graph_def.node}
    summary = events[-2]
    assert summary.step == 7
    assert [v.simple_value for v in summary.summary.value[:2]] == [0.25, 3.0]
    assert summary.summary.value[2].histo == histogram_proto(_VALUES)
    assert events[-1].session_log.status == SessionLog.START
    assert isinstance(summary.summary.value[2].histo, HistogramProto)
