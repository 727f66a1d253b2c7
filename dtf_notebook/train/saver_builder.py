"""Adding a Saver's ops to the graph: one ``SaveShard`` per device group, a merge, restore ops (TF's
BulkSaverBuilder), and the ``SaverDef`` naming them. ``Saver(builder=...)`` takes an instance (of a
subclass, say), as TF's does: its ``build(names_to_saveables, reshape=, sharded=, max_to_keep=,
keep_checkpoint_every_n_hours=, name=, restore_sequentially=, filename=)`` returns the ``SaverDef``.

Save and restore ops of a group are placed on the CPU of the group's device (TF's ``set_cpu0``), so
a group of variables on ``/job:ps/task:1`` is written and read by that task. The assignments that
load restored values are colocated with their variables.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     with tf.device("/job:ps/task:1"):
    ...         v = tf.Variable(1.0, name="v")
    ...     saver_def = BulkSaverBuilder().build([v], sharded=True)
    ...     g.get_operation_by_name("save/SaveShard").device
    '/job:ps/task:1/device:CPU:0'
    >>> saver_def.restore_op_name
    'save/restore_all'
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from dtf_notebook.framework import device_spec, dtypes
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import identity_ops, io_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.protos.graph_pb import SaverDef
from dtf_notebook.runtime import checkpoint_format as fmt
from dtf_notebook.train.saveable_object import SaveableObject, VariableSaveable, saveables_from_var_list

__all__ = ["BulkSaverBuilder", "SaverDef"]


def saver_def_to_dict(saver_def: Any) -> dict[str, Any]:
    """A ``SaverDef`` message (ours or TF's) as plain data, every field present (the meta graph file's form).

    Example:
        >>> saver_def_to_dict(SaverDef(restore_op_name="save/restore_all", version=SaverDef.V2))["version"]
        2
    """
    return {f.name: getattr(saver_def, f.name) for f in SaverDef.DESCRIPTOR.fields}


def saver_def_with(saver_def: Any, **fields: Any) -> SaverDef:
    """A copy of a ``SaverDef`` message with ``fields`` replaced.

    Example:
        >>> saver_def_with(SaverDef(restore_op_name="save/restore_all"), max_to_keep=2).max_to_keep
        2
    """
    copy = SaverDef()
    copy.MergeFromString(saver_def.SerializeToString())
    for name, value in fields.items():
        setattr(copy, name, value)
    return copy


def _set_cpu0(device: str) -> str:
    """TF's rule for save/restore ops: the group's job and task, but its CPU."""
    return device_spec.DeviceSpec.from_string(device).replace(device_type="CPU", device_index=0).to_string()


def _group_by_device(saveables: Sequence[SaveableObject]) -> list[tuple[str, list[SaveableObject]]]:
    groups: dict[str, list[SaveableObject]] = {}
    for s in saveables:
        groups.setdefault(device_spec.canonical_name(s.device), []).append(s)
    return sorted(groups.items())


def _spec_shape(spec: Any) -> tuple | None:
    parsed = fmt.parse_slice_spec(spec.slice_spec)
    if parsed is not None:
        return tuple(parsed[2])
    return TensorShape(spec.tensor.shape).as_tuple()


class BulkSaverBuilder:
    """Adds the save and restore ops of a Saver to the default graph (TF's ``BulkSaverBuilder``).

    Args:
        write_version: Written into the ``SaverDef``; there is one checkpoint format.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     saver_def = BulkSaverBuilder().build([tf.Variable(1.0, name="v")], max_to_keep=3)
        >>> saver_def.save_tensor_name, saver_def.max_to_keep
        ('save/control_dependency:0', 3)
    """

    def __init__(self, write_version: int = 2) -> None:
        self._write_version = write_version

    def save_ops(self, filename: Tensor, groups: list[tuple[str, list[SaveableObject]]], sharded: bool) -> Tensor:
        """One SaveShard per ``(device, saveables)`` group, then the merge; returns the saved prefix tensor."""
        graph = get_default_graph()
        descriptions = []
        for shard, (device, saveables) in enumerate(groups):
            specs = [spec for s in saveables for spec in s.specs]
            with graph.device(_set_cpu0(device)) if sharded else contextlib.nullcontext():
                descriptions.append(
                    io_ops.save_shard(
                        filename,
                        [spec.tensor for spec in specs],
                        [spec.name for spec in specs],
                        [spec.slice_spec for spec in specs],
                        shard,
                        len(groups),
                        name="SaveShard",
                    )
                )
        # The merge runs with the last shard (TF colocates MergeV2Checkpoints the same way).
        with graph.device(_set_cpu0(groups[-1][0])) if sharded else contextlib.nullcontext():
            merged = io_ops.merge_checkpoint_shards(filename, descriptions, name="MergeShards")
            return identity_ops.identity(merged, name="Identity" if sharded else "control_dependency")

    def restore_ops(
        self,
        filename: Tensor,
        saveables: list[SaveableObject],
        after: Sequence[Operation],
        name: str,
        reshape: bool = False,
    ) -> Operation:
        """Reads ``saveables`` (after the ops ``after``) and assigns them; returns the group op ``name``.

        ``reshape``: accept saved tensors of another shape with as many elements.
        """
        specs = [spec for s in saveables for spec in s.specs]
        graph = get_default_graph()
        with graph.control_dependencies(after) if after else contextlib.nullcontext():
            tensors = io_ops.restore_slices(
                filename,
                [spec.name for spec in specs],
                [spec.slice_spec for spec in specs],
                [dtypes.as_dtype(spec.dtype) for spec in specs],
                [_spec_shape(spec) for spec in specs],
                reshape=reshape,
                name="RestoreSlices",
            )
        assigns, start = [], 0
        for s in saveables:
            restored = tensors[start : start + len(s.specs)]
            start += len(s.specs)
            if isinstance(s, VariableSaveable):
                # The assignment runs where the variable lives, never where the restore scope points.
                with graph.device(None), graph.colocate_with(s.op):
                    assigns.append(s.restore(restored, None))
            else:
                assigns.append(s.restore(restored, None))
        return identity_ops.group(*assigns, name=name)

    def build(
        self,
        names_to_saveables: Any,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        filename: str | None = "model",
    ) -> SaverDef:
        """Adds every op under the name scope ``name`` (default ``save``); returns the ``SaverDef`` naming them.

        Args:
            names_to_saveables: What to save: a Saver's ``var_list`` (a list, or a dict of names to variables,
                partitioned variables, slices or SaveableObjects).
            reshape: Restore ops accept saved tensors of another shape with as many elements.
            sharded: One save op per device group, on that device; else one for all.
            max_to_keep, keep_checkpoint_every_n_hours: The policy written into the ``SaverDef``.
            name: The name scope of the ops.
            restore_sequentially: Each device group restores after the previous one.
            filename: The default checkpoint prefix (the filename tensor's value).

        Raises:
            TypeError, ValueError: ``names_to_saveables`` holds something that cannot be saved, or names collide.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     BulkSaverBuilder().build({"w": tf.Variable(1.0)}, name="ckpt").restore_op_name
            'ckpt/restore_all'
        """
        all_saveables = saveables_from_var_list(names_to_saveables)
        graph = get_default_graph()
        with name_scope(name, "save", []):
            filename_tensor = constant(filename or "model", dtype=dtypes.string, name="Const")
            groups = _group_by_device(all_saveables) if sharded else [("", all_saveables)]
            save_tensor = self.save_ops(filename_tensor, groups, sharded)
            if sharded:
                shard_restores: list[Operation] = []
                for device, saveables in groups:
                    after = shard_restores[-1:] if restore_sequentially else []
                    with graph.device(_set_cpu0(device)):
                        shard_restores.append(
                            self.restore_ops(filename_tensor, saveables, after, "restore_shard", reshape)
                        )
                restore_op = identity_ops.group(*shard_restores, name="restore_all")
            else:
                restore_op = self.restore_ops(filename_tensor, all_saveables, [], "restore_all", reshape)
        return SaverDef(
            filename_tensor_name=filename_tensor.name,
            save_tensor_name=save_tensor.name,
            restore_op_name=restore_op.name,
            max_to_keep=max_to_keep or 0,
            sharded=sharded,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            version=self._write_version,
        )
