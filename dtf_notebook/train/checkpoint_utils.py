"""Reading checkpoints outside a graph: ``tf.train.list_variables``, ``load_variable``, ``NewCheckpointReader``.

Values come back as numpy arrays; a partitioned variable is listed with its full shape and read
back whole, assembled from its saved slices.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     e = tf.get_variable("emb", [5, 2], initializer=tf.ones_initializer(),
    ...                         partitioner=lambda shape, dtype: [3, 1])
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         _ = tf.train.Saver().save(sess, "memory://doc/utils/model")
    >>> tf.train.list_variables("memory://doc/utils")
    [('emb', [5, 2])]
    >>> tf.train.load_variable("memory://doc/utils", "emb").sum()
    np.float32(10.0)
"""

from __future__ import annotations

import os
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.ops.checkpoint_open import open_checkpoint
from dtf_notebook.runtime import checkpoint_files, values
from dtf_notebook.train.checkpoint_management import latest_checkpoint

__all__ = ["NewCheckpointReader", "checkpoint_prefix", "list_variables", "load_checkpoint", "load_variable"]


class CheckpointReaderNumpy:
    """TF's ``CheckpointReader``: tensors of one checkpoint, as numpy values.

    Example:
        >>> reader = NewCheckpointReader("memory://doc/utils/model")
        >>> reader.has_tensor("emb"), reader.get_variable_to_shape_map()
        (True, {'emb': [5, 2]})
    """

    def __init__(self, prefix: str) -> None:
        self._reader = open_checkpoint(prefix)

    def has_tensor(self, name: str) -> bool:
        """True when the checkpoint holds a tensor saved as ``name``."""
        return self._reader.has_tensor(name)

    def get_tensor(self, name: str) -> Any:
        """The saved tensor ``name`` as a numpy value (partitioned variables whole).

        Raises:
            NotFoundError: no tensor of that name (``Key <name> not found in checkpoint``).
        """
        return values.to_numpy(self._reader.read(name))

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        """Saved name → full shape."""
        return {n: self._reader.shape(n) for n in self._reader.names()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        """Saved name → dtype."""
        return {n: self._reader.dtype(n) for n in self._reader.names()}

    def shards(self) -> list[dict[str, Any]]:
        """Each shard's file, writing task, device and pid."""
        return self._reader.shards()

    def debug_string(self) -> bytes:
        """One ``name (dtype) [shape]`` line per saved tensor."""
        lines = [f"{n} ({self._reader.dtype(n).name}) {self._reader.shape(n)}" for n in self._reader.names()]
        return ("\n".join(lines) + "\n").encode("utf-8")


def NewCheckpointReader(filepattern: str) -> CheckpointReaderNumpy:
    """A reader for the checkpoint with prefix ``filepattern``.

    Raises:
        NotFoundError: there is no checkpoint with that prefix.

    Example:
        >>> reader = NewCheckpointReader("memory://doc/utils/model")
        >>> reader.get_tensor("emb").shape
        (5, 2)
    """
    return CheckpointReaderNumpy(os.fspath(filepattern))


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReaderNumpy:
    """A reader for a checkpoint prefix, or for the latest checkpoint of a directory.

    Raises:
        ValueError: a directory holds no checkpoint.
        NotFoundError: the prefix names no checkpoint.

    Example:
        >>> load_checkpoint("memory://doc/utils").get_variable_to_shape_map()  # the directory's latest
        {'emb': [5, 2]}
    """
    return NewCheckpointReader(checkpoint_prefix(ckpt_dir_or_file))


def checkpoint_prefix(ckpt_dir_or_file: str) -> str:
    """The checkpoint prefix itself, or a directory's latest checkpoint.

    Raises:
        ValueError: a directory holds no checkpoint.

    Example:
        >>> checkpoint_prefix("memory://doc/utils"), checkpoint_prefix("memory://doc/utils/model")
        ('memory://doc/utils/model', 'memory://doc/utils/model')
    """
    path = os.fspath(ckpt_dir_or_file)
    if not checkpoint_files.isdir(path):
        return path
    filename = latest_checkpoint(path)
    if filename is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
    return filename


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """``(name, shape)`` of every saved variable, sorted by name (full shapes for partitioned ones).

    Raises:
        ValueError, NotFoundError: as :func:`load_checkpoint`.

    Example:
        >>> list_variables("memory://doc/utils/model")
        [('emb', [5, 2])]
    """
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The saved value of variable ``name`` (a trailing ``:0`` is ignored) as numpy.

    Raises:
        NotFoundError: no such variable in the checkpoint.

    Example:
        >>> load_variable("memory://doc/utils/model", "emb:0").tolist()
        [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    """
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
