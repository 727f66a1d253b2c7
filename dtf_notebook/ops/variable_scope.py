"""``tf.variable_scope`` and ``tf.get_variable``: named, shareable variables (TF1 semantics).

Each graph has one variable store (``graph._extra["variable_store"]``) that
maps full names to the variables ``get_variable`` created, and a per-thread
scope store (``graph._extra["variable_scope_store"]``) holding the current
:class:`VariableScope` and how often each scope name was opened (for
``default_name`` uniquification). Variable names depend only on variable
scopes; op names also get the name scope a ``variable_scope`` opens, which is
uniquified like any name scope (``foo``, ``foo_1``, ...).

This module holds the public scope API. The store lives in
:mod:`dtf_notebook.ops.variable_store`, partitioned variables in
:mod:`dtf_notebook.ops.partitioned_variables`, and ``VariableScope`` with the
per-thread scope store in :mod:`dtf_notebook.ops.pure_variable_scope`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     with tf.variable_scope("layer"):
    ...         w = tf.get_variable("w", [2, 3])
    ...     with tf.variable_scope("layer", reuse=True):
    ...         w2 = tf.get_variable("w")
    >>> w.name, w2 is w
    ('layer/w:0', True)
"""

from __future__ import annotations

import enum
from typing import Any

from dtf_notebook.framework.graph import Graph, GraphKeys, get_default_graph
from dtf_notebook.ops.partitioned_variables import PartitionedVariable, _PartitionInfo  # noqa: F401 - re-exported
from dtf_notebook.ops.pure_variable_scope import (
    VariableScope,
    _get_variable_scope_store,  # noqa: F401 - re-exported
    _PureVariableScope,
    _unique_variable_scope,
    get_variable_scope,
)
from dtf_notebook.ops.variable_store import _get_default_variable_store, _VariableStore  # noqa: F401 - re-exported

__all__ = [
    "AUTO_REUSE",
    "VariableScope",
    "variable_scope",
    "variable_op_scope",
    "get_variable_scope",
    "get_variable",
    "get_local_variable",
    "no_regularizer",
]


class _ReuseMode(enum.Enum):
    """Reuse modes besides True/None: ``AUTO_REUSE`` creates missing variables and returns existing ones."""

    AUTO_REUSE = 1


