"""``convert_to_tensor`` and the registry of conversion functions behind it.

Python numbers, lists and numpy arrays become ``Const`` ops; objects such as
variables and ``IndexedSlices`` register a function that turns them into a
tensor of the default graph.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     t = convert_to_tensor([1, 2, 3])
    >>> t.dtype, t.op.type
    (tf.int32, 'Const')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor import Tensor

# (type, function, priority): lower priority numbers are tried first, as in TF.
_CONVERSIONS: list[tuple[type | tuple[type, ...], Callable[..., Tensor], int]] = []


def register_tensor_conversion_function(
    base_type: type | tuple[type, ...], conversion_func: Callable[..., Tensor], priority: int = 100
) -> None:
    """Registers ``conversion_func(value, dtype=None, name=None, as_ref=False) -> Tensor`` for ``base_type``.

    A function may return ``NotImplemented`` to let later (higher priority number) functions handle the value.

    Example:
        >>> class Meters(float): pass
        >>> register_tensor_conversion_function(Meters, lambda v, dtype=None, name=None, as_ref=False:
        ...     convert_to_tensor(float(v), dtype, name))   # doctest: +SKIP
    """
    _CONVERSIONS.append((base_type, conversion_func, priority))
    _CONVERSIONS.sort(key=lambda entry: entry[2])


def convert_to_tensor(
    value: Any,
    dtype: Any = None,
    name: str | None = None,
    preferred_dtype: Any = None,
    dtype_hint: Any = None,
    *,
    as_ref: bool = False,
) -> Tensor:
    """Converts ``value`` to a Tensor of the default graph.

    Args:
        value: A Tensor, a registered object (Variable, IndexedSlices), or a Python/numpy value.
        dtype: Required element type; a Tensor of another type is an error.
        name: Name for a new constant op.
        preferred_dtype: Type to try first when ``dtype`` is None (falls back silently).
        dtype_hint: TF's newer name of ``preferred_dtype``; give one of the two.
        as_ref: Return a reference (for variables) rather than a value.

    Raises:
        ValueError: ``value`` is a Tensor of a different dtype than ``dtype``, or both ``preferred_dtype`` and
            ``dtype_hint`` are given.
        TypeError: ``value`` cannot be converted.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     convert_to_tensor(1, dtype=tf.float32).dtype, convert_to_tensor("a", dtype_hint=tf.float32).dtype
        (tf.float32, tf.string)
    """
    if dtype_hint is not None:
        if preferred_dtype is not None:
            raise ValueError("Cannot specify both 'preferred_dtype' and 'dtype_hint'.")
        preferred_dtype = dtype_hint
    dtype = dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype {value.dtype.name}: {value!r}"
            )
        return value
    if dtype is None and preferred_dtype is not None:
        try:
            return convert_to_tensor(value, preferred_dtype, name, as_ref=as_ref)
        except (TypeError, ValueError):
            pass
    for base_type, func, _ in _CONVERSIONS:
        if isinstance(value, base_type):
            result = func(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is NotImplemented:  # the function declines this value; try the next one
                continue
            if dtype is not None and result.dtype is not dtype:
                raise ValueError(
                    f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype {result.dtype.name}"
                )
            return result
    raise TypeError(f"Failed to convert object of type {type(value)} to Tensor. Contents: {value!r}.")


def convert_n_to_tensor(values: Any, dtype: Any = None, name: str | None = None) -> list[Tensor]:
    """Converts each of ``values`` (see :func:`convert_to_tensor`).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     [t.dtype for t in convert_n_to_tensor([1.0, 2.0])]
        [tf.float32, tf.float32]
    """
    return [convert_to_tensor(v, dtype, None if name is None else f"{name}_{i}") for i, v in enumerate(values)]


def is_tensor_like(value: Any) -> bool:
    """True for Tensors and objects that convert to one without a copy (variables, IndexedSlices).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0)
        ...     is_tensor_like(tf.constant(1.0)), is_tensor_like(v), is_tensor_like([1.0])
        (True, True, False)
    """
    if isinstance(value, Tensor):
        return True
    return any(isinstance(value, t) for t, _, p in _CONVERSIONS if p < 100)
