"""``tf.train.init_from_checkpoint``: initialise variables from a checkpoint instead of their initializers.

Each mapped variable's initializer is replaced by an assignment of the tensor read from the checkpoint
(TF's ``checkpoint_initializer`` restore op, placed on the CPU of the variable's task, so the task holding
the variable reads the file itself: on a cluster of several machines the checkpoint must be on a
filesystem every task sees). Nothing is read until the initializers run, e.g. by
``global_variables_initializer()`` or a ``Scaffold``. A partitioned variable's parts each read their own
slice of the saved tensor, whatever partitioning (or none) it was saved with.

The ``assignment_map`` follows TF1 (keys are names in the checkpoint, values name the current variables):

* ``{"old/w": "new/w"}`` or ``{"old/w": w}``: one variable, by its name in the variable store (``get_variable``
  variables) or by the object; a partitioned variable by its name, its ``PartitionedVariable`` or its list
  of parts;
* ``{"old_scope/": "new_scope/"}``: every store variable under ``new_scope/`` from the tensor of the same
  relative name under ``old_scope/``;
* ``{"/": "new_scope/"}``, ``{"old_scope/": "/"}``, ``{"/": "/"}``: the root of either side.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.get_variable("old/w", initializer=[1.0, 2.0])
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         _ = tf.train.Saver().save(sess, "memory://doc/init_from/model")
    >>> with tf.Graph().as_default():
    ...     v = tf.get_variable("new/w", [2])
    ...     tf.train.init_from_checkpoint("memory://doc/init_from", {"old/": "new/"})
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         print(sess.run(v))
    [1. 2.]
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.ops import io_ops, state_ops
from dtf_notebook.ops.partitioned_variables import PartitionedVariable
from dtf_notebook.ops.variable_store import _get_default_variable_store
from dtf_notebook.ops.variables import Variable
from dtf_notebook.train.checkpoint_utils import checkpoint_prefix, load_checkpoint

__all__ = ["init_from_checkpoint"]

_log = logging.getLogger(__name__)


def _is_variable_or_parts(value: Any) -> bool:
    return isinstance(value, Variable) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, Variable) for v in value)
    )


def _parts_of(name: str) -> list[Variable] | None:
    """The parts of the store's partitioned variable ``name`` (None when there is none)."""
    partitioned = _get_default_variable_store()._partitioned_vars.get(name)
    return None if partitioned is None else list(partitioned)


def _set_checkpoint_initializer(variable: Variable, prefix: str, tensor_name: str, slice_spec: str) -> None:
    """Makes ``variable``'s initializer assign ``tensor_name`` (or its slice) read from checkpoint ``prefix``."""
    graph = get_default_graph()
    dtype = variable.dtype.base_dtype
    shape = variable.get_shape()
    # On the variable's task but its CPU: not colocated, so the variable's own device is left alone.
    with graph.device(variable.device), graph.device("/cpu:0"):
        (restored,) = io_ops.restore_slices(
            prefix,
            [tensor_name],
            [slice_spec],
            [dtypes.as_dtype(dtype)],
            [shape.as_list() if shape.ndims is not None else None],
            name="checkpoint_initializer",
        )
    restored.set_shape(shape)
    with graph.colocate_with(variable.op):
        init = state_ops.assign(variable._ref(), restored, validate_shape=shape.is_fully_defined())
    variable._initializer_op = init.op
    variable._initial_value = restored


def _set_initializers(target: Variable | list[Variable], prefix: str, tensor_name: str) -> None:
    if isinstance(target, Variable):
        _set_checkpoint_initializer(target, prefix, tensor_name, "")
        return
    full_name = None
    for part in target:
        info = getattr(part, "_save_slice_info", None)
        if info is None:
            raise ValueError(f"Variable {part.name} in a list of parts is not a part of a partitioned variable")
        if full_name is not None and info.full_name != full_name:
            raise ValueError(f"Slices must all be from the same tensor: {full_name} != {info.full_name}")
        full_name = info.full_name
        _set_checkpoint_initializer(part, prefix, tensor_name, info.spec)


