"""Variable scopes without their name scopes: the ``VariableScope`` object and the current one per thread.

A :class:`VariableScope` holds a scope's name (the prefix of variable names) and the defaults
``get_variable`` uses inside it; ``get_variable`` fills them in before calling the graph's variable
store. Each graph has a per-thread scope store (``graph._extra["variable_scope_store"]``) holding the
current scope and how often each scope name was opened (for ``default_name`` uniquification);
``_PureVariableScope`` enters a scope in it and restores it on exit. ``tf.variable_scope``
(:mod:`dtf_notebook.ops.variable_scope`) adds the name scope.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     with _PureVariableScope("enc") as scope:
    ...         inner = get_variable_scope()
    ...     outer = get_variable_scope()
    >>> inner is scope, scope.name, outer.name
    (True, 'enc', '')
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import Graph, GraphKeys, get_collection, get_default_graph
from dtf_notebook.ops.variable_store import _VariableStore


class VariableScope:
    """The defaults ``get_variable`` uses inside a ``variable_scope``: name prefix, reuse, initializer, ...

    Attributes:
        name: The scope's name, the prefix of variable names (no trailing slash).
        original_name_scope: The name scope opened when the scope was first entered (ends in ``/``).
        reuse: True, False (only the root scope), or ``AUTO_REUSE``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("enc", initializer=tf.zeros_initializer()) as scope:
        ...         pass
        >>> scope.name, scope.original_name_scope, scope.reuse
        ('enc', 'enc/', False)
    """

    def __init__(
        self,
        reuse: Any,
        name: str = "",
        initializer: Any = None,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        custom_getter: Any = None,
        name_scope: str = "",
        dtype: Any = dtypes.float32,
        use_resource: Any = None,
        constraint: Any = None,
    ) -> None:
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    regularizer = property(lambda self: self._regularizer)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        """Makes ``get_variable`` in this scope (and scopes opened inside it) reuse existing variables."""
        self._reuse = True

    def set_initializer(self, initializer: Any) -> None:
        """Sets the default initializer."""
        self._initializer = initializer

    def set_dtype(self, dtype: Any) -> None:
        """Sets the default dtype."""
        self._dtype = dtype

    def set_use_resource(self, use_resource: Any) -> None:
        """Recorded for API compatibility: variables here are always TF1 reference variables."""
        self._use_resource = use_resource

    def set_regularizer(self, regularizer: Any) -> None:
        """Sets the default regularizer."""
        self._regularizer = regularizer

    def set_caching_device(self, caching_device: Any) -> None:
        """Sets the default caching device."""
        self._caching_device = caching_device

    def set_partitioner(self, partitioner: Any) -> None:
        """Sets the default partitioner."""
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter: Any) -> None:
        """Sets the default custom getter."""
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list[Any]:
        """Items of collection ``name`` whose names start with this scope's name."""
        return get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self) -> list[Any]:
        """This scope's trainable variables."""
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list[Any]:
        """This scope's global variables."""
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list[Any]:
        """This scope's local variables."""
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(
        self,
        var_store: _VariableStore,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        reuse: Any = None,
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
        """Gets or creates ``<scope name>/<name>`` in ``var_store`` with this scope's defaults filled in."""
        regularizer = self._regularizer if regularizer is None else regularizer
        caching_device = self._caching_device if caching_device is None else caching_device
        partitioner = self._partitioner if partitioner is None else partitioner
        custom_getter = self._custom_getter if custom_getter is None else custom_getter
        reuse = self._reuse if reuse is None else reuse
        use_resource = self._use_resource if use_resource is None else use_resource
        full_name = f"{self._name}/{name}" if self._name else name
        # Variable names depend on variable scopes only, so the name scope is reset while creating.
        with get_default_graph().name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = convert_to_tensor(initializer).dtype
                if init_dtype is not dtypes.as_dtype(dtype):
                    raise ValueError(
                        f"Initializer type '{init_dtype}' and explicit dtype '{dtypes.as_dtype(dtype)}' don't match."
                    )
            initializer = self._initializer if initializer is None else initializer
            constraint = self._constraint if constraint is None else constraint
            dtype = self._dtype if dtype is None else dtype
            return var_store.get_variable(
                full_name,
                shape=shape,
                dtype=dtype,
                initializer=initializer,
                regularizer=regularizer,
                reuse=reuse,
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

    def __repr__(self) -> str:
        return f"<VariableScope name={self._name!r} reuse={self._reuse!r}>"


class _VariableScopeStore(threading.local):
    """One thread's current variable scope and the open counts of scope names (for unique default names)."""

    def __init__(self) -> None:
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count: dict[str, int] = {}

    def open_variable_scope(self, scope_name: str) -> None:
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name: str | None) -> None:
        # Sub-scopes of a closed scope restart their count when the scope is opened again.
        prefix = None if scope_name is None else scope_name + "/"
        for key in self.variable_scopes_count:
            if prefix is None or key.startswith(prefix):
                self.variable_scopes_count[key] = 0

    def variable_scope_count(self, scope_name: str) -> int:
        return self.variable_scopes_count.get(scope_name, 0)


def _get_variable_scope_store(graph: Graph | None = None) -> _VariableScopeStore:
    graph = graph or get_default_graph()
    store = graph._extra.get("variable_scope_store")
    if store is None:
        store = graph._extra.setdefault("variable_scope_store", _VariableScopeStore())
    return store


def get_variable_scope() -> VariableScope:
    """The current variable scope of the default graph (in this thread).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.variable_scope("a"):
        ...         with tf.variable_scope("b"):
        ...             print(tf.get_variable_scope().name)
        a/b
    """
    return _get_variable_scope_store().current_scope


def _maybe_wrap_custom_getter(custom_getter: Any, old_getter: Any) -> Any:
    """An inner scope's getter calls the outer scope's getter, which calls the true getter."""
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter: Any, *args: Any, **kwargs: Any) -> Any:
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped_custom_getter


