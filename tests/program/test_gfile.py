"""``tf.gfile`` and ``tf.io.gfile`` on fsspec: one scenario of file operations run with TF's gfile and ours.

The scenario records what each call returns or raises (error class and message); TF's recording on a
local directory (and a ``file://`` URL) must equal ours on a local directory, a ``file://`` URL and,
but for what object stores do differently, a ``memory://`` URL.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors


def _normalized(value: Any, root: str) -> Any:
    if isinstance(value, str):  # TF names some files by their local path, without the file:// of the URL
        return value.replace(root, "<root>").replace(root.removeprefix("file://"), "<root>")
    if isinstance(value, bytes):
        return value.replace(root.encode(), b"<root>")
    if isinstance(value, list | tuple):
        return type(value)(_normalized(v, root) for v in value)
    return value


def _scenario(tf: Any, root: str, object_store: bool = False) -> list[tuple[str, Any]]:
    """Runs file operations under ``root`` with ``tf.gfile`` / ``tf.io.gfile``; returns what each did."""
    g, io_gfile = tf.gfile, tf.io.gfile
    log: list[tuple[str, Any]] = []

    def step(label: str, fn: Any, sort: bool = False) -> None:
        try:
            result = fn()
            if sort and isinstance(result, list):
                result = sorted(result)
            log.append((label, _normalized(result, root)))
        except Exception as e:  # the error's class and message are what is compared
            log.append((label, (type(e).__name__, _normalized(str(e), root))))

    def put(path: str, content: Any, mode: str = "w") -> None:
        with g.GFile(path, mode) as f:
            f.write(content)

    a, b = f"{root}/a.txt", f"{root}/b.txt"
    step("exists before", lambda: g.Exists(a))
    step("write", lambda: put(a, "hello\nworld\n"))
    step("read", lambda: g.GFile(a).read())
    step("read binary", lambda: g.GFile(a, "rb").read())
    step("readlines", lambda: g.GFile(a).readlines())
    step("iterate", lambda: list(g.GFile(a)))
    step("FastGFile", lambda: g.FastGFile(a, "rb").read())
    step("Open", lambda: g.Open(a).readline())

    def positions() -> tuple:
        f = g.GFile(a)
        first = f.read(3)
        at = f.tell()
        f.seek(1)
        rest = f.read()
        f.seek(-3, 2)
        tail = f.read()
        return first, at, rest, tail, f.size(), f.name == a, f.mode

    step("read n, tell, seek", positions)
    step("write on read-only", lambda: g.GFile(a).write("x"))
    step("read on write-only", lambda: g.GFile(b, "w").read())
    step("never-written file is not created", lambda: g.Exists(b))
    step("bad mode", lambda: g.GFile(a, "q"))
    step("read missing", lambda: g.GFile(f"{root}/missing").read())
    if not object_store:  # object stores have no directories to be missing
        step("write into missing directory", lambda: put(f"{root}/nodir/x", "x"))
    step("bytes in text mode, str in binary mode", lambda: (put(b, b"by"), put(b, "st", "ab"), g.GFile(b).read()))

    def append_and_w_plus() -> tuple:
        with g.GFile(b, "a") as f:
            f.write("+more")
        f = g.GFile(f"{root}/wplus.txt", "w+")
        f.write("abc")
        f.flush()
        f.seek(0)
        text = f.read()
        f.close()
        return g.GFile(b).read(), text

    step("append and w+", append_and_w_plus)

    step("MkDir without parent", lambda: g.MkDir(f"{root}/p/q"))
    step("MkDir", lambda: (g.MkDir(f"{root}/p"), g.IsDirectory(f"{root}/p")))
    step("MkDir existing", lambda: g.MkDir(f"{root}/p"))
    step("MakeDirs", lambda: (g.MakeDirs(f"{root}/p/q/r"), g.IsDirectory(f"{root}/p/q/r")))
    step("MakeDirs again", lambda: g.MakeDirs(f"{root}/p/q/r"))
    step("MakeDirs over a file", lambda: g.MakeDirs(f"{a}/x"))
    step("MakeDirs of a file", lambda: g.MakeDirs(a))
    step("IsDirectory", lambda: (g.IsDirectory(root), g.IsDirectory(a), g.IsDirectory(f"{root}/zz")))
    step("Exists", lambda: (g.Exists(a), g.Exists(root), g.Exists(f"{root}/p/q"), g.Exists(f"{root}/zz")))
    step("ListDirectory", lambda: g.ListDirectory(root), sort=True)
    step("ListDirectory missing", lambda: g.ListDirectory(f"{root}/zz"))
    step("ListDirectory of a file", lambda: g.ListDirectory(a))

    step("Glob *", lambda: g.Glob(f"{root}/*"), sort=True)
    step("Glob *.txt", lambda: g.Glob(f"{root}/*.txt"), sort=True)
    step("Glob ?.txt", lambda: g.Glob(f"{root}/?.txt"), sort=True)
    step("Glob [^a]*", lambda: g.Glob(f"{root}/[^a]*"), sort=True)
    step("Glob [a-b].*", lambda: g.Glob(f"{root}/[a-b].*"), sort=True)
    step("Glob middle wildcard", lambda: g.Glob(f"{root}/p/*/r"), sort=True)
    step("Glob no wildcard", lambda: g.Glob(a))
    step("Glob missing directory", lambda: g.Glob(f"{root}/zz/*"))
    step("Glob no match", lambda: g.Glob(f"{root}/*.csv"))
    step("Glob list", lambda: g.Glob([f"{root}/a.*", f"{root}/p"]))

    c = f"{root}/c.txt"
    step("Copy", lambda: (g.Copy(a, c), g.GFile(c).read()))
    step("Copy onto existing", lambda: g.Copy(a, c))
    step("Copy overwrite", lambda: (g.Copy(b, c, overwrite=True), g.GFile(c).read()))
    step("Copy missing", lambda: g.Copy(f"{root}/zz", f"{root}/c2.txt"))
    step("Rename", lambda: (g.Rename(c, f"{root}/e.txt"), g.Exists(c), g.GFile(f"{root}/e.txt").read()))
    step("Rename onto existing", lambda: g.Rename(f"{root}/e.txt", a))
    step("Rename overwrite", lambda: (g.Rename(f"{root}/e.txt", b, overwrite=True), g.GFile(b).read()))
    step("Rename missing", lambda: g.Rename(f"{root}/e.txt", f"{root}/f.txt"))
    step("Rename directory", lambda: (g.Rename(f"{root}/p", f"{root}/pp"), g.ListDirectory(f"{root}/pp/q")))
    step("Remove", lambda: (g.Remove(b), g.Exists(b)))
    step("Remove missing", lambda: g.Remove(b))
    step("Remove directory", lambda: g.Remove(f"{root}/pp"))

    step("Walk", lambda: list(g.Walk(f"{root}/pp")))
    step("Walk post-order", lambda: list(g.Walk(f"{root}/pp", in_order=False)))
    step("Walk missing", lambda: list(g.Walk(f"{root}/zz")))
    step("Walk a file", lambda: list(g.Walk(a)))
    step("Stat", lambda: (lambda s: (s.length, s.is_directory, s.mtime_nsec > 0))(g.Stat(a)))
    step("Stat directory", lambda: g.Stat(f"{root}/pp").is_directory)
    step("Stat missing", lambda: g.Stat(f"{root}/zz"))

    step("io.gfile", lambda: (io_gfile.exists(a), io_gfile.isdir(root), sorted(io_gfile.listdir(root))))
    step("io.gfile.copy", lambda: (io_gfile.copy(a, f"{root}/k.txt", overwrite=True), io_gfile.stat(a).length))
    step("io.gfile.walk", lambda: [d for d, _, _ in io_gfile.walk(f"{root}/pp", topdown=False)])
    step("io.gfile.glob", lambda: io_gfile.glob(f"{root}/k*"))
    step("io.gfile.rename", lambda: (io_gfile.rename(f"{root}/k.txt", f"{root}/l.txt"), io_gfile.exists(a)))
    step("io.gfile.remove", lambda: io_gfile.remove(f"{root}/l.txt"))
    step("io.gfile.mkdir/makedirs", lambda: (io_gfile.makedirs(f"{root}/m/n"), io_gfile.mkdir(f"{root}/m/o")))
    step("io.gfile.join", lambda: io_gfile.join(root, "x", "y"))

    step("DeleteRecursively", lambda: (g.DeleteRecursively(f"{root}/pp"), g.Exists(f"{root}/pp/q")))
    step("DeleteRecursively missing", lambda: g.DeleteRecursively(f"{root}/pp"))
    step("DeleteRecursively a file", lambda: (g.DeleteRecursively(a), g.Exists(a)))
    step("io.gfile.rmtree", lambda: (io_gfile.rmtree(f"{root}/m"), io_gfile.exists(f"{root}/m")))
    return log


def _tensorflow_gfile():
    return pytest.importorskip("tensorflow.compat.v1")


@pytest.mark.tf_oracle
@pytest.mark.parametrize("url", [False, True], ids=["path", "file-url"])
def test_gfile_on_local_paths_matches_tensorflow(tmp_path, url):
    real = _tensorflow_gfile()
    (tmp_path / "theirs").mkdir()
    (tmp_path / "ours").mkdir()
    prefix = "file://" if url else ""
    theirs = _scenario(real, f"{prefix}{tmp_path}/theirs")
    ours = _scenario(tf, f"{prefix}{tmp_path}/ours")
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    for (label, mine), (_, expected) in zip(ours, theirs):
        assert mine == expected, label


@pytest.mark.tf_oracle
def test_gfile_on_memory_urls_matches_tensorflow_on_local_paths(tmp_path):
    real = _tensorflow_gfile()
    theirs = dict(_scenario(real, str(tmp_path), object_store=True))
    root = f"memory://gfile-{uuid.uuid4().hex}"
    tf.gfile.MakeDirs(root)
    ours = dict(_scenario(tf, root, object_store=True))
    assert list(ours) == list(theirs)
    for label, expected in theirs.items():
        assert ours[label] == expected, label


def test_errors_are_tf_error_classes():
    root = f"memory://gfile-{uuid.uuid4().hex}"
    with pytest.raises(tf.errors.NotFoundError, match="No such file or directory"):
        tf.gfile.GFile(f"{root}/missing").read()
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory"):
        tf.io.gfile.listdir(f"{root}/missing")
    tf.gfile.MakeDirs(f"{root}/d")
    with pytest.raises(tf.errors.FailedPreconditionError):
        tf.gfile.Remove(f"{root}/d")
    with pytest.raises(errors.OpError):
        tf.gfile.Copy(f"{root}/missing", f"{root}/x")
    tf.gfile.DeleteRecursively(root)


def test_copy_and_rename_across_filesystems(tmp_path):
    root = f"memory://gfile-{uuid.uuid4().hex}"
    with tf.gfile.GFile(f"{root}/data/x.bin", "wb") as f:
        f.write(os.urandom(1000))
    tf.gfile.Copy(f"{root}/data/x.bin", str(tmp_path / "x.bin"))
    assert (tmp_path / "x.bin").read_bytes() == tf.gfile.GFile(f"{root}/data/x.bin", "rb").read()
    tf.gfile.Rename(f"{root}/data", str(tmp_path / "moved"))  # a directory, memory -> disk
    assert not tf.gfile.Exists(f"{root}/data") and (tmp_path / "moved" / "x.bin").stat().st_size == 1000
    tf.gfile.Rename(str(tmp_path / "x.bin"), f"{root}/back.bin")  # a file, disk -> memory
    assert tf.gfile.Stat(f"{root}/back.bin").length == 1000 and not (tmp_path / "x.bin").exists()


def test_relative_glob_is_spelled_like_tensorflow(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "t").write_text("x")
    (tmp_path / ".hidden").write_text("x")
    assert sorted(tf.gfile.Glob("*")) == ["./.hidden", "./s"]
    assert tf.gfile.Glob("s/*") == ["s/t"] and tf.gfile.Glob("s/") == ["s/"]
