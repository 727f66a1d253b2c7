"""File I/O on fsspec with TF's semantics: ``tf.io.gfile`` (and, under TF1's names, ``tf.gfile``).

A path is a local path (relative or absolute), a ``file://`` URL or any fsspec URL (``memory://``,
``s3://``, ``gs://``, ... where the fsspec backend is installed). Paths keep the caller's spelling:
what ``walk`` (and :mod:`.matching_paths`' ``glob``) return is built from the top directory as given. Failures are
TF's error classes with TF's messages: a missing file is ``NotFoundError``, a file where a directory
should be is ``FailedPreconditionError``, an occupied destination is ``AlreadyExistsError``.

Object stores have no directories: there, as in fsspec, writing ``a/b`` needs no ``a`` made first.
:class:`~dtf_notebook.lib.io.gfile.GFile` opens files; :mod:`.matching_paths` matches glob patterns.

Example:
    >>> makedirs("memory://file_io_doc/run")
    >>> write_string_to_file("memory://file_io_doc/run/notes.txt", "step 1\\n")
    >>> listdir("memory://file_io_doc/run"), read_file_to_string("memory://file_io_doc/run/notes.txt")
    (['notes.txt'], 'step 1\\n')
    >>> rmtree("memory://file_io_doc")
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import fsspec

from dtf_notebook import errors

_COPY_CHUNK = 16 * 1024 * 1024


def _fspath(path: Any) -> str:
    path = os.fspath(path)
    return path.decode() if isinstance(path, bytes) else path


def _split_scheme(path: str) -> tuple[str, str]:
    scheme, sep, rest = path.partition("://")
    return (scheme + sep, rest) if sep else ("", path)


def _filesystem(path: str) -> tuple[Any, str]:
    return fsspec.core.url_to_fs(path)


def _is_local(fs: Any) -> bool:
    return "file" in fs.protocol


@contextmanager
def _translated(path: str) -> Iterator[None]:
    """Turns the OS's and fsspec's exceptions into TF's error classes, worded as TF words them."""
    try:
        yield
    except FileNotFoundError as e:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from e
    except IsADirectoryError as e:
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory") from e
    except NotADirectoryError as e:
        raise errors.FailedPreconditionError(None, None, f"{path}; Not a directory") from e
    except FileExistsError as e:
        raise errors.AlreadyExistsError(None, None, f"{path}; File exists") from e
    except PermissionError as e:
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied") from e
    except OSError as e:
        raise errors.UnknownError(None, None, f"{path}; {e.strerror or e}") from e


def _not_found(path: str) -> errors.NotFoundError:
    return errors.NotFoundError(None, None, f"{path}; No such file or directory")


def _as_bytes(value: Any, encoding: str = "utf-8") -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {value!r}")


def read_file_to_string(filename: Any, binary_mode: bool = False) -> str | bytes:
    """The whole content of ``filename``: ``str`` (UTF-8), or ``bytes`` with ``binary_mode``.

    Raises:
        NotFoundError: there is no such file.

    Example:
        >>> write_string_to_file("memory://file_io_doc_rw/f", "text")
        >>> read_file_to_string("memory://file_io_doc_rw/f"), read_file_to_string("memory://file_io_doc_rw/f", True)
        ('text', b'text')
    """
    filename = _fspath(filename)
    fs, fs_path = _filesystem(filename)
    with _translated(filename):
        if fs.isdir(fs_path):
            raise IsADirectoryError(filename)
        data = fs.cat_file(fs_path)
    return data if binary_mode else data.decode("utf-8")


def write_string_to_file(filename: Any, file_content: Any) -> None:
    """Replaces ``filename``'s content with ``file_content`` (``str``, written as UTF-8, or ``bytes``).

    Raises:
        NotFoundError: the file's directory does not exist (local filesystems).

    Example:
        >>> write_string_to_file("memory://file_io_doc_w/f", b"\\x00")
        >>> read_file_to_string("memory://file_io_doc_w/f", binary_mode=True)
        b'\\x00'
    """
    filename = _fspath(filename)
    fs, fs_path = _filesystem(filename)
    with _translated(filename):
        if fs.isdir(fs_path):
            raise IsADirectoryError(filename)
        with fs.open(fs_path, "wb") as f:
            f.write(_as_bytes(file_content))


