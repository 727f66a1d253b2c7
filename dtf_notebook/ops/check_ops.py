"""TF1's ``tf.assert_*`` checks (also ``tf.debugging.assert_*``), built as TF1 builds them.

When the values (or ranks, or dtypes) are known while building, a failing check raises at once: an
``InvalidArgumentError`` listing the data for value checks, ``ValueError`` for rank and shape checks,
``TypeError`` for dtype checks. Otherwise (and also when a value check passes statically) the check is
an ``Assert`` op to run, e.g. as a control dependency. Rank, dtype and integer checks that pass
statically return a ``NoOp``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None])
    ...     with tf.control_dependencies([tf.assert_positive(x)]):
    ...         y = tf.log(x)
    ...     with tf.Session() as sess:
    ...         print(sess.run(y, {x: [1.0]}))
    [0.]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import control_dependencies, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import math_ops
from dtf_notebook.ops.array_ops import rank as rank_of
from dtf_notebook.ops.array_ops import shape as shape_of
from dtf_notebook.ops.assert_op import Assert
from dtf_notebook.ops.identity_ops import identity, no_op
from dtf_notebook.ops.op_helpers import constant_value

__all__ = [
    "assert_equal",
    "assert_none_equal",
    "assert_less",
    "assert_less_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_negative",
    "assert_positive",
    "assert_non_negative",
    "assert_non_positive",
    "assert_near",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_type",
    "assert_integer",
    "assert_scalar",
    "assert_proper_iterable",
    "is_numeric_tensor",
]

_NUMERIC = frozenset(
    [
        dtypes.float16,
        dtypes.float32,
        dtypes.float64,
        dtypes.bfloat16,
        dtypes.int8,
        dtypes.int16,
        dtypes.int32,
        dtypes.int64,
        dtypes.uint8,
    ]
)


def _message_prefix(message: str | None) -> str:
    return f"{message}.  " if message else ""


def _static_text(item: Any) -> str:
    if not isinstance(item, Tensor):
        return str(item)
    value = constant_value(item)
    return str(value) if value is not None else str(item)


def _assert_static(condition: Any, data: list[Any]) -> None:
    if not condition:
        raise errors.InvalidArgumentError(None, None, "\n".join(_static_text(d) for d in data))


def _binary_assert(
    sym: str,
    opname: str,
    op_func: Callable[[Tensor, Tensor], Tensor],
    static_func: Callable[[Any, Any], Any],
    x: Any,
    y: Any,
    data: Any,
    summarize: int | None,
    message: str | None,
    name: str | None,
) -> Operation:
    with name_scope(name, opname, [x, y, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y")
        if data is None:
            data = [f"Condition x {sym} y did not hold element-wise:", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        if message is not None:
            data = [message, *data]
        condition = math_ops.reduce_all(op_func(x, y))
        x_static, y_static = constant_value(x), constant_value(y)
        if x_static is not None and y_static is not None:
            _assert_static(np.all(static_func(x_static, y_static)), list(data))
        return Assert(condition, data, summarize=summarize)


def assert_equal(
    x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x == y`` element-wise (with broadcasting); a NoOp when ``x`` is ``y``.

    Raises:
        InvalidArgumentError: both values are known while building and differ somewhere.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     try:
        ...         tf.assert_equal(tf.constant([1, 2]), [1, 3])
        ...     except tf.errors.InvalidArgumentError as e:
        ...         print(e.message.splitlines())
        ['Condition x == y did not hold element-wise:', 'x (Const:0) = ', '[1 2]', 'y (assert_equal_1/y:0) = ', '[1 3]']
    """
    with name_scope(name, "assert_equal", [x, y, data]):
        if x is y:
            return no_op()
    return _binary_assert("==", "assert_equal", math_ops.equal, np.equal, x, y, data, summarize, message, name)


