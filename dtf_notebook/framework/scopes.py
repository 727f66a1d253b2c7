"""TF1's ``tf.init_scope`` (build outside the control flow and control dependencies around you) and the deprecated
``tf.op_scope``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.constant(1.0, name="a")
    ...     with tf.name_scope("outer"), tf.control_dependencies([a]):
    ...         with init_scope():
    ...             b = tf.constant(2.0, name="b")
    ...     b.op.name, b.op.control_inputs
    ('outer/b', [])
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from dtf_notebook.framework.graph import get_default_graph, name_scope

__all__ = ["init_scope", "op_scope"]


@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Builds the ops of the block as if outside every ``tf.cond``/``tf.while_loop`` and ``tf.control_dependencies``
    block: what TF uses to create variables and their initializers from inside a loop body or a cond branch.

    The name scope stays; while a ``tf.data`` function is traced, the ops go into the graph the function comes from
    (its outermost graph), as TF lifts them out of function-building graphs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant(1.0)
        ...     def body():
        ...         with init_scope():
        ...             return tf.constant(5.0, name="lifted")
        ...     y = tf.cond(x > 0, body, lambda: x)
        ...     lifted = tf.get_default_graph().get_operation_by_name("cond/lifted")
        >>> lifted._control_flow_context is None  # brought into the branch through a Switch
        True
    """
    graph = get_default_graph()
    outer = graph
    while getattr(outer, "building_function", False) and getattr(outer, "outer_graph", None) is not None:
        outer = outer.outer_graph
    scope = graph.get_name_scope()
    context = outer._get_control_flow_context()
    with outer.as_default(), outer.name_scope(scope + "/" if scope else None), outer.control_dependencies(None):
        outer._set_control_flow_context(None)
        try:
            yield
        finally:
            outer._set_control_flow_context(context)


@contextlib.contextmanager
def op_scope(values: Any, name: str | None, default_name: str | None = None) -> Iterator[str]:
    """TF1's deprecated ``tf.op_scope(values, name, default_name)``: ``tf.name_scope(name, default_name, values)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with op_scope([], None, "default") as scope:
        ...         print(scope)
        default/
    """
    with name_scope(name, default_name, values) as scope:
        yield scope
