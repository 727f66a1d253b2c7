"""read_file / write_file / timestamp and serialize_tensor / parse_tensor against real TensorFlow (bytes both ways)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.sparse.support import real_tf, same, same_error

oracle = pytest.mark.tf_oracle


@oracle
def test_read_and_write_file_match_tensorflow(tmp_path):
    tf1 = real_tf()
    for m in (tf1, tf):
        path = tmp_path / m.__name__.replace(".", "_") / "sub" / "data.bin"
        with m.Graph().as_default(), m.Session() as sess:
            sess.run(m.write_file(str(path), b"\x00abc\xff"))
            assert sess.run(m.read_file(str(path))) == b"\x00abc\xff"
    assert same_error(lambda m: m.read_file(str(tmp_path / "missing"))) == "NotFoundError"
    assert same_error(lambda m: m.write_file(str(tmp_path / "f"), ["a", "b"])) == "ValueError"


def test_file_roots_are_enforced(tmp_path):
    from dtf_notebook.runtime.file_access import FileAccess

    os.makedirs(tmp_path / "allowed")
    access = FileAccess([str(tmp_path / "allowed")])
    with pytest.raises(tf.errors.PermissionDeniedError):
        access.check(str(tmp_path / "elsewhere" / "f"), "write")
    assert access.check(str(tmp_path / "allowed" / "f"), "write").endswith("f")


def test_timestamp_is_stateful_and_runs():
    with tf.Graph().as_default(), tf.Session() as sess:
        t = tf.timestamp()
        first, second = sess.run(t), sess.run(t)
    assert t.dtype == tf.float64 and t.shape.as_list() == []
    assert 1.5e9 < first <= second


SERIALIZE_VALUES = [
    (np.arange(6, dtype=np.float32).reshape(2, 3), "float32"),
    (np.array(3, np.int64), "int64"),
    (np.array([True, False]), "bool"),
    (np.array([b"a", b"", b"xyz"], dtype=object), "string"),
    (np.array([[1 + 2j]], np.complex64), "complex64"),
    (np.array([0.5, 2.0], np.float16), "float16"),
    (np.zeros((0, 2), np.float64), "float64"),
]


@oracle
@pytest.mark.parametrize("value,dtype", SERIALIZE_VALUES)
def test_serialize_tensor_bytes_equal_tensorflow(value, dtype):
    same(lambda m: m.serialize_tensor(m.constant(value, getattr(m, dtype))))
    same(
        lambda m: m.parse_tensor(m.serialize_tensor(m.constant(value, getattr(m, dtype))), getattr(m, dtype)),
        static=False,
    )


@oracle
def test_parse_tensor_reads_tensorflow_protos_and_refuses_bad_bytes():
    tf1 = real_tf()
    for value in ([1.5], [[1, 2]], ["x", "yz"], 7.0):
        data = tf1.make_tensor_proto(value).SerializeToString()  # typed *_val lists, not tensor_content
        dtype = tf1.as_dtype(tf1.make_tensor_proto(value).dtype).name
        same(lambda m, d=data, t=dtype: m.parse_tensor(d, getattr(m, t)), static=False)
    assert same_error(lambda m: m.parse_tensor(m.serialize_tensor([1.0]), m.int32)) == "InvalidArgumentError"
    assert same_error(lambda m: m.parse_tensor(b"\xff\xff", m.int32)) == "InvalidArgumentError"
