"""Running the same ``tf.data`` pipeline under real TensorFlow 1 and here, and comparing what comes out.

``compare(build)`` builds ``build(m)`` (a dataset, ``m`` being ``tf.compat.v1`` or ``dtf_notebook.compat.v1``) in
a fresh graph under each library, reads every element through an initializable iterator, and checks the element
sequences (values, dtypes, nesting; a fetched ``SparseTensorValue`` compares as its indices, values and dense
shape), ``output_types``, ``output_shapes``, ``output_classes`` and the static shapes of ``get_next``.

Example (in a test marked ``tf_oracle``):
    compare(lambda m: m.data.Dataset.range(5).map(lambda x: x * 2).batch(2))
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf

_LIMIT = 10_000

#: A fetched SparseTensorValue of either library, as plain arrays.
Sparse = namedtuple("Sparse", ["indices", "values", "dense_shape"])


def real_tf() -> Any:
    """``tensorflow.compat.v1`` in graph mode, or skips the test when TensorFlow is not installed."""
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    return tf1


def _plain(value: Any) -> Any:
    """A fetched element as nested tuples/dicts of numpy arrays (:data:`Sparse` for a SparseTensorValue)."""
    if type(value).__name__ == "SparseTensorValue":
        return Sparse(*(np.asarray(v) for v in value))
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return np.asarray(value)


def _describe(m: Any, structure: Any) -> Any:
    if isinstance(structure, Mapping):
        return {k: _describe(m, v) for k, v in structure.items()}
    if isinstance(structure, tuple):
        return tuple(_describe(m, v) for v in structure)
    if isinstance(structure, m.DType):
        return structure.name
    if isinstance(structure, type):
        return structure.__name__
    return None if structure.ndims is None else structure.as_list()


def run(
    m: Any,
    build: Callable[[Any], Any],
    feed: Callable[[Any], dict] | None = None,
    iterator: str = "initializable",
    limit: int = _LIMIT,
) -> dict[str, Any]:
    """Builds ``build(m)`` and reads it to its end; returns elements, the error (class name, message) that ended
    it other than OutOfRange, ``output_types``/``output_shapes`` and ``get_next``'s static shapes."""
    with m.Graph().as_default():
        built = build(m)
        ds, feed_values = (
            built if isinstance(built, tuple) and len(built) == 2 and isinstance(built[1], dict) else (built, {})
        )
        if iterator == "one_shot":
            it = m.data.make_one_shot_iterator(ds)
        else:
            it = m.data.make_initializable_iterator(ds)
        nxt = it.get_next()
        flat_next = [t for t in _leaves(nxt)]
        result: dict[str, Any] = {
            "types": _describe(m, m.data.get_output_types(ds)),
            "shapes": _describe(m, m.data.get_output_shapes(ds)),
            "classes": _describe(m, m.data.get_output_classes(ds)),
            "next_shapes": [_static_shapes(t) for t in flat_next],
            "elements": [],
            "error": None,
        }
        with m.Session() as sess:
            try:
                if iterator != "one_shot":
                    sess.run(it.initializer, feed_values)
                for _ in range(limit):
                    result["elements"].append(_plain(sess.run(nxt)))
            except m.errors.OutOfRangeError:
                pass
            except m.errors.OpError as e:
                result["error"] = (type(e).__name__, _first_line(e.message))
    return result


def _static_shapes(t: Any) -> Any:
    """A get_next leaf's static shape; for a SparseTensor, its dense shape's and its components'."""
    shape = None if t.shape.ndims is None else t.shape.as_list()
    if not hasattr(t, "dense_shape"):
        return shape
    parts = (t.indices, t.values, t.dense_shape)
    return [shape, *(None if p.shape.ndims is None else p.shape.as_list() for p in parts)]


def _first_line(message: str) -> str:
    lines = [line for line in message.split("\n") if line.strip()]
    for line in lines:
        if not line.startswith(("Graph execution error", "Detected at node", "  ", "Node:", "\t")):
            return line.strip()
    return lines[0] if lines else ""


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [x for k in sorted(value) for x in _leaves(value[k])]
    if isinstance(value, tuple):
        return [x for v in value for x in _leaves(v)]
    return [value]


def assert_same_elements(got: list[Any], expected: list[Any], rtol: float = 1e-6, sort: bool = False) -> None:
    """Element sequences equal: same nesting, dtypes, shapes and values (floats within ``rtol``)."""
    assert len(got) == len(expected), f"{len(got)} elements, TF gives {len(expected)}"
    if sort:
        got, expected = sorted(got, key=_key), sorted(expected, key=_key)
    for i, (g, e) in enumerate(zip(got, expected)):
        gl, el = _leaves(g), _leaves(e)
        assert type(g) is type(e) or not isinstance(e, tuple | Mapping), f"element {i}: {type(g)} vs TF's {type(e)}"
        assert len(gl) == len(el), f"element {i}: {len(gl)} components, TF has {len(el)}"
        for c, (a, b) in enumerate(zip(gl, el)):
            assert a.dtype == b.dtype, f"element {i} component {c}: dtype {a.dtype} != TF's {b.dtype}"
            assert a.shape == b.shape, f"element {i} component {c}: shape {a.shape} != TF's {b.shape}"
            if b.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=rtol, err_msg=f"element {i} component {c}")
            else:
                np.testing.assert_array_equal(a, b, err_msg=f"element {i} component {c}")


def _key(element: Any) -> Any:
    return tuple(np.asarray(x).tobytes() for x in _leaves(element))


def compare(
    build: Callable[[Any], Any],
    iterator: str = "initializable",
    sort: bool = False,
    error: bool = True,
    rtol: float = 1e-6,
    limit: int = _LIMIT,
) -> dict[str, Any]:
    """Asserts that ``build`` gives the same elements, types, shapes and ending error under TF and here; returns
    this library's result."""
    tf1 = real_tf()
    expected = run(tf1, build, iterator=iterator, limit=limit)
    got = run(dtf, build, iterator=iterator, limit=limit)
    assert got["types"] == expected["types"], (got["types"], expected["types"])
    assert got["shapes"] == expected["shapes"], (got["shapes"], expected["shapes"])
    assert got["classes"] == expected["classes"], (got["classes"], expected["classes"])
    assert got["next_shapes"] == expected["next_shapes"], (got["next_shapes"], expected["next_shapes"])
    assert_same_elements(got["elements"], expected["elements"], rtol=rtol, sort=sort)
    if error:
        assert (got["error"] or (None,))[0] == (expected["error"] or (None,))[0], (got["error"], expected["error"])
    return got
