"""Checkpoint file I/O through fsspec: local paths and URLs (``memory://``, ``s3://``, ``gs://``, ...).

Paths stay strings in the user's spelling (a local path or a URL) everywhere above this module;
only here are they turned into an fsspec filesystem and a path on it. Every write goes to a
temporary name first and is then moved into place, so a reader never sees half a file under a
final name. Filesystem errors become TF's error classes and name the file.

Example:
    >>> write_atomic("memory://doc/files/hello.txt", b"hi")
    >>> read_bytes("memory://doc/files/hello.txt"), exists("memory://doc/files/hello.txt")
    (b'hi', True)
    >>> join(dirname("memory://doc/files/hello.txt"), "other")
    'memory://doc/files/other'
    >>> remove("memory://doc/files/hello.txt"); exists("memory://doc/files/hello.txt")
    False
"""

from __future__ import annotations

import mmap
import os
import posixpath
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import fsspec
import numpy as np

from dtf_notebook import errors

#: Marks a file still being written; never part of a checkpoint's final names.
TEMP_MARKER = ".tmp-"


def _split_scheme(path: str) -> tuple[str, str]:
    scheme, sep, rest = path.partition("://")
    return (scheme + sep, rest) if sep else ("", path)


def filesystem(path: str) -> tuple[Any, str]:
    """The fsspec filesystem holding ``path`` and the path on it.

    Example:
        >>> fs, p = filesystem("memory://a/b")
        >>> type(fs).__name__, p
        ('MemoryFileSystem', '/a/b')
    """
    return fsspec.core.url_to_fs(path)


def is_absolute(path: str) -> bool:
    """True for a URL with a scheme or an absolute local path.

    Example:
        >>> is_absolute("memory://x"), is_absolute("/tmp/x"), is_absolute("ckpt/x")
        (True, True, False)
    """
    return bool(_split_scheme(path)[0]) or os.path.isabs(path)


def dirname(path: str) -> str:
    """The directory part of a path or URL (``""`` for a bare local file name).

    Example:
        >>> dirname("s3://bucket/run/model.ckpt"), dirname("model.ckpt")
        ('s3://bucket/run', '')
    """
    scheme, rest = _split_scheme(path)
    return scheme + (posixpath.dirname(rest) if scheme else os.path.dirname(rest))


def basename(path: str) -> str:
    """The last component of a path or URL.

    Example:
        >>> basename("memory://run/model.ckpt-3")
        'model.ckpt-3'
    """
    return posixpath.basename(_split_scheme(path)[1])


def join(directory: str, name: str) -> str:
    """``name`` inside ``directory`` (``name`` itself when the directory is ``""``).

    Example:
        >>> join("memory://run", "checkpoint"), join("", "checkpoint")
        ('memory://run/checkpoint', 'checkpoint')
    """
    if not directory:
        return name
    scheme, rest = _split_scheme(directory)
    if scheme:
        return scheme + (rest.rstrip("/") + "/" + name if rest else name)
    return os.path.join(directory, name)


def relative_to(path: str, directory: str) -> str:
    """``path`` relative to ``directory`` when it lies inside it, else ``path`` unchanged.

    Example:
        >>> relative_to("memory://run/model-1", "memory://run"), relative_to("/a/b/m", "/a")
        ('model-1', 'b/m')
    """
    p_scheme, p_rest = _split_scheme(path)
    d_scheme, d_rest = _split_scheme(directory)
    if p_scheme != d_scheme or not directory:
        return path
    if p_scheme:
        prefix = d_rest.rstrip("/") + "/" if d_rest else ""
        return p_rest[len(prefix) :] if p_rest.startswith(prefix) else path
    return os.path.relpath(path, directory)


