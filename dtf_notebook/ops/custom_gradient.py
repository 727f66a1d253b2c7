"""Gradients defined by the user or built from others: ``tf.custom_gradient``, ``tf.grad_pass_through`` and
``tf.hessians``.

``custom_gradient`` works as TF's graph mode does: the results of ``f``, its inputs and the variables it reads pass
together through one ``IdentityN`` op whose gradient is overridden (``gradient_override_map``) by a gradient
registered under a fresh name that calls ``grad_fn``. So gradients reach ``f``'s inputs (and variables) only through
``grad_fn``, never through the ops ``f`` built.

Example:
    >>> import dtf_notebook as tf
    >>> @custom_gradient
    ... def clip_gradient(x):
    ...     return tf.identity(x), lambda dy: tf.clip_by_value(dy, -0.1, 0.1)
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     x = tf.constant([1.0, 2.0])
    ...     print(sess.run(tf.gradients(clip_gradient(x) * 5.0, x)[0]))
    [0.1 0.1]
"""

from __future__ import annotations

import functools
import inspect
import itertools
from collections import deque
from collections.abc import Callable
from typing import Any

from dtf_notebook.framework import nest
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.gradient_registry import RegisterGradient
from dtf_notebook.framework.gradients import gradients
from dtf_notebook.framework.graph import GraphKeys, get_collection, get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops
from dtf_notebook.ops.control_flow_ops import while_loop
from dtf_notebook.ops.identity_ops import identity_n
from dtf_notebook.ops.tensor_array_ops import TensorArray

__all__ = ["custom_gradient", "grad_pass_through", "hessians"]

_uid = itertools.count(1)
_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def _variables_between(inputs: list[Tensor], outputs: list[Tensor]) -> list[Any]:
    """The variables whose ops the outputs depend on without passing through ``inputs`` (TF's
    ``_get_dependent_variables``)."""
    stop = {t.op for t in inputs}
    seen, found = set(), set()
    queue = deque(t.op for t in outputs)
    while queue:
        op = queue.popleft()
        if op in seen or op in stop:
            continue
        seen.add(op)
        if op.type in _VARIABLE_OPS:
            found.add(op.name)
        queue.extend(t.op for t in op.inputs)
    candidates = get_collection(GraphKeys.GLOBAL_VARIABLES) + get_collection(GraphKeys.LOCAL_VARIABLES)
    by_name = {}
    for v in candidates:
        if v.op.name in found:
            by_name.setdefault(v.op.name, v)
    return sorted(by_name.values(), key=lambda v: v.name)


