"""The ``checkpoint`` state file and checkpoint housekeeping (``tf.train.latest_checkpoint`` & co).

A checkpoint directory holds a text file ``checkpoint`` in TF's ``CheckpointState`` text format::

    model_checkpoint_path: "model.ckpt-20"
    all_model_checkpoint_paths: "model.ckpt-10"
    all_model_checkpoint_paths: "model.ckpt-20"
    all_model_checkpoint_timestamps: 1700000000.5
    all_model_checkpoint_timestamps: 1700000060.25
    last_preserved_timestamp: 1699999990.0

It is rewritten atomically (temporary file, then a rename) after a checkpoint's index is in place,
so ``latest_checkpoint`` only ever names complete checkpoints. Directories may be local paths or
fsspec URLs; a checkpoint exists when its index file (TF's ``<prefix>.index``, or ``<prefix>.index.json`` of this
package's earlier format) does.

Example:
    >>> update_checkpoint_state("memory://doc/mgmt", "memory://doc/mgmt/model-1")
    >>> get_checkpoint_state("memory://doc/mgmt").model_checkpoint_path
    'memory://doc/mgmt/model-1'
    >>> print(latest_checkpoint("memory://doc/mgmt"))  # the state names it, but no index exists
    None
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from dtf_notebook import errors
from dtf_notebook.lib.io import tensor_bundle
from dtf_notebook.ops.checkpoint_open import checkpoint_index_exists
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.runtime import checkpoint_format as fmt

__all__ = [
    "CheckpointState",
    "checkpoint_exists",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "latest_checkpoint",
    "meta_graph_filename",
    "remove_checkpoint",
    "update_checkpoint_state",
]

_log = logging.getLogger(__name__)
_STRING_FIELDS = ("model_checkpoint_path", "all_model_checkpoint_paths")
_FLOAT_FIELDS = ("all_model_checkpoint_timestamps", "last_preserved_timestamp")


@dataclass
class CheckpointState:
    """TF's ``CheckpointState`` message: the latest checkpoint and those still kept, oldest first.

    Example:
        >>> print(CheckpointState("m-2", ["m-1", "m-2"]), end="")
        model_checkpoint_path: "m-2"
        all_model_checkpoint_paths: "m-1"
        all_model_checkpoint_paths: "m-2"
    """

    model_checkpoint_path: str = ""
    all_model_checkpoint_paths: list[str] = field(default_factory=list)
    all_model_checkpoint_timestamps: list[float] = field(default_factory=list)
    last_preserved_timestamp: float = 0.0

    def __str__(self) -> str:
        lines = []
        if self.model_checkpoint_path:
            lines.append(f"model_checkpoint_path: {_quote(self.model_checkpoint_path)}")
        lines += [f"all_model_checkpoint_paths: {_quote(p)}" for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "".join(line + "\n" for line in lines)


# ---- text format ----------------------------------------------------------------------------------
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'", "\\": "\\\\"}
_UNESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", '"': b'"', "'": b"'", "\\": b"\\", "a": b"\a", "b": b"\b"}
_LINE = re.compile(r"\s*([A-Za-z_]+)\s*:\s*(.*?)\s*$")


def _quote(text: str) -> str:
    """A text-format string literal: UTF-8 bytes, printable ASCII as is, the rest C-escaped."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _unquote(literal: str, where: str) -> str:
    if len(literal) < 2 or literal[0] not in "\"'" or literal[-1] != literal[0]:
        raise ValueError(f"{where}: expected a quoted string, got {literal!r}")
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _UNESCAPES:
            out += _UNESCAPES[nxt]
            i += 2
        elif nxt.isdigit():
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :]).group(0)
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif nxt == "x":
            digits = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2 :])
            if digits is None:
                raise ValueError(f"{where}: bad \\x escape")
            out.append(int(digits.group(0), 16))
            i += 2 + len(digits.group(0))
        else:
            raise ValueError(f"{where}: unknown escape \\{nxt}")
    return out.decode("utf-8", errors="replace")


