"""``tf.tables_initializer``: the op that initializes every lookup table of the graph (those in
``GraphKeys.TABLE_INITIALIZERS``), and TF1's older name ``tf.initialize_all_tables``.

No lookup table type is built here yet, so the collection holds whatever initializer ops a program adds to it
itself; with none, the op is a ``NoOp``, as in TF. ``Scaffold`` and ``MonitoredTrainingSession`` run the same
collection as their ``local_init_op`` part.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     tables_initializer().type
    'NoOp'
"""

from __future__ import annotations

from dtf_notebook.framework.graph import GraphKeys, get_collection
from dtf_notebook.framework.operation import Operation
from dtf_notebook.ops import identity_ops

__all__ = ["initialize_all_tables", "tables_initializer"]


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """An op that runs every op of ``GraphKeys.TABLE_INITIALIZERS`` (a ``NoOp`` when there are none).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, tf.no_op(name="fill_vocab"))
        ...     [op.name for op in tables_initializer().control_inputs]
        ['fill_vocab']
    """
    initializers = get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return identity_ops.group(*initializers, name=name)
    return identity_ops.no_op(name=name)


def initialize_all_tables(name: str = "init_all_tables") -> Operation:
    """TF1's deprecated name of :func:`tables_initializer`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     initialize_all_tables().name
        'init_all_tables'
    """
    return tables_initializer(name)
