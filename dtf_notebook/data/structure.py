"""The element structure of a dataset: nested tuples and dicts of tensors, with their dtypes and static shapes.

``tf.data`` nests differently from ``tf.nest``: a Python *list* is one value (it becomes one tensor), while tuples,
namedtuples and dicts are structure. A leaf is a dense tensor (:class:`TensorSpec`) or a ``SparseTensor``
(:class:`SparseTensorSpec`; a ``SparseTensorValue`` is a leaf too, not a namedtuple to descend into).

An element travels through the runtime as a flat tuple of dense *components*, in :func:`flatten` order (dicts by
sorted key, as TF), a sparse leaf taking three: its ``indices``, ``values`` and ``dense_shape``
(:func:`components`, :func:`to_components`); the structure, SparseTensors included, is rebuilt only on the graph
side (:func:`from_components`). The transformations that must see a sparse leaf as one value (``batch``, slicing)
are told where its three components start (:func:`sparse_slots`).

Example:
    >>> from dtf_notebook.framework import dtypes
    >>> spec = (TensorSpec(dtypes.int64, []),
    ...         {"b": TensorSpec(dtypes.string, [2]), "a": TensorSpec(dtypes.float32, [])})
    >>> [s.dtype.name for s in flatten(spec)]
    ['int64', 'float32', 'string']
    >>> pack_as(spec, [1, 2, 3])
    (1, {'b': 3, 'a': 2})
    >>> [c.dtype.name for c in components((SparseTensorSpec([None], dtypes.string), TensorSpec(dtypes.int64, [])))]
    ['int64', 'string', 'int64', 'int64']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, as_shape

__all__ = [
    "TensorSpec",
    "SparseTensorSpec",
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
    "is_sparse",
    "components",
    "to_components",
    "from_components",
    "sparse_slots",
    "batched",
    "unbatched",
    "most_specific_compatible_spec",
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


class SparseTensorSpec:
    """The dtype and static dense shape of a ``SparseTensor`` component (``tf.SparseTensorSpec``).

    Args:
        shape: The static shape of the dense tensor it stands for (unknown by default).
        dtype: The dtype of its values.

    Example:
        >>> SparseTensorSpec([None, 4], dtypes.int64)
        SparseTensorSpec(TensorShape([None, 4]), tf.int64)
        >>> SparseTensorSpec([3]).value_type.__name__
        'SparseTensor'
    """

    __slots__ = ("dtype", "shape")

    #: The class of the values it describes.
    value_type = SparseTensor

    def __init__(self, shape: Any = None, dtype: Any = dtypes.float32) -> None:
        self.shape = as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, SparseTensorSpec) and self.dtype is other.dtype and self.shape == other.shape

    def __hash__(self) -> int:
        return hash(("sparse", self.dtype.name, self.shape))

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self.shape!r}, {self.dtype!r})"

    def component_specs(self) -> list[TensorSpec]:
        """The specs of ``indices``, ``values`` and ``dense_shape``.

        Example:
            >>> SparseTensorSpec([None, 4], dtypes.string).component_specs()[0]
            TensorSpec(shape=(?, 2), dtype=tf.int64)
        """
        rank = self.shape.ndims
        return [
            TensorSpec(dtypes.int64, [None, rank]),
            TensorSpec(self.dtype, [None]),
            TensorSpec(dtypes.int64, [rank]),
        ]


def is_structure(value: Any) -> bool:
    """Whether ``value`` is structure in an element (a tuple, namedtuple or dict), not a leaf (lists and
    ``SparseTensorValue`` are leaves).

    Example:
        >>> is_structure((1, 2)), is_structure({"a": 1}), is_structure([1, 2])
        (True, True, False)
    """
    return isinstance(value, tuple | Mapping) and not isinstance(value, SparseTensorValue)


def is_sparse(leaf: Any) -> bool:
    """Whether a leaf (a value or a spec) is sparse.

    Example:
        >>> is_sparse(SparseTensorSpec()), is_sparse(TensorSpec(dtypes.int64, []))
        (True, False)
    """
    return isinstance(leaf, SparseTensorSpec | SparseTensor | SparseTensorValue)


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
    if isinstance(value, list) and any(isinstance(v, Tensor | SparseTensor | list | tuple | Mapping) for v in value):
        return tuple(_to_tuples(v) for v in value)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_to_tuples(v) for v in value)
    if isinstance(value, Mapping):
        return type(value)((k, _to_tuples(v)) for k, v in value.items())
    return value


def normalize_element(value: Any, name: str = "component", lists_are_tuples: bool = False) -> Any:
    """``value`` with every leaf converted to a tensor of the default graph (lists become one tensor each), a
    ``SparseTensorValue`` to a ``SparseTensor``.

    Args:
        value: A tensor, a SparseTensor, a Python or numpy value, or tuples/dicts of them.
        name: Base name of the constants made for non-tensor leaves.
        lists_are_tuples: Treat lists holding tensors or structures as tuples (a ``map`` function's result).

    Raises:
        TypeError: a leaf is a Dataset (not supported as an element), or cannot be converted.

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
        if hasattr(leaf, "_element_structure"):
            raise TypeError(f"A Dataset cannot be an element component, got {leaf!r}")
        if isinstance(leaf, SparseTensorValue):
            leaf = SparseTensor.from_value(leaf)
        tensors.append(leaf if isinstance(leaf, Tensor | SparseTensor) else convert_to_tensor(leaf, name=f"{name}_{i}"))
    return pack_as(value, tensors)


def spec_of(element: Any) -> Any:
    """The :class:`TensorSpec` structure of a structure of tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     spec_of((tf.constant([1, 2]), tf.constant("a")))
        (TensorSpec(shape=(2,), dtype=tf.int32), TensorSpec(shape=(), dtype=tf.string))
    """
    return map_structure(
        lambda t: SparseTensorSpec(t.shape, t.dtype) if isinstance(t, SparseTensor) else TensorSpec(t.dtype, t.shape),
        element,
    )


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
    """``output_classes``: ``SparseTensor`` for a sparse leaf, ``Tensor`` for the others.

    Example:
        >>> [c.__name__ for c in classes_of((TensorSpec(dtypes.int64, []), SparseTensorSpec()))]
        ['Tensor', 'SparseTensor']
    """
    return map_structure(lambda s: SparseTensor if isinstance(s, SparseTensorSpec) else Tensor, spec)


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


# ---- sparse leaves as dense components -------------------------------------------------------------------------
def _leaf_components(spec: Any) -> list[TensorSpec]:
    return spec.component_specs() if isinstance(spec, SparseTensorSpec) else [spec]


def components(spec: Any) -> list[TensorSpec]:
    """The dense components the runtime carries for an element of ``spec``: a sparse leaf gives three.

    Example:
        >>> components((TensorSpec(dtypes.string, []), SparseTensorSpec([2, None], dtypes.float32)))
        [TensorSpec(shape=(), dtype=tf.string), TensorSpec(shape=(?, 2), dtype=tf.int64), \
TensorSpec(shape=(?,), dtype=tf.float32), TensorSpec(shape=(2,), dtype=tf.int64)]
    """
    return [c for leaf in flatten(spec) for c in _leaf_components(leaf)]


def to_components(element: Any) -> list[Any]:
    """The dense component tensors of an element of tensors and SparseTensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sp = tf.SparseTensor([[0]], [1.5], [3])
        ...     [t.dtype.name for t in to_components((sp, tf.constant(1)))]
        ['int64', 'float32', 'int64', 'int32']
    """
    out: list[Any] = []
    for leaf in flatten(element):
        if isinstance(leaf, SparseTensor):
            out.extend((leaf.indices, leaf.values, leaf.dense_shape))
        else:
            out.append(leaf)
    return out


def from_components(spec: Any, tensors: list[Any]) -> Any:
    """The element of ``spec`` whose dense components are ``tensors`` (three make each SparseTensor, its static
    shape the spec's).

    Raises:
        ValueError: ``tensors`` has another length than :func:`components` gives.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     parts = [tf.constant([[0, 1]], tf.int64), tf.constant([2.0]), tf.constant([3, 4], tf.int64)]
        ...     sp = from_components(SparseTensorSpec([None, 4], tf.float32), parts)
        >>> type(sp).__name__, sp.shape
        ('SparseTensor', TensorShape([None, 4]))
    """
    expected = len(components(spec))
    if len(tensors) != expected:
        raise ValueError(f"The structure has {expected} components, but {len(tensors)} tensors were given")
    leaves, i = [], 0
    for leaf in flatten(spec):
        if isinstance(leaf, SparseTensorSpec):
            sparse = SparseTensor(tensors[i], tensors[i + 1], _known_dense_shape(tensors[i + 2], leaf.shape))
            sparse._dense_shape_default = leaf.shape
            leaves.append(sparse)
            i += 3
        else:
            leaves.append(tensors[i])
            i += 1
    return pack_as(spec, leaves)


def _known_dense_shape(dense_shape: Any, shape: TensorShape) -> Any:
    """``dense_shape`` with the dims the spec knows as constants (TF does the same, so that a SparseTensor made from
    it in a dataset function keeps a static shape)."""
    if shape.is_fully_defined():
        return convert_to_tensor(shape.as_list(), dtype=dtypes.int64, name="shape")
    if shape.ndims is None or all(d is None for d in shape.as_tuple()):
        return dense_shape
    from dtf_notebook.ops.array.pack import stack, unstack  # builds ops: only when a spec knows some dims

    pieces = unstack(dense_shape, num=shape.ndims)
    for k, dim in enumerate(shape.as_tuple()):
        if dim is not None:
            pieces[k] = convert_to_tensor(dim, dtype=dtypes.int64)
    return stack(pieces)


def sparse_slots(spec: Any) -> list[int]:
    """Where the components of each sparse leaf start (its ``indices``; ``values`` and ``dense_shape`` follow).

    Example:
        >>> sparse_slots((TensorSpec(dtypes.int64, []), SparseTensorSpec(), SparseTensorSpec()))
        [1, 4]
    """
    slots, i = [], 0
    for leaf in flatten(spec):
        if isinstance(leaf, SparseTensorSpec):
            slots.append(i)
        i += len(_leaf_components(leaf))
    return slots


def batched(spec: Any, dim: int | None) -> Any:
    """``spec`` with a leading dimension ``dim`` on every leaf (what ``batch`` makes of its elements).

    Example:
        >>> batched((TensorSpec(dtypes.int64, [2]), SparseTensorSpec([None])), None)
        (TensorSpec(shape=(?, 2), dtype=tf.int64), SparseTensorSpec(TensorShape([None, None]), tf.float32))
    """

    return map_structure(lambda leaf: _with_shape(leaf, TensorShape([dim]).concatenate(leaf.shape)), spec)


def unbatched(spec: Any) -> Any:
    """``spec`` without the leading dimension of every leaf (the elements ``from_tensor_slices`` makes).

    Example:
        >>> unbatched((TensorSpec(dtypes.int64, [5, 2]), SparseTensorSpec([5, None])))
        (TensorSpec(shape=(2,), dtype=tf.int64), SparseTensorSpec(TensorShape([None]), tf.float32))
    """
    return map_structure(lambda leaf: _with_shape(leaf, leaf.shape[1:]), spec)


def _with_shape(leaf: Any, shape: Any) -> Any:
    """A spec of ``leaf``'s class and dtype with another shape."""
    return SparseTensorSpec(shape, leaf.dtype) if isinstance(leaf, SparseTensorSpec) else TensorSpec(leaf.dtype, shape)


def most_specific_compatible_spec(a: Any, b: Any) -> Any:
    """The spec structure both ``a`` and ``b`` fit (shapes relaxed where they differ), or None when their nesting,
    classes or dtypes differ.

    Example:
        >>> most_specific_compatible_spec(SparseTensorSpec([2]), SparseTensorSpec([3]))
        SparseTensorSpec(TensorShape([None]), tf.float32)
        >>> most_specific_compatible_spec(SparseTensorSpec([2]), TensorSpec(dtypes.float32, [2])) is None
        True
    """
    if not same_nesting(a, b):
        return None
    out = []
    for x, y in zip(flatten(a), flatten(b)):
        if type(x) is not type(y) or x.dtype is not y.dtype:
            return None
        out.append(_with_shape(x, most_specific_compatible_shape(x.shape, y.shape)))
    return pack_as(a, out)
