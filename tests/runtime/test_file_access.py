"""FileAccess: what a task with file roots lets its kernels touch, and the checkpoint names kernels accept."""

from __future__ import annotations

import os

import pytest

from dtf_notebook import errors
from dtf_notebook.runtime import bundle_shards
from dtf_notebook.runtime import checkpoint_format as fmt
from dtf_notebook.runtime.file_access import FileAccess


@pytest.fixture
def tree(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "run").mkdir(parents=True)
    outside.mkdir()
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "run" / "looks-inside.index.json").symlink_to(outside / "x.index.json")
    return root, outside


def test_no_roots_means_anywhere():
    access = FileAccess()
    assert not access.confined
    for path in ("/etc/passwd", "../x", "memory://a", "http://example.com/x", "a::b"):
        assert access.check(path, "read") == path


@pytest.mark.parametrize(
    "inside",
    ["{root}/run/model", "{root}/run/../run/model", "file://{root}/model", "file:{root}/model", "{root}", "{root}/x/y"],
)
def test_paths_inside_a_root_pass(tree, inside):
    root, _ = tree
    path = inside.format(root=root)
    assert FileAccess([str(root)]).check(path, "write") == path


@pytest.mark.parametrize(
    "outside, why",
    [
        ("{outside}/model", ""),
        ("{root}/../outside/model", "resolves to"),
        ("{root}/out/model", "resolves to"),  # a symlinked directory inside the root
        ("{root}/run/looks-inside.index.json", "resolves to"),  # a symlinked file inside the root
        ("{root}-sibling/model", ""),  # a prefix of the root's name is not the root
        ("memory://{root}/model", ""),  # another filesystem
        ("simplecache::file://{root}/model", "chained URLs"),
        ("relative/model", "resolves to"),  # relative to the task's working directory, not the root
        ("file:{outside}/model", "resolves to"),  # fsspec reads "file:" and "local:" without "//" as local paths
        ("local:{outside}/model", "resolves to"),
        ("~/model", "resolves to"),  # and expands "~"
        ("file://~/model", "resolves to"),
    ],
)
def test_paths_outside_every_root_are_refused_naming_path_and_roots(tree, outside, why, monkeypatch):
    root, out = tree
    monkeypatch.chdir(out)
    monkeypatch.setenv("HOME", str(out))
    path = outside.format(root=root, outside=out)
    with pytest.raises(errors.PermissionDeniedError) as refused:
        FileAccess([str(root)]).check(path, "rename")
    message = refused.value.message
    assert message.startswith(f"Refused to rename {path}: ") and why in message
    assert "chained" in why or str(root) in message


def test_url_roots_and_several_roots(tree):
    root, outside = tree
    access = FileAccess(["memory://ckpts", str(root), str(outside)])
    assert access.check("memory://ckpts/run/m", "read") == "memory://ckpts/run/m"
    assert access.check(str(outside / "m"), "read") == str(outside / "m")
    for path in ("memory://ckpts/../other/m", "memory://ckptsX/m", "s3://ckpts/m"):
        with pytest.raises(errors.PermissionDeniedError):
            access.check(path, "read")


@pytest.mark.parametrize("root", ["", "/no/such/dir", "a::b"])
def test_bad_roots_are_refused_at_once(root):
    with pytest.raises(ValueError, match="File root"):
        FileAccess([root])


def test_an_empty_list_of_roots_allows_nothing(tmp_path):
    with pytest.raises(errors.PermissionDeniedError, match=r"file roots \(none\)"):
        FileAccess([]).check(str(tmp_path / "x"), "read")
    assert os.path.exists(tmp_path)


@pytest.mark.parametrize(
    "name",
    [
        "../x.data-00000-of-00001.safetensors",
        "/abs.data-00000-of-00001.safetensors",
        "a/b.data-00000-of-00001.safetensors",
        "model.index.json",
        "model.data-0-of-1.safetensors",
        None,
        3,
    ],
)
def test_an_index_may_name_only_shard_files_of_its_own_directory(name):
    with pytest.raises(errors.DataLossError, match="not a shard file name"):
        fmt.check_shard_file(name, "m.index.json")


def test_the_names_a_merge_accepts_are_exactly_the_prefix_and_shard_ones():
    final, temp = bundle_shards.expected_shard_files("memory://run/model.ckpt-3", 1, 2)
    assert final == "model.ckpt-3.data-00001-of-00002"
    assert temp.match(final + ".tmp-" + "a" * 32)
    for bad in (final, final + ".tmp-" + "a" * 31, final + ".tmp-" + "A" * 32, "../" + final + ".tmp-" + "a" * 32):
        assert not temp.match(bad)
