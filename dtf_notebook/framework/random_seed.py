"""Graph-level and op-level random seeds (``tf.set_random_seed``, ``tf.get_seed``).

A random op carries two integer attrs, ``seed`` and ``seed2``, derived here
from the graph seed and the seed passed to the op, with TF1's rules. The pair
(0, 0) means "unseeded": the runtime then draws a fresh generator state.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     tf.set_random_seed(1)
    ...     get_seed(7)
    (1, 7)
"""

from __future__ import annotations

from dtf_notebook.framework.graph import get_default_graph

__all__ = ["set_random_seed", "get_seed"]

#: Graph seed used when only the op seed is given (TF's constant, so seeded graphs match TF's seed attrs).
DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def _truncate_seed(seed: int) -> int:
    return int(seed) % _MAXINT32


def set_random_seed(seed: int | None) -> None:
    """Sets the graph-level random seed of the default graph.

    Random ops created afterwards without an op seed get a deterministic op
    seed (the number of ops already in the graph), so a graph built the same
    way twice draws the same values.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     tf.set_random_seed(42)
        ...     g.seed
        42
    """
    get_default_graph().seed = seed


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """The ``(seed, seed2)`` pair an op should use, from the graph seed and ``op_seed``.

    Rules (TF1's): graph seed and op seed set → both; graph seed only → the
    op seed is the graph's op count; op seed only → ``(DEFAULT_GRAPH_SEED,
    op_seed)``; neither → ``(None, None)``. Seeds are taken modulo 2**31 - 1,
    and ``(0, 0)`` becomes ``(0, 2**31 - 1)`` because the kernels read (0, 0)
    as "unseeded".

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     get_seed(None), get_seed(3)
        ((None, None), (87654321, 3))
    """
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            # TF1 uses graph._last_id: the ids of ops created so far.
            op_seed = len(graph._ops)
        seeds: tuple[int | None, int | None] = (_truncate_seed(global_seed), _truncate_seed(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate_seed(op_seed))
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        return (0, _MAXINT32)
    return seeds
