"""The uniform-layout fast path of parse_example (ops/io/example_layout.py) gives exactly what parsing each record
with protobuf gives, takes the slow path whenever records differ in layout, and matches TF's parse_example."""

from __future__ import annotations

import numpy as np
import pytest

from dtf_notebook.framework import dtypes
from dtf_notebook.ops.io import example_parser
from dtf_notebook.ops.io.example_layout import parse_uniform
from dtf_notebook.ops.io.example_parser import Dense, parse_examples
from dtf_notebook.protos.example_pb import BytesList, Example, Feature, Features, FloatList, Int64List


def _record(**features) -> bytes:
    out = {}
    for key, value in features.items():
        if isinstance(value, bytes):
            out[key] = Feature(bytes_list=BytesList(value=[value]))
        elif all(isinstance(v, int) for v in value):
            out[key] = Feature(int64_list=Int64List(value=value))
        else:
            out[key] = Feature(float_list=FloatList(value=value))
    return Example(features=Features(feature=out)).SerializeToString()


def _both(records, dense, monkeypatch):
    fast = parse_examples(records, None, False, dense, [])[0]
    with monkeypatch.context() as m:
        m.setattr(example_parser, "_uniform_dense", lambda *a: None)
        slow = parse_examples(records, None, False, dense, [])[0]
    for a, b in zip(fast, slow):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    return fast


def test_uniform_records_parse_to_protobufs_values(monkeypatch):
    rng = np.random.default_rng(0)
    records = [
        _record(x=rng.standard_normal(12).astype(np.float32).tolist(), y=[int(v) for v in rng.integers(0, 100, 3)])
        for _ in range(40)
    ]
    dense = [Dense("x", dtypes.float32, (3, 4), None), Dense("y", dtypes.int64, (3,), None)]
    assert parse_uniform(records, [("x", "float", 12), ("y", "int", 3)]) is not None  # the fast path was taken
    x, y = _both(records, dense, monkeypatch)
    assert x.shape == (40, 3, 4) and y.shape == (40, 3)


def test_large_and_negative_int64_of_one_byte_length():
    values = [-(2**63), -1, -(2**40), -5]  # every one a 10-byte varint: one layout
    records = [_record(y=[v]) for v in values]
    (y,) = parse_uniform(records, [("y", "int", 1)])
    assert y.ravel().tolist() == values


@pytest.mark.parametrize(
    "records",
    [
        # The same length and tags, but the varint boundaries differ: [1, 200] against [200, 1].
        [_record(y=[1, 200]), _record(y=[200, 1])],
        # Another feature's bytes differ (a wanted feature's offsets would still hold, but the check is strict).
        [_record(x=[1.0], s=b"ab"), _record(x=[2.0], s=b"cd")],
        # Another number of values.
        [_record(x=[1.0, 2.0], y=[1]), _record(x=[3.0], y=[12])],
    ],
)
def test_records_of_other_layouts_take_protobufs_path(records, monkeypatch):
    wanted, dense = [], []
    example = Example.FromString(records[0]).features.feature
    for key in ("x", "y"):
        if key in example:
            kind = "int" if example[key].HasField("int64_list") else "float"
            count = len(getattr(example[key], "int64_list" if kind == "int" else "float_list").value)
            wanted.append((key, kind, count))
            dense.append(Dense(key, dtypes.int64 if kind == "int" else dtypes.float32, (count,), None))
    assert parse_uniform(records, wanted) is None
    if all(len(Example.FromString(r).features.feature["x"].float_list.value) == 1 for r in records if b"x" in r):
        _both(records, [d for d in dense if d.key != "y" or records[0].count(b"y") == 1], monkeypatch)


def test_a_missing_feature_gives_tfs_error_from_the_slow_path():
    from dtf_notebook import errors

    records = [_record(x=[1.0]), _record(x=[2.0])]
    with pytest.raises(errors.InvalidArgumentError, match="y"):
        parse_examples(records, None, False, [Dense("y", dtypes.int64, (), None)], [])


