"""Flattening nested fetch structures and rebuilding the results in the same shape.

``Session.run`` accepts a tensor, an operation, a variable, a name, or any
nesting of lists, tuples, namedtuples and dicts of those. :func:`flatten_fetches`
returns the unique graph elements to compute and a function that rebuilds
the caller's structure from their values.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default() as g:
    ...     a = tf.constant(1.0, name="a")
    ...     elements, rebuild = flatten_fetches(g, {"x": [a, a]})
    >>> len(elements), rebuild([5.0])
    (1, {'x': [5.0, 5.0]})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def flatten_fetches(graph: Graph, fetches: Any) -> tuple[list[Tensor | Operation], Callable[[list[Any]], Any]]:
    """Returns ``(unique elements, rebuild)`` for a fetch structure.

    Raises:
        TypeError: a fetch is None or of a type that cannot be fetched.
        ValueError: a fetch belongs to another graph or names nothing in it.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     a = tf.constant(1.0, name="a"); b = tf.constant(2.0, name="b")
        >>> elements, rebuild = flatten_fetches(g, ("a:0", [b]))   # names work too
        >>> [e.name for e in elements], rebuild([10.0, 20.0])
        (['a:0', 'b:0'], (10.0, [20.0]))
    """
    elements: list[Tensor | Operation] = []
    index: dict[int, int] = {}

    def add(element: Tensor | Operation) -> int:
        pos = index.get(id(element))
        if pos is None:
            pos = index[id(element)] = len(elements)
            elements.append(element)
        return pos

    def build(fetch: Any) -> Callable[[list[Any]], Any]:
        if fetch is None:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}")
        if isinstance(fetch, Mapping):
            parts = [(k, build(v)) for k, v in fetch.items()]
            kind = type(fetch)

            def rebuild_dict(values: list[Any]) -> Any:
                items = [(k, f(values)) for k, f in parts]
                try:
                    return kind(items)
                except TypeError:
                    return dict(items)

            return rebuild_dict
        if _is_namedtuple(fetch):
            parts_nt = [build(v) for v in fetch]
            return lambda values: type(fetch)(*[f(values) for f in parts_nt])
        if isinstance(fetch, list | tuple):
            parts_seq = [build(v) for v in fetch]
            kind_seq = type(fetch)
            return lambda values: kind_seq(f(values) for f in parts_seq)
        if hasattr(fetch, "_fetch_components"):
            # Composite values (IndexedSlices): fetch their parts, rebuild their value type.
            components, make = fetch._fetch_components()
            parts_c = [build(c) for c in components]
            return lambda values: make(*[f(values) for f in parts_c])
        try:
            element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as e:
            raise TypeError(
                f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string or Tensor. ({e})"
            ) from None
        except (KeyError, ValueError) as e:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({e})") from None
        pos = add(element)
        return lambda values: values[pos]

    return elements, build(fetches)
