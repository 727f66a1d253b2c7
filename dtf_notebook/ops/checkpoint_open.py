"""Opening a checkpoint by its prefix, in either format: TF's V2 tensor bundle (``<prefix>.index`` +
``<prefix>.data-*``, what savers here and TF's write) or this package's earlier one (``<prefix>.index.json`` +
safetensors shards), detected by which index exists.

Both readers answer the same questions (``names``, ``has_tensor``, ``shape``, ``dtype``, ``shards`` and
``read(name, spec)``, whole tensors or slices, as runtime values), so restore kernels, ``Saver.restore``,
``tf.train.load_checkpoint`` / ``NewCheckpointReader``, ``list_variables`` and ``init_from_checkpoint`` read a
checkpoint written by TF as one written here.

Example:
    >>> import numpy as np
    >>> from dtf_notebook.lib.io import tensor_bundle
    >>> from dtf_notebook.runtime import checkpoint_files
    >>> tensor_bundle.write_tensor_bundle("memory://doc/open/tf.ckpt", {"w": np.ones(2, np.float32)},
    ...                                   checkpoint_files.write_atomic)
    >>> reader = open_checkpoint("memory://doc/open/tf.ckpt")
    >>> type(reader).__name__, reader.read("w").tolist()
    ('TFBundleCheckpoint', [1.0, 1.0])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io import tensor_bundle
from dtf_notebook.runtime import checkpoint_files, values
from dtf_notebook.runtime import checkpoint_format as fmt
from dtf_notebook.runtime.checkpoint_reader import CheckpointReader
from dtf_notebook.runtime.file_access import FileAccess

__all__ = ["TFBundleCheckpoint", "checkpoint_index_exists", "open_checkpoint"]


class TFBundleCheckpoint:
    """A checkpoint written by real TF (V2 tensor bundle), read through :class:`CheckpointReader`'s interface.

    Args:
        prefix: The checkpoint's prefix.
        files: Where the reading process may read: the index and every data file are checked against it.

    Raises:
        NotFoundError: the index or a data file is missing.
        DataLossError: a file is not what TF writes, or a checksum does not match.

    Example:
        >>> import numpy as np
        >>> from dtf_notebook.lib.io import tensor_bundle
        >>> tensor_bundle.write_tensor_bundle("memory://doc/tfb/m", {"n": np.int64(7)}, checkpoint_files.write_atomic)
        >>> TFBundleCheckpoint("memory://doc/tfb/m").dtype("n")
        tf.int64
    """

    def __init__(self, prefix: str, files: FileAccess | None = None) -> None:
        self.prefix = prefix
        self._files = files or FileAccess()
        self._bundle = tensor_bundle.TensorBundleReader(prefix, self._read_file, self._read_range)
        self.index_path = self._bundle.index_path

    # (checkpoint_files turns a missing file into a NotFoundError naming it)
    def _read_file(self, path: str) -> bytes:
        return checkpoint_files.read_bytes(self._files.check(path, "read"))

    def _read_range(self, path: str, start: int, size: int) -> Any:
        return checkpoint_files.read_range(self._files.check(path, "read"), start, size)

    def names(self) -> list[str]:
        """Saved tensor names, sorted."""
        return self._bundle.names()

    def has_tensor(self, name: str) -> bool:
        """True when a tensor of that saved name is in the checkpoint."""
        return self._bundle.has_tensor(name)

    def shape(self, name: str) -> list[int]:
        """The full shape of a saved tensor."""
        return self._bundle.shape(name)

    def dtype(self, name: str) -> dtypes.DType:
        """The dtype of a saved tensor."""
        return self._bundle.dtype(name)

    def shards(self) -> list[dict[str, Any]]:
        """Each data file, in shard order, with the names of the tensors it holds."""
        return self._bundle.shards()

    def read(self, name: str, spec: str = "") -> Any:
        """The saved tensor ``name`` (or its slice ``spec``) as a runtime value (CPU torch tensor; strings numpy)."""
        return values.from_numpy(self._bundle.read(name, spec), torch.device("cpu"))


def checkpoint_index_exists(prefix: str) -> bool:
    """True when ``prefix`` names a complete checkpoint of either format (its index file exists).

    Example:
        >>> checkpoint_index_exists("memory://doc/open/tf.ckpt"), checkpoint_index_exists("memory://doc/open/no")
        (True, False)
    """
    return checkpoint_files.exists(fmt.index_filename(prefix)) or checkpoint_files.exists(
        tensor_bundle.index_filename(prefix)
    )


def open_checkpoint(prefix: str, files: FileAccess | None = None) -> CheckpointReader | TFBundleCheckpoint:
    """The reader of the checkpoint ``prefix``: TF's format (what savers write) when ``<prefix>.index`` exists,
    else this package's earlier format (``<prefix>.index.json``).

    Raises:
        NotFoundError: neither index exists (the message is TF's).
    """
    access = files or FileAccess()
    if checkpoint_files.exists(access.check(tensor_bundle.index_filename(prefix), "read")):
        return TFBundleCheckpoint(prefix, access)
    if not checkpoint_files.exists(access.check(fmt.index_filename(prefix), "read")):
        # Neither exists: TF's message, naming the file a saver writes.
        raise errors.NotFoundError(
            None,
            None,
            f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {prefix} "
            f"(no {tensor_bundle.index_filename(prefix)})",
        )
    return CheckpointReader(prefix, access)
