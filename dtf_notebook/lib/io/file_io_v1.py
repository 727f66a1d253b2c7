"""TF1's ``tf.gfile`` functions under TF1's parameter names (``filename``, ``dirname``, ``oldpath``, ...).

TF's ``file_io`` keeps two generations side by side: ``tf.gfile.Exists(filename)`` is ``file_exists`` and
``tf.io.gfile.exists(path)`` is ``file_exists_v2``. The work is :mod:`.file_io`'s; these functions only give TF1's
signatures, so that a script calling ``tf.gfile.Copy(oldpath=..., newpath=...)`` binds as under TF.

Example:
    >>> recursive_create_dir("memory://file_io_v1_doc/logs")
    >>> file_exists("memory://file_io_v1_doc/logs"), is_directory("memory://file_io_v1_doc/logs")
    (True, True)
    >>> delete_recursively("memory://file_io_v1_doc")
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.lib.io import file_io
from dtf_notebook.lib.io.matching_paths import glob

__all__ = [
    "copy",
    "create_dir",
    "delete_file",
    "delete_recursively",
    "file_exists",
    "get_matching_files",
    "is_directory",
    "list_directory",
    "recursive_create_dir",
    "rename",
    "stat",
]


def file_exists(filename: Any) -> bool:
    """``tf.gfile.Exists``: whether ``filename`` (a file or directory) exists.

    Example:
        >>> file_exists("memory://file_io_v1_exists/none")
        False
    """
    return file_io.exists(filename)


def delete_file(filename: Any) -> None:
    """``tf.gfile.Remove``: deletes the file ``filename``.

    Raises:
        NotFoundError: ``filename`` does not exist.

    Example:
        >>> file_io.write_string_to_file("memory://file_io_v1_rm/a", "x")
        >>> delete_file("memory://file_io_v1_rm/a"); file_exists("memory://file_io_v1_rm/a")
        False
    """
    file_io.remove(filename)


def get_matching_files(filename: Any) -> list[str]:
    """``tf.gfile.Glob``: the paths matching the pattern(s) ``filename``.

    Example:
        >>> file_io.write_string_to_file("memory://file_io_v1_glob/a.txt", "x")
        >>> get_matching_files("memory://file_io_v1_glob/*.txt")
        ['memory://file_io_v1_glob/a.txt']
        >>> delete_recursively("memory://file_io_v1_glob")
    """
    return glob(filename)


def create_dir(dirname: Any) -> None:
    """``tf.gfile.MkDir``: creates the directory ``dirname`` (its parent must exist).

    Example:
        >>> create_dir("memory://file_io_v1_mkdir"); is_directory("memory://file_io_v1_mkdir")
        True
        >>> delete_recursively("memory://file_io_v1_mkdir")
    """
    file_io.mkdir(dirname)


def recursive_create_dir(dirname: Any) -> None:
    """``tf.gfile.MakeDirs``: creates ``dirname`` and any missing parents.

    Example:
        >>> recursive_create_dir("memory://file_io_v1_makedirs/a/b"); is_directory("memory://file_io_v1_makedirs/a/b")
        True
        >>> delete_recursively("memory://file_io_v1_makedirs")
    """
    file_io.makedirs(dirname)


def copy(oldpath: Any, newpath: Any, overwrite: bool = False) -> None:
    """``tf.gfile.Copy``: copies the file ``oldpath`` to ``newpath``.

    Raises:
        AlreadyExistsError: ``newpath`` exists and ``overwrite`` is False.

    Example:
        >>> file_io.write_string_to_file("memory://file_io_v1_cp/a", "x")
        >>> copy("memory://file_io_v1_cp/a", "memory://file_io_v1_cp/b")
        >>> file_io.read_file_to_string("memory://file_io_v1_cp/b")
        'x'
        >>> delete_recursively("memory://file_io_v1_cp")
    """
    file_io.copy(oldpath, newpath, overwrite)


def rename(oldname: Any, newname: Any, overwrite: bool = False) -> None:
    """``tf.gfile.Rename``: moves ``oldname`` to ``newname``.

    Raises:
        AlreadyExistsError: ``newname`` exists and ``overwrite`` is False.

    Example:
        >>> file_io.write_string_to_file("memory://file_io_v1_mv/a", "x")
        >>> rename("memory://file_io_v1_mv/a", "memory://file_io_v1_mv/b")
        >>> list_directory("memory://file_io_v1_mv")
        ['b']
        >>> delete_recursively("memory://file_io_v1_mv")
    """
    file_io.rename(oldname, newname, overwrite)


def delete_recursively(dirname: Any) -> None:
    """``tf.gfile.DeleteRecursively``: deletes ``dirname`` and everything under it.

    Example:
        >>> recursive_create_dir("memory://file_io_v1_rmtree/a")
        >>> delete_recursively("memory://file_io_v1_rmtree"); file_exists("memory://file_io_v1_rmtree")
        False
    """
    file_io.rmtree(dirname)


def is_directory(dirname: Any) -> bool:
    """``tf.gfile.IsDirectory``: whether ``dirname`` is a directory.

    Example:
        >>> is_directory(".")
        True
    """
    return file_io.isdir(dirname)


def list_directory(dirname: Any) -> list[str]:
    """``tf.gfile.ListDirectory``: the entries of ``dirname`` (names, not paths).

    Raises:
        NotFoundError: ``dirname`` is not a directory.

    Example:
        >>> file_io.write_string_to_file("memory://file_io_v1_ls/a.txt", "x")
        >>> list_directory("memory://file_io_v1_ls")
        ['a.txt']
        >>> delete_recursively("memory://file_io_v1_ls")
    """
    return file_io.listdir(dirname)


def stat(filename: Any) -> file_io.FileStatistics:
    """``tf.gfile.Stat``: the size, modification time and kind of ``filename``.

    Raises:
        NotFoundError: ``filename`` does not exist.

    Example:
        >>> file_io.write_string_to_file("memory://file_io_v1_stat/a", "abc")
        >>> stat("memory://file_io_v1_stat/a").length
        3
        >>> delete_recursively("memory://file_io_v1_stat")
    """
    return file_io.stat(filename)