def assert_none_equal(
    x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x != y`` element-wise (with broadcasting).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_none_equal([1, 2], [2, 1]).type
        'Assert'
    """
    return _binary_assert(
        "!=", "assert_none_equal", math_ops.not_equal, np.not_equal, x, y, data, summarize, message, name
    )


def assert_less(
    x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x < y`` element-wise (with broadcasting).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     try:
        ...         tf.assert_less(2.5, 1.0)
        ...     except tf.errors.InvalidArgumentError as e:
        ...         print(e.message.splitlines())
        ['Condition x < y did not hold element-wise:', 'x (assert_less/x:0) = ', '2.5', 'y (assert_less/y:0) = ', '1.0']
    """
    return _binary_assert("<", "assert_less", math_ops.less, np.less, x, y, data, summarize, message, name)


def assert_less_equal(
    x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x <= y`` element-wise (with broadcasting).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_less_equal([1, 3], 3).name
        'assert_less_equal/Assert/Assert'
    """
    return _binary_assert(
        "<=", "assert_less_equal", math_ops.less_equal, np.less_equal, x, y, data, summarize, message, name
    )


def assert_greater(
    x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x > y`` element-wise (with broadcasting).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_greater([1, 2], 0).type
        'Assert'
    """
    return _binary_assert(">", "assert_greater", math_ops.greater, np.greater, x, y, data, summarize, message, name)


def assert_greater_equal(
    x: Any, y: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x >= y`` element-wise (with broadcasting).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_greater_equal([1, 0], 0).type
        'Assert'
    """
    return _binary_assert(
        ">=", "assert_greater_equal", math_ops.greater_equal, np.greater_equal, x, y, data, summarize, message, name
    )


def _unary_assert(
    sym: str,
    opname: str,
    zero_first: bool,
    check: Callable[..., Operation],
    x: Any,
    data: Any,
    summarize: Any,
    message: Any,
    name: Any,
) -> Operation:
    message = _message_prefix(message)
    with name_scope(name, opname, [x, data]):
        x = convert_to_tensor(x, name="x")
        if data is None:
            data = [message, f"Condition x {sym} 0 did not hold element-wise:", f"x ({x.name}) = ", x]
            if sym == "<=":  # TF's assert_non_positive runs these two texts together
                data = [message, f"Condition x <= 0 did not hold element-wise:x ({x.name}) = ", x]
        zero = convert_to_tensor(0, dtype=x.dtype)
        return (
            check(zero, x, data=data, summarize=summarize)
            if zero_first
            else check(x, zero, data=data, summarize=summarize)
        )


def assert_negative(
    x: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x < 0`` element-wise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_negative(tf.placeholder(tf.float32)).name
        'assert_negative/assert_less/Assert/Assert'
    """
    return _unary_assert("<", "assert_negative", False, assert_less, x, data, summarize, message, name)


def assert_positive(
    x: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x > 0`` element-wise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     try:
        ...         tf.assert_positive([1, -2], message="x")
        ...     except tf.errors.InvalidArgumentError as e:
        ...         print(e.message.splitlines())
        ['x.  ', 'Condition x > 0 did not hold element-wise:', 'x (assert_positive/x:0) = ', '[ 1 -2]']
    """
    return _unary_assert(">", "assert_positive", True, assert_less, x, data, summarize, message, name)


def assert_non_negative(
    x: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x >= 0`` element-wise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_non_negative([0, 2]).type
        'Assert'
    """
    return _unary_assert(">=", "assert_non_negative", True, assert_less_equal, x, data, summarize, message, name)


def assert_non_positive(
    x: Any, data: Any = None, summarize: int | None = None, message: str | None = None, name: str | None = None
) -> Operation:
    """Checks ``x <= 0`` element-wise.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_non_positive([0, -2]).type
        'Assert'
    """
    return _unary_assert("<=", "assert_non_positive", False, assert_less_equal, x, data, summarize, message, name)


def _tensor_text(t: Tensor) -> str:
    # How TF writes a tensor with str(): its rtol/atol appear this way in assert_near's message.
    return f'Tensor("{t.name}", shape={t.shape}, dtype={t.dtype.name})'


def assert_near(
    x: Any,
    y: Any,
    rtol: Any = None,
    atol: Any = None,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Checks ``|x - y| < atol + rtol * |y|`` element-wise (tolerances default to 10 epsilon of the dtype).

    Always an ``Assert`` op: TF1 makes no check while building.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     check = tf.assert_near([1.0, 2.0], [1.0, 2.0 + 1e-7])
        ...     with tf.Session() as sess:
        ...         sess.run(check)
    """
    message = _message_prefix(message)
    with name_scope(name, "assert_near", [x, y, rtol, atol, data]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        eps = float(np.finfo(x.dtype.np_dtype if x.dtype is not dtypes.bfloat16 else np.float32).eps)
        if x.dtype is dtypes.bfloat16:
            eps = 2.0**-7
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol", dtype=x.dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol", dtype=x.dtype)
        if data is None:
            data = [
                message,
                f"x and y not equal to tolerance rtol = {_tensor_text(rtol)}, atol = {_tensor_text(atol)}",
                f"x ({x.name}) = ",
                x,
                f"y ({y.name}) = ",
                y,
            ]
        tol = math_ops.add(atol, math_ops.multiply(rtol, math_ops.abs(y)))
        diff = math_ops.abs(math_ops.subtract(x, y))
        condition = math_ops.reduce_all(math_ops.less(diff, tol))
        return Assert(condition, data, summarize=summarize)


class _StaticRankError(Exception):
    def __init__(self, actual: int, wanted: Any) -> None:
        super().__init__(actual, wanted)
        self.actual, self.wanted = actual, wanted


def _with_dependencies(deps: list[Operation], t: Tensor) -> Tensor:
    with control_dependencies(deps):
        return identity(t)


def _ranks_condition(
    x: Tensor,
    ranks: tuple[Tensor, ...],
    static_ok: Callable[[int, Any], bool],
    dynamic: Callable[[Tensor, Any], Tensor],
    data: list[Any],
    summarize: int | None,
    single: bool,
) -> Operation:
    for r in ranks:
        assert_type(r, dtypes.int32)
    statics = [constant_value(r) for r in ranks]
    if all(s is not None for s in statics):
        if any(np.ndim(s) != 0 for s in statics):
            raise ValueError("Rank must be a scalar.")
        if x.shape.ndims is not None:
            wanted = statics[0] if single else tuple(statics)
            if not static_ok(x.shape.ndims, wanted):
                raise _StaticRankError(x.shape.ndims, wanted)
            return no_op(name="static_checks_determined_all_ok")
    condition = dynamic(rank_of(x), ranks[0] if single else ranks)
    for r, s in zip(ranks, statics):
        if s is None:
            check = assert_rank(r, 0, data=["Rank must be a scalar. Received rank: ", r])
            condition = _with_dependencies([check], condition)
    return Assert(condition, data, summarize=summarize)


def assert_rank(
    x: Any,
    rank: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Checks that ``x`` has rank ``rank`` (an int32 scalar); a NoOp when both are known and agree.

    Raises:
        ValueError: both are known and disagree, or ``rank`` is not a scalar.
        TypeError: ``rank`` is not int32.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     print(tf.assert_rank(tf.zeros([2, 3]), 2).name)
        assert_rank/static_checks_determined_all_ok
        >>> with tf.Graph().as_default():
        ...     tf.assert_rank([1, 2], 2)
        Traceback (most recent call last):
            ...
        ValueError: Tensor assert_rank/x:0 must have rank 2.  Received rank 1, shape (2,)
    """
    with name_scope(name, "assert_rank", [x, rank, *(data or [])]):
        x = x if isinstance(x, SparseTensor) else convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        x_name = "" if isinstance(x, SparseTensor) else x.name
        if data is None:
            data = [message, f"Tensor {x_name} must have rank", rank, "Received shape: ", shape_of(x)]
        try:
            return _ranks_condition(x, (rank,), lambda a, w: a == w, math_ops.equal, data, summarize, True)
        except _StaticRankError as e:
            raise ValueError(
                f"{message}Tensor {x_name} must have rank {int(e.wanted)}.  Received rank {e.actual}, shape {x.shape}"
            ) from None


def assert_rank_at_least(
    x: Any,
    rank: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Checks that ``x``'s rank is at least ``rank``; a NoOp when both are known and it is.

    Raises:
        ValueError: both are known and ``x``'s rank is lower, or ``rank`` is not a scalar.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_rank_at_least(tf.zeros([2, 3]), 1).type
        'NoOp'
    """
    with name_scope(name, "assert_rank_at_least", [x, rank, *(data or [])]):
        x = convert_to_tensor(x, name="x")
        rank = convert_to_tensor(rank, name="rank")
        message = _message_prefix(message)
        if data is None:
            data = [message, f"Tensor {x.name} must have rank at least", rank, "Received shape: ", shape_of(x)]
        try:
            return _ranks_condition(x, (rank,), lambda a, w: a >= w, math_ops.greater_equal, data, summarize, True)
        except _StaticRankError as e:
            raise ValueError(
                f"{message}Tensor {x.name} must have rank at least {int(e.wanted)}.  "
                f"Received rank {e.actual}, shape {x.shape}"
            ) from None


def _dynamic_rank_in(actual: Tensor, ranks: tuple[Tensor, ...]) -> Tensor:
    if not ranks:
        return convert_to_tensor(False)
    result = math_ops.equal(ranks[0], actual)
    for r in ranks[1:]:
        result = math_ops.logical_or(result, math_ops.equal(r, actual))
    return result


def assert_rank_in(
    x: Any,
    ranks: Any,
    data: Any = None,
    summarize: int | None = None,
    message: str | None = None,
    name: str | None = None,
) -> Operation:
    """Checks that ``x``'s rank is one of ``ranks``; a NoOp when all are known and it is.

    Raises:
        ValueError: all are known and ``x``'s rank is none of them, or a rank is not a scalar.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_rank_in([1, 2], [0, 2])
        Traceback (most recent call last):
            ...
        ValueError: Tensor assert_rank_in/x:0 must have rank in (0, 2).  Received rank 1, shape (2,)
    """
    ranks = tuple(ranks)
    with name_scope(name, "assert_rank_in", [x, *ranks, *(data or [])]):
        x = x if isinstance(x, SparseTensor) else convert_to_tensor(x, name="x")
        rank_tensors = tuple(convert_to_tensor(r, name="rank") for r in ranks)
        message = _message_prefix(message)
        x_name = "" if isinstance(x, SparseTensor) else x.name
        if data is None:
            data = [message, f"Tensor {x_name} must have rank in", *rank_tensors, "Received shape: ", shape_of(x)]
        try:
            return _ranks_condition(x, rank_tensors, lambda a, w: a in w, _dynamic_rank_in, data, summarize, False)
        except _StaticRankError as e:
            wanted = tuple(int(r) for r in e.wanted)
            raise ValueError(
                f"{message}Tensor {x_name} must have rank in {wanted}.  Received rank {e.actual}, shape {x.shape}"
            ) from None


def assert_type(tensor: Any, tf_type: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Checks statically that ``tensor`` has dtype ``tf_type``; returns a NoOp.

    Raises:
        TypeError: it has another dtype.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_type(tf.constant(1), tf.float32)
        Traceback (most recent call last):
            ...
        TypeError: Const:0 must be of type tf.float32; got tf.int32
    """
    tf_type = dtypes.as_dtype(tf_type)
    with name_scope(name, "assert_type", [tensor]):
        if not isinstance(tensor, SparseTensor):
            tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype is not tf_type:
            label = getattr(tensor, "name", "tensor")
            raise TypeError(f"{_message_prefix(message)}{label} must be of type {tf_type!r}; got {tensor.dtype!r}")
        return no_op(name="statically_determined_correct_type")


def assert_integer(x: Any, message: str | None = None, name: str | None = None) -> Operation:
    """Checks statically that ``x`` has an integer dtype; returns a NoOp.

    Raises:
        TypeError: it does not.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_integer(tf.constant(1)).name
        'assert_integer/statically_determined_was_integer'
    """
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError(
                f'{_message_prefix(message)}Expected "x" to be integer type.  Found: {x.name} of dtype {x.dtype}'
            )
        return no_op(name="statically_determined_was_integer")


def assert_scalar(tensor: Any, name: str | None = None, message: str | None = None) -> Tensor:
    """Checks statically that ``tensor`` is a scalar (a known rank of 0); returns ``tensor``.

    Raises:
        ValueError: its rank is not known to be 0.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.assert_scalar(tf.constant([1]))
        Traceback (most recent call last):
            ...
        ValueError: Expected scalar shape for Const:0, saw shape: (1,).
    """
    with name_scope(name, "assert_scalar", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name=scope.rstrip("/").rsplit("/", 1)[-1])
        if tensor.shape.ndims != 0:
            raise ValueError(
                f"{_message_prefix(message)}Expected scalar shape for {tensor.name}, saw shape: {tensor.shape}."
            )
        return tensor


def assert_proper_iterable(values: Any) -> None:
    """Checks that ``values`` is an iterable that is not a tensor, array or string.

    Raises:
        TypeError: it is not iterable, or is one of those.

    Example:
        >>> assert_proper_iterable([1, 2])
        >>> assert_proper_iterable("ab")
        Traceback (most recent call last):
            ...
        TypeError: Expected argument "values" to be a "proper" iterable.  Found: <class 'str'>
    """
    if isinstance(values, Tensor | SparseTensor | np.ndarray | bytes | str):
        raise TypeError(f'Expected argument "values" to be a "proper" iterable.  Found: {type(values)}')
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def is_numeric_tensor(tensor: Any) -> bool:
    """True for a tensor of a numeric dtype (not bool or string).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.is_numeric_tensor(tf.constant(1.0)), tf.is_numeric_tensor(tf.constant(True))
        (True, False)
    """
    return isinstance(tensor, Tensor) and tensor.dtype in _NUMERIC