@contextmanager
def _translated(path: str, action: str) -> Iterator[None]:
    """Turns filesystem exceptions into OpErrors naming ``path``."""
    try:
        yield
    except errors.OpError:
        raise
    except FileNotFoundError as e:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory ({action})") from e
    except PermissionError as e:
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied ({action})") from e
    except (OSError, ValueError) as e:
        raise errors.UnknownError(None, None, f"{path}: could not {action}: {e}") from e


def temp_name(path: str) -> str:
    """A fresh temporary name next to ``path`` (same directory, so a move is a rename).

    Example:
        >>> temp_name("memory://run/m.index.json").startswith("memory://run/m.index.json.tmp-")
        True
    """
    return f"{path}{TEMP_MARKER}{uuid.uuid4().hex}"


def _is_local(fs: Any) -> bool:
    return "file" in fs.protocol


def is_local(path: str) -> bool:
    """True when ``path`` is on the local filesystem (a plain path or ``file://``).

    Example:
        >>> is_local("/tmp/x"), is_local("memory://x")
        (True, False)
    """
    return _is_local(filesystem(path)[0])


def write_temp(path: str, data: bytes | memoryview) -> str:
    """Writes ``data`` to a fresh temporary name next to ``path``; returns that name.

    Raises:
        NotFoundError: the directory does not exist (local filesystems; object stores have none).
        PermissionDeniedError, UnknownError: the write failed.

    Example:
        >>> tmp = write_temp("memory://doc/tmp/x", b"1")
        >>> move(tmp, "memory://doc/tmp/x"); read_bytes("memory://doc/tmp/x")
        b'1'
    """
    tmp = temp_name(path)
    fs, fs_path = filesystem(tmp)
    with _translated(tmp, "write"):
        try:
            with fs.open(fs_path, "wb") as f:
                f.write(data)
        except BaseException:
            _remove_quietly(fs, fs_path)
            raise
    return tmp


def move(src: str, dst: str) -> None:
    """Moves ``src`` onto ``dst`` (an atomic rename on local filesystems), replacing ``dst``.

    Example:
        >>> write_atomic("memory://doc/mv/a", b"a"); move("memory://doc/mv/a", "memory://doc/mv/b")
        >>> exists("memory://doc/mv/a"), read_bytes("memory://doc/mv/b")
        (False, b'a')
    """
    fs, src_path = filesystem(src)
    _, dst_path = filesystem(dst)
    with _translated(dst, f"move {src} into place"):
        if _is_local(fs):
            # os.replace is one atomic rename that replaces a file and refuses a directory; fsspec's
            # local move would put the file *inside* a directory of that name instead.
            os.replace(src_path, dst_path)
        else:
            fs.mv(src_path, dst_path)


def write_atomic(path: str, data: bytes | memoryview) -> None:
    """Writes ``data`` to ``path`` so that readers see the old file or the whole new one, never a part.

    Example:
        >>> write_atomic("memory://doc/atomic/f", b"v1"); write_atomic("memory://doc/atomic/f", b"v2")
        >>> read_bytes("memory://doc/atomic/f")
        b'v2'
    """
    tmp = write_temp(path, data)
    try:
        move(tmp, path)
    except BaseException:
        remove_quietly(tmp)
        raise


def read_bytes(path: str) -> bytes:
    """The whole content of ``path``.

    Raises:
        NotFoundError: there is no such file.

    Example:
        >>> write_atomic("memory://doc/read/f", b"abc"); read_bytes("memory://doc/read/f")
        b'abc'
        >>> read_bytes("memory://doc/read/missing")
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.NotFoundError: memory://doc/read/missing; No such file or directory (read)
    """
    fs, fs_path = filesystem(path)
    with _translated(path, "read"):
        return fs.cat_file(fs_path)


