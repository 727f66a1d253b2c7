"""Helpers every array-op module uses: op name scopes, gradients, axes, and kernels' per-node plan caches.

Example:
    >>> canonical_axis(-1, 3), flat([1, [2, (3,)]])
    (2, [1, 2, 3])
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import graph_of

MAX_PLAN_CACHE = 64  # distinct input shapes remembered per node by shape-dependent kernels


# ---- building ----------------------------------------------------------------------------------
def flat(values: Sequence[Any]) -> list[Any]:
    """The leaves of nested lists/tuples, in order.

    Example:
        >>> flat([1, [2, (3, [4])], 5])
        [1, 2, 3, 4, 5]
    """
    out: list[Any] = []
    for v in values:
        if isinstance(v, list | tuple):
            out.extend(flat(v))
        else:
            out.append(v)
    return out


@contextlib.contextmanager
def op_scope(name: str | None, default: str, values: Sequence[Any]) -> Iterator[str]:
    """TF's ``name_scope(name, default, values)``: the op takes the scope's name, its converted inputs live inside.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with op_scope(None, "MyOp", [1.0]) as default, op_scope("custom", "MyOp", [1.0]) as named:
        ...         print(default, named)
        MyOp/ MyOp/custom/
    """
    graph = graph_of(flat(values))
    with graph.as_default(), graph.name_scope(name or default) as scope:
        yield scope


def dense(grad: Any) -> Any:
    """A gradient as a dense tensor (``IndexedSlices`` are summed into place).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     rows = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
        ...     type(dense(rows)).__name__
        'Tensor'
    """
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def canonical_axis(axis: int, n: int) -> int:
    """``axis`` counted from the front of ``n`` dimensions (a negative axis counts from the back).

    Example:
        >>> canonical_axis(-1, 3), canonical_axis(1, 3)
        (2, 1)
    """
    return axis + n if axis < 0 else axis


# ---- kernels -----------------------------------------------------------------------------------
def is_string(t: Tensor) -> bool:
    """String tensors run as numpy object arrays instead of torch tensors.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     is_string(tf.constant("a")), is_string(tf.constant(1.0))
        (True, False)
    """
    return t.dtype.is_string


def obj(value: Any) -> np.ndarray:
    """A numpy string result as an array: indexing an object array down to one element yields the bare bytes.

    Example:
        >>> obj(b"ab")
        array(b'ab', dtype=object)
    """
    return value if isinstance(value, np.ndarray) else np.array(value, dtype=object)


def to_list(value: Any) -> list[int]:
    """A runtime int tensor (torch or numpy) as a Python list.

    Example:
        >>> to_list(torch.tensor([1, 2])), to_list(np.array([3])), to_list((4,))
        ([1, 2], [3], [4])
    """
    return value.tolist() if isinstance(value, torch.Tensor | np.ndarray) else list(value)


def remember(cache: dict, key: Any, value: Any) -> Any:
    """Stores ``value`` under ``key``, emptying the cache first when it is full; returns ``value``.

    Example:
        >>> plans = {}
        >>> remember(plans, (2, 3), "plan"), plans
        ('plan', {(2, 3): 'plan'})
    """
    if len(cache) >= MAX_PLAN_CACHE:
        cache.clear()
    cache[key] = value
    return value


def cached(cache: dict, key: Any, make: Callable[..., Any], *args: Any) -> Any:
    """``make(*args)``, computed once per ``key`` (a kernel plans once per distinct input shape).

    Example:
        >>> plans = {}
        >>> cached(plans, (4,), lambda n: n * 2, 21), cached(plans, (4,), lambda n: n * 3, 21)
        (42, 42)
    """
    value = cache.get(key)
    return value if value is not None else remember(cache, key, make(*args))
