"""TFRecord files: written here and read by TF's ``tf_record_iterator`` and the reverse, plain and compressed."""

from __future__ import annotations

import os
import uuid

import pytest

import dtf_notebook.compat.v1 as tf

_RECORDS = [b"", b"a", b"\x00\xff binary \n", os.urandom(1 << 20), "unicode é".encode(), b"last"]
_COMPRESSIONS = [None, "GZIP", "ZLIB"]


def _real():
    return pytest.importorskip("tensorflow.compat.v1")


def _write(lib, path: str, compression) -> None:
    options = lib.python_io.TFRecordOptions(compression) if compression else None
    with lib.python_io.TFRecordWriter(path, options) as writer:
        for record in _RECORDS:
            writer.write(record)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("compression", _COMPRESSIONS, ids=str)
def test_files_written_here_are_read_by_tensorflow_and_the_reverse(tmp_path, compression):
    real = _real()
    ours, theirs = str(tmp_path / "ours.tfrecord"), str(tmp_path / "theirs.tfrecord")
    _write(tf, ours, compression)
    _write(real, theirs, compression)
    assert list(real.python_io.tf_record_iterator(ours, real.python_io.TFRecordOptions(compression))) == _RECORDS
    assert list(tf.python_io.tf_record_iterator(theirs, tf.python_io.TFRecordOptions(compression))) == _RECORDS
    assert list(tf.io.tf_record_iterator(theirs, compression)) == _RECORDS
    if compression is None:  # the framing is deterministic: the files are byte for byte the same
        assert open(ours, "rb").read() == open(theirs, "rb").read()
    if compression == "GZIP":
        assert open(ours, "rb").read(2) == b"\x1f\x8b"


@pytest.mark.tf_oracle
def test_corrupt_and_missing_files_raise_tensorflows_errors(tmp_path):
    real = _real()
    path = str(tmp_path / "r.tfrecord")
    _write(real, path, None)
    raw = open(path, "rb").read()
    cases = {
        "data crc": raw[:13] + bytes([raw[13] ^ 1]) + raw[14:],
        "length crc": raw[:2] + bytes([raw[2] ^ 1]) + raw[3:],
        "second record's length crc": raw[:16] + bytes([raw[16] ^ 1]) + raw[17:],
        "truncated data": raw[:-2],
        "partial header": raw[:5],
        "empty": b"",
    }
    for name, content in cases.items():
        bad = str(tmp_path / f"{name}.tfrecord")
        with open(bad, "wb") as f:
            f.write(content)
        outcomes = []
        for lib in (real, tf):
            try:
                outcomes.append(("records", len(list(lib.python_io.tf_record_iterator(bad)))))
            except lib.errors.OpError as e:
                message = e.message if name != "truncated data" else "truncated record"  # TF adds a C++ detail
                outcomes.append((type(e).__name__, message.split(" in ")[0].split("' failed")[0]))
        assert outcomes[1] == outcomes[0], name
    for lib in (real, tf):  # a missing file fails when the iterator is made, not at its first record
        with pytest.raises(lib.errors.NotFoundError):
            lib.python_io.tf_record_iterator(str(tmp_path / "missing"))
        with pytest.raises(lib.errors.NotFoundError):
            lib.python_io.TFRecordWriter(str(tmp_path / "no" / "dir.tfrecord"))
        with pytest.raises(lib.errors.DataLossError):  # a GZIP file read without saying so
            _write(lib, str(tmp_path / "g.tfrecord"), "GZIP")
            list(lib.python_io.tf_record_iterator(str(tmp_path / "g.tfrecord")))


@pytest.mark.tf_oracle
def test_options_behave_as_tensorflows():
    real = _real()
    for lib in (real, tf):
        opts = lib.python_io.TFRecordOptions
        kinds = lib.python_io.TFRecordCompressionType
        assert (kinds.NONE, kinds.ZLIB, kinds.GZIP) == (0, 1, 2)
        assert opts(kinds.GZIP).compression_type == 2 and opts("ZLIB").compression_type == "ZLIB"
        assert [opts.get_compression_type_string(o) for o in (None, "", "GZIP", 1, opts("ZLIB"), opts())] == [
            "",
            "",
            "GZIP",
            "ZLIB",
            "ZLIB",
            "",
        ]
        assert opts("GZIP", compression_level=9).compression_level == 9
        with pytest.raises(ValueError, match='Not a valid compression_type: "LZ4"'):
            opts("LZ4")
        assert lib.io.TFRecordWriter is lib.python_io.TFRecordWriter
        assert lib.io.tf_record_iterator is lib.python_io.tf_record_iterator


def test_writer_lifecycle_and_types():
    path = f"memory://tf-record-{uuid.uuid4().hex}/r"
    writer = tf.python_io.TFRecordWriter(path)
    writer.write("text is utf-8")
    with pytest.raises(TypeError):
        writer.write(3)
    writer.close()
    writer.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match="Writer is closed."):
        writer.write(b"x")
    assert list(tf.python_io.tf_record_iterator(path)) == [b"text is utf-8"]


@pytest.mark.parametrize("compression", _COMPRESSIONS, ids=str)
def test_flush_makes_records_readable_while_writing(compression):
    path = f"memory://tf-record-{uuid.uuid4().hex}/r"
    writer = tf.io.TFRecordWriter(path, compression)
    writer.write(b"one")
    writer.write(b"two")
    writer.flush()
    assert list(tf.io.tf_record_iterator(path, compression)) == [b"one", b"two"]
    writer.write(b"three")
    writer.close()
    assert list(tf.io.tf_record_iterator(path, compression)) == [b"one", b"two", b"three"]