def parse_checkpoint_state(text: str, path: str = "checkpoint") -> CheckpointState:
    """Parses the text format of a ``CheckpointState``.

    Raises:
        ValueError: a line is not ``field: value`` of a known field (the message names the file and line).

    Example:
        >>> parse_checkpoint_state('model_checkpoint_path: "a\\\\"b"\\n').model_checkpoint_path
        'a"b'
    """
    state = CheckpointState()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{number}"
        m = _LINE.match(line)
        if m is None:
            raise ValueError(f"{where}: expected 'field: value', got {line!r}")
        key, value = m.groups()
        if key in _STRING_FIELDS:
            text_value = _unquote(value, where)
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = text_value
            else:
                state.all_model_checkpoint_paths.append(text_value)
        elif key in _FLOAT_FIELDS:
            try:
                number_value = float(value)
            except ValueError:
                raise ValueError(f"{where}: {key} needs a number, got {value!r}") from None
            if key == "last_preserved_timestamp":
                state.last_preserved_timestamp = number_value
            else:
                state.all_model_checkpoint_timestamps.append(number_value)
        else:
            raise ValueError(f"{where}: unknown field {key!r} in a CheckpointState")
    return state


# ---- the state file ---------------------------------------------------------------------------------
def _state_filename(save_dir: str, latest_filename: str | None) -> str:
    return checkpoint_files.join(save_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
    all_model_checkpoint_timestamps: Sequence[float] | None = None,
    last_preserved_timestamp: float | None = None,
) -> CheckpointState:
    """A CheckpointState whose path list ends with ``model_checkpoint_path`` (TF's rules).

    Relative paths are rewritten relative to ``save_dir`` when ``save_dir`` itself is relative.

    Raises:
        ValueError: timestamps are given but not one per path.

    Example:
        >>> generate_checkpoint_state_proto("/run", "/run/m-2", ["/run/m-1"]).all_model_checkpoint_paths
        ['/run/m-1', '/run/m-2']
    """
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    timestamps = list(all_model_checkpoint_timestamps or [])
    if timestamps and len(timestamps) != len(paths):
        raise ValueError(
            f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths {paths} and "
            f"timestamps {timestamps})"
        )
    if not checkpoint_files.is_absolute(save_dir):
        if not checkpoint_files.is_absolute(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir or ".")
        paths = [p if checkpoint_files.is_absolute(p) else os.path.relpath(p, save_dir or ".") for p in paths]
    return CheckpointState(model_checkpoint_path, paths, timestamps, float(last_preserved_timestamp or 0.0))


def update_checkpoint_state_internal(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
    latest_filename: str | None = None,
    save_relative_paths: bool = False,
    all_model_checkpoint_timestamps: Sequence[float] | None = None,
    last_preserved_timestamp: float | None = None,
) -> None:
    """Writes the state file atomically, with paths relative to ``save_dir`` when ``save_relative_paths``.

    Raises:
        RuntimeError: the checkpoint path is the state file's own path.

    Example:
        >>> update_checkpoint_state_internal("memory://doc/internal", "memory://doc/internal/model-2",
        ...                                  save_relative_paths=True)
        >>> get_checkpoint_state("memory://doc/internal").all_model_checkpoint_paths
        ['memory://doc/internal/model-2']
    """
    if save_relative_paths:
        model_checkpoint_path = _relative(model_checkpoint_path, save_dir)
        all_model_checkpoint_paths = [_relative(p, save_dir) for p in all_model_checkpoint_paths or []]
    state = generate_checkpoint_state_proto(
        save_dir,
        model_checkpoint_path,
        all_model_checkpoint_paths,
        all_model_checkpoint_timestamps,
        last_preserved_timestamp,
    )
    state_file = _state_filename(save_dir, latest_filename)
    if state_file == state.model_checkpoint_path:
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint state.  Please use a "
            "different save path."
        )
    checkpoint_files.write_atomic(state_file, str(state).encode("utf-8"))


def _relative(path: str, save_dir: str) -> str:
    return checkpoint_files.relative_to(path, save_dir) if checkpoint_files.is_absolute(path) else path


