"""File datasets (text lines, TFRecords, fixed-length records), ``list_files`` and the file cache, against real
TensorFlow 1 reading the same files."""

from __future__ import annotations

import gzip
import zlib

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook.lib.io.tf_record import TFRecordOptions, TFRecordWriter
from tests.data.oracle import compare, real_tf, run

pytestmark = pytest.mark.tf_oracle


@pytest.fixture
def files(tmp_path):
    """Text, TFRecord and fixed-length files, plain and compressed, in ``tmp_path``."""
    text = {"a.txt": b"header\r\nline 1\n\nline 3", "b.txt": b"header\nx\ny\n"}
    for name, data in text.items():
        (tmp_path / name).write_bytes(data)
        (tmp_path / (name + ".gz")).write_bytes(gzip.compress(data))
        (tmp_path / (name + ".zz")).write_bytes(zlib.compress(data))
    for name, compression in (("r0.tfrecord", None), ("r1.tfrecord", None), ("r.gz", "GZIP"), ("r.zz", "ZLIB")):
        with TFRecordWriter(str(tmp_path / name), TFRecordOptions(compression)) as w:
            for i in range(5):
                w.write(f"{name}-{i}-" + "x" * i)
    body = bytes(range(24))
    (tmp_path / "f.bin").write_bytes(b"HDR" + body + b"FT")
    (tmp_path / "f.bin.gz").write_bytes(gzip.compress(b"HDR" + body + b"FT"))
    (tmp_path / "bad.bin").write_bytes(b"HDR" + body[:7] + b"FT")
    return tmp_path


def _p(root, *names):
    return [str(root / n) for n in names]


def test_text_lines(files):
    compare(lambda m: m.data.TextLineDataset(_p(files, "a.txt", "b.txt")))
    compare(lambda m: m.data.TextLineDataset(_p(files, "a.txt"), buffer_size=3).skip(1))
    for suffix, kind in ((".gz", "GZIP"), (".zz", "ZLIB")):
        names = _p(files, "a.txt" + suffix, "b.txt" + suffix)
        compare(lambda m, names=names, kind=kind: m.data.TextLineDataset(names, compression_type=kind))


def test_text_lines_from_a_dataset_of_names_and_in_parallel(files):
    names = _p(files, "a.txt", "b.txt")
    compare(lambda m: m.data.Dataset.from_tensor_slices(names).flat_map(lambda f: m.data.TextLineDataset(f).skip(1)))
    compare(lambda m: m.data.TextLineDataset(m.data.Dataset.from_tensor_slices(names)))
    compare(lambda m: m.data.TextLineDataset(names, num_parallel_reads=2))
    compare(
        lambda m: m.data.Dataset.from_tensor_slices(names).interleave(
            lambda f: m.data.TextLineDataset(f).map(lambda line: (f, m.strings.length(line))), cycle_length=2
        )
    )


def test_tfrecords(files):
    compare(lambda m: m.data.TFRecordDataset(_p(files, "r0.tfrecord", "r1.tfrecord")))
    compare(lambda m: m.data.TFRecordDataset(_p(files, "r0.tfrecord"), buffer_size=7).map(m.strings.length).batch(2))
    compare(lambda m: m.data.TFRecordDataset(_p(files, "r.gz"), compression_type="GZIP"))
    compare(lambda m: m.data.TFRecordDataset(_p(files, "r.zz"), compression_type="ZLIB", buffer_size=10))
    compare(lambda m: m.data.TFRecordDataset(_p(files, "r0.tfrecord", "r1.tfrecord"), num_parallel_reads=2))


def test_tfrecord_pipeline_with_shuffle_repeat_batch_prefetch(files):
    def build(m):
        return (
            m.data.TFRecordDataset(_p(files, "r0.tfrecord", "r1.tfrecord"))
            .map(lambda r: (r, m.strings.length(r)), num_parallel_calls=2)
            .shuffle(4, seed=1)
            .repeat(2)
            .batch(3)
            .prefetch(2)
        )

    ours = run(dtf, build)["elements"]
    theirs = run(real_tf(), build)["elements"]
    flat = sorted(bytes(r) for batch in ours for r in batch[0])
    assert flat == sorted(bytes(r) for batch in theirs for r in batch[0])
    assert [len(b[0]) for b in ours] == [len(b[0]) for b in theirs]


