"""einsum (ellipses, implicit outputs, diagonals, labels summed in one input) and tensordot against real
TensorFlow: values, static shapes and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import check_gradient, rand
from tests.ops.oracle import compare

pytestmark = pytest.mark.tf_oracle


def r(*shape, seed=0):
    return rand(*shape, seed=seed).astype(np.float64)


CASES = [
    ("ij,jk->ik", [r(2, 3, seed=1), r(3, 4, seed=2)]),
    ("bij,bjk->bik", [r(2, 2, 3, seed=1), r(2, 3, 4, seed=2)]),
    ("ij->ji", [r(2, 3, seed=3)]),
    ("ij->", [r(2, 3, seed=3)]),
    ("i,i->", [r(4, seed=4), r(4, seed=5)]),
    ("i,j->ij", [r(3, seed=4), r(2, seed=5)]),
    ("ij,jk", [r(2, 3, seed=1), r(3, 4, seed=2)]),
    ("ijk,ik->j", [r(2, 3, 4, seed=6), r(2, 4, seed=7)]),
    ("...ij,...jk->...ik", [r(5, 2, 3, seed=8), r(3, 4, seed=9)]),
    ("...ij,...jk->...ik", [r(2, 1, 2, 3, seed=8), r(4, 3, 2, seed=9)]),
    ("i...,i...->...", [r(3, 2, seed=1), r(3, 2, seed=2)]),
    ("ii->i", [r(3, 3, seed=10)]),
    ("ii", [r(3, 3, seed=10)]),
    ("bii,bj->bj", [r(2, 3, 3, seed=11), r(2, 4, seed=12)]),
    ("abc,cd,de->ae", [r(2, 3, 4, seed=13), r(4, 2, seed=14), r(2, 3, seed=15)]),
]


@pytest.mark.parametrize("equation,inputs", CASES, ids=[c[0] for c in CASES])
def test_einsum(equation, inputs):
    compare(lambda m, *xs: m.einsum(equation, *xs), inputs, rtol=1e-12, grad_rtol=1e-10)


def test_einsum_names_and_errors():
    with tf.Graph().as_default():
        y = tf.einsum("ij->j", tf.zeros([2, 3]), name="colsum")
        assert y.op.name == "colsum/Einsum" and y.shape.as_list() == [3]
        with pytest.raises(ValueError):
            tf.einsum("ij,jk->ik", tf.zeros([2, 3]))
        with pytest.raises(ValueError):
            tf.einsum("ij->i", tf.zeros([2, 3, 4]))


def test_einsum_second_order_gradient():
    check_gradient(lambda a, b: tf.gradients(tf.einsum("ij,jk->", a, b) ** 2, a)[0], [r(2, 3), r(3, 2, seed=1)])


@pytest.mark.parametrize("axes", [1, 2, 0, [[1], [0]], [[0, 2], [2, 0]], ([2, 1], [1, 2])], ids=str)
def test_tensordot(axes):
    a, b = r(2, 3, 4, seed=16), r(4, 3, 2, seed=17)
    if axes == 1:
        b = r(4, 5, seed=18)
    if axes == [[1], [0]]:
        b = r(3, 5, seed=19)
    if axes == 2:
        b = r(3, 4, 5, seed=20)
    if axes == ([2, 1], [1, 2]):
        b = r(5, 4, 3, seed=21)
    compare(lambda m, x, y: m.tensordot(x, y, axes), [a, b], rtol=1e-12, grad_rtol=1e-10)


def test_tensordot_with_unknown_shapes():
    a, b = r(2, 3, 4, seed=16), r(4, 5, seed=18)
    with tf.Graph().as_default(), tf.Session() as sess:
        pa = tf.placeholder(tf.float64, [None, 3, 4])
        pb = tf.placeholder(tf.float64, None)
        got = sess.run(tf.linalg.tensordot(pa, pb, [[2], [0]]), {pa: a, pb: b})
    np.testing.assert_allclose(got, np.tensordot(a, b, [[2], [0]]))
