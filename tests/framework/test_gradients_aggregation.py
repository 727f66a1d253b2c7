"""tf.gradients' aggregation_method: every TF1 method accepted (same sums), anything else TF's ValueError."""

from __future__ import annotations

import pytest

import dtf_notebook.compat.v1 as tf


@pytest.mark.parametrize(
    "method",
    [
        None,
        tf.AggregationMethod.ADD_N,
        tf.AggregationMethod.EXPERIMENTAL_TREE,
        tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
    ],
)
def test_every_tf_aggregation_method_sums_the_paths(method):
    with tf.Graph().as_default():
        x = tf.constant(3.0)
        (g,) = tf.gradients(x * x + 2.0 * x, x, aggregation_method=method)
        with tf.Session() as sess:
            assert sess.run(g) == 8.0


def test_an_unknown_aggregation_method_is_tf_s_value_error():
    with tf.Graph().as_default():
        x = tf.constant(3.0)
        with pytest.raises(ValueError, match="Invalid aggregation_method specified 7."):
            tf.gradients(x * x, x, aggregation_method=7)
