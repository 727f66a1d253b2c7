"""Kernels flush denormal floats to zero, as TensorFlow's thread pools do (``runtime.float_env``); the caller's
thread keeps IEEE denormals outside its steps."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime.float_env import denormals_flushed

DENORMAL_32 = np.array([1e-39, 1.0, -2e-39], np.float32)
DENORMAL_64 = np.array([1e-310, 1.0])


def _denormal_products(lib, target: str = "", inter_op_threads: int = 0):
    with lib.Graph().as_default():
        x32 = lib.placeholder(lib.float32, [3])
        x64 = lib.placeholder(lib.float64, [2])
        kept = lib.constant(DENORMAL_32)
        fetches = [x32 * 1.0, x64 * 1.0, kept, lib.reduce_sum(x32)]
        config = lib.ConfigProto(inter_op_parallelism_threads=inter_op_threads)
        with lib.Session(target, config=config) as sess:
            return sess.run(fetches, {x32: DENORMAL_32, x64: DENORMAL_64})


def _assert_same(ours, theirs):
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))  # -2e-39 * 1.0 is -0.0 in both


def test_kernels_flush_denormals_and_fetched_constants_keep_them():
    products32, products64, kept, total = _denormal_products(tf)
    np.testing.assert_array_equal(products32, [0.0, 1.0, -0.0])
    np.testing.assert_array_equal(products64, [0.0, 1.0])
    np.testing.assert_array_equal(kept, DENORMAL_32)  # no arithmetic, no flush
    assert total == 1.0


@pytest.mark.tf_oracle
@pytest.mark.parametrize("threads", [0, 1, 2])
def test_denormal_arithmetic_matches_tensorflow(threads):
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    _assert_same(_denormal_products(tf, inter_op_threads=threads), _denormal_products(real, inter_op_threads=threads))


def test_a_task_flushes_denormals_too():
    server = tf.train.Server.create_local_server()
    try:
        products32, products64, _, _ = _denormal_products(tf, server.target)
    finally:
        server.stop()
    np.testing.assert_array_equal(products32, [0.0, 1.0, -0.0])
    np.testing.assert_array_equal(products64, [0.0, 1.0])


def test_the_callers_thread_keeps_denormals_outside_its_steps():
    results = []

    def caller():
        _denormal_products(tf)
        results.append((denormals_flushed(), float(np.float32(1e-39) * np.float32(1.0))))

    thread = threading.Thread(target=caller)
    thread.start()
    thread.join(60)
    assert results == [(False, pytest.approx(1e-39))]
    assert not denormals_flushed()


def test_a_py_func_in_a_step_runs_with_the_steps_flags():
    with tf.Graph().as_default():
        seen = tf.py_func(lambda: np.bool_(denormals_flushed()), [], tf.bool)
        with tf.Session() as sess:
            assert sess.run(seen)
    assert not denormals_flushed()
