"""Python's operators on :class:`Tensor`: ``+ - * / // % ** @``, ``& | ^``, comparisons, unary ``-``, ``abs``, ``~``.

Importing this module installs them. Each binary operator has a reflected twin
(``__radd__`` for ``2.0 + t``) that calls the same builder with the operands in
TF's order, under the op name TF uses (``add``, ``truediv``, ...).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([1.0, 2.0])
    ...     [(2.0 - x).op.name, (x / 2.0).op.type, (-x).op.type, (x < 1.0).op.type]
    ['sub', 'RealDiv', 'Neg', 'Less']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.math import binary, compare, matmul, unary


def _binary_operator(fn: Callable[..., Tensor], name: str) -> tuple[Callable[..., Tensor], Callable[..., Tensor]]:
    def forward(x: Any, y: Any) -> Tensor:
        return fn(x, y, name=name)

    def reflected(y: Any, x: Any) -> Tensor:
        return fn(x, y, name=name)

    return forward, reflected


def _install_binary(builders: dict[str, Callable[..., Tensor]]) -> None:
    """Installs ``__<name>__`` and its reflected ``__r<name>__``, both naming their op ``<name>`` as TF does."""
    for name, fn in builders.items():
        for operator, method in zip((f"__{name}__", f"__r{name}__"), _binary_operator(fn, name)):
            Tensor._override_operator(operator, method)


def _install(builders: dict[str, Callable[..., Tensor]]) -> None:
    """Installs each builder itself, so the op keeps its default name (``Less``, ``Neg``)."""
    for operator, fn in builders.items():
        Tensor._override_operator(operator, fn)


_install_binary({"add": binary.add, "sub": binary.subtract, "mul": binary.multiply, "pow": binary.pow})
_install_binary({"truediv": binary.truediv, "div": binary.div, "floordiv": binary.floordiv, "mod": binary.floormod})
_install_binary({"matmul": matmul.matmul})
_install_binary({"and": compare.logical_and, "or": compare.logical_or, "xor": compare.logical_xor})
# Python reflects ``<`` into ``>`` (and so on) by itself.
_install({"__lt__": compare.less, "__le__": compare.less_equal})
_install({"__gt__": compare.greater, "__ge__": compare.greater_equal})
_install({"__neg__": unary.negative, "__abs__": unary.abs, "__invert__": compare.logical_not})
