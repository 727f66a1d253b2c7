"""Comparing a graph built with dtf_notebook against the same graph built with real TensorFlow 1.

``compare(build, inputs)`` builds ``build(m, *tensors)`` twice, once with ``m`` the real ``tf.compat.v1`` and once
with ``dtf_notebook.compat.v1``, and checks values, dtypes, static shapes and (for float inputs) the gradients of
``sum(w * y)`` over every float output ``y`` with the same random weights ``w`` in both.

Example (in a test marked ``tf_oracle``):
    compare(lambda m, x: m.math.cumsum(x, exclusive=True), [rand(3, 4)])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from tests.ops.op_check import rand


def real_tf() -> Any:
    """``tensorflow.compat.v1``, or skips the test when TensorFlow is not installed."""
    return pytest.importorskip("tensorflow").compat.v1


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def _build_and_run(
    m: Any, build: Callable[..., Any], inputs: Sequence[np.ndarray], feed: bool, grad_wrt: Sequence[int] | None
) -> tuple[list[np.ndarray], list[Any], list[np.ndarray]]:
    with m.Graph().as_default():
        if feed:
            tensors = [m.placeholder(m.as_dtype(x.dtype), x.shape) for x in inputs]
            feed_dict = dict(zip(tensors, inputs))
        else:
            tensors = [m.constant(x) for x in inputs]
            feed_dict = {}
        outs = _as_list(build(m, *tensors))
        with m.Session() as sess:
            values = sess.run(outs, feed_dict)
            grads: list[np.ndarray] = []
            if grad_wrt:
                floats = [o for o in outs if o.dtype.is_floating]
                weights = [
                    m.constant(rand(*np.shape(v), dtype=np.float64, seed=5 + i).astype(o.dtype.as_numpy_dtype))
                    for i, (o, v) in enumerate(zip(outs, values))
                    if o.dtype.is_floating
                ]
                gs = m.gradients(floats, [tensors[i] for i in grad_wrt], grad_ys=weights)
                grads = [None if g is None else np.asarray(sess.run(m.convert_to_tensor(g), feed_dict)) for g in gs]
        return [np.asarray(v) for v in values], outs, grads


def compare(
    build: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    *,
    grad: bool = True,
    wrt: Sequence[int] | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    grad_rtol: float = 1e-6,
    grad_atol: float = 1e-8,
    feed: bool = True,
    static_shapes: bool = True,
) -> list[np.ndarray]:
    """Asserts that ``build(dtf, ...)`` matches ``build(tf1, ...)``; returns dtf's values.

    Gradients are compared for the float inputs (or those listed in ``wrt``) when ``grad`` is true; inputs are
    used as given, so pass float64 ones for tight gradient tolerances.
    """
    tf1 = real_tf()
    if grad:
        grad_wrt = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"] if wrt is None else list(wrt)
    else:
        grad_wrt = []
    expected, tf_outs, tf_grads = _build_and_run(tf1, build, inputs, feed, grad_wrt)
    got, outs, grads = _build_and_run(dtf, build, inputs, feed, grad_wrt)
    assert len(got) == len(expected)
    for k, (g, e, t, te) in enumerate(zip(got, expected, outs, tf_outs)):
        assert g.dtype == e.dtype, f"output {k}: dtype {g.dtype} != TF's {e.dtype}"
        assert g.shape == e.shape, f"output {k}: shape {g.shape} != TF's {e.shape}"
        if static_shapes:
            mine = t.shape.as_list() if t.shape.ndims is not None else None
            theirs = te.shape.as_list() if te.shape.ndims is not None else None
            assert mine == theirs, f"output {k}: static shape {mine} != TF's {theirs}"
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"output {k}")
        else:
            np.testing.assert_array_equal(g, e, err_msg=f"output {k}")
    for i, g, e in zip(grad_wrt, grads, tf_grads):
        if e is None:
            assert g is None, f"input {i}: TF has no gradient, dtf has one"
            continue
        assert g is not None, f"input {i}: no gradient, TF has one"
        np.testing.assert_allclose(g, e, rtol=grad_rtol, atol=grad_atol, err_msg=f"gradient of input {i}")
    return got


def compare_error(build: Callable[..., Any], inputs: Sequence[np.ndarray], feed: bool = True) -> type:
    """Asserts that building and running ``build`` raises the same error class in both; returns it."""
    tf1 = real_tf()
    kinds = []
    for m in (tf1, dtf):
        try:
            _build_and_run(m, build, inputs, feed, [])
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            kinds.append(type(e).__name__)
        else:
            kinds.append(None)
    assert kinds[0] is not None, "TF raised nothing"
    assert kinds[0] == kinds[1], f"TF raised {kinds[0]}, dtf raised {kinds[1]}"
    return kinds[0]