def test_fixed_length_records(files):
    compare(lambda m: m.data.FixedLengthRecordDataset(_p(files, "f.bin"), 4, header_bytes=3, footer_bytes=2))
    compare(
        lambda m: m.data.FixedLengthRecordDataset(
            _p(files, "f.bin.gz"), 6, header_bytes=3, footer_bytes=2, compression_type="GZIP"
        )
    )
    result = compare(lambda m: m.data.FixedLengthRecordDataset(_p(files, "bad.bin"), 4, header_bytes=3, footer_bytes=2))
    assert result["error"][0] == "InvalidArgumentError"
    assert "not an exact multiple of the record length (4 bytes)" in result["error"][1]


def test_reading_errors_match_tf(files):
    missing = compare(lambda m: m.data.TFRecordDataset(_p(files, "no-such-file")))
    assert missing["error"][0] == "NotFoundError"
    corrupt = files / "corrupt.tfrecord"
    data = bytearray((files / "r0.tfrecord").read_bytes())
    data[20] ^= 0xFF
    corrupt.write_bytes(bytes(data))
    assert compare(lambda m: m.data.TFRecordDataset([str(corrupt)]))["error"][0] == "DataLossError"


def test_list_files(files):
    got = run(dtf, lambda m: m.data.Dataset.list_files(str(files / "*.txt"), shuffle=False))["elements"]
    expected = run(real_tf(), lambda m: m.data.Dataset.list_files(str(files / "*.txt"), shuffle=False))["elements"]
    assert [bytes(g) for g in got] == [bytes(e) for e in expected] == [p.encode() for p in _p(files, "a.txt", "b.txt")]
    shuffled = run(dtf, lambda m: m.data.Dataset.list_files(str(files / "*"), seed=3))["elements"]
    assert sorted(bytes(s) for s in shuffled) == sorted(str(p).encode() for p in files.iterdir())
    none = run(dtf, lambda m: m.data.Dataset.list_files(str(files / "*.nothing")))
    assert none["error"][0] == "InvalidArgumentError" and "No files matched pattern" in none["error"][1]


