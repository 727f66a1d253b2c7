"""tf.train.Saver in one process: dtypes, var_list forms, partitioned variables, max_to_keep, errors, fsspec URLs."""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.lib.io.tensor_bundle import TensorBundleReader
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.train.saveable_object import SaveableObject, SaveSpec


def _memory_dir() -> str:
    return f"memory://test_saver/{uuid.uuid4().hex}"


VALUES = {
    "f16": np.array([1.5, -2.0], np.float16),
    "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
    "f64": np.array(3.25, np.float64),
    "bf16": np.array([0.5, 2.0], np.float32),
    "i8": np.array([-3, 4], np.int8),
    "i16": np.array([300], np.int16),
    "i32": np.array([[1, 2], [3, 4]], np.int32),
    "i64": np.array([2**40], np.int64),
    "u8": np.array([0, 255], np.uint8),
    "flag": np.array([True, False]),
    "words": np.array([b"hello", b"", "\u00e9t\u00e9".encode()], dtype=object),
    "empty": np.zeros([0, 3], np.float32),
}


def _build_all_dtypes():
    made = {}
    for name, value in VALUES.items():
        dtype = tf.bfloat16 if name == "bf16" else None
        made[name] = tf.Variable(value, name=name, dtype=dtype)
    made["global_step"] = tf.train.get_or_create_global_step()
    return made


def test_every_dtype_and_the_int64_global_step_round_trip(tmp_path):
    made = _build_all_dtypes()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(made["global_step"], 7))
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=made["global_step"])
        saved = sess.run(made)
    assert path == str(tmp_path / "model.ckpt-7")
    # A new session starts with nothing initialised: restoring is the initialisation.
    with tf.Session() as sess:
        saver.restore(sess, path)
        restored = sess.run(made)
    for name, value in saved.items():
        np.testing.assert_array_equal(np.asarray(restored[name]), np.asarray(value), err_msg=name)
        assert np.asarray(restored[name]).dtype == np.asarray(value).dtype, name
    assert restored["global_step"] == 7 and restored["global_step"].dtype == np.int64
    reader = tf.train.NewCheckpointReader(path)
    assert reader.get_variable_to_dtype_map()["global_step"] == tf.int64
    assert list(reader.get_tensor("words")) == list(VALUES["words"])


def test_files_state_and_index_layout(tmp_path):
    with tf.device("/cpu:0"):
        w = tf.Variable([1.0, 2.0], name="weights_1")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = saver.save(sess, str(tmp_path / "model"), global_step=3)
    # TF's V2 format and file names (tests/train/test_tf_checkpoints.py has real TF read them).
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "model-3.data-00000-of-00001",
        "model-3.index",
        "model-3.meta",
    ]
    state = (tmp_path / "checkpoint").read_text()
    assert state.startswith(f'model_checkpoint_path: "{path}"\nall_model_checkpoint_paths: "{path}"\n')
    assert "all_model_checkpoint_timestamps: " in state
    bundle = TensorBundleReader(path, lambda p: open(p, "rb").read())
    assert bundle.names() == ["weights_1"] and bundle.num_shards == 1
    assert bundle.dtype("weights_1") == tf.float32 and bundle.read("weights_1").tolist() == [1.0, 2.0]
    meta = tf.MetaGraphDef.FromString((tmp_path / "model-3.meta").read_bytes())
    assert meta.saver_def.restore_op_name == "save/restore_all"
    # TF's format: the saver's ops are written as TF's own save ops (tests/train/test_meta_graph_tf.py).
    assert "SaveV2" in {op.name for op in meta.meta_info_def.stripped_op_list.op}


def test_dict_var_list_saves_under_the_given_names(tmp_path):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable([2.0, 3.0], name="b")
    saver = tf.train.Saver({"first": a, "second": b})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("first", []), ("second", [2])]
    with tf.Graph().as_default():
        x = tf.Variable(0.0, name="x")
        y = tf.Variable([0.0, 0.0], name="y")
        restorer = tf.train.Saver({"first": x, "second": y})
        with tf.Session() as sess:
            restorer.restore(sess, path)
            assert sess.run(x) == 1.0
            np.testing.assert_array_equal(sess.run(y), [2.0, 3.0])


