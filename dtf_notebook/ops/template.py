"""``tf.make_template``: a function that creates its variables on its first call and shares them afterwards (TF1's
``Template``).

The first call opens a variable scope (``name_``, made unique, or ``unique_name_`` as is) and remembers it; every
later call re-enters that scope with ``reuse=True``, so ``tf.get_variable`` returns the same variables. A later call
that creates a new trainable variable (a ``tf.Variable`` where ``tf.get_variable`` was meant) is an error, as in TF.

Example:
    >>> import dtf_notebook as tf
    >>> def scale(x):
    ...     w = tf.get_variable("w", [], initializer=tf.constant_initializer(3.0))
    ...     return x * w
    >>> with tf.Graph().as_default():
    ...     layer = make_template("scale", scale)
    ...     a, b = layer(1.0), layer(2.0)
    ...     [v.name for v in tf.global_variables()]
    ['scale/w:0']
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.graph import GraphKeys, get_collection, get_collection_ref
from dtf_notebook.ops.pure_variable_scope import VariableScope, _PureVariableScope, _unique_variable_scope
from dtf_notebook.ops.variable_scope import variable_scope

__all__ = ["make_template"]

_log = logging.getLogger(__name__)


class Template:
    """A function wrapped so that its variables are created once (see :func:`make_template`).

    Args:
        name: The scope name (made unique unless ``unique_name`` is given).
        func: The function.
        create_scope_now: Open the scope now rather than at the first call.
        unique_name: A scope name used as is.
        custom_getter: A custom getter for the scope.

    Raises:
        ValueError: ``name`` is None.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     t = Template("t", lambda: tf.get_variable("v", [2]), create_scope_now=True)
        ...     t().name, t.variable_scope_name
        ('t/v:0', 't/')
    """

    def __init__(
        self,
        name: str,
        func: Callable[..., Any],
        create_scope_now: bool = False,
        unique_name: str | None = None,
        custom_getter: Any = None,
    ) -> None:
        if name is None:
            raise ValueError("name cannot be None.")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variable_scope: VariableScope | None = None
        if create_scope_now:
            scope_name = unique_name or _unique_variable_scope(name)
            with _PureVariableScope(scope_name, custom_getter=custom_getter) as vs:
                self._variable_scope = vs
        self._variables_created = False
        self._first_call = True

    def _call_func(self, args: tuple, kwargs: dict) -> Any:
        if not self._variables_created:
            self._first_call = False
            try:
                result = self._func(*args, **kwargs)
            except BaseException:
                self._first_call = True
                raise
            self._variables_created = True
            return result
        global_before = len(get_collection_ref(GraphKeys.GLOBAL_VARIABLES))
        trainable_before = len(get_collection_ref(GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        trainable = get_collection_ref(GraphKeys.TRAINABLE_VARIABLES)
        if len(trainable) != trainable_before:
            raise ValueError(
                "Trainable variable created when calling a template after the first time, perhaps you used "
                f"tf.Variable when you meant tf.get_variable: {trainable[trainable_before:]}"
            )
        created = get_collection_ref(GraphKeys.GLOBAL_VARIABLES)[global_before:]
        if created:
            _log.info(
                "New variables created when calling a template after the first time, perhaps you used "
                "tf.Variable when you meant tf.get_variable: %s",
                created,
            )
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._variable_scope is not None:
            with variable_scope(self._variable_scope, reuse=not self._first_call):
                return self._call_func(args, kwargs)
        with variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as vs:
            self._variable_scope = vs
            return self._call_func(args, kwargs)

    name = property(lambda self: self._name, doc="The name the template was made with.")
    func = property(lambda self: self._func, doc="The wrapped function.")
    variable_scope = property(lambda self: self._variable_scope, doc="The scope (None before it is opened).")
    var_scope = variable_scope

    @property
    def variable_scope_name(self) -> str | None:
        """The scope's name ending in ``/`` (None before it is opened)."""
        if self._variable_scope is None:
            return None
        name = self._variable_scope.name
        return name if not name or name.endswith("/") else name + "/"

    def _collection(self, key: str) -> list[Any]:
        return get_collection(key, self.variable_scope_name) if self._variables_created else []

    @property
    def global_variables(self) -> list[Any]:
        """The global variables in the template's scope."""
        return self._collection(GraphKeys.GLOBAL_VARIABLES)

    @property
    def local_variables(self) -> list[Any]:
        """The local variables in the template's scope."""
        return self._collection(GraphKeys.LOCAL_VARIABLES)

    @property
    def trainable_variables(self) -> list[Any]:
        """The trainable variables in the template's scope."""
        return self._collection(GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self) -> list[Any]:
        """The global variables of the scope that are not trainable."""
        trainable = set(self.trainable_variables)
        return [v for v in self.global_variables if v not in trainable]

    @property
    def variables(self) -> list[Any]:
        """The global and local variables in the template's scope."""
        return self.global_variables + self.local_variables

    weights = variables
    trainable_weights = trainable_variables
    non_trainable_weights = non_trainable_variables


def make_template(
    name_: str,
    func_: Callable[..., Any],
    create_scope_now_: bool = False,
    unique_name_: str | None = None,
    custom_getter_: Any = None,
    **kwargs: Any,
) -> Template:
    """``func_`` wrapped so that the variables it gets with ``tf.get_variable`` are created on the first call and
    shared by every later call (TF1's ``tf.make_template``).

    Args:
        name_: The variable scope's name (made unique: ``name_``, ``name__1``, ...).
        func_: The function; ``kwargs`` are bound to it.
        create_scope_now_: Open the scope when the template is made, not at its first call.
        unique_name_: A scope name used as is, instead of ``name_``.
        custom_getter_: A custom getter for the scope.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     dense = tf.make_template("dense", lambda x, units: tf.layers.dense(x, units), units=2)
        ...     y1, y2 = dense(tf.ones([1, 3])), dense(tf.zeros([4, 3]))
        ...     len(tf.trainable_variables()), y2.shape.as_list()
        (2, [4, 2])
    """
    func = functools.partial(func_, **kwargs) if kwargs else func_
    return Template(name_, func, create_scope_now_, unique_name_, custom_getter_)
