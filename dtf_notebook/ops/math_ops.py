"""Math ops: elementwise arithmetic, comparisons, casts, matmul, reductions, and the Tensor operators.

This module is the public face of :mod:`dtf_notebook.ops.math`, where each family of
ops lives in its own module (one registry entry per op: output inference, torch
kernel, gradient). Binary ops follow TF's broadcasting; their gradients sum the
incoming gradient back to each input's shape, statically when the shapes tell
which axes were broadcast, else with a ``BroadcastGradientArgs`` op on the runtime
shapes. Importing this module registers every math op and installs the arithmetic
operators (``+ - * / // % ** @``, unary ``-``, ``abs``, comparisons, ``& | ^ ~``)
on :class:`Tensor`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    ...     print(sess.run(tf.reduce_sum(x * 2.0 + 1.0, axis=1)))
    [ 8. 16.]
"""

from dtf_notebook.ops.math import operators  # noqa: F401 - installs the Tensor operators
from dtf_notebook.ops.math.arg_reduce import argmax, argmin
from dtf_notebook.ops.math.binary import (
    add,
    div,
    divide,
    floordiv,
    floormod,
    maximum,
    minimum,
    mod,
    multiply,
    pow,
    realdiv,
    scalar_mul,
    squared_difference,
    subtract,
    truediv,
)
from dtf_notebook.ops.math.broadcast import broadcast_gradient_args  # noqa: F401 - array_ops uses it from here
from dtf_notebook.ops.math.cast import cast, to_double, to_float, to_int32, to_int64
from dtf_notebook.ops.math.clip import clip_by_value, saturate_cast
from dtf_notebook.ops.math.compare import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
)
from dtf_notebook.ops.math.matmul import matmul
from dtf_notebook.ops.math.range import range
from dtf_notebook.ops.math.reduce import (
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.math.sums import add_n, unsorted_segment_sum
from dtf_notebook.ops.math.unary import (
    abs,
    ceil,
    exp,
    floor,
    log,
    log1p,
    negative,
    reciprocal,
    round,
    rsqrt,
    sigmoid,
    sign,
    sqrt,
    square,
    tanh,
)

# fmt: off
__all__ = [
    "add", "subtract", "multiply", "scalar_mul", "divide", "truediv", "realdiv", "div", "floordiv", "floormod",
    "mod", "pow", "negative", "abs", "sign", "exp", "log", "log1p", "sqrt", "rsqrt", "square", "reciprocal",
    "sigmoid", "tanh", "floor", "ceil", "round", "maximum", "minimum", "squared_difference",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor",
    "cast", "to_float", "to_double", "to_int32", "to_int64", "saturate_cast",
    "matmul", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
    "argmax", "argmin", "add_n", "clip_by_value", "where", "unsorted_segment_sum", "range",
]
# fmt: on
