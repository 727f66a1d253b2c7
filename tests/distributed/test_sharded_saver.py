"""Sharded checkpoints on a real cluster: each ps task writes its own shard from its own process (in TF's V2
format: one data file per shard, one index)."""

from __future__ import annotations

import glob
import os
import signal
import threading
import time

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.distributed.cluster_util import LocalCluster

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(jobs={"ps": 3, "worker": 1}) as c:
        yield c


def test_seed_003_sharded_save_is_written_by_every_ps_and_restores(cluster, tmp_path):
    with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
        weights_1 = tf.get_variable("weights_1", [784, 100])
        biases_1 = tf.get_variable("biases_1", [100])
        weights_2 = tf.get_variable("weights_2", [100, 10])
        emb = tf.get_variable("emb", [30, 4], partitioner=lambda shape, dtype: [3, 1])
        step = tf.train.get_or_create_global_step()
    variables = [weights_1, biases_1, weights_2, step] + list(emb)
    assert {v.device for v in variables} == {"/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2"}
    saver = tf.train.Saver(sharded=True)
    target = cluster.target("worker", 0)
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(step, 1000))
        saved = sess.run(variables)
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
    assert path == str(tmp_path / "model.ckpt-1000")
    assert tf.train.latest_checkpoint(str(tmp_path)) == path

    shards = tf.train.NewCheckpointReader(path).shards()
    assert [s["file"] for s in shards] == [f"model.ckpt-1000.data-0000{k}-of-00003" for k in range(3)]
    # One shard per ps task (in device order), holding exactly the variables placed there; the slices of the
    # partitioned variable are in the shards of their three tasks.
    for k, shard in enumerate(shards):
        placed = {v.op.name for v in variables[:4] if v.device == f"/job:ps/task:{k}"}
        assert shard["tensors"] == sorted(placed | {"emb"})
    assert not glob.glob(str(tmp_path / "*.tmp-*"))
    assert dict(tf.train.list_variables(path))["emb"] == [30, 4]
    _tf_reads(
        path, {v.op.name: value for v, value in zip(variables[:4], saved[:4])} | {"emb": np.concatenate(saved[4:])}
    )

    tf.Session.reset(target)
    with tf.Session(target) as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
            sess.run(weights_1)
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        restored = sess.run(variables)
    for want, got in zip(saved, restored):
        np.testing.assert_array_equal(want, got)


def test_non_sharded_save_is_one_file_written_by_the_session_task(cluster, tmp_path):
    with tf.device("/job:ps/task:1"):
        v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver()
    with tf.Session(cluster.target("worker", 0)) as sess:
        sess.run(v.initializer)
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run(tf.assign(v, [0.0, 0.0]))
        saver.restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    (shard,) = tf.train.NewCheckpointReader(path).shards()
    assert shard["file"] == "m.data-00000-of-00001"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m.data-00000-of-00001", "m.index", "m.meta"]


def _tf_reads(path: str, expected: dict[str, np.ndarray]) -> None:
    """Real TF, where installed, reads the checkpoint's every tensor as saved (all shards, the slices joined)."""
    try:
        import tensorflow as real_tf
    except ImportError:
        return
    reader = real_tf.compat.v1.train.load_checkpoint(path)
    assert sorted(reader.get_variable_to_shape_map()) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(reader.get_tensor(name), value, err_msg=name)


def _wait_for(pattern: str, count: int, timeout: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = glob.glob(pattern)
        if len(found) >= count:
            return found
        time.sleep(0.01)
    raise AssertionError(f"{count} files matching {pattern} did not appear within {timeout} s")


def test_ps_killed_mid_save_leaves_previous_checkpoint_intact(cluster, tmp_path):
    vs = []
    for k in range(3):
        with tf.device(f"/job:ps/task:{k}"):
            vs.append(tf.Variable(np.full([1000], float(k), np.float32), name=f"v{k}"))
    change = [tf.assign(v, np.full([1000], 10.0 + k, np.float32)) for k, v in enumerate(vs)]
    saver = tf.train.Saver(sharded=True)
    prefix = str(tmp_path / "model")
    target = cluster.target("worker", 0)
    result: dict[str, BaseException] = {}
    ps2 = cluster.task("ps", 2)
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        first = saver.save(sess, prefix, global_step=1)
        # No op is added from here on: the save step stays compiled, so it needs nothing new from ps:2.
        sess.run(change)

        def save_again() -> None:
            try:
                saver.save(sess, prefix, global_step=2)
            except BaseException as e:  # noqa: BLE001 - handed to the test thread
                result["error"] = e

        # ps:2 freezes before writing its shard; once the others' shards are on disk it dies.
        os.kill(ps2.pid, signal.SIGSTOP)
        try:
            thread = threading.Thread(target=save_again)
            thread.start()
            _wait_for(str(tmp_path / "model-2.data-*-of-00003.tmp-*"), 2)
            cluster.kill("ps", 2)
            thread.join(60)
        finally:
            if cluster.task("ps", 2).status == "running":
                cluster.kill("ps", 2)
        assert not thread.is_alive()
    assert isinstance(result.get("error"), tf.errors.UnavailableError | tf.errors.AbortedError), result
    assert tf.train.latest_checkpoint(str(tmp_path)) == first
    assert not tf.train.checkpoint_exists(prefix + "-2")
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == [first]

    cluster.restart("ps", 2)
    with tf.Session(target) as sess:
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        for k, v in enumerate(vs):
            np.testing.assert_array_equal(sess.run(v), np.full([1000], float(k), np.float32))
