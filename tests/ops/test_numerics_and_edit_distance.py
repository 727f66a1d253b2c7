"""verify_tensor_all_finite, add_check_numerics_ops, assert_same_float_dtype, bitcast, guarantee_const and
edit_distance against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.sparse.support import real_tf, same, same_error

pytestmark = pytest.mark.tf_oracle


def test_verify_tensor_all_finite():
    same(lambda m: m.verify_tensor_all_finite([1.0, 2.0], "ok"))
    same(lambda m: m.verify_tensor_all_finite(x=m.constant([1.0]), message="ok"))
    assert same_error(lambda m: m.verify_tensor_all_finite(m.log(m.constant([-1.0])), "bad")) == "InvalidArgumentError"


def test_add_check_numerics_ops():
    def build(m, value):
        x = m.placeholder_with_default(m.constant(value), [])
        y = m.sqrt(x, name="root")
        return [y, m.add_check_numerics_ops()]

    same(lambda m: build(m, 4.0))
    assert same_error(lambda m: build(m, -4.0)) == "InvalidArgumentError"

    def with_cond(m):
        m.cond(m.constant(True), lambda: m.constant(1.0), lambda: m.constant(2.0))
        return m.add_check_numerics_ops()

    assert same_error(with_cond) == "ValueError"


def test_assert_same_float_dtype():
    tf1 = real_tf()
    for m in (tf1, tf):
        with m.Graph().as_default():
            a, b = m.constant(1.0, m.float64), m.constant([2.0], m.float64)
            assert m.assert_same_float_dtype([a, b]).name == "float64"
            assert m.assert_same_float_dtype(None, m.float16).name == "float16"
            assert m.assert_same_float_dtype().name == "float32"
            with pytest.raises(ValueError):
                m.assert_same_float_dtype([a, m.constant(1.0)])
            with pytest.raises(ValueError):
                m.assert_same_float_dtype([m.constant(1)])


@pytest.mark.parametrize(
    "value,src,dst",
    [
        ([1.0, -2.5], "float32", "int32"),
        ([258, -1], "int32", "uint8"),
        (3, "int64", "int16"),
        ([[1, 0, 0, 0], [255, 255, 255, 255]], "uint8", "int32"),
        ([1.5], "float64", "float16"),
        ([7, 9], "int16", "int16"),
    ],
)
def test_bitcast(value, src, dst):
    same(lambda m: m.bitcast(m.constant(value, getattr(m, src)), getattr(m, dst)))


def test_bitcast_errors_and_guarantee_const():
    assert same_error(lambda m: m.bitcast(m.constant([1, 2, 3], m.uint8), m.int32)) == "ValueError"
    same(lambda m: m.guarantee_const(m.constant([[1.0, 2.0]])))


def test_edit_distance():
    def build(m, normalize):
        h = m.SparseTensor([[0, 0, 0], [1, 0, 0], [1, 0, 1]], ["a", "b", "c"], [2, 1, 2])
        t = m.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2]], ["a", "b", "d", "c"], [2, 2, 3])
        return m.edit_distance(h, t, normalize=normalize)

    same(lambda m: build(m, True))
    same(lambda m: build(m, False))

    def numbers(m):
        h = m.SparseTensor([[0, 0], [0, 1], [0, 2], [2, 0]], m.constant([1, 2, 3, 4], m.int64), [3, 3])
        t = m.SparseTensor([[0, 0], [0, 1], [1, 0]], m.constant([1, 3, 5], m.int64), [3, 2])
        return m.edit_distance(h, t, name="ed")

    same(numbers)
    assert same_error(lambda m: m.edit_distance([1], m.SparseTensor([[0]], [1], [1]))) == "TypeError"
    mismatch = lambda m: m.edit_distance(m.SparseTensor([[0]], [1], [1]), m.SparseTensor([[0]], [1.0], [1]))  # noqa: E731
    assert same_error(mismatch) == "TypeError"
    unknown = np.array([2, 2], np.int64)
    same(
        lambda m: m.edit_distance(
            m.SparseTensor([[0, 0]], [1], m.placeholder_with_default(unknown, [2])),
            m.SparseTensor([[1, 1]], [1], [2, 2]),
        )
    )
