"""The one helper every op test uses: forward values against numpy/torch, gradients against finite differences.

Example (in a test):
    check_forward(lambda x: tf.exp(x), np.exp, [rand(2, 3)])
    check_gradient(lambda x: tf.exp(x), [rand(2, 3)])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import dtf_notebook.compat.v1 as tf


def rand(*shape: int, dtype: Any = np.float32, low: float = -2.0, high: float = 2.0, seed: int = 0) -> np.ndarray:
    """Deterministic uniform random array (ints when ``dtype`` is integral)."""
    rng = np.random.default_rng(seed + 7919 * len(shape) + sum(shape))
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list | tuple) else [x]


def evaluate(build: Callable[..., Any], inputs: Sequence[np.ndarray], feed: bool = True) -> Any:
    """Builds ``build(*tensors)`` in a fresh graph (inputs as placeholders or constants) and runs it."""
    with tf.Graph().as_default():
        if feed:
            tensors = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in inputs]
            feed_dict = dict(zip(tensors, inputs))
        else:
            tensors = [tf.constant(x) for x in inputs]
            feed_dict = {}
        out = build(*tensors)
        with tf.Session() as sess:
            return sess.run(out, feed_dict), out


def check_forward(
    build: Callable[..., Any],
    reference: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    rtol: float = 1e-5,
    atol: float = 1e-6,
    check_dtype: bool = True,
) -> Any:
    """Asserts that ``build`` (dtf ops) computes what ``reference`` (numpy/torch on numpy) computes.

    Checks values, dtypes, and that each output's static shape is compatible with its actual shape.
    Runs once with placeholders (unknown values) and once with constants. Returns the dtf result.
    """
    expected = reference(*inputs)
    for feed in (True, False):
        got, out = evaluate(build, inputs, feed)
        for g, e, t in zip(_as_list(got), _as_list(expected), _as_list(out)):
            e = np.asarray(e)
            g_arr = np.asarray(g)
            assert g_arr.shape == e.shape, f"shape {g_arr.shape} != expected {e.shape}"
            if check_dtype:
                assert g_arr.dtype == e.dtype, f"dtype {g_arr.dtype} != expected {e.dtype}"
            if hasattr(t, "shape"):
                assert t.shape.is_compatible_with(g_arr.shape), f"static shape {t.shape} vs actual {g_arr.shape}"
            if e.dtype.kind in "fc":
                np.testing.assert_allclose(g_arr.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(g_arr, e)
    return got


def check_gradient(
    build: Callable[..., Any],
    inputs: Sequence[np.ndarray],
    wrt: Sequence[int] | None = None,
    delta: float = 1e-4,
    rtol: float = 1e-4,
    atol: float = 1e-5,
) -> None:
    """Asserts that the symbolic gradient of ``build`` matches central finite differences.

    Inputs are promoted to float64. The scalar differentiated is ``sum(y * w)`` over every float output
    ``y`` with fixed random weights ``w`` (passed as ``grad_ys``), so every output element counts.
    """
    inputs = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in inputs]
    wrt = [i for i, x in enumerate(inputs) if x.dtype.kind == "f"] if wrt is None else list(wrt)
    with tf.Graph().as_default():
        tensors = [tf.placeholder(tf.as_dtype(x.dtype), x.shape) for x in inputs]
        outs = [o for o in _as_list(build(*tensors)) if o.dtype.is_floating]
        feed = dict(zip(tensors, inputs))
        with tf.Session() as sess:
            values = sess.run(outs, feed)
            weights = [rand(*np.shape(v), dtype=np.float64, seed=11 + i) for i, v in enumerate(values)]
            grads = tf.gradients(outs, [tensors[i] for i in wrt], grad_ys=[tf.constant(w) for w in weights])
            symbolic = sess.run([tf.convert_to_tensor(g) for g in grads if g is not None], feed)
            assert len(symbolic) == len(wrt), "some input got no gradient"

            def objective(values_in: list[np.ndarray]) -> float:
                res = sess.run(outs, dict(zip(tensors, values_in)))
                return float(sum(np.sum(np.asarray(r) * w) for r, w in zip(res, weights)))

            for k, i in enumerate(wrt):
                numeric = np.zeros_like(inputs[i])
                flat = numeric.reshape(-1)
                for j in range(flat.size):
                    plus = [x.copy() for x in inputs]
                    minus = [x.copy() for x in inputs]
                    plus[i].reshape(-1)[j] += delta
                    minus[i].reshape(-1)[j] -= delta
                    flat[j] = (objective(plus) - objective(minus)) / (2 * delta)
                np.testing.assert_allclose(symbolic[k], numeric, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}")
