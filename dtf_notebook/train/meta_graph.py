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
elements (tensors, operations, variables).

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

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.runtime import checkpoint_files

__all__ = ["export_meta_graph"]


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


def _graph_def_json(graph: Graph, clear_devices: bool) -> dict[str, Any]:
    nodes = []
    for node in graph.as_graph_def()["node"]:
        where = f"attr of node {node['name']!r}"
        attrs = {k: _json_value(v, f"{where} {k!r}") for k, v in node["attr"].items()}
        nodes.append({**node, "device": "" if clear_devices else node["device"], "attr": attrs})
    return {"node": nodes, "versions": {"producer": 1}}


def _collections(graph: Graph, keys: Sequence[str] | None) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key in sorted(graph.get_all_collection_keys()) if keys is None else keys:
        names = [item.name for item in graph.get_collection(key) if isinstance(getattr(item, "name", None), str)]
        if names:
            out[str(key)] = names
    return out


def export_meta_graph(
    filename: str | None = None,
    graph: Graph | None = None,
    saver_def: dict[str, Any] | None = None,
    collection_list: Sequence[str] | None = None,
    clear_devices: bool = False,
) -> dict[str, Any]:
    """The meta graph of ``graph`` (default graph) as plain data, written to ``filename`` when given.

    Args:
        filename: Where to write the JSON (a local path or fsspec URL), atomically.
        graph: The graph (default: the default graph).
        saver_def: The saver's description to include.
        collection_list: Collection keys to include (default: all).
        clear_devices: Leave out the ops' requested devices.

    Returns:
        The meta graph dict.

    Raises:
        TypeError: an attr holds a value that cannot be stored (the message names the node).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     v = tf.Variable(1.0, name="v")
        >>> meta = export_meta_graph(graph=g, collection_list=["variables"])
        >>> meta["collection_def"], meta["meta_info_def"]["stripped_op_list"]
        ({'variables': ['v:0']}, ['Assign', 'Const', 'Identity', 'VariableV2'])
    """
    graph = graph or get_default_graph()
    graph_def = _graph_def_json(graph, clear_devices)
    meta = {
        "meta_info_def": {"stripped_op_list": sorted({n["op"] for n in graph_def["node"]}), "format": "json"},
        "graph_def": graph_def,
        "saver_def": dict(saver_def or {}),
        "collection_def": _collections(graph, collection_list),
    }
    if filename:
        checkpoint_files.write_atomic(filename, json.dumps(meta, separators=(",", ":")).encode("utf-8"))
    return meta
