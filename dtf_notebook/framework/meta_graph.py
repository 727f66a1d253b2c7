"""TF's ``MetaGraphDef`` of a graph (its ``GraphDef``, saver, collections and op list) and back into a graph.

A collection is written as TF writes it: the names of its tensors and operations (``node_list``), or, for the
collections whose items have a registered protobuf form (variables as ``VariableDef``, queue runners as
``QueueRunnerDef``, savers as ``SaverDef``; :func:`register_proto_function`, filled by the modules that define
those items), those messages serialized (``bytes_list``); strings, ints and floats as ``bytes_list``,
``int64_list`` and ``float_list``. A collection holding anything else (a cond context, a Python object) is left
out, with a warning, as TF leaves it out.

With an export scope only the nodes whose names start with it are kept, named relative to it; an input from
outside becomes ``$unbound_inputs_<name>``, listed in the ``unbound_inputs`` collection (TF's rules).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     v = tf.Variable(1.0, name="v")
    ...     tf.add_to_collection("outputs", v * 2.0)
    >>> meta = create_meta_graph_def(graph=g)
    >>> list(meta.collection_def["outputs"].node_list.value), meta.collection_def["variables"].WhichOneof("kind")
    (['mul:0'], 'bytes_list')
    >>> with tf.Graph().as_default() as copy:
    ...     import_scoped_meta_graph(meta, import_scope="copy")
    ...     [x.name for x in tf.global_variables()], tf.get_collection("outputs")[0].name
    (['copy/v:0'], 'copy/mul:0')
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tf_op_defs import stripped_op_list, tf_op_def
from dtf_notebook.framework.versions import GIT_VERSION, VERSION

__all__ = [
    "SAVE_AND_RESTORE_OPS",
    "UNBOUND_INPUTS",
    "create_meta_graph_def",
    "get_collection_proto_type",
    "import_scoped_meta_graph",
    "register_proto_function",
    "remove_default_attrs",
    "saver_scope",
    "strip_name_scope",
]

_log = logging.getLogger(__name__)

#: The collection that lists the inputs an export scope cut (TF's ``unbound_inputs``).
UNBOUND_INPUTS = "unbound_inputs"
_UNBOUND_PREFIX = "$unbound_inputs_"

#: The op types of a saver's save and restore ops: TF's (``SaveV2``, ``RestoreV2``, ...) and this package's.
SAVE_AND_RESTORE_OPS = frozenset(
    "SaveV2 Save SaveSlices RestoreV2 Restore RestoreSlice MergeV2Checkpoints ShardedFilename "
    "SaveShard RestoreSlices MergeCheckpointShards".split()
)

_PROTO_FUNCTIONS: dict[str, tuple[Any, Callable[..., Any] | None, Callable[..., Any] | None]] = {}
# TF writes control-flow contexts as CondContextDef/WhileContextDef messages, which are not rebuilt here.
_CONTEXT_KEYS = frozenset({GraphKeys.COND_CONTEXT, GraphKeys.WHILE_CONTEXT})


def register_proto_function(
    collection_name: str,
    proto_type: Any = None,
    to_proto: Callable[..., Any] | None = None,
    from_proto: Callable[..., Any] | None = None,
) -> None:
    """Gives the items of a collection a protobuf form in meta graphs (TF's ``ops.register_proto_function``).

    Args:
        collection_name: The collection's key.
        proto_type: The message class (``VariableDef``, ...).
        to_proto: ``to_proto(item, export_scope=None)``: the item's message, or None to leave it out.
        from_proto: ``from_proto(message, import_scope=None)``: the item rebuilt in the default graph.

    Example:
        >>> from dtf_notebook.protos.graph_pb import VariableDef
        >>> get_collection_proto_type("trainable_variables") is VariableDef
        True
    """
    _PROTO_FUNCTIONS[collection_name] = (proto_type, to_proto, from_proto)


def get_collection_proto_type(collection_name: str) -> Any:
    """The message class registered for a collection's items, or None."""
    return _PROTO_FUNCTIONS.get(collection_name, (None, None, None))[0]


def strip_name_scope(name: str, scope: str | None) -> str:
    """``name`` without the leading ``scope/`` (also after a control input's ``^``), as TF's ``strip_name_scope``.

    Example:
        >>> strip_name_scope("^outer/inner/op", "outer/"), strip_name_scope("other/op", "outer")
        ('^inner/op', 'other/op')
    """
    scope = (scope or "").rstrip("/")
    caret = name.startswith("^")
    bare = name[1:] if caret else name
    if scope and bare.startswith(scope + "/"):
        bare = bare[len(scope) + 1 :]
    return ("^" if caret else "") + bare


def _prepend_scope(name: str, scope: str) -> str:
    if not scope:
        return name
    caret = name.startswith("^")
    return ("^" if caret else "") + f"{scope}/{name[1:] if caret else name}"


def _scoped_graph_def(graph_def: Any, scope: str) -> list[str]:
    """Keeps the nodes of ``graph_def`` whose names start with ``scope`` (a plain prefix test, as TF's), named
    relative to it; returns the unbound inputs, sorted."""
    kept = [node for node in graph_def.node if node.name.startswith(scope)]
    names = {node.name for node in kept}
    unbound: set[str] = set()
    for node in kept:
        inputs = []
        for inp in node.input:
            caret = inp.startswith("^")
            bare = inp[1:] if caret else inp
            if bare.split(":")[0] in names:
                inputs.append(strip_name_scope(inp, scope))
            else:
                unbound.add(_UNBOUND_PREFIX + bare)
                inputs.append(("^" if caret else "") + _UNBOUND_PREFIX + bare)
        node.name = strip_name_scope(node.name, scope)
        del node.input[:]
        node.input.extend(inputs)
    del graph_def.node[:]
    graph_def.node.extend(kept)
    return sorted(unbound)


def saver_scope(saver_def: Any) -> str:
    """The name scope of a saver's ops, from its ``SaverDef`` (``"save"`` for ``save/restore_all``); ``""`` for none.

    Example:
        >>> from dtf_notebook.protos.graph_pb import SaverDef
        >>> saver_scope(SaverDef(restore_op_name="model/save/restore_all"))
        'model/save'
    """
    for name in (saver_def.restore_op_name, saver_def.save_tensor_name):
        if name:
            return name.lstrip("^").split(":")[0].rpartition("/")[0]
    return ""


def _clear_extraneous_savers(graph_def: Any, collections: dict[str, Any], saver_def: Any) -> None:
    """TF's ``clear_extraneous_savers``: drops the nodes in the name scopes of every saver but ``saver_def``'s; the
    ``savers`` collection holds that one only."""
    keep = saver_scope(saver_def) + "/" if saver_def is not None else None
    saver_nodes = {n.name for n in graph_def.node if n.op in SAVE_AND_RESTORE_OPS}
    scopes = {name.rpartition("/")[0] for name in saver_nodes} - saver_nodes
    others = tuple(sorted({f"{scope}/" for scope in scopes if scope} - {keep}))
    if others:
        kept = [n for n in graph_def.node if not n.name.startswith(others)]
        del graph_def.node[:]
        graph_def.node.extend(kept)
    if "savers" in collections:
        savers = collections["savers"].bytes_list.value
        del savers[:]
        if saver_def is not None:
            savers.append(saver_def.SerializeToString())


def add_default_attrs(graph_def: Any) -> None:
    """Gives, in place, each node the attrs it lacks that TF's signature of its op type has a default for (what a
    meta graph written with ``strip_default_attrs`` left out).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.matmul(tf.ones([1, 1]), tf.ones([1, 1]))
        >>> graph_def = g.as_graph_def()
        >>> remove_default_attrs(graph_def); add_default_attrs(graph_def)
        >>> sorted(graph_def.node[-1].attr)
        ['T', 'grad_a', 'grad_b', 'transpose_a', 'transpose_b']
    """
    for node in graph_def.node:
        op_def = tf_op_def(node.op)
        if op_def is None:
            continue
        for attr in op_def.attr:
            if attr.HasField("default_value") and attr.name not in node.attr:
                node.attr[attr.name].CopyFrom(attr.default_value)


def remove_default_attrs(graph_def: Any) -> None:
    """Removes, in place, each node attr equal to the default TF's signature of its op type gives it (TF's
    ``strip_default_attrs``: consumers fill them in again).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.matmul(tf.ones([1, 1]), tf.ones([1, 1]))
        >>> graph_def = g.as_graph_def()
        >>> remove_default_attrs(graph_def)
        >>> sorted(graph_def.node[-1].attr)
        ['T']
    """
    for node in graph_def.node:
        op_def = tf_op_def(node.op)
        if op_def is None:
            continue
        for attr in op_def.attr:
            if attr.HasField("default_value") and attr.name in node.attr and node.attr[attr.name] == attr.default_value:
                del node.attr[attr.name]


def _kind(item: Any) -> str:
    if isinstance(item, str | bytes):
        return "bytes_list"
    if isinstance(item, int):
        return "int64_list"
    if isinstance(item, float):
        return "float_list"
    return "node_list"


def _add_collection_def(meta_graph_def: Any, key: str, graph: Graph, export_scope: str) -> None:
    """TF's ``add_collection_def``: a collection of ``graph`` into ``meta_graph_def`` (left out, with a warning,
    when an item has no stored form)."""
    items = graph.get_collection(key)
    if not items:
        return
    proto_type, to_proto, _ = _PROTO_FUNCTIONS.get(key, (None, None, None))
    collection = meta_graph_def.collection_def[key]
    try:
        if to_proto is not None:
            for item in items:
                message = to_proto(item, export_scope=export_scope or None)
                if message is not None:
                    collection.bytes_list.value.append(message.SerializeToString())
            return
        kind = _kind(items[0])
        for item in items:
            if _kind(item) != kind:
                raise TypeError(f"it mixes {type(items[0]).__name__} and {type(item).__name__} items")
            if kind == "bytes_list":
                collection.bytes_list.value.append(item.encode("utf-8") if isinstance(item, str) else item)
            elif kind in ("int64_list", "float_list"):
                getattr(collection, kind).value.append(item)
            elif not isinstance(item, Tensor | Operation):
                raise TypeError(f"a {type(item).__name__} is neither a tensor nor an operation")
            elif not export_scope or item.name.startswith(export_scope):
                collection.node_list.value.append(strip_name_scope(item.name, export_scope))
        if collection.WhichOneof("kind") is None:
            # Every item lay outside the export scope: an empty list of the right kind, as TF writes it.
            getattr(collection, kind).SetInParent()
    except (TypeError, ValueError) as e:
        _log.warning(
            "Issue encountered when serializing %s.\nType is unsupported, or the types of the items don't match "
            "field type in CollectionDef. Note this is a warning and probably safe to ignore.\n%s",
            key,
            e,
        )
        del meta_graph_def.collection_def[key]


def create_meta_graph_def(
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: Any = None,
    collection_list: Sequence[str] | None = None,
    graph: Graph | None = None,
    export_scope: str | None = None,
    clear_devices: bool = False,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
) -> Any:
    """TF's ``create_meta_graph_def``: the ``MetaGraphDef`` of ``graph`` (the default graph).

    Args:
        meta_info_def: A ``MetaInfoDef`` message or a dict of its fields (``tags``, ``meta_graph_version``, ...);
            its op list, TF version and ``stripped_default_attrs`` are filled in here.
        graph_def: The ``GraphDef`` to store (a message, ours or TF's, or a plain-dict graph def) instead of
            ``graph.as_graph_def(add_shapes=True)``.
        saver_def: The ``SaverDef`` to store (a message, or a dict of its fields).
        collection_list: The collection keys to store (default: all of ``graph``'s).
        graph: The graph whose collections (and default graph def) are stored.
        export_scope: Keep only the nodes, collection items and saver names under this scope, relative to it.
        clear_devices: Leave out the nodes' requested devices.
        clear_extraneous_savers: Leave out the nodes of savers other than ``saver_def``'s.
        strip_default_attrs: Leave out node attrs equal to their op's default (:func:`remove_default_attrs`).

    Returns:
        A ``MetaGraphDef`` message.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.constant(1.0, name="c")
        >>> meta = create_meta_graph_def(graph=g, meta_info_def={"tags": ["serve"]})
        >>> [op.name for op in meta.meta_info_def.stripped_op_list.op], list(meta.meta_info_def.tags)
        (['Const'], ['serve'])
    """
    from dtf_notebook.framework.graph_proto import graph_def_proto
    from dtf_notebook.protos.graph_pb import GraphDef, MetaGraphDef, SaverDef

    graph = graph if graph is not None else get_default_graph()
    scope = (export_scope or "").rstrip("/")
    meta = MetaGraphDef()
    if isinstance(meta_info_def, dict):
        meta.meta_info_def.CopyFrom(MetaGraphDef.MetaInfoDef(**meta_info_def))
    elif meta_info_def is not None:
        meta.meta_info_def.MergeFromString(meta_info_def.SerializeToString())
    if graph_def is None:
        meta.graph_def.CopyFrom(graph.as_graph_def(add_shapes=True))
    elif isinstance(graph_def, dict):
        meta.graph_def.CopyFrom(graph_def_proto(graph_def))
    elif isinstance(graph_def, GraphDef):
        meta.graph_def.CopyFrom(graph_def)
    else:  # TF's class: through its bytes
        meta.graph_def.MergeFromString(graph_def.SerializeToString())
    if isinstance(saver_def, dict):
        saver_def = SaverDef(**saver_def)
    elif saver_def is not None and not isinstance(saver_def, SaverDef):
        saver_def = SaverDef.FromString(saver_def.SerializeToString())
    if clear_devices:
        for node in meta.graph_def.node:
            node.device = ""
    keys = sorted(graph.get_all_collection_keys()) if collection_list is None else collection_list
    for key in keys:
        _add_collection_def(meta, str(key), graph, scope)
    if clear_extraneous_savers:
        _clear_extraneous_savers(meta.graph_def, meta.collection_def, saver_def)
    if scope:
        unbound = _scoped_graph_def(meta.graph_def, scope)
        if unbound:
            meta.collection_def[UNBOUND_INPUTS].bytes_list.value.extend(u.encode("utf-8") for u in unbound)
    if saver_def is not None:
        names = (saver_def.filename_tensor_name, saver_def.save_tensor_name, saver_def.restore_op_name)
        if not scope or all(n.startswith(scope + "/") for n in names):
            meta.saver_def.CopyFrom(saver_def)
            meta.saver_def.filename_tensor_name = strip_name_scope(names[0], scope)
            meta.saver_def.save_tensor_name = strip_name_scope(names[1], scope)
            meta.saver_def.restore_op_name = strip_name_scope(names[2], scope)
    if strip_default_attrs:
        remove_default_attrs(meta.graph_def)
        meta.meta_info_def.stripped_default_attrs = True
    info = meta.meta_info_def
    info.stripped_op_list.CopyFrom(stripped_op_list(node.op for node in meta.graph_def.node))
    info.tensorflow_version = info.tensorflow_version or VERSION
    info.tensorflow_git_version = info.tensorflow_git_version or GIT_VERSION
    return meta


def import_scoped_meta_graph(
    meta_graph_def: Any,
    graph: Graph | None = None,
    import_scope: str | None = None,
    clear_devices: bool = False,
) -> None:
    """Adds a meta graph's nodes to ``graph`` (the default graph), under ``import_scope/``, and fills its
    collections again (TF's ``import_scoped_meta_graph``, without ``input_map``).

    Collections with a registered protobuf form get their items rebuilt (each message once: a variable in several
    collections is one ``Variable``); ``node_list`` items become the imported tensors and operations; the other
    lists their values. The ``unbound_inputs`` collection is not imported (TF's rule), nor TF's control-flow
    contexts (``cond_context``, ``while_context``), which are not rebuilt here.

    Raises:
        InvalidArgumentError: a node cannot be imported (the message names it).
        KeyError: a collection names a node the graph def does not have.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     tf.add_to_collection("steps", 3)
        >>> with tf.Graph().as_default() as copy:
        ...     import_scoped_meta_graph(create_meta_graph_def(graph=g))
        ...     tf.get_collection("steps")
        [3]
    """
    from dtf_notebook.framework.graph_import import import_graph_def
    from dtf_notebook.framework.importer import graph_def_as_dict
    from dtf_notebook.protos.graph_pb import GraphDef

    graph = graph if graph is not None else get_default_graph()
    scope = (import_scope or "").rstrip("/")
    graph_def = meta_graph_def.graph_def
    if meta_graph_def.meta_info_def.stripped_default_attrs:
        graph_def = GraphDef.FromString(graph_def.SerializeToString())
        add_default_attrs(graph_def)
    plain = graph_def_as_dict(graph_def)
    if clear_devices:
        for node in plain["node"]:
            node["device"] = ""
    with graph.as_default():
        import_graph_def(plain, graph, name_prefix=scope)
        rebuilt: dict[bytes, Any] = {}
        for key in sorted(meta_graph_def.collection_def):
            if key == UNBOUND_INPUTS:
                continue
            if key in _CONTEXT_KEYS and key not in _PROTO_FUNCTIONS:
                _log.warning("The %s collection of the meta graph is not rebuilt here (its control-flow contexts)", key)
                continue
            collection = meta_graph_def.collection_def[key]
            kind = collection.WhichOneof("kind")
            if kind is None:
                _log.warning("Cannot identify data type for collection %s. Skipping.", key)
                continue
            proto_type, _, from_proto = _PROTO_FUNCTIONS.get(key, (None, None, None))
            values = getattr(collection, kind).value
            if kind == "bytes_list" and from_proto is not None:
                for value in values:
                    if value not in rebuilt:
                        rebuilt[value] = from_proto(proto_type.FromString(value), import_scope=scope or None)
                    graph.add_to_collection(key, rebuilt[value])
            elif kind == "node_list":
                for value in values:
                    graph.add_to_collection(key, graph.as_graph_element(_prepend_scope(value, scope)))
            else:
                for value in values:
                    graph.add_to_collection(key, value)
