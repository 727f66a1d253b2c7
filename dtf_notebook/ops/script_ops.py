"""Python functions as ops: ``tf.py_func`` / ``tf.numpy_function`` (``PyFunc``, ``PyFuncStateless``) and
``tf.py_function`` (``EagerPyFunc``).

The function runs in the process that runs the op, on the executor's thread, with numpy arrays for arguments (0-d
arrays for scalars, ``object`` arrays of bytes for strings). As in TF, the graph holds only a token naming the
function in this process's registry; the function itself is no graph data and never crosses the wire. An op placed
on a task in another process (a cluster's server) therefore fails there with an ``InvalidArgumentError`` saying so;
it runs in local sessions and on servers started in this process.

* ``py_func`` / ``numpy_function``: results must have exactly the types of ``Tout`` (a Python float is float64, as
  in TF), else ``InvalidArgumentError``.
* ``py_function``: arguments also answer ``.numpy()`` (TF passes eager tensors); results are converted to ``Tout``.
  TF differentiates it by running the function under a gradient tape, which does not exist here: it has no
  gradient here, as ``py_func`` has none in TF.

An exception raised by the function becomes the op's error as TF maps it: ``ValueError``/``TypeError`` ->
``InvalidArgumentError``, ``StopIteration`` -> ``OutOfRangeError``, ``MemoryError`` -> ``ResourceExhaustedError``,
``NotImplementedError`` -> ``UnimplementedError``, others -> ``UnknownError``.

Example:
    >>> import numpy as np
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     y = py_func(lambda x: np.sort(x), [tf.constant([3, 1, 2])], tf.int32)
    ...     print(sess.run(y))
    [1 2 3]
"""

from __future__ import annotations

import itertools
import os
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import get_default_graph, name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor_shape import unknown_shape
from dtf_notebook.ops.op_helpers import make_op
from dtf_notebook.runtime.values import feed_value, from_numpy, is_string_value

__all__ = ["EagerValue", "numpy_function", "py_func", "py_function"]

# Tokens name this process (a task in another process never finds a function by chance) and count up.
_PROCESS = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
_counter = itertools.count()
_lock = threading.Lock()
# Functions by token; the graph that uses one keeps it alive (its ``_extra``), so it goes with the graph.
_FUNCS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
_ERROR_KINDS = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    ((StopIteration,), errors.OutOfRangeError),
    ((MemoryError,), errors.ResourceExhaustedError),
    ((NotImplementedError,), errors.UnimplementedError),
)


class _Entry:
    """A registered function (a weak-referenceable holder, since bound methods and builtins are not)."""

    __slots__ = ("fn", "eager", "__weakref__")

    def __init__(self, fn: Callable[..., Any], eager: bool) -> None:
        self.fn = fn
        self.eager = eager


def _register(fn: Callable[..., Any], eager: bool) -> str:
    entry = _Entry(fn, eager)
    with _lock:
        token = f"pyfunc_{_PROCESS}_{next(_counter)}"
        _FUNCS[token] = entry
    get_default_graph()._extra.setdefault("py_funcs", []).append(entry)
    return token


class EagerValue(np.ndarray):
    """What ``py_function`` passes its function: a numpy array that also answers TF's eager-tensor ``numpy()``.

    Example:
        >>> EagerValue.wrap(np.array([1.0, 2.0])).numpy()
        array([1., 2.])
    """

    @classmethod
    def wrap(cls, array: np.ndarray) -> EagerValue:
        return np.asarray(array).view(cls)

    def numpy(self) -> np.ndarray:
        """The values as a plain numpy array."""
        return np.asarray(self).view(np.ndarray)


def _argument(value: Any) -> np.ndarray:
    if is_string_value(value) or isinstance(value, np.ndarray):
        return np.array(value, dtype=object if is_string_value(value) else None)
    return value.detach().cpu().numpy().copy()


def _result_array(value: Any) -> np.ndarray:
    """A returned value as numpy, the way TF's registry converts it (strings as an ``object`` array of bytes)."""
    array = np.asarray(value, order="C")
    if array.dtype.kind == "S":
        return np.asarray(value, dtype=object, order="C")
    if array.dtype.kind == "U":
        return np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(array)
    return array


def _error_for(e: BaseException, op: Operation) -> errors.OpError:
    for kinds, error in _ERROR_KINDS:
        if isinstance(e, kinds):
            return error(None, op, f"{type(e).__name__}: {e}")
    return errors.UnknownError(None, op, f"{type(e).__name__}: {e}")