class _PureVariableScope:
    """Enters a VariableScope (no name scope): the scope store's current scope and counts, restored on exit."""

    def __init__(
        self,
        name_or_scope: str | VariableScope,
        reuse: Any = None,
        old_name_scope: str | None = None,
        constraint: Any = None,
        **defaults: Any,
    ) -> None:
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._old_name_scope = old_name_scope
        self._constraint = constraint
        # Defaults (initializer, regularizer, caching_device, partitioner, custom_getter, dtype, use_resource)
        # set on the entered scope where given; None keeps the base scope's, and dtype is float32 if left out.
        self._overrides = {"dtype": dtypes.float32, **defaults}
        self._store = _get_variable_scope_store()

    def _apply_overrides(self, scope: VariableScope, outer_getter: Any) -> VariableScope:
        for attr, value in self._overrides.items():
            if value is not None:
                if attr == "custom_getter":
                    value = _maybe_wrap_custom_getter(value, outer_getter)
                getattr(scope, "set_" + attr)(value)
        return scope

    def __enter__(self) -> VariableScope:
        store = self._store
        self._old = store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            # Jumping to a captured scope: a copy of it (reuse is the captured one's, not the parent's).
            base = self._name_or_scope
            self._new_name = base.name
            reuse = base.reuse if not self._reuse else self._reuse
            name_scope = base.original_name_scope
            store.open_variable_scope(self._new_name)
            self._old_subscopes = dict(store.variable_scopes_count)
        else:
            base = self._old
            self._new_name = f"{base.name}/{self._name_or_scope}" if base.name else self._name_or_scope
            reuse = self._reuse or base.reuse  # reuse is inherited by sub-scopes
            name_scope = self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            store.open_variable_scope(self._new_name)
        defaults = VariableScope(
            reuse,
            name=self._new_name,
            initializer=base.initializer,
            regularizer=base.regularizer,
            caching_device=base.caching_device,
            partitioner=base.partitioner,
            dtype=base.dtype,
            custom_getter=base.custom_getter,
            name_scope=name_scope,
            use_resource=base.use_resource,
            constraint=self._constraint,
        )
        scope = self._apply_overrides(defaults, base.custom_getter)
        store.current_scope = scope
        self._entered = scope
        return scope

    def __exit__(self, *exc: Any) -> None:
        store = self._store
        if store.current_scope is not self._entered:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            store.variable_scopes_count = self._old_subscopes
        else:
            store.close_variable_subscopes(self._new_name)
        store.current_scope = self._old


def _unique_variable_scope(prefix: str) -> str:
    """``prefix``, or ``prefix_N`` with the first N whose scope was not opened yet in the current scope."""
    store = _get_variable_scope_store()
    current = store.current_scope
    name = f"{current.name}/{prefix}" if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"
