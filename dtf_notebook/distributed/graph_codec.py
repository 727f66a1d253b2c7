"""Graph defs as msgpack-safe plain data plus a tensor list: the graph half of the wire format.

``Graph.as_graph_def_dict()`` gives node dicts whose attrs hold Python values msgpack cannot keep
apart (tuples vs lists) or cannot hold at all (``DType``, numpy arrays). :func:`encode_graph_def`
replaces each such value by a one-key tagged map, and moves arrays into a tensor list so big
constants travel as raw frames, not inside the header:

=========================  ======================================================
value                      encoded as
=========================  ======================================================
None, bool, int, float,    itself
str, bytes, list
tuple                      ``{"__tuple__": [...]}`` (shapes come back as tuples)
DType                      ``{"__dtype__": "float32"}``
TensorShape                ``{"__shape__": [dims] or None}``
numpy array                ``{"__tensor__": index}`` into the tensor list
numpy scalar               ``{"__scalar__": index}`` (a 0-d array in the tensor list)
dict (str keys)            ``{"__dict__": {key: value, ...}}``
=========================  ======================================================

Every map in the encoded attrs is a tag, so decoding is unambiguous and rejects anything else.

Example:
    >>> import numpy as np
    >>> from dtf_notebook.framework import dtypes
    >>> gd = {"node": [{"name": "c", "op": "Const", "input": [], "device": "",
    ...                 "attr": {"value": np.ones(2, np.float32), "dtype": dtypes.float32}}]}
    >>> plain, tensors = encode_graph_def(gd)
    >>> plain["node"][0]["attr"]
    {'value': {'__tensor__': 0}, 'dtype': {'__dtype__': 'float32'}}
    >>> decode_graph_def(plain, tensors)["node"][0]["attr"]["dtype"]
    tf.float32
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.distributed.tensor_codec import WireError
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape

_NODE_KEYS = ("name", "op", "input", "device", "attr")
_MAX_DEPTH = 64  # attrs are shallow; the bound keeps a forged graph from exhausting the stack


def encode_graph_def(graph_def: dict[str, Any], tensors: list[Any] | None = None) -> tuple[dict[str, Any], list[Any]]:
    """Encodes a graph def into msgpack-safe plain data and the list of arrays it refers to.

    Args:
        graph_def: ``{"node": [node_def, ...], ...}`` as built by ``Graph.as_graph_def_dict()``.
        tensors: An existing list to append the arrays to (indices count from its start), so a
            message can carry a graph's constants next to its other tensors.

    Returns:
        ``(plain, tensors)``; send ``plain`` in the header and ``tensors`` as message tensors.

    Raises:
        WireError: the graph def is malformed or an attr holds a value that cannot travel.

    Example:
        >>> plain, tensors = encode_graph_def({"node": [{"name": "n", "op": "NoOp"}], "versions": {"producer": 1}})
        >>> plain["node"][0], plain["versions"], tensors
        ({'name': 'n', 'op': 'NoOp', 'input': [], 'device': '', 'attr': {}}, {'__dict__': {'producer': 1}}, [])
    """
    tensors = [] if tensors is None else tensors
    if not isinstance(graph_def, dict) or not isinstance(graph_def.get("node"), list):
        raise WireError(None, None, "A graph def must be a dict with a 'node' list")
    plain: dict[str, Any] = {"node": [_encode_node(node, tensors) for node in graph_def["node"]]}
    for key, value in graph_def.items():
        if key != "node":
            plain[_str_key(key, "graph def")] = _encode_value(value, tensors, f"graph def key {key!r}", 0)
    return plain, tensors


def _encode_node(node: Any, tensors: list[Any]) -> dict[str, Any]:
    if not isinstance(node, dict) or not isinstance(node.get("name"), str):
        raise WireError(None, None, f"A node def must be a dict with a string 'name', got {node!r:.80}")
    name = node["name"]
    unknown = set(node) - set(_NODE_KEYS)
    if unknown:
        raise WireError(None, None, f"Node '{name}' has unknown keys {sorted(map(str, unknown))}")
    op, inputs, device = node.get("op"), node.get("input", []), node.get("device", "")
    attrs = node.get("attr", {})
    if not isinstance(op, str) or not isinstance(device, str):
        raise WireError(None, None, f"Node '{name}' needs string 'op' and 'device'")
    if not isinstance(inputs, list | tuple) or not all(isinstance(i, str) for i in inputs):
        raise WireError(None, None, f"Node '{name}' 'input' must be a list of strings")
    if not isinstance(attrs, dict):
        raise WireError(None, None, f"Node '{name}' 'attr' must be a dict")
    encoded = {
        _str_key(key, f"node '{name}'"): _encode_value(value, tensors, f"attr '{key}' of node '{name}'", 0)
        for key, value in attrs.items()
    }
    return {"name": name, "op": op, "input": list(inputs), "device": device, "attr": encoded}


def _str_key(key: Any, where: str) -> str:
    if not isinstance(key, str):
        raise WireError(None, None, f"Keys of {where} must be strings, got {key!r}")
    return key


def _encode_value(value: Any, tensors: list[Any], where: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise WireError(None, None, f"Value of {where} is nested deeper than {_MAX_DEPTH}")
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes):
        if kind is int and not -(2**63) <= value < 2**64:
            raise WireError(None, None, f"Integer {value} in {where} does not fit in 64 bits")
        return value
    if kind is list or kind is tuple:
        items = [_encode_value(v, tensors, where, depth + 1) for v in value]
        return items if kind is list else {"__tuple__": items}
    if isinstance(value, dtypes.DType):
        return {"__dtype__": value.name}
    if isinstance(value, TensorShape):
        return {"__shape__": value.as_list() if value.ndims is not None else None}
    if isinstance(value, np.ndarray | np.generic):
        tensors.append(np.asarray(value) if isinstance(value, np.generic) else value)
        return {"__tensor__" if isinstance(value, np.ndarray) else "__scalar__": len(tensors) - 1}
    if kind is dict:
        return {"__dict__": {_str_key(k, where): _encode_value(v, tensors, where, depth + 1) for k, v in value.items()}}
    raise WireError(None, None, f"Value of {where} has type {kind.__name__}, which cannot travel")


def decode_graph_def(plain: Any, tensors: Sequence[Any]) -> dict[str, Any]:
    """Rebuilds a graph def from :func:`encode_graph_def`'s plain data and the decoded arrays.

    Raises:
        WireError: the plain data is malformed, a tag is unknown, or a tensor index is out of range.

    Example:
        >>> plain = {"node": [{"name": "s", "op": "Placeholder", "input": [], "device": "",
        ...                    "attr": {"shape": {"__tuple__": [None, 3]}}}]}
        >>> decode_graph_def(plain, [])["node"][0]["attr"]["shape"]
        (None, 3)
    """
    if not isinstance(plain, dict) or not isinstance(plain.get("node"), list):
        raise WireError(None, None, "An encoded graph def must be a map with a 'node' list")
    graph_def: dict[str, Any] = {"node": [_decode_node(node, tensors) for node in plain["node"]]}
    for key, value in plain.items():
        if key != "node":
            graph_def[_str_key(key, "graph def")] = _decode_value(value, tensors, f"graph def key {key!r}", 0)
    return graph_def


def _decode_node(node: Any, tensors: Sequence[Any]) -> dict[str, Any]:
    if not isinstance(node, dict) or set(node) != set(_NODE_KEYS) or not isinstance(node["name"], str):
        raise WireError(None, None, f"An encoded node must be a map with keys {list(_NODE_KEYS)}, got {node!r:.80}")
    name, inputs, attrs = node["name"], node["input"], node["attr"]
    if not isinstance(node["op"], str) or not isinstance(node["device"], str):
        raise WireError(None, None, f"Node '{name}' needs string 'op' and 'device'")
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise WireError(None, None, f"Node '{name}' 'input' must be a list of strings")
    if not isinstance(attrs, dict):
        raise WireError(None, None, f"Node '{name}' 'attr' must be a map")
    decoded = {
        _str_key(key, f"node '{name}'"): _decode_value(value, tensors, f"attr '{key}' of node '{name}'", 0)
        for key, value in attrs.items()
    }
    return {"name": name, "op": node["op"], "input": list(inputs), "device": node["device"], "attr": decoded}


def _decode_value(value: Any, tensors: Sequence[Any], where: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise WireError(None, None, f"Value of {where} is nested deeper than {_MAX_DEPTH}")
    kind = type(value)
    if value is None or kind in (bool, int, float, str, bytes):
        return value
    if kind is list:
        return [_decode_value(v, tensors, where, depth + 1) for v in value]
    if kind is not dict or len(value) != 1:
        raise WireError(None, None, f"Value of {where} is not plain data or a one-key tag: {value!r:.80}")
    ((tag, body),) = value.items()
    if tag == "__tuple__" and type(body) is list:
        return tuple(_decode_value(v, tensors, where, depth + 1) for v in body)
    if tag == "__dtype__" and type(body) is str:
        try:
            return dtypes.as_dtype(body)
        except TypeError:
            raise WireError(None, None, f"Unknown dtype {body!r} in {where}") from None
    if tag == "__shape__" and (body is None or type(body) is list):
        if body is not None and not all(d is None or (type(d) is int and d >= 0) for d in body):
            raise WireError(None, None, f"Bad TensorShape dims {body!r:.80} in {where}")
        return TensorShape(body)
    if tag in ("__tensor__", "__scalar__") and type(body) is int:
        if not 0 <= body < len(tensors):
            raise WireError(None, None, f"Tensor index {body} in {where} is out of range (have {len(tensors)})")
        array = tensors[body]
        if tag == "__tensor__":
            return array
        if not isinstance(array, np.ndarray) or array.ndim != 0:
            raise WireError(None, None, f"Scalar in {where} refers to a tensor that is not 0-d")
        return array[()]
    if tag == "__dict__" and type(body) is dict:
        return {_str_key(k, where): _decode_value(v, tensors, where, depth + 1) for k, v in body.items()}
    raise WireError(None, None, f"Unknown or malformed tag {tag!r} in {where}")
