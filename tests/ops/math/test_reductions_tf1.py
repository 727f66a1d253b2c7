"""TF's composite math functions (reduce_logsumexp, count_nonzero, reduce_std/variance, l2_normalize, ...), the
EuclideanNorm op, confusion_matrix and linspace against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.op_check import rand
from tests.ops.oracle import compare, compare_error

pytestmark = pytest.mark.tf_oracle

X = rand(3, 4, seed=11).astype(np.float64)


@pytest.mark.parametrize("axis", [None, 0, [1], -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims):
    for fn in ("reduce_logsumexp", "math.reduce_std", "math.reduce_variance", "math.reduce_euclidean_norm"):

        def build(m, x, fn=fn):
            for part in fn.split("."):
                m = getattr(m, part)
            return m(x, axis=axis, keepdims=keepdims)

        compare(build, [X], rtol=1e-12, grad_rtol=1e-9)


def test_logsumexp_with_infinities_and_old_argument_names():
    x = np.array([[-np.inf, -np.inf], [1000.0, 1000.0]])
    compare(lambda m, t: m.reduce_logsumexp(t, reduction_indices=1, keep_dims=True), [x], grad=False)


@pytest.mark.parametrize("x", [X.round(), np.array([[True, False], [False, False]]), np.array([0, 3, 0], np.int32)])
def test_count_nonzero(x):
    compare(lambda m, t: m.count_nonzero(t), [x], grad=False)
    compare(lambda m, t: m.count_nonzero(t, axis=0, keepdims=True, dtype=m.int32), [x], grad=False)


def test_l2_normalize_zero_fraction_polyval():
    compare(lambda m, t: m.nn.l2_normalize(t, axis=1), [X], rtol=1e-12)
    compare(lambda m, t: m.math.l2_normalize(t, dim=[0, 1], epsilon=1e-3), [X], rtol=1e-12)
    compare(lambda m, t: m.nn.zero_fraction(t), [np.array([[0.0, 1.0], [0.0, 2.0], [3.0, 0.0]])], grad=False)
    compare(lambda m, t: m.math.polyval([np.float64(1.5), t, np.float64(2.0)], X[0]), [X[1]], rtol=1e-12)


def test_log_sigmoid_reciprocal_no_nan_accumulate_n():
    compare(lambda m, t: m.log_sigmoid(t * 30.0), [X], rtol=1e-12)
    compare(lambda m, t: m.math.reciprocal_no_nan(t), [np.array([2.0, 0.0, -0.5])], rtol=1e-12)
    compare(lambda m, a, b: m.accumulate_n([a, b, a]), [X, X + 1.0])


def test_real_imag_conj_angle_of_real_tensors():
    compare(lambda m, t: [m.real(t), m.imag(t), m.conj(t), m.angle(t)], [X], grad=False, rtol=1e-12)


def test_monotonicity():
    for x in ([1, 2, 2], [1, 2, 3], [3], [], [[1, 2], [0, 5]]):
        compare(lambda m, x=x: [m.is_non_decreasing(x), m.is_strictly_increasing(x)], [], static_shapes=False)


def test_confusion_matrix():
    labels = np.array([0, 2, 1, 2, 2], np.int64)
    preds = np.array([[0], [1], [1], [2], [0]], np.int32)
    compare(lambda m: m.confusion_matrix(labels, preds), [], static_shapes=False)
    compare(lambda m: m.math.confusion_matrix(labels, preds[:, 0], num_classes=4, dtype=m.float32), [])
    w = rand(5, seed=2).astype(np.float64)
    compare(lambda m, ww: m.confusion_matrix(labels, preds[:, 0], 3, weights=ww, dtype=m.float64), [w], grad=False)
    assert compare_error(lambda m: m.confusion_matrix(labels, preds[:, 0], num_classes=2), []) == "InvalidArgumentError"


@pytest.mark.parametrize("num", [0, 1, 2, 7])
def test_linspace(num):
    compare(lambda m: m.linspace(-1.0, 3.0, num), [])
    compare(lambda m: m.lin_space(np.float64(2.0), np.float64(-1.0), num), [])


def test_linspace_with_tensor_bounds_and_axis():
    compare(lambda m: m.linspace([0.0, 1.0], [[1.0, 3.0], [2.0, 2.0]], 4, axis=-1), [], static_shapes=False)
    compare(lambda m: m.linspace([0.0, 1.0], 5.0, 3, axis=0), [], static_shapes=False)


def test_arg_max_arg_min():
    compare(lambda m, t: [m.arg_max(t, 1), m.arg_min(t, 0, output_type=m.int32)], [X], grad=False)


def test_euclidean_norm_integers():
    compare(lambda m: m.math.reduce_euclidean_norm([[3, 4], [6, 8]], 1), [])