def _takes_variables(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "variables" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _graph_mode_call(f: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    name = f"CustomGradient-{next(_uid)}"
    args = nest.map_structure(convert_to_tensor, args)
    result, grad_fn = f(*args, **kwargs)
    flat_args = nest.flatten(args)
    flat_result = [convert_to_tensor(t) for t in nest.flatten(result)]
    graph = flat_result[0].graph if flat_result else get_default_graph()
    inputs = [t for t in flat_args if getattr(t, "graph", None) is graph]
    variables = _variables_between(inputs, flat_result)
    takes_variables = _takes_variables(grad_fn)
    if variables and not takes_variables:
        raise TypeError(
            "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since function uses variables: "
            f"{variables}"
        )
    n_results = len(flat_result)

    @RegisterGradient(name)
    def _grad(op: Any, *result_grads: Any) -> list[Any]:
        grads = list(result_grads[:n_results])
        if variables:
            input_grads, variable_grads = grad_fn(*grads, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads = grad_fn(*grads)
            variable_grads = []
        input_grads = nest.flatten(input_grads)
        if len(input_grads) != len(flat_args):
            raise ValueError(
                f"custom_gradient function expected to return {len(flat_args)} gradients, but returned "
                f"{len(input_grads)} instead."
            )
        return [None] * n_results + list(input_grads) + list(variable_grads)

    with graph.as_default(), graph.gradient_override_map({"IdentityN": name}):
        passed = identity_n(flat_result + list(flat_args) + [convert_to_tensor(v) for v in variables])
    return nest.pack_sequence_as(result, passed[:n_results])


def custom_gradient(f: Callable[..., Any] | None = None) -> Any:
    """Decorates ``f(*x) -> (y, grad_fn)`` so that the gradient of ``y`` w.r.t. ``x`` is ``grad_fn(*dy)``.

    ``grad_fn`` returns one gradient per input (a list when there are several). When ``f`` reads variables (through
    ``tf.get_variable`` or ``tf.Variable``), ``grad_fn`` must take a keyword ``variables`` and return
    ``(input_grads, variable_grads)``, one per variable in that list.

    Raises:
        TypeError: ``f`` reads variables and ``grad_fn`` does not take ``variables``.
        ValueError: (when gradients are built) ``grad_fn`` returned the wrong number of gradients.

    Example:
        >>> import dtf_notebook as tf
        >>> @tf.custom_gradient
        ... def log1pexp(x):
        ...     e = tf.exp(x)
        ...     return tf.log(1 + e), lambda dy: dy * (1 - 1 / (1 + e))
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.constant(100.0)
        ...     print(sess.run(tf.gradients(log1pexp(x), x)[0]))
        1.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args: Any, **kwargs: Any) -> Any:
        return _graph_mode_call(f, args, kwargs)

    return decorated


def grad_pass_through(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` whose gradient is the identity: the gradient w.r.t. its result is passed on to its input unchanged (for
    functions without a gradient, such as an assignment or a rounding).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.constant([0.4, 1.6])
        ...     y = tf.grad_pass_through(tf.round)(x)
        ...     print(sess.run([y, tf.gradients(y * 3.0, x)[0]]))
        [array([0., 2.], dtype=float32), array([3., 3.], dtype=float32)]
    """

    @custom_gradient
    def _pass_through(*args: Any, **kwargs: Any) -> Any:
        def grad(*dys: Any, **grad_kwargs: Any) -> Any:
            variables = grad_kwargs.get("variables")
            if variables is not None:
                return list(dys), [None] * len(variables)  # the variables f reads get no gradient
            return list(dys)

        return f(*args, **kwargs), grad

    return functools.wraps(f)(_pass_through)


def hessians(
    ys: Any,
    xs: Any,
    name: str = "hessians",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method: Any = None,
) -> list[Tensor]:
    """The second derivatives of ``sum(ys)`` w.r.t. each ``x``: a tensor of shape ``x.shape + x.shape`` per ``x``.

    As TF1 builds it: the first gradient is flattened, and a ``while_loop`` writes the gradient of each of its
    elements into a ``TensorArray``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     x = tf.constant([1.0, 2.0])
        ...     print(sess.run(tf.hessians(tf.reduce_sum(x * x * x), x)[0]))
        [[ 6.  0.]
         [ 0. 12.]]
    """
    xs = list(xs) if isinstance(xs, list | tuple) else [xs]
    kwargs = {
        "colocate_gradients_with_ops": colocate_gradients_with_ops,
        "gate_gradients": gate_gradients,
        "aggregation_method": aggregation_method,
    }
    results = []
    with name_scope(name):
        first = gradients(ys, xs, **kwargs)
        for gradient, x in zip(first, xs):
            x = convert_to_tensor(x)
            flat = array_ops.reshape(gradient, [-1])
            n = array_ops.size(x)
            loop_vars = [convert_to_tensor(0), TensorArray(x.dtype, n)]

            def body(j: Tensor, result: Any, flat: Tensor = flat, x: Tensor = x) -> tuple[Tensor, Any]:
                return j + 1, result.write(j, gradients(flat[j], x, **kwargs)[0])

            _, hessian = while_loop(lambda j, _, n=n: j < n, body, loop_vars)
            shape = array_ops.shape(x)
            results.append(array_ops.reshape(hessian.stack(), array_ops.concat([shape, shape], 0)))
    return results