def _partitioned(name: str, parts: int, value: np.ndarray):
    def init(shape, dtype=None, partition_info=None):
        start = partition_info.single_offset(shape) if partition_info is not None else 0
        return tf.constant(value[start : start + shape[0]])

    return tf.get_variable(name, value.shape, initializer=init, partitioner=lambda shape, dtype: [parts, 1])


def test_partitioned_variable_restores_repartitioned_and_whole(tmp_path):
    full = np.arange(21, dtype=np.float32).reshape(7, 3)
    _partitioned("emb", 3, full)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
    assert tf.train.list_variables(path) == [("emb", [7, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "emb:0"), full)

    with tf.Graph().as_default():  # 3 parts -> 2 parts
        emb2 = _partitioned("emb", 2, np.zeros_like(full))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            assert [p.shape.as_list() for p in emb2] == [[4, 3], [3, 3]]
            np.testing.assert_array_equal(sess.run(emb2.as_tensor()), full)

    with tf.Graph().as_default():  # 3 parts -> one plain variable
        whole = tf.Variable(np.zeros_like(full), name="emb")
        with tf.Session() as sess:
            tf.train.Saver([whole]).restore(sess, path)
            np.testing.assert_array_equal(sess.run(whole), full)
            # ... and back: a whole variable restores into 3 parts.
            whole_path = tf.train.Saver([whole]).save(sess, str(tmp_path / "whole"))
    with tf.Graph().as_default():
        emb3 = _partitioned("emb", 3, np.zeros_like(full))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, whole_path)
            np.testing.assert_array_equal(sess.run(emb3.as_tensor()), full)


def test_max_to_keep_deletes_old_checkpoint_files(tmp_path):
    v = tf.Variable(0.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(4)]
    assert saver.last_checkpoints == paths[2:]
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == paths[2:]
    left = sorted(os.listdir(tmp_path))
    assert not [f for f in left if f.startswith(("m-0.", "m-1."))]
    assert all(tf.train.checkpoint_exists(p) for p in paths[2:])


@pytest.mark.parametrize("max_to_keep", [None, 0])
def test_max_to_keep_none_or_zero_keeps_everything(tmp_path, max_to_keep):
    v = tf.Variable(0.0, name="v")
    saver = tf.train.Saver(max_to_keep=max_to_keep)
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert all(tf.train.checkpoint_exists(p) for p in paths)
    assert saver.last_checkpoints == []
    assert tf.train.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths == paths[-1:]


def test_keep_checkpoint_every_n_hours_keeps_old_checkpoints(tmp_path):
    v = tf.Variable(0.0, name="v")
    # Every hour-long window has passed at once (0 hours): each checkpoint pushed out of the list is kept.
    saver = tf.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=0.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert saver.last_checkpoints == paths[-1:]
    assert all(tf.train.checkpoint_exists(p) for p in paths)


def test_set_and_recover_last_checkpoints(tmp_path):
    v = tf.Variable(0.0, name="v")
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(v.initializer)
        paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(2)]
        other = tf.train.Saver(max_to_keep=2)
        other.recover_last_checkpoints(paths + [str(tmp_path / "gone")])
        assert other.last_checkpoints == paths
        other.save(sess, str(tmp_path / "m"), global_step=2)
    assert not tf.train.checkpoint_exists(paths[0])
    saver.set_last_checkpoints_with_time([("a", 1.0), ("b", 2.0)])
    assert saver.last_checkpoints == ["a", "b"]


def test_memory_url_save_restore_and_relative_state(tmp_path):
    directory = _memory_dir()
    v = tf.Variable([1.0, 2.0], name="v")
    saver = tf.train.Saver(save_relative_paths=True)
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = saver.save(sess, directory + "/model.ckpt", global_step=5)
        sess.run(tf.assign(v, [0.0, 0.0]))
        assert tf.train.latest_checkpoint(directory) == path == directory + "/model.ckpt-5"
        saver.restore(sess, tf.train.latest_checkpoint(directory))
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
    state = checkpoint_files.read_bytes(directory + "/checkpoint").decode()
    assert state.startswith('model_checkpoint_path: "model.ckpt-5"\n')
    assert tf.train.list_variables(directory) == [("v", [2])]


