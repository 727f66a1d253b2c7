"""TF's behavior switches as seen by a TF1-graph-only runtime, and how much of TF1's math/array/linalg surface
``dtf_notebook.compat.v1`` offers compared with real TensorFlow's ``tf.compat.v1``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.oracle import real_tf


def test_switching_v2_off_is_accepted_and_queries_answer_tf1():
    tf.disable_v2_behavior()
    tf.disable_eager_execution()
    tf.disable_resource_variables()
    tf.disable_control_flow_v2()
    tf.disable_tensor_equality()
    tf.disable_v2_tensorshape()
    assert not tf.executing_eagerly() and not tf.executing_eagerly_outside_functions()
    assert not tf.resource_variables_enabled() and not tf.control_flow_v2_enabled()
    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run(tf.constant(2) * 3) == 6


def test_switching_eager_or_v2_on_is_a_clear_error():
    with pytest.raises(RuntimeError, match="graph mode only"):
        tf.enable_v2_behavior()
    with pytest.raises(RuntimeError, match="eager execution"):
        tf.enable_eager_execution()


@pytest.mark.parametrize(
    "switch", ["enable_resource_variables", "enable_control_flow_v2", "enable_tensor_equality", "enable_v2_tensorshape"]
)
def test_finer_v2_switches_warn_and_keep_tf1(switch):
    with pytest.warns(UserWarning, match="no effect"):
        getattr(tf, switch)()
    with tf.Graph().as_default():
        a, b = tf.constant(1), tf.constant(1)
        assert (a == b) is False and {a: 1}[a] == 1  # TF1's tensor equality: identity


def _public(module) -> set[str]:
    return {n for n in dir(module) if not n.startswith("_")}


# TF1 names outside the math/array/linalg surface (other helpers' namespaces, protos, sparse/ragged, file IO, ...).
_OTHER_AREAS = ("sparse", "ragged", "string", "fft", "decode", "encode", "parse", "serialize", "quantiz", "fake_quant")


@pytest.mark.tf_oracle
def test_namespace_coverage():
    tf1 = real_tf()
    math_names = _public(tf1.math) - {"special"}
    missing_math = sorted(n for n in math_names if not hasattr(tf.math, n))
    assert len(missing_math) <= 0.15 * len(math_names), f"tf.math lacks {missing_math}"
    linalg_names = {n for n in _public(tf1.linalg) if not n.startswith("LinearOperator")} - {"experimental"}
    missing_linalg = sorted(n for n in linalg_names if not hasattr(tf.linalg, n))
    assert len(missing_linalg) <= 0.15 * len(linalg_names), f"tf.linalg lacks {missing_linalg}"
    # Every tf.math and tf.linalg name TF1 also has at the top level is there too.
    top = _public(tf1)
    aliases = sorted((math_names | linalg_names) & top)
    missing_top = [n for n in aliases if callable(getattr(tf1, n)) and not hasattr(tf, n)]
    assert len(missing_top) <= 0.1 * len(aliases), f"top level lacks {missing_top}"


@pytest.mark.tf_oracle
def test_namespaced_functions_are_the_top_level_ones():
    assert tf.math.cumsum is tf.cumsum and tf.math.top_k is tf.nn.top_k and tf.math.in_top_k is tf.nn.in_top_k
    assert tf.linalg.matmul is tf.matmul and tf.linalg.einsum is tf.einsum and tf.linalg.global_norm is tf.global_norm
    with tf.Graph().as_default(), tf.Session() as sess:
        np.testing.assert_allclose(sess.run(tf.math.segment_sum([1.0, 2.0], [0, 0])), [3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.disable_v2_behavior()
