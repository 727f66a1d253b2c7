"""tf.bitwise, tf.floor_div, tf.to_bfloat16 and tf.manip against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.oracle import compare

pytestmark = pytest.mark.tf_oracle

A = np.array([[12, -7, 0], [255, 1, -128]], np.int32)
B = np.array([6, 3, 9], np.int32)


@pytest.mark.parametrize("op", ["bitwise_and", "bitwise_or", "bitwise_xor"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_bitwise_binary(op, dtype):
    compare(lambda m, a, b: getattr(m.bitwise, op)(a, b), [A.astype(dtype), B.astype(dtype)])


@pytest.mark.parametrize("op", ["left_shift", "right_shift"])
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8])
def test_shifts_including_out_of_range(op, dtype):
    shifts = np.array([1, 9, -1], dtype if dtype != np.uint8 else np.int8).astype(dtype)
    compare(lambda m, a, s: getattr(m.bitwise, op)(a, s), [A.astype(dtype), shifts])


def test_invert_floor_div_to_bfloat16():
    compare(lambda m, a: m.bitwise.invert(a), [A])
    compare(lambda m, a: m.bitwise.invert(a), [A.astype(np.uint8)])
    compare(lambda m, a, b: m.floor_div(a, b), [A, B])
    compare(lambda m, x: m.cast(m.to_bfloat16(x), m.float32), [np.array([1.5, -2.25, 3.0e5], np.float32)])


def test_manip_namespace():
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    compare(lambda m, t: m.manip.roll(m.manip.reverse(t, [1]), 1, 0), [x])
    compare(lambda m, t: m.manip.gather_nd(m.manip.tile(m.manip.reshape(t, [4, 3]), [1, 2]), [[1, 5]]), [x])