def test_global_step_padding_and_tensor_names(tmp_path):
    tf.Variable(0.0, name="v")
    step = tf.train.get_or_create_global_step()
    saver = tf.train.Saver(pad_step_number=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(step, 12))
        assert saver.save(sess, str(tmp_path / "m"), global_step="global_step:0") == str(tmp_path / "m-00000012")


def test_reshape_restores_same_size_into_a_new_shape(tmp_path):
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    with tf.Session() as sess:
        sess.run(w.initializer)
        path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        w2 = tf.Variable(np.zeros([3, 2], np.float32), name="w")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"reshape=True"):
                tf.train.Saver().restore(sess, path)
            tf.train.Saver(reshape=True).restore(sess, path)
            np.testing.assert_array_equal(sess.run(w2), np.arange(6).reshape(3, 2))


def test_sharded_in_one_process_writes_one_shard_per_device(tmp_path):
    with tf.device("/cpu:0"):
        a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    saver = tf.train.Saver(sharded=True, restore_sequentially=True)
    assert saver.saver_def.save_tensor_name == "save/Identity:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run([tf.assign(a, 0.0), tf.assign(b, 0.0)])
        saver.restore(sess, path)
        assert sess.run([a, b]) == [1.0, 2.0]
    assert len(tf.train.NewCheckpointReader(path).shards()) == 2


class _PairSaveable(SaveableObject):
    """Saves two variables as one object with two named tensors."""

    def __init__(self, first, second, name):
        specs = [SaveSpec(first.value(), "", name + "/first"), SaveSpec(second.value(), "", name + "/second")]
        super().__init__((first, second), specs, name)

    def restore(self, restored_tensors, restored_shapes):
        return tf.group(tf.assign(self.op[0], restored_tensors[0]), tf.assign(self.op[1], restored_tensors[1]))


def test_saveable_objects_collection_is_saved_by_default(tmp_path):
    x = tf.Variable(1.0, name="x", collections=[])
    y = tf.Variable(2.0, name="y", collections=[])
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, _PairSaveable(x, y, "pair"))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run([x.initializer, y.initializer])
        path = saver.save(sess, str(tmp_path / "m"))
        sess.run([tf.assign(x, 0.0), tf.assign(y, 0.0)])
        saver.restore(sess, path)
        assert sess.run([x, y]) == [1.0, 2.0]
    assert tf.train.list_variables(path) == [("pair/first", []), ("pair/second", [])]


# ---- errors --------------------------------------------------------------------------------------
def _saved_scalar(tmp_path) -> str:
    v = tf.Variable(1.0, name="v")
    with tf.Session() as sess:
        sess.run(v.initializer)
        return tf.train.Saver().save(sess, str(tmp_path / "m"))


def test_restore_errors_name_the_variable_the_shapes_and_the_file(tmp_path):
    path = _saved_scalar(tmp_path)
    with tf.Graph().as_default():
        missing = tf.Variable(0.0, name="not_saved")
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError) as info:
            tf.train.Saver([missing]).restore(sess, path)
    assert "Key not_saved not found in checkpoint" in str(info.value) and path in str(info.value)
    with tf.Graph().as_default():
        wrong_shape = tf.Variable([0.0, 0.0], name="v")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
            tf.train.Saver().restore(sess, path)
    assert "Restoring v: shape [] in checkpoint" in str(info.value)
    assert "m.index" in str(info.value) and "shape [2]" in str(info.value)
    with tf.Graph().as_default():
        wrong_dtype = tf.Variable(0, name="v")
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="expected dtype int32"):
            tf.train.Saver().restore(sess, path)
    del missing, wrong_shape, wrong_dtype


