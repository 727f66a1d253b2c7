"""The checkpoint state file, latest_checkpoint, checkpoint_exists, removal, and the checkpoint readers."""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.runtime import checkpoint_format as fmt
from dtf_notebook.train import checkpoint_management as cm


def _touch_checkpoint(prefix: str) -> None:
    """A minimal complete checkpoint (one float) at ``prefix``."""
    import torch

    data, entries = fmt.encode_shard([("x", "", torch.tensor([1.0, 2.0]))])
    shard = fmt.shard_filename(prefix, 0, 1)
    checkpoint_files.write_atomic(shard, data)
    meta = {"shard": 0, "num_shards": 1, "file": checkpoint_files.basename(shard), "entries": entries}
    checkpoint_files.write_atomic(fmt.index_filename(prefix), fmt.encode_index(fmt.build_index([meta])))


def test_state_file_round_trip_with_escapes_and_timestamps(tmp_path):
    odd = str(tmp_path / 'we"ird\\na\u00efve\tname')
    cm.update_checkpoint_state(
        str(tmp_path),
        odd,
        [str(tmp_path / "old"), odd],
        all_model_checkpoint_timestamps=[1.5, 2.25],
        last_preserved_timestamp=0.75,
    )
    text = (tmp_path / "checkpoint").read_text()
    assert '\\"' in text and "\\303\\257" in text and "\\t" in text
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == odd
    assert state.all_model_checkpoint_paths == [str(tmp_path / "old"), odd]
    assert state.all_model_checkpoint_timestamps == [1.5, 2.25]
    assert state.last_preserved_timestamp == 0.75


def test_relative_paths_are_resolved_against_the_directory():
    directory = f"memory://mgmt/{uuid.uuid4().hex}"
    checkpoint_files.write_atomic(
        directory + "/checkpoint", b'model_checkpoint_path: "m-2"\nall_model_checkpoint_paths: "m-1"\n'
    )
    state = tf.train.get_checkpoint_state(directory)
    assert state.model_checkpoint_path == directory + "/m-2"
    assert state.all_model_checkpoint_paths == [directory + "/m-1"]
    assert tf.train.latest_checkpoint(directory) is None  # named, but no index: not a checkpoint
    _touch_checkpoint(directory + "/m-2")
    assert tf.train.latest_checkpoint(directory) == directory + "/m-2"


def test_relative_save_dir_rewrites_paths_relative_to_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("run")
    cm.update_checkpoint_state("run", "run/m-1")
    assert (tmp_path / "run" / "checkpoint").read_text().startswith('model_checkpoint_path: "m-1"')
    assert tf.train.get_checkpoint_state("run").model_checkpoint_path == os.path.join("run", "m-1")


def test_malformed_or_missing_state():
    directory = f"memory://mgmt/{uuid.uuid4().hex}"
    assert tf.train.get_checkpoint_state(directory) is None
    checkpoint_files.write_atomic(directory + "/checkpoint", b"model_checkpoint_path 'no colon'\n")
    assert tf.train.get_checkpoint_state(directory) is None  # logged and ignored, as in TF
    checkpoint_files.write_atomic(directory + "/checkpoint", b'all_model_checkpoint_paths: "a"\n')
    with pytest.raises(ValueError, match="Invalid checkpoint state"):
        tf.train.get_checkpoint_state(directory)


def test_generate_checkpoint_state_rules():
    state = tf.train.generate_checkpoint_state_proto("/r", "/r/m-3", ["/r/m-1", "/r/m-2"])
    assert state.all_model_checkpoint_paths == ["/r/m-1", "/r/m-2", "/r/m-3"]
    with pytest.raises(ValueError, match="timestamps"):
        tf.train.generate_checkpoint_state_proto("/r", "/r/m-1", ["/r/m-1"], all_model_checkpoint_timestamps=[1, 2])
    with pytest.raises(RuntimeError, match="conflicts with path used for checkpoint state"):
        cm.update_checkpoint_state("memory://mgmt/c", "memory://mgmt/c/checkpoint")


def test_exists_mtimes_and_remove():
    prefix = f"memory://mgmt/{uuid.uuid4().hex}/model-1"
    assert not tf.train.checkpoint_exists(prefix)
    _touch_checkpoint(prefix)
    checkpoint_files.write_atomic(cm.meta_graph_filename(prefix), b"{}")
    assert tf.train.checkpoint_exists(prefix)
    assert len(tf.train.get_checkpoint_mtimes([prefix, prefix + "x"])) == 1
    tf.train.remove_checkpoint(prefix)
    assert not tf.train.checkpoint_exists(prefix)
    assert checkpoint_files.glob(prefix + "*") == []


def test_readers_report_missing_checkpoints_and_keys(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for"):
        tf.train.NewCheckpointReader(str(tmp_path / "none"))
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.list_variables(str(tmp_path))
    _touch_checkpoint(str(tmp_path / "m"))
    reader = tf.train.NewCheckpointReader(str(tmp_path / "m"))
    with pytest.raises(tf.errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    np.testing.assert_array_equal(reader.get_tensor("x"), [1.0, 2.0])
    assert reader.debug_string() == b"x (float32) [2]\n"


def test_corrupt_files_are_data_loss(tmp_path):
    (tmp_path / "m.index.json").write_text("{not json")
    with pytest.raises(tf.errors.DataLossError, match="m.index.json"):
        tf.train.NewCheckpointReader(str(tmp_path / "m"))
    _touch_checkpoint(str(tmp_path / "k"))
    (tmp_path / "k.data-00000-of-00001.safetensors").write_bytes(b"garbage")
    with pytest.raises(tf.errors.DataLossError, match="k.data-00000-of-00001.safetensors"):
        tf.train.load_variable(str(tmp_path / "k"), "x")


@pytest.mark.tf_oracle
def test_state_file_is_tensorflows_text_format(tmp_path):
    import tensorflow.compat.v1 as real_tf

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    paths = [str(ours / "model-1"), str(ours / 'mo"del-2')]
    cm.update_checkpoint_state(str(ours), paths[-1], paths, all_model_checkpoint_timestamps=[1.5, 2.5])
    read_by_tf = real_tf.train.get_checkpoint_state(str(ours))
    assert read_by_tf.model_checkpoint_path == paths[-1]
    assert list(read_by_tf.all_model_checkpoint_paths) == paths
    assert list(read_by_tf.all_model_checkpoint_timestamps) == [1.5, 2.5]

    real_tf.train.update_checkpoint_state(
        str(theirs), "m-2", ["m-1", "m-2"], all_model_checkpoint_timestamps=[3.0, 4.0], last_preserved_timestamp=2.0
    )
    state = tf.train.get_checkpoint_state(str(theirs))
    assert state.model_checkpoint_path == str(theirs / "m-2")
    assert state.all_model_checkpoint_paths == [str(theirs / "m-1"), str(theirs / "m-2")]
    assert state.all_model_checkpoint_timestamps == [3.0, 4.0] and state.last_preserved_timestamp == 2.0
