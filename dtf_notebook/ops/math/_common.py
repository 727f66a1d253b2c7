"""What the math modules share: dtype groups, small gradient helpers, and the builders' common parts.

Builders made from a table row (``add``, ``sqrt``, ``reduce_sum``, ...) get their name and their
docstring from :func:`table_builder`, whose example section is generated from the row, so every
one of them still has a runnable example.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     t = binary_op("Maximum", 1.0, tf.constant([0.5, 2.0]), None, REAL)
    >>> t.op.type, t.op.name, fmt_shape(t.shape)
    ('Maximum', 'Maximum', '[2]')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops.op_helpers import binary_operands, check_dtype, make_op

FLOAT = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)
SIGNED_INT = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)
INT = SIGNED_INT + (dtypes.uint8,)
REAL = FLOAT + INT
SIGNED = FLOAT + SIGNED_INT
ANY = REAL + (dtypes.bool, dtypes.string)
COMPLEX = (dtypes.complex64, dtypes.complex128)
INDEX = (dtypes.int32, dtypes.int64)


def array_ops() -> Any:
    """The ``array_ops`` module, which the math ops' gradients use: array ops sit above the math ops (they build
    on them), so ``dtf_notebook.ops`` registers the module in ``op_registry.builders``.

    Example:
        >>> array_ops().__name__
        'dtf_notebook.ops.array_ops'
    """
    return op_registry.builders.array_ops


def fmt_shape(shape: TensorShape) -> str:
    """A shape the way TF's error messages print it: ``[2,?]``, or ``?`` for unknown rank.

    Example:
        >>> fmt_shape(TensorShape([2, None])), fmt_shape(TensorShape(None))
        ('[2,?]', '?')
    """
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def dense(grad: Any) -> Any:
    """An incoming gradient as a dense tensor (IndexedSlices from gathers are summed into rows).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     rows = tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1]), tf.constant([3, 2]))
        ...     print(sess.run(dense(rows)))
        [[0. 0.]
         [1. 2.]
         [0. 0.]]
    """
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def deprecated_arg(new_name: str, new_value: Any, old_name: str, old_value: Any) -> Any:
    """The value of an argument that TF1 also accepts under an older name; giving both is a ValueError.

    Example:
        >>> deprecated_arg("axis", None, "dim", 1), deprecated_arg("axis", 0, "dim", None)
        (1, 0)
    """
    if new_value is not None and old_value is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new_value if new_value is not None else old_value


def is_tensor_like(value: Any) -> bool:
    """Whether ``value`` is a graph tensor or converts to one by itself (a Variable, ...).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     is_tensor_like(tf.constant(1)), is_tensor_like(tf.Variable(1.0)), is_tensor_like([1])
        (True, True, False)
    """
    return isinstance(value, Tensor) or hasattr(value, "_as_graph_element")


def invalid_argument(message: str) -> errors.InvalidArgumentError:
    """The run-time error for a bad value that only shows when the kernel runs.

    Example:
        >>> e = invalid_argument("indices[0] = 5 is not in [0, 3)")
        >>> type(e).__name__, e.message
        ('InvalidArgumentError', 'indices[0] = 5 is not in [0, 3)')
    """
    return errors.InvalidArgumentError(None, None, message)


def binary_op(
    op_type: str,
    x: Any,
    y: Any,
    name: str | None,
    allowed: Sequence[dtypes.DType],
    default_name: str | None = None,
) -> Tensor:
    """Builds the two-input elementwise op ``op_type`` after TF's operand conversion and dtype check.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(binary_op("Minimum", tf.constant([1, 5]), 3, None, INT)))
        [1 3]
    """
    with name_scope(name, default_name or op_type, [x, y]) as scope:
        x, y = binary_operands(x, y, op_type)
        check_dtype(x, allowed, op_type)
        return make_op(op_type, [x, y], name=scope).outputs[0]


def table_builder(
    fn: Callable[..., Any], name: str, summary: str, example: str, prints: str, raises: Sequence[str] = ()
) -> Callable[..., Any]:
    """Names ``fn``, a builder made from a table row, and gives it a docstring with a runnable example.

    Args:
        fn: The builder; it must be defined in the module that exports it, so that doctest finds it there.
        name: Its public name, e.g. ``"sqrt"``.
        summary: The docstring's text before the other sections (may hold several paragraphs).
        example: The arguments of the example call ``tf.<name>(<example>)``.
        prints: What printing the example's value shows.
        raises: Lines of the Raises section, e.g. ``"TypeError: the input is not bool."``.

    Example:
        >>> import dtf_notebook as tf
        >>> def cube(x, name=None):
        ...     return tf.pow(x, 3.0, name=name)
        >>> cube = table_builder(cube, "cube", "``x`` cubed, elementwise.", "2.0", "8.0")
        >>> cube.__name__, cube.__doc__.splitlines()[0], "tf.cube(2.0)" in cube.__doc__
        ('cube', '``x`` cubed, elementwise.', True)
    """
    fn.__name__ = fn.__qualname__ = name
    sections = [summary]
    if raises:
        sections.append("\n".join(["Raises:", *("    " + line for line in raises)]))
    sections.append(
        "\n".join(
            [
                "Example:",
                "    >>> import dtf_notebook as tf",
                "    >>> with tf.Graph().as_default(), tf.Session() as sess:",
                f"    ...     print(sess.run(tf.{name}({example})))",
                *("    " + line for line in prints.splitlines()),
            ]
        )
    )
    fn.__doc__ = "\n\n".join(sections) + "\n"
    return fn


def operand_dtype_error(allowed: Sequence[dtypes.DType]) -> str:
    """The Raises line of a two-input builder that accepts the dtypes ``allowed``.

    Example:
        >>> operand_dtype_error((dtypes.float32, dtypes.int32))
        'TypeError: ``x`` and ``y`` differ in dtype, or have one not among: float32, int32.'
    """
    return f"TypeError: ``x`` and ``y`` differ in dtype, or have one not among: {', '.join(d.name for d in allowed)}."


def is_complex(x: Any) -> bool:
    """Whether ``x`` is (or converts to) a complex tensor, without building anything for other values.

    Example:
        >>> import numpy as np
        >>> is_complex(1j), is_complex(np.zeros(2)), is_complex([1.0])
        (True, False, False)
    """
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    try:
        return dtypes.as_dtype(dtype).is_complex
    except TypeError:
        return False