#: ``reuse=tf.AUTO_REUSE``: get_variable returns the variable when it exists and creates it otherwise.
AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_: Any) -> None:
    """A regularizer that adds no loss: turns off a scope's default regularizer for one variable.

    Example:
        >>> no_regularizer(None) is None
        True
    """
    return None


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Any = None,
    trainable: bool | None = None,
    collections: Any = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: Any = None,
    custom_getter: Any = None,
    constraint: Any = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Any:
    """Gets an existing variable ``<scope>/<name>`` or creates a new one, following the scope's ``reuse``.

    Args:
        name: Name within the current variable scope.
        shape: Shape of a new variable (or checked against an existing one).
        dtype: Element type (default: the scope's, float32).
        initializer: An initializer (called with shape, dtype, partition_info), an initializer class, or a
            Tensor/value (then ``shape`` must be None and comes from the value). Default: the scope's, else
            glorot-uniform for floats and zeros for ints, bools and strings.
        regularizer: ``fn(variable) -> loss tensor or None``; the loss goes to ``REGULARIZATION_LOSSES``.
        trainable: Add to ``TRAINABLE_VARIABLES`` (default True).
        collections: Collections of a new variable (default ``[GLOBAL_VARIABLES]``).
        caching_device: Device of the variable's read snapshot.
        partitioner: ``fn(shape=, dtype=) -> partitions per axis``: creates a :class:`PartitionedVariable`.
        validate_shape: Require a fully known initial-value shape.
        use_resource: Accepted for compatibility; variables are TF1 reference variables.
        custom_getter: ``fn(getter, name, *args, **kwargs)`` wrapping the creation.
        constraint: Projection applied by optimizers after updates.
        synchronization: Accepted for compatibility.
        aggregation: Accepted for compatibility.

    Raises:
        ValueError: creating an existing variable without reuse, reusing a missing one, a shape or dtype that
            does not match the existing variable, no shape for a new variable, or a shape with a value initializer.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
        ...         a = tf.get_variable("b", [3], initializer=tf.ones_initializer())
        ...         b = tf.get_variable("b", [3])
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(a is b, sess.run(b))
        True [1. 1. 1.]
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(),
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=trainable,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def get_local_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Any = None,
    trainable: bool = False,
    collections: Any = None,
    caching_device: Any = None,
    partitioner: Any = None,
    validate_shape: bool = True,
    use_resource: Any = None,
    custom_getter: Any = None,
    constraint: Any = None,
    synchronization: Any = None,
    aggregation: Any = None,
) -> Any:
    """Like :func:`get_variable`, but the variable goes to ``LOCAL_VARIABLES`` and is never trainable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     n = tf.get_local_variable("count", [], dtype=tf.int32)
        ...     [v.name for v in tf.local_variables()], tf.trainable_variables()
        (['count:0'], [])
    """
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(
        name,
        shape=shape,
        dtype=dtype,
        initializer=initializer,
        regularizer=regularizer,
        trainable=False,
        collections=collections,
        caching_device=caching_device,
        partitioner=partitioner,
        validate_shape=validate_shape,
        use_resource=use_resource,
        custom_getter=custom_getter,
        constraint=constraint,
        synchronization=synchronization,
        aggregation=aggregation,
    )


def _graph_from_values(values: Any) -> Graph:
    for v in values or ():
        graph = getattr(v, "graph", None)
        if isinstance(graph, Graph):
            return graph
    return get_default_graph()


class variable_scope:  # noqa: N801 - TF's public name
    """Opens a variable scope (and a name scope): a prefix and defaults for ``get_variable``.

    Args:
        name_or_scope: A name or a captured :class:`VariableScope` to re-enter.
        default_name: Used (made unique) when ``name_or_scope`` is None.
        values: Tensors passed to the op; they pick the graph.
        initializer, regularizer, caching_device, partitioner, custom_getter, dtype, constraint: Defaults for
            variables created inside (inherited by inner scopes).
        reuse: True (reuse, inherited by inner scopes), ``AUTO_REUSE``, or None/False (inherit).
        use_resource: Accepted for compatibility.
        auxiliary_name_scope: False re-enters the current name scope instead of opening a new one.

    Raises:
        TypeError: neither ``name_or_scope`` nor ``default_name`` is given, or ``name_or_scope`` has a wrong type.
        ValueError: ``reuse`` is not True/False/None/AUTO_REUSE, or ``reuse=True`` is used with ``default_name``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("foo") as scope:
        ...         v = tf.get_variable("v", [1])
        ...     with tf.variable_scope(scope, reuse=True):
        ...         c = tf.constant(1.0, name="c")
        ...         v1 = tf.get_variable("v", [1])
        >>> v1 is v, c.op.name
        (True, 'foo_1/c')
    """

    def __init__(
        self,
        name_or_scope: str | VariableScope | None,
        default_name: str | None = None,
        values: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        reuse: Any = None,
        dtype: Any = None,
        use_resource: Any = None,
        constraint: Any = None,
        auxiliary_name_scope: bool = True,
    ) -> None:
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None  # non-inheriting scopes do not exist: False means "inherit", like None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(f"The auxiliary_name_scope must be `True` or `False`, while get {auxiliary_name_scope}")
        if name_or_scope is not None and not isinstance(name_or_scope, VariableScope | str):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        if name_or_scope is None and reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._graph = _graph_from_values(values)
        self._auxiliary_name_scope = auxiliary_name_scope
        self._scope_args = {
            "initializer": initializer,
            "regularizer": regularizer,
            "caching_device": caching_device,
            "partitioner": partitioner,
            "custom_getter": custom_getter,
            "dtype": dtype,
            "use_resource": use_resource,
            "constraint": constraint,
        }
        self._reuse = reuse
        # One entry per active `with`, so the same object may be entered again while open.
        self._entered: list[tuple[Any, Any, Any]] = []

    def __enter__(self) -> VariableScope:
        graph_cm = self._graph.as_default()
        graph_cm.__enter__()
        name_cm = pure = None
        try:
            name_cm, scope_name = self._enter_name_scope()
            pure = self._pure_scope(scope_name)
            scope = pure.__enter__()
        except BaseException:
            if name_cm is not None:
                name_cm.__exit__(None, None, None)
            graph_cm.__exit__(None, None, None)
            raise
        self._entered.append((graph_cm, name_cm, pure))
        return scope

    def _enter_name_scope(self) -> tuple[Any, str | None]:
        """Opens the name scope of this block; returns its context manager (or None) and the scope string."""
        graph = self._graph
        if not self._auxiliary_name_scope:
            current = graph.get_name_scope()
            name_cm = graph.name_scope(current + "/" if current else "")
        elif isinstance(self._name_or_scope, str):
            name_cm = graph.name_scope(self._name_or_scope) if self._name_or_scope else None
        elif isinstance(self._name_or_scope, VariableScope):
            last = self._name_or_scope.name.split("/")[-1]
            name_cm = graph.name_scope(last) if last else None
        else:
            name_cm = graph.name_scope(self._default_name)
        if name_cm is None:
            return None, None
        return name_cm, name_cm.__enter__()

    def _pure_scope(self, scope_name: str | None) -> _PureVariableScope:
        args = self._scope_args
        if self._name_or_scope is None:
            unique = _unique_variable_scope(self._default_name)
            return _PureVariableScope(unique, old_name_scope=scope_name, **args)
        if scope_name is None:  # the root scope ("") re-entered: no name scope of its own
            return _PureVariableScope(self._name_or_scope, reuse=self._reuse, **args)
        if isinstance(self._name_or_scope, str):
            old_name_scope = scope_name
        else:
            old_name_scope = self._name_or_scope.original_name_scope
        return _PureVariableScope(self._name_or_scope, reuse=self._reuse, old_name_scope=old_name_scope, **args)

    def __exit__(self, *exc: Any) -> None:
        graph_cm, name_cm, pure = self._entered.pop()
        try:
            pure.__exit__(*exc)
        finally:
            try:
                if name_cm is not None:
                    name_cm.__exit__(*exc)
            finally:
                graph_cm.__exit__(*exc)


def variable_op_scope(
    values: Any, name_or_scope: str | VariableScope | None, default_name: str | None = None, **kwargs: Any
) -> variable_scope:
    """Deprecated TF1 spelling of ``variable_scope(name_or_scope, default_name, values, ...)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_op_scope([], None, default_name="op") as scope:
        ...         print(scope.name)
        op
    """
    return variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs)