def test_restore_of_no_checkpoint_and_save_into_missing_directory(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        with pytest.raises(ValueError, match="Can't load save_path when it is None"):
            saver.restore(sess, None)
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            saver.restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value v"):
            saver.save(sess, str(tmp_path / "m"))
        sess.run(v.initializer)
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            saver.save(sess, str(tmp_path / "no" / "dir" / "m"))
        with pytest.raises(ValueError, match="collides"):
            saver.save(sess, str(tmp_path / "checkpoint"))
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_construction_errors():
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver()
    with tf.Session() as sess:
        assert tf.train.Saver(allow_empty=True).save(sess, "memory://unused/m", write_meta_graph=False) is None
    v = tf.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="same saveable will be restored with two names"):
        tf.train.Saver({"a": v, "b": v})
    with pytest.raises(TypeError, match="Not a variable"):
        tf.train.Saver({"c": tf.constant(1.0)})
    with pytest.raises(ValueError, match="build cannot be deferred"):
        tf.train.Saver([v], defer_build=True)
    deferred = tf.train.Saver(defer_build=True)
    with pytest.raises(RuntimeError, match="build"):
        deferred.save(None, "memory://unused/m")


def test_failed_merge_leaves_previous_checkpoint_latest(tmp_path):
    v = tf.Variable(1.0, name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = saver.save(sess, str(tmp_path / "m"), global_step=1)
        sess.run(tf.assign(v, 5.0))
        # A directory where shard 0 must land: its move into place fails after it was written.
        (tmp_path / "m-2.data-00000-of-00001").mkdir()
        (tmp_path / "m-2.data-00000-of-00001" / "occupied").write_text("")
        with pytest.raises(tf.errors.OpError):
            saver.save(sess, str(tmp_path / "m"), global_step=2)
        assert tf.train.latest_checkpoint(str(tmp_path)) == first
        assert not tf.train.checkpoint_exists(str(tmp_path / "m-2"))
        assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
        saver.restore(sess, first)
        assert sess.run(v) == 1.0


def test_a_saver_def_reuses_the_ops_already_in_the_graph(tmp_path, fresh_graph):
    v = tf.Variable(3.0, name="v")
    first = tf.train.Saver()
    count = len(fresh_graph.get_operations())
    again = tf.train.Saver(saver_def=first.as_saver_def())
    assert len(fresh_graph.get_operations()) == count
    with tf.Session() as sess:
        sess.run(v.initializer)
        path = again.save(sess, str(tmp_path / "m"), write_meta_graph=False)
        sess.run(tf.assign(v, 0.0))
        first.restore(sess, path)
        assert sess.run(v) == 3.0


def test_a_checkpoint_of_the_earlier_format_restores_and_a_save_replaces_it(tmp_path):
    """Checkpoints written before savers wrote TF's format (``P.index.json`` + safetensors) still restore; a save to
    the same prefix leaves only TF's files in charge, and ``remove_checkpoint`` removes both formats' files."""
    import torch

    from dtf_notebook.runtime import checkpoint_format as fmt

    prefix = str(tmp_path / "m")
    data, entries = fmt.encode_shard([("v", "", torch.tensor([1.0, 2.0]))])
    (tmp_path / "m.data-00000-of-00001.safetensors").write_bytes(data)
    shard = {"shard": 0, "num_shards": 1, "file": "m.data-00000-of-00001.safetensors", "entries": entries}
    (tmp_path / "m.index.json").write_bytes(fmt.encode_index(fmt.build_index([shard])))
    v = tf.Variable([0.0, 0.0], name="v")
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        assert sess.run(v).tolist() == [1.0, 2.0]
        sess.run(tf.assign(v, [5.0, 6.0]))
        saver.save(sess, prefix, write_meta_graph=False)
        assert not (tmp_path / "m.index.json").exists()  # the stale index would name the old values
        sess.run(tf.assign(v, [0.0, 0.0]))
        saver.restore(sess, prefix)
        assert sess.run(v).tolist() == [5.0, 6.0]
    (tmp_path / "m.index.json").write_bytes(fmt.encode_index(fmt.build_index([shard])))
    tf.train.remove_checkpoint(prefix)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint"]
