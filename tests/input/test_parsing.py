"""``parse_example``, ``parse_single_example`` and ``parse_single_sequence_example`` against real TensorFlow: values,
static shapes, op names, the errors of missing and malformed features, and the checks of feature configs."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.protos.example_pb import Feature, FeatureList, FeatureLists, Features, FloatList, Int64List
from dtf_notebook.protos.example_pb import SequenceExample as SequenceExampleProto
from tests.input.support import both, error_message, example, plain, real, session

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
    assert ours == theirs


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


def _names(parsed):
    """``{key: [tensor names]}``: a dense output's one name, a sparse one's three."""
    return {
        k: [t.name for t in ([v.indices, v.values, v.dense_shape] if hasattr(v, "dense_shape") else [v])]
        for k, v in parsed.items()
    }


def _fetch(lib, graph, names, feed):
    with session(lib) as sess:
        return plain(sess.run({k: [graph.get_tensor_by_name(n) for n in v] for k, v in names.items()}, feed))


@pytest.mark.tf_oracle
@pytest.mark.parametrize("which", ["v2", "v1"])
def test_tensorflow_parse_graphs_import_and_run_here(which):
    """A graph TF built (TF 2's ``ParseExampleV2`` with a ``SparseFeature``, or TF 1.x's ``ParseExample``, keys as
    inputs) runs here to TF's values."""
    real_tf = real()
    with real_tf.Graph().as_default() as graph:
        serialized = real_tf.placeholder(real_tf.string, [None], name="records")
        if which == "v2":
            features = {**_features(real_tf, "dense"), "c": real_tf.VarLenFeature(real_tf.string)}
            parsed = real_tf.parse_example(serialized, {**features, **_features(real_tf, "sparse")})
        else:
            ops = real_tf.raw_ops.ParseExample(
                serialized=serialized,
                names=[],
                sparse_keys=["c"],
                dense_keys=["a", "b"],
                dense_defaults=[[9.0, 8.0], real_tf.constant(0, real_tf.int64)],
                sparse_types=[real_tf.string],
                dense_shapes=[[2], []],
            )
            parsed = {"c": real_tf.SparseTensor(ops[0][0], ops[1][0], ops[2][0]), "a": ops[3][0], "b": ops[3][1]}
        names = _names(parsed)
        theirs = _fetch(real_tf, graph, names, {"records:0": [GOOD, EMPTY, GOOD]})
        graph_def = graph.as_graph_def().SerializeToString()
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(tf.GraphDef.FromString(graph_def), name="")
        assert ("ParseExampleV2" if which == "v2" else "ParseExample") in {op.type for op in graph.get_operations()}
        assert _fetch(tf, graph, names, {"records:0": [GOOD, EMPTY, GOOD]}) == theirs


@pytest.mark.tf_oracle
def test_this_packages_parse_graph_runs_in_tensorflow():
    with tf.Graph().as_default() as graph:
        serialized = tf.placeholder(tf.string, [None], name="records")
        features = {**_features(tf, "dense"), **_features(tf, "sparse_2d"), "c": tf.VarLenFeature(tf.string)}
        names = _names(tf.parse_example(serialized, features))
        ours = _fetch(tf, graph, names, {"records:0": [GOOD, EMPTY, GOOD]})
        graph_def = graph.as_graph_def().SerializeToString()
    real_tf = real()
    with real_tf.Graph().as_default() as graph:
        real_tf.import_graph_def(real_tf.GraphDef.FromString(graph_def), name="")
        assert _fetch(real_tf, graph, names, {"records:0": [GOOD, EMPTY, GOOD]}) == ours


@pytest.mark.tf_oracle
def test_sequence_parse_graphs_cross_over():
    """This package's ``ParseSingleSequenceExample`` (TF 1.x's signature) runs in TF, and TF's op runs here."""
    data = _sequence_example()

    def build(lib):
        serialized = lib.placeholder(lib.string, [], name="record")
        context, lists = lib.parse_single_sequence_example(
            serialized,
            context_features={"id": lib.FixedLenFeature([], lib.int64), "tags": lib.VarLenFeature(lib.string)},
            sequence_features={
                "xy": lib.FixedLenSequenceFeature([2], lib.float32),
                "ids": lib.VarLenFeature(lib.int64),
                "absent": lib.FixedLenSequenceFeature([], lib.int64, allow_missing=True),
            },
        )
        return _names({**context, **lists})

    real_tf = real()
    with tf.Graph().as_default() as graph:
        names = build(tf)
        ours = _fetch(tf, graph, names, {"record:0": data})
        graph_def = graph.as_graph_def().SerializeToString()
    with real_tf.Graph().as_default() as graph:
        real_tf.import_graph_def(real_tf.GraphDef.FromString(graph_def), name="")
        assert _fetch(real_tf, graph, names, {"record:0": data}) == ours
    with real_tf.Graph().as_default() as graph:
        serialized = real_tf.placeholder(real_tf.string, [], name="record")
        outs = real_tf.raw_ops.ParseSingleSequenceExample(
            serialized=serialized,
            feature_list_dense_missing_assumed_empty=["absent"],
            context_sparse_keys=["tags"],
            context_dense_keys=["id"],
            feature_list_sparse_keys=["ids"],
            feature_list_dense_keys=["absent", "xy"],
            context_dense_defaults=[real_tf.constant([], real_tf.int64)],
            debug_name="",
            context_sparse_types=[real_tf.string],
            feature_list_dense_types=[real_tf.int64, real_tf.float32],
            context_dense_shapes=[[]],
            feature_list_sparse_types=[real_tf.int64],
            feature_list_dense_shapes=[[], [2]],
        )
        tensors = {"tags": [outs[0][0], outs[1][0], outs[2][0]], "id": [outs[3][0]]}
        tensors.update({"ids": [outs[4][0], outs[5][0], outs[6][0]], "absent": [outs[7][0]], "xy": [outs[7][1]]})
        names = {k: [t.name for t in v] for k, v in tensors.items()}
        theirs = _fetch(real_tf, graph, names, {"record:0": data})
        graph_def = graph.as_graph_def().SerializeToString()
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(tf.GraphDef.FromString(graph_def), name="")
        assert _fetch(tf, graph, names, {"record:0": data}) == theirs
    assert theirs == {k: ours[k] for k in theirs}
