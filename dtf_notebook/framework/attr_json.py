"""Attr values as JSON: what a ``NodeDef`` stores for an attr that TF's ``AttrValue`` cannot hold (a tf.data
pipeline's nested description, say), and what the JSON ``.meta`` files this package wrote before used.

JSON keeps ``None``, booleans, numbers, strings and lists as they are; every other value is a tagged one-key object:
``{"dtype": "float32"}``, ``{"shape": [2, null]}``, ``{"tuple": [...]}``, ``{"bytes": base64}``, ``{"dict": {...}}``
and ``{"tensor": {"dtype", "shape", "data": base64 of the raw little-endian buffer}}`` (string tensors:
``"values"``, a list of base64 strings).

Example:
    >>> import numpy as np
    >>> from dtf_notebook.framework import dtypes
    >>> value = {"types": [dtypes.float32], "shape": (2, None), "init": np.arange(3)}
    >>> back = from_json(to_json(value, "doc"))
    >>> back["types"], back["shape"], back["init"].tolist()
    ([tf.float32], (2, None), [0, 1, 2])
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape

__all__ = ["from_json", "to_json"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def to_json(value: Any, where: str) -> Any:
    """``value`` as JSON data (nested Python lists and dicts of JSON scalars).

    Raises:
        TypeError: ``value`` holds something with no JSON form here (the message starts with ``where``).

    Example:
        >>> to_json((1, b"a"), "attr 'x'")
        {'tuple': [1, {'bytes': 'YQ=='}]}
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes):
        return {"bytes": _b64(value)}
    if isinstance(value, list):
        return [to_json(v, where) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [to_json(v, where) for v in value]}
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
        return {"dict": {str(k): to_json(v, where) for k, v in value.items()}}
    raise TypeError(f"{where} holds a {type(value).__name__}, which has no stored form")


def from_json(value: Any) -> Any:
    """The value :func:`to_json` encoded.

    Raises:
        ValueError: a tagged object is malformed or has an unknown tag.

    Example:
        >>> from_json({"shape": [2, None]})
        TensorShape([2, None])
    """
    if isinstance(value, list):
        return [from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) != 1:
        raise ValueError(f"an attr value must be a tagged one-key object, got keys {sorted(value)}")
    ((tag, body),) = value.items()
    if tag == "bytes":
        return base64.b64decode(body)
    if tag == "tuple":
        return tuple(from_json(v) for v in body)
    if tag == "dtype":
        return dtypes.as_dtype(body)
    if tag == "shape":
        return TensorShape(body)
    if tag == "dict":
        return {k: from_json(v) for k, v in body.items()}
    if tag == "tensor":
        dtype = dtypes.as_dtype(body["dtype"])
        if dtype.is_string:
            return np.array([base64.b64decode(v) for v in body["values"]], dtype=object).reshape(body["shape"])
        raw = np.frombuffer(base64.b64decode(body["data"]), dtype=dtype.np_dtype.newbyteorder("<"))
        return raw.astype(dtype.np_dtype).reshape(body["shape"])
    raise ValueError(f"unknown attr value tag {tag!r}")
