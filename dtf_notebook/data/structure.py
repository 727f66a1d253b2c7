"""The element structure of a dataset: nested tuples and dicts of tensors, with their dtypes and static shapes.

``tf.data`` nests differently from ``tf.nest``: a Python *list* is one value (it becomes one tensor), while tuples,
namedtuples and dicts are structure. An element travels through the runtime as a flat tuple of component values,
in :func:`flatten` order (dicts by sorted key, as TF); the structure is rebuilt only on the graph side.

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> spec = (TensorSpec(dtypes.int64, []),
    ...         {"b": TensorSpec(dtypes.string, [2]), "a": TensorSpec(dtypes.float32, [])})
    >>> [s.dtype.name for s in flatten(spec)]
    ['int64', 'float32', 'string']
    >>> pack_as(spec, [1, 2, 3])
    (1, {'b': 3, 'a': 2})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape

__all__ = [
    "TensorSpec",
    "is_structure",
    "flatten",
    "pack_as",
    "map_structure",
    "normalize_element",
    "spec_of",
    "types_of",
    "shapes_of",
    "classes_of",
    "describe",
    "most_specific_compatible_shape",
    "same_nesting",
]


class TensorSpec:
    """The dtype and static shape of one component of an element.

    Example:
        >>> TensorSpec(dtypes.float32, [None, 3])
        TensorSpec(shape=(?, 3), dtype=tf.float32)
    """

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype: Any, shape: Any) -> None:
        self.dtype = dtypes.as_dtype(dtype)
        self.shape = as_shape(shape)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, TensorSpec) and self.dtype is other.dtype and self.shape == other.shape

    def __hash__(self) -> int:
        return hash((self.dtype.name, self.shape))

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r})"


def is_structure(value: Any) -> bool:
    """Whether ``value`` is structure in an element (a tuple, namedtuple or dict), not a leaf (lists are leaves).

    Example:
        >>> is_structure((1, 2)), is_structure({"a": 1}), is_structure([1, 2])
        (True, True, False)
    """
    return isinstance(value, tuple | Mapping)


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure`` in TF's order (dicts by sorted key).

    Example:
        >>> flatten(({"y": 2, "x": 1}, [3, 4]))
        [1, 2, [3, 4]]
    """
    if not is_structure(structure):
        return [structure]
    out: list[Any] = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def _rebuild(template: Any, children: list[Any]) -> Any:
    if isinstance(template, Mapping):
        keys = sorted(template)
        by_key = dict(zip(keys, children))
        return type(template)((k, by_key[k]) for k in template)
    if hasattr(template, "_fields"):
        return type(template)(*children)
    return tuple(children)


def pack_as(structure: Any, flat: list[Any]) -> Any:
    """Rebuilds ``structure``'s nesting around the leaves ``flat``.

    Raises:
        ValueError: ``flat`` has another number of leaves than ``structure``.

    Example:
        >>> pack_as((0, {"b": 0, "a": 0}), ["x", "a", "b"])
        ('x', {'b': 'b', 'a': 'a'})
    """
    n = len(flatten(structure))
    if n != len(flat):
        raise ValueError(f"The structure has {n} components, but {len(flat)} values were given")

    def pack(template: Any, start: int) -> tuple[Any, int]:
        if not is_structure(template):
            return flat[start], start + 1
        children = []
        for child in _children(template):
            packed, start = pack(child, start)
            children.append(packed)
        return _rebuild(template, children), start

    return pack(structure, 0)[0]


def map_structure(fn: Callable[[Any], Any], structure: Any) -> Any:
    """``structure`` with ``fn`` applied to every leaf.

    Example:
        >>> map_structure(lambda x: x * 10, (1, {"a": 2}))
        (10, {'a': 20})
    """
    return pack_as(structure, [fn(leaf) for leaf in flatten(structure)])