def _kernel(op: Operation, ctx: Any) -> Callable[..., Any]:
    token = op.get_attr("token")
    tout = list(op.get_attr("Tout"))
    device = ctx.device

    def run(*inputs: Any) -> Any:
        entry = _FUNCS.get(token)
        if entry is None:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"The Python function of {op.type} '{op.name}' ({token}) is not in this process: it runs only in the "
                "process that built the graph (a local session, or a server started in that process), since no "
                "code crosses the wire. Place the op on such a task or compute it another way.",
            )
        args = [_argument(v) for v in inputs]
        if entry.eager:
            args = [EagerValue.wrap(a) for a in args]
        try:
            returned = entry.fn(*args)
        except Exception as e:  # the function's error is the op's error, as TF maps it
            raise _error_for(e, op) from e
        if isinstance(returned, bytes) or not isinstance(returned, list | tuple):
            returned = [] if returned is None and not tout else [returned]
        if len(returned) != len(tout):
            raise errors.InvalidArgumentError(
                None, op, f"{token} returns {len(returned)} values, but expects to see {len(tout)} values."
            )
        outputs = []
        for i, (value, dtype) in enumerate(zip(returned, tout)):
            if entry.eager:
                outputs.append(_converted(value, dtype, op, i, device))
                continue
            array = _result_array(value)
            try:
                got = dtypes.as_dtype(array.dtype)
            except TypeError:
                got = None
            if got is not dtype:
                kind = got.name if got is not None else str(array.dtype)
                raise errors.InvalidArgumentError(
                    None, op, f"{i}-th value returned by {token} is {kind}, but expects {dtype.name}"
                )
            outputs.append(array if dtype.is_string else from_numpy(array, device))
        return tuple(outputs) if len(outputs) != 1 else outputs[0]

    return run


def _converted(value: Any, dtype: dtypes.DType, op: Operation, i: int, device: Any) -> Any:
    try:
        return feed_value(np.asarray(value) if isinstance(value, EagerValue) else value, dtype, device)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(None, op, f"Output {i} of {op.name} is not a {dtype.name}: {e}") from None


def _infer(op: Operation) -> list[tuple[dtypes.DType, Any]]:
    return [(dtype, unknown_shape()) for dtype in op.get_attr("Tout")]


op_registry.register_op(
    "PyFunc", infer=_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE, stateful=True, cpu_only=True
)
op_registry.register_op("PyFuncStateless", infer=_infer, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE)
op_registry.register_op("EagerPyFunc", infer=_infer, kernel=_kernel, stateful=True, cpu_only=True)


def _build(op_type: str, func: Any, inp: Any, tout: Any, eager: bool, name: str | None) -> Any:
    if not callable(func):
        raise ValueError(f"Expected func to be callable, got func of type {type(func)}")
    listed = isinstance(tout, list | tuple)
    types = [dtypes.as_dtype(t) for t in (tout if listed else [tout])]
    inputs = [convert_to_tensor(x) for x in (inp or [])]
    token = _register(func, eager)
    attrs = {"token": token, "Tin": [t.dtype for t in inputs], "Tout": types}
    with name_scope(name, op_type, inputs) as scope:
        op = make_op(op_type, inputs, attrs, name=scope)
    if not types:
        return op if listed else None
    return list(op.outputs) if listed else op.outputs[0]


def py_func(func: Any, inp: Any, Tout: Any, stateful: bool = True, name: str | None = None) -> Any:  # noqa: N803
    """An op that calls the Python function ``func`` on the numpy values of ``inp`` (TF1's ``tf.py_func``).

    Args:
        func: Called with one numpy array per input; returns one array (or a list of them) per ``Tout`` type.
        inp: The input tensors.
        Tout: One DType (a single result tensor) or a list of DTypes (a list of result tensors, an op if empty).
        stateful: False declares the function pure (``PyFuncStateless``).
        name: The op's name.

    Returns:
        The result tensor(s), of unknown static shape.

    Raises:
        ValueError: ``func`` is not callable.
        InvalidArgumentError: (at run time) the function raised a ValueError/TypeError, returned values of other
            types or another number of them, or runs in a process that does not hold it (see the module doc).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     total, count = tf.py_func(lambda x: (x.sum(), np.int64(x.size)), [[1.0, 2.0]], [tf.float32, tf.int64])
        ...     print(sess.run([total, count]))
        [np.float32(3.0), np.int64(2)]
    """
    return _build("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, False, name)


def numpy_function(
    func: Any = None,
    inp: Any = None,
    Tout: Any = None,
    stateful: bool = True,
    name: str | None = None,  # noqa: N803
) -> Any:
    """``tf.numpy_function``: the same op as :func:`py_func`.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.numpy_function(np.flip, [tf.constant([1, 2, 3])], tf.int32)))
        [3 2 1]
    """
    if func is None:  # TF 2's decorator form: @tf.numpy_function(Tout=...)
        return lambda f: numpy_function(f, inp, Tout, stateful, name)
    return _build("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, False, name)


def py_function(func: Any = None, inp: Any = None, Tout: Any = None, name: str | None = None) -> Any:  # noqa: N803
    """``tf.py_function``: like :func:`py_func`, but the arguments also answer ``.numpy()`` and results are converted
    to ``Tout`` (a Python float may stand for float32). It has no gradient here (see the module doc).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     y = tf.py_function(lambda x: float(x.numpy().max()), [tf.constant([1.0, 4.0])], tf.float32)
        ...     print(sess.run(y))
        4.0
    """
    if func is None:  # TF 2's decorator form: @tf.py_function(Tout=...)
        return lambda f: py_function(f, inp, Tout, name)
    return _build("EagerPyFunc", func, inp, Tout, True, name)
