"""The global step: ``tf.train.get_global_step``, ``create_global_step``, ``get_or_create_global_step``.

The global step is an int64 scalar variable named ``global_step`` in the
``GLOBAL_VARIABLES`` and ``GLOBAL_STEP`` collections. Optimizers increment it
in ``minimize(global_step=...)``; hooks and savers read it.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.get_or_create_global_step()
    ...     with tf.Session() as sess:
    ...         sess.run(step.initializer)
    ...         print(step.name, tf.train.global_step(sess, step))
    global_step:0 0
"""

from __future__ import annotations

import logging
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import init_ops, math_ops, state_ops, variable_scope
from dtf_notebook.ops.variables import Variable

__all__ = ["global_step", "get_global_step", "create_global_step", "get_or_create_global_step", "assert_global_step"]

#: Collection caching the tensor that reads the global step (see ``_get_or_create_global_step_read``).
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"

_log = logging.getLogger(__name__)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The global step's current value as a Python int.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     step = tf.train.create_global_step()
        ...     with tf.Session() as sess:
        ...         _ = sess.run(tf.assign(step, 7))
        ...         print(tf.train.global_step(sess, step))
        7
    """
    return int(sess.run(global_step_tensor))


def get_global_step(graph: Graph | None = None) -> Any:
    """The global step variable of ``graph`` (default graph), or None when there is none.

    Looks in the ``GLOBAL_STEP`` collection, then for a tensor named ``global_step:0``.

    Raises:
        TypeError: the found global step is not an integer scalar Variable or Tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     print(tf.train.get_global_step())
        ...     step = tf.train.create_global_step()
        ...     print(tf.train.get_global_step() is step)
        None
        True
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        _log.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(step)
    return step


def create_global_step(graph: Graph | None = None) -> Variable:
    """Creates the global step: an int64 scalar variable ``global_step``, zero-initialised, not trainable.

    It is created outside any name scope but, as in TF, inside the open variable scope: within
    ``tf.variable_scope("model")`` it is ``model/global_step`` (TF's ptb_word_lm names it so in checkpoints).

    Raises:
        ValueError: the graph already has a global step.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("model"), tf.name_scope("inner"):
        ...         step = tf.train.create_global_step()
        >>> step.name, step.dtype, step.trainable
        ('model/global_step:0', tf.int64, False)
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    # TF leaves the name scope (name_scope(None)) but not the variable scope.
    with graph.as_default() as g, g.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP,
            shape=[],
            dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Graph | None = None) -> Any:
    """The global step of ``graph``, created first if it does not exist.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     a = tf.train.get_or_create_global_step()
        ...     b = tf.train.get_or_create_global_step()
        >>> a is b
        True
    """
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def assert_global_step(global_step_tensor: Any) -> None:
    """Checks that ``global_step_tensor`` can be a global step: an integer scalar Variable or Tensor.

    Raises:
        TypeError: it is not a Variable/Tensor, not of an integer type, or not a scalar.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.train.assert_global_step(tf.constant(3))
        ...     try:
        ...         tf.train.assert_global_step(tf.constant(3.0))
        ...     except TypeError as e:
        ...         print(e)
        Existing "global_step" does not have integer type: <dtype: 'float32'>
    """
    if not isinstance(global_step_tensor, Variable | Tensor):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.')
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype}')
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def _get_global_step_read(graph: Graph | None = None) -> Tensor | None:
    """The cached tensor reading the global step, or None."""
    graph = graph or get_default_graph()
    reads = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(reads) > 1:
        raise RuntimeError(f"There are multiple items in collection {GLOBAL_STEP_READ_KEY}. There should be only one.")
    return reads[0] if reads else None


def _get_or_create_global_step_read(graph: Graph | None = None) -> Tensor | None:
    """A tensor holding the global step's value at the start of a step (its initial value if uninitialised).

    Hooks fetch it next to a train op that increments the step, and see the value before the increment.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     step = tf.train.create_global_step()
        ...     read = _get_or_create_global_step_read()
        ...     with tf.Session() as sess:
        ...         print(sess.run(read))
        0
    """
    graph = graph or get_default_graph()
    read = _get_global_step_read(graph)
    if read is not None:
        return read
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default() as g, g.name_scope(None), g.name_scope(step.op.name + "/"):
        if isinstance(step, Variable):
            value = state_ops.value_or_initial(step, step.initial_value)
        else:
            value = step
        # `+ 0` makes a copy, so the read never aliases the variable's buffer that the step updates in place.
        read = math_ops.add(value, 0, name="add")
        g.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return _get_global_step_read(graph)


def _increment_global_step(increment: Any, graph: Graph | None = None) -> Tensor:
    """``assign_add(global_step, increment)`` that runs after the step's read (see above).

    Raises:
        ValueError: the graph has no global step.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     step = tf.train.create_global_step()
        ...     inc = _increment_global_step(2)
        ...     with tf.Session() as sess:
        ...         sess.run(step.initializer)
        ...         print(sess.run(inc))
        2
    """
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        raise ValueError(
            "Global step tensor should be created by tf.train.get_or_create_global_step before calling increment."
        )
    read = _get_or_create_global_step_read(graph)
    with graph.as_default() as g, g.name_scope(None), g.name_scope(step.op.name + "/"):
        with g.control_dependencies([read]):
            return state_ops.assign_add(step, increment)