def _to_tuples(value: Any) -> Any:
    """A function's return value with lists of tensors turned into tuples (TF 2 does the same, with a warning)."""
    if isinstance(value, list) and any(isinstance(v, Tensor | list | tuple | Mapping) for v in value):
        return tuple(_to_tuples(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_tuples(v) for v in value)
    if isinstance(value, Mapping):
        return type(value)((k, _to_tuples(v)) for k, v in value.items())
    return value


def normalize_element(value: Any, name: str = "component", lists_are_tuples: bool = False) -> Any:
    """``value`` with every leaf converted to a tensor of the default graph (lists become one tensor each).

    Args:
        value: A tensor, a Python or numpy value, or tuples/dicts of them.
        name: Base name of the constants made for non-tensor leaves.
        lists_are_tuples: Treat lists holding tensors or structures as tuples (a ``map`` function's result).

    Raises:
        TypeError: a leaf is a SparseTensor or a Dataset (not supported as an element), or cannot be converted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     element = normalize_element((1, {"a": [1.0, 2.0]}))
        >>> [t.dtype.name for t in flatten(element)], flatten(element)[1].shape.as_list()
        (['int32', 'float32'], [2])
    """
    if lists_are_tuples:
        value = _to_tuples(value)
    leaves = flatten(value)
    tensors = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, SparseTensor):
            raise TypeError("tf.data elements here are dense tensors; a SparseTensor component is not supported")
        if hasattr(leaf, "_element_structure"):
            raise TypeError(f"A Dataset cannot be an element component, got {leaf!r}")
        tensors.append(leaf if isinstance(leaf, Tensor) else convert_to_tensor(leaf, name=f"{name}_{i}"))
    return pack_as(value, tensors)


def spec_of(element: Any) -> Any:
    """The :class:`TensorSpec` structure of a structure of tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     spec_of((tf.constant([1, 2]), tf.constant("a")))
        (TensorSpec(shape=(2,), dtype=tf.int32), TensorSpec(shape=(), dtype=tf.string))
    """
    return map_structure(lambda t: TensorSpec(t.dtype, t.shape), element)


def types_of(spec: Any) -> Any:
    """``output_types``: the dtype structure of a spec structure.

    Example:
        >>> types_of((TensorSpec(dtypes.int64, []),))
        (tf.int64,)
    """
    return map_structure(lambda s: s.dtype, spec)


def shapes_of(spec: Any) -> Any:
    """``output_shapes``: the TensorShape structure of a spec structure.

    Example:
        >>> shapes_of({"a": TensorSpec(dtypes.int64, [None])})
        {'a': TensorShape([None])}
    """
    return map_structure(lambda s: s.shape, spec)


def classes_of(spec: Any) -> Any:
    """``output_classes``: every component is a ``Tensor``.

    Example:
        >>> classes_of((TensorSpec(dtypes.int64, []),))[0].__name__
        'Tensor'
    """
    return map_structure(lambda s: Tensor, spec)


def describe(spec: Any) -> str:
    """A spec structure as TF writes it in messages.

    Example:
        >>> describe((TensorSpec(dtypes.int64, []), TensorSpec(dtypes.string, [2])))
        '(TensorSpec(shape=(), dtype=tf.int64), TensorSpec(shape=(2,), dtype=tf.string))'
    """
    return repr(spec)


def most_specific_compatible_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both ``a`` and ``b`` are instances of (dims that differ become unknown).

    Example:
        >>> most_specific_compatible_shape(TensorShape([2, 3]), TensorShape([2, 4]))
        TensorShape([2, None])
        >>> most_specific_compatible_shape(TensorShape([2]), TensorShape([2, 4]))
        TensorShape(None)
    """
    a, b = as_shape(a), as_shape(b)
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_tuple(), b.as_tuple())])


def same_nesting(a: Any, b: Any) -> bool:
    """Whether two structures have the same nesting (dict keys included), leaves aside.

    Example:
        >>> same_nesting((1, {"a": 2}), (3, {"a": 4})), same_nesting((1,), (1, 2))
        (True, False)
    """
    if is_structure(a) != is_structure(b):
        return False
    if not is_structure(a):
        return True
    if isinstance(a, Mapping) != isinstance(b, Mapping):
        return False
    if isinstance(a, Mapping) and sorted(a) != sorted(b):
        return False
    ca, cb = _children(a), _children(b)
    return len(ca) == len(cb) and all(same_nesting(x, y) for x, y in zip(ca, cb))