def join(path: str, *paths: str) -> str:
    """Joins path components with ``/`` (URLs keep their scheme).

    Example:
        >>> join("memory://bucket", "run", "model.ckpt")
        'memory://bucket/run/model.ckpt'
    """
    return posixpath.join(_fspath(path), *(_fspath(p) for p in paths))


def _parent(path: str) -> str:
    """The directory holding ``path``; ``""`` at a root (``/``, ``memory://``) or for a bare relative name."""
    scheme, rest = _split_scheme(path)
    rest = rest.rstrip("/")
    parent = posixpath.dirname(rest)
    return scheme + parent if parent and parent != rest else ""


def _child(directory: str, name: str) -> str:
    """``name`` inside ``directory`` as ``glob`` spells it (``memory://`` + ``x`` is ``memory://x``)."""
    return directory + name if directory.endswith("/") else f"{directory}/{name}"


def exists(path: Any) -> bool:
    """True when ``path`` is an existing file or directory.

    Example:
        >>> exists("memory://file_io_doc_exists/none"), exists(".")
        (False, True)
    """
    path = _fspath(path)
    if not path:
        return False
    fs, fs_path = _filesystem(path)
    with _translated(path):
        return bool(fs.exists(fs_path))


def isdir(path: Any) -> bool:
    """True when ``path`` is a directory.

    Example:
        >>> isdir("."), isdir("memory://file_io_doc_isdir/none")
        (True, False)
    """
    path = _fspath(path)
    if not path:
        return False
    fs, fs_path = _filesystem(path)
    with _translated(path):
        return bool(fs.isdir(fs_path))


def listdir(path: Any) -> list[str]:
    """The names of the entries of directory ``path``, sorted.

    Raises:
        NotFoundError: ``path`` is not a directory.

    Example:
        >>> write_string_to_file("memory://file_io_doc_ls/a.txt", "x")
        >>> listdir("memory://file_io_doc_ls")
        ['a.txt']
        >>> rmtree("memory://file_io_doc_ls")
    """
    path = _fspath(path)
    if not isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    fs, fs_path = _filesystem(path)
    with _translated(path):
        entries = fs.ls(fs_path, detail=False)
    own = fs_path.rstrip("/")
    return sorted({posixpath.basename(e.rstrip("/")) for e in entries if e.rstrip("/") != own})


def mkdir(path: Any) -> None:
    """Creates directory ``path`` (its parent must exist); an existing ``path`` is left as it is.

    Raises:
        NotFoundError: the parent directory does not exist.

    Example:
        >>> mkdir("memory://file_io_doc_mkdir"); isdir("memory://file_io_doc_mkdir")
        True
        >>> rmtree("memory://file_io_doc_mkdir")
    """
    path = _fspath(path)
    if exists(path):
        return
    parent = _parent(path)
    if parent and not isdir(parent):
        raise _not_found(path)
    fs, fs_path = _filesystem(path)
    with _translated(path):
        fs.mkdir(fs_path, create_parents=False)


def makedirs(path: Any) -> None:
    """Creates directory ``path`` and any missing parents; succeeds when it already exists.

    Raises:
        FailedPreconditionError: ``path`` or one of its parents is a file.

    Example:
        >>> makedirs("memory://file_io_doc_makedirs/a/b"); makedirs("memory://file_io_doc_makedirs/a/b")
        >>> isdir("memory://file_io_doc_makedirs/a")
        True
        >>> rmtree("memory://file_io_doc_makedirs")
    """
    path = _fspath(path)
    # The nearest existing ancestor (or path itself) must be a directory to create anything under it.
    ancestor = path
    while ancestor and not exists(ancestor):
        ancestor = _parent(ancestor)
    fs, fs_path = _filesystem(path)
    if ancestor and not isdir(ancestor):
        # TF names the file by its local path here, without a file:// scheme.
        blocker = _filesystem(ancestor)[1] if _is_local(fs) else ancestor
        raise errors.FailedPreconditionError(None, None, f"{blocker} is not a directory")
    with _translated(path):
        fs.makedirs(fs_path, exist_ok=True)


