"""``tf.AggregationMethod``: how ``tf.gradients`` adds up the gradients that several consumers send one tensor.

TF1 offers three methods that give the same sum up to float rounding (``ADD_N`` in one ``AddN`` op,
``EXPERIMENTAL_TREE`` pairwise, ``EXPERIMENTAL_ACCUMULATE_N`` in place). Every value is accepted by
``tf.gradients`` and ``Optimizer.minimize``; the gradient builder adds the gradients with ``AddN``.

Example:
    >>> import dtf_notebook as tf
    >>> tf.AggregationMethod.DEFAULT == tf.AggregationMethod.ADD_N
    True
"""

from __future__ import annotations

__all__ = ["AggregationMethod"]


class AggregationMethod:
    """The names of TF1's gradient aggregation methods (plain integers, as in TF).

    Example:
        >>> AggregationMethod.EXPERIMENTAL_TREE
        1
    """

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2
    #: Every value ``tf.gradients`` accepts.
    ALL = (ADD_N, EXPERIMENTAL_TREE, EXPERIMENTAL_ACCUMULATE_N)