def test_zlib_settings_and_concatenated_gzip_files(tmp_path):
    options = tf.python_io.TFRecordOptions("ZLIB", compression_level=1, mem_level=9, window_bits=9, input_buffer_size=7)
    path = str(tmp_path / "z")
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for record in _RECORDS:
            writer.write(record)
    assert list(tf.python_io.tf_record_iterator(path, options)) == _RECORDS
    a, b = str(tmp_path / "a.gz"), str(tmp_path / "b.gz")
    for p, records in ((a, [b"1", b"2"]), (b, [b"3"])):
        with tf.python_io.TFRecordWriter(p, "GZIP") as writer:
            for r in records:
                writer.write(r)
    with open(a, "ab") as f:  # `cat a.gz b.gz` is one GZIP stream of two members
        f.write(open(b, "rb").read())
    assert list(tf.python_io.tf_record_iterator(a, "GZIP")) == [b"1", b"2", b"3"]


@pytest.mark.parametrize("compression", ["", "GZIP"])
@pytest.mark.parametrize("buffer_size", [7, 100, 1 << 20])
def test_taking_many_records_at_once_gives_what_iterating_gives(tmp_path, compression, buffer_size):
    from dtf_notebook.lib.io.tf_record import tf_record_iterator

    path = str(tmp_path / "r.tfrecord")
    records = [os.urandom(n) for n in (0, 1, 50, 3, 200, 9, 0, 77) * 5]
    with tf.python_io.TFRecordWriter(path, compression) as writer:
        for record in records:
            writer.write(record)
    options = tf.python_io.TFRecordOptions(compression, input_buffer_size=buffer_size)
    iterator, taken = tf_record_iterator(path, options), []
    while chunk := iterator.take(6):
        assert len(chunk) == 6 or len(taken) + len(chunk) == len(records)
        taken += chunk
    assert taken == records == list(tf_record_iterator(path, options))


def test_taking_records_from_a_corrupt_file_raises_at_the_bad_record(tmp_path):
    from dtf_notebook.lib.io.tf_record import tf_record_iterator

    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in (b"first", b"second", b"third"):
            writer.write(record)
    data = bytearray(open(path, "rb").read())
    data[21 + 12 + 2] ^= 0xFF  # a byte of b"second" (after b"first"'s 21 bytes and its own 12-byte header)
    open(path, "wb").write(bytes(data))
    iterator = tf_record_iterator(path)
    assert iterator.take(1) == [b"first"]
    with pytest.raises(tf.errors.DataLossError, match="corrupted record at 33"):
        iterator.take(5)


@pytest.mark.parametrize("buffer_size", [64, 1000, 1 << 20])
def test_runs_of_records_of_one_length_are_taken_as_iterating_gives_them(tmp_path, buffer_size):
    # Records of one length are framed together (one header check, their CRCs at once): runs, breaks, buffer ends.
    from dtf_notebook.lib.io.tf_record import tf_record_iterator

    path = str(tmp_path / "r.tfrecord")
    records = [os.urandom(30) for _ in range(25)] + [os.urandom(31)] + [os.urandom(30) for _ in range(40)]
    records += [os.urandom(5), os.urandom(30), os.urandom(5), os.urandom(5)]
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    options = tf.python_io.TFRecordOptions(input_buffer_size=buffer_size)
    for n in (1, 2, 7, 100):
        iterator, taken = tf_record_iterator(path, options), []
        while chunk := iterator.take(n):
            taken += chunk
        assert taken == records


@pytest.mark.parametrize("where, at", [("data", 12 + 3), ("footer", 12 + 20 + 1), ("length", 0)])
def test_a_corrupt_record_inside_a_run_of_one_length_is_named_at_its_offset(tmp_path, where, at):
    from dtf_notebook.lib.io.tf_record import tf_record_iterator

    path = str(tmp_path / "r.tfrecord")
    records = [bytes([i]) * 20 for i in range(10)]
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    data = bytearray(open(path, "rb").read())
    data[6 * 36 + at] ^= 0x01  # the 7th record (36 bytes framed each)
    open(path, "wb").write(bytes(data))
    iterator = tf_record_iterator(path)
    assert iterator.take(6) == records[:6]
    offset = 6 * 36 + (12 if where != "length" else 0)
    with pytest.raises(tf.errors.DataLossError, match=f"corrupted record at {offset}"):
        iterator.take(100)


def test_read_up_to_keys_records_by_file_and_offset_as_tensorflow(tmp_path):
    tf_real = pytest.importorskip("tensorflow")
    path = str(tmp_path / "r.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(7):
            writer.write(b"x" * i)
    results = []
    for lib in (tf, tf_real.compat.v1):
        with lib.Graph().as_default():
            files = lib.train.string_input_producer([path], num_epochs=1, shuffle=False)
            keys, values = lib.TFRecordReader().read_up_to(files, 3)
            with lib.Session() as sess:
                sess.run(lib.local_variables_initializer())
                coord = lib.train.Coordinator()
                threads = lib.train.start_queue_runners(sess, coord)
                got = []
                try:
                    while True:
                        k, v = sess.run([keys, values])
                        got.append((list(k), list(v)))
                except lib.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads)
        results.append(got)
    assert results[0] == results[1]
