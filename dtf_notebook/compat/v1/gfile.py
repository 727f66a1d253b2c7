"""``tf.gfile``: TF1's file API (``GFile``, ``Exists``, ``Glob``, ``MakeDirs``, ...) on fsspec.

Local paths, ``file://`` and fsspec URLs such as ``memory://`` all work; errors are TF's
(``tf.errors.NotFoundError`` for a missing file, ...). ``tf.io.gfile`` has the same functions under
TF2's lower-case names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.gfile.MakeDirs("memory://compat_gfile_doc/logs")
    >>> with tf.gfile.GFile("memory://compat_gfile_doc/logs/a.txt", "w") as f:
    ...     f.write("hello")
    >>> tf.gfile.Glob("memory://compat_gfile_doc/logs/*.txt")
    ['memory://compat_gfile_doc/logs/a.txt']
    >>> tf.gfile.DeleteRecursively("memory://compat_gfile_doc")
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dtf_notebook.lib.io.file_io import walk as _walk
from dtf_notebook.lib.io.file_io_v1 import copy as Copy
from dtf_notebook.lib.io.file_io_v1 import create_dir as MkDir
from dtf_notebook.lib.io.file_io_v1 import delete_file as Remove
from dtf_notebook.lib.io.file_io_v1 import delete_recursively as DeleteRecursively
from dtf_notebook.lib.io.file_io_v1 import file_exists as Exists
from dtf_notebook.lib.io.file_io_v1 import get_matching_files as Glob
from dtf_notebook.lib.io.file_io_v1 import is_directory as IsDirectory
from dtf_notebook.lib.io.file_io_v1 import list_directory as ListDirectory
from dtf_notebook.lib.io.file_io_v1 import recursive_create_dir as MakeDirs
from dtf_notebook.lib.io.file_io_v1 import rename as Rename
from dtf_notebook.lib.io.file_io_v1 import stat as Stat
from dtf_notebook.lib.io.gfile import FastGFile, GFile

Open = GFile


def Walk(top: Any, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:
    """Yields ``(directory, subdirectory names, file names)`` under ``top``; parents first when ``in_order``.

    Directories that cannot be listed are skipped.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> tf.gfile.MakeDirs("memory://compat_walk_doc/a/b")
        >>> [d for d, _, _ in tf.gfile.Walk("memory://compat_walk_doc", in_order=False)]
        ['memory://compat_walk_doc/a/b', 'memory://compat_walk_doc/a', 'memory://compat_walk_doc']
        >>> tf.gfile.DeleteRecursively("memory://compat_walk_doc")
    """
    return _walk(top, topdown=in_order)


__all__ = [
    "Copy",
    "DeleteRecursively",
    "Exists",
    "FastGFile",
    "GFile",
    "Glob",
    "IsDirectory",
    "ListDirectory",
    "MakeDirs",
    "MkDir",
    "Open",
    "Remove",
    "Rename",
    "Stat",
    "Walk",
]