def remove(path: Any) -> None:
    """Deletes file ``path``.

    Raises:
        NotFoundError: there is no such file.
        FailedPreconditionError: ``path`` is a directory (use :func:`rmtree`).

    Example:
        >>> write_string_to_file("memory://file_io_doc_rm/f", "x")
        >>> remove("memory://file_io_doc_rm/f"); exists("memory://file_io_doc_rm/f")
        False
    """
    path = _fspath(path)
    if not exists(path):
        raise _not_found(path)
    if isdir(path):
        raise errors.FailedPreconditionError(None, None, f"{path}; Is a directory")
    fs, fs_path = _filesystem(path)
    with _translated(path):
        fs.rm_file(fs_path)


def rmtree(path: Any) -> None:
    """Deletes ``path`` and everything under it (a file is simply deleted).

    Raises:
        NotFoundError: ``path`` does not exist.

    Example:
        >>> makedirs("memory://file_io_doc_rmtree/a/b"); rmtree("memory://file_io_doc_rmtree")
        >>> exists("memory://file_io_doc_rmtree/a")
        False
    """
    path = _fspath(path)
    if not exists(path):
        raise errors.NotFoundError(None, None, f"{path} not found")
    fs, fs_path = _filesystem(path)
    with _translated(path):
        fs.rm(fs_path, recursive=True)


