"""CUDA paths: run where a GPU exists, skipped cleanly elsewhere (virtual GPUs cover placement on CPU machines)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dtf_notebook.compat.v1 as tf

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_ops_run_on_cuda_and_move_between_devices():
    with tf.device("/cpu:0"):
        a = tf.constant([1.0, 2.0], name="a")
    with tf.device("/gpu:0"):
        b = tf.identity(a, name="b")
        v = tf.Variable([0.0, 0.0], name="v")
        upd = tf.assign_add(v, b)
    with tf.device("/cpu:0"):
        c = tf.identity(upd, name="c")
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])
        backend = sess.backend
        resource = backend.state.resources.lookup("", "v")
        assert resource.value.device.type == "cuda"


def test_memory_fraction_becomes_torch_limit():
    config = tf.ConfigProto()
    config.gpu_options.per_process_gpu_memory_fraction = 0.25
    with tf.Session(config=config) as sess:
        gpu = [d for d in sess.list_devices() if d.device_type == "GPU"][0]
        total = torch.cuda.get_device_properties(0).total_memory
        assert gpu.memory_limit == int(total * 0.25)


def test_visible_device_list_rejects_missing_gpu():
    config = tf.ConfigProto()
    config.gpu_options.visible_device_list = str(torch.cuda.device_count() + 5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="visible_device_list"):
        tf.Session(config=config)
