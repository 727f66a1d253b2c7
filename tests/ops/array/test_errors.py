"""Array ops' errors: while building (ValueError/TypeError) and at run time (InvalidArgumentError)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from tests.ops.array.support import run, unknown

BUILD_ERRORS = [
    (lambda: tf.reshape(tf.zeros([6]), [4]), ValueError, r"Cannot reshape a tensor with 6 elements to shape \[4\]"),
    (lambda: tf.reshape(tf.zeros([6]), [4, -1]), ValueError, "evenly divisible by 4 but is 6"),
    (lambda: tf.reshape(tf.zeros([6]), [-1, -1]), ValueError, "Only one input size may be -1, not both 0 and 1"),
    (lambda: tf.reshape(tf.zeros([6]), [-2, 3]), ValueError, "Invalid value in tensor used for shape: -2"),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0]), ValueError, "Dimension must be 2 but is 1"),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0, 0]), ValueError, r"1 is missing from \{0,0\}"),
    (lambda: tf.transpose(tf.zeros([2, 3]), [0, 2]), ValueError, "perm dim 2 is out of range of input rank 2"),
    (
        lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 4])], 0),
        ValueError,
        "Dimension 1 in both shapes must be equal, but are 3 and 4",
    ),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2])], 0), ValueError, "Shape must be rank 2 but is rank 1"),
    (lambda: tf.concat([tf.zeros([2, 3]), tf.zeros([2, 3])], 2), ValueError, "Shape must be at least rank 3"),
    (lambda: tf.concat([tf.zeros([2]), tf.zeros([2], tf.int32)], 0), TypeError, r"have types \[float32, int32\]"),
    (lambda: tf.stack([tf.zeros([2, 3]), tf.zeros([2, 4])]), ValueError, "but are 3 and 4"),
    (lambda: tf.stack([tf.zeros([2, 3]), tf.zeros([2, 3])], axis=3), ValueError, r"`axis` = 3 not in range \[-3, 3\)"),
    (lambda: tf.unstack(tf.placeholder(tf.float32, [None, 3])), ValueError, r"Cannot infer argument `num`"),
    (lambda: tf.unstack(tf.zeros([2, 3]), num=3), ValueError, "Dimension must be 3 but is 2"),
    (lambda: tf.split(tf.zeros([4, 3]), 3), ValueError, "evenly divisible by 3 but is 4"),
    (lambda: tf.split(tf.zeros([4, 3]), [1, 5]), ValueError, r"can't split axis of size 4 into pieces of size \[1,5\]"),
    (lambda: tf.split(tf.zeros([4, 3]), [1, -1, -1]), ValueError, "size_splits can only have one -1"),
    (lambda: tf.split(tf.zeros([4, 3]), 2, axis=2), ValueError, r"given by scalar input 2 must be in range \[-2, 2\)"),
    (lambda: tf.split(tf.zeros([4]), tf.placeholder(tf.int32, [None])), ValueError, "Cannot infer argument `num`"),
    (lambda: tf.slice(tf.zeros([4, 3]), [5, 0], [-1, 1]), ValueError, r"Expected begin\[0\] in \[0, 4\], but got 5"),
    (lambda: tf.slice(tf.zeros([4, 3]), [1, 0], [4, 1]), ValueError, r"Expected size\[0\] in \[0, 3\], but got 4"),
    (lambda: tf.slice(tf.zeros([4, 3]), [1], [1]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.zeros([3, 4])[5], ValueError, "slice index 5 of dimension 0 out of bounds"),
    (lambda: tf.zeros([3, 4])[-4], ValueError, "slice index -1 of dimension 0 out of bounds"),
    (lambda: tf.zeros([3, 4])[1, 2, 3], ValueError, "Index out of range using input dim 2; input has only 2 dims"),
    (lambda: tf.zeros([3, 4])[::0], ValueError, r"strides\[0\] must be non-zero"),
    (lambda: tf.gather(tf.zeros([3, 4]), [0, 1], axis=2), ValueError, "Shape must be at least rank 3"),
    (lambda: tf.gather(tf.zeros([3, 4]), [0.5]), TypeError, "parameter 'indices' has DataType float32"),
    (lambda: tf.expand_dims(tf.zeros([3, 4]), 3), ValueError, r"dim 3 not in the interval \[-3, 2\]"),
    (lambda: tf.expand_dims(tf.zeros([3]), 0, dim=0), ValueError, "Cannot specify both 'axis' and 'dim'"),
    (lambda: tf.squeeze(tf.zeros([3, 1]), [0]), ValueError, r"Can not squeeze dim\[0\], expected a dimension of 1"),
    (lambda: tf.squeeze(tf.zeros([3, 1]), [2]), ValueError, r"squeeze_dims\[0\] not in \[-2,2\)"),
    (lambda: tf.tile(tf.zeros([3, 1]), [2]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.tile(tf.zeros([3, 1]), [2, -1]), ValueError, r"Expected multiples\[1\] >= 0, but got -1"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[1, 1], [-1, 0]]), ValueError, "Paddings must be non-negative"),
    (
        lambda: tf.pad(tf.zeros([3, 1]), [[3, 1], [0, 0]], "REFLECT"),
        ValueError,
        "paddings must be less than the dimension size: 3, 1 not less than 3",
    ),
    (
        lambda: tf.pad(tf.zeros([3, 1]), [[4, 1], [0, 0]], "SYMMETRIC"),
        ValueError,
        "paddings must be no greater than the dimension size: 4, 1 greater than 3",
    ),
    (lambda: tf.pad(tf.zeros([3, 1]), [[1, 1], [0, 0]], "FOO"), ValueError, "Received `mode` = FOO"),
    (lambda: tf.pad(tf.zeros([3, 1]), [[1, 1]]), ValueError, "Shape must be rank 1 but is rank 2"),
    (lambda: tf.fill([2, 3], [1.0]), ValueError, "Shape must be rank 0 but is rank 1"),
    (lambda: tf.fill([2, -3], 1.0), ValueError, "Invalid value in tensor used for shape: -3"),
    (lambda: tf.one_hot([1, 2], 3, on_value=1.0, off_value=0), TypeError, "of on_value does not match"),
    (lambda: tf.one_hot([1.0, 2.0], 3), TypeError, "parameter 'indices' has DataType float32"),
    (lambda: tf.one_hot([1, 2], -1), ValueError, "must be non-negative but is -1"),
    (lambda: tf.one_hot([1, 2], 3, axis=3), ValueError, "Expected axis to be -1 or between"),
    (lambda: tf.boolean_mask(tf.zeros([3]), True), ValueError, "mask cannot be scalar"),
    (lambda: tf.boolean_mask(tf.zeros([3]), [True, False]), ValueError, "are incompatible"),
    (lambda: tf.boolean_mask(tf.zeros([3]), tf.placeholder(tf.bool)), ValueError, "Number of mask dimensions"),
    (lambda: tf.broadcast_to(tf.zeros([3]), [2, 4]), ValueError, "Dimensions must be equal, but are 3 and 4"),
    (lambda: tf.broadcast_to(tf.zeros([3, 2]), [3]), ValueError, "Shape must be at most rank 1 but is rank 2"),
    (lambda: tf.ones_like(tf.constant(["a"])), TypeError, "string"),
    (lambda: tf.reshape(tf.zeros([2]), [1.5]), TypeError, "parameter 'shape' has DataType float"),
    (lambda: tf.zeros([None, 2]), ValueError, "needs every dimension"),
]


@pytest.mark.parametrize("case", range(len(BUILD_ERRORS)))
def test_build_time_errors(case):
    build, exc, pattern = BUILD_ERRORS[case]
    with tf.Graph().as_default():
        with pytest.raises(exc, match=pattern):
            build()


RUNTIME_ERRORS = [
    (
        lambda: tf.reshape(unknown(np.zeros(6)), [4]),
        "Input to reshape is a tensor with 6 values, but the requested shape has 4",
    ),
    (lambda: tf.reshape(unknown(np.zeros(6)), [4, -1]), "requested shape requires a multiple of 4"),
    (lambda: tf.reshape(tf.zeros([6]), unknown([-1, -1], tf.int32)), "Only one input size may be -1, not both 0 and 1"),
    (lambda: tf.transpose(unknown(np.zeros([2, 3])), unknown([0, 0], tf.int32)), r"1 is missing from \{0,0\}"),
    (
        lambda: tf.concat([unknown(np.zeros([2, 3])), tf.zeros([2, 4])], 0),
        r"Dimension 1 in both shapes must be equal: shape\[0\] = \[2,3\] vs. shape\[1\] = \[2,4\]",
    ),
    (lambda: tf.stack([unknown(np.zeros([2])), tf.zeros([3])]), "Shapes of all inputs must match"),
    (lambda: tf.unstack(unknown(np.zeros([2, 3])), num=3), r"Input shape axis 0 must equal 3, got shape \[2,3\]"),
    (
        lambda: tf.split(unknown(np.zeros([4, 3])), 3),
        "should evenly divide the split dimension, but got split_dim 0 "
        r"\(size = 4\) and num_split 3",
    ),
    (lambda: tf.split(unknown(np.zeros([4, 3])), [1, 5]), "Determined shape must either match input shape"),
    (lambda: tf.slice(unknown(np.zeros([4, 3])), [1, 0], [4, 1]), r"Expected size\[0\] in \[0, 3\], but got 4"),
    (lambda: tf.slice(unknown(np.zeros([4, 3])), [5, 0], [-1, 1]), r"Expected begin\[0\] in \[0, 4\], but got 5"),
    (lambda: unknown(np.zeros([2, 2]))[5], "slice index 5 of dimension 0 out of bounds"),
    (lambda: unknown(np.zeros([2, 2]))[0, 0, 0], "Index out of range using input dim 2"),
    (lambda: tf.gather(tf.zeros([3, 4]), [0, 5]), r"indices\[1\] = 5 is not in \[0, 3\)"),
    (lambda: tf.gather(tf.zeros([3, 4]), [[0, 1], [-1, 0]]), r"indices\[1,0\] = -1 is not in \[0, 3\)"),
    (lambda: tf.gather(tf.zeros([3, 4]), [7], axis=1), r"indices\[0\] = 7 is not in \[0, 4\)"),
    (lambda: tf.expand_dims(unknown(np.zeros([3, 4])), 3), "Tried to expand dim index 3 for tensor with 2 dimensions"),
    (
        lambda: tf.squeeze(unknown(np.zeros([3, 1])), [0]),
        r"Can not squeeze dim\[0\], expected a dimension of 1, "
        "got 3",
    ),
    (lambda: tf.tile(tf.zeros([3, 1]), unknown([2, -1], tf.int32)), r"Expected multiples\[1\] >= 0, but got -1"),
    (
        lambda: tf.pad(unknown(np.zeros([3, 1])), [[3, 1], [0, 0]], "REFLECT"),
        "paddings must be less than the dimension size: 3, 1 not less than 3",
    ),
    (lambda: tf.pad(tf.zeros([3, 1]), unknown([[1, 1], [-1, 0]], tf.int32)), "Paddings must be non-negative: -1 0"),
    (lambda: tf.fill(unknown([2, -3], tf.int32), 1.0), "Dimension -3 must be >= 0"),
    (lambda: tf.broadcast_to(unknown(np.zeros([3])), [2, 4]), r"Incompatible shapes: \[3\] vs. \[2,4\]"),
    (lambda: tf.invert_permutation(unknown([0, 0], tf.int32)), "0 is duplicated in the input"),
]


@pytest.mark.parametrize("case", range(len(RUNTIME_ERRORS)))
def test_runtime_errors(case):
    build, pattern = RUNTIME_ERRORS[case]
    with tf.Graph().as_default():
        t = build()
        with pytest.raises(errors.InvalidArgumentError, match=pattern):
            run(t)
