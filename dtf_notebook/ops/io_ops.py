"""Checkpoint ops: ``SaveShard``, ``MergeCheckpointShards`` and ``RestoreSlices`` (TF's SaveV2,
MergeV2Checkpoints and RestoreV2). They write TF's V2 checkpoint format (``<prefix>.index`` and
``<prefix>.data-NNNNN-of-MMMMM``, :mod:`dtf_notebook.runtime.bundle_shards`), which TF reads, and read it and
this package's earlier format (``<prefix>.index.json`` + safetensors shards).

They run as ops in the graph, so their kernels run in the process of the device they are placed
on: a ``SaveShard`` placed on ``/job:ps/task:1`` takes that task's variables as inputs and writes
them from that task's own process, in parallel with the other shards; no tensor travels to the
client. Its output is a small JSON description of what it wrote (file, entries, task, pid), which
the one ``MergeCheckpointShards`` op gathers: it moves every shard from its temporary name into
place, then writes the index last, so a crash at any point before that leaves no index and hence
no half-written checkpoint. ``RestoreSlices`` reads (slices of) saved tensors on its own device.

Paths are local paths or fsspec URLs (see :mod:`dtf_notebook.runtime.checkpoint_files`). Shards
written on several machines can only be merged and read back through a filesystem or object
store that every task sees (a shared mount, ``s3://``, ``gs://``, ...).

Every path a kernel touches is first checked against its task's file roots
(:class:`~dtf_notebook.runtime.file_access.FileAccess`), and the file names that travel between
kernels (a shard's final and temporary names) must be exactly the names its prefix and shard
number give, in the prefix's directory: a description naming ``../elsewhere`` or ``/etc/x`` is
refused before any file is touched.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0], name="w")
    ...     prefix = tf.constant("memory://doc/io_ops/model")
    ...     meta = save_shard(prefix, [w.value()], ["w"], [""], shard=0, num_shards=1)
    ...     saved = merge_checkpoint_shards(prefix, [meta])
    ...     (restored,) = restore_slices(prefix, ["w"], [""], [tf.float32], [[2]])
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(sess.run(saved), sess.run(restored))
    b'memory://doc/io_ops/model' [1. 2.]
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar
from dtf_notebook.lib.io import tensor_bundle
from dtf_notebook.ops.checkpoint_open import open_checkpoint
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime import bundle_shards, checkpoint_files
from dtf_notebook.runtime import checkpoint_format as fmt

__all__ = ["save_shard", "merge_checkpoint_shards", "restore_slices"]


def _as_str(value: Any) -> str:
    item = value.item() if isinstance(value, np.ndarray) else value
    return item.decode("utf-8") if isinstance(item, bytes) else str(item)


def _string_scalar(text: str) -> np.ndarray:
    return np.array(text.encode("utf-8"), dtype=object)


def _task_of(device: str) -> str:
    return device.split("/device:")[0]


def _prefix_tensor(prefix: Any) -> Tensor:
    t = convert_to_tensor(prefix, dtype=dtypes.string)
    if t.shape.ndims not in (None, 0):
        raise ValueError(f"A checkpoint prefix must be a string scalar, got shape {t.shape}")
    return t


# ---- SaveShard -------------------------------------------------------------------------------------
def save_shard(
    prefix: Any,
    tensors: Sequence[Any],
    tensor_names: Sequence[str],
    slice_specs: Sequence[str],
    shard: int,
    num_shards: int,
    name: str | None = None,
) -> Tensor:
    """Writes ``tensors`` as shard ``shard`` of ``num_shards`` of checkpoint ``prefix``, under a temporary name.

    Args:
        prefix: String scalar: the checkpoint prefix.
        tensors: The values to save (all on the device this op is placed on, ideally).
        tensor_names: Saved name of each tensor.
        slice_specs: TF slice spec of each tensor (``""`` for a whole variable).
        shard, num_shards: This shard's number and the number of shards.
        name: Op name.

    Returns:
        A string scalar: JSON describing the written shard, for :func:`merge_checkpoint_shards`.

    Raises:
        ValueError: the lists differ in length or the shard number is out of range.

    Example:
        >>> import json
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     meta = save_shard("memory://doc/save_shard/m", [tf.constant([1.0, 2.0])], ["w"], [""], 0, 1)
        ...     with tf.Session() as sess:
        ...         described = json.loads(sess.run(meta))
        >>> described["file"], described["entries"][0]["shape"]
        ('m.data-00000-of-00001', [2])
    """
    values = [convert_to_tensor(t) for t in tensors]
    if not len(values) == len(tensor_names) == len(slice_specs):
        raise ValueError(
            f"save_shard needs one name and slice spec per tensor: {len(values)} tensors, "
            f"{len(tensor_names)} names, {len(slice_specs)} slice specs"
        )
    if not 0 <= shard < num_shards:
        raise ValueError(f"Shard {shard} is out of range for {num_shards} shards")
    for spec in slice_specs:
        fmt.parse_slice_spec(spec)
    attrs = {
        "tensor_names": [str(n) for n in tensor_names],
        "slice_specs": [str(s) for s in slice_specs],
        "shard": int(shard),
        "num_shards": int(num_shards),
    }
    return make_op("SaveShard", [_prefix_tensor(prefix), *values], attrs, name=name or "SaveShard").outputs[0]


def _save_kernel(op: Any, ctx: Any):
    names, specs = op.get_attr("tensor_names"), op.get_attr("slice_specs")
    shard, num_shards = op.get_attr("shard"), op.get_attr("num_shards")
    device = ctx.device_name
    origin = {"task": _task_of(device), "device": device, "pid": os.getpid(), "host": socket.gethostname()}
    files = ctx.state.files

    def run(prefix: Any, *tensors: Any) -> np.ndarray:
        final = files.check(tensor_bundle.data_filename(_as_str(prefix), shard, num_shards), "write")
        data, entries = bundle_shards.encode_shard(list(zip(names, specs, tensors)))
        temp = checkpoint_files.write_temp(final, data)
        described = {
            "shard": shard,
            "num_shards": num_shards,
            "file": checkpoint_files.basename(final),
            "temp": checkpoint_files.basename(temp),
            "bytes": len(data),
            "entries": entries,
            **origin,
        }
        return _string_scalar(json.dumps(described))

    return run


op_registry.register_op(
    "SaveShard",
    infer=lambda op: [(dtypes.string, scalar())],
    kernel=_save_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)


# ---- MergeCheckpointShards ------------------------------------------------------------------------
def merge_checkpoint_shards(prefix: Any, shard_descriptions: Sequence[Any], name: str | None = None) -> Tensor:
    """Moves the shards written by :func:`save_shard` into place and writes the checkpoint's index last.

    Returns:
        The prefix (a string scalar), available once the checkpoint is complete.

    Raises:
        ValueError: no shard descriptions are given.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     prefix = "memory://doc/merge/model"
        ...     metas = [save_shard(prefix, [tf.constant(float(i))], [f"v{i}"], [""], i, 2) for i in range(2)]
        ...     with tf.Session() as sess:
        ...         print(sess.run(merge_checkpoint_shards(prefix, metas)))
        b'memory://doc/merge/model'
    """
    if not shard_descriptions:
        raise ValueError("merge_checkpoint_shards needs the description of at least one shard")
    inputs = [_prefix_tensor(prefix)] + [convert_to_tensor(d, dtype=dtypes.string) for d in shard_descriptions]
    return make_op("MergeCheckpointShards", inputs, {}, name=name or "MergeCheckpointShards").outputs[0]


def _parse_description(value: Any, prefix: str) -> dict[str, Any]:
    """A save kernel's description of its shard, checked: its file names must be exactly those its prefix and
    shard number give (no directory, no ``..``), so no description can make a merge touch another file."""
    try:
        described = json.loads(_as_str(value))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise errors.InvalidArgumentError(None, None, f"Malformed shard description: {e}") from None
    if not isinstance(described, dict):
        raise errors.InvalidArgumentError(None, None, "Malformed shard description: not a JSON object")
    missing = {"shard", "num_shards", "file", "temp", "entries"} - set(described)
    if missing:
        raise errors.InvalidArgumentError(None, None, f"Shard description lacks {sorted(missing)}")
    shard, num_shards = described["shard"], described["num_shards"]
    if type(shard) is not int or type(num_shards) is not int or not 0 <= shard < num_shards < 100_000:
        raise errors.InvalidArgumentError(
            None, None, f"Shard description has shard {shard!r} of {num_shards!r}, not a shard number"
        )
    final, temp = bundle_shards.expected_shard_files(prefix, shard, num_shards)
    if described["file"] != final or not isinstance(described["temp"], str) or not temp.match(described["temp"]):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Shard description of shard {shard} of {prefix} names file {described['file']!r} and temporary "
            f"file {described['temp']!r}; they must be {final!r} and {final}.tmp-<32 hex digits>",
        )
    return described


def _merge_kernel(op: Any, ctx: Any):
    here = _task_of(ctx.device_name)
    files = ctx.state.files

    def run(prefix: Any, *descriptions: Any) -> np.ndarray:
        prefix_str = _as_str(prefix)
        directory = checkpoint_files.dirname(prefix_str)
        shards = [_parse_description(d, prefix_str) for d in descriptions]
        temps = [files.check(checkpoint_files.join(directory, s["temp"]), "rename") for s in shards]
        try:  # every consistency check before any file is touched; a failed one leaves no temporary shard behind
            index = bundle_shards.build_index(shards)
            index_path = files.check(tensor_bundle.index_filename(prefix_str), "write")
            legacy_index = files.check(fmt.index_filename(prefix_str), "write")
            finals = [files.check(checkpoint_files.join(directory, s["file"]), "write") for s in shards]
        except BaseException:
            for temp in temps:
                checkpoint_files.remove_quietly(temp)
            raise
        # An older checkpoint saved under the same prefix stops existing first: a crash below then leaves
        # no index at all, never an old index naming new shard files.
        checkpoint_files.remove(index_path, missing_ok=True)
        checkpoint_files.remove(legacy_index, missing_ok=True)  # (this package's earlier format, same prefix)
        try:
            for s, temp, final in zip(shards, temps, finals):
                if not checkpoint_files.exists(temp):
                    raise errors.NotFoundError(
                        None,
                        None,
                        f"Shard {s['shard']} of {prefix_str}, written by {s.get('task', '?')} "
                        f"(pid {s.get('pid', '?')}) as {temp}, is not visible from {here}: sharded checkpoints on a "
                        "cluster of several machines need a filesystem or object store that every task sees "
                        "(a shared mount, s3://, gs://, ...)",
                    )
                checkpoint_files.move(temp, final)
            checkpoint_files.write_atomic(index_path, index)
        except BaseException:
            for temp in temps:  # leave no stray temporary shards behind a failed save
                checkpoint_files.remove_quietly(temp)
            raise
        return _string_scalar(prefix_str)

    return run


op_registry.register_op(
    "MergeCheckpointShards",
    infer=lambda op: [(dtypes.string, scalar())],
    kernel=_merge_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)


# ---- RestoreSlices -------------------------------------------------------------------------------
def restore_slices(
    prefix: Any,
    tensor_names: Sequence[str],
    slice_specs: Sequence[str],
    dtypes_: Sequence[Any],
    shapes: Sequence[Any],
    reshape: bool = False,
    name: str | None = None,
) -> list[Tensor]:
    """Reads saved tensors (or slices of them) from checkpoint ``prefix``; one output per tensor.

    Args:
        prefix: String scalar: the checkpoint prefix.
        tensor_names: Saved names to read.
        slice_specs: TF slice spec to read of each (``""`` for the whole tensor).
        dtypes_: Expected dtype of each.
        shapes: Expected shape of each (the variable's; None or partial dims are not checked).
        reshape: Accept a saved tensor of another shape with the same number of elements, reshaped.
        name: Op name.

    Returns:
        The restored tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     prefix = "memory://doc/restore/model"
        ...     meta = save_shard(prefix, [tf.constant([[1, 2, 3], [4, 5, 6]])], ["m"], [""], 0, 1)
        ...     (row,) = restore_slices(prefix, ["m"], ["2 3 1,1:-"], [tf.int32], [[1, 3]])
        ...     with tf.Session() as sess:
        ...         _ = sess.run(merge_checkpoint_shards(prefix, [meta]))
        ...         print(sess.run(row))
        [[4 5 6]]
    """
    if not len(tensor_names) == len(slice_specs) == len(dtypes_) == len(shapes):
        raise ValueError("restore_slices needs one slice spec, dtype and shape per tensor name")
    if not tensor_names:
        raise ValueError("restore_slices needs at least one tensor name")
    for spec in slice_specs:
        fmt.parse_slice_spec(spec)
    attrs = {
        "tensor_names": [str(n) for n in tensor_names],
        "slice_specs": [str(s) for s in slice_specs],
        "dtypes": [dtypes.as_dtype(d) for d in dtypes_],
        "shapes": [TensorShape(s).as_tuple() for s in shapes],
        "reshape": bool(reshape),
    }
    return list(make_op("RestoreSlices", [_prefix_tensor(prefix)], attrs, name=name or "RestoreSlices").outputs)


def _restore_infer(op: Any) -> list:
    return [(d, TensorShape(s)) for d, s in zip(op.get_attr("dtypes"), op.get_attr("shapes"))]


def _checked_value(reader: Any, name: str, spec: str, dtype: Any, shape: Any, reshape: bool) -> Any:
    stored = reader.dtype(name)
    if stored is not dtype:
        raise errors.InvalidArgumentError(
            None,
            None,
            f"tensor_name = {name}; expected dtype {dtype.name} does not equal original dtype {stored.name} "
            f"(checkpoint {reader.index_path})",
        )
    value = reader.read(name, spec)
    got = [int(d) for d in value.shape]
    want = TensorShape(shape)
    if want.is_compatible_with(got):
        return value
    same_size = want.is_fully_defined() and want.num_elements() == fmt.num_elements(got)
    if reshape and same_size:
        return value.reshape(tuple(want.as_list()))
    hint = " (same number of elements: Saver(reshape=True) restores it reshaped)" if same_size else ""
    raise errors.InvalidArgumentError(
        None,
        None,
        f"Restoring {name}: shape {got} in checkpoint {reader.index_path} does not match the variable's "
        f"shape {want.as_list()}{hint}",
    )


def _restore_kernel(op: Any, ctx: Any):
    wanted = list(
        zip(op.get_attr("tensor_names"), op.get_attr("slice_specs"), op.get_attr("dtypes"), op.get_attr("shapes"))
    )
    reshape = op.get_attr("reshape")
    files = ctx.state.files

    def run(prefix: Any) -> Any:
        reader = open_checkpoint(_as_str(prefix), files)
        out = [_checked_value(reader, name, spec, dtype, shape, reshape) for name, spec, dtype, shape in wanted]
        return out[0] if len(out) == 1 else tuple(out)

    return run


op_registry.register_op(
    "RestoreSlices",
    infer=_restore_infer,
    kernel=_restore_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)