def read_range(path: str, start: int, size: int) -> np.ndarray:
    """``size`` bytes of ``path`` from ``start`` (fewer where the file ends sooner) as a ``uint8`` array of the
    caller's own: a checkpoint's reader takes one tensor from a data file without reading the rest. A local file is
    mapped and copied once (a read through the page cache copies twice).

    Raises:
        NotFoundError: there is no such file.

    Example:
        >>> write_atomic("memory://doc/range/f", b"abcdef"); read_range("memory://doc/range/f", 2, 3).tobytes()
        b'cde'
    """
    fs, fs_path = filesystem(path)
    with _translated(path, "read"):
        if not _is_local(fs):
            return np.frombuffer(fs.cat_file(fs_path, start=start, end=start + size), np.uint8).copy()
        with open(fs_path, "rb") as f:
            length = os.fstat(f.fileno()).st_size
            end = min(start + size, length)
            if end <= start:
                return np.empty(0, np.uint8)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return np.frombuffer(mapped, np.uint8, count=end - start, offset=start).copy()


def exists(path: str) -> bool:
    """True when ``path`` names an existing file or directory.

    Example:
        >>> write_atomic("memory://doc/exists/f", b"")
        >>> exists("memory://doc/exists/f"), exists("memory://doc/exists"), exists("memory://doc/exists/g")
        (True, True, False)
    """
    fs, fs_path = filesystem(path)
    with _translated(path, "check"):
        return bool(fs.exists(fs_path))


def isdir(path: str) -> bool:
    """True when ``path`` is a directory (``""``, the working directory, is one).

    Example:
        >>> write_atomic("memory://doc/isdir/f", b"")
        >>> isdir("memory://doc/isdir"), isdir("memory://doc/isdir/f"), isdir("")
        (True, False, True)
    """
    if not path:
        return True
    fs, fs_path = filesystem(path)
    with _translated(path, "check"):
        return bool(fs.isdir(fs_path))


def mtime(path: str) -> float:
    """Modification time of ``path`` in seconds since the Epoch.

    Raises:
        NotFoundError: there is no such file.

    Example:
        >>> import time
        >>> write_atomic("memory://doc/mtime/f", b"")
        >>> abs(mtime("memory://doc/mtime/f") - time.time()) < 60
        True
    """
    fs, fs_path = filesystem(path)
    with _translated(path, "stat"):
        return fs.modified(fs_path).timestamp()


def remove(path: str, missing_ok: bool = False) -> None:
    """Deletes the file ``path``.

    Raises:
        NotFoundError: there is no such file and ``missing_ok`` is False.

    Example:
        >>> write_atomic("memory://doc/remove/f", b"")
        >>> remove("memory://doc/remove/f"); exists("memory://doc/remove/f")
        False
        >>> remove("memory://doc/remove/f", missing_ok=True)   # already gone: nothing to do
    """
    fs, fs_path = filesystem(path)
    if missing_ok and not fs.exists(fs_path):
        return
    with _translated(path, "delete"):
        fs.rm_file(fs_path)


def glob(pattern: str) -> list[str]:
    """Paths matching a glob ``pattern``, spelled like ``pattern`` (same scheme), sorted.

    Example:
        >>> write_atomic("memory://doc/glob/a-1", b""); write_atomic("memory://doc/glob/a-2", b"")
        >>> glob("memory://doc/glob/a-*")
        ['memory://doc/glob/a-1', 'memory://doc/glob/a-2']
    """
    fs, fs_pattern = filesystem(pattern)
    directory = dirname(pattern)
    with _translated(pattern, "list"):
        found = fs.glob(fs_pattern)
    return sorted(join(directory, posixpath.basename(p)) for p in found)


def _remove_quietly(fs: Any, fs_path: str) -> None:
    # Best effort after a failed write: the original error is the one worth reporting.
    try:
        if fs.isfile(fs_path):
            fs.rm_file(fs_path)
    except OSError:
        pass


def remove_quietly(path: str) -> None:
    """Deletes the file ``path`` if it exists, ignoring failures (cleanup after an error).

    Example:
        >>> remove_quietly("memory://doc/never/there")
    """
    fs, fs_path = filesystem(path)
    _remove_quietly(fs, fs_path)
