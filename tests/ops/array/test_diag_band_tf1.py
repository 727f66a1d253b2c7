"""matrix_diag/matrix_diag_part/matrix_set_diag (bands and alignments), matrix_band_part, diag/diag_part and eye
against real TensorFlow: values, static shapes and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.op_check import rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

M = rand(2, 3, 4, seed=1).astype(np.float64)
ALIGNS = ["RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"]


@pytest.mark.parametrize("k", [0, 1, -2, (-1, 2), (1, 3), (-2, -1)])
@pytest.mark.parametrize("align", ALIGNS)
def test_matrix_diag_part_bands(k, align):
    compare(lambda m, x: m.matrix_diag_part(x, k=k, padding_value=9, align=align), [M])


@pytest.mark.parametrize("k", [0, 2, -1, (-1, 1), (0, 2)])
@pytest.mark.parametrize("align", ["RIGHT_LEFT", "LEFT_RIGHT"])
def test_matrix_diag_and_set_diag_bands(k, align):
    with_diags = np.asarray(M)
    with tf.Graph().as_default(), tf.Session() as sess:
        d = sess.run(tf.matrix_diag_part(M, k=k, align=align))
    compare(lambda m, x: m.matrix_set_diag(x, d, k=k, align=align), [with_diags])
    compare(lambda m, x: m.matrix_set_diag(with_diags, x, k=k, align=align), [d])
    compare(lambda m, x: m.matrix_diag(x, k=k, align=align), [d], static_shapes=False)
    compare(lambda m, x: m.matrix_diag(x, k=k, num_cols=7, padding_value=-1, align=align), [d])
    assert compare_error(lambda m, x: m.matrix_diag(x, k=k, num_rows=6, num_cols=7), [d]) == "ValueError"


def test_matrix_diag_default_square():
    compare(lambda m, x: m.matrix_diag(x), [rand(2, 3, seed=4).astype(np.float64)])
    compare(lambda m, x: m.linalg.diag(x), [rand(3, seed=4).astype(np.float64)])


@pytest.mark.parametrize("lower,upper", [(0, -1), (-1, 0), (1, 1), (0, 0), (-1, -1), (2, 0)])
def test_matrix_band_part(lower, upper):
    compare(lambda m, x: m.matrix_band_part(x, lower, upper), [M])
    compare(lambda m, x: m.linalg.band_part(x, np.int32(lower), np.int32(upper)), [M])


def test_diag_and_diag_part_any_rank():
    compare(lambda m, x: m.diag(x), [rand(2, 3, seed=5).astype(np.float64)])
    compare(lambda m, x: m.diag_part(x), [rand(2, 3, 2, 3, seed=6).astype(np.float64)])


@pytest.mark.parametrize("args", [(3,), (2, 4), (3, None, [2]), (2, 3, [2, 1])], ids=str)
def test_eye(args):
    rows, cols, batch = (list(args) + [None, None])[:3]
    compare(lambda m: m.eye(rows, cols, batch_shape=batch), [])
    compare(lambda m: m.eye(rows, cols, batch_shape=batch, dtype=m.int32), [])


def test_eye_with_tensor_sizes():
    with tf.Graph().as_default(), tf.Session() as sess:
        n = tf.placeholder(tf.int32, [])
        np.testing.assert_array_equal(sess.run(tf.eye(n, 2), {n: 3}), np.eye(3, 2, dtype=np.float32))
