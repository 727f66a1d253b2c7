"""The loss collections: ``add_loss``, ``get_losses``, ``get_regularization_loss(es)``, ``get_total_loss``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     tf.losses.add_loss(tf.constant(2.0))
    ...     tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5))
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.losses.get_total_loss()), sess.run(tf.losses.get_regularization_loss()))
    2.5 0.5
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_collection
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.constant_op import constant

__all__ = ["add_loss", "get_losses", "get_regularization_losses", "get_regularization_loss", "get_total_loss"]


def add_loss(loss: Any, loss_collection: str | None = GraphKeys.LOSSES) -> None:
    """Adds ``loss`` to ``loss_collection`` (nothing when the collection is None or empty).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.losses.add_loss(tf.constant(1.0, name="l"))
        ...     [t.name for t in tf.losses.get_losses()]
        ['l:0']
    """
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope: str | None = None, loss_collection: str = GraphKeys.LOSSES) -> list[Any]:
    """The losses in ``loss_collection`` whose names match ``scope``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     tf.losses.get_losses()
        []
    """
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope: str | None = None) -> list[Any]:
    """The tensors in ``REGULARIZATION_LOSSES`` whose names match ``scope``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _ = tf.get_variable("w", [2], regularizer=lambda w: tf.reduce_sum(w))
        ...     [t.name for t in tf.losses.get_regularization_losses()]
        ['w/Regularizer/Sum:0']
    """
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: str | None = None, name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses (a constant 0.0 when there are none).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.losses.get_regularization_loss()))
        0.0
    """
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(
    add_regularization_losses: bool = True, name: str = "total_loss", scope: str | None = None
) -> Tensor:
    """The sum of the ``LOSSES`` collection, plus the regularization losses unless told otherwise.

    Raises:
        ValueError: there is no loss to add.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     _ = tf.losses.absolute_difference([0.0], [3.0])
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.losses.get_total_loss()))
        3.0
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses to add: the LOSSES and REGULARIZATION_LOSSES collections are empty.")
    return math_ops.add_n(losses, name=name)
