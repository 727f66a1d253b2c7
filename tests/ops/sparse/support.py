"""Running one sparse-op graph in real TensorFlow and here, and comparing what comes back (values, dtypes, sparse
parts, static shapes, gradients, error classes).

Example (in a test marked ``tf_oracle``):
    same(lambda m: m.sparse_reorder(m.SparseTensor([[1], [0]], [1.0, 2.0], [2])))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf


def real_tf() -> Any:
    """``tensorflow.compat.v1`` in TF1 graph mode with TF1 control flow, or skips the test."""
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    tf1.disable_control_flow_v2()  # TF1's cond/while_loop (Switch/Merge), as built here
    return tf1


def _fetchable(m: Any, x: Any) -> bool:
    return isinstance(x, m.Tensor | m.SparseTensor | m.Operation | m.IndexedSlices)


def _flat(x: Any) -> list[Any]:
    if isinstance(x, list | tuple) and not hasattr(x, "_fields"):
        return [y for item in x for y in _flat(item)]
    return [x]


def _static(m: Any, x: Any) -> Any:
    if isinstance(x, m.SparseTensor):
        return [t.shape.as_list() if t.shape.ndims is not None else None for t in (x.indices, x.values, x.dense_shape)]
    if isinstance(x, m.Tensor):
        return x.shape.as_list() if x.shape.ndims is not None else None
    return None


def run(m: Any, build: Callable[[Any], Any], feed: Callable[[Any], dict] | None = None) -> tuple[list[Any], list[Any]]:
    """Builds ``build(m)`` in a fresh graph and runs its fetchable results: (values, static shapes)."""
    with m.Graph().as_default():
        out = _flat(build(m))
        fetches = [x for x in out if _fetchable(m, x)]
        with m.Session() as sess:
            values = sess.run(fetches, feed(m) if feed else None)
        return values, [_static(m, x) for x in fetches]


def _assert_same(mine: Any, theirs: Any, where: str, rtol: float, atol: float) -> None:
    if hasattr(theirs, "indices") and hasattr(theirs, "values"):
        for field in ("indices", "values", "dense_shape"):
            _assert_same(getattr(mine, field), getattr(theirs, field), f"{where}.{field}", rtol, atol)
        return
    a, b = np.asarray(mine), np.asarray(theirs)
    assert a.dtype == b.dtype, f"{where}: dtype {a.dtype} != TF's {b.dtype}"
    assert a.shape == b.shape, f"{where}: shape {a.shape} != TF's {b.shape}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=where)
    else:
        np.testing.assert_array_equal(a, b, err_msg=where)


def same(
    build: Callable[[Any], Any],
    feed: Callable[[Any], dict] | None = None,
    static: bool = True,
    rtol: float = 1e-6,
    atol: float = 1e-6,
) -> list[Any]:
    """Asserts that ``build(m)`` gives the same results (and static shapes) under TF and here; returns ours."""
    theirs, theirs_static = run(real_tf(), build, feed)
    mine, mine_static = run(dtf, build, feed)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        _assert_same(a, b, f"result {i}", rtol, atol)
    if static:
        assert mine_static == theirs_static, f"static shapes {mine_static} != TF's {theirs_static}"
    return mine


def same_gradients(build: Callable[[Any, Any], Any], inputs: list[np.ndarray], rtol: float = 1e-6) -> None:
    """``build(m, *tensors)`` returns float tensors; their weighted sum's gradients w.r.t. the (float64) inputs must
    equal TF's (None where TF's is None)."""

    def grads(m: Any) -> list[Any]:
        with m.Graph().as_default():
            tensors = [m.constant(x) for x in inputs]
            outs = _flat(build(m, *tensors))
            weights = [
                m.constant(
                    np.linspace(0.5, 1.5, int(np.prod(o.shape.as_list()) or 1))
                    .reshape(o.shape.as_list())
                    .astype(o.dtype.as_numpy_dtype)
                )
                if o.shape.is_fully_defined()
                else m.ones_like(o)
                for o in outs
            ]
            gs = m.gradients(outs, tensors, grad_ys=weights)
            with m.Session() as sess:
                return [None if g is None else sess.run(m.convert_to_tensor(g)) for g in gs]

    theirs, mine = grads(real_tf()), grads(dtf)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if b is None:
            assert a is None, f"input {i}: TF has no gradient, dtf has one"
            continue
        assert a is not None, f"input {i}: no gradient, TF has one"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-9, err_msg=f"gradient of input {i}")


def same_error(build: Callable[[Any], Any], feed: Callable[[Any], dict] | None = None) -> str:
    """Asserts that building and running ``build(m)`` raises the same error class in both libraries."""
    kinds = []
    for m in (real_tf(), dtf):
        try:
            run(m, build, feed)
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            kinds.append(type(e).__name__)
        else:
            kinds.append(None)
    assert kinds[0] is not None, "TF raised nothing"
    assert kinds[0] == kinds[1], f"TF raised {kinds[0]}, dtf raised {kinds[1]}"
    return kinds[0]