@pytest.mark.tf_oracle
def test_parse_example_of_uniform_records_matches_tensorflow():
    tf = pytest.importorskip("tensorflow")
    import dtf_notebook.compat.v1 as dtf

    rng = np.random.default_rng(1)
    records = [_record(x=rng.random(784).astype(np.float32).tolist(), y=[int(rng.integers(10))]) for _ in range(100)]
    features = {"x": ([784], "float32"), "y": ([], "int64")}
    results = []
    for lib in (dtf, tf.compat.v1):
        graph = lib.Graph()
        with graph.as_default():
            spec = {k: lib.FixedLenFeature(shape, getattr(lib, dt)) for k, (shape, dt) in features.items()}
            parsed = lib.parse_example(lib.constant(records), spec)
            with lib.Session(graph=graph) as sess:
                results.append(sess.run(parsed))
    ours, theirs = results
    for key in features:
        assert ours[key].dtype == theirs[key].dtype
        np.testing.assert_array_equal(ours[key], theirs[key])


def test_multi_byte_varints_of_many_records_decode_as_protobuf(monkeypatch):
    rng = np.random.default_rng(3)
    # Every value of position i has the same varint length in every record (one layout): 1, 3 and 9 bytes.
    lows = [0, 2**14, 2**56]
    records = [_record(y=[int(rng.integers(low, low * 2 or 100)) for low in lows] * 4) for _ in range(50)]
    assert parse_uniform(records, [("y", "int", 12)]) is not None
    _both(records, [Dense("y", dtypes.int64, (12,), None)], monkeypatch)


def test_one_record_and_repeated_entry_fields_take_protobufs_path():
    from dtf_notebook.lib.io.varint import read_varint  # noqa: F401 - the reader both paths share

    def framed(data: bytes) -> bytes:
        size, out = len(data), bytearray()
        while size > 0x7F:
            out.append((size & 0x7F) | 0x80)
            size >>= 7
        return bytes(out) + bytes([size]) + data

    first = Feature(float_list=FloatList(value=[1.0])).SerializeToString()
    second = Feature(float_list=FloatList(value=[2.0])).SerializeToString()
    entry = b"\x0a" + framed(b"x") + b"\x12" + framed(first) + b"\x12" + framed(second)  # two `value` fields
    record = b"\x0a" + framed(b"\x0a" + framed(entry))
    assert parse_uniform([record, record], [("x", "float", 1)]) is None
    (merged,), _ = parse_examples([record, record], None, False, [Dense("x", dtypes.float32, (2,), None)], [])
    assert merged.tolist() == [[1.0, 2.0], [1.0, 2.0]]  # protobuf merges the two lists, as TF's parser


def test_a_remembered_layout_is_used_only_for_records_that_share_it(monkeypatch):
    # The layout found in one batch serves the next ones whose first record has the same bytes outside the values;
    # varint boundaries (inside the values) are checked in every batch all the same.
    wanted, dense = [("y", "int", 2)], [Dense("y", dtypes.int64, (2,), None)]
    assert parse_uniform([_record(y=[1, 200]), _record(y=[5, 300])], wanted)[0].tolist() == [[1, 200], [5, 300]]
    assert parse_uniform([_record(y=[200, 1]), _record(y=[300, 5])], wanted)[0].tolist() == [[200, 1], [300, 5]]
    assert parse_uniform([_record(y=[1, 200]), _record(y=[200, 1])], wanted) is None
    assert parse_uniform([_record(y=[200, 1]), _record(y=[1, 200])], wanted) is None
    small = [_record(y=[3, 4]), _record(y=[5, 127])]  # one byte per value
    assert parse_uniform(small, wanted)[0].tolist() == [[3, 4], [5, 127]]
    assert parse_uniform([_record(y=[3, 4]), _record(y=[200])], [("y", "int", 2)]) is None
    _both([_record(y=[7, 8]), _record(y=[9, 10]), _record(y=[11, 12])], dense, monkeypatch)
    floats = [_record(x=[1.0, 2.0], y=[1, 2]), _record(x=[3.0, 4.0], y=[3, 4])]
    x, y = parse_uniform(floats, [("x", "float", 2), ("y", "int", 2)])
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and y.tolist() == [[1, 2], [3, 4]]
