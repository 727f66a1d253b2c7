"""``parse_example``, ``parse_single_example`` and ``parse_single_sequence_example`` against real TensorFlow: values,
static shapes, op names, the errors of missing and malformed features, and the checks of feature configs."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.protos.example_pb import Feature, FeatureList, FeatureLists, Features, FloatList, Int64List
from dtf_notebook.protos.example_pb import SequenceExample as SequenceExampleProto
from tests.input.support import both, error_message, example, plain, session

GOOD = example(a=[1.0, 2.0], b=[3], c=[b"x", b"y", b"z"], ix=[3, 1, 3], jx=[0, 4, 2], v=[1.0, 2.0, 0.5])
OTHER = example(b=[3, 4], c=[b"q"], ix=[7], jx=[1], v=[4.0])
EMPTY = example()


def _features(lib, which):
    return {
        "dense": {
            "a": lib.FixedLenFeature([2], lib.float32, default_value=[9.0, 8.0]),
            "b": lib.FixedLenFeature([], lib.int64, default_value=0),
        },
        "varlen": {"b": lib.VarLenFeature(lib.int64), "c": lib.VarLenFeature(lib.string)},
        "sequence": {
            "c": lib.FixedLenSequenceFeature([], lib.string, allow_missing=True),
            "v": lib.FixedLenSequenceFeature([], lib.float32, allow_missing=True, default_value=-1.0),
        },
        "sparse": {"sp": lib.SparseFeature("ix", "v", lib.float32, 10)},
        "sparse_sorted": {"sp": lib.SparseFeature("ix", "v", lib.float32, 10, already_sorted=True)},
        "sparse_2d": {"sp": lib.SparseFeature(["ix", "jx"], "v", lib.float32, [10, 5])},
    }[which]


def _run(lib, parsed):
    shapes = {k: (v.shape.as_list() if hasattr(v, "op") else v.indices.shape.as_list()) for k, v in parsed.items()}
    with session(lib) as sess:
        try:
            return plain(sess.run(parsed)), shapes
        except lib.errors.OpError as e:
            return type(e).__name__, error_message(e)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("which", ["dense", "varlen", "sequence", "sparse", "sparse_sorted", "sparse_2d"])
def test_parse_example_like_tensorflow(which):
    def run(lib):
        parsed = lib.parse_example([GOOD, OTHER, EMPTY], _features(lib, which))
        return _run(lib, parsed), sorted({t.op.name for t in _tensors(parsed)})

    ours, theirs = both(run)
    assert ours[0] == theirs[0]
    if which in ("sparse", "sparse_2d"):  # TF builds a sorted SparseFeature with SparseMerge ops; here the parse does
        assert ours[1] == ["ParseExample/ParseExampleV2"]
    else:
        assert ours[1] == theirs[1]


def _tensors(parsed):
    for v in parsed.values():
        yield from ([v] if hasattr(v, "op") else [v.indices, v.values, v.dense_shape])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("which", ["dense", "varlen", "sparse", "sparse_2d"])
def test_parse_single_example_like_tensorflow(which):
    def run(lib):
        serialized = lib.placeholder_with_default(GOOD, [])
        return _run(lib, lib.parse_single_example(serialized, _features(lib, which)))

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    ("serialized", "single", "names"),
    [
        (example(b=[3]), False, None),
        (example(b=[3]), False, ["n0"]),
        (example(a=[1, 2]), False, None),
        (example(a=[1.0, 2.0, 3.0]), False, ["n0"]),
        (example(a=[]), False, None),
        (example(b=[3]), True, None),
        (example(a=[1, 2]), True, None),
    ],
)
def test_missing_and_malformed_features_fail_like_tensorflow(serialized, single, names):
    def run(lib):
        features = {"a": lib.FixedLenFeature([2], lib.float32)}
        if single:
            return _run(lib, lib.parse_single_example(serialized, features))
        return _run(lib, lib.parse_example([serialized], features, example_names=names))

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[0] == "InvalidArgumentError"


@pytest.mark.tf_oracle
def test_value_type_and_stride_errors_like_tensorflow():
    def run(lib):
        out = [_run(lib, lib.parse_example([example(b=[3])], {"b": lib.VarLenFeature(lib.string)}))]
        seq = {"a": lib.FixedLenSequenceFeature([2], lib.float32, allow_missing=True)}
        out.append(_run(lib, lib.parse_example([example(a=[1.0, 2.0, 3.0])], seq)))
        out.append(_run(lib, lib.parse_example([GOOD], {"sp": lib.SparseFeature("b", "a", lib.float32, 10)})))
        return out

    ours, theirs = both(run)
    assert ours[:2] == theirs[:2]
    assert ours[2][0] == theirs[2][0] == "InvalidArgumentError"
    assert ours[2][1] == theirs[2][1] == "Number of elements in indices (1) and values (2) do not match"


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "features",
    [
        {},
        {"a": "FixedLenFeature(None)"},
        {"a": "FixedLenSequenceFeature([2])"},
        {"a": "FixedLenFeature([2], int32)"},
        {"a": "FixedLenFeature([None, 2])"},
        {"a": "FixedLenFeature([2])", "sp": "SparseFeature('b', 'a')"},
    ],
    ids=str,
)
def test_feature_configs_are_checked_like_tensorflow(features):
    def build(lib, text):
        return eval(  # noqa: S307 - the test's own literals, spelled once for both libraries
            text.replace("FixedLen", "lib.FixedLen")
            .replace("SparseFeature(", "lib.SparseFeature(")
            .replace("])", "], lib.float32)")
            .replace("(None)", "(None, lib.float32)")
            .replace(", int32)", ", lib.int32)")
            .replace("], lib.float32, lib.int32)", "], lib.int32)")
            .replace("'a')", "'a', lib.float32, 10)"),
            {"lib": lib},
        )

    def run(lib):
        try:
            lib.parse_example([GOOD], {k: build(lib, v) for k, v in features.items()})
        except (ValueError, TypeError) as e:
            return type(e).__name__, str(e).split(" for '")[0]
        return "built"

    ours, theirs = both(run)
    assert ours == theirs
    assert ours != "built"


def _sequence_example():
    steps = [Feature(float_list=FloatList(value=[t, -t])) for t in (1.0, 2.0, 3.0)]
    ragged = [Feature(int64_list=Int64List(value=list(range(t)))) for t in (2, 0, 3)]
    return SequenceExampleProto(
        context=Features(feature={"id": Feature(int64_list=Int64List(value=[42]))}),
        feature_lists=FeatureLists(feature_list={"xy": FeatureList(feature=steps), "ids": FeatureList(feature=ragged)}),
    ).SerializeToString()


@pytest.mark.tf_oracle
def test_parse_single_sequence_example_like_tensorflow():
    data = _sequence_example()

    def run(lib):
        context, lists = lib.parse_single_sequence_example(
            data,
            context_features={
                "id": lib.FixedLenFeature([], lib.int64),
                "lang": lib.FixedLenFeature([], lib.string, default_value="en"),
                "tags": lib.VarLenFeature(lib.string),
            },
            sequence_features={
                "xy": lib.FixedLenSequenceFeature([2], lib.float32),
                "ids": lib.VarLenFeature(lib.int64),
                "absent": lib.FixedLenSequenceFeature([], lib.int64, allow_missing=True),
            },
        )
        out = [_run(lib, context), _run(lib, lists)]
        _, required = lib.parse_single_sequence_example(
            data, sequence_features={"absent": lib.FixedLenSequenceFeature([], lib.int64)}
        )
        out.append(_run(lib, required)[0])
        _, wrong = lib.parse_single_sequence_example(
            data, sequence_features={"xy": lib.FixedLenSequenceFeature([3], lib.float32)}
        )
        out.append(_run(lib, wrong))
        return out

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[2] == "InvalidArgumentError"


def test_parse_example_in_a_graph_def_round_trip_and_on_a_fed_batch():
    with tf.Graph().as_default():
        batch = tf.placeholder(tf.string, [None])
        parsed = tf.parse_example(batch, {"a": tf.FixedLenFeature([2], tf.float32, default_value=[0.0, 0.0])})
        assert parsed["a"].shape.as_list() == [None, 2]
        with session(tf) as sess:
            value = sess.run(parsed["a"], {batch: [GOOD, EMPTY]})
        assert value.tolist() == [[1.0, 2.0], [0.0, 0.0]]
        with pytest.raises(ValueError, match="Input serialized must be a scalar"):
            tf.parse_single_example(batch, {"a": tf.FixedLenFeature([2], tf.float32)})