def _copy_file(src: str, dst: str) -> None:
    """Streams ``src`` into ``dst``; the two may be on different filesystems."""
    src_fs, src_path = _filesystem(src)
    dst_fs, dst_path = _filesystem(dst)
    with _translated(src), src_fs.open(src_path, "rb") as reader:
        with _translated(dst), dst_fs.open(dst_path, "wb") as writer:
            while chunk := reader.read(_COPY_CHUNK):
                writer.write(chunk)


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Copies file ``src`` to ``dst``, across filesystems too.

    Raises:
        NotFoundError: ``src`` does not exist, or ``dst``'s directory does not.
        AlreadyExistsError: ``dst`` exists and ``overwrite`` is False.
        FailedPreconditionError: ``src`` or ``dst`` is a directory.

    Example:
        >>> write_string_to_file("memory://file_io_doc_cp/a", "data")
        >>> copy("memory://file_io_doc_cp/a", "memory://file_io_doc_cp/b")
        >>> read_file_to_string("memory://file_io_doc_cp/b")
        'data'
        >>> rmtree("memory://file_io_doc_cp")
    """
    src, dst = _fspath(src), _fspath(dst)
    if not exists(src):
        raise _not_found(src)
    if isdir(src):
        raise errors.FailedPreconditionError(None, None, f"{src}; Is a directory")
    if exists(dst):
        if not overwrite:
            raise errors.AlreadyExistsError(None, None, "file already exists")
        if isdir(dst):
            raise errors.FailedPreconditionError(None, None, f"{dst}; Is a directory")
    _copy_file(src, dst)


def _copy_tree(src: str, dst: str) -> None:
    for directory, _, files in walk(src):
        target = _child(dst, posixpath.relpath(directory, src)) if directory != src else dst
        makedirs(target)
        for name in files:
            _copy_file(_child(directory, name), _child(target, name))


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    """Renames (moves) file or directory ``src`` to ``dst``.

    On a local filesystem this is one atomic ``rename(2)``; between filesystems it is a copy followed
    by a delete.

    Raises:
        NotFoundError: ``src`` does not exist.
        AlreadyExistsError: ``dst`` exists and ``overwrite`` is False.
        FailedPreconditionError: ``dst`` is a directory that cannot be replaced.

    Example:
        >>> write_string_to_file("memory://file_io_doc_mv/a", "x")
        >>> rename("memory://file_io_doc_mv/a", "memory://file_io_doc_mv/b")
        >>> listdir("memory://file_io_doc_mv")
        ['b']
        >>> rmtree("memory://file_io_doc_mv")
    """
    src, dst = _fspath(src), _fspath(dst)
    if not exists(src):
        raise _not_found(src)
    if exists(dst) and not overwrite:
        raise errors.AlreadyExistsError(None, None, "file already exists")
    src_fs, src_path = _filesystem(src)
    dst_fs, dst_path = _filesystem(dst)
    if _is_local(src_fs) and _is_local(dst_fs):
        with _translated(dst):
            os.replace(src_path, dst_path)
        return
    if exists(dst):  # overwrite: replace a file or an empty directory, as rename(2) does
        if isdir(dst):
            if listdir(dst):
                raise errors.FailedPreconditionError(None, None, f"{dst}; Directory not empty")
            if not isdir(src):
                raise errors.FailedPreconditionError(None, None, f"{dst}; Is a directory")
        rmtree(dst)
    if src_fs is dst_fs:
        with _translated(dst):
            src_fs.mv(src_path, dst_path, recursive=isdir(src))
        return
    if isdir(src):
        _copy_tree(src, dst)
    else:
        _copy_file(src, dst)
    rmtree(src)


@dataclasses.dataclass(frozen=True)
class FileStatistics:
    """What :func:`stat` tells about a path.

    Attributes:
        length: Size in bytes.
        mtime_nsec: Last modification, in nanoseconds since the Epoch (whole seconds on local disks, as TF).
        is_directory: True for a directory.

    Example:
        >>> FileStatistics(length=3, mtime_nsec=0, is_directory=False).length
        3
    """

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path: Any) -> FileStatistics:
    """Size, modification time and kind of ``path``.

    Raises:
        NotFoundError: ``path`` does not exist.

    Example:
        >>> write_string_to_file("memory://file_io_doc_stat/f", b"abc")
        >>> s = stat("memory://file_io_doc_stat/f"); s.length, s.is_directory, s.mtime_nsec > 0
        (3, False, True)
        >>> rmtree("memory://file_io_doc_stat")
    """
    path = _fspath(path)
    if not exists(path):
        raise _not_found(path)
    fs, fs_path = _filesystem(path)
    with _translated(path):
        info = fs.info(fs_path)
        is_directory = info.get("type") == "directory"
        if isinstance(info.get("mtime"), int | float):
            mtime_nsec = int(info["mtime"]) * 1_000_000_000
        else:
            try:
                mtime_nsec = int(fs.modified(fs_path).timestamp() * 1e9)
            except (NotImplementedError, FileNotFoundError):  # a backend or a pseudo-directory without a time
                mtime_nsec = 0
    return FileStatistics(length=int(info.get("size") or 0), mtime_nsec=mtime_nsec, is_directory=is_directory)


def walk(
    top: Any, topdown: bool = True, onerror: Callable[[errors.OpError], None] | None = None
) -> Iterator[tuple[str, list[str], list[str]]]:
    """Yields ``(directory, subdirectory names, file names)`` for ``top`` and every directory under it.

    Top-down, the caller may prune ``subdirectory names`` in place before the walk goes down.

    Args:
        top: The directory to start from; paths yielded start with it as given.
        topdown: Yield a directory before (True) or after (False) the directories under it.
        onerror: Called with the ``NotFoundError`` of a directory that cannot be listed; by default such
            a directory is skipped silently.

    Example:
        >>> makedirs("memory://file_io_doc_walk/sub")
        >>> write_string_to_file("memory://file_io_doc_walk/sub/f", "x")
        >>> list(walk("memory://file_io_doc_walk"))
        [('memory://file_io_doc_walk', ['sub'], []), ('memory://file_io_doc_walk/sub', [], ['f'])]
        >>> rmtree("memory://file_io_doc_walk")
    """
    top = _fspath(top)
    try:
        listing = listdir(top)
    except errors.NotFoundError as err:
        if onerror:
            onerror(err)
        return
    subdirs, files = [], []
    for name in listing:
        (subdirs if isdir(join(top, name)) else files).append(name)
    here = (top, subdirs, files)
    if topdown:
        yield here
    for name in subdirs:
        yield from walk(join(top, name), topdown, onerror)
    if not topdown:
        yield here


def get_registered_schemes() -> list[str]:
    """The URL schemes paths may use: ``""`` (a plain local path) and fsspec's known protocols.

    Example:
        >>> {"", "file", "memory"} <= set(get_registered_schemes())
        True
    """
    return ["", *fsspec.available_protocols()]


__all__ = [
    "FileStatistics",
    "copy",
    "exists",
    "get_registered_schemes",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "read_file_to_string",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
    "write_string_to_file",
]
