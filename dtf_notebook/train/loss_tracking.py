"""Which tensor a graph's training minimizes: recorded by the optimizers, read by the progress bar.

Every ``Optimizer.compute_gradients(loss)`` (and so every ``minimize(loss)``) records ``loss`` on its
graph. TF1 keeps no such record, so it lives beside the graph's collections, not in one of them:
``tf.get_collection(tf.GraphKeys.LOSSES)`` and the graph's collection keys stay exactly what TF1 gives
(an exported meta graph too). :func:`training_loss` picks the loss a progress bar shows.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(3.0, name="w")
    ...     loss = tf.square(w, name="loss")
    ...     train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    ...     training_loss().name, tf.get_collection(tf.GraphKeys.LOSSES)
    ('loss:0', [])
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.framework.tensor import Tensor

__all__ = ["minimized_losses", "record_minimized_loss", "training_loss"]

_KEY = "minimized_losses"  # in graph._extra, the per-graph state modules keep outside the collections


def record_minimized_loss(loss: Tensor) -> None:
    """Notes that an optimizer differentiates ``loss`` (once per tensor), on the loss's own graph.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     loss = tf.constant(1.0, name="loss")
        ...     record_minimized_loss(loss); record_minimized_loss(loss)
        ...     [t.name for t in minimized_losses(g)]
        ['loss:0']
    """
    recorded = loss.graph._extra.setdefault(_KEY, [])
    if not any(t is loss for t in recorded):
        recorded.append(loss)


def minimized_losses(graph: Graph | None = None) -> list[Tensor]:
    """The tensors optimizers were asked to minimize in ``graph`` (default: the default graph), oldest first.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     minimized_losses()
        []
    """
    graph = graph if graph is not None else get_default_graph()
    return list(graph._extra.get(_KEY, ()))


def training_loss(graph: Graph | None = None) -> Any:
    """The loss a progress bar shows for ``graph`` (default: the default graph), or None when that is unclear.

    The one tensor optimizers minimize; else (none minimized, or several different ones, like a GAN's two
    losses or one loss per tower) the graph's only ``LOSSES`` collection member; else None. Showing one of
    several minimized losses would read as the training's loss when it is not, so none is picked.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.Variable(1.0, name="a"), tf.Variable(2.0, name="b")
        ...     opt = tf.train.GradientDescentOptimizer(0.1)
        ...     ops = [opt.minimize(tf.square(a, name="d_loss")), opt.minimize(tf.square(b, name="g_loss"))]
        ...     print(training_loss())
        ...     tf.add_to_collection(tf.GraphKeys.LOSSES, tf.add(a, b, name="total"))
        ...     print(training_loss().name)
        None
        total:0
    """
    graph = graph if graph is not None else get_default_graph()
    minimized = minimized_losses(graph)
    if len(minimized) == 1:
        return minimized[0]
    losses = graph.get_collection(GraphKeys.LOSSES)
    return losses[0] if len(losses) == 1 else None
