"""Nested structures of values (lists, tuples, namedtuples, dicts), as ``tf.nest`` walks them.

Control flow takes and returns structures of tensors (``while_loop``'s ``loop_vars``, ``cond``'s branch
results, ``map_fn``'s elements); these helpers flatten them to lists and rebuild them. Dicts are walked
in sorted key order, like TF.

Example:
    >>> flatten({"b": [1, 2], "a": (3,)})
    [3, 1, 2]
    >>> pack_sequence_as({"b": [0, 0], "a": (0,)}, [30, 10, 20])
    {'b': [10, 20], 'a': (30,)}
    >>> map_structure(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)])
    [11, (22, 33)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def is_nested(value: Any) -> bool:
    """Whether ``value`` is a list, tuple or dict (a structure, not a leaf).

    Example:
        >>> is_nested([1]), is_nested((1,)), is_nested({"a": 1}), is_nested("ab")
        (True, True, True, False)
    """
    return isinstance(value, list | tuple | Mapping)


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(structure: Any) -> list[Any]:
    """The leaves of ``structure`` in order (a leaf alone gives ``[leaf]``; ``None`` is a leaf).

    Example:
        >>> flatten([1, (2, [3]), {"x": 4}])
        [1, 2, 3, 4]
    """
    if not is_nested(structure):
        return [structure]
    leaves: list[Any] = []
    for child in _children(structure):
        leaves.extend(flatten(child))
    return leaves


def _rebuild(template: Any, children: list[Any]) -> Any:
    if isinstance(template, Mapping):
        keys = sorted(template)
        return type(template)((k, children[keys.index(k)]) for k in template)
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)  # a namedtuple
    return type(template)(children)


def _pack(structure: Any, leaves: list[Any], start: int) -> tuple[Any, int]:
    if not is_nested(structure):
        return leaves[start], start + 1
    children = []
    for child in _children(structure):
        packed, start = _pack(child, leaves, start)
        children.append(packed)
    return _rebuild(structure, children), start


def pack_sequence_as(structure: Any, flat_sequence: list[Any]) -> Any:
    """``flat_sequence`` packed into the shape of ``structure``.

    Raises:
        ValueError: the number of leaves differs.

    Example:
        >>> pack_sequence_as((0, [0, 0]), ["a", "b", "c"])
        ('a', ['b', 'c'])
    """
    flat_sequence = list(flat_sequence)
    expected = len(flatten(structure))
    if expected != len(flat_sequence):
        raise ValueError(
            f"Could not pack sequence. Structure had {expected} elements, but flat_sequence had "
            f"{len(flat_sequence)} elements. Structure: {structure!r}"
        )
    return _pack(structure, flat_sequence, 0)[0]


def assert_same_structure(first: Any, second: Any, check_types: bool = True) -> None:
    """Raises ValueError (TypeError for differing sequence types) unless both have the same nesting.

    Example:
        >>> assert_same_structure([1, (2, 3)], [4, (5, 6)])
        >>> assert_same_structure([1, 2], [1])
        Traceback (most recent call last):
        ...
        ValueError: The two structures don't have the same nested structure: [1, 2] and [1]
    """
    if is_nested(first) != is_nested(second):
        raise ValueError(f"The two structures don't have the same nested structure: {first!r} and {second!r}")
    if not is_nested(first):
        return
    if (
        check_types
        and type(first) is not type(second)
        and not (isinstance(first, list | tuple) and isinstance(second, list | tuple) and not hasattr(first, "_fields"))
    ):
        raise TypeError(
            f"The two structures don't have the same sequence type. First structure has type {type(first)}, "
            f"while second structure has type {type(second)}."
        )
    a, b = _children(first), _children(second)
    if len(a) != len(b) or (isinstance(first, Mapping) and sorted(first) != sorted(second)):
        raise ValueError(f"The two structures don't have the same nested structure: {first!r} and {second!r}")
    for x, y in zip(a, b):
        assert_same_structure(x, y, check_types)


def map_structure(fn: Callable[..., Any], *structures: Any) -> Any:
    """``fn`` applied leaf by leaf to structures of the same nesting; the result has that nesting.

    Example:
        >>> map_structure(str, {"a": [1, 2]})
        {'a': ['1', '2']}
    """
    for other in structures[1:]:
        assert_same_structure(structures[0], other, check_types=False)
    flat = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flat)])
