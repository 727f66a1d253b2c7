"""A node's attrs as TF's ``NodeDef`` holds them (``AttrValue`` messages), and back.

Writing (:func:`node_attrs`) follows TF's signature of the op type (:mod:`dtf_notebook.framework.tf_op_defs`):

* each attr TF declares is encoded as its declared type (``type``, ``shape``, ``tensor``, ``list(int)``, ...);
* the type, number and type-list attrs of the op's arguments (``T``, ``N``, ``Tidx``, ``Tcomponents``, ...) come
  from the node's input and output dtypes when the node does not hold them;
* TF's declared defaults fill the attrs the node leaves out, as TF's own ``as_graph_def()`` writes them;
* an attr TF's signature does not have is written as ``_dtf_<name>`` (TF keeps attrs whose names start with ``_``
  and checks no more of them), and a value no ``AttrValue`` can hold (a tf.data pipeline's description) as the
  JSON of :mod:`dtf_notebook.framework.attr_json` in ``_dtf_json_<name>``. Op types TF does not have keep their
  attr names.

Reading (:func:`python_value`, :func:`node_attr_dict`) gives this package's forms back: dtypes, shape tuples (None
for an unknown rank), numpy arrays for tensors, ``str`` for UTF-8 strings, lists; ``_dtf_`` names lose their
prefix.

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> attrs = node_attrs("MatMul", {"transpose_a": False}, [dtypes.float32] * 2, [dtypes.float32])
    >>> sorted(attrs), attrs["T"].type
    (['T', 'grad_a', 'grad_b', 'transpose_a', 'transpose_b'], 1)
    >>> node_attr_dict(node_attrs("Placeholder", {"dtype": dtypes.int64, "shape": (None, 3), "extra": 1}))
    {'dtype': tf.int64, 'shape': (None, 3), 'extra': 1}
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.attr_json import from_json, to_json
from dtf_notebook.framework.tensor_proto import make_ndarray, make_tensor_proto, shape_proto
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.framework.tf_op_defs import tf_op_def
from dtf_notebook.protos.graph_pb import AttrValue

__all__ = ["PROJECT_ATTR_PREFIX", "JSON_ATTR_PREFIX", "attr_value", "node_attr_dict", "node_attrs", "python_value"]

#: The name prefix of an attr TF's signature of the op type does not have.
PROJECT_ATTR_PREFIX = "_dtf_"
#: The name prefix of an attr whose value is stored as JSON (no ``AttrValue`` kind holds it).
JSON_ATTR_PREFIX = "_dtf_json_"
_LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")


def _type_enum(value: Any) -> int:
    return dtypes.as_dtype(value).as_datatype_enum


def _shape(value: Any) -> Any:
    if value is None:
        return shape_proto(None)
    if isinstance(value, TensorShape):
        return shape_proto(value.as_list() if value.ndims is not None else None)
    if isinstance(value, list | tuple) and all(d is None or isinstance(d, int | np.integer) for d in value):
        return shape_proto(value)
    raise TypeError(f"{type(value).__name__} is not a shape")


def _scalar(kind: str, value: Any) -> Any:
    """``value`` as the Python value of AttrValue field ``kind`` (raises TypeError when it is not one)."""
    if kind == "s":
        if isinstance(value, str):
            return value.encode("utf-8")
        if isinstance(value, bytes):
            return value
    elif kind == "i":
        if isinstance(value, int | np.integer):
            return int(value)
    elif kind == "f":
        if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
            return float(value)
    elif kind == "b":
        if isinstance(value, bool | np.bool_) or (isinstance(value, int) and value in (0, 1)):
            return bool(value)
    elif kind == "type":
        if isinstance(value, dtypes.DType | str | np.dtype | type):
            return _type_enum(value)
    elif kind == "shape":
        return _shape(value)
    elif kind == "tensor":
        return make_tensor_proto(value)
    raise TypeError(f"{type(value).__name__} is not a {kind!r} attr value")


_KINDS = {"string": "s", "int": "i", "float": "f", "bool": "b", "type": "type", "shape": "shape", "tensor": "tensor"}


def _declared(value: Any, attr_type: str) -> AttrValue:
    """``value`` as TF's declared ``attr_type`` (``"int"``, ``"list(shape)"``, ...); raises TypeError otherwise."""
    if attr_type.startswith("list(") and attr_type[5:-1] in _KINDS:
        if not isinstance(value, list | tuple):
            raise TypeError(f"{type(value).__name__} is not a list")
        kind = _KINDS[attr_type[5:-1]]
        items = AttrValue.ListValue()
        getattr(items, kind).extend(_scalar(kind, v) for v in value)
        return AttrValue(list=items)
    if attr_type not in _KINDS:
        raise TypeError(f"attrs of type {attr_type!r} are not written from this package's values")
    kind = _KINDS[attr_type]
    converted = _scalar(kind, value)
    return AttrValue(**{kind: converted})


