"""``tf.io.gfile``: TF2's names of the file API (``exists``, ``glob``, ``makedirs``, ``GFile``, ...) on fsspec.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.io.gfile.makedirs("memory://compat_io_gfile_doc/x")
    >>> tf.io.gfile.listdir("memory://compat_io_gfile_doc"), tf.io.gfile.isdir("memory://compat_io_gfile_doc/x")
    (['x'], True)
    >>> tf.io.gfile.rmtree("memory://compat_io_gfile_doc")
"""

from dtf_notebook.lib.io.file_io import (
    copy,
    exists,
    get_registered_schemes,
    isdir,
    join,
    listdir,
    makedirs,
    mkdir,
    remove,
    rename,
    rmtree,
    stat,
    walk,
)
from dtf_notebook.lib.io.gfile import GFile
from dtf_notebook.lib.io.matching_paths import glob

__all__ = [
    "GFile",
    "copy",
    "exists",
    "get_registered_schemes",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
]
