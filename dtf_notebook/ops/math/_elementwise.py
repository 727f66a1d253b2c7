"""What the elementwise op tables of ``trig``, ``special`` and ``safe_div`` share: builders made from one row.

A builder made here gets its name and a docstring whose example calls it under its TF name
(``tf.sin`` at the top level, ``tf.math.bessel_i0e`` for names TF keeps in ``tf.math`` only).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     t = unary_op("Sqrt", [4.0], None, FLOAT)
    >>> t.op.type, t.op.name
    ('Sqrt', 'Sqrt')
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.math._common import FLOAT, operand_dtype_error  # noqa: F401 - FLOAT: the examples use it
from dtf_notebook.ops.op_helpers import check_dtype, make_op

#: The dtypes of TF's special functions (igamma, zeta, polygamma, betainc, nextafter): no half floats.
FLOAT_WIDE = (dtypes.float32, dtypes.float64)


def unary_op(op_type: str, x: Any, name: str | None, allowed: Sequence[dtypes.DType]) -> Tensor:
    """Builds the one-input op ``op_type`` after converting ``x`` and checking its dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(unary_op("Neg", [1.0], None, FLOAT)))
        [-1.]
    """
    with name_scope(name, op_type, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        check_dtype(x, allowed, op_type)
        return make_op(op_type, [x], name=scope).outputs[0]


def document(
    fn: Callable[..., Any],
    name: str,
    summary: str,
    example: str,
    prints: str,
    raises: Sequence[str] = (),
    namespace: str = "tf",
    digits: int | None = None,
) -> Callable[..., Any]:
    """Names ``fn`` and gives it a docstring whose example prints ``namespace.name(example)``
    (rounded to ``digits`` decimals when given).

    Example:
        >>> def cube(x, name=None):
        ...     return x
        >>> cube = document(cube, "cube", "``x`` cubed.", "2.0", "8.0", namespace="tf.math")
        >>> cube.__name__, "tf.math.cube(2.0)" in cube.__doc__
        ('cube', True)
    """
    fn.__name__ = fn.__qualname__ = name
    rounding = f".round({digits})" if digits is not None else ""
    sections = [summary]
    if raises:
        sections.append("\n".join(["Raises:", *("    " + line for line in raises)]))
    sections.append(
        "\n".join(
            [
                "Example:",
                "    >>> import dtf_notebook as tf",
                "    >>> with tf.Graph().as_default(), tf.Session() as sess:",
                f"    ...     print(sess.run({namespace}.{name}({example})){rounding})",
                *("    " + line for line in prints.splitlines()),
            ]
        )
    )
    fn.__doc__ = "\n\n".join(sections) + "\n"
    return fn


def unary_doc(
    build: Callable[..., Any],
    fn_name: str,
    allowed: Sequence[dtypes.DType],
    summary: str,
    example: str,
    prints: str,
    namespace: str = "tf",
    digits: int | None = None,
) -> Callable[..., Tensor]:
    """Documents the one-input builder ``build`` (defined in the module exporting it, so doctest runs its example).

    Example:
        >>> def neg(x, name=None):
        ...     return unary_op("Neg", x, name, FLOAT)
        >>> neg = unary_doc(neg, "neg", FLOAT, "Negates.", "[1.0]", "[-1.]")
        >>> neg.__doc__.splitlines()[0]
        'Negates.'
    """
    raises = [f"TypeError: ``x`` has a dtype not among: {', '.join(d.name for d in allowed)}."]
    return document(build, fn_name, summary, example, prints, raises, namespace, digits)


def binary_doc(
    build: Callable[..., Any],
    fn_name: str,
    allowed: Sequence[dtypes.DType],
    summary: str,
    example: str,
    prints: str,
    namespace: str = "tf",
    arg_names: tuple[str, str] = ("x", "y"),
    digits: int | None = None,
) -> Callable[..., Tensor]:
    """Documents the two-input builder ``build(*args, name=None, **kwargs)`` and gives it the signature
    ``(first, second, name=None)`` with TF's names of the operands (``atan2(y, x)``, ``igamma(a, x)``).

    Example:
        >>> def plus(*args, name=None, **kwargs):
        ...     return None
        >>> plus = binary_doc(plus, "plus", FLOAT, "Adds.", "1.0, 2.0", "3.0", arg_names=("a", "b"))
        >>> str(inspect.signature(plus))
        '(a, b, name=None)'
    """
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    first, second = arg_names
    build.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(first, kind), inspect.Parameter(second, kind), inspect.Parameter("name", kind, default=None)]
    )
    return document(build, fn_name, summary, example, prints, [operand_dtype_error(allowed)], namespace, digits)


def operands(fn_name: str, arg_names: tuple[str, str], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The two operands of a call ``fn_name(*args, **kwargs)`` whose operands are named ``arg_names``.

    Example:
        >>> operands("atan2", ("y", "x"), (1.0,), {"x": 2.0})
        [1.0, 2.0]
    """
    values = dict(zip(arg_names, args))
    if len(args) > 2:
        raise TypeError(f"{fn_name}() takes 2 positional arguments but {len(args)} were given")
    for key, value in kwargs.items():
        if key not in arg_names or key in values:
            raise TypeError(f"{fn_name}() got an unexpected or repeated argument '{key}'")
        values[key] = value
    if len(values) != 2:
        raise TypeError(f"{fn_name}() missing an argument: it takes '{arg_names[0]}' and '{arg_names[1]}'")
    return [values[arg_names[0]], values[arg_names[1]]]


def torch_zeros_where(mask: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """``value`` with zeros where ``mask`` holds (NaN and inf there too), for the ``*_no_nan``/``xlogy`` kernels.

    Example:
        >>> torch_zeros_where(torch.tensor([True, False]), torch.tensor([float("nan"), 2.0]))
        tensor([0., 2.])
    """
    return torch.where(mask, torch.zeros((), dtype=value.dtype, device=value.device), value)