def _is_shape_attr(name: str) -> bool:
    return name == "shape" or name.endswith("_shape") or name in ("shapes", "output_shapes")


def attr_value(name: str, value: Any) -> AttrValue | None:
    """The ``AttrValue`` of an attr whose type no signature declares, guessed from the value; None when it has no
    ``AttrValue`` form.

    Example:
        >>> attr_value("dtype", dtypes.float32).type, attr_value("strides", (1, 2)).list.i[:]
        (1, [1, 2])
        >>> attr_value("pipeline", {"nodes": []}) is None
        True
    """
    if isinstance(value, dtypes.DType):
        return AttrValue(type=value.as_datatype_enum)
    if isinstance(value, TensorShape):
        return AttrValue(shape=_shape(value))
    if isinstance(value, bool | np.bool_):
        return AttrValue(b=bool(value))
    if isinstance(value, int | np.integer):
        return AttrValue(i=int(value))
    if isinstance(value, float | np.floating):
        return AttrValue(f=float(value))
    if isinstance(value, str | bytes):
        return AttrValue(s=_scalar("s", value))
    if isinstance(value, np.ndarray):
        return AttrValue(tensor=make_tensor_proto(value))
    if isinstance(value, list | tuple):
        if _is_shape_attr(name) and all(v is None or isinstance(v, int) for v in value):
            return AttrValue(shape=_shape(value))
        return _guessed_list(value)
    return None


def _guessed_list(values: Sequence[Any]) -> AttrValue | None:
    items = AttrValue.ListValue()
    kinds = set()
    for v in values:
        if isinstance(v, dtypes.DType):
            kinds.add("type")
            items.type.append(v.as_datatype_enum)
        elif isinstance(v, TensorShape):
            kinds.add("shape")
            items.shape.append(_shape(v))
        elif isinstance(v, bool):
            kinds.add("b")
            items.b.append(v)
        elif isinstance(v, int):
            kinds.add("i")
            items.i.append(v)
        elif isinstance(v, float):
            kinds.add("f")
            items.f.append(v)
        elif isinstance(v, str | bytes):
            kinds.add("s")
            items.s.append(_scalar("s", v))
        else:
            return None
    # One kind per list: a mixed list would come back as its first kind only.
    return AttrValue(list=items) if len(kinds) <= 1 else None


def _arg_counts(args: Sequence[Any], total: int, attrs: dict[str, Any], found: dict[str, AttrValue]) -> list | None:
    """How many of the node's inputs (outputs) each of TF's ``args`` takes; None when that cannot be told."""
    counts: list[int | None] = []
    unknown: dict[str, int] = {}
    for arg in args:
        key = arg.number_attr or arg.type_list_attr
        if not key:
            counts.append(1)
        elif arg.number_attr and isinstance(attrs.get(key), int | np.integer):
            counts.append(int(attrs[key]))
        elif arg.number_attr and key in found:
            counts.append(found[key].i)
        elif arg.type_list_attr and isinstance(attrs.get(key), list | tuple):
            counts.append(len(attrs[key]))
        else:
            counts.append(None)
            unknown[key] = unknown.get(key, 0) + 1
    rest = total - sum(c for c in counts if c is not None)
    if not unknown:
        return counts if rest == 0 else None
    if len(unknown) > 1 or rest < 0 or rest % next(iter(unknown.values())):
        return None
    share = rest // next(iter(unknown.values()))
    return [share if c is None else c for c in counts]


def _argument_attrs(op_def: Any, attrs: dict[str, Any], input_dtypes: Sequence[Any], output_dtypes: Sequence[Any]):
    """TF's type, number and type-list attrs of ``op_def``'s arguments, from the node's dtypes."""
    found: dict[str, AttrValue] = {}
    for args, types in ((op_def.input_arg, input_dtypes), (op_def.output_arg, output_dtypes)):
        counts = _arg_counts(args, len(types), attrs, found)
        if counts is None:
            continue
        start = 0
        for arg, count in zip(args, counts):
            group = [_type_enum(t) for t in types[start : start + count]]
            start += count
            if arg.number_attr and arg.number_attr not in found:
                found[arg.number_attr] = AttrValue(i=count)
            if arg.type_attr and group and arg.type_attr not in found:
                found[arg.type_attr] = AttrValue(type=group[0])
            if arg.type_list_attr and arg.type_list_attr not in found:
                found[arg.type_list_attr] = AttrValue(list=AttrValue.ListValue(type=group))
    return found


