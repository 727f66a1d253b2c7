"""Readers against real TensorFlow: the records (keys and values) each reader makes of files written by the test,
``read_up_to``, the counters, serialized states, and the errors of missing files and misused queues."""

from __future__ import annotations

import os

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime.readers import decode_state
from tests.input.support import both, error_message, session, write_tfrecord_files


def _work_queue(lib, names, close=True):
    q = lib.FIFOQueue(len(names) + 1, lib.string)
    return q, q.enqueue_many([names]), (q.close() if close else None)


def _read_all(lib, reader, names, up_to=None, limit=60):
    """Every outcome of reading ``names`` with ``reader`` until the queue runs out: records and errors in order."""
    q, fill, close = _work_queue(lib, names)
    read = reader.read(q) if up_to is None else reader.read_up_to(q, up_to)
    counters = [reader.num_records_produced(), reader.num_work_units_completed()]
    out = []
    with session(lib) as sess:
        sess.run(fill)
        sess.run(close)
        for _ in range(limit):
            try:
                key, value = sess.run(read)
                out.append(("record", _plain(key), _plain(value)))
            except lib.errors.OutOfRangeError as e:
                out.append(("OutOfRangeError", _strip_queue(error_message(e))))
                break
            except lib.errors.OpError as e:
                out.append((type(e).__name__, error_message(e)))
        out.append(("counters", *[int(c) for c in sess.run(counters)]))
    return out


def _plain(value):
    return value.tolist() if hasattr(value, "tolist") else value


def _strip_queue(text):
    import re

    return re.sub(r"FIFOQueue '[^']*'", "FIFOQueue 'q'", text)


@pytest.fixture
def text_files(tmp_path):
    contents = {"a.csv": "h1,h2\r\na,1\n\nb,2", "b.csv": "x\ny\n", "empty.csv": "", "header_only.csv": "h\n"}
    for name, text in contents.items():
        (tmp_path / name).write_bytes(text.encode())
    return [str(tmp_path / n) for n in ("a.csv", "missing.csv", "empty.csv", "header_only.csv", "b.csv")]


@pytest.mark.tf_oracle
@pytest.mark.parametrize("skip", [0, 1])
@pytest.mark.parametrize("up_to", [None, 2])
def test_text_line_reader_like_tensorflow(text_files, skip, up_to):
    ours, theirs = both(lambda lib: _read_all(lib, lib.TextLineReader(skip_header_lines=skip), text_files, up_to))
    assert ours == theirs
    assert ("NotFoundError", f"{text_files[1]}; No such file or directory") in ours


@pytest.mark.tf_oracle
@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_reader_like_tensorflow(tmp_path, compression):
    names = write_tfrecord_files(tmp_path, files=2, rows=3, compression=compression)

    def run(lib):
        options = lib.python_io.TFRecordOptions(compression) if compression else None
        return _read_all(lib, lib.TFRecordReader(options=options), names, up_to=2)

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[0][1][0].endswith(b"data-0.tfrecord:0")


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    ("record", "header", "footer", "hop", "encoding"),
    [
        (4, 3, 2, 0, None),
        (4, 3, 2, 6, None),
        (4, 3, 2, 2, None),
        (5, 0, 0, 0, "GZIP"),
        (4, 3, 2, 2, "ZLIB"),
        (30, 0, 0, 0, None),
        (1, 22, 0, 0, None),
        (1, 30, 0, 0, None),  # the header is longer than the file: TF's "reached end of file"
    ],
)
def test_fixed_length_record_reader_like_tensorflow(tmp_path, record, header, footer, hop, encoding):
    import gzip
    import zlib

    data = bytes(range(23))
    raw = {None: data, "GZIP": gzip.compress(data), "ZLIB": zlib.compress(data)}[encoding]
    path = tmp_path / "f.bin"
    path.write_bytes(raw)

    def run(lib):
        reader = lib.FixedLengthRecordReader(
            record, header_bytes=header, footer_bytes=footer, hop_bytes=hop, encoding=encoding
        )
        return _read_all(lib, reader, [str(path)], up_to=3)

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.tf_oracle
def test_whole_file_and_identity_readers_like_tensorflow(text_files):
    def run(lib):
        whole = _read_all(lib, lib.WholeFileReader(), [text_files[0], text_files[4]])
        ids = _read_all(lib, lib.IdentityReader(), ["w1", "w2", "w3"], up_to=2)
        return whole, ids

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[1][0] == ("record", [b"w1"], [b"w1"])  # an identity unit ends with its one record