def test_file_cache_is_written_by_a_complete_pass_and_read_by_later_ones(tmp_path):
    cache = str(tmp_path / "cache")
    with dtf.Graph().as_default():
        values = dtf.placeholder(dtf.int64, [None])
        ds = dtf.data.Dataset.from_tensor_slices((values, dtf.as_string(values))).cache(cache)
        it = ds.make_initializable_iterator()
        x = it.get_next()
        with dtf.Session() as sess:
            sess.run(it.initializer, {values: [1, 2, 3]})
            sess.run(x)
            sess.run(it.initializer, {values: [4, 5]})  # the first pass stopped early: nothing was cached
            first = [sess.run(x) for _ in range(2)]
            with pytest.raises(dtf.errors.OutOfRangeError):
                sess.run(x)
            sess.run(it.initializer, {values: [7, 8, 9]})  # read back from the file
            again = [sess.run(x) for _ in range(2)]
            with pytest.raises(dtf.errors.OutOfRangeError):
                sess.run(x)
    assert [(int(a), bytes(b)) for a, b in first] == [(4, b"4"), (5, b"5")]
    assert [(int(a), bytes(b)) for a, b in again] == [(4, b"4"), (5, b"5")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.dtf-cache"]


def test_readers_respect_the_tasks_file_roots(tmp_path, files):
    from dtf_notebook.runtime.executor import ExecutionState
    from dtf_notebook.runtime.file_access import FileAccess
    from dtf_notebook.runtime.local_backend import LocalBackend

    (tmp_path / "elsewhere").mkdir()
    backend = LocalBackend(dtf.ConfigProto(), state=ExecutionState(files=FileAccess([str(tmp_path / "elsewhere")])))
    with dtf.Graph().as_default() as g:
        x = dtf.data.TFRecordDataset(_p(files, "r0.tfrecord")).make_one_shot_iterator().get_next()
    with pytest.raises(dtf.errors.PermissionDeniedError, match="outside this task's file roots"):
        backend.run(g, [x], [], [], None, None)
    backend.close()


def test_records_feed_a_numeric_pipeline(files):
    # Records of digits become numbers through string ops, per element and vectorized per batch.
    path = str(files / "numbers.tfrecord")
    with TFRecordWriter(path) as w:
        for i in range(10):
            w.write(f"{i}.5")
    compare(
        lambda m: (
            m.data.TFRecordDataset(path)
            .map(lambda r: (m.strings.to_number(r), m.strings.to_number(r, m.float64) * 2))
            .batch(4)
        )
    )
    assert np.isclose(
        run(dtf, lambda m: m.data.TFRecordDataset(path).map(m.strings.to_number).batch(10))["elements"][0].sum(),
        sum(i + 0.5 for i in range(10)),
    )


def _write_examples(path, count=7):
    """Examples with a raw float32 image (bytes), an int64 label and a 2-float feature."""
    with TFRecordWriter(path) as w:
        for i in range(count):
            image = (np.arange(6, dtype=np.float32) + i).tobytes()
            example = dtf.train.Example(
                features=dtf.train.Features(
                    feature={
                        "image": dtf.train.Feature(bytes_list=dtf.train.BytesList(value=[image])),
                        "label": dtf.train.Feature(int64_list=dtf.train.Int64List(value=[i % 3])),
                        "pair": dtf.train.Feature(float_list=dtf.train.FloatList(value=[i, -i])),
                    }
                )
            )
            w.write(example.SerializeToString())


def _parse(m):
    def parse(record):
        features = m.parse_single_example(
            record,
            {
                "image": m.FixedLenFeature([], m.string),
                "label": m.FixedLenFeature([], m.int64),
                "pair": m.FixedLenFeature([2], m.float32),
                "missing": m.FixedLenFeature([], m.int64, default_value=-1),
            },
        )
        image = m.reshape(m.decode_raw(features["image"], m.float32), [2, 3])
        return {"image": image, "pair": features["pair"], "missing": features["missing"]}, features["label"]

    return parse


def test_examples_parsed_and_decoded_per_element_and_per_batch(tmp_path):
    from dtf_notebook.data.function import trace
    from dtf_notebook.data.structure import TensorSpec
    from dtf_notebook.data.vectorize import vectorize

    path = str(tmp_path / "examples.tfrecord")
    _write_examples(path)
    compare(lambda m: m.data.TFRecordDataset(path).map(_parse(m)))
    compare(lambda m: m.data.TFRecordDataset(path).map(_parse(m)).batch(3))  # one parse of 3 records per batch
    compare(lambda m: m.data.TFRecordDataset(path).repeat(2).map(_parse(m), num_parallel_calls=2).batch(4).prefetch(1))
    with dtf.Graph().as_default():
        assert vectorize(trace(_parse(dtf), TensorSpec(dtf.string, []), "map")) is not None


def test_a_record_that_does_not_parse_fails_its_batch_with_tfs_error(tmp_path):
    path = str(tmp_path / "bad.tfrecord")
    _write_examples(path, 2)
    with TFRecordWriter(path + "2") as w:
        w.write(b"not an example")
    result = compare(lambda m: m.data.TFRecordDataset([path, path + "2"]).map(_parse(m)).batch(2))
    assert result["error"][0] == "InvalidArgumentError"


def test_csv_dataset(tmp_path):
    (tmp_path / "p0.csv").write_bytes(b'id;x;word;y\n1;0.5;"a;b";7\n2;NA;c;\n')
    (tmp_path / "p1.csv").write_bytes(b'id;x;word;y\n3;1.5;"say ""hi""";9')
    (tmp_path / "p.csv.gz").write_bytes(gzip.compress(b"4,2.5,d,10\n5,,e,11\n"))
    names = _p(tmp_path, "p0.csv", "p1.csv")
    options = {"header": True, "field_delim": ";", "na_value": "NA"}

    def every_column(m):
        return m.data.experimental.CsvDataset(names, [m.int64, [-1.0], [""], [0]], **options)

    compare(every_column)
    compare(lambda m: m.data.experimental.CsvDataset(names, [[0], [0]], select_cols=[0, 3], **options))
    gz = _p(tmp_path, "p.csv.gz")
    compare(lambda m: m.data.experimental.CsvDataset(gz, [[0], [0.0], [""], [0]], compression_type="GZIP"))
    # A required column (a dtype, no default) left empty, and a missing file: TF's error classes.
    required = compare(lambda m: m.data.experimental.CsvDataset(names, [[0], [0.0], [""], m.int32], **options))
    assert required["error"][0] == "InvalidArgumentError"
    assert compare(lambda m: m.data.experimental.CsvDataset(_p(tmp_path, "none.csv"), [[0]]))["error"][0] == (
        "NotFoundError"
    )
