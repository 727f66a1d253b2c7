"""``tf.train.export_meta_graph`` and ``tf.train.import_meta_graph``: a graph, its saver and its collections in TF's
``MetaGraphDef`` protocol buffer, the ``.meta`` file a ``Saver`` writes next to a checkpoint.

The file is TF's: the serialized message (text format with ``as_text=True``), so real TF's ``import_meta_graph``
loads a ``.meta`` written here and the other way round. The graph is ``Graph.as_graph_def(add_shapes=True)``; the
saver's ops are written as TF's ``SaveV2``/``RestoreV2`` ops, and a saver of ops this package does not have is
rebuilt with this package's ops on import, under the same names (:mod:`dtf_notebook.train.meta_graph_saver`). A TF
Saver loaded from a ``.meta`` written here writes TF's checkpoint format; checkpoints this package writes are read
here (and TF's too), not by TF. The collections are written as TF writes them
(:mod:`dtf_notebook.framework.meta_graph`).

The JSON ``.meta`` files of earlier versions of this package are still read (:func:`read_meta_graph_file`).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     c = tf.constant([1.0, 2.0], name="c")
    ...     meta = export_meta_graph("memory://doc/meta/m.meta")
    >>> meta.graph_def.node[0].attr["value"].tensor.tensor_shape.dim[0].size
    2
    >>> [op.name for op in read_meta_graph_file("memory://doc/meta/m.meta").meta_info_def.stripped_op_list.op]
    ['Const']
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from typing import Any

from google.protobuf import message, text_format

from dtf_notebook import errors
from dtf_notebook.framework.attr_json import from_json
from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.framework.graph_proto import graph_def_proto
from dtf_notebook.framework.meta_graph import (
    create_meta_graph_def,
    get_collection_proto_type,
    import_scoped_meta_graph,
    register_proto_function,
    saver_scope,
)
from dtf_notebook.protos.graph_pb import GraphDebugInfo, GraphDef, MetaGraphDef, SaverDef
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.train.meta_graph_saver import (
    foreign_saver_scopes,
    rebuild_saver,
    saved_tensors,
    strip_scopes,
    write_tf_save_ops,
)

__all__ = ["export_meta_graph", "import_meta_graph", "read_meta_graph_file"]

_log = logging.getLogger(__name__)


def _meta_graph_from_json(meta: dict[str, Any]) -> Any:
    """A ``MetaGraphDef`` of the JSON meta graph earlier versions of this package wrote (its attrs tagged values of
    :mod:`dtf_notebook.framework.attr_json`; collections of names and of ``to_proto()`` dicts)."""
    from dtf_notebook.protos.graph_pb import QueueRunnerDef, VariableDef

    nodes = [
        {**node, "attr": {k: from_json(v) for k, v in node.get("attr", {}).items()}}
        for node in meta["graph_def"].get("node", [])
    ]
    proto = MetaGraphDef(graph_def=graph_def_proto({"node": nodes, "versions": meta["graph_def"].get("versions")}))
    if meta.get("saver_def"):
        proto.saver_def.CopyFrom(SaverDef(**meta["saver_def"]))
    for key, items in meta.get("collection_def", {}).items():
        collection = proto.collection_def[key]
        for item in items:
            if isinstance(item, str) and key == "unbound_inputs":
                collection.bytes_list.value.append(item.encode("utf-8"))
            elif isinstance(item, str) and get_collection_proto_type(key) is not None:
                # Those files named a queue runner by its queue only: there is nothing to rebuild it from.
                _log.warning("Left out of collection %s: %s is only a name in the JSON meta graph", key, item)
            elif isinstance(item, str):
                collection.node_list.value.append(item)
            elif "variable_name" in item:
                collection.bytes_list.value.append(VariableDef(**item).SerializeToString())
            elif "queue_name" in item:
                runner = {k: v for k, v in item.items() if k != "queue_closed_exception_types"}
                names = item.get("queue_closed_exception_types", [])
                closed = [errors.error_code_from_exception_type(getattr(errors, n)) for n in names]
                runner_def = QueueRunnerDef(**runner, queue_closed_exception_types=closed)
                collection.bytes_list.value.append(runner_def.SerializeToString())
            elif "restore_op_name" in item:
                collection.bytes_list.value.append(SaverDef(**item).SerializeToString())
    return proto


def read_meta_graph_file(filename: str) -> Any:
    """Reads a ``.meta`` file (TF's ``read_meta_graph_file``): a serialized ``MetaGraphDef``, its text format, or
    the JSON meta graph earlier versions of this package wrote.

    Raises:
        OSError: the file does not exist or is not a meta graph (the message names the file).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     _ = tf.constant(1.0, name="c")
        ...     _ = export_meta_graph("memory://doc/meta/read.pbtxt", as_text=True)
        >>> [n.name for n in read_meta_graph_file("memory://doc/meta/read.pbtxt").graph_def.node]
        ['c']
    """
    try:
        data = checkpoint_files.read_bytes(filename)
    except errors.NotFoundError:
        raise OSError(f"File {filename} does not exist.") from None
    if data.lstrip()[:1] == b"{":
        try:
            meta = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise OSError(f"Cannot parse file {filename}: {e}") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("graph_def"), dict):
            raise OSError(f"Cannot parse file {filename}: it holds no graph_def")
        return _meta_graph_from_json(meta)
    proto = MetaGraphDef()
    try:
        proto.ParseFromString(data)
        return proto
    except message.DecodeError:
        pass
    try:
        # TF's text holds fields whose schemas are not written here (op arguments' full types): skipped.
        text_format.Merge(data.decode("utf-8"), proto, allow_unknown_field=True)
    except (UnicodeDecodeError, text_format.ParseError) as e:
        raise OSError(f"Cannot parse file {filename}: {e}.") from None
    return proto


def _as_meta_graph_def(meta_graph_or_file: Any) -> Any:
    if isinstance(meta_graph_or_file, str | os.PathLike):
        return read_meta_graph_file(os.fspath(meta_graph_or_file))
    if isinstance(meta_graph_or_file, dict):
        return _meta_graph_from_json(meta_graph_or_file)
    if not hasattr(meta_graph_or_file, "SerializeToString"):
        raise TypeError(f"import_meta_graph takes a MetaGraphDef or a file name, got {type(meta_graph_or_file)}")
    return MetaGraphDef.FromString(meta_graph_or_file.SerializeToString())


def import_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Any:
    """Recreates a saved graph in the default graph; returns a ``Saver`` for its variables (TF1's API).

    The graph's nodes are imported (under ``import_scope/`` when given), its collections filled again (variables
    rebuilt as ``Variable`` objects, queue runners as ``QueueRunner`` objects, other entries as the imported
    tensors and operations or the stored values). The Saver reuses the graph's save and restore ops when they are
    this package's, is rebuilt under the same names when they are TF's (see the module's docstring), and is a new
    ``Saver()`` when the meta graph names no saver but has variables.

    Args:
        meta_graph_or_file: A ``.meta`` file (local path or fsspec URL; binary, text format, or this package's
            earlier JSON) or a ``MetaGraphDef`` (ours or TF's).
        clear_devices: Drop the ops' device requests, so the graph can be placed anew (e.g. on another cluster).
        import_scope: Name scope prefixed to every imported name.
        **kwargs: TF1's other options (``input_map``, ``return_elements``, ... are not supported and are refused).

    Returns:
        The Saver, or None when the graph has no variables and no saver.

    Raises:
        OSError: the file does not exist or cannot be parsed.
        InvalidArgumentError: a node cannot be imported (the message names it).
        ValueError: an option that is not supported was given.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable([1.0, 2.0], name="w")
        ...     tf.add_to_collection("outputs", w * 2.0)
        ...     meta = export_meta_graph()
        >>> with tf.Graph().as_default() as g:
        ...     saver = import_meta_graph(meta)
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(tf.get_collection("outputs")[0]))
        [2. 4.]
    """
    unsupported = sorted(k for k, v in kwargs.items() if v is not None and k != "strip_default_attrs")
    if unsupported:
        raise ValueError(f"import_meta_graph does not support {', '.join(unsupported)}")
    meta = _as_meta_graph_def(meta_graph_or_file)
    graph = get_default_graph()
    scopes = foreign_saver_scopes(meta.graph_def)
    saved = {scope: saved_tensors(meta.graph_def, scope) for scope in scopes}
    strip_scopes(meta.graph_def, scopes)
    savers = meta.collection_def.pop(GraphKeys.SAVERS, None)
    import_scoped_meta_graph(meta, graph, import_scope, clear_devices)
    rebuilt: dict[str, Any] = {}

    def saver_of(saver_def: Any) -> Any:
        from dtf_notebook.train.saver import Saver

        scope = saver_scope(saver_def)
        if scope not in saved:
            with graph.as_default():
                return Saver(saver_def=saver_def, name=import_scope or None)
        if scope not in rebuilt:
            rebuilt[scope] = rebuild_saver(saved[scope], saver_def, graph, scope, import_scope)
        return rebuilt[scope]

    for value in savers.bytes_list.value if savers is not None else ():
        graph.add_to_collection(GraphKeys.SAVERS, saver_of(SaverDef.FromString(value)))
    if meta.HasField("saver_def") and meta.saver_def.restore_op_name:
        return saver_of(meta.saver_def)
    if graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        from dtf_notebook.train.saver import Saver

        with graph.as_default():
            return Saver()
    return None


def export_meta_graph(
    filename: str | None = None,
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: Any = None,
    collection_list: Sequence[str] | None = None,
    as_text: bool = False,
    graph: Graph | None = None,
    export_scope: str | None = None,
    clear_devices: bool = False,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
    save_debug_info: bool = False,
    **kwargs: Any,
) -> Any:
    """The ``MetaGraphDef`` of ``graph`` (default graph), written to ``filename`` when given (TF1's
    ``tf.train.export_meta_graph``, its parameters in TF's order).

    Args:
        filename: Where to write it (a local path or fsspec URL), atomically.
        meta_info_def: A ``MetaInfoDef`` (or a dict of its fields: ``tags``, ``meta_graph_version``, ...); its op
            list and versions are filled in here.
        graph_def: A ``GraphDef`` (ours, TF's, or ``Graph.as_graph_def_dict()``'s dict), written instead of
            ``graph``'s.
        saver_def: The saver's description to include: a ``SaverDef`` (ours or TF's) or its dict form.
        collection_list: Collection keys to include (default: all).
        as_text: Write protobuf text format instead of the serialized message.
        graph: The graph (default: the default graph).
        export_scope: Only the nodes whose names start with it, named relative to it (TF's plain prefix test);
            inputs from outside are recorded as ``$unbound_inputs_<name>`` in the ``unbound_inputs`` collection.
        clear_devices: Leave out the ops' requested devices.
        clear_extraneous_savers: Leave out the nodes of savers other than ``saver_def``'s; the ``savers``
            collection, where present, holds ``saver_def`` only.
        strip_default_attrs: Leave out node attrs equal to the default TF's signature of their op gives them.
        save_debug_info: Also write, beside ``filename`` as ``<name>.debug``, TF's ``GraphDebugInfo``: the Python
            stack where each node was created.
        **kwargs: TF's ``kwargs`` are ignored, as TF's are.

    Returns:
        The ``MetaGraphDef`` message.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.protos.graph_pb import VariableDef
        >>> with tf.Graph().as_default() as g:
        ...     v = tf.Variable(1.0, name="v")
        >>> meta = export_meta_graph(graph=g, collection_list=["variables"])
        >>> VariableDef.FromString(meta.collection_def["variables"].bytes_list.value[0]).variable_name
        'v:0'
        >>> [op.name for op in meta.meta_info_def.stripped_op_list.op]
        ['Assign', 'Const', 'Identity', 'VariableV2']
    """
    del kwargs
    graph = graph if graph is not None else get_default_graph()
    if graph_def is None:
        written = graph.as_graph_def(add_shapes=True)
    elif isinstance(graph_def, dict):
        written = graph_def_proto(graph_def)
    else:
        written = GraphDef.FromString(graph_def.SerializeToString())
    write_tf_save_ops(written, graph)
    meta = create_meta_graph_def(
        meta_info_def=meta_info_def,
        graph_def=written,
        saver_def=saver_def,
        collection_list=collection_list,
        graph=graph,
        export_scope=export_scope,
        clear_devices=clear_devices,
        clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs,
    )
    if filename:
        _write_message(filename, meta, as_text)
        if save_debug_info:
            _write_debug_info(filename, graph, meta, export_scope, as_text)
    return meta


def _write_message(filename: str, proto: Any, as_text: bool) -> None:
    data = text_format.MessageToString(proto).encode("utf-8") if as_text else proto.SerializeToString()
    checkpoint_files.write_atomic(filename, data)


def _write_debug_info(filename: str, graph: Graph, meta: Any, export_scope: str | None, as_text: bool) -> None:
    """TF's ``GraphDebugInfo`` of the exported nodes, in ``<filename without extension>.debug``."""
    stem, dot, ext = filename.rpartition(".")
    debug_file = f"{stem}.debug" if dot and "/" not in ext else f"{filename}.debug"
    scope = (export_scope or "").rstrip("/")
    ops = {op.name: op for op in graph.get_operations()}
    info = GraphDebugInfo()
    files: dict[str, int] = {}
    frames: dict[tuple[int, int, str], int] = {}
    for node in meta.graph_def.node:
        op = ops.get(f"{scope}/{node.name}" if scope else node.name) or ops.get(node.name)
        trace_id = len(info.traces_by_id)
        trace = info.traces_by_id[trace_id]
        for frame in op.traceback if op is not None else []:
            file_index = files.setdefault(frame.filename, len(files))
            key = (file_index, frame.lineno or 0, frame.name)
            if key not in frames:
                frames[key] = len(frames)
                info.frames_by_id[frames[key]].CopyFrom(
                    GraphDebugInfo.FileLineCol(file_index=key[0], line=key[1], func=key[2])
                )
            trace.frame_id.append(frames[key])
        info.name_to_trace_id[f"{node.name}@"] = trace_id
    info.files.extend(files)
    _write_message(debug_file, info, as_text)


def _saver_to_proto(saver: Any, export_scope: str | None = None) -> Any:
    return saver.to_proto(export_scope=export_scope)


def _saver_from_proto(saver_def: Any, import_scope: str | None = None) -> Any:
    from dtf_notebook.train.saver import Saver

    return Saver.from_proto(saver_def, import_scope=import_scope)


register_proto_function(GraphKeys.SAVERS, SaverDef, _saver_to_proto, _saver_from_proto)
