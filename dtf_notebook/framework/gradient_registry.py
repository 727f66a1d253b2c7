"""Gradient functions registered by name: ``tf.RegisterGradient``, ``tf.no_gradient`` (``tf.NotDifferentiable``) and
the lookup ``tf.gradients`` makes, which honours ``Graph.gradient_override_map``.

An op's own gradient is its registry entry's (:mod:`~dtf_notebook.framework.op_registry`). A name registered here is
either an op type without one, or a name an override map points op types to: inside
``with g.gradient_override_map({"Square": "MySquareGrad"}):`` each ``Square`` op created gets the attr
``_gradient_op_type = "MySquareGrad"`` (as in TF, so it travels with the graph def), and its gradient is the function
registered under that name.

Example:
    >>> import dtf_notebook as tf
    >>> @RegisterGradient("DocDoubleGrad")
    ... def _double_grad(op, grad):
    ...     return [2.0 * grad]
    >>> with tf.Graph().as_default() as g:
    ...     x = tf.constant(3.0)
    ...     with g.gradient_override_map({"Identity": "DocDoubleGrad"}):
    ...         y = tf.identity(x)
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.gradients(y, x)))
    [np.float32(2.0)]
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import op_registry

__all__ = ["NoGradient", "NotDifferentiable", "RegisterGradient", "no_gradient"]

#: The attr naming the registered gradient an op uses instead of its own (TF's name).
OVERRIDE_ATTR = "_gradient_op_type"

_lock = threading.Lock()
_NAMED: dict[str, Any] = {}  # name -> gradient function, or op_registry.NOT_DIFFERENTIABLE
_WHERE: dict[str, str] = {}  # name -> where it was registered (for the duplicate error)


def _has_own_gradient(op_type: str) -> bool:
    try:
        return op_registry.get(op_type).grad is not None
    except errors.NotFoundError:  # no op of that type: a name for overrides only
        return False


def _register(name: str, fn: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"op_type must be a string, got {type(name).__name__}")
    with _lock:
        if name in _NAMED or _has_own_gradient(name):
            previous = _WHERE.get(name, "the op's registry entry")
            raise KeyError(f"Registering two gradient with name '{name}'! (Previous registration was in {previous})")
        frame = traceback.extract_stack(limit=3)[0]
        _NAMED[name] = fn
        _WHERE[name] = f"{frame.name} {frame.filename}:{frame.lineno}"


class RegisterGradient:
    """A decorator registering a gradient function under ``op_type``: the gradient of ops of that type (when they
    have none of their own) and of ops an override map points to it.

    The function is called as ``fn(op, *output_grads)`` and returns one gradient (or None) per input of ``op``.

    Args:
        op_type: The name to register under.

    Raises:
        TypeError: ``op_type`` is not a string.
        KeyError: the name is taken (registered here, or an op type with a gradient of its own).

    Example:
        >>> @RegisterGradient("DocZeroGrad")
        ... def _zero(op, grad):
        ...     return [None] * len(op.inputs)
        >>> _zero.__name__
        '_zero'
    """

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: Callable[..., Any]) -> Callable[..., Any]:
        _register(self._op_type, f)
        return f


def no_gradient(op_type: str) -> None:
    """Declares that ops of ``op_type`` have no gradient: ``tf.gradients`` passes None through them instead of
    failing with "No gradient defined".

    Raises:
        TypeError: ``op_type`` is not a string.
        KeyError: the name is already registered.

    Example:
        >>> no_gradient("DocOpWithoutGradient")
        >>> gradient_function_by_name("DocOpWithoutGradient") is op_registry.NOT_DIFFERENTIABLE
        True
    """
    _register(op_type, op_registry.NOT_DIFFERENTIABLE)


#: TF1's older names of :func:`no_gradient`.
NotDifferentiable = no_gradient
NoGradient = no_gradient


def gradient_function_by_name(name: str) -> Any:
    """The function registered under ``name`` (``NOT_DIFFERENTIABLE`` for :func:`no_gradient`), else None.

    Example:
        >>> gradient_function_by_name("NoSuchGradientName") is None
        True
    """
    return _NAMED.get(name)


def gradient_function(op: Any) -> Any:
    """The gradient function ``tf.gradients`` uses for ``op``: the one its override attr names, else its registry
    entry's, else one registered here under its type (None when there is none).

    Raises:
        LookupError: the override attr names nothing registered.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     gradient_function(tf.square(1.0).op) is op_registry.get("Square").grad
        True
    """
    override = op._attrs.get(OVERRIDE_ATTR)
    if override is not None:
        fn = _NAMED.get(override)
        if fn is None:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {override})")
        return fn
    own = op.op_def.grad
    return own if own is not None else _NAMED.get(op.type)


@contextlib.contextmanager
def gradient_override_map(graph: Any, op_type_map: dict[str, str]) -> Iterator[None]:
    """What ``Graph.gradient_override_map`` does: ops of the map's types created in the block use the gradients
    registered under the names it maps them to (inner maps take precedence; the map holds until the block ends).

    Raises:
        TypeError: the map is not a dict of strings.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g, g.gradient_override_map({"Square": "DocZeroGrad"}):
        ...     tf.square(2.0).op.get_attr("_gradient_op_type")
        'DocZeroGrad'
    """
    if not isinstance(op_type_map, dict):
        raise TypeError("op_type_map must be a dictionary mapping strings to strings")
    for key, value in op_type_map.items():
        if not (isinstance(key, str) and isinstance(value, str)):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
    stack = graph._extra.setdefault("gradient_override_map", [])
    stack.append(dict(op_type_map))
    try:
        yield
    finally:
        stack.pop()


def override_for(graph: Any, op_type: str) -> str | None:
    """The gradient name the active override maps of ``graph`` give ``op_type`` (None when none does).

    Example:
        >>> import dtf_notebook as tf
        >>> g = tf.Graph()
        >>> with g.gradient_override_map({"Add": "A"}), g.gradient_override_map({"Add": "B"}):
        ...     override_for(g, "Add"), override_for(g, "Sub")
        ('B', None)
    """
    for mapping in reversed(graph._extra.get("gradient_override_map", ())):
        if op_type in mapping:
            return mapping[op_type]
    return None
