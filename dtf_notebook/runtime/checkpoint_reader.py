"""Reading checkpoints: whole tensors or any slice of them, assembled from the stored parts.

:class:`CheckpointReader` opens a checkpoint by its prefix (the index file must exist) and reads
shard files lazily, each at most once. ``read(name, spec)`` returns the whole tensor or the slice
``spec`` of it, copied together from whichever stored parts overlap it, so a variable saved in 3
parts restores into 2 parts, or whole, and the other way round. Restore kernels and
``tf.train.NewCheckpointReader`` both use it.

Example:
    >>> import torch
    >>> from dtf_notebook.runtime import checkpoint_files, checkpoint_format as fmt
    >>> parts = [("e", "4 2 0,3:0,2", torch.arange(6.0).reshape(3, 2)),
    ...          ("e", "4 2 3,1:0,2", torch.tensor([[6.0, 7.0]]))]
    >>> data, entries = fmt.encode_shard(parts)
    >>> checkpoint_files.write_atomic(fmt.shard_filename("memory://doc/reader/m", 0, 1), data)
    >>> meta = {"shard": 0, "num_shards": 1, "file": "m.data-00000-of-00001.safetensors", "entries": entries}
    >>> checkpoint_files.write_atomic("memory://doc/reader/m.index.json", fmt.encode_index(fmt.build_index([meta])))
    >>> reader = CheckpointReader("memory://doc/reader/m")
    >>> reader.shape("e"), reader.read("e", "4 2 1,2:0,2").tolist()
    ([4, 2], [[2.0, 3.0], [4.0, 5.0]])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import safetensors, safetensors_torch, torch
from dtf_notebook.runtime import checkpoint_files, values
from dtf_notebook.runtime import checkpoint_format as fmt
from dtf_notebook.runtime.file_access import FileAccess


class _ShardFile:
    """One shard file, opened on first use: lazily (local files) or read whole (other filesystems)."""

    def __init__(self, path: str) -> None:
        self.path = path
        _, fs_path = checkpoint_files.filesystem(path)
        try:
            if checkpoint_files.is_local(path):
                # Local files: safetensors maps the file and reads only the entries asked for.
                self._tensors: Any = safetensors.safe_open(fs_path, framework="pt")
            else:
                self._tensors = safetensors_torch.load(checkpoint_files.read_bytes(path))
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"{path}; No such file or directory (checkpoint shard)") from None
        except (safetensors.SafetensorError, OSError, ValueError) as e:
            raise errors.DataLossError(None, None, f"Checkpoint shard {path} is unreadable: {e}") from None

    def value(self, part: dict[str, Any]) -> Any:
        try:
            return fmt.decode_entry(self._tensors, part)
        except (KeyError, safetensors.SafetensorError, RuntimeError) as e:
            raise errors.DataLossError(
                None, None, f"Checkpoint shard {self.path} lacks entry {part['key']!r} listed in its index: {e}"
            ) from None


class CheckpointReader:
    """Reads the tensors of the checkpoint ``prefix``.

    Args:
        prefix: The checkpoint's prefix (a local path or fsspec URL).
        files: Where the reading process may read (a task's file roots): the index and every shard file are
            checked against it. Shard files must be plain names in the prefix's directory, whatever the index says.

    Raises:
        NotFoundError: there is no checkpoint with that prefix (its index file is missing).
        DataLossError: the index is not a checkpoint index of this format.

    Example:
        >>> data, entries = fmt.encode_shard([("w", "", torch.ones(2))])
        >>> checkpoint_files.write_atomic(fmt.shard_filename("memory://doc/cls/w", 0, 1), data)
        >>> meta = {"shard": 0, "num_shards": 1, "file": "w.data-00000-of-00001.safetensors", "entries": entries}
        >>> checkpoint_files.write_atomic("memory://doc/cls/w.index.json", fmt.encode_index(fmt.build_index([meta])))
        >>> reader = CheckpointReader("memory://doc/cls/w")
        >>> reader.names(), reader.dtype("w"), reader.read("w").tolist()
        (['w'], tf.float32, [1.0, 1.0])
    """

    def __init__(self, prefix: str, files: FileAccess | None = None) -> None:
        self.prefix = prefix
        self.index_path = fmt.index_filename(prefix)
        self._files = files or FileAccess()
        self._files.check(self.index_path, "read")
        if not checkpoint_files.exists(self.index_path):
            raise errors.NotFoundError(
                None,
                None,
                f"Unsuccessful TensorSliceReader constructor: Failed to find any matching files for {prefix} "
                f"(no {self.index_path})",
            )
        self.index = fmt.parse_index(checkpoint_files.read_bytes(self.index_path), self.index_path)
        self._directory = checkpoint_files.dirname(prefix)
        self._shards: dict[int, _ShardFile] = {}

    # ---- what is there --------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Saved tensor names, sorted."""
        return sorted(self.index["tensors"])

    def has_tensor(self, name: str) -> bool:
        """True when a tensor of that saved name is in the checkpoint."""
        return name in self.index["tensors"]

    def _entry(self, name: str) -> dict[str, Any]:
        entry = self.index["tensors"].get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint {self.prefix}")
        return entry

    def shape(self, name: str) -> list[int]:
        """The full shape of a saved tensor (partitioned ones: the whole variable's)."""
        return list(self._entry(name)["shape"])

    def dtype(self, name: str) -> dtypes.DType:
        """The dtype of a saved tensor."""
        return fmt.as_dtype(self._entry(name)["dtype"], self.index_path)

    def shards(self) -> list[dict[str, Any]]:
        """Each shard's file, writing task, device and pid, in shard order."""
        return [dict(s) for s in self.index["shards"]]

    # ---- reading ----------------------------------------------------------------------------------
    def _shard(self, number: int) -> _ShardFile:
        shard = self._shards.get(number)
        if shard is None:
            info = next((s for s in self.index["shards"] if s.get("shard") == number), None)
            if info is None:
                raise errors.DataLossError(None, None, f"{self.index_path} lists no shard {number}")
            name = fmt.check_shard_file(info.get("file"), self.index_path)
            path = self._files.check(checkpoint_files.join(self._directory, name), "read")
            shard = self._shards[number] = _ShardFile(path)
        return shard

    def read(self, name: str, spec: str = "") -> Any:
        """The saved tensor ``name`` (or its slice ``spec``, TF's slice-spec string) as a runtime value.

        Returns:
            A CPU torch tensor, or a numpy object array of bytes for strings.

        Raises:
            NotFoundError: no tensor of that name.
            InvalidArgumentError: ``spec``'s full shape differs from the saved one, or the saved parts do not
                cover the slice.
        """
        entry = self._entry(name)
        full = list(entry["shape"])
        parsed = fmt.parse_slice_spec(spec)
        if parsed is None:
            offset, lengths = [0] * len(full), full
        else:
            want_full, offset, lengths = parsed
            if want_full != full:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Restoring {name}: the checkpoint {self.index_path} holds it with full shape {full}, "
                    f"but the variable's parts say {want_full}",
                )
        parts = entry["parts"]
        if len(parts) == 1 and parts[0]["offset"] == offset and parts[0]["shape"] == lengths:
            return self._shard(parts[0]["shard"]).value(parts[0])
        return self._assemble(name, entry, offset, lengths)

    def _assemble(self, name: str, entry: dict[str, Any], offset: Sequence[int], lengths: Sequence[int]) -> Any:
        dtype = fmt.as_dtype(entry["dtype"], self.index_path)
        if dtype.is_string:
            out: Any = np.empty(tuple(lengths), dtype=object)
        else:
            out = torch.empty(tuple(lengths), dtype=values.torch_dtype(dtype))
        if fmt.num_elements(lengths) == 0:
            return out
        covered = 0
        for part in entry["parts"]:
            lo = [max(a, b) for a, b in zip(offset, part["offset"])]
            hi = [min(a + n, b + m) for a, n, b, m in zip(offset, lengths, part["offset"], part["shape"])]
            if any(h <= low for low, h in zip(lo, hi)):
                continue  # this part lies outside the slice
            value = self._shard(part["shard"]).value(part)
            src = tuple(slice(a - b, h - b) for a, h, b in zip(lo, hi, part["offset"]))
            dst = tuple(slice(a - b, h - b) for a, h, b in zip(lo, hi, offset))
            out[dst] = value[src]
            covered += fmt.num_elements([h - a for a, h in zip(lo, hi)])
        if covered != fmt.num_elements(lengths):
            raise errors.InvalidArgumentError(
                None,
                None,
                f"Restoring {name}: the saved parts in {self.index_path} do not cover the slice at offset "
                f"{list(offset)} of shape {list(lengths)}",
            )
        return out
