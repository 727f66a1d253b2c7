"""Whole files as string tensors: ``tf.read_file`` (``ReadFile``) and ``tf.write_file`` (``WriteFile``), and
``tf.timestamp`` (``Timestamp``).

Paths are read the way fsspec opens them (local paths, ``file://``, ``memory://``, ``s3://``, ...), and a task
started with file roots refuses paths outside them (``PermissionDeniedError``), as its checkpoint ops do.

Example:
    >>> import tempfile, os
    >>> import dtf_notebook as tf
    >>> path = os.path.join(tempfile.mkdtemp(), "notes", "a.txt")
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sess.run(write_file(path, "hello"))
    ...     print(sess.run(read_file(path)))
    b'hello'
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable
from typing import Any

import fsspec
import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import scalar
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["read_file", "timestamp", "write_file"]


def _scalar_string(value: Any, op: Operation, what: str) -> str:
    array = np.asarray(value, dtype=object)
    if array.ndim != 0:
        raise errors.InvalidArgumentError(None, op, f"{what} must be a scalar, got shape {list(array.shape)}")
    item = array.item()
    return item.decode("utf-8") if isinstance(item, bytes) else str(item)


def _read_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    files = ctx.state.files

    def run(filename: Any) -> np.ndarray:
        path = files.check(_scalar_string(filename, op, "filename"), "read")
        try:
            with fsspec.open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(None, op, f"{path}; No such file or directory") from None
        except IsADirectoryError:
            raise errors.FailedPreconditionError(None, op, f"{path}; Is a directory") from None
        return np.array(data, dtype=object)

    return run


def _write_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    files = ctx.state.files

    def run(filename: Any, contents: Any) -> None:
        path = files.check(_scalar_string(filename, op, "filename"), "write")
        data = np.asarray(contents, dtype=object)
        if data.ndim != 0:
            raise errors.InvalidArgumentError(
                None, op, f"Contents tensor must be scalar, but had shape: {list(data.shape)}"
            )
        fs, fs_path = fsspec.core.url_to_fs(path)
        parent = posixpath.dirname(fs_path)
        if parent:
            fs.makedirs(parent, exist_ok=True)  # TF creates the missing directories
        with fs.open(fs_path, "wb") as f:
            f.write(bytes(data.item()))

    return run


op_registry.register_op(
    "ReadFile",
    infer=lambda op: [(dtypes.string, scalar())],
    kernel=_read_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)
op_registry.register_op(
    "WriteFile",
    infer=lambda op: [],
    kernel=_write_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)


def _timestamp_kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    return lambda: torch.tensor(time.time(), dtype=torch.float64)


op_registry.register_op(
    "Timestamp",
    infer=lambda op: [(dtypes.float64, scalar())],
    kernel=_timestamp_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)


def read_file(filename: Any, name: str | None = None) -> Tensor:
    """The whole contents of the file ``filename`` as a scalar string.

    Raises:
        NotFoundError: (at run time) no such file.
        PermissionDeniedError: (at run time) the path lies outside the task's file roots.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.read_file("data.bin").shape.as_list()
        []
    """
    path = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
    if path.shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {path.shape.ndims} for 'filename' of 'ReadFile'")
    return make_op("ReadFile", [path], name=name or "ReadFile").outputs[0]


def write_file(filename: Any, contents: Any, name: str | None = None) -> Operation:
    """An op writing the scalar string ``contents`` to ``filename`` (replacing it; missing directories are made).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.write_file("memory://doc/out.txt", "x").type
        'WriteFile'
    """
    path = convert_to_tensor(filename, dtype=dtypes.string, name="filename")
    data = convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    for arg, t in (("filename", path), ("contents", data)):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"Shape must be rank 0 but is rank {t.shape.ndims} for '{arg}' of 'WriteFile'")
    return make_op("WriteFile", [path, data], name=name or "WriteFile")


def timestamp(name: str | None = None) -> Tensor:
    """The time at which the op runs, in seconds since the epoch (float64).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sess.run(tf.timestamp()) > 1.5e9
        np.True_
    """
    return make_op("Timestamp", [], name=name or "Timestamp").outputs[0]
