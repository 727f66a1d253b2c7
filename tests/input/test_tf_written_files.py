"""Files written by real TensorFlow (its ``TFRecordWriter``, its ``tf.train.Example`` serialization, plain and
compressed) read by the graph pipelines here -- a ``TFRecordReader`` with ``parse_single_example`` behind queues and
a ``TFRecordDataset`` with ``parse_example`` -- giving what TF's own pipelines give. (Files written here and read by
TF: tests/program/test_tf_record.py, test_example.py and the other tests of this folder, whose files this project
writes.)"""

from __future__ import annotations

import pytest

from tests.input.support import both, drain, plain, real, session

pytestmark = pytest.mark.tf_oracle

_FEATURES = {"x": ("float", 3), "id": ("int64", 1), "name": ("bytes", 1)}


def _write_with_tensorflow(path: str, compression: str | None) -> None:
    tf1 = real()
    options = tf1.python_io.TFRecordOptions(compression) if compression else None
    with tf1.python_io.TFRecordWriter(path, options) as writer:
        for i in range(7):
            feature = {
                "x": tf1.train.Feature(float_list=tf1.train.FloatList(value=[i + 0.25, -i, i / 3])),
                "id": tf1.train.Feature(int64_list=tf1.train.Int64List(value=[i * 1000003])),
                "name": tf1.train.Feature(bytes_list=tf1.train.BytesList(value=[f"row é {i}".encode()])),
                # Only in some records: a VarLenFeature's sparse rows.
                "tags": tf1.train.Feature(int64_list=tf1.train.Int64List(value=list(range(i % 3)))),
            }
            writer.write(tf1.train.Example(features=tf1.train.Features(feature=feature)).SerializeToString())


def _spec(lib, sparse=True):
    spec = {
        "x": lib.FixedLenFeature([3], lib.float32),
        "id": lib.FixedLenFeature([], lib.int64),
        "name": lib.FixedLenFeature([], lib.string),
    }
    if sparse:
        spec["tags"] = lib.VarLenFeature(lib.int64)
    return spec


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tf_written_examples_through_a_reader_and_queues(tmp_path, compression):
    path = str(tmp_path / "tf.tfrecord")
    _write_with_tensorflow(path, compression)

    def pipeline(lib, batched):
        files = lib.train.string_input_producer([path], num_epochs=1, shuffle=False)
        options = lib.python_io.TFRecordOptions(compression) if compression else None
        _, serialized = lib.TFRecordReader(options=options).read(files)
        parsed = lib.parse_single_example(serialized, _spec(lib))
        if batched:
            dense = {k: parsed[k] for k in ("x", "id", "name")}
            return drain(lib, lib.train.batch(dense, batch_size=3, allow_smaller_final_batch=True))
        return drain(lib, parsed)

    for batched, count in ((False, 7), (True, 3)):
        (ours, our_error), (theirs, their_error) = both(lambda lib: pipeline(lib, batched))  # noqa: B023 (run at once)
        assert ours == theirs and len(ours) == count
        assert type(our_error).__name__ == type(their_error).__name__ == "OutOfRangeError"
    assert ours[2]["name"] == ["row é 6".encode()]


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_tf_written_examples_through_tf_data(tmp_path, compression):
    path = str(tmp_path / "tf.tfrecord")
    _write_with_tensorflow(path, compression)

    def pipeline(lib):
        dataset = lib.data.TFRecordDataset([path], compression_type=compression or "")
        # (A SparseTensor cannot be a tf.data element here: no VarLenFeature, docs/tf_differences.md.)
        dataset = dataset.batch(4).map(lambda records: lib.parse_example(records, _spec(lib, sparse=False)))
        next_batch = lib.data.make_one_shot_iterator(dataset).get_next()
        batches = []
        with session(lib) as sess:
            while True:
                try:
                    batches.append(plain(sess.run(next_batch)))
                except lib.errors.OutOfRangeError:
                    return batches

    ours, theirs = both(pipeline)
    assert ours == theirs and len(ours) == 2
    assert ours[1]["id"] == [4000012, 5000015, 6000018]
