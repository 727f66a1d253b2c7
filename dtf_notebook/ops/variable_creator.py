"""``tf.variable_creator_scope``: functions that take over the creation of every variable made in a block
(``tf.Variable(...)`` and ``tf.get_variable``'s new variables).

A creator is called as ``creator(next_creator, **kwargs)`` with the keyword arguments of ``tf.Variable``
(``initial_value``, ``trainable``, ``name``, ``dtype``, ...); it may change them, call ``next_creator(**kwargs)`` (the
creator of the enclosing scope, or the plain constructor), or return a variable of its own. The innermost scope's
creator is called first. As in TF1, the stack belongs to the default graph.

Example:
    >>> import dtf_notebook as tf
    >>> def frozen(next_creator, **kwargs):
    ...     kwargs["trainable"] = False
    ...     return next_creator(**kwargs)
    >>> with tf.Graph().as_default():
    ...     with variable_creator_scope(frozen):
    ...         v = tf.Variable(1.0, name="v")
    ...         w = tf.get_variable("w", [2])
    ...     len(tf.trainable_variables()), len(tf.global_variables())
    (0, 2)
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook.framework.graph import get_default_graph

__all__ = ["variable_creator_scope"]

_STACK = "variable_creator_stack"


class VariableMeta(type):
    """The metaclass of ``tf.Variable``: constructing one goes through the creators of the default graph's
    :func:`variable_creator_scope` stack (a plain construction when there are none).

    Example:
        >>> class Plain(metaclass=VariableMeta):
        ...     def __init__(self, initial_value=None):
        ...         self.value = initial_value
        >>> Plain(3).value
        3
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        creators = get_default_graph()._extra.get(_STACK)
        if not creators:
            return super().__call__(*args, **kwargs)
        bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        named = {k: v for k, v in bound.arguments.items() if k != "self"}
        plain = super().__call__

        def create(**kw: Any) -> Any:
            return plain(**kw)

        for creator in creators:  # outermost first: the innermost ends up called first
            create = _chain(creator, create)
        return create(**named)


def _chain(creator: Callable[..., Any], next_creator: Callable[..., Any]) -> Callable[..., Any]:
    def create(**kwargs: Any) -> Any:
        return creator(next_creator, **kwargs)

    return create


@contextlib.contextmanager
def variable_creator_scope(variable_creator: Callable[..., Any]) -> Iterator[None]:
    """Variables created in the block are made by ``variable_creator(next_creator, **kwargs)`` (see the module doc).

    Example:
        >>> import dtf_notebook as tf
        >>> names = []
        >>> def record(next_creator, **kwargs):
        ...     names.append(kwargs["name"])
        ...     return next_creator(**kwargs)
        >>> with tf.Graph().as_default(), tf.variable_creator_scope(record):
        ...     _ = tf.Variable(0.0, name="step")
        >>> names
        ['step']
    """
    stack = get_default_graph()._extra.setdefault(_STACK, [])
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.pop()