def init_from_checkpoint(ckpt_dir_or_file: str, assignment_map: Any) -> None:
    """Replaces the initializers of the mapped variables by reads from a checkpoint (TF1's semantics).

    Args:
        ckpt_dir_or_file: A checkpoint prefix, or a directory (its latest checkpoint is used).
        assignment_map: A dict (or ``(key, value)`` pairs) from checkpoint names or scopes to current
            variable names or scopes, variables, ``PartitionedVariable`` objects or lists of parts; see the
            module docstring.

    Raises:
        ValueError: a named tensor is not in the checkpoint, a variable's shape differs from the saved one, a
            scope maps to a single name, or a list of parts mixes variables.
        NotFoundError: no checkpoint at ``ckpt_dir_or_file``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     saved = tf.get_variable("table", initializer=tf.reshape(tf.range(10.0), [5, 2]))
        ...     with tf.Session() as sess:
        ...         sess.run(saved.initializer)
        ...         _ = tf.train.Saver().save(sess, "memory://doc/init_parts/model")
        >>> with tf.Graph().as_default():
        ...     emb = tf.get_variable("emb", [5, 2], partitioner=tf.fixed_size_partitioner(2))
        ...     tf.train.init_from_checkpoint("memory://doc/init_parts/model", {"table": emb})
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print([part.tolist() for part in sess.run(list(emb))])
        [[[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[6.0, 7.0], [8.0, 9.0]]]
    """
    prefix = checkpoint_prefix(ckpt_dir_or_file)
    variable_map = load_checkpoint(prefix).get_variable_to_shape_map()
    pairs = assignment_map.items() if isinstance(assignment_map, Mapping) else assignment_map
    store_vars = _get_default_variable_store()._vars
    for tensor_name, current in sorted(pairs, key=lambda pair: pair[0]):
        if isinstance(current, PartitionedVariable):
            current = list(current)
        if _is_variable_or_parts(current):
            target: Any = current
        elif isinstance(current, str):
            target = store_vars.get(current)
            if target is None:
                target = _parts_of(current)
        else:
            raise TypeError(
                f"assignment_map values are variable names or scopes, variables or lists of parts, got {current!r}"
            )
        if target is not None:
            if tensor_name not in variable_map:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} checkpoint {variable_map}")
            if isinstance(target, Variable) and not target.get_shape().is_compatible_with(variable_map[tensor_name]):
                raise ValueError(
                    f"Shape of variable {target.name} ({target.get_shape()}) doesn't match with shape of tensor "
                    f"{tensor_name} ({variable_map[tensor_name]}) from checkpoint reader."
                )
            _set_initializers(target, prefix, tensor_name)
            _log.debug("Initialize variable %s from checkpoint %s with %s", current, ckpt_dir_or_file, tensor_name)
            continue
        _init_scope(tensor_name, current, ckpt_dir_or_file, prefix, variable_map, store_vars)


def _init_scope(
    tensor_name: str,
    current: str,
    ckpt_dir_or_file: str,
    prefix: str,
    variable_map: Mapping[str, Any],
    store_vars: Mapping[str, Variable],
) -> None:
    """A ``"scope/": "other_scope/"`` entry: every store variable under the current scope (TF's rule)."""
    scope = current[: current.rindex("/")] if "/" in current else ""
    if not tensor_name.endswith("/"):
        raise ValueError(
            f"Assignment map with scope only name {scope} should map to scope only {tensor_name}. "
            "Should be 'scope/': 'other_scope/'."
        )
    names = set()
    for name in store_vars:
        if not scope or name.startswith(scope + "/"):
            names.add(name[: name.index("/part_")] if "/part_" in name else name)
    for name in sorted(names):
        full_tensor_name = name[len(scope) :]
        if current != "/":
            full_tensor_name = full_tensor_name[1:]
        if tensor_name != "/":
            full_tensor_name = tensor_name + full_tensor_name
        full_tensor_name = full_tensor_name.removesuffix("/")
        if full_tensor_name not in variable_map:
            raise ValueError(
                f"Tensor {full_tensor_name} ({name[len(scope) + 1 :]} in {tensor_name}) is not found in "
                f"{ckpt_dir_or_file} checkpoint"
            )
        target = store_vars.get(name)
        if target is None:
            target = _parts_of(name)
        _set_initializers(target, prefix, full_tensor_name)
        _log.debug("Initialize variable %s from checkpoint %s with %s", name, ckpt_dir_or_file, full_tensor_name)
