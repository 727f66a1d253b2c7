"""TF's small enums of the graph API: ``tf.UnconnectedGradients``, ``tf.VariableAggregation`` and
``tf.VariableSynchronization``.

``UnconnectedGradients`` members are also strings, so ``tf.gradients(..., unconnected_gradients=
tf.UnconnectedGradients.ZERO)`` and ``unconnected_gradients="zero"`` mean the same. Variables here accept the other two
(``tf.get_variable(..., aggregation=...)``) for distribution strategies, which this package does not have: they are
recorded nowhere and change nothing, as in TF1 without a strategy.

Example:
    >>> UnconnectedGradients.ZERO == "zero", VariableAggregation(1), VariableSynchronization.ON_READ.value
    (True, <VariableAggregation.SUM: 1>, 3)
"""

from __future__ import annotations

import enum

__all__ = ["UnconnectedGradients", "VariableAggregation", "VariableSynchronization"]


class UnconnectedGradients(enum.StrEnum):
    """What ``tf.gradients`` returns for an x the ys do not depend on: None (``NONE``) or zeros (``ZERO``).

    Example:
        >>> UnconnectedGradients("none") is UnconnectedGradients.NONE
        True
    """

    NONE = "none"
    ZERO = "zero"


class VariableAggregation(enum.Enum):
    """How a distributed variable's updates from several replicas combine (TF1's names, ``ONLY_FIRST_TOWER``
    included).

    Example:
        >>> VariableAggregation.ONLY_FIRST_TOWER is VariableAggregation.ONLY_FIRST_REPLICA
        True
    """

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


class VariableSynchronization(enum.Enum):
    """When a distributed variable's replicas are synchronized.

    Example:
        >>> VariableSynchronization(2)
        <VariableSynchronization.ON_WRITE: 2>
    """

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3