@pytest.mark.tf_oracle
def test_reader_state_bytes_and_restores_like_tensorflow():
    def run(lib):
        reader = lib.IdentityReader()
        q, fill, _ = _work_queue(lib, ["w1", "w2", "w3"], close=False)
        key, _ = reader.read(q)
        state = lib.placeholder(lib.string)
        restore = reader.restore_state(state)
        counters = [reader.num_records_produced(), reader.num_work_units_completed()]
        out = []
        with session(lib) as sess:
            sess.run(fill)
            out.append(sess.run(reader.serialize_state()))
            out.append(sess.run(key))
            saved = sess.run(reader.serialize_state())
            out.append(saved)
            out.append(sess.run(key))
            sess.run(restore, {state: saved})
            out.append(sess.run(counters).tolist() if hasattr(sess.run(counters), "tolist") else sess.run(counters))
            for bad in (b"garbage\xff", b"\x08\x03\x10\x01"):
                try:
                    sess.run(restore, {state: bad})
                except lib.errors.InvalidArgumentError as e:
                    out.append(error_message(e).split(":")[0])
                out.append([int(c) for c in sess.run(counters)])  # a failed restore resets the reader
            sess.run(reader.reset())
            out.append(sess.run(reader.serialize_state()))
        return out

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[2] == b'\x08\x01\x10\x01\x18\x01"\x02w1'


def test_text_line_reader_state_resumes_in_the_middle_of_a_file(text_files):
    """TF cannot serialize a TextLineReader; here its state also says how far into the file it had read."""
    reader = tf.TextLineReader()
    q, fill, _ = _work_queue(tf, [text_files[0], text_files[4]], close=False)
    key, line = reader.read(q)
    state = tf.placeholder(tf.string)
    restore = reader.restore_state(state)
    with session(tf) as sess:
        sess.run(fill)
        sess.run(line)
        saved = sess.run(reader.serialize_state())
        rest = [sess.run(line) for _ in range(5)]
        fields = decode_state(saved, "TextLineReader")
        assert fields["current_work"] == text_files[0].encode() and fields["records_read"] == 1
        sess.run(restore, {state: saved})
        again = [sess.run(line) for _ in range(3)]
        assert again == rest[:3] == [b"a,1", b"", b"b,2"]
        assert int(sess.run(reader.num_records_produced())) == 4


@pytest.mark.tf_oracle
def test_readers_need_a_queue_of_single_strings_like_tensorflow():
    def run(lib):
        reader = lib.IdentityReader()
        out = []
        with session(lib) as sess:
            for dtypes, value in (
                ([lib.int32], 1),
                ([lib.string, lib.string], ("a", "b")),
                ([lib.string], [["a", "b"]]),
            ):
                q = lib.FIFOQueue(3, dtypes)
                sess.run(q.enqueue(value))
                try:
                    sess.run(reader.read(q))
                except lib.errors.InvalidArgumentError as e:
                    out.append(error_message(e))
        return out

    ours, theirs = both(run)
    assert (
        ours
        == theirs
        == [
            "Expected queue with single string component",
            "Expected single component queue",
            "Expected to dequeue a one-element string tensor",
        ]
    )


def test_reads_are_placed_with_their_reader_and_queue_and_confined_to_file_roots(tmp_path, text_files):
    with tf.Graph().as_default():
        with tf.device("/job:worker/task:0"):
            q = tf.train.string_input_producer(["x"])
            reader = tf.TextLineReader()
        key, _ = reader.read(q)
        assert key.op.device == "/job:worker/task:0"
        assert sorted(key.op.colocation_groups()) == sorted(
            [f"loc:@{reader.reader_ref.op.name}", f"loc:@{q.queue_ref.op.name}"]
        )

    from dtf_notebook.runtime.file_access import FileAccess
    from dtf_notebook.runtime.queues import FIFOQueueResource
    from dtf_notebook.runtime.readers import ReaderResource, TextLineSource

    root = tmp_path / "root"
    root.mkdir()
    inside = root / "in.txt"
    inside.write_text("ok\n")
    queue = FIFOQueueResource("q", [tf.string], [()], capacity=-1)
    import numpy as np

    queue.enqueue_many((np.array([str(inside).encode(), text_files[0].encode()], dtype=object),), step=None)
    reader = ReaderResource("r", "TextLineReader 'r'", TextLineSource(), files=FileAccess([str(root)]))
    assert reader.read(queue, step=None)[1] == b"ok"
    with pytest.raises(tf.errors.PermissionDeniedError, match="outside this task's file roots"):
        reader.read(queue, step=None)
    assert os.path.exists(text_files[0])
