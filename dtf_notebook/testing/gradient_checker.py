"""``tf.test.compute_gradient`` and ``compute_gradient_error``: a graph's gradients against finite differences.

TF1's gradient checker: the theoretical Jacobian comes from ``tf.gradients`` with one output element's upstream
gradient set to 1 at a time, the numeric one from central differences ``(y(x + delta) - y(x - delta)) / (2 delta)``
of each input element in turn; both are ``x_size`` rows by ``y_size`` columns. They run in the default session
(``with tf.Session():`` or a ``TestCase``'s ``cached_session``), feeding ``x`` its value.

Example:
    >>> import numpy as np
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session():
    ...     x = tf.constant([1.0, 2.0], dtype=tf.float64)
    ...     y = x * x
    ...     theoretical, numeric = compute_gradient(x, [2], y, [2], x_init_value=np.array([1.0, 2.0]))
    >>> theoretical
    array([[2., 0.],
           [0., 4.]])
    >>> bool(np.allclose(theoretical, numeric))
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework.default_session import get_default_session
from dtf_notebook.framework.gradients import gradients
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import identity

__all__ = ["compute_gradient", "compute_gradient_error"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")

Jacobians = tuple[np.ndarray, np.ndarray]


def _session() -> Any:
    sess = get_default_session()
    if sess is None:
        raise ValueError(
            "compute_gradient runs in the default session: call it inside `with tf.Session():` "
            "or a TestCase's `with self.cached_session():`"
        )
    return sess


def _check_dtype(tensor: Any, role: str) -> None:
    name = tensor.dtype.base_dtype.name
    if name not in _FLOATS:
        raise TypeError(f"compute_gradient needs a floating-point {role}: {tensor.name} is {name}")


def _feeds(extra: dict | None, new: dict) -> dict:
    return {**(extra or {}), **new}


def _dx_and_dy(x: Any, y: Any, y_shape: Sequence[int]) -> tuple[Any, Any]:
    """The gradient of ``y`` with respect to ``x`` given an upstream gradient ``dy`` (a constant, fed per column)."""
    with x.graph.as_default():
        dy = constant(np.ones(y_shape, dtype=y.dtype.base_dtype.as_numpy_dtype))
        (dx,) = gradients(y, x, identity(dy))
    return dx, dy


def _theoretical(x: Any, x_shape: Any, x_data: np.ndarray, dx: Any, dy: Any, y_shape: Any, extra: dict | None) -> Any:
    sess = _session()
    x_size, y_size = int(np.prod(x_shape, dtype=np.int64)), int(np.prod(y_shape, dtype=np.int64))
    row_size = int(np.prod(x_shape[1:], dtype=np.int64))  # one row of a sparse (IndexedSlices) gradient
    jacobian = np.zeros((x_size, y_size), dtype=x.dtype.base_dtype.as_numpy_dtype)
    dy_data = np.zeros(y_shape, dtype=dy.dtype.base_dtype.as_numpy_dtype)
    flat = dy_data.reshape(-1)
    if dx is None:  # y does not depend on x: the Jacobian is zero
        return jacobian
    for col in range(y_size):
        flat[col] = 1
        feeds = _feeds(extra, {x: x_data, dy: dy_data})
        if isinstance(dx, IndexedSlices):
            indices, values = sess.run([dx.indices, dx.values], feed_dict=feeds)
            for index, value in zip(indices, values, strict=True):
                jacobian[index * row_size : (index + 1) * row_size, col] += np.ravel(value)
        else:
            jacobian[:, col] = np.ravel(sess.run(dx, feed_dict=feeds))
        flat[col] = 0
    if not y_size and not isinstance(dx, IndexedSlices):
        backprop = sess.run(dx, feed_dict=_feeds(extra, {x: x_data, dy: dy_data}))
        if backprop.shape != x_data.shape:
            raise ValueError(f"Empty gradient has wrong shape: expected {x_data.shape}, got {backprop.shape}")
        if np.any(backprop):
            raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _numeric(x: Any, x_shape: Any, x_data: np.ndarray, y: Any, y_shape: Any, delta: float, extra: dict | None) -> Any:
    sess = _session()
    x_size, y_size = int(np.prod(x_shape, dtype=np.int64)), int(np.prod(y_shape, dtype=np.int64))
    y_dtype = y.dtype.base_dtype.as_numpy_dtype
    scale = np.asarray(2 * delta, dtype=y_dtype)[()]
    jacobian = np.zeros((x_size, y_size), dtype=x.dtype.base_dtype.as_numpy_dtype)
    for row in range(x_size):
        x_pos, x_neg = x_data.copy(), x_data.copy()
        x_pos.reshape(-1)[row] += delta
        x_neg.reshape(-1)[row] -= delta
        y_pos = sess.run(y, feed_dict=_feeds(extra, {x: x_pos}))
        y_neg = sess.run(y, feed_dict=_feeds(extra, {x: x_neg}))
        jacobian[row, :] = np.ravel((y_pos - y_neg) / scale)
    return jacobian


def _one(
    x: Any, x_shape: Any, dx: Any, dy: Any, y: Any, y_shape: Any, x_init_value: Any, delta: float, extra: dict | None
) -> Jacobians:
    _check_dtype(x, "x")
    _check_dtype(y, "y")
    x_shape = tuple(int(d) for d in x_shape)
    if x_init_value is not None:
        if tuple(np.shape(x_init_value)) != x_shape:
            raise ValueError(f"x_shape = {list(x_shape)}, init_data shape = {list(np.shape(x_init_value))}")
        x_data = np.asarray(x_init_value)
    else:
        x_data = np.random.random_sample(x_shape).astype(x.dtype.base_dtype.as_numpy_dtype)
    y_shape = tuple(int(d) for d in y_shape)
    return (
        _theoretical(x, x_shape, x_data, dx, dy, y_shape, extra),
        _numeric(x, x_shape, x_data, y, y_shape, delta, extra),
    )


def compute_gradient(
    x: Any,
    x_shape: Any,
    y: Any,
    y_shape: Sequence[int],
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Sequence[Any] | None = None,
    extra_feed_dict: dict | None = None,
) -> Jacobians | list[Jacobians]:
    """The theoretical and numeric Jacobians of ``y`` with respect to ``x`` (each ``x_size`` x ``y_size``).

    Args:
        x: A tensor, or a list of tensors (then ``x_shape`` and ``x_init_value`` are lists too and the result is
            a list of pairs).
        x_shape: The shape of ``x``.
        y: The output tensor.
        y_shape: The shape of ``y``.
        x_init_value: The value of ``x`` to differentiate at (default uniform random in [0, 1)).
        delta: The finite-difference step.
        init_targets: Ops run first (variable initializers).
        extra_feed_dict: Further feeds for every run.

    Raises:
        ValueError: there is no default session, or ``x_init_value``'s shape is not ``x_shape``.
        TypeError: ``x`` or ``y`` is not floating point (complex tensors are not supported here).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session():
        ...     a, b = tf.constant([3.0], tf.float64), tf.constant([5.0], tf.float64)
        ...     pairs = compute_gradient([a, b], [[1], [1]], a * b, [1])
        >>> [float(t[0, 0]) for t, _ in pairs]  # d(ab)/da = b, d(ab)/db = a, at random a and b
        [...]
    """
    if isinstance(x, list):
        pairs = [_dx_and_dy(xi, y, y_shape) for xi in x]
        for init in init_targets or ():
            init.run()
        inits = x_init_value if x_init_value is not None else [None] * len(x)
        return [
            _one(xi, shape, dx, dy, y, y_shape, init, delta, extra_feed_dict)
            for xi, shape, (dx, dy), init in zip(x, x_shape, pairs, inits, strict=True)
        ]
    for init in init_targets or ():
        init.run()
    dx, dy = _dx_and_dy(x, y, y_shape)
    return _one(x, x_shape, dx, dy, y, y_shape, x_init_value, delta, extra_feed_dict)


def compute_gradient_error(
    x: Any,
    x_shape: Any,
    y: Any,
    y_shape: Sequence[int],
    x_init_value: Any = None,
    delta: float = 1e-3,
    init_targets: Sequence[Any] | None = None,
    extra_feed_dict: dict | None = None,
) -> float:
    """The largest absolute difference between the theoretical and numeric Jacobians (over all ``x`` of a list).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session():
        ...     x = tf.constant([0.5, 1.5], dtype=tf.float64)
        ...     error = compute_gradient_error(x, [2], tf.sin(x), [2])
        >>> error < 1e-6
        True
    """
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    pairs = result if isinstance(result, list) else [result]
    error = 0.0
    for theoretical, numeric in pairs:
        if theoretical.size or numeric.size:
            error = max(error, float(np.fabs(theoretical - numeric).max()))
    return error
