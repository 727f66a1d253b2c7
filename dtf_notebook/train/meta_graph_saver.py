"""A saver's ops in a meta graph: written as TF's save ops, and rebuilt as this package's when one is imported.

A Saver here saves with this package's ops (``SaveShard``, ``MergeCheckpointShards``, ``RestoreSlices``), which
TF does not have. So that real TF imports a meta graph written here, :func:`write_tf_save_ops` replaces them, in
the ``GraphDef`` of the meta graph, with the ops TF's own Saver builds under the same names: each ``SaveShard`` a
``SaveV2`` (with a ``ShardedFilename`` of a temporary prefix when the saver is sharded), each
``MergeCheckpointShards`` the ``Identity`` of the prefix (after a ``MergeV2Checkpoints`` of the shards when
sharded), each ``RestoreSlices`` a ``RestoreV2`` whose outputs the restoring ``Assign`` ops read as before. The
``SaverDef``'s names stay valid, so TF's ``import_meta_graph`` returns a working TF Saver.

When a meta graph is imported here, the name scope of each saver built of ops this package does not have (TF's, as
written by TF or here) is left out (:func:`foreign_saver_scopes`), and the saver is built again with this
package's ops under the same scope (:func:`rebuild_saver`), saving the same tensors under the same checkpoint keys
and slices (read from the ``SaveV2`` ops' constant inputs) with the ``SaverDef``'s policy (``max_to_keep``,
``keep_checkpoint_every_n_hours``, ``sharded``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.Variable(1.0, name="w")
    ...     saver = tf.train.Saver()
    >>> graph_def = g.as_graph_def()
    >>> write_tf_save_ops(graph_def, g)
    >>> sorted({n.op for n in graph_def.node if n.name.startswith("save/")})
    ['Assign', 'Const', 'Identity', 'NoOp', 'RestoreV2', 'SaveV2']
    >>> foreign_saver_scopes(graph_def)
    ['save']
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.meta_graph import SAVE_AND_RESTORE_OPS
from dtf_notebook.framework.tensor_proto import make_ndarray, make_tensor_proto
from dtf_notebook.protos.graph_pb import NodeDef

__all__ = ["foreign_saver_scopes", "rebuild_saver", "saved_tensors", "strip_scopes", "write_tf_save_ops"]

_log = logging.getLogger(__name__)
_STRING = dtypes.string.as_datatype_enum


def _const(name: str, value: Any, device: str) -> NodeDef:
    """A ``Const`` node: strings (a list, or one) as a string tensor, an int as an int32 scalar."""
    node = NodeDef(name=name, op="Const", device=device)
    tensor = make_tensor_proto(np.asarray(value, dtype=np.int32 if isinstance(value, int) else object))
    node.attr["value"].tensor.CopyFrom(tensor)
    node.attr["dtype"].type = tensor.dtype
    return node


def _list(attr: Any) -> list[str]:
    return [v.decode("utf-8") for v in attr.list.s]


def _data_inputs(node: NodeDef) -> list[str]:
    return [i for i in node.input if not i.startswith("^")]


def _controls(node: NodeDef) -> list[str]:
    return [i for i in node.input if i.startswith("^")]


def _tensor_name(name: str) -> str:
    return name if ":" in name else name + ":0"


def write_tf_save_ops(graph_def: Any, graph: Graph | None = None) -> None:
    """Replaces, in place, this package's save and restore ops in ``graph_def`` with TF's (see the module's
    docstring).

    Args:
        graph_def: A ``GraphDef`` message (ours).
        graph: The graph the nodes come from, which gives the element types of the saved tensors (``SaveV2``'s
            ``dtypes``); a ``SaveShard`` whose inputs it does not have is left as it is.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.Variable([1.0, 2.0], name="w")
        ...     _ = tf.train.Saver()
        >>> graph_def = g.as_graph_def()
        >>> write_tf_save_ops(graph_def, g)
        >>> save = next(n for n in graph_def.node if n.op == "SaveV2")
        >>> save.name, list(save.input)[::3], tf.as_dtype(save.attr["dtypes"].list.type[0])
        ('save/SaveShard', ['save/Const', 'w'], tf.float32)
    """

    def dtype_of(name: str) -> int | None:
        try:
            return graph.get_tensor_by_name(_tensor_name(name)).dtype.as_datatype_enum if graph else None
        except (KeyError, ValueError):
            return None

    nodes: list[NodeDef] = []
    sharded_file: dict[str, str] = {}  # SaveShard name -> its ShardedFilename node
    temp_prefix: dict[str, str] = {}  # prefix input -> the StringJoin of the sharded saver's temporary prefix
    for node in graph_def.node:
        if node.op == "RestoreSlices":
            nodes.extend(_restore_v2(node))
        elif node.op == "SaveShard":
            nodes.extend(_save_v2(node, dtype_of, sharded_file, temp_prefix))
        elif node.op == "MergeCheckpointShards":
            nodes.extend(_merge(node, sharded_file))
        else:
            nodes.append(node)
    del graph_def.node[:]
    graph_def.node.extend(nodes)


def _restore_v2(node: NodeDef) -> list[NodeDef]:
    names, specs = _list(node.attr["tensor_names"]), _list(node.attr["slice_specs"])
    (prefix,) = _data_inputs(node)
    consts = [_const(f"{node.name}/tensor_names", names, node.device)]
    consts.append(_const(f"{node.name}/shape_and_slices", specs, node.device))
    restore = NodeDef(name=node.name, op="RestoreV2", device=node.device)
    restore.input.extend([prefix, consts[0].name, consts[1].name, *_controls(node)])
    restore.attr["dtypes"].list.type.extend(node.attr["dtypes"].list.type)
    return [*consts, restore]


def _save_v2(
    node: NodeDef, dtype_of: Callable[[str], int | None], sharded_file: dict[str, str], temp_prefix: dict[str, str]
) -> list[NodeDef]:
    prefix, *tensors = _data_inputs(node)
    types = [dtype_of(t) for t in tensors]
    if any(t is None for t in types):
        return [node]
    out: list[NodeDef] = []
    filename = prefix
    if node.attr["num_shards"].i > 1:
        if prefix not in temp_prefix:
            # TF's sharded saver writes the shards under "<prefix>_temp/part", then merges them into place.
            join = NodeDef(name=f"{node.name.rpartition('/')[0] or node.name}/temp_prefix", op="StringJoin")
            suffix = _const(f"{join.name}/suffix", "_temp/part", "")
            join.input.extend([prefix, suffix.name])
            join.attr["N"].i = 2
            join.attr["separator"].s = b""
            out.extend([suffix, join])
            temp_prefix[prefix] = join.name
        shard = _const(f"{node.name}/shard", node.attr["shard"].i, node.device)
        count = _const(f"{node.name}/num_shards", node.attr["num_shards"].i, node.device)
        sharded = NodeDef(name=f"{node.name}/filename", op="ShardedFilename", device=node.device)
        sharded.input.extend([temp_prefix[prefix], shard.name, count.name])
        out.extend([shard, count, sharded])
        filename = sharded_file[node.name] = sharded.name
    names = _const(f"{node.name}/tensor_names", _list(node.attr["tensor_names"]), node.device)
    specs = _const(f"{node.name}/shape_and_slices", _list(node.attr["slice_specs"]), node.device)
    save = NodeDef(name=node.name, op="SaveV2", device=node.device)
    save.input.extend([filename, names.name, specs.name, *tensors, *_controls(node)])
    save.attr["dtypes"].list.type.extend(types)
    return [*out, names, specs, save]


def _merge(node: NodeDef, sharded_file: dict[str, str]) -> list[NodeDef]:
    prefix, *shards = _data_inputs(node)
    identity = NodeDef(name=node.name, op="Identity", device=node.device)
    identity.attr["T"].type = _STRING
    after = ["^" + s.split(":")[0] for s in shards] + _controls(node)
    files = [sharded_file.get(s.split(":")[0]) for s in shards]
    if not any(files):
        identity.input.extend([prefix, *after])
        return [identity]
    if not all(files):
        return [node]  # a shard was left as SaveShard: so is its merge
    pack = NodeDef(name=f"{node.name}/checkpoint_prefixes", op="Pack", device=node.device)
    pack.input.extend([*files, *after])
    pack.attr["N"].i, pack.attr["T"].type, pack.attr["axis"].i = len(files), _STRING, 0
    merge = NodeDef(name=f"{node.name}/MergeV2Checkpoints", op="MergeV2Checkpoints", device=node.device)
    merge.input.extend([pack.name, prefix])
    merge.attr["delete_old_dirs"].b = True
    merge.attr["allow_missing_files"].b = False
    identity.input.extend([prefix, "^" + merge.name])
    return [pack, merge, identity]


def foreign_saver_scopes(graph_def: Any) -> list[str]:
    """The name scopes of the savers in ``graph_def`` built of save or restore ops this package does not have
    (TF's ``SaveV2``, ``RestoreV2``, ...), sorted.

    Example:
        >>> from dtf_notebook.protos.graph_pb import GraphDef
        >>> foreign_saver_scopes(GraphDef(node=[NodeDef(name="model/save/SaveV2", op="SaveV2")]))
        ['model/save']
    """
    registered = set(op_registry.registered_types())
    return sorted(
        {n.name.rpartition("/")[0] for n in graph_def.node if n.op in SAVE_AND_RESTORE_OPS and n.op not in registered}
    )


def saved_tensors(graph_def: Any, scope: str) -> list[tuple[str, str, str]]:
    """What the saver in ``scope`` saves: ``(checkpoint key, slice spec, tensor name)`` for each tensor of its
    ``SaveV2`` (or ``SaveSlices``, ``Save``) ops, the keys and specs read from their constant inputs.

    Raises:
        ValueError: a key or spec input is not a constant of the graph def.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.Variable(1.0, name="w")
        ...     _ = tf.train.Saver()
        >>> graph_def = g.as_graph_def()
        >>> write_tf_save_ops(graph_def, g)
        >>> saved_tensors(graph_def, "save")
        [('w', '', 'w')]
    """
    by_name = {n.name: n for n in graph_def.node}

    def constant(name: str) -> list[str]:
        node = by_name.get(name.split(":")[0])
        if node is None or node.op != "Const":
            raise ValueError(f"The saver in {scope!r} reads its tensor names from {name!r}, which is not a constant")
        values = make_ndarray(node.attr["value"].tensor).reshape(-1)
        return [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values]

    found = []
    for node in graph_def.node:
        if not node.name.startswith(scope + "/") or node.op not in ("SaveV2", "SaveSlices", "Save"):
            continue
        inputs = _data_inputs(node)
        keys = constant(inputs[1])
        if node.op == "Save":
            specs, tensors = [""] * len(keys), inputs[2:]
        else:
            specs, tensors = constant(inputs[2]), inputs[3:]
        found.extend(zip(keys, specs, tensors))
    return found


def strip_scopes(graph_def: Any, scopes: list[str]) -> None:
    """Removes, in place, the nodes under each of ``scopes``.

    Raises:
        ValueError: a node left in the graph def reads one that is removed (the message names both).

    Example:
        >>> from dtf_notebook.protos.graph_pb import GraphDef
        >>> graph_def = GraphDef(node=[NodeDef(name="save/Const"), NodeDef(name="w")])
        >>> strip_scopes(graph_def, ["save"])
        >>> [n.name for n in graph_def.node]
        ['w']
    """
    prefixes = tuple(scope + "/" for scope in scopes)
    removed = {n.name for n in graph_def.node if n.name.startswith(prefixes)}
    kept = [n for n in graph_def.node if n.name not in removed]
    for node in kept:
        for inp in node.input:
            source = inp.lstrip("^").split(":")[0]
            if source in removed:
                raise ValueError(f"Node {node.name!r} reads {inp!r} of a saver that is rebuilt on import")
    del graph_def.node[:]
    graph_def.node.extend(kept)


def _variable_ref(graph: Graph, name: str) -> Any:
    tensor = graph.get_tensor_by_name(_tensor_name(name))
    if tensor.op.type == "ReadVariableOp" and tensor.op.inputs[0].op.type == "VarHandleOp":
        # A resource variable's read (TF 2's graphs): save the variable its handle belongs to.
        handle = tensor.op.inputs[0]
        variables = graph.get_collection("variables") + graph.get_collection("local_variables")
        return next((v for v in variables if getattr(v, "_ref", None) and v._ref() is handle), None)
    if tensor.op.type == "Identity" and tensor.op.inputs and tensor.op.inputs[0].is_ref:
        tensor = tensor.op.inputs[0]  # a variable's snapshot: save the variable
    return tensor if tensor.is_ref and tensor.op.type in ("VariableV2", "Variable") else None


def rebuild_saver(
    saved: list[tuple[str, str, str]], saver_def: Any, graph: Graph, scope: str, import_scope: str | None
) -> Any:
    """A ``Saver`` built with this package's ops in ``import_scope/scope``, saving ``saved`` (from
    :func:`saved_tensors`) under the same keys and slices, with ``saver_def``'s policy.

    A saved tensor that is not a variable of ``graph`` is left out, with a warning.

    Returns:
        The Saver, or None when nothing it saves is a variable.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> from dtf_notebook.protos.graph_pb import SaverDef
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.Variable(1.0, name="w")
        ...     saver = rebuild_saver([("weights", "", "w")], SaverDef(max_to_keep=2), g, "keep", None)
        >>> saver.saver_def.restore_op_name, saver.saver_def.max_to_keep
        ('keep/restore_all', 2)
    """
    from dtf_notebook.train.saveable_object import VariableSaveable
    from dtf_notebook.train.saver import Saver

    prefix = import_scope.rstrip("/") + "/" if import_scope else ""
    var_list: dict[str, Any] = {}
    with graph.as_default():
        for key, spec, tensor_name in saved:
            ref = _variable_ref(graph, prefix + tensor_name)
            if ref is None:
                _log.warning("The imported saver in %r saves %s, which is not a variable: left out", scope, tensor_name)
                continue
            var_list[f"{key}[{spec}]" if spec else key] = VariableSaveable(ref, spec, key)
        if not var_list:
            return None
        return Saver(
            var_list,
            max_to_keep=saver_def.max_to_keep,
            keep_checkpoint_every_n_hours=saver_def.keep_checkpoint_every_n_hours or 10000.0,
            sharded=saver_def.sharded,
            name=prefix + scope,
        )
