"""Kernels flush denormal floats to zero, as TensorFlow's thread pools do (``runtime.float_env``); the caller's
thread keeps IEEE denormals outside its steps."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime.float_env import denormals_flushed
from tests.fresh_process import run_fresh

DENORMAL_32 = np.array([1e-39, 1.0, -2e-39], np.float32)
DENORMAL_64 = np.array([1e-310, 1.0])


def _denormal_products(lib, target: str = "", inter_op_threads: int = 0):
    with lib.Graph().as_default():
        x32 = lib.placeholder(lib.float32, [3])
        x64 = lib.placeholder(lib.float64, [2])
        kept = lib.constant(DENORMAL_32)
        fetches = [x32 * 1.0, x64 * 1.0, kept, lib.reduce_sum(lib.gather(x32, [0, 2])), lib.abs(x32)]
        config = lib.ConfigProto(inter_op_parallelism_threads=inter_op_threads)
        with lib.Session(target, config=config) as sess:
            return sess.run(fetches, {x32: DENORMAL_32, x64: DENORMAL_64})


def _assert_same(ours, theirs):
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))  # -2e-39 * 1.0 is -0.0 in both


def test_kernels_flush_denormals_and_fetched_constants_keep_them():
    products32, products64, kept, denormal_sum, magnitudes = _denormal_products(tf)
    np.testing.assert_array_equal(products32, [0.0, 1.0, -0.0])
    np.testing.assert_array_equal(products64, [0.0, 1.0])
    np.testing.assert_array_equal(kept, DENORMAL_32)  # no arithmetic, no flush
    assert denormal_sum == 0.0  # 1e-39 + -2e-39 is a denormal too
    np.testing.assert_array_equal(magnitudes, np.abs(DENORMAL_32))  # a sign bit cleared: no arithmetic, as in TF


@pytest.mark.tf_oracle
@pytest.mark.parametrize("threads", [0, 1, 2])
def test_denormal_arithmetic_matches_tensorflow(threads):
    real = pytest.importorskip("tensorflow").compat.v1
    real.disable_eager_execution()
    _assert_same(_denormal_products(tf, inter_op_threads=threads), _denormal_products(real, inter_op_threads=threads))


def test_a_session_on_a_server_of_this_process_flushes_denormals_too():
    server = tf.train.Server.create_local_server()
    try:
        products32, products64, _, _, _ = _denormal_products(tf, server.target)
    finally:
        server.stop()
    np.testing.assert_array_equal(products32, [0.0, 1.0, -0.0])
    np.testing.assert_array_equal(products64, [0.0, 1.0])


@pytest.mark.slow
def test_task_processes_flush_denormals_in_the_partitions_they_run():
    """Partitions on a ps and a worker process, each resumed on its task's event loop."""
    from tests.distributed.cluster_util import LocalCluster

    with LocalCluster(jobs={"ps": 1, "worker": 1}) as cluster, tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        with tf.device("/job:ps/task:0"):
            on_ps = x * 1.0
        with tf.device("/job:worker/task:0"):
            on_worker = (on_ps + x) * 1.0
        with tf.Session(cluster.target("worker", 0)) as sess:
            ps_product, worker_product = sess.run([on_ps, on_worker], {x: DENORMAL_32})
    np.testing.assert_array_equal(ps_product, [0.0, 1.0, -0.0])
    np.testing.assert_array_equal(worker_product, [0.0, 2.0, -0.0])


def test_a_kernel_split_between_torchs_threads_flushes_every_share():
    """A million elements: torch splits the product between the caller's thread and its OpenMP workers, which start
    in the step and keep its flags (a fresh process, so that no earlier torch call started them)."""
    code = (
        "import numpy as np, torch, dtf_notebook.compat.v1 as tf\n"
        "torch.set_num_threads(4)\n"
        "x = tf.placeholder(tf.float32, [None])\n"
        "with tf.Session() as sess:\n"
        "    out = sess.run(x * 1.0, {x: np.full(1_000_000, 1e-39, np.float32)})\n"
        "print(int(np.count_nonzero(out)))\n"
    )
    assert run_fresh(code) == 0


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
