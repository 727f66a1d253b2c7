"""What a ``Saver`` saves: saveable objects, and turning its ``var_list`` into them (TF's rules).

A :class:`SaveableObject` names one or more tensors to save (:class:`SaveSpec`: tensor, slice
spec, saved name, device) and knows how to restore itself from the tensors read back. Variables
become :class:`VariableSaveable`; each part of a partitioned variable becomes one with its slice
spec under the full variable's name. Objects in the ``SAVEABLE_OBJECTS`` collection are saved
with the global variables when a ``Saver`` gets no ``var_list``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     e = tf.get_variable("e", [4, 2], partitioner=lambda shape, dtype: [2, 1])
    ...     saveables = saveables_from_var_list([w, e])
    >>> [(s.name, s.specs[0].slice_spec) for s in saveables]
    [('e', '4 2 0,2:0,2'), ('e', '4 2 2,2:0,2'), ('w', '')]
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import state_ops
from dtf_notebook.ops.partitioned_variables import PartitionedVariable
from dtf_notebook.ops.variables import Variable

__all__ = ["SaveSpec", "SaveableObject", "VariableSaveable", "op_list_to_dict", "saveables_from_var_list"]


class SaveSpec:
    """One tensor to save: its value, slice spec (``""`` = whole), saved name, dtype and device.

    ``tensor`` may be a callable returning the tensor, so it is only built when a save op is.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     spec = SaveSpec(tf.constant(1.0), "", "c")
        >>> spec.name, spec.dtype.name
        ('c', 'float32')
    """

    def __init__(
        self, tensor: Tensor | Callable[[], Tensor], slice_spec: str, name: str, dtype: Any = None, device: Any = None
    ) -> None:
        self._tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        if callable(tensor) and (dtype is None or device is None):
            raise ValueError("A SaveSpec given a callable tensor needs an explicit dtype and device")
        self.dtype = dtype if dtype is not None else tensor.dtype
        self.device = device if device is not None else tensor.device

    @property
    def tensor(self) -> Tensor:
        """The tensor to save (built now when a callable was given)."""
        return self._tensor() if callable(self._tensor) else self._tensor


class SaveableObject(abc.ABC):
    """Something a Saver can save and restore: ``specs`` to write, ``restore`` to read back.

    Args:
        op: The object being saved (a variable, a table, ...).
        specs: Its SaveSpecs.
        name: The name it is saved under.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(2.0, name="v")
        ...     VariableSaveable(v, "", "v").device
        ''
    """

    def __init__(self, op: Any, specs: Sequence[SaveSpec], name: str) -> None:
        self.op = op
        self.specs = list(specs)
        self.name = name

    @property
    def device(self) -> str:
        """Where this object's tensors live (its first spec's device)."""
        return self.specs[0].device

    @abc.abstractmethod
    def restore(self, restored_tensors: Sequence[Tensor], restored_shapes: Sequence[Any] | None) -> Operation:
        """Builds the op that loads ``restored_tensors`` (one per spec) into the object.

        ``restored_shapes`` is None: restore ops already give each tensor the shape it is restored with.
        """


class VariableSaveable(SaveableObject):
    """A (part of a) reference variable, saved under ``name`` with ``slice_spec``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0, 2.0], name="v")
        ...     s = VariableSaveable(v, "", "renamed")
        ...     s.restore([tf.constant([3.0, 4.0])], None).type
        'Assign'
    """

    def __init__(self, var: Variable | Tensor, slice_spec: str, name: str) -> None:
        ref = var._ref() if isinstance(var, Variable) else var
        # A resource variable of an imported graph is saved from its snapshot and restored by its own assign.
        self._resource = var if isinstance(var, Variable) and ref.dtype.name == "resource" else None
        saved = self._resource.value() if self._resource is not None else ref
        super().__init__(var, [SaveSpec(saved, slice_spec, name, saved.dtype, ref.op.device)], name)
        self._ref = ref

    def restore(self, restored_tensors: Sequence[Tensor], restored_shapes: Sequence[Any] | None) -> Operation:
        tensor = restored_tensors[0]
        if self._resource is not None:
            return self._resource.assign(tensor, read_value=False)
        validate = restored_shapes is None and self._ref.shape.is_fully_defined()
        return state_ops.assign(self._ref, tensor, validate_shape=validate).op


def _is_variable_ref(t: Any) -> bool:
    return isinstance(t, Tensor) and t.is_ref and t.op.type in ("VariableV2", "Variable", "VarHandleOp")


def op_list_to_dict(op_list: Any) -> dict[str, Any]:
    """Saved names for a list of variables: op names, full names for partitions (TF's ``op_list_to_dict``).

    Raises:
        TypeError: ``op_list`` is not a list, tuple or set, or holds something that is not a variable.
        ValueError: two entries get the same name, or slices and whole variables share a name.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.Variable(1.0, name="a")
        ...     sorted(op_list_to_dict([a]))
        ['a']
    """
    if not isinstance(op_list, list | tuple | set):
        raise TypeError(f"Variables to save should be passed in a dict or a list: {op_list!r}")
    names: dict[str, Any] = {}
    for var in sorted(op_list, key=lambda x: x.name):
        if isinstance(var, SaveableObject | PartitionedVariable):
            if var.name in names:
                raise ValueError(f"At least two variables have the same name: {var.name}")
            names[var.name] = var
        elif isinstance(var, Variable) and var._save_slice_info is not None:
            name = var._save_slice_info.full_name
            if name in names and not isinstance(names[name], list):
                raise ValueError(f"Mixing slices and non-slices with the same name: {name}")
            names.setdefault(name, []).append(var)
        else:
            ref = convert_to_tensor(var, as_ref=True) if isinstance(var, Variable | Tensor) else var
            # A resource variable's handle saves through its Variable object only (which reads and assigns it).
            if not _is_variable_ref(ref) or (ref.op.type == "VarHandleOp" and not isinstance(var, Variable)):
                raise TypeError(f"Variable to save is not a Variable: {var!r}")
            name = ref.op.name
            if name in names:
                raise ValueError(f"At least two variables have the same name: {name}")
            names[name] = var
    return names


def _slice_saveables(name: str, parts: Sequence[Variable]) -> list[SaveableObject]:
    out = []
    for part in parts:
        info = getattr(part, "_save_slice_info", None)
        if info is None:
            raise ValueError(f"Slices must all be slices: {part.name} of {name} has no slice information")
        if info.full_name != name:
            raise ValueError(f"Slice {part.name} belongs to {info.full_name}, not to {name}")
        out.append(VariableSaveable(part, info.spec, name))
    return out


def saveables_from_var_list(var_list: Any) -> list[SaveableObject]:
    """The saveable objects for a Saver's ``var_list`` (a dict of names to variables, or a list).

    Raises:
        TypeError: a dict value is not a variable, partitioned variable, list of slices or SaveableObject.
        ValueError: the same variable appears under two names, or names collide.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(1.0, name="w")
        ...     saveables = saveables_from_var_list({"weights": w})
        >>> [(s.name, s.specs[0].name) for s in saveables]
        [('weights', 'weights')]
    """
    names = var_list if isinstance(var_list, dict) else op_list_to_dict(var_list)
    saveables: list[SaveableObject] = []
    seen: set[int] = set()
    for name in sorted(names):
        op = names[name]
        if isinstance(op, SaveableObject):
            found = [op]
        elif isinstance(op, PartitionedVariable):
            found = _slice_saveables(name, list(op))
        elif isinstance(op, list | tuple):
            found = _slice_saveables(name, op)
        elif isinstance(op, Variable) or _is_variable_ref(op):
            found = [VariableSaveable(op, "", name)]
        else:
            raise TypeError(
                f"names_to_saveables must be a dict mapping string names to Tensors/Variables. Not a variable: {op!r}"
            )
        for s in found:
            key = id(s.op._ref() if isinstance(s.op, Variable) else s.op)
            if key in seen:
                raise ValueError(f"The same saveable will be restored with two names: {name}")
            seen.add(key)
        saveables.extend(found)
    return saveables
