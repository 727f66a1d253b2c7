"""Element-wise losses of ``tf.nn`` built from primitive ops: logistic (sigmoid) and Poisson losses.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0], logits=[0.0]).op.name
    'logistic_loss'
"""

from __future__ import annotations

import math
from typing import Any

from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.nn.common import sentinel_check


def sigmoid_cross_entropy_with_logits(
    _sentinel: Any = None, labels: Any = None, logits: Any = None, name: str | None = None
) -> Tensor:
    """Element-wise logistic loss ``-labels*log(sigmoid(logits)) - (1-labels)*log(1-sigmoid(logits))``.

    Computed in TF's stable form ``max(x, 0) - x * z + log(1 + exp(-abs(x)))``.

    Raises:
        ValueError: positional arguments, or ``labels`` and ``logits`` of different shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, 100.0])
        ...     with tf.Session() as sess:
        ...         print(sess.run(loss).round(4))
        [  0.6931 100.    ]
    """
    sentinel_check(_sentinel, "sigmoid_cross_entropy_with_logits")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
        zeros = array_ops.zeros_like(logits)
        cond = math_ops.greater_equal(logits, zeros)
        relu_logits = math_ops.where(cond, logits, zeros)
        neg_abs_logits = math_ops.where(cond, math_ops.negative(logits), logits)
        return math_ops.add(
            math_ops.subtract(relu_logits, math_ops.multiply(logits, labels)),
            math_ops.log1p(math_ops.exp(neg_abs_logits)),
            name=scope,
        )


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False, name: str | None = None) -> Tensor:
    """Poisson negative log-likelihood ``exp(log_input) - log_input * targets`` (+ Stirling's term if full).

    Raises:
        ValueError: ``targets`` and ``log_input`` have different shapes.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.log_poisson_loss([2.0], [0.0])))
        [1.]
    """
    with name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, dtype=log_input.dtype, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(f"log_input and targets must have the same shape ({log_input.shape} vs {targets.shape})")
        result = math_ops.subtract(math_ops.exp(log_input), math_ops.multiply(log_input, targets))
        if not compute_full_loss:
            return result
        # Stirling's approximation of log(targets!), used only where targets > 1 (as TF does).
        stirling = math_ops.add(
            math_ops.subtract(math_ops.multiply(targets, math_ops.log(targets)), targets),
            math_ops.multiply(0.5, math_ops.log(math_ops.multiply(2 * math.pi, targets))),
        )
        zeros = array_ops.zeros_like(targets)
        ones = array_ops.ones_like(targets)
        small = math_ops.logical_and(math_ops.greater_equal(targets, zeros), math_ops.less_equal(targets, ones))
        return math_ops.add(result, math_ops.where(small, zeros, stirling), name=scope)
