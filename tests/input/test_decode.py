"""``decode_csv`` and ``decode_raw`` against real TensorFlow: values, static shapes, op names and error messages."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.input.support import both, error_message, session

_NUMBERS = [
    "1.5",
    " 2.5 ",
    "1e3",
    "+3",
    "-4",
    "inf",
    "-Inf",
    "nan",
    "infinity",
    "0x10",
    "0X1p3",
    ".5",
    "5.",
    "1e400",
    "1e-50",
    "3.4028236e38",
    "\t3",
    "00012",
    "1e+5",
    "1.5abc",
    "abc",
    "1_0",
    "1e",
    "  ",
    "--1",
    "1.2.3",
    "e5",
]
_INTS = [
    "12",
    " 12 ",
    "+12",
    "-12",
    "2147483647",
    "2147483648",
    "-2147483649",
    "1.0",
    "0x10",
    "1_0",
    "007",
    "9223372036854775807",
    "9223372036854775808",
    "- 5",
    "5a",
]


def _decode(lib, records, defaults, **kwargs):
    try:
        out = lib.decode_csv(records, defaults, **kwargs)
    except ValueError as e:
        return "ValueError", str(e).split(".")[0]
    with session(lib) as sess:
        try:
            return [v.tolist() for v in sess.run(out)], [t.shape.as_list() for t in out], out[0].op.name
        except lib.errors.OpError as e:
            return type(e).__name__, error_message(e)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_numbers_parse_like_tensorflow(dtype):
    texts = _NUMBERS if dtype.startswith("float") else _INTS

    def run(lib):
        results = []
        for text in texts:
            record = f'"{text}"' if "," in text else text
            results.append(_decode(lib, [record], [lib.constant([-7], getattr(lib, dtype))]))
        return results

    ours, theirs = both(run)
    for text, a, b in zip(texts, ours, theirs):
        if a[0] != "InvalidArgumentError" and np.isnan(np.asarray(a[0][0], dtype=float)).all():
            assert np.isnan(b[0][0]).all(), text
        else:
            assert a == b, text


_RECORDS = [
    'a,1,2.5,"x"',
    '"q,""uoted""",2,,',
    ",3,1e2,NA",
    '"multi\nline",4,0.5,y',
    "b,,NA,z",
]


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"na_value": "NA"},
        {"select_cols": [1, 3]},
        {"select_cols": [0, 2], "na_value": "NA"},
    ],
    ids=str,
)
def test_records_decode_like_tensorflow(kwargs):
    def run(lib):
        defaults = [["?"], [-1], [-1.0], ["none"]]
        if "select_cols" in kwargs:
            defaults = [defaults[c] for c in kwargs["select_cols"]]
        records = lib.constant(np.array(_RECORDS, dtype=object).reshape(5, 1))
        return _decode(lib, records, defaults, **kwargs)

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    ("records", "defaults", "kwargs"),
    [
        (["1,2"], [[0], [0], [0]], {}),
        (["1,2,3"], [[0], [0]], {}),
        (["1,,3"], [[0], [], [0]], {}),
        (['1,"a"b,3'], [[0], [""], [0]], {}),
        (['1,"ab,3'], [[0], [""], [0]], {}),
        (['1,a"b,3'], [[0], [""], [0]], {}),
        (['1,a"b,3'], [[0], [""], [0]], {"use_quote_delim": False}),
        (["1;2"], [[0], [0]], {"field_delim": ";"}),
        (["1|2|"], [[0], [0], ["end"]], {"field_delim": "|"}),
        ([""], [[0]], {}),
        (["x,1"], [[0], [0]], {}),
        (["1,2"], [[0], [0, 1]], {}),
    ],
)
def test_malformed_records_fail_like_tensorflow(records, defaults, kwargs):
    ours, theirs = both(lambda lib: _decode(lib, records, defaults, **kwargs))
    assert ours == theirs


@pytest.mark.tf_oracle
def test_select_cols_checks_like_tensorflow():
    def run(lib):
        out = []
        for cols, defaults in (([1, 0], [[0], [0]]), ([-1, 0], [[0], [0]]), ([0], [[0], [0]])):
            try:
                lib.decode_csv(["1,2"], defaults, select_cols=cols)
            except ValueError as e:
                out.append(str(e))
        return out

    ours, theirs = both(run)
    assert ours == theirs and len(ours) == 3


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    ("data", "dtype", "little_endian"),
    [
        ([b"\x01\x00\x02\x00", b"\xff\xff\x00\x80"], "int16", True),
        ([b"\x01\x00\x02\x00", b"\xff\xff\x00\x80"], "int16", False),
        ([np.array([1.5, -2.25], np.float32).tobytes()], "float32", True),
        ([np.array([1.5, -2.25], ">f8").tobytes()], "float64", False),
        ([b"abc", b"xyz"], "uint8", True),
        ([b"\x01\x00\x00\x00\x00\x00\x00\x80"], "int64", True),
        ([b"ab", b"abc"], "uint8", True),
        ([b"abc"], "float32", True),
        ([], "int32", True),
    ],
)
def test_decode_raw_like_tensorflow(data, dtype, little_endian):
    def run(lib):
        records = lib.constant(np.array(data, dtype=object), dtype=lib.string, shape=[len(data)])
        out = lib.decode_raw(records, getattr(lib, dtype), little_endian=little_endian)
        with session(lib) as sess:
            try:
                value = sess.run(out)
                return value.tolist(), str(value.dtype), out.shape.as_list(), out.op.name
            except lib.errors.OpError as e:
                return type(e).__name__, error_message(e)

    ours, theirs = both(run)
    assert ours == theirs


@pytest.mark.tf_oracle
def test_decode_raw_with_fixed_length_like_tensorflow():
    def run(lib):
        # TF 2's tf.io.decode_raw (TF1's has no fixed_length)
        decode = lib.io.decode_raw if lib is tf else pytest.importorskip("tensorflow").io.decode_raw
        out = decode([b"\x01\x02\x03", b"\x04"], lib.uint8, fixed_length=2)
        with session(lib) as sess:
            return sess.run(out).tolist(), out.shape.as_list()

    ours, theirs = both(run)
    assert ours == theirs == ([[1, 2], [4, 0]], [2, 2])
