"""Adding a Saver's ops to the graph: one ``SaveShard`` per device group, a merge, restore ops (TF's
BulkSaverBuilder), and the ``SaverDef`` naming them.

Save and restore ops of a group are placed on the CPU of the group's device (TF's ``set_cpu0``), so
a group of variables on ``/job:ps/task:1`` is written and read by that task. The assignments that
load restored values are colocated with their variables.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.train.saveable_object import saveables_from_var_list
    >>> with tf.Graph().as_default() as g:
    ...     with tf.device("/job:ps/task:1"):
    ...         v = tf.Variable(1.0, name="v")
    ...     saver_def = BulkSaverBuilder(saveables_from_var_list([v]), False, False).build(None, True, None)
    ...     g.get_operation_by_name("save/SaveShard").device
    '/job:ps/task:1/device:CPU:0'
    >>> saver_def.restore_op_name
    'save/restore_all'
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dtf_notebook.framework import device_spec, dtypes
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import identity_ops, io_ops
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.runtime import checkpoint_format as fmt
from dtf_notebook.train.saveable_object import SaveableObject, VariableSaveable

__all__ = ["BulkSaverBuilder", "SaverDef"]


@dataclass
class SaverDef:
    """What a Saver built (TF's ``SaverDef``): its tensor/op names and its policy.

    Example:
        >>> SaverDef("save/Const:0", "save/control_dependency:0", "save/restore_all").version
        2
    """

    filename_tensor_name: str = ""
    save_tensor_name: str = ""
    restore_op_name: str = ""
    max_to_keep: int = 5
    sharded: bool = False
    keep_checkpoint_every_n_hours: float = 10000.0
    version: int = 2

    V1 = 1
    V2 = 2

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for the meta graph file)."""
        return asdict(self)


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
    """Adds the save and restore ops of one Saver's ``saveables`` to the default graph.

    Args:
        saveables: What to save.
        reshape: Restore ops accept saved tensors of another shape with as many elements.
        restore_sequentially: Each device group restores after the previous one.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.train.saveable_object import saveables_from_var_list
        >>> with tf.Graph().as_default():
        ...     builder = BulkSaverBuilder(saveables_from_var_list([tf.Variable(1.0, name="v")]), False, False)
        ...     builder.build(None, False, None).save_tensor_name
        'save/control_dependency:0'
    """

    def __init__(self, saveables: list[SaveableObject], reshape: bool, restore_sequentially: bool) -> None:
        self.saveables = saveables
        self.reshape = reshape
        self.restore_sequentially = restore_sequentially

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
        self, filename: Tensor, saveables: list[SaveableObject], after: Sequence[Operation], name: str
    ) -> Operation:
        """Reads ``saveables`` (after the ops ``after``) and assigns them; returns the group op ``name``."""
        specs = [spec for s in saveables for spec in s.specs]
        graph = get_default_graph()
        with graph.control_dependencies(after) if after else contextlib.nullcontext():
            tensors = io_ops.restore_slices(
                filename,
                [spec.name for spec in specs],
                [spec.slice_spec for spec in specs],
                [dtypes.as_dtype(spec.dtype) for spec in specs],
                [_spec_shape(spec) for spec in specs],
                reshape=self.reshape,
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

    def build(self, filename: str | None, sharded: bool, scope_name: str | None) -> SaverDef:
        """Adds every op under the name scope ``scope_name`` (default ``save``); returns their names."""
        graph = get_default_graph()
        with name_scope(scope_name, "save", []):
            filename_tensor = constant(filename or "model", dtype=dtypes.string, name="Const")
            groups = _group_by_device(self.saveables) if sharded else [("", self.saveables)]
            save_tensor = self.save_ops(filename_tensor, groups, sharded)
            if sharded:
                shard_restores: list[Operation] = []
                for device, saveables in groups:
                    after = shard_restores[-1:] if self.restore_sequentially else []
                    with graph.device(_set_cpu0(device)):
                        shard_restores.append(self.restore_ops(filename_tensor, saveables, after, "restore_shard"))
                restore_op = identity_ops.group(*shard_restores, name="restore_all")
            else:
                restore_op = self.restore_ops(filename_tensor, self.saveables, [], "restore_all")
        return SaverDef(filename_tensor.name, save_tensor.name, restore_op.name, sharded=sharded)