def _json_attr(name: str, value: Any, op_type: str) -> AttrValue:
    text = json.dumps(to_json(value, f"attr {name!r} of a {op_type} node"), separators=(",", ":"))
    return AttrValue(s=text.encode("utf-8"))


@functools.cache
def _signature(op_type: str) -> tuple[Any, dict[str, Any]]:
    """TF's ``OpDef`` of ``op_type`` (or None) and its attrs by name."""
    op_def = tf_op_def(op_type)
    return op_def, {a.name: a for a in op_def.attr} if op_def is not None else {}


def node_attrs(
    op_type: str,
    attrs: dict[str, Any],
    input_dtypes: Sequence[Any] | None = None,
    output_dtypes: Sequence[Any] | None = None,
) -> dict[str, AttrValue]:
    """A node's attrs as TF's NodeDef of ``op_type`` holds them (see the module's docstring).

    Args:
        op_type: The node's op type.
        attrs: The node's attrs as this package holds them.
        input_dtypes, output_dtypes: The element types of the node's data inputs and outputs; without them, the
            type attrs the node does not hold are left out.

    Returns:
        Attr name -> ``AttrValue``, to copy into a ``NodeDef`` (defaults are the signature's own messages: never
        changed in place).

    Raises:
        TypeError: a value has no stored form at all (the message names the attr and the op type).

    Example:
        >>> sorted(node_attrs("AddN", {}, [dtypes.int32] * 3, [dtypes.int32]).items())[0]
        ('N', i: 3
        )
    """
    op_def, declared = _signature(op_type)
    out: dict[str, AttrValue] = {}
    for name, value in attrs.items():
        if name in declared:
            if value is None and declared[name].type != "shape":
                continue  # unset: TF's default below
            try:
                out[name] = _declared(value, declared[name].type)
                continue
            except (TypeError, ValueError):
                pass  # kept this package's way, under a name TF passes over
        guessed = attr_value(name, value) if value is not None else None
        if guessed is None:
            out[JSON_ATTR_PREFIX + name] = _json_attr(name, value, op_type)
        elif op_def is None or name.startswith("_"):
            out[name] = guessed
        else:
            out[PROJECT_ATTR_PREFIX + name] = guessed
    if op_def is not None:
        if input_dtypes is not None and output_dtypes is not None:
            for name, value in _argument_attrs(op_def, attrs, input_dtypes, output_dtypes).items():
                out.setdefault(name, value)
        for attr in op_def.attr:
            if attr.name not in out and attr.HasField("default_value"):
                out[attr.name] = attr.default_value
    return out


def python_value(value: Any) -> Any:
    """An ``AttrValue`` (ours or TF's) as this package's attr value.

    Raises:
        ValueError: a function attr (``func``) or a placeholder, which this package cannot build.

    Example:
        >>> python_value(AttrValue(list=AttrValue.ListValue(type=[1, 9])))
        [tf.float32, tf.int64]
    """
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "list":
        items = value.list
        for field in _LIST_FIELDS:
            if len(getattr(items, field)):
                return [_python_scalar(field, v) for v in getattr(items, field)]
        return []
    return _python_scalar(kind, getattr(value, kind))


def _python_scalar(kind: str, v: Any) -> Any:
    if kind == "s":
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return bytes(v)
    if kind == "type":
        return dtypes.as_dtype(int(v))
    if kind == "shape":
        return None if v.unknown_rank else tuple(None if d.size < 0 else int(d.size) for d in v.dim)
    if kind == "tensor":
        return make_ndarray(v)
    if kind in ("func", "placeholder"):
        raise ValueError(f"attribute values of kind {kind!r} (functions) are not supported here")
    return {"i": int, "f": float, "b": bool}[kind](v)


def node_attr_dict(attrs: Any) -> dict[str, Any]:
    """A NodeDef's ``attr`` map as this package's attrs: ``_dtf_`` names lose their prefix, JSON values are
    decoded, and ``_output_shapes`` (a record of the static shapes, which are inferred again) is left out.

    Example:
        >>> node_attr_dict({"_dtf_json_spec": AttrValue(s=b'{"tuple":[1]}'), "_output_shapes": AttrValue()})
        {'spec': (1,)}
    """
    out: dict[str, Any] = {}
    for name, value in attrs.items():
        if name == "_output_shapes":
            continue
        if name.startswith(JSON_ATTR_PREFIX):
            out[name[len(JSON_ATTR_PREFIX) :]] = from_json(json.loads(value.s.decode("utf-8")))
        elif name.startswith(PROJECT_ATTR_PREFIX):
            out[name[len(PROJECT_ATTR_PREFIX) :]] = python_value(value)
        else:
            out[name] = python_value(value)
    return out