def update_checkpoint_state(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
    latest_filename: str | None = None,
    all_model_checkpoint_timestamps: Sequence[float] | None = None,
    last_preserved_timestamp: float | None = None,
) -> None:
    """Writes the ``checkpoint`` state file of ``save_dir`` (``tf.train.update_checkpoint_state``).

    Example:
        >>> update_checkpoint_state("memory://doc/upd", "memory://doc/upd/m-1", latest_filename="state")
        >>> get_checkpoint_state("memory://doc/upd", "state").all_model_checkpoint_paths
        ['memory://doc/upd/m-1']
    """
    update_checkpoint_state_internal(
        save_dir,
        model_checkpoint_path,
        all_model_checkpoint_paths,
        latest_filename,
        save_relative_paths=False,
        all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
        last_preserved_timestamp=last_preserved_timestamp,
    )


def get_checkpoint_state(checkpoint_dir: str, latest_filename: str | None = None) -> CheckpointState | None:
    """The CheckpointState of ``checkpoint_dir``, relative paths made absolute; None without a state file.

    An unreadable or malformed state file is logged and ignored (None), as in TF.

    Raises:
        ValueError: the state file names no ``model_checkpoint_path``.

    Example:
        >>> print(get_checkpoint_state("memory://doc/never-written"))
        None
    """
    checkpoint_dir = os.fspath(checkpoint_dir)
    state_file = _state_filename(checkpoint_dir, latest_filename)
    try:
        if not checkpoint_files.exists(state_file):
            return None
        state = parse_checkpoint_state(checkpoint_files.read_bytes(state_file).decode("utf-8", "replace"), state_file)
    except (errors.OpError, ValueError) as e:
        _log.warning("%s: %s; checkpoint state ignored", state_file, e)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not checkpoint_files.is_absolute(state.model_checkpoint_path):
        state.model_checkpoint_path = checkpoint_files.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [
        p if checkpoint_files.is_absolute(p) else checkpoint_files.join(checkpoint_dir, p)
        for p in state.all_model_checkpoint_paths
    ]
    return state


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """True when a complete checkpoint (its index file) exists under ``checkpoint_prefix``: TF's V2 format
    (``<prefix>.index``, what savers write) or this package's earlier one (``<prefix>.index.json``).

    Example:
        >>> checkpoint_exists("memory://doc/none/model")
        False
    """
    return checkpoint_index_exists(os.fspath(checkpoint_prefix))


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest complete checkpoint in ``checkpoint_dir`` (None when there is none).

    Example:
        >>> print(latest_checkpoint("memory://doc/empty"))
        None
    """
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def get_checkpoint_mtimes(checkpoint_prefixes: Sequence[str]) -> list[float]:
    """Modification times (seconds since the Epoch) of the index files of the checkpoints that exist.

    Example:
        >>> get_checkpoint_mtimes(["memory://doc/none/model"])
        []
    """
    out = []
    for prefix in checkpoint_prefixes:
        for index in (tensor_bundle.index_filename(prefix), fmt.index_filename(prefix)):
            if checkpoint_files.exists(index):
                out.append(checkpoint_files.mtime(index))
                break
    return out


def meta_graph_filename(checkpoint_filename: str, meta_graph_suffix: str = "meta") -> str:
    """The meta graph file written next to a checkpoint.

    Example:
        >>> meta_graph_filename("/run/model.ckpt-7")
        '/run/model.ckpt-7.meta'
    """
    basename = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return f"{basename}.{meta_graph_suffix}"


def remove_checkpoint(
    checkpoint_prefix: str, checkpoint_format_version: int = 2, meta_graph_suffix: str = "meta"
) -> None:
    """Deletes a checkpoint's index, shard files and meta graph (files already gone are skipped).

    The index goes first, so the checkpoint stops existing before any of its data does.

    Example:
        >>> remove_checkpoint("memory://doc/none/model")
    """
    del checkpoint_format_version  # V2 is written; the argument is TF's signature
    checkpoint_files.remove(tensor_bundle.index_filename(checkpoint_prefix), missing_ok=True)
    checkpoint_files.remove(fmt.index_filename(checkpoint_prefix), missing_ok=True)  # (the earlier format)
    for pattern in (tensor_bundle.DATA_GLOB, fmt.SHARD_GLOB):
        for path in checkpoint_files.glob(checkpoint_prefix + pattern):
            checkpoint_files.remove(path, missing_ok=True)
    checkpoint_files.remove(meta_graph_filename(checkpoint_prefix, meta_graph_suffix), missing_ok=True)
