"""Two-input elementwise ops fed operands whose shapes do not broadcast (unknown until run time) raise TF's
``InvalidArgumentError: Incompatible shapes: [3] vs. [2]`` -- the wording TF1 tests match on (``tf.test``'s
``assertRaisesIncompatibleShapesError``) -- compared with real TensorFlow."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.ops.oracle import real_tf

pytestmark = pytest.mark.tf_oracle

FLOAT_OPS = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "truediv",
    "floordiv",
    "floormod",
    "pow",
    "maximum",
    "minimum",
    "squared_difference",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "atan2",
    "xlogy",
    "xdivy",
    "divide_no_nan",
    "igamma",
    "zeta",
]
SHAPES = [([3], [2]), ([2, 3, 4], [5, 1]), ([4, 1], [2, 3])]


def _incompatible(m: Any, fn: Any, a: np.ndarray, b: np.ndarray) -> tuple[str, str]:
    """The error class and its 'Incompatible shapes' line when ``fn`` runs on placeholders fed ``a`` and ``b``."""
    with m.Graph().as_default():
        x, y = m.placeholder(m.as_dtype(a.dtype)), m.placeholder(m.as_dtype(b.dtype))
        out = fn(x, y)
        with m.Session() as sess:
            with pytest.raises(Exception) as info:  # noqa: PT011 - both libraries' classes are compared below
                sess.run(out, {x: a, y: b})
    found = re.search(r"Incompatible shapes: \[[\d,]*\] vs\. \[[\d,]*\]", str(info.value))
    return type(info.value).__name__, found.group(0) if found else str(info.value)


def _check(op: str, a: np.ndarray, b: np.ndarray, namespace: str | None = "math") -> None:
    tf1 = real_tf()
    module = lambda m: getattr(m, namespace) if namespace else m
    theirs = _incompatible(tf1, getattr(module(tf1), op), a, b)
    mine = _incompatible(dtf, getattr(module(dtf), op), a, b)
    assert theirs[0] == "InvalidArgumentError"
    assert mine == theirs


@pytest.mark.parametrize("op", FLOAT_OPS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_float_ops(op, shapes):
    _check(op, np.ones(shapes[0], np.float32), np.ones(shapes[1], np.float32))


@pytest.mark.parametrize("op", ["add", "multiply", "floordiv", "floormod", "maximum", "equal", "truncatediv"])
def test_integer_ops(op):
    _check(op, np.ones([3], np.int32), np.ones([2], np.int32), namespace=None)


@pytest.mark.parametrize("op", ["bitwise_and", "left_shift"])
def test_bitwise_ops(op):
    _check(op, np.ones([2, 2], np.int32), np.ones([3], np.int32), namespace="bitwise")


@pytest.mark.parametrize("op", ["logical_and", "logical_or"])
def test_logical_ops(op):
    _check(op, np.ones([3], bool), np.ones([2], bool))


def test_string_add_and_equal():
    a, b = np.array([b"a", b"b", b"c"], object), np.array([b"x", b"y"], object)
    for op in ("add", "equal"):
        _check(op, a, b)


def test_broadcastable_operands_still_run():
    with dtf.Graph().as_default():
        x, y = dtf.placeholder(dtf.float32), dtf.placeholder(dtf.float32)
        with dtf.Session() as sess:
            got = sess.run(x * y, {x: np.ones([4, 1], np.float32), y: np.arange(3, dtype=np.float32)})
    np.testing.assert_array_equal(got, np.tile(np.arange(3, dtype=np.float32), (4, 1)))
