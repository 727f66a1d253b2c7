"""The ``.meta`` file a ``Saver`` writes next to a checkpoint: the graph and saver as plain JSON.

TF writes a ``MetaGraphDef`` protocol buffer; here the same content is one JSON object::

    {"meta_info_def": {"stripped_op_list": [op types used], ...},
     "graph_def": {"node": [{"name", "op", "input", "device", "attr"}, ...], "versions": {...}},
     "saver_def": {"filename_tensor_name": "save/Const:0", ...},
     "collection_def": {"variables": ["w:0", ...], ...}}

Attr values that JSON cannot hold are tagged one-key objects: ``{"dtype": "float32"}``,
``{"shape": [2, null]}``, ``{"tuple": [...]}``, ``{"bytes": base64}``, ``{"dict": {...}}`` and
``{"tensor": {"dtype", "shape", "data": base64 of the raw little-endian buffer}}`` (string
tensors: ``"values"``, a list of base64 strings). Collections list the names of their named
elements (tensors, operations); a variable is listed as its ``Variable.to_proto()`` dict, so that
:func:`import_meta_graph` can rebuild it (a bare ``"w:0"`` name is rebuilt from TF's op names).

Example:
    >>> import json
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     c = tf.constant([1.0, 2.0], name="c")
    ...     meta = export_meta_graph("memory://doc/meta/m.meta")
    >>> meta["graph_def"]["node"][0]["attr"]["value"]["tensor"]["shape"]
    [2]
    >>> from dtf_notebook.runtime import checkpoint_files
    >>> json.loads(checkpoint_files.read_bytes("memory://doc/meta/m.meta"))["meta_info_def"]["stripped_op_list"]
    ['Const']
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.variables import Variable
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.train.saver_builder import saver_def_to_dict

__all__ = ["export_meta_graph", "import_meta_graph", "read_meta_graph_file"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _json_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return {"bytes": _b64(value)}
    if isinstance(value, list):
        return [_json_value(v, where) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [_json_value(v, where) for v in value]}
    if isinstance(value, dtypes.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": value.as_list() if value.ndims is not None else None}
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        dtype = dtypes.as_dtype(arr.dtype)
        body: dict[str, Any] = {"dtype": dtype.name, "shape": list(arr.shape)}
        if dtype.is_string:
            body["values"] = [_b64(v.encode() if isinstance(v, str) else bytes(v)) for v in arr.reshape(-1)]
        else:
            body["data"] = _b64(np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<")).tobytes())
        return {"tensor": body}
    if isinstance(value, dict):
        return {"dict": {str(k): _json_value(v, where) for k, v in value.items()}}
    raise TypeError(f"{where} holds a {type(value).__name__}, which a meta graph file cannot store")


def _graph_def_json(graph_def: dict[str, Any], clear_devices: bool) -> dict[str, Any]:
    nodes = []
    for node in graph_def["node"]:
        where = f"attr of node {node['name']!r}"
        attrs = {k: _json_value(v, f"{where} {k!r}") for k, v in node.get("attr", {}).items()}
        nodes.append({**node, "device": "" if clear_devices else node.get("device", ""), "attr": attrs})
    return {"node": nodes, "versions": {"producer": 1}}


def _collections(graph: Graph, keys: Sequence[str] | None) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for key in sorted(graph.get_all_collection_keys()) if keys is None else keys:
        items: list[Any] = []
        for item in graph.get_collection(key):
            if isinstance(item, Variable):
                items.append(item.to_proto())
            elif isinstance(getattr(item, "name", None), str):
                items.append(item.name)
        if items:
            out[str(key)] = items
    return out


_UNBOUND = "$unbound_inputs_"


def _strip_scope(name: str, scope: str) -> str:
    """``name`` without the leading ``scope/`` (also after a control input's ``^``), as TF's ``strip_name_scope``."""
    caret = name.startswith("^")
    bare = name[1:] if caret else name
    if bare.startswith(scope + "/"):
        bare = bare[len(scope) + 1 :]
    return ("^" if caret else "") + bare


def _scoped_export(meta: dict[str, Any], scope: str) -> dict[str, Any]:
    """TF's ``export_scope``: the nodes whose names start with ``scope`` (a plain prefix test, as TF's), names
    relative to it; an input from outside becomes ``$unbound_inputs_<name>``, listed in ``unbound_inputs``."""
    kept = [n for n in meta["graph_def"]["node"] if n["name"].startswith(scope)]
    names = {n["name"] for n in kept}
    unbound: list[str] = []
    nodes = []
    for node in kept:
        inputs = []
        for inp in node.get("input", []):
            caret = inp.startswith("^")
            source = (inp[1:] if caret else inp).split(":")[0]
            if source in names:
                inputs.append(_strip_scope(inp, scope))
            else:
                bound = _UNBOUND + (inp[1:] if caret else inp)
                unbound.append(bound)
                inputs.append(("^" if caret else "") + bound)
        nodes.append({**node, "name": _strip_scope(node["name"], scope), "input": inputs})
    collections: dict[str, list[Any]] = {}
    for key, items in meta["collection_def"].items():
        mine = []
        for item in items:
            if isinstance(item, dict):  # a variable's description: every *_name in the scope
                if item["variable_name"].startswith(scope):
                    mine.append({k: _strip_scope(v, scope) if k.endswith("_name") else v for k, v in item.items()})
            elif item.startswith(scope):
                mine.append(_strip_scope(item, scope))
        if mine:
            collections[key] = mine
    if unbound:
        collections["unbound_inputs"] = sorted(set(unbound))
    saver_def = meta["saver_def"]
    if saver_def:
        saver_def = {k: _strip_scope(v, scope) if k.endswith("_name") else v for k, v in saver_def.items()}
    graph_def = {**meta["graph_def"], "node": nodes}
    return {**meta, "graph_def": graph_def, "saver_def": saver_def, "collection_def": collections}


# TF's SAVE_AND_RESTORE_OPS and this package's own save and restore kernels.
_SAVE_AND_RESTORE_OPS = frozenset(
    "SaveV2 Save SaveSlice LegacySave LegacySaveSlice RestoreV2 Restore RestoreSlice LegacyRestore LegacyRestoreSlice "
    "SaveShard RestoreSlices MergeCheckpointShards".split()
)


def _without_other_savers(meta: dict[str, Any]) -> dict[str, Any]:
    """TF's ``clear_extraneous_savers``: drops the nodes in the name scopes of every saver but the one ``saver_def``
    names (TF's ``_find_extraneous_saver_nodes``); the ``savers`` collection holds that one only."""
    saver_def = meta["saver_def"] or {}
    keep = {
        saver_def[key].lstrip("^").split(":")[0].rpartition("/")[0] + "/"
        for key in ("save_tensor_name", "restore_op_name")
        if saver_def.get(key)
    }
    nodes = meta["graph_def"]["node"]
    saver_nodes = {n["name"] for n in nodes if n["op"] in _SAVE_AND_RESTORE_OPS}
    scopes = {name.rpartition("/")[0] for name in saver_nodes} - saver_nodes
    others = tuple(sorted({f"{scope}/" for scope in scopes if scope} - keep))
    kept = [n for n in nodes if not n["name"].startswith(others)] if others else nodes
    collections = dict(meta["collection_def"])
    if "savers" in collections:
        collections["savers"] = [saver_def] if saver_def else []
    return {**meta, "graph_def": {**meta["graph_def"], "node": kept}, "collection_def": collections}


def _python_value(value: Any) -> Any:
    """The attr value :func:`_json_value` encoded."""
    if isinstance(value, list):
        return [_python_value(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise ValueError(f"an attr value must be a tagged one-key object, got keys {sorted(value)}")
    ((tag, body),) = value.items()
    if tag == "bytes":
        return base64.b64decode(body)
    if tag == "tuple":
        return tuple(_python_value(v) for v in body)
    if tag == "dtype":
        return dtypes.as_dtype(body)
    if tag == "shape":
        return TensorShape(body)
    if tag == "dict":
        return {k: _python_value(v) for k, v in body.items()}
    if tag == "tensor":
        dtype = dtypes.as_dtype(body["dtype"])
        if dtype.is_string:
            return np.array([base64.b64decode(v) for v in body["values"]], dtype=object).reshape(body["shape"])
        raw = np.frombuffer(base64.b64decode(body["data"]), dtype=dtype.np_dtype.newbyteorder("<"))
        return raw.astype(dtype.np_dtype).reshape(body["shape"])
    raise ValueError(f"unknown attr value tag {tag!r}")


def read_meta_graph_file(filename: str) -> dict[str, Any]:
    """Reads a ``.meta`` file written by :func:`export_meta_graph` (a local path or fsspec URL).

    Raises:
        OSError: the file does not exist or is not a meta graph (the message names the file).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     _ = tf.constant(1.0, name="c")
        ...     _ = export_meta_graph("memory://doc/meta/read.meta")
        >>> [n["name"] for n in read_meta_graph_file("memory://doc/meta/read.meta")["graph_def"]["node"]]
        ['c']
    """
    try:
        data = checkpoint_files.read_bytes(filename)
    except errors.NotFoundError:
        raise OSError(f"File {filename} does not exist.") from None
    try:
        meta = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise OSError(f"Cannot parse file {filename}: {e}") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("graph_def"), dict):
        raise OSError(f"Cannot parse file {filename}: it holds no graph_def")
    return meta


def import_meta_graph(
    meta_graph_or_file: str | dict[str, Any],
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Any:
    """Recreates a saved graph in the default graph; returns a ``Saver`` for its variables (TF1's API).

    The graph's ops are imported (under ``import_scope/`` when given), its collections filled again (variables
    rebuilt as ``Variable`` objects, other entries as the imported tensors and operations), and the Saver
    reuses the saved graph's save and restore ops when the file has a saver, else is a new ``Saver()``.

    Args:
        meta_graph_or_file: A ``.meta`` file (local path or fsspec URL) or the dict :func:`export_meta_graph`
            returned.
        clear_devices: Drop the ops' device requests, so the graph can be placed anew (e.g. on another cluster).
        import_scope: Name scope prefixed to every imported name.
        **kwargs: TF1's other options (``input_map`` is not supported and is refused).

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
    from dtf_notebook.framework.graph_import import import_graph_def
    from dtf_notebook.train.saver import Saver, SaverDef

    unsupported = sorted(k for k, v in kwargs.items() if v is not None and k != "strip_default_attrs")
    if unsupported:
        raise ValueError(f"import_meta_graph does not support {', '.join(unsupported)}")
    meta = read_meta_graph_file(meta_graph_or_file) if isinstance(meta_graph_or_file, str) else meta_graph_or_file
    scope = (import_scope or "").rstrip("/")
    nodes = []
    for node in meta["graph_def"].get("node", []):
        attrs = {k: _python_value(v) for k, v in node.get("attr", {}).items()}
        nodes.append({**node, "device": "" if clear_devices else node.get("device", ""), "attr": attrs})
    graph = get_default_graph()
    import_graph_def({"node": nodes, "versions": meta["graph_def"].get("versions", {})}, graph, name_prefix=scope)

    def scoped(name: str) -> str:
        return f"{scope}/{name}" if scope else name

    variables: dict[str, Variable] = {}
    for key, items in meta.get("collection_def", {}).items():
        for item in items:
            if isinstance(item, dict):
                proto = {k: scoped(v) if k.endswith("_name") else v for k, v in item.items()}
            elif _is_variable_name(graph, scoped(item)):
                proto = _variable_def_by_convention(graph, scoped(item))
            else:
                graph.add_to_collection(key, graph.as_graph_element(scoped(item)))
                continue
            name = proto["variable_name"]
            if name not in variables:
                variables[name] = Variable(variable_def=proto)
            graph.add_to_collection(key, variables[name])
    saver_def = meta.get("saver_def") or {}
    if saver_def.get("save_tensor_name") and saver_def.get("restore_op_name"):
        return Saver(saver_def=SaverDef(**saver_def), name=scope or None)
    if variables:
        return Saver()
    return None


def _is_variable_name(graph: Graph, name: str) -> bool:
    op_name = name.rsplit(":", 1)[0]
    try:
        return graph.get_operation_by_name(op_name).type in ("VariableV2", "Variable")
    except (KeyError, ValueError):
        return False


def _variable_def_by_convention(graph: Graph, name: str) -> dict[str, Any]:
    """A variable listed by name only: its initializer and snapshot by TF's op names (``w/Assign``, ``w/read``)."""
    op_name = name.rsplit(":", 1)[0]
    names = {op.name for op in graph.get_operations()}
    if f"{op_name}/Assign" not in names:
        raise ValueError(f"Variable {name} has no initializer op {op_name}/Assign in the imported graph")
    snapshot = f"{op_name}/read:0" if f"{op_name}/read" in names else f"{op_name}:0"
    return {"variable_name": f"{op_name}:0", "initializer_name": f"{op_name}/Assign", "snapshot_name": snapshot}


def export_meta_graph(
    filename: str | None = None,
    meta_info_def: dict[str, Any] | None = None,
    graph_def: dict[str, Any] | None = None,
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
) -> dict[str, Any]:
    """The meta graph of ``graph`` (default graph) as plain data, written to ``filename`` when given (TF1's
    ``tf.train.export_meta_graph``, its parameters in TF's order).

    Args:
        filename: Where to write the JSON (a local path or fsspec URL), atomically.
        meta_info_def: Entries for ``meta_info_def`` (``tags``, ``meta_graph_version``, ...), beside the
            ``stripped_op_list`` computed here.
        graph_def: A graph as ``Graph.as_graph_def()`` gives it, written instead of ``graph``'s.
        saver_def: The saver's description to include: a ``SaverDef`` (ours or TF's) or its dict form.
        collection_list: Collection keys to include (default: all).
        as_text: TF's switch between a binary and a text proto; the JSON file is text either way.
        graph: The graph (default: the default graph).
        export_scope: Only the nodes whose names start with it, named relative to it (TF's plain prefix test);
            inputs from outside are recorded as ``$unbound_inputs_<name>`` in the ``unbound_inputs`` collection.
        clear_devices: Leave out the ops' requested devices.
        clear_extraneous_savers: Leave out the nodes of savers other than ``saver_def``'s; the ``savers``
            collection, where present, holds ``saver_def`` only.
        strip_default_attrs: TF drops attrs equal to their op's registered default; attrs here are stored as the
            op was built with them (no registry of defaults), so the file is the same either way.
        save_debug_info: Also write, beside ``filename`` with ``_debug`` before its extension, the Python stack
            where each node was created (TF's GraphDebugInfo, as JSON).
        **kwargs: TF's ``kwargs`` are ignored, as TF's are.

    Returns:
        The meta graph dict.

    Raises:
        TypeError: an attr holds a value that cannot be stored (the message names the node).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     v = tf.Variable(1.0, name="v")
        >>> meta = export_meta_graph(graph=g, collection_list=["variables"])
        >>> meta["collection_def"]["variables"][0]["variable_name"], meta["meta_info_def"]["stripped_op_list"]
        ('v:0', ['Assign', 'Const', 'Identity', 'VariableV2'])
    """
    graph = graph or get_default_graph()
    meta = {
        "meta_info_def": {},
        "graph_def": _graph_def_json(graph_def or graph.as_graph_def(), clear_devices),
        "saver_def": saver_def_to_dict(saver_def) if hasattr(saver_def, "DESCRIPTOR") else dict(saver_def or {}),
        "collection_def": _collections(graph, collection_list),
    }
    if export_scope:
        meta = _scoped_export(meta, export_scope.rstrip("/"))
    if clear_extraneous_savers:
        meta = _without_other_savers(meta)
    meta["meta_info_def"] = {
        **dict(meta_info_def or {}),
        "stripped_op_list": sorted({n["op"] for n in meta["graph_def"]["node"]}),
        "format": "json",
    }
    if filename:
        checkpoint_files.write_atomic(filename, json.dumps(meta, separators=(",", ":")).encode("utf-8"))
        if save_debug_info:
            _write_debug_info(filename, graph, meta, export_scope)
    return meta


def _write_debug_info(filename: str, graph: Graph, meta: dict[str, Any], export_scope: str | None) -> None:
    stem, dot, ext = filename.rpartition(".")
    debug_file = f"{stem}_debug.{ext}" if dot and "/" not in ext else f"{filename}_debug"
    ops = {op.name: op for op in graph.get_operations()}
    traces = {}
    for node in meta["graph_def"]["node"]:
        op = ops.get(f"{export_scope.rstrip('/')}/{node['name']}" if export_scope else node["name"])
        op = op or ops.get(node["name"])  # a node whose name did not start with the scope's ``/``
        frames = op.traceback if op is not None else []
        traces[node["name"]] = [[f.filename, f.lineno, f.name] for f in frames]
    checkpoint_files.write_atomic(debug_file, json.dumps({"traces": traces}).encode("utf-8"))
