"""``tf.train.Example`` & co.: real protobuf messages whose descriptors and bytes are TF's."""

from __future__ import annotations

import pickle
import uuid

import pytest
from google.protobuf import descriptor_pb2, text_format

import dtf_notebook.compat.v1 as tf
from dtf_notebook.protos import example_pb

_MESSAGES = [
    "BytesList",
    "FloatList",
    "Int64List",
    "Feature",
    "Features",
    "FeatureList",
    "FeatureLists",
    "Example",
    "SequenceExample",
]


def _example(lib):
    train = lib.train
    return train.Example(
        features=train.Features(
            feature={
                "image/encoded": train.Feature(bytes_list=train.BytesList(value=[b"\x89PNG\x00", b""])),
                "image/label": train.Feature(int64_list=train.Int64List(value=[7, -1, 2**62])),
                "image/mean": train.Feature(float_list=train.FloatList(value=[0.5, -1e-3, 3.0e38])),
                "empty": train.Feature(),
            }
        )
    )


def _sequence_example(lib):
    train = lib.train
    example = train.SequenceExample()
    example.context.feature["length"].int64_list.value.append(3)
    tokens = example.feature_lists.feature_list["tokens"]
    for word in (b"a", b"b", b"c"):
        tokens.feature.add().bytes_list.value.append(word)
    example.feature_lists.feature_list["scores"].feature.add().float_list.value.extend([0.25, 0.75])
    return example


def _real():
    return pytest.importorskip("tensorflow.compat.v1")


@pytest.mark.tf_oracle
def test_descriptors_equal_tensorflows():
    _real()
    from tensorflow.core.example import example_pb2, feature_pb2

    for ours, theirs in ((example_pb.Example, example_pb2.Example), (example_pb.Feature, feature_pb2.Feature)):
        mine, expected = descriptor_pb2.FileDescriptorProto(), descriptor_pb2.FileDescriptorProto()
        ours.DESCRIPTOR.file.CopyToProto(mine)
        theirs.DESCRIPTOR.file.CopyToProto(expected)
        assert mine == expected


@pytest.mark.tf_oracle
@pytest.mark.parametrize("build", [_example, _sequence_example], ids=["Example", "SequenceExample"])
def test_bytes_round_trip_both_ways(build):
    real = _real()
    ours, theirs = build(tf), build(real)
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    assert type(theirs).FromString(ours.SerializeToString()) == theirs
    assert type(ours).FromString(theirs.SerializeToString()) == ours
    assert text_format.Parse(text_format.MessageToString(ours), type(theirs)()) == theirs
    assert text_format.Parse(str(theirs), type(ours)()) == ours


@pytest.mark.tf_oracle
def test_examples_in_tfrecord_files_cross_over(tmp_path):
    real = _real()
    ours_path, theirs_path = str(tmp_path / "ours.tfrecord"), str(tmp_path / "theirs.tfrecord")
    with tf.python_io.TFRecordWriter(ours_path, "GZIP") as writer:
        for label in range(3):
            example = _example(tf)
            example.features.feature["image/label"].int64_list.value[0] = label
            writer.write(example.SerializeToString())
    read = [real.train.Example.FromString(r) for r in real.python_io.tf_record_iterator(ours_path, "GZIP")]
    assert [e.features.feature["image/label"].int64_list.value[0] for e in read] == [0, 1, 2]
    with real.python_io.TFRecordWriter(theirs_path) as writer:
        writer.write(_sequence_example(real).SerializeToString())
    (record,) = tf.python_io.tf_record_iterator(theirs_path)
    assert tf.train.SequenceExample.FromString(record) == _sequence_example(tf)


def test_messages_are_in_tf_train_and_behave_as_protobufs():
    for name in _MESSAGES:
        assert getattr(tf.train, name) is getattr(example_pb, name)
        assert getattr(tf.train, name).DESCRIPTOR.full_name == f"tensorflow.{name}"
    example = _example(tf)
    feature = example.features.feature["image/label"]
    assert feature.WhichOneof("kind") == "int64_list" and list(feature.int64_list.value) == [7, -1, 2**62]
    assert example.features.feature["empty"].WhichOneof("kind") is None
    assert pickle.loads(pickle.dumps(example)) == example
    copy = tf.train.Example()
    copy.CopyFrom(example)
    copy.features.feature["image/label"].int64_list.value.append(1)
    assert copy != example and example.ByteSize() > 0
    with pytest.raises(TypeError):
        tf.train.Int64List(value=["not an int"])


def test_an_example_file_on_memory_fs_round_trips():
    path = f"memory://example-{uuid.uuid4().hex}/data.tfrecord"
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(_sequence_example(tf).SerializeToString())
    assert [tf.train.SequenceExample.FromString(r) for r in tf.io.tf_record_iterator(path)] == [_sequence_example(tf)]
